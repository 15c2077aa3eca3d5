#include "net/server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <csignal>

#include "base/log.h"
#include "net/connection.h"

namespace weir::net {

namespace asio = boost::asio;

namespace {

// An IPv4 address seen through an IPv6 socket (::ffff:a.b.c.d) as the IPv4 address.
asio::ip::address unmapped(const asio::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  return a;
}

}  // namespace

std::int32_t send_buffer_bytes_for(std::int32_t configured, const asio::ip::address& local,
                                   const asio::ip::address& remote) {
  if (configured > 0) return configured;
  const asio::ip::address peer = unmapped(remote);
  const bool same_host = peer.is_loopback() || (!peer.is_unspecified() && peer == unmapped(local));
  return same_host ? kSameHostSendBufferBytes : 0;
}

Server::Server(ServerOptions options, RequestSink& sink) : options_(std::move(options)), sink_(sink) {
  // sendfile(2) to a connection the client has reset raises SIGPIPE (it takes no MSG_NOSIGNAL),
  // which would end the process; the write then fails with EPIPE and closes the connection.
  std::signal(SIGPIPE, SIG_IGN);
  const int n = std::max(1, options_.threads);
  for (int i = 0; i < n; ++i) {
    contexts_.push_back(std::make_unique<asio::io_context>(1));
    stats_.push_back(std::make_unique<ShardStats>());
    guards_.push_back(
        std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(contexts_.back()->get_executor()));
  }
  const std::int64_t max_frame = std::max<std::int64_t>(options_.socket_request_max_bytes, 1);
  const std::int64_t limit = std::max(options_.queued_max_request_bytes, max_frame);
  budget_ = std::make_shared<MemoryBudget>(limit, std::min(limit, std::max(max_frame, limit / 4)));
}

Server::~Server() { stop(); }

std::expected<ConnectionLimits, std::string> Server::resolved(
    std::int32_t max_connections, std::int32_t max_connections_per_ip,
    const std::vector<std::pair<std::string, std::int32_t>>& overrides, std::int32_t max_connection_creation_rate) {
  ConnectionLimits limits;
  limits.max_connections = max_connections;
  limits.max_connections_per_ip = max_connections_per_ip;
  limits.max_connection_creation_rate = max_connection_creation_rate;
  for (const auto& [host, count] : overrides) {
    boost::system::error_code ec;
    const auto addr = asio::ip::make_address(host, ec);
    if (!ec) {
      limits.max_connections_per_ip_overrides[addr.to_string()] = count;
      continue;
    }
    asio::ip::tcp::resolver resolver(*contexts_[0]);
    auto results = resolver.resolve(host, "", ec);
    if (ec || results.empty()) {
      return std::unexpected("cannot resolve host " + host + " of max.connections.per.ip.overrides");
    }
    for (const auto& r : results) limits.max_connections_per_ip_overrides[r.endpoint().address().to_string()] = count;
  }
  return limits;
}

std::string Server::resolve_limits() {
  auto limits = resolved(options_.max_connections, options_.max_connections_per_ip,
                         options_.max_connections_per_ip_overrides, options_.max_connection_creation_rate);
  if (!limits) return limits.error();
  quotas_ = std::make_unique<ConnectionQuotas>(std::move(*limits));
  return {};
}

std::string Server::update_limits(std::int32_t max_connections, std::int32_t max_connections_per_ip,
                                  const std::vector<std::pair<std::string, std::int32_t>>& overrides,
                                  std::int32_t max_connection_creation_rate) {
  if (!quotas_) return "the server has not started";
  auto limits = resolved(max_connections, max_connections_per_ip, overrides, max_connection_creation_rate);
  if (!limits) return limits.error();
  const ConnectionLimits before = quotas_->limits();
  if (before.max_connections == limits->max_connections && before.max_connections_per_ip == limits->max_connections_per_ip &&
      before.max_connections_per_ip_overrides == limits->max_connections_per_ip_overrides &&
      before.max_connection_creation_rate == limits->max_connection_creation_rate) {
    return {};
  }
  spdlog::info("event=connection_limits_updated {} {} {} {}", log::kv("max.connections", limits->max_connections),
               log::kv("max.connections.per.ip", limits->max_connections_per_ip),
               log::kv("max.connections.per.ip.overrides", limits->max_connections_per_ip_overrides.size()),
               log::kv("max.connection.creation.rate", limits->max_connection_creation_rate));
  quotas_->update(std::move(*limits));
  wake_acceptors();  // a paused acceptor looks again under the new limits
  return {};
}

std::string Server::start() {
  if (auto err = resolve_limits(); !err.empty()) return err;
  for (const auto& l : options_.listeners) {
    boost::system::error_code ec;
    asio::ip::address addr =
        l.host.empty() ? asio::ip::address(asio::ip::address_v4::any()) : asio::ip::make_address(l.host, ec);
    if (ec) {
      // A host name: resolve it.
      asio::ip::tcp::resolver resolver(*contexts_[0]);
      auto results = resolver.resolve(l.host, std::to_string(l.port), ec);
      if (ec || results.empty()) return "cannot resolve listener host " + l.host;
      addr = results.begin()->endpoint().address();
    }
    auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(*contexts_[0]);
    asio::ip::tcp::endpoint ep(addr, l.port);
    acceptor->open(ep.protocol(), ec);
    if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor->bind(ep, ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return "cannot listen on " + l.name + "://" + l.host + ":" + std::to_string(l.port) + ": " + ec.message();
    auto* raw = acceptor.get();
    acceptors_.push_back(std::move(acceptor));
    asio::co_spawn(*contexts_[0], accept_loop(*raw, l.name), asio::detached);
  }
  running_threads_ = contexts_.size();
  for (auto& ctx : contexts_) {
    threads_.emplace_back([this, c = ctx.get()]() {
      c->run();
      running_threads_.fetch_sub(1);
    });
  }
  return {};
}

std::vector<asio::any_io_executor> Server::executors() const {
  std::vector<asio::any_io_executor> out;
  for (const auto& c : contexts_) out.emplace_back(c->get_executor());
  return out;
}

std::vector<std::uint16_t> Server::bound_ports() const {
  std::vector<std::uint16_t> out;
  for (const auto& a : acceptors_) {
    boost::system::error_code ec;
    auto ep = a->local_endpoint(ec);
    out.push_back(ec ? 0 : ep.port());
  }
  return out;
}

asio::awaitable<void> Server::accept_loop(asio::ip::tcp::acceptor& acceptor, std::string listener) {
  // Runs on executor 0, as do the other accept loops, wake_acceptors() and stop()'s closing.
  asio::steady_timer pause(acceptor.get_executor());
  accept_timers_.push_back(&pause);
  struct Forget {
    std::vector<asio::steady_timer*>& timers;
    asio::steady_timer* timer;
    ~Forget() { std::erase(timers, timer); }
  } forget{accept_timers_, &pause};
  ShardStats& st = *stats_[0];
  const auto now_ms = []() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  std::chrono::milliseconds backoff{0};
  boost::system::error_code ec;
  while (!stopped_) {
    if (!quotas_->slot_available()) {
      // As Kafka: stop accepting until a connection closes; new clients wait in the backlog.
      st.max_connections_pauses.inc();
      if (st.accept_log.allow(now_ms())) {
        spdlog::warn("event=accept_paused {} {} {} dropped_lines={}", log::kv("listener", listener),
                     log::kv("reason", "max.connections"), log::kv("max.connections", quotas_->limits().max_connections),
                     st.accept_log.take_dropped());
      }
      pause.expires_at(asio::steady_timer::time_point::max());
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (const std::int64_t delay_ms = quotas_->creation_delay_ms(now_ms()); delay_ms > 0) {
      st.creation_rate_pauses.inc();
      pause.expires_after(std::chrono::milliseconds(delay_ms));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    const std::size_t target = next_context_.fetch_add(1) % contexts_.size();
    asio::ip::tcp::socket socket =
        co_await acceptor.async_accept(*contexts_[target], asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || stopped_) co_return;
      // EMFILE / ENFILE above all: the pending connection stays in the backlog and accept(2)
      // would fail again at once, so wait (longer each time) instead of spinning.
      st.accept_errors.inc();
      backoff = std::clamp(backoff * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
      if (st.accept_log.allow(now_ms())) {
        spdlog::warn("event=accept_failed {} {} {} {} dropped_lines={}", log::kv("listener", listener),
                     log::kv("error", ec.message()), log::kv("errno", ec.value()), log::kv("retry_ms", backoff.count()),
                     st.accept_log.take_dropped());
      }
      pause.expires_after(backoff);
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    backoff = std::chrono::milliseconds(0);
    ClientInfo client;
    auto remote = socket.remote_endpoint(ec);
    const bool remote_known = !ec;
    if (!ec) {
      client.host = remote.address().to_string();
      client.port = remote.port();
    }
    if (quotas_->admit(client.host) == ConnectionQuotas::Admission::kPerIpLimit) {
      st.per_ip_rejections.inc();
      if (st.accept_log.allow(now_ms())) {
        spdlog::info("event=connection_rejected {} {} {} dropped_lines={}", log::kv("listener", listener),
                     log::kv("client", client.host),
                     log::kv("reason", fmt::format("address already has the configured maximum of {} connections "
                                                   "(max.connections.per.ip)",
                                                   quotas_->limit_for(client.host))),
                     st.accept_log.take_dropped());
      }
      socket.close(ec);
      continue;
    }
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
    std::int32_t send_buffer = options_.socket_send_buffer_bytes;
    if (const auto local = socket.local_endpoint(ec); remote_known && !ec) {
      send_buffer = send_buffer_bytes_for(send_buffer, local.address(), remote.address());
    }
    if (send_buffer > 0) {
      socket.set_option(asio::socket_base::send_buffer_size(send_buffer), ec);
    }
    if (options_.socket_receive_buffer_bytes > 0) {
      socket.set_option(asio::socket_base::receive_buffer_size(options_.socket_receive_buffer_bytes), ec);
    }
    client.listener = listener;
    client.connection_id = next_connection_id_.fetch_add(1);
    client.shard = target;
    ConnectionSettings settings;
    settings.max_request_bytes = options_.socket_request_max_bytes;
    settings.max_inflight = options_.max_inflight_requests_per_connection;
    settings.idle_timeout_ms = options_.connections_max_idle_ms;
    settings.partial_request_timeout_ms = options_.partial_request_timeout_ms;
    auto conn =
        std::make_shared<Connection>(std::move(socket), sink_, client, settings, budget_, *this, *stats_[target]);
    register_connection(conn);
    conn->start();
  }
}

void Server::wake_acceptors() {
  asio::post(*contexts_[0], [this]() {
    for (auto* t : accept_timers_) t->cancel();
  });
}

void Server::register_connection(const std::shared_ptr<Connection>& c) {
  std::lock_guard lock(connections_mutex_);
  std::erase_if(connections_, [](const std::weak_ptr<Connection>& w) { return w.expired(); });
  connections_.push_back(c);
}

void Server::reclaim_stalled_frames() {
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  std::int64_t last = last_reclaim_sweep_ms_.load();
  if (last >= 0 && now - last < Connection::kStalledFrameMs / 4) return;
  if (!last_reclaim_sweep_ms_.compare_exchange_strong(last, now)) return;  // another thread sweeps
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard lock(connections_mutex_);
    for (auto& w : connections_) {
      if (auto c = w.lock()) live.push_back(std::move(c));
    }
  }
  for (auto& c : live) c->reclaim_if_stalled();
}

void Server::unregister_connection(std::uint64_t id, const std::string& host) {
  {
    std::lock_guard lock(connections_mutex_);
    std::erase_if(connections_, [id](const std::weak_ptr<Connection>& w) {
      auto c = w.lock();
      return !c || c->id() == id;
    });
  }
  if (quotas_->release(host)) wake_acceptors();
}

void Server::stop() {
  std::lock_guard stop_lock(stop_mutex_);
  if (stopped_.exchange(true)) return;
  for (auto& a : acceptors_) {
    asio::post(a->get_executor(), [acc = a.get()]() {
      boost::system::error_code ec;
      acc->close(ec);
    });
  }
  wake_acceptors();  // a paused accept loop sees stopped_ and ends
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard lock(connections_mutex_);
    for (auto& w : connections_) {
      if (auto c = w.lock()) live.push_back(c);
    }
  }
  for (auto& c : live) c->close();
  for (auto& g : guards_) g->reset();
  // In-flight requests get a moment to finish; whatever still waits after that (a long-polling
  // fetch, work posted to an executor that has already stopped) is abandoned: its client's
  // connection is closed and nothing unacknowledged was promised. The executors keep other work
  // (the broker's timers), so the wait ends when no request is left, not when they run dry.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.shutdown_grace_ms);
  while (in_flight_requests_.load() > 0 && running_threads_.load() > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto& ctx : contexts_) ctx->stop();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  budget_->close();  // frames released from now on must not post to the stopped executors
}

void Server::wait() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

}  // namespace weir::net
