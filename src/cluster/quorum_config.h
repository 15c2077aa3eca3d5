// Where the KRaft controllers are and how to talk to them: Kafka's controller.quorum.* configs as a
// broker in process.roles=broker reads them.
//
//   controller.quorum.voters             "id@host:port,..."  the static voter set
//   controller.quorum.bootstrap.servers  "host:port,..."     any controllers (KIP-853, dynamic quorums)
//
// Either or both may be given; as in Kafka 4.3, the bootstrap servers are the ones contacted first
// when set (bootstrap_endpoints()), the voters otherwise. Errors carry Kafka's ConfigException text
// (checked against kafka-raft-4.3.1.jar's QuorumConfig). Deliberate difference: an empty host or a
// negative voter id is refused here (Kafka accepts both and fails later, on connect).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "client/bootstrap.h"
#include "client/errors.h"

namespace weir::cluster {

struct Voter {
  std::int32_t id = -1;
  client::Endpoint endpoint;
  bool operator==(const Voter&) const = default;
};

// An endpoint to ask, with the node id when known (-1 for a bootstrap server).
struct ControllerAddress {
  std::int32_t id = -1;
  client::Endpoint endpoint;
  bool operator==(const ControllerAddress&) const = default;
};

struct QuorumConfig {
  std::vector<Voter> voters;                        // controller.quorum.voters
  std::vector<client::Endpoint> bootstrap_servers;  // controller.quorum.bootstrap.servers
  std::int64_t fetch_timeout_ms = 2000;             // controller.quorum.fetch.timeout.ms
  std::int64_t request_timeout_ms = 2000;           // controller.quorum.request.timeout.ms
  std::int64_t retry_backoff_ms = 20;               // controller.quorum.retry.backoff.ms

  // The controllers to ask before a leader is known: the bootstrap servers when given, else the
  // voters. Never empty for a config that parse_quorum_config accepted.
  [[nodiscard]] std::vector<ControllerAddress> bootstrap_endpoints() const;
};

[[nodiscard]] Result<std::vector<Voter>, client::Error> parse_quorum_voters(std::string_view text);
[[nodiscard]] Result<std::vector<client::Endpoint>, client::Error> parse_quorum_bootstrap_servers(
    std::string_view text);
// Both lists (either may be empty, not both); the timeouts keep their defaults.
[[nodiscard]] Result<QuorumConfig, client::Error> parse_quorum_config(std::string_view voters,
                                                                      std::string_view bootstrap_servers);

}  // namespace weir::cluster
