// MetadataFollowerState: the broker side of KRaft for `__cluster_metadata` — an *observer* that
// fetches the log from the quorum's leader, as Kafka's KafkaRaftClient does on a broker
// (process.roles=broker). Pure: responses, failures and the time come in; what to send next and
// what to deliver come out (FollowerStep). No I/O, no clock reads; MetadataFollower drives it.
//
// What it keeps:
//  - the controllers to ask when no leader is known (QuorumConfig::bootstrap_endpoints(), taken in
//    turn) and the leader (id, epoch, endpoint) learned from any answer's CurrentLeader plus
//    NodeEndpoints (Fetch v17 carries them; FetchSnapshot v1 too);
//  - the fetched tail above the high watermark, decoded: fetch offset = end of that tail, last
//    fetched epoch = its last batch's epoch. The broker's local copy of the log
//    (metadata_copy.h) keeps only what was delivered; restore() starts the follower from it;
//  - the metadata high watermark and the last offset handed on.
//
// Delivery: a batch is handed on once its last offset is below the high watermark, in log order,
// each record with its offset. Control batches (LeaderChangeMessage, SnapshotHeader/Footer,
// KRaftVersion, Voters) are consumed: handed on with no records, so the last applied offset still
// moves past them. A record that does not decode is reported (FollowerStep::record_errors) and
// the rest of the batch is delivered. Each batch carries its bytes as fetched (MetadataBatch::raw)
// for the local copy. A SnapshotId in a Fetch answer starts FetchSnapshot in
// chunks; the whole snapshot is handed on as one batch with snapshot = true ("replace the image
// with these records"), then fetching continues from the snapshot's end offset.
//
// Errors follow KafkaRaftClient for an observer: NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH move
// to the leader named in the answer (or back to the bootstrap list when none is named);
// BROKER_NOT_AVAILABLE, UNKNOWN_LEADER_EPOCH, a transport failure or a timeout back off
// (retry_backoff_ms) and ask again — a failure or timeout also forgets the leader's endpoint, as an
// observer whose fetch timer expires goes back to the bootstrap servers; INCONSISTENT_CLUSTER_ID,
// CLUSTER_AUTHORIZATION_FAILED, an unexpected top-level code, a DivergingEpoch below what was
// already handed on, and an oversized snapshot are fatal (FollowerStep::fatal); the follower stops.
//
// Thread safety: a plain value; one owner.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "client/errors.h"
#include "cluster/quorum_config.h"
#include "metadata/metadata_record.h"
#include "protocol/gen/fetch_request.h"
#include "protocol/gen/fetch_response.h"
#include "protocol/gen/fetch_snapshot_request.h"
#include "protocol/gen/fetch_snapshot_response.h"
#include "protocol/record/record_batch.h"

namespace weir::cluster {

inline constexpr std::string_view kMetadataTopicName = "__cluster_metadata";

// Committed metadata handed on, in log order.
struct MetadataBatch {
  std::vector<metadata::VersionedRecord> records;  // empty for a control batch
  std::vector<std::int64_t> offsets;               // offsets[i] is records[i]'s offset
  std::int64_t base_offset = 0;
  std::int64_t last_offset = -1;  // the last offset the batch covers (control records included)
  std::int32_t epoch = -1;        // the batch's partition leader epoch (the snapshot's epoch)
  bool snapshot = false;          // replace the image with these records, then continue
  // The batch's bytes as the leader sent them (for a snapshot: the whole snapshot), to keep a
  // local copy of the log. Empty when the batch was cut by a truncation (its bytes no longer
  // match its records).
  std::vector<std::uint8_t> raw;
};

// A record in a committed batch that did not decode: reported, never skipped silently.
struct RecordError {
  std::int64_t offset = -1;
  std::string message;
};

struct LeaderInfo {
  std::int32_t id = -1;     // -1: unknown
  std::int32_t epoch = -1;  // the highest epoch seen
  std::optional<client::Endpoint> endpoint;
  bool operator==(const LeaderInfo&) const = default;
};

struct FollowerOptions {
  std::string cluster_id;
  std::int32_t node_id = -1;
  std::int32_t max_wait_ms = 500;               // KafkaRaftClient.MAX_FETCH_WAIT_MS (4.3.1)
  std::int32_t fetch_max_bytes = 8 << 20;       // Fetch MaxBytes and PartitionMaxBytes
  std::int32_t snapshot_chunk_bytes = 1 << 20;  // FetchSnapshot MaxBytes per request
  std::int64_t snapshot_max_bytes = 1LL << 30;  // a larger snapshot is refused (fatal)
  std::int64_t retry_backoff_ms = 20;           // controller.quorum.retry.backoff.ms
};

// The next request: to `target` (node id -1 for a bootstrap server), not before `send_at_ms`.
struct FetchToSend {
  ControllerAddress target;
  protocol::FetchRequest request;
};
struct SnapshotChunkToSend {
  ControllerAddress target;
  protocol::FetchSnapshotRequest request;
};

struct FollowerStep {
  std::variant<std::monostate, FetchToSend, SnapshotChunkToSend> send;  // monostate: stopped (fatal)
  std::int64_t send_at_ms = 0;
  std::vector<MetadataBatch> deliver;
  std::vector<RecordError> record_errors;
  std::optional<client::Error> fatal;
};

// Decodes one metadata batch (control batches yield no records; a record that does not decode is
// reported in `errors` and left out). The batch's bytes are copied into MetadataBatch::raw.
[[nodiscard]] Result<MetadataBatch, client::Error> decode_metadata_batch(const record::RecordBatchView& view,
                                                                         std::vector<RecordError>& errors);
// Decodes a whole KRaft snapshot (concatenated batches) ending at `end_offset` (exclusive) at
// `epoch` into one batch with snapshot = true; `bytes` become its raw.
[[nodiscard]] Result<MetadataBatch, client::Error> decode_metadata_snapshot(std::vector<std::uint8_t> bytes,
                                                                            std::int64_t end_offset, std::int32_t epoch,
                                                                            std::vector<RecordError>& errors);

class MetadataFollowerState {
 public:
  MetadataFollowerState(FollowerOptions options, std::vector<ControllerAddress> bootstrap);

  // Before start(): the log as the broker's local copy holds it. `snapshot` (if any) counts as
  // delivered (a snapshot holds only committed records); `batches` follow it, consecutive, and
  // are held as the fetched tail: delivered once the leader's high watermark covers them, cut
  // like any fetched tail if the leader says the log diverged. Fetching resumes after them.
  void restore(const std::optional<MetadataBatch>& snapshot, std::vector<MetadataBatch> batches);

  // The first request.
  [[nodiscard]] FollowerStep start(std::int64_t now_ms);
  // The answer to the FetchToSend / SnapshotChunkToSend last returned, sent at `version`.
  [[nodiscard]] FollowerStep on_fetch_response(const protocol::FetchResponse& response, std::int64_t now_ms);
  [[nodiscard]] FollowerStep on_snapshot_response(const protocol::FetchSnapshotResponse& response,
                                                  std::int64_t now_ms);
  // The last request failed in transport or timed out (or the version could not be agreed).
  [[nodiscard]] FollowerStep on_failure(const client::Error& error, std::int64_t now_ms);

  [[nodiscard]] const LeaderInfo& leader() const noexcept { return leader_; }
  [[nodiscard]] std::int64_t high_watermark() const noexcept { return high_watermark_; }
  [[nodiscard]] std::int64_t last_delivered_offset() const noexcept { return last_delivered_; }
  [[nodiscard]] std::int64_t fetch_offset() const noexcept { return log_end_; }
  [[nodiscard]] std::int32_t last_fetched_epoch() const noexcept { return last_fetched_epoch_; }
  // The high watermark of the first successful fetch (-1 before it): "caught up" once every
  // offset below it has been delivered, as Kafka's broker waits before asking to be unfenced.
  [[nodiscard]] std::int64_t initial_high_watermark() const noexcept { return initial_high_watermark_; }
  [[nodiscard]] bool caught_up() const noexcept {
    return initial_high_watermark_ >= 0 && last_delivered_ + 1 >= initial_high_watermark_;
  }
  [[nodiscard]] bool fetching_snapshot() const noexcept { return snapshot_.has_value(); }
  [[nodiscard]] bool stopped() const noexcept { return stopped_; }
  // Records held above the high watermark (not yet delivered).
  [[nodiscard]] std::size_t pending_batches() const noexcept { return tail_.size(); }
  // The end offset of the last truncation (DivergingEpoch) since the last call, if any: a local
  // copy must drop what it holds from there.
  [[nodiscard]] std::optional<std::int64_t> take_truncation() noexcept {
    auto t = truncated_to_;
    truncated_to_.reset();
    return t;
  }

 private:
  struct PendingBatch {
    MetadataBatch batch;
    std::vector<RecordError> errors;
  };
  struct SnapshotFetch {
    std::int64_t end_offset = 0;
    std::int32_t epoch = 0;
    std::int64_t size = -1;
    std::vector<std::uint8_t> bytes;
  };

  FollowerStep next_fetch(std::int64_t send_at_ms);
  FollowerStep next_snapshot_chunk(std::int64_t send_at_ms);
  FollowerStep fail(client::Error error);
  FollowerStep backoff(std::int64_t now_ms, bool forget_leader);
  ControllerAddress target();
  // Takes the leader named in an answer when it is newer than what is known. True if it changed.
  bool learn_leader(std::int32_t id, std::int32_t epoch, std::optional<client::Endpoint> endpoint);
  Result<void, client::Error> append(const std::vector<std::uint8_t>& records);
  Result<void, client::Error> truncate(std::int64_t end_offset);
  void deliver_committed(FollowerStep& step);

  FollowerOptions options_;
  std::vector<ControllerAddress> bootstrap_;
  std::size_t next_bootstrap_ = 0;
  LeaderInfo leader_;
  std::deque<PendingBatch> tail_;
  std::int64_t log_end_ = 0;  // fetch offset
  std::int32_t last_fetched_epoch_ = 0;  // Kafka: 0 for an empty log (a negative one is INVALID_REQUEST)
  std::int64_t high_watermark_ = -1;
  std::int64_t initial_high_watermark_ = -1;
  std::int64_t last_delivered_ = -1;
  std::int32_t delivered_epoch_ = -1;
  std::optional<SnapshotFetch> snapshot_;
  ControllerAddress last_target_;
  std::optional<std::int64_t> truncated_to_;
  bool stopped_ = false;
};

}  // namespace weir::cluster
