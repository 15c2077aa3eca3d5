#include "cli/consume.h"

#include <fmt/format.h>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cctype>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "cli/client_command.h"
#include "cli/progress.h"
#include "client/group_membership.h"
#include "protocol/gen/fetch_request.h"
#include "protocol/gen/fetch_response.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/compression.h"
#include "protocol/record/record.h"

namespace weir::cli {

namespace asio = boost::asio;

namespace {

constexpr std::size_t kMaxDecompressedBatch = std::size_t{256} << 20;

struct ConsumeArgs {
  std::string topic;
  std::string from = "end";
  std::vector<std::int32_t> partitions;
  std::int64_t max_records = -1;
  std::string isolation = "read_uncommitted";
  std::string format = "Partition:{partition}\\t{key}\\t{value}";
  std::int64_t idle_timeout_ms = -1;
  std::string group;  // --group: read as a member of this consumer group
  std::string group_protocol;  // --group-protocol (else group.protocol from --command-config, else classic)
  std::string include;         // --include: with --group-protocol consumer, the topics this regex matches
};

// group.protocol as Kafka validates it (case-insensitive); nullopt when it is neither.
std::optional<bool> is_consumer_protocol(std::string value) {
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (value == "classic") return false;
  if (value == "consumer") return true;
  return std::nullopt;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Where --from starts: a ListOffsets timestamp (earliest, latest or a time) or an offset.
struct StartAt {
  std::optional<std::int64_t> offset;
  std::int64_t timestamp = client::kLatestTimestamp;
};

// "beginning", "end", an offset, "@<ms since the epoch>" or "@-<N><s|m|h|d>" (that long ago).
std::optional<StartAt> parse_from(const std::string& text) {
  const auto number = [](std::string_view s, std::int64_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
  };
  if (text == "beginning") return StartAt{std::nullopt, client::kEarliestTimestamp};
  if (text == "end") return StartAt{std::nullopt, client::kLatestTimestamp};
  std::int64_t n = 0;
  if (text.starts_with("@")) {
    const auto at = parse_time_spec(text);
    if (!at) return std::nullopt;
    return StartAt{std::nullopt, *at};
  }
  if (!number(text, n) || n < 0) return std::nullopt;
  return StartAt{n, 0};
}

std::string text_of(const std::optional<ByteSpan>& bytes) {
  if (!bytes) return "null";
  return {reinterpret_cast<const char*>(bytes->data()), bytes->size()};
}

// The --format template with \t, \n and \\ turned into their characters.
std::string unescape(const std::string& format) {
  std::string out;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '\\' && i + 1 < format.size()) {
      const char c = format[++i];
      out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
      continue;
    }
    out += format[i];
  }
  return out;
}

struct Out {
  std::string topic;
  std::int32_t partition;
  std::int64_t offset;
  std::int64_t timestamp;
  const record::RecordView& r;
};

std::string headers_text(const record::RecordView& r) {
  std::string out;
  for (const auto& h : r.headers) {
    if (!out.empty()) out += ',';
    out += std::string(h.key) + "=" + text_of(h.value);
  }
  return out;
}

std::string render(const std::string& format, const Out& o) {
  std::string out;
  for (std::size_t i = 0; i < format.size();) {
    if (format[i] == '{') {
      const auto close = format.find('}', i);
      if (close != std::string::npos) {
        const std::string_view name(format.data() + i + 1, close - i - 1);
        std::optional<std::string> v;
        if (name == "topic") v = o.topic;
        if (name == "partition") v = std::to_string(o.partition);
        if (name == "offset") v = std::to_string(o.offset);
        if (name == "timestamp") v = std::to_string(o.timestamp);
        if (name == "key") v = text_of(o.r.key);
        if (name == "value") v = text_of(o.r.value);
        if (name == "headers") v = headers_text(o.r);
        if (v) {
          out += *v;
          i = close + 1;
          continue;
        }
      }
    }
    out += format[i++];
  }
  return out + "\n";
}

std::string json_line(const Out& o) {
  Json j;
  j.begin_object().key("topic").value(o.topic).key("partition").value(o.partition).key("offset").value(o.offset);
  j.key("timestamp").value(o.timestamp).key("key");
  if (o.r.key) {
    j.value(text_of(o.r.key));
  } else {
    j.null();
  }
  j.key("value");
  if (o.r.value) {
    j.value(text_of(o.r.value));
  } else {
    j.null();
  }
  j.key("headers").begin_object();
  for (const auto& h : o.r.headers) {
    j.key(h.key);
    if (h.value) {
      j.value(text_of(h.value));
    } else {
      j.null();
    }
  }
  j.end_object().end_object();
  return j.str() + "\n";
}

// Appends the records of one fetched partition from `position` on to `out` (rendered with
// `format`, or as JSON lines) and moves `position` past them, past control batches and, with
// read_committed, past aborted transactions' batches; stops once `count` reaches max_records
// (-1: no limit). An error message when the records cannot be read.
std::optional<std::string> read_records(const std::string& topic, std::int32_t p,
                                        const protocol::FetchResponse::PartitionData& rp, bool read_committed,
                                        bool json, const std::string& format, std::int64_t max_records,
                                        std::int64_t& position, std::int64_t& count, std::string& out) {
  if (!rp.records || rp.records->empty()) return std::nullopt;
  // Aborted transactions (read_committed): their producers' batches from first_offset on are
  // skipped until that producer's marker.
  std::multimap<std::int64_t, std::int64_t> aborted_from;  // first offset -> producer id
  if (rp.aborted_transactions) {
    for (const auto& a : *rp.aborted_transactions) aborted_from.emplace(a.first_offset, a.producer_id);
  }
  std::set<std::int64_t> aborting;
  const ByteSpan bytes = std::as_bytes(std::span(rp.records->data(), rp.records->size()));
  record::BatchSplitter split(bytes);
  for (;;) {
    auto next = split.next();
    if (!next) return fmt::format("a malformed record batch from {}-{}", topic, p);
    if (!*next) break;
    const record::RecordBatchView& batch = **next;
    while (!aborted_from.empty() && aborted_from.begin()->first <= batch.last_offset()) {
      aborting.insert(aborted_from.begin()->second);
      aborted_from.erase(aborted_from.begin());
    }
    if (batch.next_offset() <= position) continue;
    if (batch.is_control()) {
      aborting.erase(batch.producer_id());
      position = batch.next_offset();
      continue;
    }
    if (read_committed && batch.is_transactional() && aborting.contains(batch.producer_id())) {
      position = batch.next_offset();
      continue;
    }
    auto section = record::read_records_section(batch, kMaxDecompressedBatch);
    if (!section) return fmt::format("cannot decompress a batch from {}-{}", topic, p);
    bool done = false;
    auto status = record::for_each_record(section->reader(), [&](const record::RecordView& r) {
      const std::int64_t offset = batch.base_offset() + r.offset_delta;
      if (done || offset < position) return;
      const std::int64_t ts = batch.timestamp_type() == record::TimestampType::log_append_time
                                  ? batch.max_timestamp()
                                  : batch.base_timestamp() + r.timestamp_delta;
      const Out o{topic, p, offset, ts, r};
      out += json ? json_line(o) : render(format, o);
      position = offset + 1;
      ++count;
      if (max_records >= 0 && count >= max_records) done = true;
    });
    if (!status) return fmt::format("a malformed record in {}-{}", topic, p);
    if (done) break;
    position = batch.next_offset();
  }
  return std::nullopt;
}

// Ctrl+C (or SIGTERM) sets `stopping`; the wait is cancelled when this goes.
class StopOnSignal {
 public:
  StopOnSignal(const asio::any_io_executor& executor, bool& stopping) : signals_(executor, SIGINT, SIGTERM) {
    signals_.async_wait([&stopping](const boost::system::error_code& ec, int) {
      if (!ec) stopping = true;
    });
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  ~StopOnSignal() {
    boost::system::error_code ignored;
    signals_.cancel(ignored);
  }

 private:
  asio::signal_set signals_;
};

asio::awaitable<void> pause_ms(std::int64_t ms) {
  asio::steady_timer pause(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  co_await pause.async_wait(asio::use_awaitable);
}

struct Position {
  std::int64_t offset = 0;
};

asio::awaitable<int> consume_group(Session& s, const ConsumeArgs& args, const StartAt& from);

// The offset `timestamp` (a time, or client::kEarliestTimestamp / kLatestTimestamp) points at
// in topic-partition p: the end when no record is that late.
asio::awaitable<Result<std::int64_t, client::Error>> offset_for(Session& s, std::string topic, std::int32_t p,
                                                                std::int64_t timestamp) {
  std::string again = topic;
  auto o = co_await s.client().list_offsets(std::move(topic), p, timestamp, client::deadline_after_ms(s.timeout_ms()));
  if (!o) co_return unexpected(std::move(o.error()));
  if (o->offset >= 0) co_return o->offset;
  auto end = co_await s.client().list_offsets(std::move(again), p, client::kLatestTimestamp,
                                              client::deadline_after_ms(s.timeout_ms()));
  if (!end) co_return unexpected(std::move(end.error()));
  co_return end->offset;
}

// One Fetch of `parts` (partition, offset) of `topic` from `leader`: no fetch session, as the
// console consumer's one-shot reads; v12 at most when the topic id is unknown (v13 names topics
// by id only).
asio::awaitable<Result<client::ResponseOf<protocol::FetchRequest>, client::Error>> fetch_from(
    Session& s, std::int32_t leader, std::string topic, Uuid topic_id,
    std::vector<std::pair<std::int32_t, std::int64_t>> parts, std::int8_t isolation) {
  protocol::FetchRequest req;
  req.max_wait_ms = 500;
  req.min_bytes = 1;
  req.max_bytes = 50 << 20;
  req.isolation_level = isolation;
  req.session_id = 0;
  req.session_epoch = -1;
  auto& ft = req.topics.emplace_back();
  ft.topic = std::move(topic);
  ft.topic_id = topic_id;
  for (const auto& [p, offset] : parts) {
    auto& fp = ft.partitions.emplace_back();
    fp.partition = p;
    fp.fetch_offset = offset;
    fp.partition_max_bytes = 1 << 20;
  }
  client::Target target = client::target::Node{leader};
  client::CallOptions options;
  options.deadline = client::deadline_after_ms(s.timeout_ms());
  if (topic_id.is_zero()) options.max_version = 12;
  co_return co_await s.client().send(std::move(target), std::move(req), std::move(options));
}

asio::awaitable<int> consume(Session& s, const ConsumeArgs& args) {
  const auto from = parse_from(args.from);
  if (!from)
    co_return s.fail(
        fmt::format("--from {}: expected beginning, end, an offset, @<epoch ms> or @-<N>s|m|h|d", args.from));
  if (!args.group.empty()) co_return co_await consume_group(s, args, *from);
  const std::int8_t isolation = args.isolation == "read_committed" ? 1 : 0;
  const std::string format = unescape(args.format);

  auto found = co_await s.wait_for_topic(args.topic);
  if (!found) co_return s.fail(found.error());
  const client::TopicInfo* info = *found;
  std::vector<std::int32_t> parts = args.partitions;
  if (parts.empty()) {
    for (const auto& p : info->partitions) parts.push_back(p.partition);
  }
  for (const std::int32_t p : parts) {
    if (p < 0 || p >= static_cast<std::int32_t>(info->partitions.size())) {
      co_return s.fail(fmt::format("topic '{}' has no partition {}", args.topic, p));
    }
  }

  std::map<std::int32_t, Position> position;
  const auto reset = [&](std::int32_t p, std::int64_t timestamp) -> asio::awaitable<std::optional<client::Error>> {
    std::string topic = args.topic;
    auto o = co_await offset_for(s, std::move(topic), p, timestamp);
    if (!o) co_return std::move(o.error());
    position[p].offset = *o;
    co_return std::nullopt;
  };
  for (const std::int32_t p : parts) {
    if (from->offset) {
      position[p].offset = *from->offset;
      continue;
    }
    if (auto e = co_await reset(p, from->timestamp)) {
      co_return s.fail(fmt::format("cannot find where to start in {}-{}", args.topic, p), *e);
    }
  }

  // Ctrl+C (or SIGTERM) ends the follow loop after the fetch in flight.
  bool stopping = false;
  const StopOnSignal on_signal(co_await asio::this_coro::executor, stopping);

  const std::int64_t reset_timestamp =
      from->timestamp == client::kEarliestTimestamp ? client::kEarliestTimestamp : client::kLatestTimestamp;
  std::int64_t count = 0;
  std::int64_t last_record_at = now_ms();
  bool refresh = false;
  Progress progress("consumed", args.max_records, args.max_records >= 0 && !s.json() && stderr_is_terminal());
  while (!stopping && (args.max_records < 0 || count < args.max_records)) {
    if (refresh) {
      std::optional<std::vector<std::string>> again{std::in_place, {args.topic}};
      (void)co_await s.client().metadata(std::move(again), client::deadline_after_ms(s.timeout_ms()));
      refresh = false;
    }
    const client::TopicInfo* t = s.client().cluster().topic(args.topic);
    std::map<std::int32_t, std::vector<std::int32_t>> by_leader;
    for (const std::int32_t p : parts) {
      auto leader = s.client().cluster().leader(args.topic, p);
      if (leader) by_leader[*leader].push_back(p);
    }
    if (by_leader.empty()) {  // no partition has a leader now: look again shortly
      refresh = true;
      co_await pause_ms(200);
      continue;
    }
    for (auto& [leader, leader_parts] : by_leader) {
      std::vector<std::pair<std::int32_t, std::int64_t>> at;
      for (const std::int32_t p : leader_parts) at.emplace_back(p, position[p].offset);
      std::string fetch_topic = args.topic;
      const Uuid topic_id = t != nullptr ? t->id : Uuid{};
      auto resp = co_await fetch_from(s, leader, std::move(fetch_topic), topic_id, std::move(at), isolation);
      if (!resp) co_return s.fail(fmt::format("cannot fetch from topic '{}'", args.topic), resp.error());
      std::string out;
      for (auto& rt : resp->responses) {
        for (auto& rp : rt.partitions) {
          const std::int32_t p = rp.partition_index;
          if (!position.contains(p)) continue;
          if (rp.error_code == client::codes::kOffsetOutOfRange) {
            if (auto e = co_await reset(p, reset_timestamp)) {
              co_return s.fail(fmt::format("cannot reset the position in {}-{}", args.topic, p), *e);
            }
            continue;
          }
          if (rp.error_code != client::codes::kNone) {
            if (client::is_retriable(rp.error_code) || client::is_stale_metadata(rp.error_code)) {
              refresh = true;
              continue;
            }
            co_return s.fail_code(fmt::format("cannot fetch from {}-{}", args.topic, p), rp.error_code, std::nullopt);
          }
          if (auto e = read_records(args.topic, p, rp, isolation == 1, s.json(), format, args.max_records,
                                    position[p].offset, count, out)) {
            co_return s.fail(*e);
          }
          if (args.max_records >= 0 && count >= args.max_records) break;
        }
        if (args.max_records >= 0 && count >= args.max_records) break;
      }
      if (!out.empty()) {
        progress.clear();
        print(out);
        std::fflush(stdout);
        last_record_at = now_ms();
      }
      progress.update(count);
      if (stopping || (args.max_records >= 0 && count >= args.max_records)) break;
    }
    if (args.idle_timeout_ms >= 0 && now_ms() - last_record_at >= args.idle_timeout_ms) break;
  }
  progress.clear();
  if (!s.json()) std::fprintf(stderr, "Processed a total of %lld messages\n", static_cast<long long>(count));
  co_return kExitOk;
}

// --group: a member of a consumer group (client/group_membership.h), over the classic protocol or
// with --group-protocol consumer over KIP-848's. Partitions start at the group's committed
// offsets, else where --from says (Kafka's auto.offset.reset); what was read is committed every
// 5 s, before partitions are given up and when the command ends, which also leaves the group.
asio::awaitable<int> consume_group(Session& s, const ConsumeArgs& args, const StartAt& from) {
  const bool read_committed = args.isolation == "read_committed";
  const std::string format = unescape(args.format);
  client::GroupMemberConfig config;
  config.group_id = args.group;
  config.topics = {args.topic};
  const std::optional<std::string> file_protocol = s.property("group.protocol");
  if (args.group_protocol.empty() && file_protocol) {
    const auto consumer = is_consumer_protocol(*file_protocol);
    if (!consumer) {
      co_return s.fail(
          fmt::format("Invalid value {} for configuration group.protocol: String must be one of "
                      "(case insensitive): CLASSIC, CONSUMER",
                      *file_protocol));
    }
    config.consumer_protocol = *consumer;
  } else {
    config.consumer_protocol = is_consumer_protocol(args.group_protocol).value_or(false);
  }
  config.remote_assignor = s.property("group.remote.assignor");
  config.group_instance_id = s.property("group.instance.id");
  config.rack_id = s.property("client.rack");
  if (!config.consumer_protocol && (config.group_instance_id || !args.include.empty())) {
    std::fprintf(stderr, "error: %s needs the consumer group protocol (--group-protocol consumer)\n",
                 args.include.empty() ? "group.instance.id" : "--include");
    co_return kExitUsage;
  }
  if (args.include.empty()) {
    auto found = co_await s.wait_for_topic(args.topic);
    if (!found) co_return s.fail(found.error());
  } else {
    config.topics.clear();
    config.topic_regex = args.include;
  }
  client::GroupMembership member(co_await asio::this_coro::executor, s.client().options(), std::move(config));
  member.on_warning = [](const std::string& w) { std::fprintf(stderr, "warning: %s\n", w.c_str()); };
  member.start();

  bool stopping = false;
  const StopOnSignal on_signal(co_await asio::this_coro::executor, stopping);
  const std::int64_t reset_timestamp =
      from.timestamp == client::kEarliestTimestamp ? client::kEarliestTimestamp : client::kLatestTimestamp;
  std::int64_t count = 0;
  std::int64_t last_record_at = now_ms();
  bool refresh = false;
  Progress progress("consumed", args.max_records, args.max_records >= 0 && !s.json() && stderr_is_terminal());
  std::optional<std::string> failed;
  std::optional<client::Error> cause;
  const auto limit_reached = [&] { return args.max_records >= 0 && count >= args.max_records; };
  while (!stopping && !limit_reached() && !failed) {
    if (args.idle_timeout_ms >= 0 && now_ms() - last_record_at >= args.idle_timeout_ms) break;
    if (member.failure()) {
      failed = fmt::format("consumer group '{}' failed", args.group);
      cause = member.failure();
      break;
    }
    if (!member.usable()) {
      co_await pause_ms(50);
      continue;
    }
    if (refresh) {
      std::set<std::string> assigned_topics;
      for (const auto& tp : member.assignment()) assigned_topics.insert(tp.first);
      if (assigned_topics.empty() && !args.topic.empty()) assigned_topics.insert(args.topic);
      std::optional<std::vector<std::string>> again{std::in_place, assigned_topics.begin(), assigned_topics.end()};
      (void)co_await s.client().metadata(std::move(again), client::deadline_after_ms(s.timeout_ms()));
      refresh = false;
      continue;
    }
    // Assigned partitions without a committed offset start where --from says.
    const std::uint64_t epoch = member.epoch();
    bool unplaced = false;
    for (const auto& tp : member.assignment()) {
      if (member.position(tp)) continue;
      std::string topic = tp.first;
      auto o = co_await offset_for(s, std::move(topic), tp.second, from.timestamp);
      if (member.epoch() != epoch) break;
      if (!o) {
        failed = fmt::format("cannot find where to start in {}-{}", tp.first, tp.second);
        cause = std::move(o.error());
        break;
      }
      member.seek(tp, *o);
    }
    if (failed || member.epoch() != epoch) continue;

    // One fetch per leader and topic (a --include member may be given several topics).
    std::map<std::pair<std::int32_t, std::string>, std::vector<std::int32_t>> by_leader;
    for (const auto& tp : member.assignment()) {
      auto leader = s.client().cluster().leader(tp.first, tp.second);
      if (!leader) {
        unplaced = true;
        continue;
      }
      if (member.position(tp)) by_leader[{*leader, tp.first}].push_back(tp.second);
    }
    if (unplaced) refresh = true;
    if (by_leader.empty()) {  // nothing assigned, or no leader now: look again shortly
      co_await pause_ms(unplaced ? 200 : 100);
      continue;
    }
    for (auto& [where, leader_parts] : by_leader) {
      const auto& [leader, topic] = where;
      const client::TopicInfo* t = s.client().cluster().topic(topic);
      std::map<std::int32_t, std::int64_t> sent;
      for (const std::int32_t p : leader_parts) sent[p] = *member.position({topic, p});
      std::vector<std::pair<std::int32_t, std::int64_t>> at(sent.begin(), sent.end());
      std::string fetch_topic = topic;
      const Uuid topic_id = t != nullptr ? t->id : Uuid{};
      auto resp = co_await fetch_from(s, leader, std::move(fetch_topic), topic_id, std::move(at),
                                      static_cast<std::int8_t>(read_committed ? 1 : 0));
      if (!resp) {
        failed = fmt::format("cannot fetch from topic '{}'", topic);
        cause = std::move(resp.error());
        break;
      }
      // An answer to a fetch sent before the assignment changed is no longer this member's to print.
      if (member.epoch() != epoch || !member.usable()) break;
      std::string out;
      for (auto& rt : resp->responses) {
        for (auto& rp : rt.partitions) {
          const std::int32_t p = rp.partition_index;
          const client::TopicPartition tp{topic, p};
          const auto position = member.position(tp);
          if (!sent.contains(p) || position != sent[p]) continue;
          if (rp.error_code == client::codes::kOffsetOutOfRange) {
            std::string reset_topic = topic;
            auto o = co_await offset_for(s, std::move(reset_topic), p, reset_timestamp);
            if (!o) {
              failed = fmt::format("cannot reset the position in {}-{}", topic, p);
              cause = std::move(o.error());
              break;
            }
            if (member.epoch() == epoch) member.seek(tp, *o);
            continue;
          }
          if (rp.error_code != client::codes::kNone) {
            if (client::is_retriable(rp.error_code) || client::is_stale_metadata(rp.error_code)) {
              refresh = true;
              continue;
            }
            failed =
                fmt::format("cannot fetch from {}-{}: {}", topic, p, client::Error::kafka(rp.error_code, "").name());
            break;
          }
          std::int64_t next = *position;
          if (auto e =
                  read_records(topic, p, rp, read_committed, s.json(), format, args.max_records, next, count, out)) {
            failed = *e;
            break;
          }
          member.seek(tp, next);
          if (limit_reached()) break;
        }
        if (failed || limit_reached()) break;
      }
      if (!out.empty()) {
        progress.clear();
        print(out);
        std::fflush(stdout);
        last_record_at = now_ms();
      }
      progress.update(count);
      if (failed || stopping || limit_reached() || member.epoch() != epoch) break;
    }
  }
  co_await member.close();
  if (failed) co_return s.fail(*failed, cause);
  progress.clear();
  if (!s.json()) std::fprintf(stderr, "Processed a total of %lld messages\n", static_cast<long long>(count));
  co_return kExitOk;
}

}  // namespace

void add_consume_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ClientFlags>();
  auto args = std::make_shared<ConsumeArgs>();
  auto* cmd = app.add_subcommand("consume", "Print a topic's records (until Ctrl+C, -n N, or --idle-timeout-ms)");
  add_client_flags(*cmd, *flags);
  auto* topic = cmd->add_option("topic", args->topic, "The topic (or --include)");
  cmd->add_option("--from", args->from,
                  "beginning, end (default), an offset, @<ms since the epoch>, or @-<N>s|m|h|d (that long ago)");
  auto* partition = cmd->add_option("--partition,-p", args->partitions, "Only these partitions (repeatable)");
  auto* group = cmd->add_option("--group,-g", args->group,
                                "Read as a member of this consumer group: the group's partitions are shared with its "
                                "other members (cooperative-sticky, or range), start at its committed offsets (else "
                                "--from: beginning, end or a time) and what was read is committed");
  partition->excludes(group);
  cmd->add_option("--group-protocol", args->group_protocol,
                  "With --group: classic (JoinGroup/SyncGroup, the default, as kafka-console-consumer) or consumer "
                  "(KIP-848: the broker assigns); also group.protocol in --command-config")
      ->check(CLI::IsMember({"classic", "consumer"}, CLI::ignore_case))
      ->needs(group);
  cmd->add_option("--include", args->include,
                  "With --group and --group-protocol consumer: read every topic this regular expression matches "
                  "(RE2 syntax, matched by the group coordinator, also topics created later) instead of one topic")
      ->needs(group)
      ->excludes(topic);
  cmd->add_option("-n,--max-records", args->max_records, "Stop after this many records")->check(CLI::NonNegativeNumber);
  cmd->add_option("--isolation", args->isolation, "read_uncommitted (default) or read_committed")
      ->check(CLI::IsMember({"read_uncommitted", "read_committed"}));
  cmd->add_option("--format", args->format,
                  "Each record as this template: {topic} {partition} {offset} {timestamp} {key} {value} {headers}, "
                  "\\t and \\n (default: Partition:{partition}\\t{key}\\t{value}, as kafka-console-consumer with "
                  "print.partition and print.key)");
  cmd->add_option("--idle-timeout-ms", args->idle_timeout_ms, "Stop after this long without a record")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([flags, args, &exit_code]() {
    if (args->topic.empty() && args->include.empty()) {
      std::fprintf(stderr, "error: name a topic (or, with --group, --include REGEX)\n");
      exit_code = kExitUsage;
      return;
    }
    if (!args->group.empty()) {
      const auto from = parse_from(args->from);
      if (from && from->offset) {
        std::fprintf(stderr,
                     "error: --from %s: an offset needs --partition, which --group does not allow (use "
                     "beginning, end or a time)\n",
                     args->from.c_str());
        exit_code = kExitUsage;
        return;
      }
    }
    flags->command_keys = {"group.protocol", "group.remote.assignor", "group.instance.id", "client.rack"};
    exit_code = run_client(*flags, [args](Session& s) { return consume(s, *args); });
  });
}

}  // namespace weir::cli
