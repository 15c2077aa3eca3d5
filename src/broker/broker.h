// The broker: owns the node's identity and state, and answers requests by dispatching each to
// the handler of its API (one file per API under handlers/).
//
// Ownership (DESIGN.md "Ownership and concurrency"):
//   - shard 0 owns the controller (metadata image + metadata log), the log manager's map of
//     logs (create/remove), and the producer-id block;
//   - each partition is owned by the shard `shards().owner(topic, partition)`: its Partition
//     object and its PartitionLog are touched only there;
//   - the catalog (topic names, ids, partition counts) is an immutable snapshot every shard reads.
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdint>
#include <expected>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "broker/answer_cache.h"
#include "broker/async.h"
#include "broker/catalog.h"
#include "broker/compressed_batches.h"
#include "broker/config.h"
#include "broker/errors.h"
#include "broker/fetch_session.h"
#include "broker/group_host.h"
#include "broker/peer_link.h"
#include "broker/quorum_link.h"
#include "broker/replica_fetcher.h"
#include "broker/replica_link.h"
#include "broker/replication_quota.h"
#include "broker/request_stats.h"
#include "broker/shards.h"
#include "metadata/controller.h"
#include "metadata/metadata_log.h"
#include "metrics/histogram.h"
#include "net/request_sink.h"
#include "protocol/gen/create_partitions_request.h"
#include "protocol/gen/create_partitions_response.h"
#include "protocol/gen/create_topics_request.h"
#include "protocol/gen/create_topics_response.h"
#include "protocol/gen/delete_topics_request.h"
#include "protocol/gen/delete_topics_response.h"
#include "storage/flusher.h"
#include "storage/log_cleaner.h"
#include "storage/log_manager.h"

namespace weir::broker {

class GroupService;
class PartitionService;
class TxnService;
struct MarkerSpec;

// Identity of this node as clients see it.
struct NodeInfo {
  std::int32_t node_id = 1;
  std::string host;
  std::int32_t port = 0;
  std::string cluster_id;
  Uuid directory_id;  // meta.properties directory.id of the log dir
  // The broker epoch of the last clean shutdown (the log dir's marker), -1 after a crash:
  // BrokerRegistration's PreviousBrokerEpoch (KIP-966).
  std::int64_t previous_broker_epoch = -1;
};

class Broker final : public net::RequestSink {
 public:
  // clock and fs are the broker's time and its data files' file system: the system's in
  // production (src/server), a test's or a simulator's own elsewhere.
  Broker(Config config, const Clock& clock, storage::FileSystem& fs);
  ~Broker() override;

  // The executors partitions and coordinators are spread over; before start().
  void attach(std::vector<boost::asio::any_io_executor> executors);
  // Opens the data directory: metadata log, then every partition log. Runs before the
  // executors do. Returns an error message on failure.
  std::string start();
  // After the executors have stopped: clean shutdown of every log (checkpoints, marker).
  void stop();

  // process.roles=broker: the link to the controller quorum, before start() (src/server sets
  // it). Null on a broker,controller node, which keeps its own local metadata log.
  void set_quorum_link(std::unique_ptr<QuorumLink> link) { quorum_ = std::move(link); }
  [[nodiscard]] QuorumLink* quorum() const { return quorum_.get(); }
  // process.roles=broker: how followers reach leaders (src/server sets it), before start().
  void set_replica_channels(ReplicaChannelFactory channels) { replica_channels_ = std::move(channels); }
  // process.roles=broker: how the transaction protocol reaches other brokers (markers to
  // partition leaders, KIP-890 verification at a remote coordinator), before start().
  void set_peer_channels(PeerChannelFactory channels) { peer_channels_ = std::move(channels); }
  // On `shard`: the channel to broker `node_id` on its inter-broker endpoint; null when the
  // broker is unknown (not registered or fenced) or there is no transport.
  [[nodiscard]] PeerChannel* peer(std::size_t shard, std::int32_t node_id);
  // Stops every replica fetcher (on shutdown, while the executors still run).
  boost::asio::awaitable<void> stop_replication();
  // After the executors run (broker-only): starts following the quorum; the sink applies each
  // committed update on the controller executor.
  void start_quorum();
  // Offset of the last metadata update applied (broker-only; -1 before any).
  [[nodiscard]] std::int64_t metadata_offset() const { return metadata_offset_.load(); }

  // Fills in the advertised port when the listener was bound to port 0.
  void set_bound_port(std::uint16_t port);

  boost::asio::awaitable<net::Reply> handle(const net::ClientInfo& client,
                                            std::shared_ptr<const net::Frame> frame) override;

  [[nodiscard]] const Config& config() const { return config_; }
  // A broker key's value in effect: its dynamic value in `c` (this node's, then the cluster
  // default) if that parses, else server.properties or the default (Kafka skips a dynamic value
  // that is not valid).
  [[nodiscard]] config::Value broker_value(const Catalog& c, std::string_view key) const;
  // Called (on the controller executor) with each newer catalog, after the broker applied the
  // dynamic broker configs it acts on itself; the server applies the connection limits. Set
  // before start().
  void on_broker_configs(std::function<void(const Catalog&)> listener) {
    broker_configs_listener_ = std::move(listener);
  }
  [[nodiscard]] const NodeInfo& node() const { return node_; }
  [[nodiscard]] ShardSet& shards() { return *shards_; }
  // Incremental fetch sessions (KIP-227) of every connection; thread-safe.
  [[nodiscard]] FetchSessionCache& fetch_sessions() { return *fetch_sessions_; }
  // Monotonic milliseconds (the broker's clock).
  [[nodiscard]] std::int64_t now_ms() const { return clock_.now_ms(); }

  // Topics, as every shard sees them.
  [[nodiscard]] std::shared_ptr<const Catalog> catalog() const { return catalog_.load(); }
  // The finalized transaction.version: 2 on one node, the controller quorum's level in a cluster.
  [[nodiscard]] std::int16_t transaction_version() const;
  [[nodiscard]] bool topic_exists(const std::string& name) const { return catalog()->find(name) != nullptr; }
  [[nodiscard]] std::optional<std::string> topic_name(const Uuid& id) const { return catalog()->name_of(id); }
  [[nodiscard]] bool is_valid_topic_name(const std::string& name) const;
  [[nodiscard]] bool auto_create_topics() const { return auto_create_topics_; }
  [[nodiscard]] bool flush_on_acks_all() const { return flush_on_acks_all_; }
  // Produce's validation of compressed batches off the executors (after attach()).
  [[nodiscard]] CompressedBatches& compressed_batches() { return *compressed_batches_; }
  [[nodiscard]] record::DecompressionLimits decompression_limits() const {
    return {static_cast<std::size_t>(config_.produce_max_decompressed_batch_bytes),
            static_cast<std::uint32_t>(config_.produce_max_compression_ratio)};
  }

  // Admin operations, carried out by the controller on shard 0.
  // `origin`: the client whose request this is (a broker of a cluster forwards it in an Envelope);
  // none for the broker's own (auto-created and internal topics).
  boost::asio::awaitable<protocol::CreateTopicsResponse> create_topics(
      const protocol::CreateTopicsRequest& req, std::int16_t version,
      std::optional<RequestOrigin> origin = std::nullopt);
  boost::asio::awaitable<protocol::DeleteTopicsResponse> delete_topics(
      const protocol::DeleteTopicsRequest& req, std::int16_t version,
      std::optional<RequestOrigin> origin = std::nullopt);
  // CreatePartitions on this node's own controller (a broker of a cluster forwards the request
  // instead): all or nothing per topic, as create_topics (prepare_new_partitions).
  boost::asio::awaitable<protocol::CreatePartitionsResponse> create_partitions(protocol::CreatePartitionsRequest req,
                                                                               std::int16_t version);
  // Creates the named topics with the broker defaults (auto.create.topics.enable); errors are
  // left for the caller to see as unknown topics.
  boost::asio::awaitable<void> auto_create_topics(const std::vector<std::string>& names);
  // A producer id for an idempotent producer (never reused: blocks are in the metadata log).
  boost::asio::awaitable<std::expected<std::int64_t, ErrorCode>> allocate_producer_id();
  // The append and read paths of the hosted partitions (after attach()).
  [[nodiscard]] PartitionService& partitions() { return *partitions_; }
  // The group coordinators, as the group handlers reach them.
  [[nodiscard]] GroupService& groups() { return *groups_; }
  // The transaction coordinators (txn_host.h), as the transaction handlers reach them.
  [[nodiscard]] TxnService& txns() { return *txns_; }
  // Writes transaction markers on the partitions this broker leads (WriteTxnMarkers, and the
  // coordinators' local ones): one error code per spec, in order, once each marker is durable.
  boost::asio::awaitable<std::vector<std::int16_t>> write_txn_markers(std::vector<MarkerSpec> specs);
  // A transaction coordinator's markers, on `shard` (its own): local partitions are written
  // here, the others sent as WriteTxnMarkers to their leaders (a broker of a cluster). One error
  // per spec: 0 done, UNKNOWN_TOPIC_OR_PARTITION for a deleted topic, anything else retriable.
  boost::asio::awaitable<std::vector<std::int16_t>> send_txn_markers(std::size_t shard, std::vector<MarkerSpec> specs);
  [[nodiscard]] const Clock& clock() const { return clock_; }

  // Runs a controller operation on shard 0, makes its records durable and applied, publishes the
  // new catalog, creates logs for new partitions and pushes changed topic configs to the logs.
  // `op` must capture only trivially destructible things (references): GCC 12 may destroy a
  // callable argument of a coroutine twice.
  template <class Response, class Op>
  boost::asio::awaitable<Response> controller_op(Op op);
  // In a controller_op, before a CreatePartitions' records are committed: a topic's new
  // partitions all get their directories, or none does, its records are dropped and it is
  // answered KAFKA_STORAGE_ERROR (the metadata never names a partition without a log).
  void prepare_new_partitions(std::vector<metadata::MetadataRecord>& records,
                              protocol::CreatePartitionsResponse& response);

  // Consumer groups. The coordinator of a group is the GroupHost of its `__consumer_offsets`
  // partition, on that partition's owner shard.
  // Partitions of __consumer_offsets (the topic's, once it exists; else offsets.topic.num.partitions).
  [[nodiscard]] std::int32_t offsets_partitions() const;
  [[nodiscard]] std::int32_t group_partition(std::string_view group_id) const {
    return group_partition_for(group_id, offsets_partitions());
  }
  // Creates __consumer_offsets if it does not exist yet (as Kafka does on the first
  // FindCoordinator). False if it cannot be created.
  boost::asio::awaitable<bool> ensure_offsets_topic();
  // Runs f(GroupHost*) on the shard owning the group's partition; the host is null when
  // __consumer_offsets does not exist (yet). f must be trivially destructible (see run_on).
  template <class F>
  auto with_group(std::int32_t partition, F f) -> boost::asio::awaitable<std::invoke_result_t<F&, GroupHost*>>;

  // Group commit, observed by the flusher thread (its only writer): how long each acks=all sync
  // request queued before its flush cycle started, and each request's cycle's duration (us).
  [[nodiscard]] const metrics::Histogram& flush_queue_us() const { return flush_queue_us_; }
  [[nodiscard]] const metrics::Histogram& flush_cycle_us() const { return flush_cycle_us_; }

  // The request counters of a shard; written only on that shard (the dispatcher's).
  [[nodiscard]] RequestStats& request_stats(std::size_t shard) { return *request_stats_[shard]; }
  // Where answers too large to build on a shard are built and encoded (Metadata of every topic:
  // 2.6 MB and about 100 ms of CPU at 100,000 partitions, which would hold up every other
  // request of the shard meanwhile); one thread, so such answers take at most one core from the
  // shards. Null before attach() and after stop(): the dispatcher then answers on the shard.
  [[nodiscard]] boost::asio::thread_pool* large_answers() { return large_answers_.get(); }
  // The encoded answers of large_answers that depend on the catalog snapshot only (Metadata of
  // every topic), reused while the snapshot is current.
  [[nodiscard]] AnswerCache& answer_cache() { return answer_cache_; }
  // On `shard` only: the group coordinators it runs, by __consumer_offsets partition.
  [[nodiscard]] const std::unordered_map<std::int32_t, std::unique_ptr<GroupHost>>& group_hosts(
      std::size_t shard) const {
    return group_hosts_[shard];
  }

  // Runs f(controller) on shard 0 (reads only).
  template <class F>
  auto with_controller(F f) -> boost::asio::awaitable<std::invoke_result_t<F&, const metadata::Controller&>>;

 private:
  struct NewPartition {
    std::string topic;
    Uuid topic_id;
    std::int32_t index;
    std::int32_t leader_epoch;
    storage::PartitionLog* log;
  };

  // Shard 0 only: makes records durable, applies them, and publishes a new catalog.
  std::expected<void, std::string> commit(const std::vector<metadata::MetadataRecord>& records);
  std::shared_ptr<const Catalog> build_catalog() const;
  void publish(std::shared_ptr<const Catalog> c);
  // The dynamic broker configs of a catalog (a catalog older than the last one applied is
  // skipped): the replication throttles (with the topics' throttled replicas), transaction
  // verification, producer.id.expiration.ms, the cleaner's I/O limit; then the listener.
  void apply_broker_configs(const Catalog& c);
  void apply_replication_throttles(const Catalog& c);
  storage::LogConfig log_config_for(std::string_view topic) const;
  // Shard 0 only: creates (or finds) the logs of a topic's partitions.
  std::vector<NewPartition> create_logs(const std::string& topic, std::string* error);
  // On the controller executor, before a CreateTopics' records are committed: makes each new
  // topic's partition directories; a topic whose directories cannot all be made is answered
  // KAFKA_STORAGE_ERROR and its records are dropped, so the metadata never names it.
  void prepare_new_topics(std::vector<metadata::MetadataRecord>& records, protocol::CreateTopicsResponse& response);
  // Makes the directories of the partitions the records create; drops the records of a topic
  // whose directories cannot all be made. Returns those topics' names and why.
  std::map<std::string, std::string> prepare_new_logs(std::vector<metadata::MetadataRecord>& records);
  // On the controller executor, after create_logs failed for a committed topic: removes the
  // logs it created and the topic's metadata records.
  void undo_topic_creation(const std::string& topic, const std::vector<NewPartition>& created);
  boost::asio::awaitable<void> install(std::vector<NewPartition> parts);
  struct Applied {
    std::shared_ptr<const Catalog> catalog;
    std::vector<NewPartition> new_partitions;
    std::vector<std::pair<std::string, storage::LogConfig>> configs;  // per touched topic
    std::string error;
  };
  // Shard 0 only: commit() plus what the records mean for logs (see controller_op).
  Applied apply_records(const std::vector<metadata::MetadataRecord>& records);
  // Per shard, on its executor: retention (log.retention.check.interval.ms) and log compaction
  // (log.cleaner.*) of the partitions the shard owns.
  boost::asio::awaitable<void> maintain(std::size_t shard);
  boost::asio::awaitable<void> flush_due_logs(std::size_t shard);
  // Calls f on every partition of the shard, a slice at a time (see broker.cpp).
  boost::asio::awaitable<void> walk_partitions(std::size_t shard, const std::function<void(Partition&)>& f);
  boost::asio::awaitable<void> write_checkpoints_periodically();
  boost::asio::awaitable<void> after_apply(Applied applied);

  std::string start_broker_only();
  std::string open_log_dir();
  void start_maintenance();
  // Broker-only, on the controller executor: applies records the quorum committed, then makes
  // the hosted partitions match the image (creates, removes, leadership and configs).
  boost::asio::awaitable<void> apply_metadata(MetadataUpdate update);
  // Detaches the partitions from their shards (unloading their coordinators) and deletes their logs.
  boost::asio::awaitable<void> remove_partitions(std::vector<std::pair<std::string, std::int32_t>> parts);
  // Makes the hosted replicas' leadership match the image (broker-only): leaders track their
  // followers, followers fetch from their leader.
  boost::asio::awaitable<void> update_leadership();
  // On `shard`: follows `p` from its leader (or stops following it: leader < 0).
  void follow(std::size_t shard, Partition& p, std::int32_t leader, const Catalog& catalog);
  // The periodic ISR lag check of the partitions `shard` leads (every replica.lag.time.max.ms / 2).
  boost::asio::awaitable<void> check_isr(std::size_t shard);
  // Carries an ISR change to the controller and its answer back to the partition.
  boost::asio::awaitable<void> send_isr_change(IsrChange change);
  // Forwarded admin requests (broker-only).
  boost::asio::awaitable<protocol::CreateTopicsResponse> forward_create_topics(const protocol::CreateTopicsRequest& req,
                                                                               std::int16_t version,
                                                                               std::optional<RequestOrigin> origin);

  // On `shard` only: the host of a __consumer_offsets partition, created (and loaded from the
  // log) on first use; null if this shard does not hold that partition.
  GroupHost* group_host(std::size_t shard, std::int32_t partition);

  Config config_;
  NodeInfo node_;
  group::GroupConfig group_config_;
  // Per shard: __consumer_offsets partition -> its coordinator. Touched only on that shard.
  std::vector<std::unordered_map<std::int32_t, std::unique_ptr<GroupHost>>> group_hosts_;
  std::vector<std::unique_ptr<RequestStats>> request_stats_;  // per shard
  bool auto_create_topics_ = true;
  bool flush_on_acks_all_ = true;
  metadata::TopicDefaults topic_defaults_;
  const Clock& clock_;
  storage::FileSystem& fs_;
  std::unique_ptr<ShardSet> shards_;
  std::unique_ptr<PartitionService> partitions_;
  std::unique_ptr<GroupService> groups_;
  std::unique_ptr<TxnService> txns_;
  std::unique_ptr<CompressedBatches> compressed_batches_;
  std::unique_ptr<boost::asio::thread_pool> large_answers_;
  // Writes the periodic offset checkpoints (recovery points, log starts, high watermarks, cleaner
  // offsets): megabytes of text and their syncs at 100,000 partitions, off the shards.
  std::unique_ptr<boost::asio::thread_pool> checkpoint_writer_;
  AnswerCache answer_cache_;
  std::unique_ptr<FetchSessionCache> fetch_sessions_;
  bool rack_aware_selector_ = false;  // replica.selector.class (KIP-392)
  std::unique_ptr<storage::LogManager> logs_;
  std::shared_ptr<storage::FileCache> log_files_;  // logs_'s cache; outlives flusher_, which syncs through it
  std::unique_ptr<storage::Flusher> flusher_;
  metrics::Histogram flush_queue_us_;
  metrics::Histogram flush_cycle_us_;
  std::unique_ptr<metadata::Controller> controller_;
  metadata::ControllerConfig controller_config_;
  std::unique_ptr<QuorumLink> quorum_;
  ReplicaChannelFactory replica_channels_;
  PeerChannelFactory peer_channels_;
  struct Peer {
    std::string host;
    std::int32_t port = 0;
    std::unique_ptr<PeerChannel> channel;
  };
  std::vector<std::map<std::int32_t, Peer>> peers_;  // per shard, by broker id
  ReplicaFetcherOptions fetcher_options_;
  // Replication throttles (leader and follower side), shared by every shard.
  std::unique_ptr<ReplicationQuota> leader_quota_;
  std::unique_ptr<ReplicationQuota> follower_quota_;
  std::mutex throttles_mu_;
  std::uint64_t throttles_version_ = 0;
  std::int64_t replica_lag_ms_ = 30000;  // replica.lag.time.max.ms
  // Per shard: leader id -> the fetcher of the partitions the shard follows from it.
  std::vector<std::map<std::int32_t, std::shared_ptr<ReplicaFetcher>>> fetchers_;
  std::atomic<std::int64_t> registered_epoch_{-1};  // the quorum's broker epoch, for any executor
  std::atomic<std::int64_t> metadata_offset_{-1};
  std::optional<metadata::MetadataLog> metadata_log_;
  std::atomic<std::shared_ptr<const Catalog>> catalog_;
  mutable std::atomic<std::uint64_t> catalog_version_{0};
  std::int64_t next_producer_id_ = 0;
  std::int64_t producer_id_block_end_ = 0;
  std::int64_t broker_epoch_ = 0;
  std::set<std::string> deleting_;  // shard 0: topics whose logs are being removed
  bool cleaner_enabled_ = true;
  std::int64_t cleaner_backoff_ms_ = 15000;
  std::atomic<double> cleaner_io_bytes_per_second_{0};  // log.cleaner.io.max.bytes.per.second (dynamic)
  std::int64_t retention_check_interval_ms_ = 300000;
  std::int64_t flush_scheduler_interval_ms_ =
      std::numeric_limits<std::int64_t>::max();                    // log.flush.scheduler.interval.ms
  std::int64_t checkpoint_interval_ms_ = 60000;                    // log.flush.offset.checkpoint.interval.ms
  std::int64_t start_offset_checkpoint_interval_ms_ = 60000;       // log.flush.start.offset.checkpoint.interval.ms
  std::atomic<std::int64_t> producer_id_expiration_ms_{86400000};  // producer.id.expiration.ms (dynamic)
  std::function<void(const Catalog&)> broker_configs_listener_;
  bool transaction_partition_verification_enable_ = true;           // transaction.partition.verification.enable
  std::int64_t producer_id_expiration_check_interval_ms_ = 600000;  // producer.id.expiration.check.interval.ms
  storage::CleanerConfig cleaner_config_;
};

// A controller operation whose records could not be committed changed nothing: every entry its
// response answered with success gets KAFKA_STORAGE_ERROR and the reason instead.
template <class Response>
void answer_uncommitted(Response& response, const std::string& why) {
  const auto fail = [&why](auto& entry) {
    if (entry.error_code != 0) return;
    entry.error_code = code(ErrorCode::kKafkaStorageError);
    entry.error_message = why;
  };
  if constexpr (requires { response.results; }) {  // CreatePartitions
    for (auto& e : response.results) fail(e);
  } else if constexpr (requires { response.responses; }) {  // AlterConfigs, IncrementalAlterConfigs
    for (auto& e : response.responses) fail(e);
  } else if constexpr (requires { response.replica_election_results; }) {  // ElectLeaders
    for (auto& t : response.replica_election_results) {
      for (auto& e : t.partition_result) fail(e);
    }
  } else {
    static_assert(sizeof(Response) == 0, "answer_uncommitted: unknown response");
  }
}

template <class Response, class Op>
boost::asio::awaitable<Response> Broker::controller_op(Op op) {
  static_assert(std::is_trivially_destructible_v<Op>, "see controller_op");
  struct Out {
    Response response;
    Applied applied;
  };
  Out out = co_await boost::asio::co_spawn(
      shards_->controller(),
      [this, &op]() -> boost::asio::awaitable<Out> {
        Out o;
        auto result = op(*controller_);
        o.response = std::move(result.response);
        if (!result.records.empty()) o.applied = apply_records(result.records);
        if (!o.applied.error.empty()) answer_uncommitted(o.response, o.applied.error);
        co_return o;
      },
      boost::asio::use_awaitable);
  co_await after_apply(std::move(out.applied));
  co_return std::move(out.response);
}

template <class F>
auto Broker::with_group(std::int32_t partition, F f) -> boost::asio::awaitable<std::invoke_result_t<F&, GroupHost*>> {
  const std::size_t shard = shards_->owner(kOffsetsTopic, partition);
  co_return co_await run_on(shards_->executor(shard),
                            [this, shard, partition, &f]() { return f(group_host(shard, partition)); });
}

template <class F>
auto Broker::with_controller(F f) -> boost::asio::awaitable<std::invoke_result_t<F&, const metadata::Controller&>> {
  co_return co_await run_on(shards_->controller(), [this, &f]() { return f(*controller_); });
}

}  // namespace weir::broker
