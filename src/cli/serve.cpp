#include "cli/serve.h"

#include <chrono>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "base/log.h"
#include "broker/broker.h"
#include "broker/metrics_report.h"
#include "broker/net_config.h"
#include "metrics/http_endpoint.h"
#include "net/fd_limit.h"
#include "net/server.h"

namespace weir::cli {

int serve(const ServeOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  // Every logger, the component loggers of log::get() included, at the chosen level.
  const bool level_known = log::init(options.log_level);
  if (!level_known) spdlog::warn("unknown log level {} (using info)", options.log_level);

  broker::Config config;
  if (!options.config_file.empty()) {
    if (auto r = config.load_properties_file(options.config_file); !r) {
      spdlog::error("config error=\"{}\"", r.error());
      return 2;
    }
  }
  for (const auto& o : options.overrides) {
    if (auto r = config.set(o); !r) {
      spdlog::error("config error=\"{}\"", r.error());
      return 2;
    }
  }
  config.dev_mode = options.dev;
  if (auto r = config.finalize(); !r) {
    spdlog::error("config error=\"{}\"", r.error());
    return 2;
  }
  for (const auto& k : config.unknown_keys()) spdlog::warn("config unknown key={} (ignored)", k);
  if (options.dev) spdlog::warn("dev mode: acks=all produces are not fsync'd before they are acknowledged");

  broker::Broker broker(config);
  net::ServerOptions so;
  for (const auto& l : config.listeners) so.listeners.push_back({l.name, l.host, l.port});
  so.threads = config.cores;
  so.socket_request_max_bytes = config.socket_request_max_bytes;
  so.max_inflight_requests_per_connection = config.max_inflight_requests_per_connection;
  so.socket_send_buffer_bytes = config.socket_send_buffer_bytes;
  so.socket_receive_buffer_bytes = config.socket_receive_buffer_bytes;
  // Connections and request memory: the file descriptor limit raised to the hard limit, and
  // max.connections derived from it unless configured.
  const broker::NetLimits limits = *broker::net_limits(config);  // validated by finalize()
  const net::FdLimit fds = net::raise_fd_limit();
  so.max_connections = limits.max_connections.value_or(net::default_max_connections(fds.soft));
  so.max_connections_per_ip = limits.max_connections_per_ip;
  so.max_connections_per_ip_overrides = limits.max_connections_per_ip_overrides;
  so.max_connection_creation_rate = limits.max_connection_creation_rate;
  so.connections_max_idle_ms = limits.connections_max_idle_ms;
  so.partial_request_timeout_ms = limits.partial_request_timeout_ms;
  so.queued_max_request_bytes = limits.queued_max_request_bytes;
  spdlog::info("event=limits {} {} {} {} {}", log::kv("open_files", fds.soft), log::kv("open_files_hard", fds.hard),
               log::kv("raised", fds.raised), log::kv("max.connections", so.max_connections),
               log::kv("queued.max.request.bytes", so.queued_max_request_bytes));
  net::Server server(so, broker);
  broker.attach(server.executors());
  if (auto err = broker.start(); !err.empty()) {
    spdlog::error("startup failed error=\"{}\"", err);
    return 1;
  }
  if (auto err = server.start(); !err.empty()) {
    spdlog::error("startup failed error=\"{}\"", err);
    return 1;
  }
  if (!server.bound_ports().empty()) broker.set_bound_port(server.bound_ports().front());
  // metrics.listener: Prometheus scrapes, served on a thread of their own (see metrics_report.h).
  std::unique_ptr<metrics::HttpEndpoint> metrics_endpoint;
  if (const std::string listener = config.get("metrics.listener"); !listener.empty()) {
    metrics::HttpEndpointOptions mo;
    if (auto err = metrics::parse_host_port(listener, mo.host, mo.port); !err.empty()) {
      spdlog::error("config error=\"metrics.listener: {}\"", err);
      server.stop();
      broker.stop();
      return 2;
    }
    metrics_endpoint = std::make_unique<metrics::HttpEndpoint>(
        mo, [&broker, &server]() { return broker::render_metrics(broker, server); });
    if (auto err = metrics_endpoint->start(); !err.empty()) {
      spdlog::error("startup failed error=\"{}\"", err);
      server.stop();
      broker.stop();
      return 1;
    }
    spdlog::info("event=metrics_listening host={} port={}", mo.host, metrics_endpoint->port());
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  std::string where;
  for (const auto& l : config.listeners) where += l.name + "://" + l.host + ":" + std::to_string(l.port) + " ";
  spdlog::info("weir started node.id={} cluster.id={} listeners=\"{}\" log.dir={} cores={} startup_ms={}",
               config.node_id, broker.node().cluster_id, where.empty() ? where : where.substr(0, where.size() - 1),
               config.log_dir, config.cores, ms.count());

  boost::asio::io_context signals_ctx;
  boost::asio::signal_set signals(signals_ctx, SIGINT, SIGTERM);
  int signal_number = 0;
  signals.async_wait([&](const boost::system::error_code&, int sig) { signal_number = sig; });
  signals_ctx.run();
  spdlog::info("shutting down signal={}", signal_number);
  if (metrics_endpoint) metrics_endpoint->stop();  // before the shards stop: a scrape posts to them
  server.stop();
  broker.stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace weir::cli
