#include "client/bootstrap.h"

#include <fmt/format.h>

#include <charconv>

namespace weir::client {

namespace {

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool valid_host_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '%' || c == ':';
}

Error invalid_url(std::string_view text) {
  return Error::invalid_argument(fmt::format("Invalid url in bootstrap.servers: {}", text));
}

}  // namespace

std::string Endpoint::to_string() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

Result<Endpoint, Error> parse_endpoint(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return unexpected(invalid_url(text));
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return unexpected(invalid_url(text));
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return unexpected(invalid_url(text));  // an IPv6 address needs brackets
  }
  for (char c : host) {
    if (!valid_host_char(c)) return unexpected(invalid_url(text));
  }
  std::uint32_t port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
    return unexpected(invalid_url(text));
  }
  return Endpoint{std::string(host), static_cast<std::uint16_t>(port)};
}

Result<std::vector<Endpoint>, Error> parse_bootstrap(std::string_view list) {
  std::vector<Endpoint> out;
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view entry = trim(list.substr(0, comma));
    if (!entry.empty()) {
      auto e = parse_endpoint(entry);
      if (!e) return unexpected(std::move(e.error()));
      out.push_back(std::move(*e));
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  if (out.empty())
    return unexpected(Error::invalid_argument("No resolvable bootstrap urls given in bootstrap.servers"));
  return out;
}

}  // namespace weir::client
