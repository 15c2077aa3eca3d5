// Connection limits with Kafka's meaning (ConnectionQuotas in Kafka's SocketServer):
//
//   max.connections               broker-wide; when reached, the acceptor stops accepting until a
//                                 connection closes (new clients wait in the listen backlog).
//   max.connection.creation.rate  broker-wide connections accepted per second; above it the
//                                 acceptor waits before the next accept.
//   max.connections.per.ip        per client address; a connection over it is accepted and closed
//   max.connections.per.ip.overrides  at once ("host:count,host:count", count may be 0).
//
// weir's default for max.connections is derived from RLIMIT_NOFILE (default_max_connections).
// Pure bookkeeping: the caller passes the time; thread-safe (accepts happen on one executor,
// releases on any).
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weir::net {

struct ConnectionLimits {
  std::int32_t max_connections = 2147483647;
  std::int32_t max_connections_per_ip = 2147483647;
  // By IP address (textual, as asio prints it).
  std::map<std::string, std::int32_t, std::less<>> max_connections_per_ip_overrides;
  std::int32_t max_connection_creation_rate = 2147483647;  // per second
};

// weir's max.connections when it is not set: half the file descriptors, the other half left
// for segment and index files, the metadata log, listeners and the metrics endpoint.
std::int32_t default_max_connections(std::uint64_t nofile_limit);

class ConnectionQuotas {
 public:
  explicit ConnectionQuotas(ConnectionLimits limits);

  // False while max.connections connections are open.
  [[nodiscard]] bool slot_available() const;
  // Milliseconds to wait before the next accept to stay under max.connection.creation.rate
  // (0: accept now, and the accept is counted against the rate).
  [[nodiscard]] std::int64_t creation_delay_ms(std::int64_t now_ms);

  enum class Admission { kAccepted, kPerIpLimit };
  // Counts a new connection from `ip`, or refuses it (not counted) if `ip` is at its limit.
  Admission admit(std::string_view ip);
  // A counted connection from `ip` closed. True if max.connections had been reached (an
  // acceptor may be waiting for this slot).
  bool release(std::string_view ip);

  [[nodiscard]] std::int32_t limit_for(std::string_view ip) const;
  [[nodiscard]] std::int64_t total() const;
  [[nodiscard]] std::int32_t count_for(std::string_view ip) const;
  [[nodiscard]] ConnectionLimits limits() const;
  // New limits (dynamic broker configs). Open connections stay; the next accepts and admissions
  // follow the new limits. True if max.connections grew (an acceptor may be waiting for it).
  bool update(ConnectionLimits limits);

 private:
  [[nodiscard]] std::int32_t limit_for_locked(std::string_view ip) const;

  ConnectionLimits limits_;  // guarded by mutex_
  mutable std::mutex mutex_;
  std::map<std::string, std::int32_t, std::less<>> per_ip_;
  std::int64_t total_ = 0;
  // Token bucket of max.connection.creation.rate accepts, refilled continuously, at most one
  // second's worth saved up.
  double tokens_;
  std::int64_t refilled_at_ms_ = -1;
};

}  // namespace weir::net
