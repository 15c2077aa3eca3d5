// The composition root of `weir serve`: builds the broker, the network server and the metrics
// endpoint from a configuration, runs them, and stops them in order. Nothing else wires them
// together; src/cli only parses the command line and calls serve().
//
// Time and the data files' file system come in through Environment, so a test or a simulator
// can run the same wiring on its own clock and (fault-injecting) file system.
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "broker/config.h"
#include "storage/dir_lock.h"
#include "storage/file.h"

namespace weir::broker {
class Broker;
struct Catalog;
}
namespace weir::net {
class Server;
}
namespace weir::metrics {
class HttpEndpoint;
}

namespace weir::server {

// What `weir serve` was given on its command line.
struct ServeOptions {
  std::string config_file;
  std::vector<std::string> overrides;  // key=value
  bool dev = false;
  std::string log_level = "info";
};

struct Environment {
  const Clock& clock;
  storage::FileSystem& fs;

  // The real clock and the POSIX file system.
  static Environment system();
};

// Builds the configuration: defaults, then the properties file, then --set overrides, then
// --dev, validated as Kafka's KafkaConfig does (config/load.h). The error names the key or file.
[[nodiscard]] std::expected<broker::Config, std::string> load_config(const ServeOptions& options);

// The start-up check the config module cannot make alone: every name in group.consumer.assignors
// must be a server-side assignor weir has (group/assignor.h); weir cannot load assignor classes,
// so any other name is refused as Kafka refuses a class it cannot find. The error names the key.
[[nodiscard]] std::optional<std::string> check_group_assignors(const config::ConfigValues& values);

// One running broker: data dir lock, broker, listeners, metrics endpoint.
class Server {
 public:
  Server(broker::Config config, Environment env);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Locks the data dir, opens it, binds the listeners and the metrics endpoint. On failure
  // everything started so far is stopped again and the error says what failed.
  [[nodiscard]] std::string start();
  // A flag start() watches while it waits for the controller quorum (a broker of a cluster may
  // wait up to initial.broker.registration.timeout.ms): once non-zero, the wait ends, everything
  // is stopped cleanly and start() returns an error. serve() sets it from SIGINT/SIGTERM.
  void set_interrupt(const std::atomic<int>* flag) { interrupt_ = flag; }
  // Stops accepting, the metrics endpoint (its scrapes post to the shards), the executors, then
  // the broker (checkpoints), and releases the lock. Safe to call twice.
  void stop();

  [[nodiscard]] const broker::Config& config() const noexcept { return config_; }
  [[nodiscard]] std::vector<std::uint16_t> bound_ports() const;
  // The cluster id read from (or written to) the metadata log; after start().
  [[nodiscard]] std::string cluster_id() const;

 private:
  void abandon();  // after a failed start: drop what was built, without a clean close
  // The connection limits as the catalog's dynamic broker configs set them (max.connections,
  // max.connections.per.ip, max.connections.per.ip.overrides, max.connection.creation.rate);
  // from the broker's listener and once after the listeners are bound.
  void apply_connection_limits(const broker::Catalog& c);

  broker::Config config_;
  Environment env_;
  std::optional<storage::DirLock> lock_;
  std::unique_ptr<broker::Broker> broker_;
  std::unique_ptr<net::Server> net_;
  std::unique_ptr<metrics::HttpEndpoint> metrics_;
  bool running_ = false;
  const std::atomic<int>* interrupt_ = nullptr;
  std::mutex limits_mu_;
  bool limits_live_ = false;             // the listeners are bound (guarded by limits_mu_)
  std::int32_t static_max_connections_ = 0;  // max.connections without a dynamic value
};

// `weir serve`: loads the configuration, runs a Server until SIGINT or SIGTERM. Returns the
// process exit code: 0 after a signal, 1 for a bad configuration (as Kafka) or a failed start.
int serve(const ServeOptions& options);

}  // namespace weir::server
