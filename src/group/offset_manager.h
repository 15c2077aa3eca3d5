// OffsetManager: the committed offsets of the groups one `__consumer_offsets` partition owns, and
// the transactional offsets waiting for their transaction's marker (Kafka's
// OffsetMetadataManager). Pure, like the GroupCoordinator that owns it: the coordinator checks a
// request against the group (membership, generation) and hands the manager the outcome; the
// manager answers the offsets part and returns the records to append.
//
// Offset records (layout in coordinator.h) are the only way state changes: every event builds
// its records and applies them through the same code replay() uses, so a live commit and a
// reload from the log end in the same state.
//
// Transactional offsets (TxnOffsetCommit) are kept per producer id, pending, until the marker
// of that producer's transaction reaches this partition: a commit marker makes each pending
// offset the committed one unless a commit written later in the log (a higher record position)
// already replaced it; an abort marker drops them. Positions are the records' offsets in the log
// when replayed, and a counter continuing past the log end for live records; only their order
// matters, and both follow the log's order.
//
// Single-threaded: owned by one shard.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "protocol/codec.h"
#include "protocol/gen/offset_commit_request.h"
#include "protocol/gen/offset_commit_response.h"
#include "protocol/gen/offset_fetch_response.h"
#include "protocol/gen/txn_offset_commit_request.h"
#include "protocol/gen/txn_offset_commit_response.h"

namespace weir::group {

using Bytes = protocol::Bytes;

// Kafka error codes this module answers with (the numbers are the protocol's).
enum class Error : std::int16_t {
  kUnknownServerError = -1,
  kNone = 0,
  kOffsetMetadataTooLarge = 12,
  kCoordinatorNotAvailable = 15,
  kIllegalGeneration = 22,
  kInconsistentGroupProtocol = 23,
  kInvalidGroupId = 24,
  kUnknownMemberId = 25,
  kInvalidSessionTimeout = 26,
  kRebalanceInProgress = 27,
  kNonEmptyGroup = 68,
  kGroupIdNotFound = 69,
  kMemberIdRequired = 79,
  kGroupMaxSizeReached = 81,
  kFencedInstanceId = 82,
  kUnstableOffsetCommit = 88,
  kGroupSubscribedToTopic = 86,
  kUnsupportedVersion = 35,
  kInvalidRequest = 42,
  kFencedMemberEpoch = 110,
  kUnreleasedInstanceId = 111,
  kUnsupportedAssignor = 112,
  kStaleMemberEpoch = 113,
  kInvalidRegularExpression = 128,
};
[[nodiscard]] constexpr std::int16_t code(Error e) { return static_cast<std::int16_t>(e); }

enum class ReplayError { kMalformedKey, kMalformedValue, kUnknownKeyVersion };
[[nodiscard]] std::string_view to_string(ReplayError e);

struct Record {
  Bytes key;
  std::optional<Bytes> value;  // nullopt: tombstone
};

// The producer whose transaction the records of an Effects belong to: the host appends them as
// one transactional batch with this producer id and epoch.
struct TransactionalBatch {
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
};

struct CommittedOffset {
  std::int64_t offset = -1;
  std::int32_t leader_epoch = -1;
  std::string metadata;
  std::int64_t commit_timestamp_ms = -1;
  std::int64_t expire_timestamp_ms = -1;
  // Where the record stands in the partition's log order (see the header comment).
  std::int64_t record_position = -1;
};

// Where a replayed record sits: its offset in the log and the producer of its batch (-1 for a
// non-transactional batch).
struct RecordContext {
  std::int64_t offset = -1;
  std::int64_t producer_id = -1;
};

class OffsetManager {
 public:
  using PartitionOffsets = std::map<std::pair<std::string, std::int32_t>, CommittedOffset>;
  // Requested topics and partitions of an OffsetFetch; nullopt: every committed offset.
  using Wanted = std::optional<std::vector<std::pair<std::string, std::vector<std::int32_t>>>>;
  using FetchedTopics = std::vector<protocol::OffsetFetchResponse::OffsetFetchResponseTopics>;

  explicit OffsetManager(std::int32_t offset_metadata_max_bytes);

  // OffsetCommit, once the group check gave `group_error` (every partition gets it when set).
  // Appends to `records` the records of what was committed.
  protocol::OffsetCommitResponse commit(const protocol::OffsetCommitRequest& req, std::int16_t version,
                                        std::int64_t now_ms, Error group_error, std::vector<Record>& records);
  // TxnOffsetCommit, likewise; the offsets stay pending for the request's producer.
  protocol::TxnOffsetCommitResponse commit_transactional(const protocol::TxnOffsetCommitRequest& req,
                                                         std::int64_t now_ms, Error group_error,
                                                         std::vector<Record>& records);

  // OffsetFetch of one group. With `require_stable`, a partition with pending transactional
  // offsets is answered UNSTABLE_OFFSET_COMMIT (offset -1). Fetching all lists the committed
  // offsets only, as Kafka does.
  [[nodiscard]] FetchedTopics fetch(const std::string& group_id, const Wanted& wanted, bool require_stable) const;

  // Tombstones a partition's committed offset and its pending transactional ones (OffsetDelete,
  // expiry); false when there is neither.
  bool remove(const std::string& group_id, const std::string& topic, std::int32_t partition,
              std::vector<Record>& records);
  // Tombstones every committed and pending offset of a group (DeleteGroups).
  void remove_group(const std::string& group_id, std::vector<Record>& records);

  // The marker of `producer_id`'s transaction reached this partition: materialise (commit) or
  // drop (abort) its pending offsets. Live and at replay alike.
  void end_transaction(std::int64_t producer_id, bool commit);

  // Applies one offset record (key read past its version) at `at`; the record's group id.
  Result<std::string, ReplayError> replay(protocol::Reader& key_reader,
                                          std::optional<std::span<const std::uint8_t>> value, RecordContext at);

  [[nodiscard]] const std::map<std::string, PartitionOffsets>& offsets() const { return offsets_; }
  [[nodiscard]] PartitionOffsets* group_offsets(const std::string& group_id);
  [[nodiscard]] std::optional<CommittedOffset> committed(const std::string& group_id, const std::string& topic,
                                                         std::int32_t partition) const;
  [[nodiscard]] bool has_pending(const std::string& group_id, const std::string& topic, std::int32_t partition) const;
  [[nodiscard]] bool has_pending(const std::string& group_id) const;
  // The pending offset `producer_id` holds for a partition, if any.
  [[nodiscard]] std::optional<CommittedOffset> pending(std::int64_t producer_id, const std::string& group_id,
                                                       const std::string& topic, std::int32_t partition) const;

  // Longer than offset.metadata.max.bytes (OFFSET_METADATA_TOO_LARGE).
  [[nodiscard]] bool metadata_too_large(const std::optional<std::string>& metadata) const;

  [[nodiscard]] static Record offset_record(const std::string& group, const std::string& topic, std::int32_t partition,
                                            const CommittedOffset* offset);

 private:
  using Key = std::pair<std::string, std::int32_t>;  // (topic, partition)

  void put_committed(const std::string& group_id, const Key& tp, CommittedOffset o);
  void put_pending(std::int64_t producer_id, const std::string& group_id, const Key& tp, CommittedOffset o);
  void erase(const std::string& group_id, const Key& tp);
  std::int64_t next_position() { return next_position_++; }

  std::int32_t offset_metadata_max_bytes_;
  std::map<std::string, PartitionOffsets> offsets_;  // group -> (topic, partition) -> committed
  // producer id -> group -> (topic, partition) -> pending offset
  std::map<std::int64_t, std::map<std::string, PartitionOffsets>> pending_;
  // group -> (topic, partition) -> producers with a pending offset there
  std::map<std::string, std::map<Key, std::set<std::int64_t>>> open_;
  std::int64_t next_position_ = 0;
};

}  // namespace weir::group
