#include "broker/replication_quota.h"

#include <algorithm>
#include <charconv>

namespace weir::broker {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<std::int32_t> to_int(std::string_view s) {
  s = trim(s);
  std::int32_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<ThrottledPartitions> throttled_partitions_for(std::string_view value, std::int32_t broker) {
  value = trim(value);
  if (value.empty()) return std::nullopt;
  if (value == "*") return ThrottledPartitions{.all = true, .partitions = {}};
  ThrottledPartitions out;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view item = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) continue;
    const auto partition = to_int(item.substr(0, colon));
    const auto replica = to_int(item.substr(colon + 1));
    if (partition && replica && *replica == broker) out.partitions.insert(*partition);
  }
  if (out.partitions.empty()) return std::nullopt;
  return out;
}

ReplicationQuota::ReplicationQuota(std::int32_t samples, std::int32_t window_seconds)
    : samples_(std::max(1, samples)), window_ms_(std::int64_t{std::max(1, window_seconds)} * 1000) {}

void ReplicationQuota::set_rate(std::int64_t bytes_per_second) {
  std::lock_guard lock(mu_);
  rate_ = bytes_per_second;
}

std::int64_t ReplicationQuota::rate() const {
  std::lock_guard lock(mu_);
  return rate_;
}

void ReplicationQuota::set_throttled(std::map<std::string, ThrottledPartitions, std::less<>> topics) {
  std::lock_guard lock(mu_);
  topics_ = std::move(topics);
}

bool ReplicationQuota::throttled(std::string_view topic, std::int32_t partition) const {
  std::lock_guard lock(mu_);
  auto it = topics_.find(topic);
  if (it == topics_.end()) return false;
  return it->second.all || it->second.partitions.contains(partition);
}

bool ReplicationQuota::any_throttled() const {
  std::lock_guard lock(mu_);
  return !topics_.empty();
}

void ReplicationQuota::record(std::int64_t bytes, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (ring_.empty()) ring_.push_back(Sample{0, now_ms, now_ms});
  if (now_ms - ring_[current_].start_ms >= window_ms_) {
    current_ = (current_ + 1) % static_cast<std::size_t>(samples_ + 1);
    if (current_ >= ring_.size()) {
      ring_.push_back(Sample{0, now_ms, now_ms});
    } else {
      ring_[current_].reset(now_ms);
    }
  }
  Sample& s = ring_[current_];
  s.value += static_cast<double>(bytes);
  s.last_event_ms = now_ms;
}

void ReplicationQuota::purge(std::int64_t now_ms) {
  const std::int64_t expire = std::int64_t{samples_} * window_ms_;
  for (Sample& s : ring_) {
    if (now_ms - s.last_event_ms >= expire) s.reset(now_ms);
  }
}

double ReplicationQuota::measure_locked(std::int64_t now_ms) {
  purge(now_ms);
  if (ring_.empty()) return 0;
  double total = 0;
  std::int64_t oldest = ring_.front().start_ms;
  for (const Sample& s : ring_) {
    total += s.value;
    oldest = std::min(oldest, s.start_ms);
  }
  const std::int64_t window = std::max(now_ms - oldest, window_ms_);
  return total / (static_cast<double>(window) / 1000.0);
}

double ReplicationQuota::measure(std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  return measure_locked(now_ms);
}

bool ReplicationQuota::exceeded(std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (rate_ == kUnlimited) return false;
  return measure_locked(now_ms) > static_cast<double>(rate_);
}

}  // namespace weir::broker
