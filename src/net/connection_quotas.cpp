#include "net/connection_quotas.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/assert.h"

namespace weir::net {


std::int32_t default_max_connections(std::uint64_t nofile_limit) {
  const std::uint64_t half = nofile_limit / 2;
  return static_cast<std::int32_t>(
      std::clamp<std::uint64_t>(half, 1, static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())));
}

ConnectionQuotas::ConnectionQuotas(ConnectionLimits limits)
    : limits_(std::move(limits)), tokens_(static_cast<double>(limits_.max_connection_creation_rate)) {
  WEIR_ASSERT(limits_.max_connections >= 0 && limits_.max_connections_per_ip >= 0 &&
              limits_.max_connection_creation_rate >= 0);
}

bool ConnectionQuotas::slot_available() const {
  std::lock_guard lock(mutex_);
  return total_ < limits_.max_connections;
}

std::int64_t ConnectionQuotas::creation_delay_ms(std::int64_t now_ms) {
  std::lock_guard lock(mutex_);
  const auto rate = static_cast<double>(limits_.max_connection_creation_rate);
  if (limits_.max_connection_creation_rate == std::numeric_limits<std::int32_t>::max()) return 0;
  if (refilled_at_ms_ >= 0 && now_ms > refilled_at_ms_) {
    tokens_ = std::min(rate, tokens_ + static_cast<double>(now_ms - refilled_at_ms_) * rate / 1000.0);
  }
  if (now_ms > refilled_at_ms_) refilled_at_ms_ = now_ms;
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return 0;
  }
  if (rate <= 0) return 1000;  // a rate of 0 admits nothing; look again in a second
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((1.0 - tokens_) * 1000.0 / rate)));
}

std::int32_t ConnectionQuotas::limit_for(std::string_view ip) const {
  std::lock_guard lock(mutex_);
  return limit_for_locked(ip);
}

ConnectionLimits ConnectionQuotas::limits() const {
  std::lock_guard lock(mutex_);
  return limits_;
}

bool ConnectionQuotas::update(ConnectionLimits limits) {
  WEIR_ASSERT(limits.max_connections >= 0 && limits.max_connections_per_ip >= 0 &&
              limits.max_connection_creation_rate >= 0);
  std::lock_guard lock(mutex_);
  const bool grew = limits.max_connections > limits_.max_connections;
  if (limits.max_connection_creation_rate != limits_.max_connection_creation_rate) {
    tokens_ = std::min(tokens_, static_cast<double>(limits.max_connection_creation_rate));
  }
  limits_ = std::move(limits);
  return grew;
}

std::int32_t ConnectionQuotas::limit_for_locked(std::string_view ip) const {
  if (auto it = limits_.max_connections_per_ip_overrides.find(ip);
      it != limits_.max_connections_per_ip_overrides.end()) {
    return it->second;
  }
  return limits_.max_connections_per_ip;
}

ConnectionQuotas::Admission ConnectionQuotas::admit(std::string_view ip) {
  std::lock_guard lock(mutex_);
  const std::int32_t limit = limit_for_locked(ip);
  auto it = per_ip_.find(ip);
  const std::int32_t count = it == per_ip_.end() ? 0 : it->second;
  if (count >= limit) return Admission::kPerIpLimit;
  if (it == per_ip_.end()) it = per_ip_.emplace(std::string(ip), 0).first;
  ++it->second;
  ++total_;
  return Admission::kAccepted;
}

bool ConnectionQuotas::release(std::string_view ip) {
  std::lock_guard lock(mutex_);
  auto it = per_ip_.find(ip);
  WEIR_ASSERT(it != per_ip_.end() && it->second > 0 && total_ > 0, "release of an uncounted connection from {}", ip);
  if (--it->second == 0) per_ip_.erase(it);
  return total_-- >= limits_.max_connections;
}

std::int64_t ConnectionQuotas::total() const {
  std::lock_guard lock(mutex_);
  return total_;
}

std::int32_t ConnectionQuotas::count_for(std::string_view ip) const {
  std::lock_guard lock(mutex_);
  auto it = per_ip_.find(ip);
  return it == per_ip_.end() ? 0 : it->second;
}

}  // namespace weir::net
