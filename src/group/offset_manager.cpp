#include "group/offset_manager.h"

#include <algorithm>

#include "base/assert.h"
#include "protocol/gen/offset_commit_key.h"
#include "protocol/gen/offset_commit_value.h"

namespace weir::group {

namespace {

namespace p = weir::protocol;

constexpr std::int16_t kOffsetCommitKeyVersion = 1;  // 0 is the legacy spelling of the same key
constexpr std::int16_t kOffsetCommitValueVersion = 3;
constexpr std::int16_t kOffsetCommitValueWithExpiryVersion = 1;

}  // namespace

std::string_view to_string(ReplayError e) {
  switch (e) {
    case ReplayError::kMalformedKey:
      return "malformed key";
    case ReplayError::kMalformedValue:
      return "malformed value";
    case ReplayError::kUnknownKeyVersion:
      return "unknown key version";
  }
  WEIR_UNREACHABLE();
}

OffsetManager::OffsetManager(std::int32_t offset_metadata_max_bytes)
    : offset_metadata_max_bytes_(offset_metadata_max_bytes) {}

bool OffsetManager::metadata_too_large(const std::optional<std::string>& metadata) const {
  return metadata && metadata->size() > static_cast<std::size_t>(offset_metadata_max_bytes_);
}

// ---- Commits --------------------------------------------------------------------------------

namespace {

// A partition of an OffsetCommit or a TxnOffsetCommit, as the offset it commits at now_ms.
template <class Part>
CommittedOffset offset_of(const Part& part, std::int64_t now_ms) {
  CommittedOffset o;
  o.offset = part.committed_offset;
  o.leader_epoch = part.committed_leader_epoch;
  o.metadata = part.committed_metadata.value_or("");
  o.commit_timestamp_ms = now_ms;
  return o;
}

}  // namespace

p::OffsetCommitResponse OffsetManager::commit(const p::OffsetCommitRequest& req, std::int16_t version,
                                              std::int64_t now_ms, Error group_error, std::vector<Record>& records) {
  p::OffsetCommitResponse resp;
  for (const auto& topic : req.topics) {
    auto& rt = resp.topics.emplace_back();
    rt.name = topic.name;
    rt.topic_id = topic.topic_id;
    for (const auto& part : topic.partitions) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = part.partition_index;
      Error e = group_error;
      if (e == Error::kNone && metadata_too_large(part.committed_metadata)) e = Error::kOffsetMetadataTooLarge;
      rp.error_code = code(e);
      if (e != Error::kNone) continue;
      CommittedOffset o = offset_of(part, now_ms);
      if (version <= 4 && req.retention_time_ms != -1) o.expire_timestamp_ms = now_ms + req.retention_time_ms;
      o.record_position = next_position();
      records.push_back(offset_record(req.group_id, topic.name, part.partition_index, &o));
      put_committed(req.group_id, {topic.name, part.partition_index}, std::move(o));
    }
  }
  return resp;
}

p::TxnOffsetCommitResponse OffsetManager::commit_transactional(const p::TxnOffsetCommitRequest& req,
                                                               std::int64_t now_ms, Error group_error,
                                                               std::vector<Record>& records) {
  WEIR_ASSERT(req.producer_id >= 0, "a transactional commit needs a producer id");
  p::TxnOffsetCommitResponse resp;
  for (const auto& topic : req.topics) {
    auto& rt = resp.topics.emplace_back();
    rt.name = topic.name;
    for (const auto& part : topic.partitions) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = part.partition_index;
      Error e = group_error;
      if (e == Error::kNone && metadata_too_large(part.committed_metadata)) e = Error::kOffsetMetadataTooLarge;
      rp.error_code = code(e);
      if (e != Error::kNone) continue;
      CommittedOffset o = offset_of(part, now_ms);
      o.record_position = next_position();
      records.push_back(offset_record(req.group_id, topic.name, part.partition_index, &o));
      put_pending(req.producer_id, req.group_id, {topic.name, part.partition_index}, std::move(o));
    }
  }
  return resp;
}

void OffsetManager::end_transaction(std::int64_t producer_id, bool commit) {
  auto it = pending_.find(producer_id);
  if (it == pending_.end()) return;
  for (auto& [group_id, partitions] : it->second) {
    auto open = open_.find(group_id);
    for (auto& [tp, o] : partitions) {
      if (open != open_.end()) {
        if (auto producers = open->second.find(tp); producers != open->second.end()) {
          producers->second.erase(producer_id);
          if (producers->second.empty()) open->second.erase(producers);
        }
      }
      if (!commit) continue;
      // The commit written last in the log wins, whether transactional or not.
      const CommittedOffset* existing = nullptr;
      if (auto g = offsets_.find(group_id); g != offsets_.end()) {
        if (auto found = g->second.find(tp); found != g->second.end()) existing = &found->second;
      }
      if (existing == nullptr || o.record_position > existing->record_position) {
        put_committed(group_id, tp, std::move(o));
      }
    }
    if (open != open_.end() && open->second.empty()) open_.erase(open);
  }
  pending_.erase(it);
}

// ---- Fetch ----------------------------------------------------------------------------------

OffsetManager::FetchedTopics OffsetManager::fetch(const std::string& group_id, const Wanted& wanted,
                                                  bool require_stable) const {
  FetchedTopics topics;
  auto it = offsets_.find(group_id);
  auto add = [&](const std::string& topic, std::int32_t partition, const CommittedOffset* o) {
    if (topics.empty() || topics.back().name != topic) topics.emplace_back().name = topic;
    auto& rp = topics.back().partitions.emplace_back();
    rp.partition_index = partition;
    if (require_stable && has_pending(group_id, topic, partition)) {
      rp.error_code = code(Error::kUnstableOffsetCommit);
      o = nullptr;
    }
    rp.committed_offset = o ? o->offset : -1;
    rp.committed_leader_epoch = o ? o->leader_epoch : -1;
    rp.metadata = o ? o->metadata : std::string();
  };
  if (!wanted) {
    if (it != offsets_.end()) {
      for (const auto& [tp, o] : it->second) add(tp.first, tp.second, &o);
    }
    return topics;
  }
  for (const auto& [topic, partitions] : *wanted) {
    if (partitions.empty()) topics.emplace_back().name = topic;
    for (std::int32_t partition : partitions) {
      const CommittedOffset* o = nullptr;
      if (it != offsets_.end()) {
        auto found = it->second.find({topic, partition});
        if (found != it->second.end()) o = &found->second;
      }
      add(topic, partition, o);
    }
  }
  return topics;
}

// ---- Removal --------------------------------------------------------------------------------

bool OffsetManager::remove(const std::string& group_id, const std::string& topic, std::int32_t partition,
                           std::vector<Record>& records) {
  auto g = offsets_.find(group_id);
  const bool committed = g != offsets_.end() && g->second.contains({topic, partition});
  // As Kafka's deleteOffsets: a partition with only pending transactional offsets gets its
  // tombstone too (which drops them).
  if (!committed && !has_pending(group_id, topic, partition)) return false;
  records.push_back(offset_record(group_id, topic, partition, nullptr));
  erase(group_id, {topic, partition});
  return true;
}

void OffsetManager::remove_group(const std::string& group_id, std::vector<Record>& records) {
  std::set<Key> targets;
  if (auto g = offsets_.find(group_id); g != offsets_.end()) {
    for (const auto& [tp, o] : g->second) targets.insert(tp);
  }
  // A partition with only pending offsets gets its tombstone too, so that a later commit marker
  // does not bring them back.
  if (auto open = open_.find(group_id); open != open_.end()) {
    for (const auto& [tp, producers] : open->second) targets.insert(tp);
  }
  for (const Key& tp : targets) {
    records.push_back(offset_record(group_id, tp.first, tp.second, nullptr));
    erase(group_id, tp);
  }
}

// ---- State changes (shared by live events and replay) ----------------------------------------

void OffsetManager::put_committed(const std::string& group_id, const Key& tp, CommittedOffset o) {
  offsets_[group_id][tp] = std::move(o);
}

void OffsetManager::put_pending(std::int64_t producer_id, const std::string& group_id, const Key& tp,
                                CommittedOffset o) {
  pending_[producer_id][group_id][tp] = std::move(o);
  open_[group_id][tp].insert(producer_id);
}

// A tombstone removes the committed offset and every pending one of that partition.
void OffsetManager::erase(const std::string& group_id, const Key& tp) {
  if (auto g = offsets_.find(group_id); g != offsets_.end()) {
    g->second.erase(tp);
    if (g->second.empty()) offsets_.erase(g);
  }
  auto open = open_.find(group_id);
  if (open == open_.end()) return;
  auto producers = open->second.find(tp);
  if (producers == open->second.end()) return;
  for (std::int64_t producer_id : producers->second) {
    auto pid = pending_.find(producer_id);
    if (pid == pending_.end()) continue;
    auto pg = pid->second.find(group_id);
    if (pg == pid->second.end()) continue;
    pg->second.erase(tp);
    if (pg->second.empty()) pid->second.erase(pg);
    if (pid->second.empty()) pending_.erase(pid);
  }
  open->second.erase(producers);
  if (open->second.empty()) open_.erase(open);
}

Result<std::string, ReplayError> OffsetManager::replay(p::Reader& kr,
                                                       std::optional<std::span<const std::uint8_t>> value,
                                                       RecordContext at) {
  p::OffsetCommitKey k;
  k.decode(kr, 0);
  if (!kr.ok() || kr.remaining() != 0) return unexpected(ReplayError::kMalformedKey);
  if (at.offset >= 0) next_position_ = std::max(next_position_, at.offset + 1);
  const Key tp{k.topic, k.partition};
  if (!value) {
    erase(k.group, tp);
    return std::move(k.group);
  }
  p::Reader vr(*value);
  const std::int16_t version = vr.i16();
  if (!vr.ok() || version < p::OffsetCommitValue::kMinVersion) return unexpected(ReplayError::kMalformedValue);
  p::OffsetCommitValue v;
  // Newer versions only add fields; read what this build knows.
  v.decode(vr, std::min(version, p::OffsetCommitValue::kMaxVersion));
  if (!vr.ok()) return unexpected(ReplayError::kMalformedValue);
  CommittedOffset o{v.offset,           v.leader_epoch,     v.metadata,
                    v.commit_timestamp, v.expire_timestamp, at.offset >= 0 ? at.offset : next_position()};
  if (at.producer_id >= 0) {
    put_pending(at.producer_id, k.group, tp, std::move(o));
  } else {
    put_committed(k.group, tp, std::move(o));
  }
  return std::move(k.group);
}

// ---- Queries --------------------------------------------------------------------------------

OffsetManager::PartitionOffsets* OffsetManager::group_offsets(const std::string& group_id) {
  auto it = offsets_.find(group_id);
  return it == offsets_.end() ? nullptr : &it->second;
}

std::optional<CommittedOffset> OffsetManager::committed(const std::string& group_id, const std::string& topic,
                                                        std::int32_t partition) const {
  auto g = offsets_.find(group_id);
  if (g == offsets_.end()) return std::nullopt;
  auto o = g->second.find({topic, partition});
  if (o == g->second.end()) return std::nullopt;
  return o->second;
}

bool OffsetManager::has_pending(const std::string& group_id, const std::string& topic, std::int32_t partition) const {
  auto open = open_.find(group_id);
  return open != open_.end() && open->second.contains({topic, partition});
}

bool OffsetManager::has_pending(const std::string& group_id) const { return open_.contains(group_id); }

std::optional<CommittedOffset> OffsetManager::pending(std::int64_t producer_id, const std::string& group_id,
                                                      const std::string& topic, std::int32_t partition) const {
  auto pid = pending_.find(producer_id);
  if (pid == pending_.end()) return std::nullopt;
  auto g = pid->second.find(group_id);
  if (g == pid->second.end()) return std::nullopt;
  auto o = g->second.find({topic, partition});
  if (o == g->second.end()) return std::nullopt;
  return o->second;
}

Record OffsetManager::offset_record(const std::string& group, const std::string& topic, std::int32_t partition,
                                    const CommittedOffset* offset) {
  Record rec;
  p::Writer kw(rec.key);
  kw.i16(kOffsetCommitKeyVersion);
  p::OffsetCommitKey k;
  k.group = group;
  k.topic = topic;
  k.partition = partition;
  k.encode(kw, 0);
  if (offset == nullptr) return rec;
  const std::int16_t version =
      offset->expire_timestamp_ms >= 0 ? kOffsetCommitValueWithExpiryVersion : kOffsetCommitValueVersion;
  p::OffsetCommitValue v;
  v.offset = offset->offset;
  v.leader_epoch = offset->leader_epoch;
  v.metadata = offset->metadata;
  v.commit_timestamp = offset->commit_timestamp_ms;
  v.expire_timestamp = offset->expire_timestamp_ms;
  Bytes value;
  p::Writer vw(value);
  vw.i16(version);
  v.encode(vw, version);
  rec.value = std::move(value);
  return rec;
}

}  // namespace weir::group
