#include "protocol/consumer_protocol.h"

#include <fmt/format.h>

#include <algorithm>

namespace weir::protocol {

namespace {

// [topic, [partition]] with the partitions of one topic together.
std::vector<std::pair<std::string, std::vector<std::int32_t>>> group_by_topic(
    const std::vector<TopicPartition>& partitions) {
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> out;
  for (const auto& [topic, partition] : partitions) {
    auto it = std::ranges::find(out, topic, &std::pair<std::string, std::vector<std::int32_t>>::first);
    if (it == out.end()) {
      out.emplace_back(topic, std::vector<std::int32_t>{});
      it = std::prev(out.end());
    }
    it->second.push_back(partition);
  }
  return out;
}

void write_topic_partitions(Writer& w, const std::vector<std::pair<std::string, std::vector<std::int32_t>>>& groups) {
  w.i32(static_cast<std::int32_t>(groups.size()));
  for (const auto& [topic, partitions] : groups) {
    w.string(false, topic);
    w.i32(static_cast<std::int32_t>(partitions.size()));
    for (const std::int32_t p : partitions) w.i32(p);
  }
}

void write_nullable_bytes(Writer& w, const std::optional<Bytes>& b) {
  if (b) {
    w.bytes(false, *b);
  } else {
    w.null_bytes(false);
  }
}

// Reads [topic, [partition]]; false when the bytes run out or a count is negative.
bool read_topic_partitions(Reader& r, std::vector<TopicPartition>& out) {
  const std::int64_t topics = r.length(false, 4, 2 + 4);
  if (!r.ok() || topics < 0) return false;
  for (std::int64_t t = 0; t < topics; ++t) {
    bool null = false;
    std::string topic = r.string(false, null);
    const std::int64_t count = r.length(false, 4, 4);
    if (!r.ok() || null || count < 0) return false;
    for (std::int64_t i = 0; i < count; ++i) out.emplace_back(topic, r.i32());
  }
  return r.ok();
}

std::optional<Bytes> read_nullable_bytes(Reader& r) {
  bool null = false;
  Bytes b = r.bytes(false, null);
  if (null) return std::nullopt;
  return b;
}

}  // namespace

Bytes encode_subscription(const ConsumerSubscription& s, std::int16_t version) {
  Bytes out;
  Writer w(out);
  w.i16(version);
  std::vector<std::string> topics = s.topics;
  std::ranges::sort(topics);
  w.i32(static_cast<std::int32_t>(topics.size()));
  for (const auto& t : topics) w.string(false, t);
  write_nullable_bytes(w, s.user_data);
  if (version >= 1) {
    std::vector<TopicPartition> owned = s.owned_partitions;
    std::ranges::sort(owned);
    write_topic_partitions(w, group_by_topic(owned));
  }
  if (version >= 2) w.i32(s.generation_id.value_or(-1));
  if (version >= 3) {
    if (s.rack_id) {
      w.string(false, *s.rack_id);
    } else {
      w.null_string(false);
    }
  }
  return out;
}

Bytes encode_assignment(const ConsumerAssignment& a, std::int16_t version) {
  Bytes out;
  Writer w(out);
  w.i16(version);
  write_topic_partitions(w, group_by_topic(a.partitions));
  write_nullable_bytes(w, a.user_data);
  return out;
}

Result<ConsumerSubscription, std::string> decode_subscription(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  ConsumerSubscription s;
  s.version = r.i16();
  if (!r.ok()) return unexpected(std::string("a subscription shorter than its version"));
  if (s.version < 0) return unexpected(fmt::format("unsupported subscription version {}", s.version));
  const std::int16_t v = std::min(s.version, kConsumerProtocolVersion);
  const std::int64_t topics = r.length(false, 4, 2);
  if (!r.ok() || topics < 0) return unexpected(std::string("a malformed subscription (topics)"));
  for (std::int64_t i = 0; i < topics; ++i) {
    bool null = false;
    std::string t = r.string(false, null);
    if (!r.ok() || null) return unexpected(std::string("a malformed subscription (topic name)"));
    s.topics.push_back(std::move(t));
  }
  s.user_data = read_nullable_bytes(r);
  if (!r.ok()) return unexpected(std::string("a malformed subscription (user data)"));
  if (v >= 1 && !read_topic_partitions(r, s.owned_partitions)) {
    return unexpected(std::string("a malformed subscription (owned partitions)"));
  }
  if (v >= 2) {
    s.generation_id = r.i32();
    if (!r.ok()) return unexpected(std::string("a malformed subscription (generation)"));
  }
  if (v >= 3) {
    bool null = false;
    std::string rack = r.string(false, null);
    if (!r.ok()) return unexpected(std::string("a malformed subscription (rack)"));
    if (!null) s.rack_id = std::move(rack);
  }
  return s;
}

Result<ConsumerAssignment, std::string> decode_assignment(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  ConsumerAssignment a;
  a.version = r.i16();
  if (!r.ok()) return unexpected(std::string("an assignment shorter than its version"));
  if (a.version < 0) return unexpected(fmt::format("unsupported assignment version {}", a.version));
  if (!read_topic_partitions(r, a.partitions)) return unexpected(std::string("a malformed assignment (partitions)"));
  a.user_data = read_nullable_bytes(r);
  if (!r.ok()) return unexpected(std::string("a malformed assignment (user data)"));
  return a;
}

Bytes encode_generation_user_data(std::int32_t generation) {
  Bytes out;
  Writer w(out);
  w.i32(generation);
  return out;
}

std::optional<std::int32_t> decode_generation_user_data(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  const std::int32_t g = r.i32();
  if (!r.ok()) return std::nullopt;
  return g;
}

}  // namespace weir::protocol
