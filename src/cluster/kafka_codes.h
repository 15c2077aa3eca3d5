// The Kafka error codes the cluster module acts on (Errors.java, Kafka 4.3.1).
#pragma once

#include <cstdint>

namespace weir::cluster::code {

inline constexpr std::int16_t kUnknownServerError = -1;
inline constexpr std::int16_t kNone = 0;
inline constexpr std::int16_t kOffsetOutOfRange = 1;
inline constexpr std::int16_t kUnknownTopicOrPartition = 3;
inline constexpr std::int16_t kNotLeaderOrFollower = 6;
inline constexpr std::int16_t kRequestTimedOut = 7;
inline constexpr std::int16_t kBrokerNotAvailable = 8;
inline constexpr std::int16_t kClusterAuthorizationFailed = 31;
inline constexpr std::int16_t kUnsupportedVersion = 35;
inline constexpr std::int16_t kNotController = 41;
inline constexpr std::int16_t kFencedLeaderEpoch = 74;
inline constexpr std::int16_t kUnknownLeaderEpoch = 75;
inline constexpr std::int16_t kStaleBrokerEpoch = 77;
inline constexpr std::int16_t kSnapshotNotFound = 98;
inline constexpr std::int16_t kPositionOutOfRange = 99;
inline constexpr std::int16_t kDuplicateBrokerRegistration = 101;
inline constexpr std::int16_t kBrokerIdNotRegistered = 102;
inline constexpr std::int16_t kInconsistentClusterId = 104;

}  // namespace weir::cluster::code
