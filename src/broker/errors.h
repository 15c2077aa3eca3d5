// Kafka protocol error codes weir returns (the numbers are the protocol's).
#pragma once

#include <cstdint>

namespace weir::broker {

enum class ErrorCode : std::int16_t {
  kUnknownServerError = -1,
  kNone = 0,
  kOffsetOutOfRange = 1,
  kCorruptMessage = 2,
  kUnknownTopicOrPartition = 3,
  kInvalidFetchSize = 4,
  kLeaderNotAvailable = 5,
  kNotLeaderOrFollower = 6,
  kRequestTimedOut = 7,
  kMessageTooLarge = 10,
  kCoordinatorNotAvailable = 15,
  kNotCoordinator = 16,
  kInvalidTopicException = 17,
  kRecordListTooLarge = 18,
  kInvalidRequiredAcks = 21,
  kIllegalGeneration = 22,
  kUnknownMemberId = 25,
  kInvalidSessionTimeout = 26,
  kRebalanceInProgress = 27,
  kTopicAuthorizationFailed = 29,
  kGroupAuthorizationFailed = 30,
  kClusterAuthorizationFailed = 31,
  kInvalidTimestamp = 32,
  kUnsupportedSaslMechanism = 33,
  kUnsupportedVersion = 35,
  kTopicAlreadyExists = 36,
  kInvalidPartitions = 37,
  kInvalidReplicationFactor = 38,
  kInvalidConfig = 40,
  kNotController = 41,
  kNotEnoughReplicas = 19,
  kPolicyViolation = 44,
  kInvalidRequest = 42,
  kUnsupportedForMessageFormat = 43,
  kOutOfOrderSequenceNumber = 45,
  kDuplicateSequenceNumber = 46,
  kInvalidProducerEpoch = 47,
  kInvalidTxnState = 48,
  kInvalidProducerIdMapping = 49,
  kInvalidTransactionTimeout = 50,
  kConcurrentTransactions = 51,
  kSecurityDisabled = 54,
  kKafkaStorageError = 56,
  kSaslAuthenticationFailed = 58,
  kUnknownProducerId = 59,
  kUnsupportedCompressionType = 76,
  kInvalidRecord = 87,
  kThrottlingQuotaExceeded = 89,
  kGroupIdNotFound = 69,
  kFencedLeaderEpoch = 74,
  kUnknownLeaderEpoch = 75,
  kMemberIdRequired = 79,
  kFencedInstanceId = 82,
  kUnknownTopicId = 100,
  kInconsistentTopicId = 103,
  kTransactionAbortable = 120,
};

constexpr std::int16_t code(ErrorCode e) noexcept { return static_cast<std::int16_t>(e); }

}  // namespace weir::broker
