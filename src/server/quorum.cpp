#include "server/quorum.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <deque>
#include <optional>

#include "cluster/broker_lifecycle.h"
#include "cluster/controller_channel.h"
#include "cluster/metadata_copy.h"
#include "cluster/metadata_follower.h"
#include "cluster/quorum_config.h"

namespace weir::server {

namespace asio = boost::asio;

namespace {

constexpr std::int16_t kRequestTimedOut = 7;
// How long a forwarded request may take, as Kafka's forwarding (request.timeout.ms of the
// broker-to-controller channel).
constexpr std::int64_t kForwardTimeoutMs = 30000;

class ClusterQuorumLink final : public broker::QuorumLink {
 public:
  ClusterQuorumLink(const broker::Config& config, const broker::NodeInfo& node, asio::any_io_executor executor)
      : config_(config), node_(node), executor_(std::move(executor)), wake_(executor_) {}

  ~ClusterQuorumLink() override {
    if (lifecycle_) lifecycle_->stop();
    if (follower_) follower_->stop();
    if (channel_) channel_->stop();
  }

  void start(broker::MetadataSink sink, std::function<std::int64_t()> applied_offset) override {
    const auto& typed = config_.typed();
    // Parsed and checked at start-up with Kafka's messages (config::BrokerConfig).
    cluster::QuorumConfig quorum;
    for (const auto& v : config_.quorum_voters) quorum.voters.push_back({v.id, client::Endpoint{v.host, v.port}});
    for (const auto& b : config_.quorum_bootstrap) quorum.bootstrap_servers.push_back(client::Endpoint{b.host, b.port});
    quorum.fetch_timeout_ms = typed.get_int("controller.quorum.fetch.timeout.ms");
    quorum.request_timeout_ms = typed.get_int("controller.quorum.request.timeout.ms");
    quorum.retry_backoff_ms = typed.get_int("controller.quorum.retry.backoff.ms");
    sink_ = std::move(sink);

    cluster::FollowerOptions fo;
    fo.cluster_id = node_.cluster_id;
    fo.node_id = node_.node_id;
    fo.snapshot_chunk_bytes = typed.get_int("controller.quorum.fetch.snapshot.max.bytes");
    fo.retry_backoff_ms = quorum.retry_backoff_ms;
    follower_ = std::make_shared<cluster::MetadataFollower>(
        executor_, fo, quorum,
        [this](const cluster::MetadataBatch& b) {
          if (copy_) {
            if (auto ok = copy_->append(b); !ok) spdlog::error("event=metadata_copy_failed error=\"{}\"", ok.error());
            log_copy_notes();
          }
          enqueue(b);
        },
        [this](const client::Error& e, bool fatal) {
          if (fatal) {
            spdlog::error("event=metadata_follower_failed error=\"{}\"", e.to_string());
            failed_ = true;
            wake_.cancel();
          } else {
            spdlog::error("event=metadata_record_error error=\"{}\"", e.to_string());
          }
        });

    cluster::ChannelOptions co;
    co.request_timeout_ms = quorum.request_timeout_ms;
    channel_ = std::make_unique<cluster::ControllerChannel>(executor_, quorum.bootstrap_endpoints(), co,
                                                            [this]() { return follower_->leader_address(); });

    cluster::LifecycleOptions lo;
    lo.node_id = node_.node_id;
    lo.cluster_id = node_.cluster_id;
    lo.incarnation_id = Uuid::random();
    for (const auto& l : config_.advertised_listeners) {
      lo.listeners.push_back(cluster::ListenerInfo{l.name, l.host, l.port, 0});
    }
    lo.features.clear();
    for (const auto& f : broker::kSupportedFeatures) lo.features.push_back({f.name, f.min_version, f.max_version});
    if (!typed.is_null("broker.rack")) lo.rack = typed.get_string("broker.rack");
    if (!node_.directory_id.is_zero()) lo.log_dirs.push_back(node_.directory_id);
    lo.previous_broker_epoch = node_.previous_broker_epoch;
    lo.heartbeat_interval_ms = typed.get_int("broker.heartbeat.interval.ms");
    lo.session_timeout_ms = typed.get_int("broker.session.timeout.ms");
    lifecycle_ = std::make_shared<cluster::BrokerLifecycle>(executor_, lo, *channel_, std::move(applied_offset),
                                                            quorum.request_timeout_ms);
    restore_local_copy();
    follower_->start();
    lifecycle_->start();
    asio::co_spawn(executor_, apply_loop(), asio::detached);
  }

  asio::awaitable<bool> wait_until_running(std::int64_t timeout_ms) override {
    if (!lifecycle_ || failed_) co_return false;
    // In steps, so that a fatal error of the follower (INCONSISTENT_CLUSTER_ID, ...) ends the wait.
    const auto deadline = client::deadline_after_ms(timeout_ms);
    bool ok = false;
    while (!ok && !failed_ && !stopping_ && std::chrono::steady_clock::now() < deadline) {
      ok = co_await lifecycle_->unfenced(std::min(deadline, client::deadline_after_ms(200)));
    }
    if (ok) {
      spdlog::info("event=broker_unfenced broker_epoch={} metadata_offset={}", lifecycle_->broker_epoch(),
                   follower_->last_delivered_offset());
    } else if (lifecycle_->last_error()) {
      spdlog::error("event=broker_registration_failed error=\"{}\"", lifecycle_->last_error()->to_string());
    }
    co_return ok;
  }

  asio::awaitable<void> shutdown(bool controlled, std::int64_t timeout_ms) override {
    if (lifecycle_ && controlled && !failed_ && lifecycle_->state() == cluster::BrokerState::kRunning) {
      spdlog::info("event=controlled_shutdown_requested");
      const bool ok = co_await lifecycle_->controlled_shutdown(client::deadline_after_ms(timeout_ms));
      spdlog::info("event=controlled_shutdown {}", ok ? "granted" : "timed_out");
    }
    stopping_ = true;
    wake_.cancel();
    if (lifecycle_) lifecycle_->stop();
    if (follower_) follower_->stop();
    if (channel_) channel_->stop();
  }

  [[nodiscard]] std::int64_t broker_epoch() const override { return lifecycle_ ? lifecycle_->broker_epoch() : -1; }

  asio::awaitable<broker::Forwarded<protocol::CreateTopicsResponse>> create_topics(
      const protocol::CreateTopicsRequest& request, std::int16_t version,
      std::optional<broker::RequestOrigin> origin) override {
    co_return co_await forward(request, version, origin);
  }
  asio::awaitable<broker::Forwarded<protocol::DeleteTopicsResponse>> delete_topics(
      const protocol::DeleteTopicsRequest& request, std::int16_t version,
      std::optional<broker::RequestOrigin> origin) override {
    co_return co_await forward(request, version, origin);
  }
  asio::awaitable<broker::Forwarded<protocol::CreatePartitionsResponse>> create_partitions(
      const protocol::CreatePartitionsRequest& request, std::int16_t version,
      std::optional<broker::RequestOrigin> origin) override {
    co_return co_await forward(request, version, origin);
  }
  asio::awaitable<broker::Forwarded<protocol::AlterConfigsResponse>> alter_configs(
      const protocol::AlterConfigsRequest& request, std::int16_t version,
      std::optional<broker::RequestOrigin> origin) override {
    co_return co_await forward(request, version, origin);
  }
  asio::awaitable<broker::Forwarded<protocol::IncrementalAlterConfigsResponse>> incremental_alter_configs(
      const protocol::IncrementalAlterConfigsRequest& request, std::int16_t version,
      std::optional<broker::RequestOrigin> origin) override {
    co_return co_await forward(request, version, origin);
  }
  asio::awaitable<broker::Forwarded<protocol::ElectLeadersResponse>> elect_leaders(
      const protocol::ElectLeadersRequest& request, std::int16_t version,
      std::optional<broker::RequestOrigin> origin) override {
    co_return co_await forward(request, version, origin);
  }
  asio::awaitable<broker::Forwarded<protocol::AlterPartitionReassignmentsResponse>> alter_partition_reassignments(
      const protocol::AlterPartitionReassignmentsRequest& request, std::int16_t version,
      std::optional<broker::RequestOrigin> origin) override {
    co_return co_await forward(request, version, origin);
  }
  asio::awaitable<broker::Forwarded<protocol::ListPartitionReassignmentsResponse>> list_partition_reassignments(
      const protocol::ListPartitionReassignmentsRequest& request, std::int16_t version,
      std::optional<broker::RequestOrigin> origin) override {
    co_return co_await forward(request, version, origin);
  }
  asio::awaitable<broker::Forwarded<protocol::AllocateProducerIdsResponse>> allocate_producer_ids(
      const protocol::AllocateProducerIdsRequest& request) override {
    co_return co_await forward(request, std::nullopt);
  }
  asio::awaitable<broker::Forwarded<protocol::AlterPartitionResponse>> alter_partition(
      const protocol::AlterPartitionRequest& request) override {
    co_return co_await forward(request, std::nullopt);
  }

 private:
  // Runs the send on the link's executor (the channel belongs to it), from any executor.
  template <class Request>
  asio::awaitable<broker::Forwarded<client::ResponseOf<Request>>> forward(
      const Request& request, std::optional<std::int16_t> version,
      std::optional<broker::RequestOrigin> from = std::nullopt) {
    using Response = client::ResponseOf<Request>;
    std::optional<client::ForwardOrigin> origin;
    if (from)
      origin = client::ForwardOrigin{
          .client_id = from->client_id, .correlation_id = from->correlation_id, .client_host = from->client_host};
    auto result = co_await asio::co_spawn(
        executor_,
        [this, &request, version, &origin]() -> asio::awaitable<broker::Forwarded<Response>> {
          if (!channel_ || stopping_)
            co_return std::unexpected(broker::ForwardError{kRequestTimedOut, "no controller"});
          auto r = co_await channel_->send(request, version, client::deadline_after_ms(kForwardTimeoutMs), origin);
          if (r) co_return std::move(*r);
          const auto& e = r.error();
          const std::int16_t code = e.kind == client::ErrorKind::kKafka && e.code != 0 ? e.code : kRequestTimedOut;
          co_return std::unexpected(broker::ForwardError{code, e.to_string()});
        },
        asio::use_awaitable);
    co_return result;
  }

  // The broker's copy of __cluster_metadata (cluster/metadata_copy.h): what it holds is handed
  // to the follower, which fetches from its end; the copy's snapshot is applied like a fetched
  // one. Without a usable directory the broker fetches everything, as before.
  void restore_local_copy() {
    cluster::MetadataCopyOptions options;
    options.log_dir = config_.log_dir;
    cluster::MetadataCopy::Loaded loaded;
    auto copy = cluster::MetadataCopy::open(options, loaded);
    for (const auto& note : loaded.notes) spdlog::warn("event=metadata_copy_recovery note=\"{}\"", note);
    for (const auto& e : loaded.record_errors) {
      spdlog::error("event=metadata_record_error error=\"offset {}: {}\"", e.offset, e.message);
    }
    if (!copy) {
      spdlog::error("event=metadata_copy_failed error=\"{}\"", copy.error());
      return;
    }
    copy_ = std::move(*copy);
    spdlog::info("event=metadata_copy_loaded dir={} snapshot_end={} batches={} next_offset={}", copy_->dir().string(),
                 loaded.snapshot ? loaded.snapshot->last_offset + 1 : -1, loaded.batches.size(), copy_->next_offset());
    if (loaded.snapshot) enqueue(*loaded.snapshot);
    follower_->restore(loaded.snapshot, std::move(loaded.batches));
    follower_->set_truncate_handler([this](std::int64_t end_offset) {
      if (!copy_) return;
      if (auto ok = copy_->truncate(end_offset); !ok)
        spdlog::error("event=metadata_copy_failed error=\"{}\"", ok.error());
      log_copy_notes();
    });
  }

  void log_copy_notes() {
    for (const auto& note : copy_->take_notes()) spdlog::warn("event=metadata_copy note=\"{}\"", note);
  }

  // Until the follower has caught up, the queued updates are applied as one (from the last
  // snapshot among them): as Kafka's metadata loader, the broker acts first on the image as of
  // the quorum's high watermark, never on the older states a restart replays.
  void merge_queue() {
    if (queue_.size() < 2) return;
    auto from = queue_.begin();
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->snapshot) from = it;
    }
    broker::MetadataUpdate merged = std::move(*from);
    for (auto it = std::next(from); it != queue_.end(); ++it) {
      for (auto& r : it->records) merged.records.push_back(std::move(r));
      merged.last_offset = it->last_offset;
    }
    queue_.clear();
    queue_.push_back(std::move(merged));
  }

  void enqueue(const cluster::MetadataBatch& b) {
    broker::MetadataUpdate u;
    u.records.reserve(b.records.size());
    for (const auto& r : b.records) u.records.push_back(r.record);
    u.last_offset = b.last_offset;
    u.snapshot = b.snapshot;
    queue_.push_back(std::move(u));
    wake_.cancel();
  }

  asio::awaitable<void> apply_loop() {
    bool announced = false;
    while (!stopping_) {
      if (!announced && follower_->is_caught_up()) merge_queue();
      const bool drained = !queue_.empty();
      while ((announced || follower_->is_caught_up()) && !queue_.empty() && !stopping_) {
        broker::MetadataUpdate u = std::move(queue_.front());
        queue_.pop_front();
        co_await sink_(std::move(u));
      }
      if (drained && copy_) {
        if (auto ok = copy_->sync(); !ok) spdlog::error("event=metadata_copy_failed error=\"{}\"", ok.error());
        log_copy_notes();
      }
      if (!announced && follower_->is_caught_up() && queue_.empty()) {
        // Every record below the quorum's high watermark at the first fetch is applied: the
        // heartbeats stop asking to stay fenced (Kafka's broker waits for the same).
        announced = true;
        lifecycle_->set_caught_up();
        spdlog::info("event=metadata_caught_up offset={}", follower_->last_delivered_offset());
      }
      if (stopping_) break;
      wake_.expires_after(std::chrono::milliseconds(announced ? 1000 : 50));
      boost::system::error_code ec;
      co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }

  const broker::Config& config_;
  const broker::NodeInfo& node_;
  asio::any_io_executor executor_;
  broker::MetadataSink sink_;
  std::shared_ptr<cluster::MetadataFollower> follower_;
  std::unique_ptr<cluster::ControllerChannel> channel_;
  std::shared_ptr<cluster::BrokerLifecycle> lifecycle_;
  std::deque<broker::MetadataUpdate> queue_;
  std::unique_ptr<cluster::MetadataCopy> copy_;
  asio::steady_timer wake_;
  bool failed_ = false;
  bool stopping_ = false;
};

}  // namespace

std::unique_ptr<broker::QuorumLink> make_quorum_link(const broker::Config& config, const broker::NodeInfo& node,
                                                     asio::any_io_executor executor) {
  return std::make_unique<ClusterQuorumLink>(config, node, std::move(executor));
}

}  // namespace weir::server
