#include "cluster/connection_pool.h"

namespace weir::cluster {

boost::asio::awaitable<Result<std::shared_ptr<client::Connection>, client::Error>> ConnectionPool::connect(
    const ControllerAddress& target, client::Deadline deadline) {
  drop_if_closed(target.endpoint);
  const std::string key = target.endpoint.to_string();
  auto it = connections_.find(key);
  if (it == connections_.end()) {
    auto conn = std::make_shared<client::Connection>(executor_, target.id, target.endpoint, options_);
    it = connections_.emplace(key, conn).first;
    conn->start();
  }
  std::shared_ptr<client::Connection> conn = it->second;
  auto ready = co_await conn->ready(deadline);
  if (!ready) co_return unexpected(std::move(ready.error()));
  co_return conn;
}

void ConnectionPool::drop_if_closed(const client::Endpoint& endpoint) {
  auto it = connections_.find(endpoint.to_string());
  if (it != connections_.end() && it->second->state() == client::Connection::State::kClosed) connections_.erase(it);
}

void ConnectionPool::close_all(const std::string& reason) {
  for (auto& [_, conn] : connections_) conn->close(reason);
  connections_.clear();
}

}  // namespace weir::cluster
