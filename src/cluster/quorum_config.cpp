#include "cluster/quorum_config.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <string>

namespace weir::cluster {
namespace {

constexpr std::string_view kVotersConfig = "controller.quorum.voters";
constexpr std::string_view kBootstrapConfig = "controller.quorum.bootstrap.servers";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_entries(std::string_view list) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view entry = trim(list.substr(0, comma));
    if (!entry.empty()) out.push_back(entry);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

// "host:port" or "[v6]:port" as Kafka's Utils.getHost/getPort split it: the port is what follows
// the last ':', digits only. nullopt host or port when they cannot be read.
struct HostPort {
  std::optional<std::string> host;
  std::optional<std::int64_t> port;
};

HostPort split_host_port(std::string_view text) {
  HostPort out;
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return out;
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size()) return out;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  out.host = std::string(host);
  out.port = value;
  return out;
}

Result<client::Endpoint, client::Error> endpoint_of(std::string_view address, std::string_view whole_entry,
                                                    std::string_view config, std::string_view form) {
  const HostPort hp = split_host_port(address);
  if (!hp.host || hp.host->empty()) {
    return unexpected(client::Error::invalid_argument(fmt::format(
        "Failed to parse host name from {}{} for the configuration {}. Each entry should be in the form {}",
        config == kVotersConfig ? "entry " : "", whole_entry, config, form)));
  }
  if (*hp.port < 0 || *hp.port > 65535) {
    return unexpected(client::Error::invalid_argument(fmt::format("port out of range:{}", *hp.port)));
  }
  return client::Endpoint{*hp.host, static_cast<std::uint16_t>(*hp.port)};
}

}  // namespace

std::vector<ControllerAddress> QuorumConfig::bootstrap_endpoints() const {
  std::vector<ControllerAddress> out;
  if (!bootstrap_servers.empty()) {
    for (const auto& e : bootstrap_servers) out.push_back({-1, e});
  } else {
    for (const auto& v : voters) out.push_back({v.id, v.endpoint});
  }
  return out;
}

Result<std::vector<Voter>, client::Error> parse_quorum_voters(std::string_view text) {
  std::vector<Voter> out;
  for (const std::string_view entry : split_entries(text)) {
    const auto at = entry.find('@');
    if (at == std::string_view::npos || entry.find('@', at + 1) != std::string_view::npos) {
      return unexpected(client::Error::invalid_argument(fmt::format(
          "Invalid configuration value for {}. Each entry should be in the form `{{id}}@{{host}}:{{port}}`.",
          kVotersConfig)));
    }
    const std::string_view id_text = entry.substr(0, at);
    std::int32_t id = 0;
    const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (id_text.empty() || ec != std::errc() || end != id_text.data() + id_text.size()) {
      return unexpected(
          client::Error::invalid_argument(fmt::format("Failed to parse voter ID as an integer from {}", id_text)));
    }
    if (id < 0) {
      return unexpected(client::Error::invalid_argument(
          fmt::format("Invalid voter ID {} in {}: node ids are non-negative", id, kVotersConfig)));
    }
    auto endpoint = endpoint_of(entry.substr(at + 1), entry, kVotersConfig, "`{id}@{host}:{port}`.");
    if (!endpoint) return unexpected(endpoint.error());
    out.push_back({id, *endpoint});
  }
  return out;
}

Result<std::vector<client::Endpoint>, client::Error> parse_quorum_bootstrap_servers(std::string_view text) {
  std::vector<client::Endpoint> out;
  for (const std::string_view entry : split_entries(text)) {
    auto endpoint = endpoint_of(entry, entry, kBootstrapConfig, "\"{host}:{port}\"");
    if (!endpoint) return unexpected(endpoint.error());
    out.push_back(*endpoint);
  }
  return out;
}

Result<QuorumConfig, client::Error> parse_quorum_config(std::string_view voters, std::string_view bootstrap_servers) {
  QuorumConfig config;
  auto v = parse_quorum_voters(voters);
  if (!v) return unexpected(v.error());
  auto b = parse_quorum_bootstrap_servers(bootstrap_servers);
  if (!b) return unexpected(b.error());
  config.voters = std::move(*v);
  config.bootstrap_servers = std::move(*b);
  if (config.voters.empty() && config.bootstrap_servers.empty()) {
    return unexpected(client::Error::invalid_argument(
        fmt::format("A broker in KRaft mode needs {} or {}: both are empty", kBootstrapConfig, kVotersConfig)));
  }
  return config;
}

}  // namespace weir::cluster
