#include "cli/produce.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <utility>

#include "cli/client_command.h"
#include "cli/progress.h"
#include "client/partitioner.h"
#include "protocol/gen/init_producer_id_request.h"
#include "protocol/record/compression.h"
#include "protocol/record/record_batch_builder.h"

namespace weir::cli {

namespace asio = boost::asio;

namespace {

// Batches stay well under Kafka's default max.message.bytes (1 MiB and a bit).
constexpr std::size_t kDefaultBatchBytes = 512 * 1024;

struct ProduceArgs {
  std::string topic;
  std::string file;  // empty or "-": stdin
  std::string key_separator;
  std::vector<std::string> headers;
  std::optional<std::int32_t> partition;
  std::string acks = "all";
  std::string compression = "none";
  bool no_idempotence = false;
  bool verbose = false;
  std::int64_t batch_bytes = kDefaultBatchBytes;
};

// Lines from a file descriptor, as they arrive: next() blocks until at least one whole line (or
// the end) is there, reads on while more input is there at once (a file, a fast pipe), then
// returns the whole lines read, up to about max_bytes.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  // Whether next() would wait for input (no whole line read yet and none to read now).
  [[nodiscard]] bool would_block() const { return !eof_ && buffer_.find('\n') == std::string::npos && !readable_now(); }

  // Empty: the input has ended. Lines lose their "\n" (and a "\r" before it), as Java's
  // readLine() reads them; a last line without "\n" is a line too.
  Result<std::vector<std::string>, std::string> next(std::size_t max_bytes) {
    std::vector<std::string> lines;
    std::size_t taken = 0;
    for (;;) {
      std::size_t start = 0;
      for (std::size_t nl; (nl = buffer_.find('\n', start)) != std::string::npos && taken < max_bytes; start = nl + 1) {
        std::string line = buffer_.substr(start, nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        taken += line.size();
        lines.push_back(std::move(line));
      }
      buffer_.erase(0, start);
      // Return what there is unless more fits and can be read without waiting.
      if (!lines.empty() && (taken >= max_bytes || eof_ || !readable_now())) return lines;
      if (eof_) {
        if (!buffer_.empty()) {
          lines.push_back(std::move(buffer_));
          buffer_.clear();
        }
        return lines;
      }
      char chunk[256 * 1024];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return unexpected(std::string("reading the input: ") + std::strerror(errno));
      if (n == 0) {
        eof_ = true;
      } else {
        buffer_.append(chunk, static_cast<std::size_t>(n));
      }
    }
  }

 private:
  [[nodiscard]] bool readable_now() const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }

  int fd_;
  std::string buffer_;
  bool eof_ = false;
};

std::optional<record::Compression> codec_named(const std::string& name) {
  if (name == "none") return record::Compression::none;
  if (name == "gzip") return record::Compression::gzip;
  if (name == "snappy") return record::Compression::snappy;
  if (name == "lz4") return record::Compression::lz4;
  if (name == "zstd") return record::Compression::zstd;
  return std::nullopt;
}

std::span<const std::byte> as_bytes(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

struct PendingRecord {
  std::optional<std::string> key;
  std::string value;
};

struct PartitionState {
  std::int32_t next_sequence = 0;
  std::int64_t first_offset = -1;
  std::int64_t last_offset = -1;
  std::int64_t records = 0;
};

// Kafka's max.in.flight.requests.per.connection default: batches sent before the first is answered.
constexpr std::size_t kMaxInFlight = 5;

// One batch sent and not yet accounted for; `result` is set when its answer (or failure) came.
struct SentBatch {
  std::int32_t partition = 0;
  std::int64_t count = 0;
  std::optional<Result<client::ProduceResult, client::Error>> result;
};

// Sends one batch and wakes the producing loop when it is answered. The Client sends the calls
// of one connection in order, so the batches of a partition reach its leader in sequence order.
asio::awaitable<void> send_batch(client::Client& client, std::shared_ptr<SentBatch> sent, std::string topic,
                                 std::vector<std::byte> batch, client::ProduceOptions options,
                                 client::Deadline deadline, asio::steady_timer& answered) {
  sent->result =
      co_await client.produce(std::move(topic), sent->partition, std::move(batch), std::move(options), deadline);
  answered.cancel();
}

asio::awaitable<int> produce(Session& s, const ProduceArgs& args) {
  const std::optional<record::Compression> codec = codec_named(args.compression);
  const std::int16_t acks = args.acks == "all" || args.acks == "-1" ? -1 : args.acks == "1" ? 1 : 0;
  // As Kafka's producer: idempotence needs acks=all, and is on unless turned off.
  const bool idempotent = acks == -1 && !args.no_idempotence;

  std::vector<record::Header> headers;
  std::vector<std::pair<std::string, std::string>> header_text;
  for (const auto& h : args.headers) {
    const auto eq = h.find('=');
    if (eq == std::string::npos || eq == 0) co_return s.fail(fmt::format("--header {}: expected key=value", h));
    header_text.emplace_back(h.substr(0, eq), h.substr(eq + 1));
  }
  for (const auto& [k, v] : header_text) headers.push_back(record::Header{k, as_bytes(v)});

  auto found = co_await s.wait_for_topic(args.topic);
  if (!found) co_return s.fail(found.error());
  const client::TopicInfo* info = *found;
  const auto partitions = static_cast<std::int32_t>(info->partitions.size());
  if (args.partition && (*args.partition < 0 || *args.partition >= partitions)) {
    co_return s.fail(
        fmt::format("topic '{}' has no partition {} (it has {})", args.topic, *args.partition, partitions));
  }

  std::int64_t producer_id = record::kNoProducerId;
  std::int16_t producer_epoch = record::kNoProducerEpoch;
  if (idempotent) {
    protocol::InitProducerIdRequest init;
    init.transactional_id = std::nullopt;
    init.transaction_timeout_ms = 60'000;
    client::Target any = client::target::AnyNode{};
    auto r = co_await s.send(std::move(any), std::move(init), client::RetryOn::kAllRetriable);
    if (!r) co_return s.fail("cannot start an idempotent producer (InitProducerId)", r.error());
    if (r->error_code != client::codes::kNone) {
      co_return s.fail_code("cannot start an idempotent producer (InitProducerId)", r->error_code, std::nullopt);
    }
    producer_id = r->producer_id;
    producer_epoch = r->producer_epoch;
  }

  int fd = 0;
  if (!args.file.empty() && args.file != "-") {
    fd = ::open(args.file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) co_return s.fail(fmt::format("cannot open {}: {}", args.file, std::strerror(errno)));
  }
  struct Closer {
    int fd;
    ~Closer() {
      if (fd > 0) ::close(fd);
    }
  } closer{fd};

  LineReader reader(fd);
  std::map<std::int32_t, PartitionState> state;
  const auto executor = co_await asio::this_coro::executor;
  asio::steady_timer answered(executor, asio::steady_timer::time_point::max());
  std::deque<std::shared_ptr<SentBatch>> window;  // sent, oldest first
  // Waits until the oldest sent batch is answered.
  const auto wait_oldest = [&]() -> asio::awaitable<void> {
    while (!window.front()->result) {
      answered.expires_at(asio::steady_timer::time_point::max());
      boost::system::error_code ec;
      co_await answered.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  };
  std::int64_t total = 0;
  std::string verbose_out;
  Progress progress("produced", std::nullopt, !s.json() && !args.verbose && stderr_is_terminal());
  // Accounts for the oldest sent batch once it is answered; false (the failure printed) when it failed.
  const auto account_oldest = [&]() -> asio::awaitable<bool> {
    co_await wait_oldest();
    const std::shared_ptr<SentBatch> sent = window.front();
    window.pop_front();
    const std::int32_t p = sent->partition;
    const auto& result = *sent->result;
    if (!result) {
      (void)s.fail(fmt::format("cannot produce to {}-{}", args.topic, p), result.error());
      co_return false;
    }
    PartitionState& ps = state[p];
    if (result->base_offset >= 0) {
      if (ps.first_offset < 0) ps.first_offset = result->base_offset;
      ps.last_offset = result->base_offset + sent->count - 1;
    }
    ps.records += sent->count;
    total += sent->count;
    progress.update(total);
    if (args.verbose && !s.json()) {
      for (std::int64_t i = 0; i < sent->count; ++i) {
        verbose_out += result->base_offset >= 0 ? fmt::format("{}-{}@{}\n", args.topic, p, result->base_offset + i)
                                                : fmt::format("{}-{}\n", args.topic, p);
      }
      print(verbose_out);
      std::fflush(stdout);
      verbose_out.clear();
    }
    co_return true;
  };
  // Returns `code` once no batch is in flight any more (they refer to this frame).
  const auto finish = [&](int code) -> asio::awaitable<int> {
    while (!window.empty()) {
      co_await wait_oldest();
      window.pop_front();
    }
    co_return code;
  };
  std::int32_t sticky = static_cast<std::int32_t>(std::random_device{}() % static_cast<unsigned>(partitions));
  std::int64_t line_number = 0;
  for (;;) {
    // Input that is slow to come (a terminal): the batches sent are answered before waiting for it.
    if (reader.would_block()) {
      while (!window.empty()) {
        if (!co_await account_oldest()) co_return co_await finish(kExitFailed);
      }
    }
    auto lines = reader.next(static_cast<std::size_t>(args.batch_bytes));
    if (!lines) co_return co_await finish(s.fail(lines.error()));
    if (lines->empty()) break;
    std::map<std::int32_t, std::vector<PendingRecord>> by_partition;
    for (auto& line : *lines) {
      ++line_number;
      PendingRecord rec;
      if (!args.key_separator.empty()) {
        const auto at = line.find(args.key_separator);
        if (at == std::string::npos) {
          co_return co_await finish(
              s.fail(fmt::format("No key separator found on line number {}: '{}'", line_number, line)));
        }
        rec.key = line.substr(0, at);
        rec.value = line.substr(at + args.key_separator.size());
      } else {
        rec.value = std::move(line);
      }
      const std::int32_t p = args.partition ? *args.partition
                             : rec.key      ? client::partition_for_key(as_bytes(*rec.key), partitions)
                                            : sticky;
      by_partition[p].push_back(std::move(rec));
    }
    sticky = (sticky + 1) % partitions;  // unkeyed records move on to the next partition per batch

    for (auto& [p, records] : by_partition) {
      PartitionState& ps = state[p];
      const std::int64_t now_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      record::BatchOptions options;
      options.producer_id = producer_id;
      options.producer_epoch = producer_epoch;
      options.base_sequence = idempotent ? ps.next_sequence : record::kNoSequence;
      record::RecordBatchBuilder builder(options);
      for (const auto& r : records) {
        std::optional<ByteSpan> key;
        if (r.key) key = as_bytes(*r.key);
        builder.append(now_ms, key, as_bytes(r.value), headers);
      }
      std::vector<std::byte> batch = builder.build();
      if (codec && *codec != record::Compression::none) {
        auto view = record::RecordBatchView::from(batch);
        if (!view) co_return co_await finish(s.fail("internal error: a batch just built does not parse"));
        auto compressed = record::compress_batch(*view, *codec);
        if (!compressed) {
          co_return co_await finish(s.fail(
              fmt::format("cannot compress with {}: {}", args.compression, record::to_string(compressed.error()))));
        }
        batch = std::move(*compressed);
      }
      const auto count = static_cast<std::int64_t>(records.size());
      if (idempotent) ps.next_sequence = record::increment_sequence(ps.next_sequence, static_cast<std::int32_t>(count));
      // At most kMaxInFlight batches unanswered: account for the oldest first.
      while (window.size() >= kMaxInFlight) {
        if (!co_await account_oldest()) co_return co_await finish(kExitFailed);
      }
      client::ProduceOptions produce_options;
      produce_options.acks = acks;
      auto sent = std::make_shared<SentBatch>();
      sent->partition = p;
      sent->count = count;
      window.push_back(sent);
      std::string topic = args.topic;
      asio::co_spawn(executor,
                     send_batch(s.client(), std::move(sent), std::move(topic), std::move(batch),
                                std::move(produce_options), client::deadline_after_ms(s.timeout_ms()), answered),
                     asio::detached);
    }
  }
  while (!window.empty()) {
    if (!co_await account_oldest()) co_return co_await finish(kExitFailed);
  }

  progress.clear();
  if (s.json()) {
    Json j;
    j.begin_object().key("topic").value(args.topic).key("records").value(total).key("partitions").begin_array();
    for (const auto& [p, ps] : state) {
      j.begin_object().key("partition").value(p).key("records").value(ps.records);
      j.key("first_offset").value(ps.first_offset).key("last_offset").value(ps.last_offset).end_object();
    }
    j.end_array().end_object();
    print(j.str() + "\n");
  }
  co_return kExitOk;
}

}  // namespace

void add_produce_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ClientFlags>();
  auto args = std::make_shared<ProduceArgs>();
  auto* cmd = app.add_subcommand("produce", "Send records read from stdin (or --file), one per line");
  add_client_flags(*cmd, *flags);
  cmd->add_option("topic", args->topic, "The topic")->required();
  cmd->add_option("--file,-f", args->file, "Read the records from this file instead of stdin");
  cmd->add_option("--key-separator,-k", args->key_separator,
                  "Each line is KEY<separator>VALUE (Kafka's parse.key=true key.separator=...)");
  cmd->add_option("--header,-H", args->headers, "A header on every record: key=value (repeatable)");
  cmd->add_option("--partition,-p", args->partition, "Send every record to this partition");
  cmd->add_option("--acks", args->acks, "all (default), 1 or 0")->check(CLI::IsMember({"all", "-1", "1", "0"}));
  cmd->add_option("--compression,-z", args->compression, "none (default), gzip, snappy, lz4 or zstd")
      ->check(CLI::IsMember({"none", "gzip", "snappy", "lz4", "zstd"}));
  cmd->add_flag("--no-idempotence", args->no_idempotence,
                "Send without a producer id (idempotence is on by default with acks=all)");
  cmd->add_option("--batch-bytes", args->batch_bytes, "Largest batch of lines sent at once (default 524288)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{16} << 20));
  cmd->add_flag("--verbose,-v", args->verbose, "Print each record's topic-partition@offset");
  cmd->callback([flags, args, &exit_code]() {
    exit_code = run_client(*flags, [args](Session& s) { return produce(s, *args); });
  });
}

}  // namespace weir::cli
