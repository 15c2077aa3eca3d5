#include "server/replica_channel.h"

#include <fmt/format.h>

#include "client/connection.h"
#include "client/errors.h"

namespace weir::server {

namespace asio = boost::asio;

namespace {

// Fetch below 12 has no DivergingEpoch, below 15 no ReplicaState; weir and Kafka 4 have 17.
constexpr std::int16_t kMinReplicaFetchVersion = 12;
constexpr std::int16_t kMaxReplicaFetchVersion = 17;
constexpr std::int16_t kMaxListOffsetsVersion = 9;

class ClientReplicaChannel final : public broker::ReplicaChannel, public broker::PeerChannel {
 public:
  ClientReplicaChannel(asio::any_io_executor executor, std::string client_id, std::int32_t node_id, std::string host,
                       std::int32_t port)
      : executor_(std::move(executor)),
        client_id_(std::move(client_id)),
        node_id_(node_id),
        host_(std::move(host)),
        port_(port) {}
  ~ClientReplicaChannel() override { close(); }

  asio::awaitable<std::expected<protocol::WriteTxnMarkersResponse, std::string>> write_txn_markers(
      const protocol::WriteTxnMarkersRequest& request, std::int64_t timeout_ms) override {
    co_return co_await send(request, 1, 2, timeout_ms);
  }
  asio::awaitable<std::expected<protocol::AddPartitionsToTxnResponse, std::string>> add_partitions_to_txn(
      const protocol::AddPartitionsToTxnRequest& request, std::int16_t version, std::int64_t timeout_ms) override {
    co_return co_await send(request, version, version, timeout_ms);
  }

  asio::awaitable<std::expected<protocol::FetchResponse, std::string>> fetch(const protocol::FetchRequest& request,
                                                                             std::int64_t timeout_ms) override {
    co_return co_await send(request, kMinReplicaFetchVersion, kMaxReplicaFetchVersion, timeout_ms);
  }
  asio::awaitable<std::expected<protocol::ListOffsetsResponse, std::string>> list_offsets(
      const protocol::ListOffsetsRequest& request, std::int64_t timeout_ms) override {
    co_return co_await send(request, 1, kMaxListOffsetsVersion, timeout_ms);
  }
  void close() override {
    if (conn_) conn_->close("closed by its owner");
    conn_.reset();
  }

 private:
  template <class Request>
  asio::awaitable<std::expected<client::ResponseOf<Request>, std::string>> send(const Request& request,
                                                                                std::int16_t min_version,
                                                                                std::int16_t max_version,
                                                                                std::int64_t timeout_ms) {
    const client::Deadline deadline = client::deadline_after_ms(timeout_ms);
    if (!conn_ || conn_->state() == client::Connection::State::kClosed) {
      client::ConnectionOptions options;
      options.client_id = client_id_;
      options.connect_timeout_ms = std::min<std::int64_t>(timeout_ms, 10'000);
      conn_ = std::make_shared<client::Connection>(
          executor_, node_id_, client::Endpoint{host_, static_cast<std::uint16_t>(port_)}, options);
      conn_->start();
    }
    std::shared_ptr<client::Connection> conn = conn_;
    auto ready = co_await conn->ready(deadline);
    if (!ready) co_return std::unexpected(ready.error().to_string());
    const std::optional<std::int16_t> version = conn->versions().pick(Request::kApiKey, max_version);
    if (!version || *version < min_version) {
      co_return std::unexpected(fmt::format("{} does not serve {} v{} or later", conn->describe(), Request::kName,
                                            min_version));
    }
    auto r = co_await conn->send(request, *version, deadline);
    if (!r) co_return std::unexpected(r.error().to_string());
    co_return std::move(*r);
  }

  asio::any_io_executor executor_;
  std::string client_id_;
  std::int32_t node_id_;
  std::string host_;
  std::int32_t port_;
  std::shared_ptr<client::Connection> conn_;
};

}  // namespace

broker::ReplicaChannelFactory make_replica_channels(std::int32_t self) {
  return [self](asio::any_io_executor executor, std::int32_t node_id, const std::string& host,
                std::int32_t port) -> std::unique_ptr<broker::ReplicaChannel> {
    return std::make_unique<ClientReplicaChannel>(std::move(executor), fmt::format("weir-replica-{}", self), node_id,
                                                  host, port);
  };
}

broker::PeerChannelFactory make_peer_channels(std::int32_t self) {
  return [self](asio::any_io_executor executor, std::int32_t node_id, const std::string& host,
                std::int32_t port) -> std::unique_ptr<broker::PeerChannel> {
    return std::make_unique<ClientReplicaChannel>(std::move(executor), fmt::format("weir-broker-{}", self), node_id,
                                                  host, port);
  };
}

}  // namespace weir::server
