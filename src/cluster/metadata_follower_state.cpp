#include "cluster/metadata_follower_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "base/assert.h"
#include "cluster/kafka_codes.h"
#include "protocol/error_names.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/record.h"

namespace weir::cluster {
namespace {

ByteSpan as_byte_span(const std::vector<std::uint8_t>& v) {
  return {reinterpret_cast<const std::byte*>(v.data()), v.size()};
}

client::Error kafka_error(std::int16_t code, std::string_view what) {
  return client::Error::kafka(code, fmt::format("{}: {}", what, protocol::error_name(code)));
}

}  // namespace

// A batch whose records cannot be read at all is an error value (the bytes are untrusted).
Result<MetadataBatch, client::Error> decode_metadata_batch(const record::RecordBatchView& view,
                                                           std::vector<RecordError>& errors) {
  MetadataBatch out;
  out.base_offset = view.base_offset();
  out.last_offset = view.last_offset();
  out.epoch = view.partition_leader_epoch();
  const auto bytes = view.bytes();
  out.raw.resize(bytes.size());
  if (!bytes.empty()) std::memcpy(out.raw.data(), bytes.data(), bytes.size());
  if (view.is_control()) return out;
  if (view.is_compressed()) {
    return unexpected(client::Error::protocol(
        fmt::format("metadata batch at offset {} is compressed (Kafka's controllers do not compress it)",
                    view.base_offset())));
  }
  auto status = record::for_each_record(view, [&](const record::RecordView& r) {
    const std::int64_t offset = view.record_offset(r);
    if (!r.value) {
      errors.push_back({offset, "metadata record with a null value"});
      return;
    }
    auto decoded = metadata::decode_record(*r.value);
    if (!decoded) {
      errors.push_back({offset, fmt::format("undecodable metadata record: {}", metadata::to_string(decoded.error()))});
      return;
    }
    out.records.push_back(std::move(*decoded));
    out.offsets.push_back(offset);
  });
  if (!status) {
    return unexpected(client::Error::protocol(
        fmt::format("malformed records in metadata batch at offset {}", view.base_offset())));
  }
  return out;
}

Result<MetadataBatch, client::Error> decode_metadata_snapshot(std::vector<std::uint8_t> bytes, std::int64_t end_offset,
                                                              std::int32_t epoch, std::vector<RecordError>& errors) {
  MetadataBatch out;
  out.snapshot = true;
  out.base_offset = 0;
  out.last_offset = end_offset - 1;
  out.epoch = epoch;
  record::BatchSplitter splitter(as_byte_span(bytes));
  for (;;) {
    auto next = splitter.next();
    if (!next) return unexpected(client::Error::protocol("corrupt batch framing in the metadata snapshot"));
    if (!*next) break;
    const record::RecordBatchView& view = **next;
    if (auto ok = view.validate(record::BatchOrigin::log); !ok) {
      return unexpected(client::Error::protocol("invalid batch in the metadata snapshot (bad CRC or header)"));
    }
    auto batch = decode_metadata_batch(view, errors);
    if (!batch) return unexpected(batch.error());
    for (std::size_t i = 0; i < batch->records.size(); ++i) {
      out.records.push_back(std::move(batch->records[i]));
      out.offsets.push_back(batch->offsets[i]);
    }
  }
  if (!splitter.remaining().empty()) {
    return unexpected(client::Error::protocol("the metadata snapshot ends inside a batch"));
  }
  out.raw = std::move(bytes);
  return out;
}

MetadataFollowerState::MetadataFollowerState(FollowerOptions options, std::vector<ControllerAddress> bootstrap)
    : options_(std::move(options)), bootstrap_(std::move(bootstrap)) {
  WEIR_ASSERT(!bootstrap_.empty());
  WEIR_ASSERT(options_.node_id >= 0);
}

FollowerStep MetadataFollowerState::start(std::int64_t now_ms) { return next_fetch(now_ms); }

void MetadataFollowerState::restore(const std::optional<MetadataBatch>& snapshot, std::vector<MetadataBatch> batches) {
  WEIR_ASSERT(log_end_ == 0 && tail_.empty(), "restore() before start()");
  if (snapshot) {
    log_end_ = snapshot->last_offset + 1;
    last_fetched_epoch_ = std::max(snapshot->epoch, 0);
    last_delivered_ = snapshot->last_offset;
    delivered_epoch_ = snapshot->epoch;
  }
  for (auto& b : batches) {
    WEIR_ASSERT(b.base_offset == log_end_, "restored metadata batches must be consecutive");
    log_end_ = b.last_offset + 1;
    last_fetched_epoch_ = std::max(b.epoch, 0);
    tail_.push_back(PendingBatch{std::move(b), {}});
  }
}

ControllerAddress MetadataFollowerState::target() {
  if (leader_.id >= 0 && leader_.endpoint) return {leader_.id, *leader_.endpoint};
  const ControllerAddress t = bootstrap_[next_bootstrap_ % bootstrap_.size()];
  ++next_bootstrap_;
  return t;
}

FollowerStep MetadataFollowerState::next_fetch(std::int64_t send_at_ms) {
  FollowerStep step;
  if (stopped_) return step;
  FetchToSend f;
  f.target = last_target_ = target();
  auto& r = f.request;
  r.cluster_id = options_.cluster_id;
  r.replica_id = options_.node_id;  // versions < 15
  r.replica_state.replica_id = options_.node_id;
  r.replica_state.replica_epoch = -1;
  r.max_wait_ms = options_.max_wait_ms;
  r.min_bytes = 0;
  r.max_bytes = options_.fetch_max_bytes;
  protocol::FetchRequest::FetchTopic topic;
  topic.topic = std::string(kMetadataTopicName);  // versions < 13
  topic.topic_id = Uuid::metadata_topic_id();
  protocol::FetchRequest::FetchPartition p;
  p.partition = 0;
  // Kafka refuses a negative epoch (INVALID_REQUEST); an observer that knows none sends 0.
  p.current_leader_epoch = std::max(leader_.epoch, 0);
  p.fetch_offset = log_end_;
  p.partition_max_bytes = options_.fetch_max_bytes;
  p.last_fetched_epoch = last_fetched_epoch_;
  topic.partitions.push_back(std::move(p));
  r.topics.push_back(std::move(topic));
  step.send = std::move(f);
  step.send_at_ms = send_at_ms;
  return step;
}

FollowerStep MetadataFollowerState::next_snapshot_chunk(std::int64_t send_at_ms) {
  WEIR_ASSERT(snapshot_.has_value());
  FollowerStep step;
  SnapshotChunkToSend s;
  s.target = last_target_ = target();
  auto& r = s.request;
  r.cluster_id = options_.cluster_id;
  r.replica_id = options_.node_id;
  r.max_bytes = options_.snapshot_chunk_bytes;
  protocol::FetchSnapshotRequest::TopicSnapshot topic;
  topic.name = std::string(kMetadataTopicName);
  protocol::FetchSnapshotRequest::PartitionSnapshot p;
  p.partition = 0;
  p.current_leader_epoch = std::max(leader_.epoch, 0);
  p.snapshot_id.end_offset = snapshot_->end_offset;
  p.snapshot_id.epoch = snapshot_->epoch;
  p.position = static_cast<std::int64_t>(snapshot_->bytes.size());
  topic.partitions.push_back(std::move(p));
  r.topics.push_back(std::move(topic));
  step.send = std::move(s);
  step.send_at_ms = send_at_ms;
  return step;
}

FollowerStep MetadataFollowerState::fail(client::Error error) {
  stopped_ = true;
  FollowerStep step;
  step.fatal = std::move(error);
  return step;
}

FollowerStep MetadataFollowerState::backoff(std::int64_t now_ms, bool forget_leader) {
  if (forget_leader) leader_.endpoint.reset();
  const std::int64_t at = now_ms + options_.retry_backoff_ms;
  return snapshot_ ? next_snapshot_chunk(at) : next_fetch(at);
}

bool MetadataFollowerState::learn_leader(std::int32_t id, std::int32_t epoch,
                                         std::optional<client::Endpoint> endpoint) {
  if (epoch < leader_.epoch) return false;
  if (epoch == leader_.epoch && (id < 0 || (id == leader_.id && leader_.endpoint))) return false;
  const bool changed = epoch > leader_.epoch || id != leader_.id;
  leader_.epoch = epoch;
  leader_.id = id;
  if (id >= 0 && endpoint) {
    leader_.endpoint = std::move(endpoint);
  } else if (changed) {
    leader_.endpoint.reset();
  }
  // A voter's endpoint is known from the static voter set when the answer names none.
  if (leader_.id >= 0 && !leader_.endpoint) {
    for (const auto& b : bootstrap_) {
      if (b.id == leader_.id) leader_.endpoint = b.endpoint;
    }
  }
  return changed;
}

Result<void, client::Error> MetadataFollowerState::append(const std::vector<std::uint8_t>& records) {
  record::BatchSplitter splitter(as_byte_span(records));
  for (;;) {
    auto next = splitter.next();
    if (!next) return unexpected(client::Error::protocol("corrupt batch framing in a metadata Fetch answer"));
    if (!*next) break;  // a partial batch at the end is cut off by max bytes: fetched again
    const record::RecordBatchView& view = **next;
    if (auto ok = view.validate(record::BatchOrigin::log); !ok) {
      return unexpected(client::Error::protocol(
          fmt::format("invalid metadata batch at offset {} (bad CRC or header)", view.base_offset())));
    }
    if (view.last_offset() < log_end_) continue;  // already held (the leader may resend a batch)
    if (view.base_offset() != log_end_) {
      return unexpected(client::Error::protocol(fmt::format(
          "metadata batch at offset {} where offset {} was expected", view.base_offset(), log_end_)));
    }
    PendingBatch pending;
    auto decoded = decode_metadata_batch(view, pending.errors);
    if (!decoded) return unexpected(decoded.error());
    pending.batch = std::move(*decoded);
    log_end_ = view.next_offset();
    last_fetched_epoch_ = view.partition_leader_epoch();
    tail_.push_back(std::move(pending));
  }
  return {};
}

Result<void, client::Error> MetadataFollowerState::truncate(std::int64_t end_offset) {
  if (end_offset <= last_delivered_) {
    return unexpected(client::Error::protocol(fmt::format(
        "the leader asked to truncate the metadata log to offset {}, below offset {} already applied", end_offset,
        last_delivered_ + 1)));
  }
  while (!tail_.empty() && tail_.back().batch.base_offset >= end_offset) tail_.pop_back();
  if (end_offset < log_end_) truncated_to_ = std::min(truncated_to_.value_or(end_offset), end_offset);
  if (!tail_.empty() && tail_.back().batch.last_offset >= end_offset) {
    auto& b = tail_.back().batch;  // a batch that straddles the end: keep its records below it
    b.raw.clear();
    while (!b.offsets.empty() && b.offsets.back() >= end_offset) {
      b.offsets.pop_back();
      b.records.pop_back();
    }
    b.last_offset = end_offset - 1;
  }
  log_end_ = std::min(log_end_, end_offset);
  last_fetched_epoch_ = tail_.empty() ? (last_delivered_ >= 0 ? std::max(delivered_epoch_, 0) : 0) : tail_.back().batch.epoch;
  return {};
}

void MetadataFollowerState::deliver_committed(FollowerStep& step) {
  while (!tail_.empty() && tail_.front().batch.last_offset < high_watermark_) {
    PendingBatch& p = tail_.front();
    last_delivered_ = p.batch.last_offset;
    delivered_epoch_ = p.batch.epoch;
    for (auto& e : p.errors) step.record_errors.push_back(std::move(e));
    step.deliver.push_back(std::move(p.batch));
    tail_.pop_front();
  }
}

FollowerStep MetadataFollowerState::on_fetch_response(const protocol::FetchResponse& response, std::int64_t now_ms) {
  if (stopped_) return {};
  if (response.error_code != code::kNone) {
    switch (response.error_code) {
      case code::kBrokerNotAvailable:
      case code::kRequestTimedOut:
        return backoff(now_ms, true);
      default:
        return fail(kafka_error(response.error_code, "metadata Fetch refused"));
    }
  }
  const protocol::FetchResponse::PartitionData* partition = nullptr;
  for (const auto& t : response.responses) {
    if (t.topic_id != Uuid::metadata_topic_id() && t.topic != kMetadataTopicName) continue;
    for (const auto& p : t.partitions) {
      if (p.partition_index == 0) partition = &p;
    }
  }
  if (partition == nullptr) {
    return fail(client::Error::protocol("metadata Fetch answer without partition 0 of __cluster_metadata"));
  }
  const auto& p = *partition;
  std::optional<client::Endpoint> endpoint;
  for (const auto& n : response.node_endpoints) {
    if (n.node_id == p.current_leader.leader_id && n.port > 0 && n.port <= 65535) {
      endpoint = client::Endpoint{n.host, static_cast<std::uint16_t>(n.port)};
    }
  }
  const bool leader_changed = learn_leader(p.current_leader.leader_id, p.current_leader.leader_epoch, endpoint);

  switch (p.error_code) {
    case code::kNone:
      break;
    case code::kNotLeaderOrFollower:
    case code::kFencedLeaderEpoch:
      // Ask the leader the answer names; back to the bootstrap list when it names none.
      if (!leader_changed) return backoff(now_ms, true);
      return next_fetch(now_ms);
    case code::kInconsistentClusterId:
    case code::kClusterAuthorizationFailed:
      return fail(kafka_error(p.error_code, "metadata Fetch refused"));
    default:  // UNKNOWN_LEADER_EPOCH, BROKER_NOT_AVAILABLE and the unexpected: try again later
      return backoff(now_ms, p.error_code != code::kUnknownLeaderEpoch);
  }

  FollowerStep step;
  if (p.diverging_epoch.epoch >= 0 && p.diverging_epoch.end_offset >= 0) {
    if (auto ok = truncate(p.diverging_epoch.end_offset); !ok) return fail(ok.error());
    step = next_fetch(now_ms);
    return step;
  }
  if (p.snapshot_id.end_offset >= 0 && p.snapshot_id.epoch >= 0) {
    if (p.snapshot_id.end_offset <= last_delivered_) {
      return fail(client::Error::protocol(fmt::format("the leader sent a snapshot ending at {}, below offset {} already applied",
                                                      p.snapshot_id.end_offset, last_delivered_ + 1)));
    }
    snapshot_ = SnapshotFetch{p.snapshot_id.end_offset, p.snapshot_id.epoch, -1, {}};
    return next_snapshot_chunk(now_ms);
  }
  if (p.records) {
    if (auto ok = append(*p.records); !ok) return fail(ok.error());
  }
  high_watermark_ = std::max(high_watermark_, p.high_watermark);
  if (initial_high_watermark_ < 0 && p.high_watermark >= 0) initial_high_watermark_ = p.high_watermark;
  step = next_fetch(now_ms);
  deliver_committed(step);
  return step;
}

FollowerStep MetadataFollowerState::on_snapshot_response(const protocol::FetchSnapshotResponse& response,
                                                         std::int64_t now_ms) {
  if (stopped_ || !snapshot_) return {};
  if (response.error_code != code::kNone) {
    if (response.error_code == code::kBrokerNotAvailable || response.error_code == code::kRequestTimedOut) {
      return backoff(now_ms, true);
    }
    return fail(kafka_error(response.error_code, "FetchSnapshot refused"));
  }
  const protocol::FetchSnapshotResponse::PartitionSnapshot* partition = nullptr;
  for (const auto& t : response.topics) {
    if (t.name != kMetadataTopicName) continue;
    for (const auto& p : t.partitions) {
      if (p.index == 0) partition = &p;
    }
  }
  if (partition == nullptr) return fail(client::Error::protocol("FetchSnapshot answer without __cluster_metadata-0"));
  const auto& p = *partition;
  std::optional<client::Endpoint> endpoint;
  for (const auto& n : response.node_endpoints) {
    if (n.node_id == p.current_leader.leader_id && n.port > 0) endpoint = client::Endpoint{n.host, n.port};
  }
  const bool leader_changed = learn_leader(p.current_leader.leader_id, p.current_leader.leader_epoch, endpoint);
  switch (p.error_code) {
    case code::kNone:
      break;
    case code::kNotLeaderOrFollower:
    case code::kFencedLeaderEpoch:
      if (!leader_changed) return backoff(now_ms, true);
      return next_snapshot_chunk(now_ms);
    case code::kSnapshotNotFound:
    case code::kPositionOutOfRange:
      // The snapshot is gone (or the chunks do not line up): start over with a Fetch, whose
      // answer names the current snapshot.
      snapshot_.reset();
      return next_fetch(now_ms + options_.retry_backoff_ms);
    case code::kInconsistentClusterId:
    case code::kClusterAuthorizationFailed:
      return fail(kafka_error(p.error_code, "FetchSnapshot refused"));
    default:
      return backoff(now_ms, true);
  }
  SnapshotFetch& s = *snapshot_;
  if (p.snapshot_id.end_offset != s.end_offset || p.snapshot_id.epoch != s.epoch) {
    return fail(client::Error::protocol("FetchSnapshot answered for another snapshot id"));
  }
  const std::int64_t have = static_cast<std::int64_t>(s.bytes.size());
  if (p.position != have || p.size < 0 || (s.size >= 0 && p.size != s.size)) {
    return fail(client::Error::protocol(
        fmt::format("FetchSnapshot chunk at position {} (size {}) where position {} was asked", p.position, p.size, have)));
  }
  if (p.size > options_.snapshot_max_bytes) {
    return fail(client::Error::protocol(
        fmt::format("metadata snapshot of {} bytes is above the limit of {}", p.size, options_.snapshot_max_bytes)));
  }
  s.size = p.size;
  const std::size_t chunk = p.unaligned_records ? p.unaligned_records->size() : 0;
  if (have + static_cast<std::int64_t>(chunk) > s.size) {
    return fail(client::Error::protocol("FetchSnapshot chunk runs past the snapshot's size"));
  }
  if (chunk > 0) s.bytes.insert(s.bytes.end(), p.unaligned_records->begin(), p.unaligned_records->end());
  if (static_cast<std::int64_t>(s.bytes.size()) < s.size) {
    if (chunk == 0) return backoff(now_ms, false);  // no progress: do not spin
    return next_snapshot_chunk(now_ms);
  }
  FollowerStep step;
  std::vector<RecordError> errors;
  auto batch = decode_metadata_snapshot(std::move(s.bytes), s.end_offset, s.epoch, errors);
  if (!batch) return fail(batch.error());
  tail_.clear();
  log_end_ = s.end_offset;
  last_fetched_epoch_ = s.epoch;
  last_delivered_ = s.end_offset - 1;
  delivered_epoch_ = s.epoch;
  high_watermark_ = std::max(high_watermark_, s.end_offset);
  snapshot_.reset();
  step = next_fetch(now_ms);
  step.deliver.push_back(std::move(*batch));
  step.record_errors = std::move(errors);
  return step;
}

FollowerStep MetadataFollowerState::on_failure(const client::Error& error, std::int64_t now_ms) {
  if (stopped_) return {};
  if (error.kind == client::ErrorKind::kUnsupported) return fail(error);
  return backoff(now_ms, true);
}

}  // namespace weir::cluster
