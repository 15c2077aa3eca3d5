#include "broker/broker.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "base/assert.h"
#include "base/log.h"
#include "base/uuid.h"
#include "broker/async.h"
#include "broker/group_service.h"
#include "broker/handlers/registry.h"
#include "broker/partition_service.h"
#include "broker/txn_host.h"
#include "protocol/error_names.h"
#include "protocol/gen/api_registry.h"
#include "protocol/headers.h"
#include "storage/io_throttle.h"
#include "storage/parallel.h"

namespace weir::broker {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// Threads that load the partition logs and their producer state at start.
std::size_t log_load_threads(const Config& config) {
  return static_cast<std::size_t>(std::max(1, config.typed().get_int("num.recovery.threads.per.data.dir")));
}

// The metadata log's file through the broker's file system (the data files' seam), so that a
// test's fault-injecting file system reaches it too.
class MetadataLogFile final : public metadata::LogFile {
 public:
  static Result<std::unique_ptr<MetadataLogFile>, metadata::StoreErrc> open(storage::FileSystem& fs,
                                                                            const fs::path& log_dir) {
    const fs::path dir = log_dir / metadata::kMetadataLogDirName;
    const fs::path path = dir / metadata::kMetadataSegmentName;
    auto existed = fs.exists(dir);
    if (!existed) return failure("exists", dir, existed.error());
    if (!*existed) {
      if (auto ok = fs.create_directory(dir); !ok) return failure("mkdir", dir, ok.error());
      if (auto ok = fs.sync_directory(log_dir); !ok) return failure("sync_dir", log_dir, ok.error());
    }
    auto file_existed = fs.exists(path);
    if (!file_existed) return failure("exists", path, file_existed.error());
    auto file = fs.open(path, storage::OpenMode::kCreate);
    if (!file) return failure("open", path, file.error());
    if (!*file_existed) {
      if (auto ok = fs.sync_directory(dir); !ok) return failure("sync_dir", dir, ok.error());
    }
    return std::unique_ptr<MetadataLogFile>(new MetadataLogFile(std::move(*file), path));
  }

  Result<std::vector<std::byte>, metadata::StoreErrc> read_all() override {
    std::vector<std::byte> bytes(static_cast<std::size_t>(file_->size()));
    auto n = file_->pread(0, bytes);
    if (!n) return failure("pread", path_, n.error());
    bytes.resize(*n);
    return bytes;
  }
  Status<metadata::StoreErrc> append_and_sync(ByteSpan bytes) override {
    if (auto ok = file_->append(bytes); !ok) return failure("append", path_, ok.error());
    if (auto ok = file_->sync(); !ok) return failure("fdatasync", path_, ok.error());
    return {};
  }
  Status<metadata::StoreErrc> truncate_and_sync(std::uint64_t size) override {
    if (auto ok = file_->truncate(static_cast<std::int64_t>(size)); !ok) return failure("ftruncate", path_, ok.error());
    if (auto ok = file_->sync(); !ok) return failure("fsync", path_, ok.error());
    return {};
  }

 private:
  MetadataLogFile(std::shared_ptr<storage::File> file, fs::path path)
      : file_(std::move(file)), path_(std::move(path)) {}
  static std::unexpected<metadata::StoreErrc> failure(std::string_view op, const fs::path& path, storage::IoError e) {
    log::get("metadata")
        ->error("event=metadata_log_io_error {} {} {}", log::kv("op", op), log::kv("path", path.string()),
                log::kv("error", storage::to_string(e)));
    return std::unexpected(metadata::StoreErrc::io_error);
  }

  std::shared_ptr<storage::File> file_;
  fs::path path_;
};

using Body = std::span<const std::uint8_t>;
using HandlerFn = asio::awaitable<net::Reply> (*)(Broker&, const net::ClientInfo&, const protocol::RequestHeader&,
                                                  Body);

template <class Response>
net::Reply encode_reply(std::int16_t api_key, std::int16_t header_version_of, std::int32_t correlation_id,
                        const Response& resp, std::int16_t body_version) {
  net::Reply reply;
  // Fetch record data is not copied in: it goes as splices, sent from the segment files.
  protocol::Writer w(reply.bytes, &reply.splices);
  protocol::write_response_header(w, api_key, header_version_of, correlation_id);
  resp.encode(w, body_version);
  return reply;
}

std::int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A broker in a cluster whose log directory failed stops at once, as a Kafka broker halts when
// its last live log directory goes offline: the controller then fences it and moves the
// leadership of its partitions to replicas in the ISR, where a broker that stayed up would keep
// leading partitions it can no longer write. weir has one log directory, so its first disk
// failure is its last. The first failure wins; a thread failing meanwhile returns its error.
[[noreturn]] void halt_on_log_dir_failure(const std::string& dir, const storage::IoFailure& failure) {
  static std::atomic<bool> halting{false};
  if (halting.exchange(true)) {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // the first thread exits the process
  }
  auto logger = log::get("storage");
  logger->critical("event=log_dir_failed {} {} {} {}", log::kv("dir", dir), log::kv("op", failure.op),
                   log::kv("path", failure.path.string()), log::kv("error", storage::to_string(failure.error)));
  logger->critical("event=broker_halting {} exit_code=1",
                   log::kv("reason", fmt::format("the log directory {} failed; the controller fences this broker "
                                                 "and elects other leaders for its partitions",
                                                 dir)));
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l) { l->flush(); });
  std::_Exit(1);
}

// One line per rejected request (answered with an error as a whole, or closed), at most what the
// shard's limiter lets through; the line says how many were dropped before it.
void log_rejected(RequestStats& stats, const net::ClientInfo& client, const protocol::RequestHeader& header,
                  std::int16_t error_code, std::string_view reason) {
  if (!stats.reject_log.allow(monotonic_ms())) return;
  const auto* api = protocol::find_api(header.api_key);
  const auto level = error_code != 0 ? spdlog::level::info : spdlog::level::warn;
  spdlog::log(level, "event=request_rejected {} {} {} {} {} {} {} {} {} dropped_lines={}",
              log::kv("client", fmt::format("{}:{}", client.host, client.port)),
              log::kv("connection", client.connection_id), log::kv("client_id", header.client_id.value_or("")),
              log::kv("api", api != nullptr ? api->name : std::string_view("unknown")),
              log::kv("api_key", header.api_key), log::kv("api_version", header.api_version),
              log::kv("correlation_id", header.correlation_id),
              log::kv("error", error_code != 0 ? protocol::error_name(error_code) : std::string_view("none")),
              log::kv("reason", reason), stats.reject_log.take_dropped());
}

// Counts every non-zero error code of a response (per code, and whether it is the request's own
// or an entry's); returns the request-level one, 0 if none.
template <class Response>
std::int16_t count_errors(RequestStats& stats, std::int16_t key, const Response& resp) {
  std::int16_t request_error = 0;
  bool any = false;
  resp.for_each_error_code([&](std::int16_t error_code, int depth) {
    any = true;
    stats.count_error(key, error_code, depth == 0);
    if (depth == 0 && request_error == 0) request_error = error_code;
  });
  if (any) stats.apis[static_cast<std::size_t>(key)].error_responses.inc();
  return request_error;
}

// The encoded answer of a handler declaring `catalog_answer` (a function of the catalog snapshot
// only) for the current snapshot at `version`: the one kept in the broker's AnswerCache, else
// built, counted, encoded and kept. The same bytes as encoding the response after its header.
template <class H>
std::shared_ptr<const EncodedAnswer> catalog_answer(Broker& broker, std::int16_t version) {
  const auto catalog = broker.catalog();
  if (auto kept = broker.answer_cache().find(catalog, version)) return kept;
  auto answer = std::make_shared<EncodedAnswer>();
  {
    const typename H::Response resp = H::catalog_answer(broker.node(), *catalog);
    resp.for_each_error_code(
        [&answer](std::int16_t error_code, int depth) { ++answer->errors[{error_code, depth == 0}]; });
    protocol::Writer w(answer->body);
    resp.encode(w, version);
  }
  broker.answer_cache().store(catalog, version, answer);
  return answer;
}

// A handler's answer built, counted and encoded on `pool` (Broker::large_answers), the response
// freed there too; the shard only applies the error counts and sends the bytes. The handler must
// not need the shard on this path: it reads the broker's immutable snapshots (the catalog).
template <class H>
asio::awaitable<net::Reply> answer_off_shard(asio::thread_pool& pool, RequestContext& ctx, typename H::Request& req,
                                             RequestStats& stats) {
  const std::int16_t key = H::Request::kApiKey;
  const std::int16_t version = ctx.version();
  struct Answer {
    net::Reply reply;
    // (error code, request level?) -> occurrences: the shard's counters are the shard's to write.
    std::map<std::pair<std::int16_t, bool>, std::uint64_t> errors;
  };
  RequestContext* context = &ctx;  // trivially destructible captures (see run_on in async.h)
  typename H::Request* request = &req;
  Answer answer = co_await asio::co_spawn(
      pool,
      [context, request, key, version]() -> asio::awaitable<Answer> {
        Answer out;
        if constexpr (requires { H::catalog_answer(context->broker.node(), *context->broker.catalog()); }) {
          // This request's own header, then the kept body as it is (not copied).
          auto encoded = catalog_answer<H>(context->broker, version);
          out.errors = encoded->errors;
          protocol::Writer w(out.reply.bytes);
          protocol::write_response_header(w, key, version, context->header.correlation_id);
          const std::vector<std::uint8_t>* body = &encoded->body;
          out.reply.shared_tail = std::shared_ptr<const std::vector<std::uint8_t>>(std::move(encoded), body);
          co_return out;
        }
        auto resp = co_await H::handle(*context, *request);
        if (!resp) {
          out.reply = net::Reply::none();
          co_return out;
        }
        resp->for_each_error_code(
            [&out](std::int16_t error_code, int depth) { ++out.errors[{error_code, depth == 0}]; });
        out.reply = encode_reply(key, version, context->header.correlation_id, *resp, version);
        co_return out;
      },
      asio::use_awaitable);
  std::int16_t request_error = 0;
  for (const auto& [error, occurrences] : answer.errors) {
    stats.count_error(key, error.first, error.second, occurrences);
    if (error.second && request_error == 0) request_error = error.first;
  }
  if (!answer.errors.empty()) stats.apis[static_cast<std::size_t>(key)].error_responses.inc();
  if (request_error != 0) log_rejected(stats, ctx.client, ctx.header, request_error, "error response");
  co_return std::move(answer.reply);
}

template <class H>
asio::awaitable<net::Reply> run_handler(Broker& broker, const net::ClientInfo& client,
                                        const protocol::RequestHeader& header, Body body) {
  const std::int16_t key = H::Request::kApiKey;
  const std::int16_t version = header.api_version;
  RequestStats& stats = broker.request_stats(client.shard);
  if (version < H::kMinVersion || version > H::kMaxVersion) {
    if constexpr (requires { H::unsupported_version_response(); }) {
      if (version > H::kMaxVersion) {
        auto resp = H::unsupported_version_response();
        const std::int16_t error = count_errors(stats, key, resp);
        log_rejected(stats, client, header, error, "unsupported version");
        co_return encode_reply(key, 0, header.correlation_id, resp, 0);
      }
    }
    stats.malformed[static_cast<std::size_t>(Malformed::kUnsupportedVersion)].inc();
    co_return net::Reply::close(
        fmt::format("unsupported version {} of api {} ({}..{} served)", version, key, H::kMinVersion, H::kMaxVersion));
  }
  typename H::Request req;
  // Bytes after the body are ignored, as Apache Kafka does (librdkafka's Metadata v13 request,
  // for one, carries three).
  protocol::Reader reader(body);
  req.decode(reader, version);
  if (!reader.ok()) {
    stats.malformed[static_cast<std::size_t>(Malformed::kBody)].inc();
    std::string head;
    for (std::size_t i = 0; i < body.size() && i < 32; ++i) head += fmt::format("{:02x}", body[i]);
    co_return net::Reply::close(
        fmt::format("malformed {} v{} request body ({} bytes: {})", H::Request::kName, version, body.size(), head));
  }
  RequestContext ctx{broker, client, header};
  if constexpr (requires { H::answer_off_shard(req, version); }) {
    if (auto* pool = broker.large_answers(); pool != nullptr && H::answer_off_shard(req, version)) {
      co_return co_await answer_off_shard<H>(*pool, ctx, req, stats);
    }
  }
  auto resp = co_await H::handle(ctx, req);
  if (!resp) co_return net::Reply::none();
  if (const std::int16_t error = count_errors(stats, key, *resp); error != 0) {
    log_rejected(stats, client, header, error, "error response");
  }
  co_return encode_reply(key, version, header.correlation_id, *resp, version);
}

constexpr std::array<HandlerFn, kMaxApiKey> make_table() {
  std::array<HandlerFn, kMaxApiKey> table{};
  std::apply([&]<class... H>(H...) { ((table[static_cast<std::size_t>(H::Request::kApiKey)] = &run_handler<H>), ...); },
             AllHandlers{});
  return table;
}

constexpr std::array<HandlerFn, kMaxApiKey> kHandlers = make_table();

// meta.properties in the data directory, as Kafka writes it: the cluster id and node id that
// the directory belongs to.
std::map<std::string, std::string> read_properties(const fs::path& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

}  // namespace

Broker::Broker(Config config, const Clock& clock, storage::FileSystem& fs)
    : config_(std::move(config)), clock_(clock), fs_(fs) {
  node_.node_id = config_.node_id;
  if (!config_.advertised_listeners.empty()) {
    node_.host = config_.advertised_listeners.front().host;
    node_.port = config_.advertised_listeners.front().port;
  }
  // Every value was parsed and validated once, at start-up (config::BrokerConfig::finalize).
  const config::ConfigValues& c = config_.typed();
  auto_create_topics_ = c.get_bool("auto.create.topics.enable");
  flush_on_acks_all_ = !config_.dev_mode && c.get_bool("flush.on.acks.all");
  topic_defaults_.num_partitions = c.get_int("num.partitions");
  // INT in Kafka; a replication factor is a SHORT on the wire (one node serves one replica anyway).
  topic_defaults_.replication_factor = static_cast<std::int16_t>(
      std::clamp<std::int32_t>(c.get_int("default.replication.factor"), std::numeric_limits<std::int16_t>::min(),
                               std::numeric_limits<std::int16_t>::max()));
  catalog_.store(std::make_shared<const Catalog>());
  group_config_.initial_rebalance_delay_ms = c.get_int("group.initial.rebalance.delay.ms");
  group_config_.min_session_timeout_ms = c.get_int("group.min.session.timeout.ms");
  group_config_.max_session_timeout_ms = c.get_int("group.max.session.timeout.ms");
  group_config_.max_size = c.get_int("group.max.size");
  group_config_.offset_metadata_max_bytes = c.get_int("offset.metadata.max.bytes");
  group_config_.consumer.session_timeout_ms = c.get_int("group.consumer.session.timeout.ms");
  group_config_.consumer.heartbeat_interval_ms = c.get_int("group.consumer.heartbeat.interval.ms");
  group_config_.consumer.max_size = c.get_int("group.consumer.max.size");
  group_config_.consumer.assignment_interval_ms = c.get_int("group.consumer.assignment.interval.ms");
  group_config_.consumer.regex_refresh_interval_ms = c.get_int("group.consumer.regex.refresh.interval.ms");
  // Names checked at start-up (server::check_group_assignors).
  group_config_.consumer.assignors = c.get_list("group.consumer.assignors");
  // The validator accepted it: one of the four names in any case.
  group_config_.consumer.migration_policy =
      group::parse_migration_policy(c.get_string("group.consumer.migration.policy")).value();
  // A group's own session timeout, heartbeat and assignment intervals (GROUP ConfigRecords), as
  // the catalog published last has them.
  group_config_.consumer.overrides = [this](const std::string& group_id) {
    const auto catalog = this->catalog();
    group::ConsumerGroupOverrides out;
    auto it = catalog->group_configs.find(group_id);
    if (it == catalog->group_configs.end()) return out;
    const metadata::BrokerConfigLayers layers{&catalog->dynamic_broker_configs,
                                              &catalog->dynamic_default_broker_configs,
                                              &controller_config_.static_broker_configs};
    const metadata::ConsumerGroupValues v = metadata::consumer_group_values(it->second, layers);
    out.session_timeout_ms = v.session_timeout_ms;
    out.heartbeat_interval_ms = v.heartbeat_interval_ms;
    out.assignment_interval_ms = v.assignment_interval_ms;
    return out;
  };
  cleaner_enabled_ = c.get_bool("log.cleaner.enable");
  cleaner_backoff_ms_ = std::max<std::int64_t>(1, c.get_long("log.cleaner.backoff.ms"));
  cleaner_io_bytes_per_second_ = c.get_double("log.cleaner.io.max.bytes.per.second");
  retention_check_interval_ms_ = c.get_long("log.retention.check.interval.ms");
  cleaner_config_.dedupe_buffer_bytes = c.get_long("log.cleaner.dedupe.buffer.size");
  cleaner_config_.dedupe_buffer_load_factor = c.get_double("log.cleaner.io.buffer.load.factor");
  // At most 2^31-1 minutes: the product fits in 64 bits.
  group_config_.offsets_retention_ms = std::int64_t{c.get_int("offsets.retention.minutes")} * 60 * 1000;
  group_config_.offsets_retention_check_interval_ms = c.get_long("offsets.retention.check.interval.ms");
  producer_id_expiration_ms_ = c.get_int("producer.id.expiration.ms");
  transaction_partition_verification_enable_ = c.get_bool("transaction.partition.verification.enable");
  flush_scheduler_interval_ms_ = std::max<std::int64_t>(1, c.get_long("log.flush.scheduler.interval.ms"));
  checkpoint_interval_ms_ = std::max<std::int64_t>(1, c.get_int("log.flush.offset.checkpoint.interval.ms"));
  start_offset_checkpoint_interval_ms_ =
      std::max<std::int64_t>(1, c.get_int("log.flush.start.offset.checkpoint.interval.ms"));
  producer_id_expiration_check_interval_ms_ = c.get_int("producer.id.expiration.check.interval.ms");
  replica_lag_ms_ = std::max<std::int64_t>(1, c.get_long("replica.lag.time.max.ms"));
  fetcher_options_.self = config_.node_id;
  fetcher_options_.wait_max_ms = std::max(0, c.get_int("replica.fetch.wait.max.ms"));
  fetcher_options_.min_bytes = c.get_int("replica.fetch.min.bytes");
  fetcher_options_.max_bytes = c.get_int("replica.fetch.response.max.bytes");
  fetcher_options_.partition_max_bytes = c.get_int("replica.fetch.max.bytes");
  fetcher_options_.backoff_ms = c.get_int("replica.fetch.backoff.ms");
  fetcher_options_.socket_timeout_ms = std::max(1, c.get_int("replica.socket.timeout.ms"));
  fetcher_options_.durable = flush_on_acks_all_;
  fetcher_options_.rack = c.get_string("broker.rack");
  rack_aware_selector_ = !c.is_null("replica.selector.class");  // the one class it may name
  leader_quota_ = std::make_unique<ReplicationQuota>(c.get_int("replication.quota.window.num"),
                                                     c.get_int("replication.quota.window.size.seconds"));
  follower_quota_ = std::make_unique<ReplicationQuota>(c.get_int("replication.quota.window.num"),
                                                       c.get_int("replication.quota.window.size.seconds"));
  fetcher_options_.quota = follower_quota_.get();
  fetch_sessions_ = std::make_unique<FetchSessionCache>(FetchSessionConfig{
      .cache_slots = config_.fetch_session_cache_slots,
      .max_cached_partitions = config_.fetch_session_cache_max_partitions,
  });
}

Broker::~Broker() = default;

void Broker::attach(std::vector<asio::any_io_executor> executors) {
  shards_ = std::make_unique<ShardSet>(std::move(executors));
  partitions_ = std::make_unique<PartitionService>(*shards_);
  groups_ = std::make_unique<GroupService>(*this);
  txns_ = std::make_unique<TxnService>(*this);
  partitions_->set_verifier(&txns_->verifier());
  partitions_->set_catalog([this] { return catalog(); });
  partitions_->set_leader_quota(leader_quota_.get());
  compressed_batches_ = std::make_unique<CompressedBatches>(
      shards_->count(), static_cast<std::size_t>(config_.decompression_threads), decompression_limits());
  compressed_batches_->start();
  large_answers_ = std::make_unique<asio::thread_pool>(1);
  checkpoint_writer_ = std::make_unique<asio::thread_pool>(1);
  // Below the shards: on a machine with as many cores as shards its encoding and writing would
  // otherwise take turns with a shard's requests (the kernel's slices are milliseconds long).
  asio::post(*checkpoint_writer_, [] { (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19); });
  group_hosts_.resize(shards_->count());
  fetchers_.resize(shards_->count());
  peers_.resize(shards_->count());
  request_stats_.clear();
  for (std::size_t i = 0; i < shards_->count(); ++i) request_stats_.push_back(std::make_unique<RequestStats>());
}

bool Broker::is_valid_topic_name(const std::string& name) const {
  return !metadata::topic_name_error(name).has_value();
}

storage::LogConfig Broker::log_config_for(std::string_view topic) const {
  storage::LogConfig lc;
  lc.decompression = decompression_limits();
  if (!controller_) return lc;
  auto tc = controller_->topic_config(topic);
  if (!tc) return lc;
  lc.segment_bytes = tc->segment_bytes;
  lc.segment_ms = tc->segment_ms;
  lc.index_interval_bytes = tc->index_interval_bytes;
  lc.segment_index_bytes = tc->segment_index_bytes;
  lc.retention_ms = tc->retention_ms;
  lc.retention_bytes = tc->retention_bytes;
  lc.max_message_bytes = tc->max_message_bytes;
  lc.log_append_time = tc->message_timestamp_log_append_time;
  lc.timestamp_before_max_ms = tc->message_timestamp_before_max_ms;
  lc.timestamp_after_max_ms = tc->message_timestamp_after_max_ms;
  lc.file_delete_delay_ms = tc->file_delete_delay_ms;
  lc.cleanup_delete = tc->cleanup_delete;
  lc.cleanup_compact = tc->cleanup_compact;
  lc.delete_retention_ms = tc->delete_retention_ms;
  lc.min_compaction_lag_ms = tc->min_compaction_lag_ms;
  lc.max_compaction_lag_ms = tc->max_compaction_lag_ms;
  lc.min_cleanable_dirty_ratio = tc->min_cleanable_dirty_ratio;
  lc.flush_messages = tc->flush_messages;
  lc.flush_ms = tc->flush_ms;
  lc.min_insync_replicas = tc->min_insync_replicas;
  return lc;
}

std::string Broker::start() {
  WEIR_ASSERT(shards_ != nullptr, "attach() before start()");
  std::error_code ec;
  fs::create_directories(config_.log_dir, ec);
  if (ec) return "cannot create log dir " + config_.log_dir + ": " + ec.message();
  const fs::path meta = fs::path(config_.log_dir) / "meta.properties";
  auto props = read_properties(meta);
  if (config_.broker_only && !props.contains("cluster.id")) {
    // As Kafka: a broker of a cluster starts only from a formatted directory (the cluster id is
    // the quorum's).
    return "No readable meta.properties files found in " + config_.log_dir +
           " (format it first: weir format -t <cluster id> -c <server.properties>, or kafka-storage format)";
  }
  if (props.contains("directory.id")) {
    if (auto id = Uuid::from_string(props["directory.id"])) node_.directory_id = *id;
  }
  if (props.contains("cluster.id")) {
    node_.cluster_id = props["cluster.id"];
    if (props.contains("node.id") && props["node.id"] != std::to_string(node_.node_id)) {
      return "log dir " + config_.log_dir + " belongs to node " + props["node.id"] + ", not " +
             std::to_string(node_.node_id);
    }
  } else {
    node_.cluster_id = Uuid::random().to_string();
    node_.directory_id = Uuid::random();
    const fs::path tmp = fs::path(config_.log_dir) / "meta.properties.tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << "#\n#weir\nnode.id=" << node_.node_id << "\ndirectory.id=" << node_.directory_id.to_string()
          << "\nversion=1\ncluster.id=" << node_.cluster_id << "\n";
      if (!out) return "cannot write " + tmp.string();
    }
    fs::rename(tmp, meta, ec);
    if (ec) return "cannot write " + meta.string() + ": " + ec.message();
  }

  metadata::ControllerConfig cc;
  cc.node_id = node_.node_id;
  for (const auto& [k, v] : config_.values()) cc.static_broker_configs[k] = v;
  controller_config_ = cc;
  if (config_.broker_only) return start_broker_only();

  // Metadata: replay the log into the controller's image; a fresh log gets its bootstrap records.
  metadata::MetadataImage image;
  auto mlog_file = MetadataLogFile::open(fs_, fs::path(config_.log_dir));
  if (!mlog_file) return fmt::format("cannot open the metadata log: {}", mlog_file.error());
  auto mlog = metadata::MetadataLog::open(std::move(*mlog_file), image, metadata::MetadataLog::Options{});
  if (!mlog) return fmt::format("cannot open the metadata log: {}", mlog.error());
  metadata_log_.emplace(std::move(*mlog));
  controller_ = std::make_unique<metadata::Controller>(cc, std::move(image));
  std::vector<metadata::MetadataRecord> boot;
  if (metadata_log_->next_offset() == 0) boot = controller_->bootstrap_records({});
  metadata::BrokerInfo info;
  info.broker_id = node_.node_id;
  info.broker_epoch = metadata_log_->next_offset() + static_cast<std::int64_t>(boot.size());
  info.incarnation_id = Uuid::random();
  for (const auto& l : config_.advertised_listeners) {
    info.endpoints.push_back(metadata::BrokerInfo::Endpoint{
        l.name, l.host, static_cast<std::uint16_t>(node_.port ? node_.port : l.port), 0});
  }
  for (auto& r : controller_->register_broker(info)) boot.push_back(std::move(r));
  broker_epoch_ = info.broker_epoch;
  if (auto ok = commit(boot); !ok) return ok.error();

  // Partition logs: open what is on disk, create what the metadata names but the disk lacks
  // (a crash between the two), remove what the metadata no longer names (deleted topics).
  const auto opening = std::chrono::steady_clock::now();
  if (auto error = open_log_dir(); !error.empty()) return error;
  const auto& img = controller_->image();
  std::vector<std::unique_ptr<Partition>> loaded;
  for (const auto& [name, id] : img.topic_ids_by_name()) {
    std::string error;
    auto parts = create_logs(name, &error);
    if (!error.empty()) return error;
    for (auto& np : parts) {
      loaded.push_back(std::make_unique<Partition>(np.topic, np.topic_id, np.index, np.leader_epoch, np.log));
    }
  }
  // Each partition's producer state comes from its own files: as many threads as the logs' loading.
  storage::parallel_for(loaded.size(), log_load_threads(config_), [&](std::size_t i) {
    loaded[i]->load_producer_state(producer_id_expiration_ms_.load());
  });
  for (auto& part : loaded) {
    const std::int32_t index = part->index();
    shards_->table(shards_->owner(part->topic(), index)).add(std::move(part));
  }
  for (const auto& tp : logs_->partitions()) {
    const auto* t = img.topic(tp.topic);
    if (t == nullptr || tp.partition >= static_cast<std::int32_t>(t->partitions.size())) {
      spdlog::info("removing partition of a deleted topic partition={}-{}", tp.topic, tp.partition);
      if (auto r = logs_->remove(tp); !r) spdlog::warn("cannot remove {}-{}: {}", tp.topic, tp.partition, r.error());
    }
  }
  publish(build_catalog());
  start_maintenance();
  spdlog::info(
      "event=partitions_hosted partitions={} ms={}", logs_->partitions().size(),
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - opening).count());

  // Group coordinators: every __consumer_offsets partition is loaded now (not on first use), so
  // restored members' sessions start expiring at once, as after a Kafka coordinator load.
  if (const auto* t = img.topic(std::string(kOffsetsTopic))) {
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(t->partitions.size()); ++i) {
      group_host(shards_->owner(kOffsetsTopic, i), i);
    }
  }
  txns_->start();
  return {};
}

std::string Broker::open_log_dir() {
  storage::LogManagerOptions lo;
  lo.config_for = [this](std::string_view topic) { return log_config_for(topic); };
  lo.cleaner = cleaner_config_;
  lo.load_threads = log_load_threads(config_);
  // A single node stays up on a failing or full disk, answering KAFKA_STORAGE_ERROR (no other
  // replica could take over); a broker in a cluster halts.
  if (config_.broker_only) {
    lo.on_disk_failure = [dir = config_.log_dir](const storage::IoFailure& f) { halt_on_log_dir_failure(dir, f); };
  }
  auto lm = storage::LogManager::open(fs_, fs::path(config_.log_dir), clock_, lo);
  if (!lm) return fmt::format("cannot open log dir {}: {}", config_.log_dir, lm.error());
  logs_ = std::move(*lm);
  node_.previous_broker_epoch = logs_->clean_shutdown_broker_epoch();
  // Files and directories alike are synced through the logs' cache, so that a failed sync reaches
  // its disk-failure observer (a broker of a cluster halts on it).
  log_files_ = logs_->file_cache();
  storage::Flusher::Options flush_options;
  flush_options.observe = [this](std::int64_t queued_us, std::int64_t cycle_us) {
    flush_queue_us_.observe(static_cast<std::uint64_t>(std::max<std::int64_t>(queued_us, 0)));
    flush_cycle_us_.observe(static_cast<std::uint64_t>(std::max<std::int64_t>(cycle_us, 0)));
  };
  // Every file the flusher syncs is a partition's, in the log dir.
  flush_options.syncfs_dirs = {fs::path(config_.log_dir)};
  flusher_ = std::make_unique<storage::Flusher>(*log_files_, std::move(flush_options));
  flusher_->start();
  partitions_->start(*flusher_, flush_on_acks_all_);
  partitions_->set_verification_enabled(transaction_partition_verification_enable_);
  partitions_->set_rack_aware_selector(rack_aware_selector_);
  return {};
}

void Broker::start_maintenance() {
  for (std::size_t s = 0; s < shards_->count(); ++s) {
    asio::co_spawn(shards_->executor(s), maintain(s), asio::detached);
  }
  asio::co_spawn(shards_->controller(), write_checkpoints_periodically(), asio::detached);
}

std::string Broker::start_broker_only() {
  // The metadata comes from the controller quorum: the image starts empty and fills as the
  // quorum's committed records arrive (start_quorum()). Logs on disk are opened now and hosted
  // once the metadata names this node as one of their replicas.
  if (!quorum_) return "process.roles=broker needs a controller quorum link";
  controller_ = std::make_unique<metadata::Controller>(controller_config_, metadata::MetadataImage{});
  partitions_->set_isr_sender(
      [this](IsrChange c) { asio::co_spawn(shards_->controller(), send_isr_change(std::move(c)), asio::detached); });
  if (auto error = open_log_dir(); !error.empty()) return error;
  publish(build_catalog());
  start_maintenance();
  for (std::size_t s = 0; s < shards_->count(); ++s) asio::co_spawn(shards_->executor(s), check_isr(s), asio::detached);
  txns_->start();
  return {};
}

void Broker::start_quorum() {
  if (!quorum_) return;
  asio::post(shards_->controller(), [this]() {
    quorum_->start([this](MetadataUpdate u) -> asio::awaitable<void> { return apply_metadata(std::move(u)); },
                   [this]() { return metadata_offset_.load(); });
  });
}

asio::awaitable<void> Broker::apply_metadata(MetadataUpdate update) {
  // On the controller executor, one update at a time (the link awaits each).
  // Images outside a metadata transaction only (KIP-868: a Begin..End run applies as one).
  const metadata::MetadataImage before = controller_->image().committed();  // a cheap, shared copy
  // The controller writes a NoOpRecord every metadata.max.idle.interval.ms: nothing to act on.
  const bool idle = !update.snapshot && std::ranges::all_of(update.records, [](const metadata::MetadataRecord& r) {
    return std::holds_alternative<metadata::NoOpRecord>(r);
  });
  if (idle) {
    metadata_offset_.store(update.last_offset);
    co_return;
  }
  if (update.snapshot)
    controller_ = std::make_unique<metadata::Controller>(controller_config_, metadata::MetadataImage{});
  std::set<std::string> configs_changed;
  bool broker_configs_changed = false;
  for (const auto& r : update.records) {
    if (auto ok = controller_->replay(r); !ok) {
      // As Kafka's metadata loader: a record that does not apply is a fault, logged, and the
      // rest of the log still applies.
      spdlog::error("event=metadata_replay_failed record={} offset_end={} error=\"{}\"", metadata::record_name(r),
                    update.last_offset, ok.error());
    }
    if (const auto* cr = std::get_if<metadata::ConfigRecord>(&r)) {
      if (cr->resource_type == metadata::kConfigResourceTopic) {
        configs_changed.insert(cr->resource_name);
      } else if (cr->resource_type == metadata::kConfigResourceBroker &&
                 (cr->resource_name.empty() || cr->resource_name == std::to_string(node_.node_id))) {
        broker_configs_changed = true;  // topic defaults (log.retention.ms, ...) may have moved
      }
    }
  }
  const auto& after = controller_->image().committed();
  if (broker_configs_changed) {
    for (const auto& [name, id] : after.topic_ids_by_name()) configs_changed.insert(name);
  }
  const std::int32_t me = node_.node_id;
  auto hosts = [me](const metadata::PartitionImage& p) {
    return std::ranges::find(p.replicas, me) != p.replicas.end();
  };

  // The first image this broker acts on (the quorum's state once caught up): logs on disk that it
  // does not assign here are stray (their topic was deleted or moved while the broker was down).
  // As Kafka 4.3.1, they are kept and reported, never hosted; a topic created again under the
  // name replaces them (the stale-replica case below).
  if (before.topic_ids_by_name().empty()) {
    for (const auto& tp : logs_->partitions()) {
      const auto* t = after.topic(tp.topic);
      const auto id = logs_->topic_id(tp);
      const bool assigned = t != nullptr && (!id || *id == t->id) &&
                            tp.partition < static_cast<std::int32_t>(t->partitions.size()) &&
                            hosts(t->partitions[static_cast<std::size_t>(tp.partition)]);
      if (!assigned)
        spdlog::warn("event=stray_replica partition={}-{} (not assigned to this broker)", tp.topic, tp.partition);
    }
  }
  // Replicas to drop: topics gone (or recreated under a new id) and partitions moved away.
  std::vector<std::pair<std::string, std::int32_t>> removed;
  for (const auto& [name, id] : before.topic_ids_by_name()) {
    const auto* old_topic = before.topic(id);
    const auto* new_topic = after.topic(id);
    for (const auto& p : old_topic->partitions) {
      if (!hosts(p)) continue;
      const bool kept = new_topic != nullptr &&
                        p.partition_id < static_cast<std::int32_t>(new_topic->partitions.size()) &&
                        hosts(new_topic->partitions[static_cast<std::size_t>(p.partition_id)]);
      if (!kept) removed.emplace_back(name, p.partition_id);
    }
  }
  // Removed first: a topic deleted and created again under its name gets new logs.
  if (!removed.empty()) co_await remove_partitions(std::move(removed));
  // Replicas to host: the image names this node and the partition is not hosted yet (also the
  // partitions whose logs were on disk before the first update).
  std::vector<NewPartition> created;
  for (const auto& [name, id] : after.topic_ids_by_name()) {
    const auto* t = after.topic(id);
    const auto* old_topic = before.topic(id);
    bool any = false;
    for (const auto& p : t->partitions) {
      const bool was = old_topic != nullptr &&
                       p.partition_id < static_cast<std::int32_t>(old_topic->partitions.size()) &&
                       hosts(old_topic->partitions[static_cast<std::size_t>(p.partition_id)]);
      if (hosts(p) && (!was || update.snapshot)) any = true;
    }
    if (!any) continue;
    configs_changed.erase(name);  // created with the current configs
    const auto lc = log_config_for(name);
    std::vector<std::pair<std::string, std::int32_t>> stale;  // logs on disk of an older topic of this name
    for (const auto& p : t->partitions) {
      const storage::TopicPartition tp{name, p.partition_id};
      if (hosts(p) && logs_->get(tp) != nullptr && logs_->topic_id(tp) && *logs_->topic_id(tp) != t->id) {
        spdlog::info("event=stale_replica partition={}-{} topic_id_on_disk={} topic_id={}", name, p.partition_id,
                     *logs_->topic_id(tp), t->id);
        stale.emplace_back(name, p.partition_id);
      }
    }
    if (!stale.empty()) co_await remove_partitions(std::move(stale));
    for (const auto& p : t->partitions) {
      if (!hosts(p)) continue;
      auto log = logs_->create(storage::TopicPartition{name, p.partition_id}, t->id, lc);
      if (!log) {
        spdlog::error("event=replica_create_failed partition={}-{} error=\"{}\"", name, p.partition_id, log.error());
        continue;
      }
      created.push_back(NewPartition{name, t->id, p.partition_id, p.leader_epoch, *log});
    }
  }
  Applied applied;
  applied.new_partitions = std::move(created);
  applied.catalog = build_catalog();
  for (const auto& topic : configs_changed) {
    if (after.topic(topic) != nullptr) applied.configs.emplace_back(topic, log_config_for(topic));
  }
  co_await after_apply(std::move(applied));
  co_await update_leadership();
  metadata_offset_.store(update.last_offset);
}

asio::awaitable<void> Broker::update_leadership() {
  auto catalog = this->catalog();
  const std::int32_t me = node_.node_id;
  if (quorum_) registered_epoch_.store(quorum_->broker_epoch());
  std::vector<std::int32_t> eligible;
  for (const auto& b : catalog->brokers) eligible.push_back(b.id);
  FanOut<bool> fan;
  for (std::size_t shard = 0; shard < shards_->count(); ++shard) {
    fan.add(shards_->executor(shard), [this, shard, catalog, me, eligible]() {
      std::vector<std::int32_t> offsets_led;
      shards_->table(shard).for_each([&](Partition& p) {
        const TopicInfo* t = catalog->find(p.topic());
        if (t == nullptr || p.index() >= t->partitions) return;
        const PartitionInfo& info = t->parts[static_cast<std::size_t>(p.index())];
        const bool leader = info.leader == me;
        p.set_replication_options(replica_lag_ms_, flush_on_acks_all_);
        const Partition::RoleChange change = p.apply_leadership(
            Leadership{me, info.leader, info.leader_epoch, info.partition_epoch, info.replicas, info.isr, eligible});
        if (change == Partition::RoleChange::kBecameLeader || change == Partition::RoleChange::kBecameFollower) {
          spdlog::info("event=leadership_changed partition={}-{} leader={} epoch={} isr={}", p.topic(), p.index(),
                       info.leader, info.leader_epoch, fmt::join(info.isr, ","));
        }
        follow(shard, p, leader ? -1 : info.leader, *catalog);
        if (p.topic() == kTransactionStateTopic) txns_->leadership_changed(shard, p.index(), leader);
        if (p.topic() == kOffsetsTopic) {
          if (leader)
            offsets_led.push_back(p.index());
          else if (auto it = group_hosts_[shard].find(p.index()); it != group_hosts_[shard].end()) {
            // The group coordinator leaves with the leadership of its partition.
            it->second->fail_held();
            group_hosts_[shard].erase(it);
          }
        }
      });
      // Fetchers left with nothing to follow stop; the others learn where their leader is now.
      for (auto it = fetchers_[shard].begin(); it != fetchers_[shard].end();) {
        if (it->second->empty()) {
          it->second->stop();
          it = fetchers_[shard].erase(it);
          continue;
        }
        if (const BrokerEndpoint* b = catalog->replication_endpoint(it->first))
          it->second->set_endpoint(b->host, b->port);
        ++it;
      }
      // ... and arrives with it: loaded now, so restored members' sessions start expiring.
      for (std::int32_t index : offsets_led) group_host(shard, index);
      return true;
    });
  }
  co_await fan.run();
}

asio::awaitable<void> Broker::stop_replication() {
  FanOut<bool> fan;
  for (std::size_t shard = 0; shard < shards_->count(); ++shard) {
    fan.add(shards_->executor(shard), [this, shard]() {
      for (auto& [id, f] : fetchers_[shard]) f->stop();
      fetchers_[shard].clear();
      peers_[shard].clear();  // closes the transaction protocol's connections
      return true;
    });
  }
  co_await fan.run();
}

PeerChannel* Broker::peer(std::size_t shard, std::int32_t node_id) {
  if (!peer_channels_ || shard >= peers_.size()) return nullptr;
  const auto catalog = this->catalog();
  const BrokerEndpoint* e = catalog->replication_endpoint(node_id);
  auto& peers = peers_[shard];
  if (e == nullptr) {
    peers.erase(node_id);
    return nullptr;
  }
  Peer& peer = peers[node_id];
  if (!peer.channel || peer.host != e->host || peer.port != e->port) {
    if (peer.channel) peer.channel->close();
    peer.host = e->host;
    peer.port = e->port;
    peer.channel = peer_channels_(shards_->executor(shard), node_id, e->host, e->port);
  }
  return peer.channel.get();
}

void Broker::follow(std::size_t shard, Partition& p, std::int32_t leader, const Catalog& catalog) {
  const PartitionRef ref{p.topic(), p.index()};
  auto& mine = fetchers_[shard];
  for (auto& [id, f] : mine) {
    if (id != leader && f->follows(ref)) f->remove(ref);
  }
  if (leader < 0 || !replica_channels_) return;
  auto it = mine.find(leader);
  if (it == mine.end()) {
    auto fetcher =
        std::make_shared<ReplicaFetcher>(shards_->executor(shard), shard, *partitions_, leader, fetcher_options_,
                                         replica_channels_, [this]() { return registered_epoch_.load(); });
    if (const BrokerEndpoint* b = catalog.replication_endpoint(leader)) fetcher->set_endpoint(b->host, b->port);
    fetcher->start();
    it = mine.emplace(leader, std::move(fetcher)).first;
  }
  it->second->add(ref, p.topic_id(), p.leader_epoch());
}

asio::awaitable<void> Broker::check_isr(std::size_t shard) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    timer.expires_after(std::chrono::milliseconds(std::max<std::int64_t>(1, replica_lag_ms_ / 2)));
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    shards_->table(shard).for_each([&](Partition& p) {
      if (!p.replicated() || !p.is_leader()) return;
      partitions_->propose_isr_change(p, p.maybe_shrink_isr());
    });
  }
}

asio::awaitable<void> Broker::send_isr_change(IsrChange change) {
  protocol::AlterPartitionRequest req;
  req.broker_id = node_.node_id;
  req.broker_epoch = quorum_->broker_epoch();
  auto& t = req.topics.emplace_back();
  t.topic_id = change.topic_id;
  auto& pd = t.partitions.emplace_back();
  pd.partition_index = change.ref.partition;
  pd.leader_epoch = change.proposal.leader_epoch;
  pd.partition_epoch = change.proposal.partition_epoch;
  pd.leader_recovery_state = 0;
  for (const IsrMember& m : change.proposal.new_isr) {
    pd.new_isr.push_back(m.broker_id);
    auto& state = pd.new_isr_with_epochs.emplace_back();
    state.broker_id = m.broker_id;
    state.broker_epoch = m.broker_id == node_.node_id ? req.broker_epoch : m.broker_epoch;
  }
  auto resp = co_await quorum_->alter_partition(req);
  std::int16_t error = 0;
  std::vector<std::int32_t> isr;
  std::int32_t partition_epoch = -1;
  if (!resp) {
    error = resp.error().code;
  } else if (resp->error_code != 0) {
    error = resp->error_code;
  } else if (resp->topics.empty() || resp->topics[0].partitions.empty()) {
    error = code(ErrorCode::kUnknownServerError);
  } else {
    const auto& answered = resp->topics[0].partitions[0];
    error = answered.error_code;
    isr = answered.isr;
    partition_epoch = answered.partition_epoch;
  }
  spdlog::info("event=isr_change_answered partition={}-{} error={} isr={} partition_epoch={}", change.ref.topic,
               change.ref.partition, error, fmt::join(isr, ","), partition_epoch);
  partitions_->isr_change_answered(change.ref, change.proposal.leader_epoch, error, std::move(isr), partition_epoch);
}

asio::awaitable<void> Broker::remove_partitions(std::vector<std::pair<std::string, std::int32_t>> parts) {
  FanOut<bool> detach;
  for (const auto& [topic, index] : parts) {
    const std::size_t shard = shards_->owner(topic, index);
    detach.add(shards_->executor(shard), [this, shard, topic, index]() {
      for (auto& [id, f] : fetchers_[shard]) f->remove(PartitionRef{topic, index});
      if (topic == kOffsetsTopic) {
        auto& hosts = group_hosts_[shard];
        if (auto it = hosts.find(index); it != hosts.end()) {
          it->second->fail_held();
          hosts.erase(it);
        }
      }
      return shards_->table(shard).remove(topic, index);
    });
  }
  co_await detach.run();
  auto remove_logs = [this, parts = &parts]() {
    for (const auto& [topic, index] : *parts) {
      spdlog::info("event=replica_removed partition={}-{}", topic, index);
      if (auto r = logs_->remove(storage::TopicPartition{topic, index}); !r && r.error() != storage::Errc::kNotFound) {
        spdlog::warn("cannot remove partition={}-{} error=\"{}\"", topic, index, r.error());
      }
    }
    return true;
  };
  co_await run_on(shards_->controller(), std::move(remove_logs));
}

asio::awaitable<void> Broker::maintain(std::size_t shard) {
  // Kafka's cleaner reads and writes a segment at a time between throttle checks; a call here
  // does about this much I/O before yielding the shard to requests.
  constexpr std::int64_t kCleanStepBytes = 8 << 20;
  const std::int64_t tick_ms =
      std::min({cleaner_backoff_ms_, retention_check_interval_ms_, producer_id_expiration_check_interval_ms_});
  storage::LogCleaner cleaner(cleaner_config_);
  // log.cleaner.io.max.bytes.per.second, rebuilt when a dynamic config changes it.
  std::optional<storage::IoThrottle> throttle;
  double throttle_rate = -1;
  const auto refresh_throttle = [&]() {
    const double rate = cleaner_io_bytes_per_second_.load();
    if (rate == throttle_rate) return;
    throttle_rate = rate;
    throttle.reset();
    if (rate > 0 && rate < 1e18) {
      throttle.emplace(rate, std::max<std::int64_t>(kCleanStepBytes, static_cast<std::int64_t>(rate)));
    }
  };
  refresh_throttle();
  // Rolled segments and flush.ms are checked this often (Kafka: log.flush.scheduler.interval.ms;
  // weir also checks at least every second, so a topic's flush.ms works without that key).
  const std::int64_t flush_check_ms = std::min<std::int64_t>(1000, flush_scheduler_interval_ms_);
  std::int64_t next_cleaner_ms = clock_.wall_ms() + tick_ms;
  std::int64_t next_retention_ms = clock_.wall_ms() + retention_check_interval_ms_;
  std::int64_t next_producer_expiration_ms = clock_.wall_ms() + producer_id_expiration_check_interval_ms_;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  auto pause = [&](std::int64_t ms) -> asio::awaitable<void> {
    timer.expires_after(std::chrono::milliseconds(ms));
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  };
  for (;;) {
    co_await pause(std::min(tick_ms, flush_check_ms));
    co_await flush_due_logs(shard);
    const std::int64_t now = clock_.wall_ms();
    if (now < next_cleaner_ms) continue;
    next_cleaner_ms = now + tick_ms;
    if (now >= next_retention_ms) {
      next_retention_ms = now + retention_check_interval_ms_;
      int deleted = 0;
      const std::function<void(Partition&)> retain = [&](Partition& p) { deleted += p.log().apply_retention(now); };
      co_await walk_partitions(shard, retain);
      if (deleted > 0) spdlog::info("retention deleted segments={} shard={}", deleted, shard);
    }
    if (now >= next_producer_expiration_ms) {  // producer.id.expiration.ms
      next_producer_expiration_ms = now + producer_id_expiration_check_interval_ms_;
      const std::int64_t expiration_ms = producer_id_expiration_ms_.load();
      const std::function<void(Partition&)> expire = [&](Partition& p) {
        p.set_producer_id_expiration_ms(expiration_ms);
        p.expire_producers(now);
      };
      co_await walk_partitions(shard, expire);
    }
    if (!cleaner_enabled_) continue;
    refresh_throttle();
    // The dirtiest compacted partition of this shard, cleaned to the end of its round.
    std::string topic;
    std::int32_t index = -1;
    double dirtiest = -1;
    shards_->table(shard).for_each_compacted([&](Partition& p) {
      auto& log = p.log();
      if (log.failed()) return;
      auto info = storage::LogCleaner::examine(log, now);
      if (!info || !info->needs_cleaning) return;
      if (info->dirty_ratio > dirtiest) {
        dirtiest = info->dirty_ratio;
        topic = p.topic();
        index = p.index();
      }
    });
    for (int step = 0; index >= 0; ++step) {
      Partition* p = shards_->table(shard).find(topic, index);
      if (p == nullptr) break;
      std::int64_t budget = kCleanStepBytes;
      if (throttle) {
        const std::int64_t mono =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
                .count();
        budget = std::min(budget, throttle->available(mono));
        if (budget <= 0) {
          co_await pause(std::max<std::int64_t>(1, throttle->wait_ms(mono, kCleanStepBytes)));
          continue;
        }
      }
      auto result = cleaner.clean(p->log(), clock_.wall_ms(), budget);
      if (!result) {
        spdlog::error("log cleaning failed partition={}-{} error={}", topic, index, storage::to_string(result.error()));
        break;
      }
      if (throttle) throttle->consume(result->stats.io_bytes());
      if (result->state != storage::CleanState::kInProgress) {
        if (result->state == storage::CleanState::kCompleted) {
          spdlog::info("log cleaned partition={}-{} checkpoint={}", topic, index, result->checkpoint.value_or(-1));
        }
        break;
      }
      co_await pause(0);  // let requests in between steps
    }
  }
}

asio::awaitable<void> Broker::walk_partitions(std::size_t shard, const std::function<void(Partition&)>& f) {
  // About a millisecond of it at a time, then as long a pause: at 100,000 partitions a walk in
  // one piece held each shard for 50-450 ms (retention, whose first check after a start reads
  // each segment's last time index entry, and producer expiry). The pause leaves the core to the
  // shard's requests and to other processes: with every shard walking at once and no pause, the
  // shards took all the cores and a client's produce waited ~5 ms for one (2 cores, 2 shards).
  // The table may change during a pause, so the topic is looked up again after each.
  constexpr auto kSlice = std::chrono::microseconds(1000);
  asio::steady_timer pause(co_await asio::this_coro::executor);
  auto slice_start = std::chrono::steady_clock::now();
  const PartitionTable& table = shards_->table(shard);
  for (const std::string& topic : table.topic_names()) {
    const auto* parts = table.partitions_of(topic);
    for (std::size_t i = 0; parts != nullptr && i < parts->size(); ++i) {
      Partition* p = (*parts)[i].get();
      if (p == nullptr) continue;
      f(*p);
      const auto worked = std::chrono::steady_clock::now() - slice_start;
      if (worked < kSlice) continue;
      pause.expires_after(worked);
      boost::system::error_code ec;
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      slice_start = std::chrono::steady_clock::now();
      parts = table.partitions_of(topic);
    }
  }
}

asio::awaitable<void> Broker::flush_due_logs(std::size_t shard) {
  // As Kafka: a rolled segment is flushed soon after the roll (the recovery point moves to the
  // new active segment, so a restart after a crash scans only from there), and a log whose last
  // flush is flush.ms old is flushed.
  // Only the partitions on the shard's flush watch (put there by their appends, when hosted and
  // when their config changed) can be due; one with a finite flush.ms and unflushed messages
  // that is not due yet stays on it.
  const std::int64_t now = clock_.now_ms();
  PartitionTable& table = shards_->table(shard);
  std::vector<PartitionRef> due;
  for (const FlushWatch::Entry& e : table.flush_watch().take()) {
    Partition* p = table.find(e.topic, e.index);
    if (p == nullptr || !p->take_flush_watch()) continue;
    const auto& log = p->log();
    if (log.failed() || log.unflushed_messages() <= 0) continue;
    const bool timed = log.config().flush_ms != std::numeric_limits<std::int64_t>::max();
    const bool rolled = log.recovery_point() < log.active_segment_base_offset();
    const bool stale = timed && now - log.last_flush_ms() >= log.config().flush_ms;
    if (rolled || stale) {
      due.push_back(PartitionRef{p->topic(), p->index()});
    } else if (timed) {
      p->watch_flush();
    }
  }
  if (due.empty()) co_return;
  if (const std::int16_t err = co_await partitions_->sync(due); err != 0) {
    spdlog::warn("periodic flush failed shard={} partitions={} error_code={}", shard, due.size(), err);
    // Tried again at the next check, as a walk over every partition would.
    for (const PartitionRef& ref : due) {
      if (Partition* p = table.find(ref.topic, ref.partition)) p->watch_flush();
    }
  }
}

asio::awaitable<void> Broker::write_checkpoints_periodically() {
  // log.flush.offset.checkpoint.interval.ms (recovery points, high watermarks) and
  // log.flush.start.offset.checkpoint.interval.ms (log start offsets): a restart after a crash
  // recovers from these instead of scanning every segment. The round runs from the controller
  // shard, where logs are created and removed; each log's shard reads its values, and the files
  // are written on the checkpoint thread (checkpoint_writer_).
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const std::int64_t interval = std::min(checkpoint_interval_ms_, start_offset_checkpoint_interval_ms_);
  for (;;) {
    timer.expires_after(std::chrono::milliseconds(interval));
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (!logs_) co_return;
    // Topics created or deleted while the shards are read could pair a name with another
    // incarnation's offsets: such a round is skipped (the catalog is republished on each).
    const std::uint64_t catalog_version = catalog()->version;
    // Each shard copies its partitions' values into a flat list, a slice at a time (at 100,000
    // partitions, building the files' sorted maps there held each shard for ~100 ms); the maps
    // are built, and the files encoded, written and synced, on the checkpoint thread.
    struct Row {
      storage::TopicPartition tp;
      std::int64_t recovery_point = 0;
      std::int64_t log_start = 0;
      std::int64_t high_watermark = 0;
      std::optional<std::int64_t> cleaner;
    };
    std::vector<std::vector<Row>> rows(shards_->count());
    for (std::size_t s = 0; s < shards_->count(); ++s) {
      std::vector<Row>* out = &rows[s];
      const std::function<void(Partition&)> copy = [out](Partition& p) {
        const auto& log = p.log();
        out->push_back(Row{storage::TopicPartition{p.topic(), p.index()}, log.recovery_point(), log.log_start_offset(),
                           log.high_watermark(), log.cleaner_checkpoint()});
      };
      co_await asio::co_spawn(shards_->executor(s), walk_partitions(s, copy), asio::use_awaitable);
    }
    if (!logs_) co_return;
    if (catalog()->version != catalog_version) continue;
    storage::LogManager* logs = logs_.get();
    std::vector<std::vector<Row>>* all = &rows;
    auto ok = co_await run_on(checkpoint_writer_->get_executor(), [logs, all]() {
      storage::LogManager::CheckpointValues values;
      for (auto& shard_rows : *all) {
        for (Row& r : shard_rows) {
          values.recovery_points.emplace(r.tp, r.recovery_point);
          values.log_starts.emplace(r.tp, r.log_start);
          values.high_watermarks.emplace(r.tp, r.high_watermark);
          if (r.cleaner) values.cleaner.emplace(std::move(r.tp), *r.cleaner);
        }
      }
      all->clear();
      return logs->write_checkpoints(std::move(values));
    });
    if (!ok) spdlog::warn("checkpoint write failed error=\"{}\"", storage::to_string(ok.error()));
  }
}

std::int32_t Broker::offsets_partitions() const {
  if (const TopicInfo* t = catalog()->find(std::string(kOffsetsTopic))) return t->partitions;
  return config_.typed().get_int("offsets.topic.num.partitions");
}

GroupHost* Broker::group_host(std::size_t shard, std::int32_t partition) {
  auto& hosts = group_hosts_[shard];
  if (auto it = hosts.find(partition); it != hosts.end()) return it->second.get();
  // Only the leader of the partition coordinates its groups (a follower answers NOT_COORDINATOR).
  const Partition* p = shards_->table(shard).find(kOffsetsTopic, partition);
  if (p == nullptr || !p->is_leader()) return nullptr;
  auto host = std::make_unique<GroupHost>(*this, shard, partition, shards_->executor(shard), group_config_, clock_);
  host->load();
  return hosts.emplace(partition, std::move(host)).first->second.get();
}

asio::awaitable<bool> Broker::ensure_offsets_topic() {
  if (topic_exists(std::string(kOffsetsTopic))) co_return true;
  protocol::CreateTopicsRequest req;
  req.timeout_ms = 30000;
  auto& t = req.topics.emplace_back();
  t.name = std::string(kOffsetsTopic);
  t.num_partitions = config_.typed().get_int("offsets.topic.num.partitions");
  // One node: one replica, whatever offsets.topic.replication.factor says.
  t.replication_factor = quorum_ ? config_.typed().get_short("offsets.topic.replication.factor") : std::int16_t{1};
  auto add = [&](std::string name, std::string value) {
    auto& c = t.configs.emplace_back();
    c.name = std::move(name);
    c.value = std::move(value);
  };
  add("cleanup.policy", "compact");
  add("compression.type", "producer");
  add("segment.bytes", std::to_string(config_.typed().get_int("offsets.topic.segment.bytes")));
  auto resp = co_await create_topics(req, 7);
  for (const auto& r : resp.topics) {
    if (r.error_code != 0 && r.error_code != code(ErrorCode::kTopicAlreadyExists)) {
      spdlog::error("cannot create {} error_code={} message=\"{}\"", kOffsetsTopic, r.error_code,
                    r.error_message.value_or(""));
      co_return false;
    }
  }
  co_return topic_exists(std::string(kOffsetsTopic));
}

void Broker::stop() {
  if (compressed_batches_) compressed_batches_->stop();
  if (large_answers_) {
    large_answers_->stop();
    large_answers_->join();
    large_answers_.reset();
  }
  if (checkpoint_writer_) {
    checkpoint_writer_->join();  // a periodic write in progress ends before the logs close
    checkpoint_writer_.reset();
  }
  // Coordinators hold timers on the executors and pointers into the logs: first to go.
  group_hosts_.clear();
  if (txns_) txns_->stop();
  if (logs_) {
    // The executors have stopped: every partition's producer state is snapshotted at its log end,
    // many partitions at once so that their fsyncs overlap (storage/parallel.h).
    std::vector<Partition*> parts;
    for (std::size_t s = 0; shards_ && s < shards_->count(); ++s) {
      shards_->table(s).for_each([&parts](Partition& p) { parts.push_back(&p); });
    }
    storage::parallel_for(parts.size(), storage::kParallelSyncThreads,
                          [&parts](std::size_t i) { parts[i]->snapshot_producer_state(); });
    if (auto r = logs_->close(registered_epoch_.load()); !r) {
      spdlog::error("log dir close failed error=\"{}\"", r.error());
    }
    logs_.reset();
  }
  if (partitions_) partitions_->stop();
  if (flusher_) flusher_->stop();
}

void Broker::set_bound_port(std::uint16_t port) {
  if (node_.port == 0) node_.port = port;
}

std::expected<void, std::string> Broker::commit(const std::vector<metadata::MetadataRecord>& records) {
  if (!records.empty()) {
    if (auto ok = metadata_log_->append(records, clock_.wall_ms()); !ok) {
      return std::unexpected(fmt::format("metadata log append failed: {}", ok.error()));
    }
    for (const auto& r : records) {
      if (auto ok = controller_->replay(r); !ok) {
        return std::unexpected(fmt::format("metadata replay failed: {}", ok.error()));
      }
    }
  }
  return {};
}

std::int16_t Broker::transaction_version() const {
  const auto c = catalog();
  const auto it = c->finalized_features.find(std::string(kTransactionVersionFeature));
  return it == c->finalized_features.end() ? std::int16_t{0} : it->second;
}

std::shared_ptr<const Catalog> Broker::build_catalog() const {
  auto c = std::make_shared<Catalog>();
  c->version = catalog_version_.fetch_add(1) + 1;
  const auto& img = controller_->image().committed();
  // Brokers: the registered, unfenced ones with an endpoint on this node's listener name.
  const std::string listener =
      config_.advertised_listeners.empty() ? std::string("PLAINTEXT") : config_.advertised_listeners.front().name;
  const config::ConfigValues& typed = config_.typed();
  const std::string inter_broker_listener = typed.is_null("inter.broker.listener.name")
                                                ? std::string("PLAINTEXT")
                                                : typed.get_string("inter.broker.listener.name");
  std::set<std::int32_t> alive;
  for (const auto& [id, reg] : img.brokers()) {
    if (reg.fenced) continue;
    alive.insert(id);
    for (const auto& e : reg.end_points) {
      if (e.name == inter_broker_listener)
        c->replication_endpoints.push_back(BrokerEndpoint{id, e.host, e.port, reg.rack});
      if (e.name != listener) continue;
      BrokerEndpoint b{id, e.host, e.port, reg.rack};
      if (id == node_.node_id && node_.port != 0 && !config_.broker_only) b.port = node_.port;
      c->brokers.push_back(std::move(b));
    }
  }
  // Kafka's brokers answer a random alive broker as the controller; weir answers the lowest id
  // (stable across requests), this node on a single node.
  c->controller_id = config_.broker_only ? (c->brokers.empty() ? -1 : c->brokers.front().id) : node_.node_id;
  if (config_.broker_only) {
    for (const auto& [name, level] : img.features()) c->finalized_features[name] = level;
  } else {
    // One node finalizes what it serves of the features clients look at: transaction protocol
    // v2 (KIP-890) and the consumer group protocol (KIP-848), as a Kafka 4.3.1 node formatted
    // with its defaults does.
    c->finalized_features[std::string(kTransactionVersionFeature)] = kMaxTransactionVersion;
    c->finalized_features[std::string(kGroupVersionFeature)] = kMaxGroupVersion;
  }
  c->features_epoch = std::max<std::int64_t>(0, metadata_offset_.load());
  auto image = std::make_shared<group::TopicImage>();
  const bool any_rack = std::ranges::any_of(img.brokers(), [](const auto& b) { return b.second.rack.has_value(); });
  // The metadata offset the image is at (Kafka's image version), which resolved regular
  // expressions of consumer groups record: a node's own metadata log, else the quorum's offset.
  image->set_version(metadata_log_ ? metadata_log_->next_offset() - 1 : metadata_offset_.load());
  for (const auto& [name, id] : img.topic_ids_by_name()) {
    const auto* t = img.topic(id);
    if (t == nullptr) continue;
    TopicInfo info;
    info.name = name;
    info.id = id;
    info.partitions = static_cast<std::int32_t>(t->partitions.size());
    for (const auto& p : t->partitions) {
      PartitionInfo& pi = info.parts.emplace_back();
      pi.leader = p.leader;
      pi.leader_epoch = p.leader_epoch;
      pi.partition_epoch = p.partition_epoch;
      pi.replicas = p.replicas;
      pi.isr = p.isr;
      pi.eligible_leader_replicas = p.eligible_leader_replicas;
      pi.last_known_elr = p.last_known_elr;
      for (std::int32_t r : p.replicas) {
        if (!alive.contains(r)) pi.offline_replicas.push_back(r);
      }
    }
    // Kafka's Topic.isInternal: only its own internal topics, not every "__" name.
    info.internal = name == kOffsetsTopic || name == "__transaction_state" || name == "__share_group_state";
    for (const auto& [k, v] : img.topic_configs(name)) info.configs[k] = v;
    c->names_by_id[id] = name;
    if (info.partitions > 0) {
      // Per partition, the racks of its replicas' registered brokers (fenced ones too), as
      // Kafka's group metadata hash reads them; none when no broker has a rack.
      std::vector<std::vector<std::string>> racks;
      if (any_rack) {
        racks.resize(info.parts.size());
        for (std::size_t i = 0; i < info.parts.size(); ++i) {
          for (std::int32_t r : info.parts[i].replicas) {
            const auto b = img.brokers().find(r);
            if (b != img.brokers().end() && b->second.rack) racks[i].push_back(*b->second.rack);
          }
        }
      }
      image->add_topic(name, id, info.partitions, std::move(racks));
    }
    c->topics.emplace(name, std::move(info));
  }
  c->topic_image = std::move(image);
  for (const auto& [k, v] : img.configs(metadata::kConfigResourceBroker, std::to_string(node_.node_id))) {
    c->dynamic_broker_configs[k] = v;
  }
  for (const auto& [k, v] : img.configs(metadata::kConfigResourceBroker, "")) c->dynamic_default_broker_configs[k] = v;
  for (const auto& group : img.config_resources(metadata::kConfigResourceGroup)) {
    for (const auto& [k, v] : img.configs(metadata::kConfigResourceGroup, group)) c->group_configs[group][k] = v;
  }
  return c;
}

void Broker::publish(std::shared_ptr<const Catalog> c) {
  auto current = catalog_.load();
  while (current->version < c->version && !catalog_.compare_exchange_weak(current, c)) {
  }
  apply_broker_configs(*c);
}

config::Value Broker::broker_value(const Catalog& c, std::string_view key) const {
  if (const std::string* raw = c.dynamic_broker_value(key)) {
    if (const config::KeyDef* def = config::find_broker_config(key)) {
      if (auto parsed = config::parse(*def, *raw)) return std::move(*parsed);
    }
  }
  return config_.typed().value(key);
}

void Broker::apply_broker_configs(const Catalog& c) {
  std::lock_guard lock(throttles_mu_);
  if (c.version <= throttles_version_) return;
  throttles_version_ = c.version;
  apply_replication_throttles(c);
  const bool verification = std::get<bool>(broker_value(c, "transaction.partition.verification.enable"));
  if (verification != partitions_->verification_enabled()) {
    spdlog::info("event=broker_config_applied transaction.partition.verification.enable={}", verification);
    partitions_->set_verification_enabled(verification);
  }
  const std::int64_t expiration = std::get<std::int64_t>(broker_value(c, "producer.id.expiration.ms"));
  if (producer_id_expiration_ms_.exchange(expiration) != expiration) {
    spdlog::info("event=broker_config_applied producer.id.expiration.ms={}", expiration);
  }
  const double cleaner_rate = std::get<double>(broker_value(c, "log.cleaner.io.max.bytes.per.second"));
  if (cleaner_io_bytes_per_second_.exchange(cleaner_rate) != cleaner_rate) {
    spdlog::info("event=broker_config_applied log.cleaner.io.max.bytes.per.second={}", cleaner_rate);
  }
  if (broker_configs_listener_) broker_configs_listener_(c);
}

void Broker::apply_replication_throttles(const Catalog& c) {
  // As Kafka's BrokerConfigHandler: this broker's dynamic value, else the cluster default, else
  // unlimited (a static server.properties value is not a throttle).
  const auto rate = [&c](std::string_view key) {
    const std::string* v = nullptr;
    if (auto it = c.dynamic_broker_configs.find(key); it != c.dynamic_broker_configs.end()) {
      v = &it->second;
    } else if (auto d = c.dynamic_default_broker_configs.find(key); d != c.dynamic_default_broker_configs.end()) {
      v = &d->second;
    }
    std::int64_t n = ReplicationQuota::kUnlimited;
    if (v != nullptr) {
      const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
      if (ec != std::errc{} || end != v->data() + v->size() || n < 0) n = ReplicationQuota::kUnlimited;
    }
    return n;
  };
  const std::int64_t leader_rate = rate("leader.replication.throttled.rate");
  const std::int64_t follower_rate = rate("follower.replication.throttled.rate");
  if (leader_rate != leader_quota_->rate() || follower_rate != follower_quota_->rate()) {
    spdlog::info("event=replication_throttle_rate leader={} follower={}", leader_rate, follower_rate);
  }
  leader_quota_->set_rate(leader_rate);
  follower_quota_->set_rate(follower_rate);
  std::map<std::string, ThrottledPartitions, std::less<>> leader;
  std::map<std::string, ThrottledPartitions, std::less<>> follower;
  for (const auto& [name, info] : c.topics) {
    if (auto it = info.configs.find("leader.replication.throttled.replicas"); it != info.configs.end()) {
      if (auto t = throttled_partitions_for(it->second, node_.node_id)) leader[name] = std::move(*t);
    }
    if (auto it = info.configs.find("follower.replication.throttled.replicas"); it != info.configs.end()) {
      if (auto t = throttled_partitions_for(it->second, node_.node_id)) follower[name] = std::move(*t);
    }
  }
  leader_quota_->set_throttled(std::move(leader));
  follower_quota_->set_throttled(std::move(follower));
}

std::vector<Broker::NewPartition> Broker::create_logs(const std::string& topic, std::string* error) {
  std::vector<NewPartition> out;
  const auto* t = controller_->image().topic(topic);
  if (t == nullptr) return out;
  const auto lc = log_config_for(topic);
  for (const auto& p : t->partitions) {
    storage::TopicPartition tp{topic, p.partition_id};
    auto log = logs_->create(tp, t->id, lc);
    if (!log) {
      const auto& failure = logs_->last_create_failure();
      *error = fmt::format("cannot create the log of {}-{}: {}", topic, p.partition_id,
                           failure ? storage::to_string(failure->error) : std::string(to_string(log.error())));
      return out;
    }
    out.push_back(NewPartition{topic, t->id, p.partition_id, p.leader_epoch, *log});
  }
  return out;
}

std::map<std::string, std::string> Broker::prepare_new_logs(std::vector<metadata::MetadataRecord>& records) {
  // A new topic is named by its TopicRecord among the records; new partitions of an existing
  // topic by the image.
  std::map<Uuid, std::string> names;
  for (const auto& r : records) {
    if (const auto* t = std::get_if<metadata::TopicRecord>(&r)) names[t->topic_id] = t->name;
  }
  const auto name_of = [&](const Uuid& id) -> const std::string* {
    if (auto it = names.find(id); it != names.end()) return &it->second;
    const auto* t = controller_->image().topic(id);
    return t == nullptr ? nullptr : &names.emplace(id, t->name).first->second;
  };
  // Every new partition's directory at once (their syncs overlap); a topic fails with its first
  // partition that could not be made.
  std::vector<std::pair<storage::TopicPartition, Uuid>> wanted;
  std::vector<std::int32_t> led_epochs;  // the leader epoch of the partitions this node leads
  for (const auto& r : records) {
    const auto* pr = std::get_if<metadata::PartitionRecord>(&r);
    if (pr == nullptr) continue;
    if (const std::string* name = name_of(pr->topic_id)) {
      wanted.emplace_back(storage::TopicPartition{*name, pr->partition_id}, pr->topic_id);
      led_epochs.push_back(pr->leader == node_.node_id ? pr->leader_epoch : -1);
    }
  }
  const auto prepared = logs_->prepare(wanted, led_epochs);
  std::map<Uuid, std::string> failed;  // topic id -> why
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const auto& [tp, id] = wanted[i];
    if (prepared[i].ok() || failed.contains(id)) continue;
    const auto& failure = prepared[i].failure;
    failed[id] = fmt::format("cannot create the log directory of {}-{}: {}", tp.topic, tp.partition,
                             failure ? to_string(failure->error) : std::string(to_string(*prepared[i].error)));
  }
  std::map<std::string, std::string> out;  // topic name -> why
  if (failed.empty()) return out;
  for (const auto& [id, why] : failed) {
    const std::string& name = names[id];
    out.emplace(name, why);
    spdlog::error("event=create_partitions_failed topic={} error=\"{}\"", name, why);
    for (const auto& r : records) {
      const auto* pr = std::get_if<metadata::PartitionRecord>(&r);
      if (pr != nullptr && pr->topic_id == id) logs_->discard_prepared(storage::TopicPartition{name, pr->partition_id});
    }
  }
  std::erase_if(records, [&](const metadata::MetadataRecord& r) {
    if (const auto* t = std::get_if<metadata::TopicRecord>(&r)) return failed.contains(t->topic_id);
    if (const auto* pr = std::get_if<metadata::PartitionRecord>(&r)) return failed.contains(pr->topic_id);
    if (const auto* c = std::get_if<metadata::ConfigRecord>(&r)) {
      return c->resource_type == metadata::kConfigResourceTopic && out.contains(c->resource_name) &&
             controller_->image().topic(c->resource_name) == nullptr;  // a new topic's configs only
    }
    return false;
  });
  return out;
}

void Broker::prepare_new_topics(std::vector<metadata::MetadataRecord>& records,
                                protocol::CreateTopicsResponse& response) {
  for (const auto& [name, why] : prepare_new_logs(records)) {
    for (auto& t : response.topics) {
      if (t.name != name || t.error_code != 0) continue;
      t.error_code = code(ErrorCode::kKafkaStorageError);
      t.error_message = fmt::format("Failed to create topic {}: {}", name, why);
      t.topic_id = Uuid{};
      t.num_partitions = -1;
      t.replication_factor = -1;
      t.configs.reset();
    }
  }
}

void Broker::prepare_new_partitions(std::vector<metadata::MetadataRecord>& records,
                                    protocol::CreatePartitionsResponse& response) {
  for (const auto& [name, why] : prepare_new_logs(records)) {
    for (auto& t : response.results) {
      if (t.name != name || t.error_code != 0) continue;
      t.error_code = code(ErrorCode::kKafkaStorageError);
      t.error_message = fmt::format("Failed to create partitions of {}: {}", name, why);
    }
  }
}

asio::awaitable<protocol::CreatePartitionsResponse> Broker::create_partitions(protocol::CreatePartitionsRequest req,
                                                                              std::int16_t version) {
  co_return co_await controller_op<protocol::CreatePartitionsResponse>(
      [this, &req, version](const metadata::Controller& c) {
        auto result = c.create_partitions(req, version);
        prepare_new_partitions(result.records, result.response);
        return result;
      });
}

void Broker::undo_topic_creation(const std::string& topic, const std::vector<NewPartition>& created) {
  for (const auto& p : created) {
    if (auto r = logs_->remove(storage::TopicPartition{topic, p.index}); !r && r.error() != storage::Errc::kNotFound) {
      spdlog::error("event=create_topic_undo_failed topic={} partition={} error=\"{}\"", topic, p.index, r.error());
    }
  }
  if (const auto* t = controller_->image().topic(topic)) {
    for (const auto& p : t->partitions) logs_->discard_prepared(storage::TopicPartition{topic, p.partition_id});
  }
  protocol::DeleteTopicsRequest undo;
  undo.topic_names.push_back(topic);
  auto removal = controller_->delete_topics(undo, 5);
  if (auto ok = commit(removal.records); !ok) {
    spdlog::error("event=create_topic_undo_failed topic={} error=\"{}\"", topic, ok.error());
  }
}

asio::awaitable<void> Broker::install(std::vector<NewPartition> parts) {
  FanOut<bool> fan;
  for (auto& np : parts) {
    const std::size_t shard = shards_->owner(np.topic, np.index);
    fan.add(shards_->executor(shard), [this, shard, np]() {
      if (shards_->table(shard).find(np.topic, np.index) == nullptr) {
        auto part = std::make_unique<Partition>(np.topic, np.topic_id, np.index, np.leader_epoch, np.log);
        part->load_producer_state(producer_id_expiration_ms_.load());
        shards_->table(shard).add(std::move(part));
      }
      return true;
    });
  }
  co_await fan.run();
}

Broker::Applied Broker::apply_records(const std::vector<metadata::MetadataRecord>& records) {
  Applied a;
  if (auto ok = commit(records); !ok) {
    a.error = ok.error();
    spdlog::error("metadata change failed error=\"{}\"", a.error);
    // Nothing was recorded: directories made ahead of new partitions' records go again.
    for (const auto& r : records) {
      const auto* pr = std::get_if<metadata::PartitionRecord>(&r);
      if (pr == nullptr) continue;
      if (const auto* t = controller_->image().topic(pr->topic_id)) {
        logs_->discard_prepared(storage::TopicPartition{t->name, pr->partition_id});
      }
    }
    return a;
  }
  std::set<std::string> partitions_changed;
  std::set<std::string> configs_changed;
  const auto& img = controller_->image();
  for (const auto& r : records) {
    if (const auto* pr = std::get_if<metadata::PartitionRecord>(&r)) {
      if (const auto* t = img.topic(pr->topic_id)) partitions_changed.insert(t->name);
    } else if (const auto* cr = std::get_if<metadata::ConfigRecord>(&r)) {
      if (cr->resource_type == metadata::kConfigResourceTopic) {
        configs_changed.insert(cr->resource_name);
      } else {
        for (const auto& [name, id] : img.topic_ids_by_name()) configs_changed.insert(name);
      }
    }
  }
  for (const auto& topic : partitions_changed) {
    std::string error;
    for (auto& np : create_logs(topic, &error)) a.new_partitions.push_back(std::move(np));
    if (!error.empty()) spdlog::error("create partitions error=\"{}\"", error);
  }
  for (const auto& topic : configs_changed) {
    if (img.topic(topic) != nullptr) a.configs.emplace_back(topic, log_config_for(topic));
  }
  a.catalog = build_catalog();
  return a;
}

asio::awaitable<void> Broker::after_apply(Applied applied) {
  if (!applied.new_partitions.empty()) co_await install(std::move(applied.new_partitions));
  if (applied.catalog) publish(applied.catalog);
  if (applied.configs.empty()) co_return;
  auto catalog = this->catalog();
  FanOut<bool> fan;
  for (const auto& [topic, lc] : applied.configs) {
    const TopicInfo* t = catalog->find(topic);
    if (t == nullptr) continue;
    for (std::int32_t i = 0; i < t->partitions; ++i) {
      const std::size_t shard = shards_->owner(topic, i);
      fan.add(shards_->executor(shard), [this, shard, topic = topic, i, lc = lc]() {
        if (Partition* p = shards_->table(shard).find(topic, i)) {
          p->log().set_config(lc);
          p->watch_flush();  // flush.ms may have changed
          shards_->table(shard).config_changed(*p);  // cleanup.policy too
        }
        return true;
      });
    }
  }
  co_await fan.run();
}

asio::awaitable<protocol::CreateTopicsResponse> Broker::forward_create_topics(const protocol::CreateTopicsRequest& req,
                                                                              std::int16_t version,
                                                                              std::optional<RequestOrigin> origin) {
  auto resp = co_await quorum_->create_topics(req, version, origin);
  if (resp) {
    // The controller answered once the topics were committed; wait (bounded) until this broker
    // has applied them too, so that the client's next Metadata request here finds them.
    std::vector<std::string> created;
    for (const auto& t : resp->topics) {
      if (t.error_code == 0 && !req.validate_only) created.push_back(t.name);
    }
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (int attempt = 0; attempt < 300 && !created.empty(); ++attempt) {
      auto cat = catalog();
      if (std::ranges::all_of(created, [&](const std::string& n) { return cat->find(n) != nullptr; })) break;
      timer.expires_after(std::chrono::milliseconds(10));
      co_await timer.async_wait(asio::use_awaitable);
    }
    co_return std::move(*resp);
  }
  spdlog::warn("event=forward_failed api=CreateTopics error_code={} error=\"{}\"", resp.error().code,
               resp.error().message);
  protocol::CreateTopicsResponse out;
  for (const auto& t : req.topics) {
    auto& r = out.topics.emplace_back();
    r.name = t.name;
    r.error_code = resp.error().code;
    r.error_message = resp.error().message;
    r.num_partitions = -1;
    r.replication_factor = -1;
  }
  co_return out;
}

asio::awaitable<protocol::CreateTopicsResponse> Broker::create_topics(const protocol::CreateTopicsRequest& req,
                                                                      std::int16_t version,
                                                                      std::optional<RequestOrigin> origin) {
  if (quorum_) co_return co_await forward_create_topics(req, version, origin);
  struct Outcome {
    protocol::CreateTopicsResponse response;
    std::vector<NewPartition> parts;
    std::shared_ptr<const Catalog> catalog;
  };
  // A topic being deleted keeps its name until its logs are gone: a create of the same name
  // waits for that (milliseconds), so it never picks up the old files.
  for (int i = 0; i < 1000; ++i) {
    const bool busy = co_await run_on(shards_->controller(), [&]() {
      for (const auto& t : req.topics) {
        if (deleting_.contains(t.name)) return true;
      }
      return false;
    });
    if (!busy) break;
    asio::steady_timer pause(co_await asio::this_coro::executor, std::chrono::milliseconds(10));
    co_await pause.async_wait(asio::use_awaitable);
  }
  Outcome o = co_await run_on(shards_->controller(), [&]() {
    Outcome out;
    auto result = controller_->create_topics(req, version, topic_defaults_);
    out.response = std::move(result.response);
    prepare_new_topics(result.records, out.response);
    if (result.records.empty()) return out;
    if (auto ok = commit(result.records); !ok) {
      spdlog::error("create topics failed error=\"{}\"", ok.error());
      // Nothing was recorded: the directories made ahead of the records go again.
      std::map<Uuid, std::string> names;
      for (const auto& r : result.records) {
        if (const auto* t = std::get_if<metadata::TopicRecord>(&r)) names[t->topic_id] = t->name;
      }
      for (const auto& r : result.records) {
        const auto* pr = std::get_if<metadata::PartitionRecord>(&r);
        if (pr != nullptr && names.contains(pr->topic_id)) {
          logs_->discard_prepared(storage::TopicPartition{names[pr->topic_id], pr->partition_id});
        }
      }
      for (auto& t : out.response.topics) {
        if (t.error_code == 0) {
          t.error_code = code(ErrorCode::kKafkaStorageError);
          t.error_message = ok.error();
        }
      }
      return out;
    }
    for (auto& t : out.response.topics) {
      if (t.error_code != 0) continue;
      std::string error;
      auto parts = create_logs(t.name, &error);
      if (error.empty()) {
        for (auto& p : parts) out.parts.push_back(std::move(p));
        continue;
      }
      // All or nothing: a topic whose logs cannot all be created is taken back (its logs and
      // its metadata records), so no half-created topic is left to fail produces or restarts.
      spdlog::error("event=create_topic_failed topic={} error=\"{}\"", t.name, error);
      undo_topic_creation(t.name, parts);
      t.error_code = code(ErrorCode::kKafkaStorageError);
      t.error_message = fmt::format("Failed to create the logs of topic {}: {}", t.name, error);
      t.topic_id = Uuid{};
      t.num_partitions = -1;
      t.replication_factor = -1;
      t.configs.reset();
    }
    out.catalog = build_catalog();
    return out;
  });
  if (!o.parts.empty()) co_await install(std::move(o.parts));
  if (o.catalog) publish(o.catalog);
  co_return std::move(o.response);
}

asio::awaitable<protocol::DeleteTopicsResponse> Broker::delete_topics(const protocol::DeleteTopicsRequest& req,
                                                                      std::int16_t version,
                                                                      std::optional<RequestOrigin> origin) {
  if (quorum_) {
    auto resp = co_await quorum_->delete_topics(req, version, origin);
    if (resp) co_return std::move(*resp);
    spdlog::warn("event=forward_failed api=DeleteTopics error_code={} error=\"{}\"", resp.error().code,
                 resp.error().message);
    protocol::DeleteTopicsResponse out;
    for (const auto& name : req.topic_names) {
      auto& r = out.responses.emplace_back();
      r.name = name;
      r.error_code = resp.error().code;
      r.error_message = resp.error().message;
    }
    for (const auto& t : req.topics) {
      auto& r = out.responses.emplace_back();
      r.name = t.name;
      r.topic_id = t.topic_id;
      r.error_code = resp.error().code;
      r.error_message = resp.error().message;
    }
    co_return out;
  }
  struct Outcome {
    protocol::DeleteTopicsResponse response;
    std::vector<std::pair<std::string, std::int32_t>> parts;
    std::shared_ptr<const Catalog> catalog;
  };
  Outcome o = co_await run_on(shards_->controller(), [&]() {
    Outcome out;
    // Partition counts before the records remove the topics from the image.
    std::map<std::string, std::int32_t> counts;
    for (const auto& [name, id] : controller_->image().topic_ids_by_name()) {
      counts[name] = static_cast<std::int32_t>(controller_->image().topic(id)->partitions.size());
    }
    auto result = controller_->delete_topics(req, version);
    out.response = std::move(result.response);
    if (result.records.empty()) return out;
    if (auto ok = commit(result.records); !ok) {
      spdlog::error("delete topics failed error=\"{}\"", ok.error());
      for (auto& t : out.response.responses) {
        if (t.error_code == 0) t.error_code = code(ErrorCode::kKafkaStorageError);
      }
      return out;
    }
    for (const auto& t : out.response.responses) {
      if (t.error_code != 0 || !t.name) continue;
      deleting_.insert(*t.name);
      for (std::int32_t i = 0; i < counts[*t.name]; ++i) out.parts.emplace_back(*t.name, i);
    }
    out.catalog = build_catalog();
    return out;
  });
  if (o.catalog) publish(o.catalog);
  if (!o.parts.empty()) {
    // Detach the partitions from their shards, then delete their files on shard 0.
    co_await remove_partitions(o.parts);
    auto done = [this, parts = &o.parts]() {
      for (const auto& [topic, index] : *parts) deleting_.erase(topic);
      return true;
    };
    co_await run_on(shards_->controller(), std::move(done));
  }
  co_return std::move(o.response);
}

asio::awaitable<void> Broker::auto_create_topics(const std::vector<std::string>& names) {
  protocol::CreateTopicsRequest req;
  req.timeout_ms = 30000;
  for (const auto& n : names) {
    auto& t = req.topics.emplace_back();
    t.name = n;
    // As Kafka's AutoTopicCreationManager: a broker of a cluster asks for its own defaults
    // (the controller would otherwise apply the controller's).
    t.num_partitions = quorum_ ? topic_defaults_.num_partitions : -1;
    t.replication_factor = quorum_ ? topic_defaults_.replication_factor : std::int16_t{-1};
  }
  auto resp = co_await create_topics(req, 7);
  std::vector<std::string> racing;  // created by a concurrent request that has not published them yet
  for (const auto& t : resp.topics) {
    if (t.error_code == code(ErrorCode::kTopicAlreadyExists)) {
      racing.push_back(t.name);
    } else if (t.error_code != 0) {
      spdlog::info("auto-create refused topic={} error_code={}", t.name, t.error_code);
    }
  }
  // Pipelined Metadata requests for the same new topic: the loser of the race must not answer
  // UNKNOWN_TOPIC_OR_PARTITION after the winner answered with partitions, so it waits (bounded)
  // until the winner's catalog is published.
  if (racing.empty()) co_return;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (int attempt = 0; attempt < 200; ++attempt) {
    auto cat = catalog();
    if (std::ranges::all_of(racing, [&](const std::string& n) { return cat->find(n) != nullptr; })) co_return;
    timer.expires_after(std::chrono::milliseconds(10));
    co_await timer.async_wait(asio::use_awaitable);
  }
}

asio::awaitable<std::expected<std::int64_t, ErrorCode>> Broker::allocate_producer_id() {
  if (quorum_) {
    // Blocks come from the active controller (AllocateProducerIds), so ids never collide
    // across brokers; one block at a time is fetched, on the controller executor.
    co_return co_await asio::co_spawn(
        shards_->controller(),
        [this]() -> asio::awaitable<std::expected<std::int64_t, ErrorCode>> {
          if (next_producer_id_ >= producer_id_block_end_) {
            protocol::AllocateProducerIdsRequest req;
            req.broker_id = node_.node_id;
            req.broker_epoch = quorum_->broker_epoch();
            auto resp = co_await quorum_->allocate_producer_ids(req);
            if (!resp) {
              spdlog::warn("event=forward_failed api=AllocateProducerIds error=\"{}\"", resp.error().message);
              co_return std::unexpected(ErrorCode::kCoordinatorLoadInProgress);
            }
            if (resp->error_code != 0) co_return std::unexpected(static_cast<ErrorCode>(resp->error_code));
            if (next_producer_id_ < producer_id_block_end_) co_return next_producer_id_++;  // another call got one
            next_producer_id_ = resp->producer_id_start;
            producer_id_block_end_ = resp->producer_id_start + resp->producer_id_len;
          }
          co_return next_producer_id_++;
        },
        asio::use_awaitable);
  }
  co_return co_await run_on(shards_->controller(), [this]() -> std::expected<std::int64_t, ErrorCode> {
    if (next_producer_id_ >= producer_id_block_end_) {
      auto block = controller_->allocate_producer_ids(node_.node_id, broker_epoch_);
      if (!block) return std::unexpected(ErrorCode::kUnknownServerError);
      if (auto ok = commit(block->records); !ok) {
        spdlog::error("producer id block failed error=\"{}\"", ok.error());
        return std::unexpected(ErrorCode::kKafkaStorageError);
      }
      next_producer_id_ = block->response.first_producer_id;
      producer_id_block_end_ = block->response.next_block_first_id();
    }
    return next_producer_id_++;
  });
}

asio::awaitable<net::Reply> Broker::handle(const net::ClientInfo& client, std::shared_ptr<const net::Frame> frame) {
  RequestStats& stats = request_stats(client.shard);
  auto parsed = protocol::parse_request_header(frame->bytes);
  if (!parsed) {
    const bool unknown = parsed.error().error == protocol::HeaderError::kUnknownApi;
    const char* why = unknown                                                     ? "unknown api key"
                      : parsed.error().error == protocol::HeaderError::kTruncated ? "truncated request header"
                                                                                  : "malformed request header";
    stats.malformed[static_cast<std::size_t>(unknown ? Malformed::kUnknownApi : Malformed::kHeader)].inc();
    log_rejected(stats, client, parsed.error().header, 0, why);
    co_return net::Reply::close(why);
  }
  const protocol::RequestHeader& header = *parsed;
  const auto key = static_cast<std::size_t>(static_cast<std::uint16_t>(header.api_key));
  HandlerFn fn = key < kHandlers.size() ? kHandlers[key] : nullptr;
  if (fn == nullptr) {
    stats.malformed[static_cast<std::size_t>(Malformed::kUnknownApi)].inc();
    log_rejected(stats, client, header, 0, "api not served");
    co_return net::Reply::close("api not served");
  }
  ApiStats& api = stats.apis[key];
  api.requests.inc();
  if (header.api_version >= 0 && static_cast<std::size_t>(header.api_version) < kCountedVersions) {
    api.requests_by_version[static_cast<std::size_t>(header.api_version)].inc();
  }
  api.request_bytes.inc(frame->bytes.size() + 4);
  api.in_flight.add(1);
  struct InFlight {
    ApiStats& api;
    ~InFlight() { api.in_flight.add(-1); }
  } in_flight{api};
  Body body = std::span<const std::uint8_t>(frame->bytes).subspan(header.size);
  net::Reply reply = co_await fn(*this, client, header, body);
  if (reply.kind == net::Reply::Kind::kClose) log_rejected(stats, client, header, 0, reply.reason);
  if (reply.kind == net::Reply::Kind::kSend) api.response_bytes.inc(static_cast<std::uint64_t>(reply.size()) + 4);
  const auto received = frame->received_at == std::chrono::steady_clock::time_point{} ? std::chrono::steady_clock::now()
                                                                                      : frame->received_at;
  api.latency_us.observe(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - received).count()));
  co_return reply;
}

}  // namespace weir::broker
