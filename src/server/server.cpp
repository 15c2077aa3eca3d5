#include "server/server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <future>
#include <thread>
#include <utility>

#include "base/log.h"
#include "broker/broker.h"
#include "broker/metrics_report.h"
#include "config/load.h"
#include "group/assignor.h"
#include "metrics/http_endpoint.h"
#include "net/connection_quotas.h"
#include "net/fd_limit.h"
#include "net/server.h"
#include "server/quorum.h"
#include "server/replica_channel.h"

namespace weir::server {

namespace {

// The listeners and their limits. The file descriptor limit is raised to the hard limit first,
// and max.connections derived from it unless configured.
net::ServerOptions net_options(const broker::Config& config) {
  net::ServerOptions so;
  for (const auto& l : config.listeners) so.listeners.push_back({l.name, l.host, l.port});
  so.threads = config.cores;
  so.socket_request_max_bytes = config.socket_request_max_bytes;
  so.max_inflight_requests_per_connection = config.max_inflight_requests_per_connection;
  so.socket_send_buffer_bytes = config.socket_send_buffer_bytes;
  so.socket_receive_buffer_bytes = config.socket_receive_buffer_bytes;
  const net::FdLimit fds = net::raise_fd_limit();
  so.max_connections = config.max_connections.value_or(net::default_max_connections(fds.soft));
  so.max_connections_per_ip = config.max_connections_per_ip;
  so.max_connections_per_ip_overrides = config.max_connections_per_ip_overrides;
  so.max_connection_creation_rate = config.max_connection_creation_rate;
  so.connections_max_idle_ms = config.connections_max_idle_ms;
  so.partial_request_timeout_ms = config.partial_request_timeout_ms;
  so.queued_max_request_bytes = config.queued_max_request_bytes;
  spdlog::info("event=limits {} {} {} {} {}", log::kv("open_files", fds.soft), log::kv("open_files_hard", fds.hard),
               log::kv("raised", fds.raised), log::kv("max.connections", so.max_connections),
               log::kv("queued.max.request.bytes", so.queued_max_request_bytes));
  return so;
}

}  // namespace

Environment Environment::system() { return Environment{SystemClock::instance(), storage::PosixFileSystem::instance()}; }

std::expected<broker::Config, std::string> load_config(const ServeOptions& options) {
  auto config = config::load_broker_config(options.config_file, options.overrides);
  if (!config) return std::unexpected(config.error());
  if (auto error = check_group_assignors(config->typed())) return std::unexpected(std::move(*error));
  config->dev_mode = options.dev;
  return std::move(*config);
}

std::optional<std::string> check_group_assignors(const config::ConfigValues& values) {
  for (const std::string& name : values.get_list("group.consumer.assignors")) {
    if (group::find_assignor(name) == nullptr) {
      return fmt::format("Invalid value {} for configuration group.consumer.assignors: Class {} cannot be found", name,
                         name);
    }
  }
  return std::nullopt;
}

Server::Server(broker::Config config, Environment env) : config_(std::move(config)), env_(env) {}

Server::~Server() { stop(); }

std::vector<std::uint16_t> Server::bound_ports() const {
  return net_ ? net_->bound_ports() : std::vector<std::uint16_t>{};
}

std::string Server::cluster_id() const { return broker_ ? broker_->node().cluster_id : std::string(); }

std::string Server::start() {
  // The lock comes first: nothing may read or write the dir while another process owns it.
  auto lock = storage::DirLock::acquire(config_.log_dir);
  if (!lock) return lock.error();
  lock_.emplace(std::move(*lock));

  net::ServerOptions so = net_options(config_);
  static_max_connections_ = so.max_connections;
  // The broker reports the connection cap in force (DescribeConfigs), derived or configured.
  config_.max_connections = so.max_connections;
  broker_ = std::make_unique<broker::Broker>(config_, env_.clock, env_.fs);
  net_ = std::make_unique<net::Server>(so, *broker_);
  broker_->on_broker_configs([this](const broker::Catalog& c) { apply_connection_limits(c); });
  broker_->attach(net_->executors());
  if (config_.broker_only) {
    broker_->set_quorum_link(make_quorum_link(config_, broker_->node(), broker_->shards().controller()));
    broker_->set_replica_channels(make_replica_channels(config_.node_id));
    broker_->set_peer_channels(make_peer_channels(config_.node_id));
  }
  // A broker that failed to open its dir is not stopped: stop() would close the logs cleanly
  // (checkpoints, clean-shutdown marker) over a half-recovered dir.
  if (auto err = broker_->start(); !err.empty()) {
    abandon();
    return err;
  }
  if (auto err = net_->start(); !err.empty()) {
    abandon();
    return err;
  }
  running_ = true;
  {
    std::lock_guard live(limits_mu_);
    limits_live_ = true;
  }
  apply_connection_limits(*broker_->catalog());  // dynamic values from before a restart
  if (!net_->bound_ports().empty()) broker_->set_bound_port(net_->bound_ports().front());
  if (broker::QuorumLink* quorum = broker_->quorum()) {
    // As a Kafka broker: registered, caught up with the metadata and unfenced before the start
    // counts as done (initial.broker.registration.timeout.ms).
    broker_->start_quorum();
    const std::int64_t timeout = config_.typed().get_int("initial.broker.registration.timeout.ms");
    auto running = boost::asio::co_spawn(broker_->shards().controller(), quorum->wait_until_running(timeout),
                                         boost::asio::use_future);
    bool interrupted = false;
    while (running.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      if (!interrupted && interrupt_ != nullptr && interrupt_->load() != 0) {
        // The link stops; its wait ends at its next step and the start stops cleanly below.
        interrupted = true;
        boost::asio::co_spawn(broker_->shards().controller(), quorum->shutdown(false, 0), boost::asio::detached);
      }
    }
    if (interrupted) {
      (void)running.get();
      stop();
      return "interrupted while waiting for the controller quorum";
    }
    if (!running.get()) {
      stop();
      return fmt::format(
          "the broker did not register with the controller quorum and catch up with its metadata within "
          "initial.broker.registration.timeout.ms={}",
          timeout);
    }
  }

  // metrics.listener: Prometheus scrapes, served on a thread of their own (see metrics_report.h).
  if (const std::string listener = config_.typed().get_string("metrics.listener"); !listener.empty()) {
    metrics::HttpEndpointOptions mo;
    if (auto err = metrics::parse_host_port(listener, mo.host, mo.port); !err.empty()) {
      stop();
      return "metrics.listener: " + err;
    }
    metrics_ = std::make_unique<metrics::HttpEndpoint>(
        mo, [b = broker_.get(), n = net_.get()]() { return broker::render_metrics(*b, *n); });
    if (auto err = metrics_->start(); !err.empty()) {
      stop();
      return err;
    }
    spdlog::info("event=metrics_listening host={} port={}", mo.host, metrics_->port());
  }
  return {};
}

void Server::abandon() {
  net_.reset();
  broker_.reset();
  lock_.reset();
}

void Server::stop() {
  if (!running_) {
    lock_.reset();
    return;
  }
  running_ = false;
  if (broker::QuorumLink* quorum = broker_ ? broker_->quorum() : nullptr) {
    // Controlled shutdown first (the controller moves leaderships away while this broker still
    // serves), then the quorum link's tasks stop, while the executors still run.
    const bool controlled = config_.typed().get_bool("controlled.shutdown.enable");
    auto done = boost::asio::co_spawn(broker_->shards().controller(), quorum->shutdown(controlled, 30000),
                                      boost::asio::use_future);
    done.wait();
    auto fetchers = boost::asio::co_spawn(broker_->shards().controller(), broker_->stop_replication(),
                                          boost::asio::use_future);
    fetchers.wait();
  }
  if (metrics_) metrics_->stop();  // before the shards stop: a scrape posts to them
  {
    std::lock_guard lock(limits_mu_);
    limits_live_ = false;
  }
  if (net_) net_->stop();
  if (broker_) broker_->stop();
  metrics_.reset();
  net_.reset();
  broker_.reset();
  lock_.reset();
}

void Server::apply_connection_limits(const broker::Catalog& c) {
  std::lock_guard lock(limits_mu_);
  if (!limits_live_) return;
  const auto int_value = [&](std::string_view key) {
    return static_cast<std::int32_t>(std::get<std::int64_t>(broker_->broker_value(c, key)));
  };
  // Without a dynamic value, max.connections is what start-up chose (weir's derived default
  // unless server.properties sets it).
  const std::int32_t max_connections =
      c.dynamic_broker_value("max.connections") != nullptr ? int_value("max.connections") : static_max_connections_;
  const std::string overrides_text = std::get<std::string>(broker_->broker_value(c, "max.connections.per.ip.overrides"));
  auto overrides = config::parse_per_ip_overrides(overrides_text);
  if (!overrides) {
    spdlog::warn("event=dynamic_config_ignored key=max.connections.per.ip.overrides value=\"{}\" error=\"{}\"",
                 overrides_text, overrides.error());
    overrides = config_.max_connections_per_ip_overrides;
  }
  if (auto err = net_->update_limits(max_connections, int_value("max.connections.per.ip"), *overrides,
                                     int_value("max.connection.creation.rate"));
      !err.empty()) {
    spdlog::warn("event=dynamic_config_ignored key=max.connections.per.ip.overrides error=\"{}\"", err);
  }
}

int serve(const ServeOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  // Every logger, the component loggers of log::get() included, at the chosen level.
  if (!log::init(options.log_level)) spdlog::warn("unknown log level {} (using info)", options.log_level);

  // Parsed and validated once, here: a value Kafka would refuse stops the start (exit 1).
  auto config = load_config(options);
  if (!config) {
    spdlog::error("config error=\"{}\"", config.error());
    return 1;
  }
  for (const auto& k : config->unknown_keys()) spdlog::warn("config unknown key={} (ignored)", k);
  if (options.dev) spdlog::warn("dev mode: acks=all produces are not fsync'd before they are acknowledged");

  // Signals are caught from here on: one during the start (a broker waiting for its controller
  // quorum, a large log dir being recovered) stops the broker cleanly once it can.
  std::atomic<int> signal_number{0};
  boost::asio::io_context signals_ctx;
  boost::asio::signal_set signals(signals_ctx, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (!ec) signal_number.store(sig);
  });
  std::thread signal_thread([&signals_ctx]() { signals_ctx.run(); });
  auto join_signals = [&]() {
    boost::asio::post(signals_ctx, [&signals]() { signals.cancel(); });
    signal_thread.join();
  };

  Server server(std::move(*config), Environment::system());
  server.set_interrupt(&signal_number);
  if (auto err = server.start(); !err.empty()) {
    join_signals();
    if (signal_number.load() != 0) {
      spdlog::info("shutting down signal={} (during start-up: {})", signal_number.load(), err);
      spdlog::info("stopped");
      return 0;
    }
    spdlog::error("startup failed error=\"{}\"", err);
    return 1;
  }
  const auto& cfg = server.config();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  std::string where;
  for (const auto& l : cfg.listeners) {
    if (!where.empty()) where += ' ';
    where += l.name + "://" + l.host + ":" + std::to_string(l.port);
  }
  spdlog::info("weir started node.id={} cluster.id={} listeners=\"{}\" log.dir={} cores={} startup_ms={}", cfg.node_id,
               server.cluster_id(), where, cfg.log_dir, cfg.cores, ms.count());

  signal_thread.join();  // returns once the signal was handled (the context's only work)
  spdlog::info("shutting down signal={}", signal_number.load());
  server.stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace weir::server
