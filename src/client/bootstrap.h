// Bootstrap server lists: "host:port,host:port" as in Kafka's bootstrap.servers. Hosts may be
// names, IPv4 addresses or bracketed IPv6 addresses ("[::1]:9092"); whitespace around entries is
// ignored and empty entries are skipped. Errors use the wording of Kafka's ConfigException.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "client/errors.h"

namespace weir::client {

struct Endpoint {
  std::string host;  // without brackets for IPv6
  std::uint16_t port = 0;

  bool operator==(const Endpoint&) const = default;
  // "host:port", "[v6]:port" when the host holds a ':'.
  [[nodiscard]] std::string to_string() const;
};

// One "host:port" entry.
[[nodiscard]] Result<Endpoint, Error> parse_endpoint(std::string_view text);

// A comma-separated list with at least one entry.
[[nodiscard]] Result<std::vector<Endpoint>, Error> parse_bootstrap(std::string_view list);

}  // namespace weir::client
