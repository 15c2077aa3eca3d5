// What a client call can fail with: a Kafka error code the broker returned, a transport failure
// (connect, read, write, a connection closed under a request), a deadline that passed, a response
// the client cannot parse, an API or version the broker does not offer, or bad input from the
// caller. Every error carries a message meant for a person; Kafka errors also carry the code and
// Kafka's name for it (Errors.java), so the CLI can print what Kafka's tools print.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace weir::client {

// Kafka error codes by name (Errors.java): the ones the client's code reacts to. One table for
// the client (errors.cpp, group_member.cpp, ...) instead of a private list per file.
namespace codes {
enum : std::int16_t {
  kNone = 0,
  kOffsetOutOfRange = 1,
  kCorruptMessage = 2,
  kUnknownTopicOrPartition = 3,
  kLeaderNotAvailable = 5,
  kNotLeaderOrFollower = 6,
  kRequestTimedOut = 7,
  kReplicaNotAvailable = 9,
  kNetworkException = 13,
  kCoordinatorLoadInProgress = 14,
  kCoordinatorNotAvailable = 15,
  kNotCoordinator = 16,
  kNotEnoughReplicas = 19,
  kNotEnoughReplicasAfterAppend = 20,
  kIllegalGeneration = 22,
  kInconsistentGroupProtocol = 23,
  kUnknownMemberId = 25,
  kRebalanceInProgress = 27,
  kTopicAuthorizationFailed = 29,
  kGroupAuthorizationFailed = 30,
  kUnsupportedVersion = 35,
  kTopicAlreadyExists = 36,
  kNotController = 41,
  kInvalidRequest = 42,
  kConcurrentTransactions = 51,
  kKafkaStorageError = 56,
  kNonEmptyGroup = 68,
  kGroupIdNotFound = 69,
  kFetchSessionIdNotFound = 70,
  kInvalidFetchSessionEpoch = 71,
  kListenerNotFound = 72,
  kFencedLeaderEpoch = 74,
  kUnknownLeaderEpoch = 75,
  kOffsetNotAvailable = 78,
  kMemberIdRequired = 79,
  kPreferredLeaderNotAvailable = 80,
  kGroupMaxSizeReached = 81,
  kFencedInstanceId = 82,
  kEligibleLeadersNotAvailable = 83,
  kElectionNotNeeded = 84,
  kGroupSubscribedToTopic = 86,
  kUnstableOffsetCommit = 88,
  kThrottlingQuotaExceeded = 89,
  kUnknownTopicId = 100,
  kInconsistentTopicId = 103,
  kTransactionalIdNotFound = 105,
  kFetchSessionTopicIdError = 106,
  kFencedMemberEpoch = 110,
  kUnreleasedInstanceId = 111,
  kUnsupportedAssignor = 112,
  kStaleMemberEpoch = 113,
  kShareSessionNotFound = 122,
  kInvalidShareSessionEpoch = 123,
};
}  // namespace codes

enum class ErrorKind : std::uint8_t {
  kKafka,            // the broker answered with a non-zero error code
  kTransport,        // connect/read/write failed or the connection closed
  kTimeout,          // the call's deadline passed (code holds the last Kafka error seen, if any)
  kProtocol,         // a malformed or unexpected response (e.g. a correlation id mismatch)
  kUnsupported,      // the broker offers no version of the API that the codec can speak
  kInvalidArgument,  // the caller's input (a bootstrap list, a partition that does not exist, ...)
};

[[nodiscard]] std::string_view to_string(ErrorKind kind) noexcept;

struct Error {
  ErrorKind kind = ErrorKind::kTransport;
  std::int16_t code = 0;  // Kafka error code (kKafka; for kTimeout the last one seen; else 0)
  std::string message;

  static Error kafka(std::int16_t code, std::string message);
  static Error transport(std::string message);
  static Error timeout(std::string message, std::int16_t last_code = 0);
  static Error protocol(std::string message);
  static Error unsupported(std::string message);
  static Error invalid_argument(std::string message);

  // Kafka's name of `code` ("NOT_LEADER_OR_FOLLOWER"), "" when code is 0 or unknown.
  [[nodiscard]] std::string_view name() const noexcept;
  // Whether trying again may succeed: retriable Kafka codes and transport failures.
  [[nodiscard]] bool retriable() const noexcept;
  // "kafka error NOT_LEADER_OR_FOLLOWER (6): <message>", "timeout: <message>", ...
  [[nodiscard]] std::string to_string() const;
};

// The codes whose exceptions Kafka's clients mark retriable (subclasses of RetriableException
// in Errors.java, Kafka 4.x): e.g. NOT_LEADER_OR_FOLLOWER, COORDINATOR_LOAD_IN_PROGRESS.
[[nodiscard]] bool is_retriable(std::int16_t code) noexcept;

// Codes that mean the client's view of partition leadership is stale (InvalidMetadataException
// and its kin): the client refreshes metadata before retrying a leader-routed request.
[[nodiscard]] bool is_stale_metadata(std::int16_t code) noexcept;

// Codes after which a coordinator-routed request must look the coordinator up again.
[[nodiscard]] bool is_coordinator_moved(std::int16_t code) noexcept;

}  // namespace weir::client
