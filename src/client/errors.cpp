#include "client/errors.h"

#include <fmt/format.h>

#include "protocol/error_names.h"

namespace weir::client {

// The tables below name Kafka codes from the shared table in errors.h.
using namespace codes;

std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::kKafka:
      return "kafka";
    case ErrorKind::kTransport:
      return "transport";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kProtocol:
      return "protocol";
    case ErrorKind::kUnsupported:
      return "unsupported";
    case ErrorKind::kInvalidArgument:
      return "invalid_argument";
  }
  return "unknown";
}

Error Error::kafka(std::int16_t code, std::string message) {
  return Error{ErrorKind::kKafka, code, std::move(message)};
}
Error Error::transport(std::string message) { return Error{ErrorKind::kTransport, 0, std::move(message)}; }
Error Error::timeout(std::string message, std::int16_t last_code) {
  return Error{ErrorKind::kTimeout, last_code, std::move(message)};
}
Error Error::protocol(std::string message) { return Error{ErrorKind::kProtocol, 0, std::move(message)}; }
Error Error::unsupported(std::string message) { return Error{ErrorKind::kUnsupported, 0, std::move(message)}; }
Error Error::invalid_argument(std::string message) { return Error{ErrorKind::kInvalidArgument, 0, std::move(message)}; }

std::string_view Error::name() const noexcept { return code == 0 ? std::string_view() : protocol::error_name(code); }

bool Error::retriable() const noexcept {
  return kind == ErrorKind::kTransport || (kind == ErrorKind::kKafka && is_retriable(code));
}

std::string Error::to_string() const {
  if (kind == ErrorKind::kKafka) {
    const std::string_view n = name();
    return fmt::format("kafka error {} ({}): {}", n.empty() ? "UNKNOWN" : n, code, message);
  }
  return fmt::format("{}: {}", client::to_string(kind), message);
}

bool is_retriable(std::int16_t code) noexcept {
  switch (code) {
    case kCorruptMessage:
    case kUnknownTopicOrPartition:
    case kLeaderNotAvailable:
    case kNotLeaderOrFollower:
    case kRequestTimedOut:
    case kReplicaNotAvailable:
    case kNetworkException:
    case kCoordinatorLoadInProgress:
    case kCoordinatorNotAvailable:
    case kNotCoordinator:
    case kNotEnoughReplicas:
    case kNotEnoughReplicasAfterAppend:
    case kNotController:
    case kConcurrentTransactions:
    case kKafkaStorageError:
    case kFetchSessionIdNotFound:
    case kInvalidFetchSessionEpoch:
    case kListenerNotFound:
    case kFencedLeaderEpoch:
    case kUnknownLeaderEpoch:
    case kOffsetNotAvailable:
    case kPreferredLeaderNotAvailable:
    case kEligibleLeadersNotAvailable:
    case kElectionNotNeeded:
    case kUnstableOffsetCommit:
    case kThrottlingQuotaExceeded:
    case kUnknownTopicId:
    case kInconsistentTopicId:
    case kFetchSessionTopicIdError:
    case kShareSessionNotFound:
    case kInvalidShareSessionEpoch:
      return true;
    default:
      return false;
  }
}

bool is_stale_metadata(std::int16_t code) noexcept {
  switch (code) {
    case kUnknownTopicOrPartition:
    case kLeaderNotAvailable:
    case kNotLeaderOrFollower:
    case kReplicaNotAvailable:
    case kNetworkException:
    case kKafkaStorageError:
    case kListenerNotFound:
    case kFencedLeaderEpoch:
    case kUnknownLeaderEpoch:
    case kUnknownTopicId:
    case kInconsistentTopicId:
      return true;
    default:
      return false;
  }
}

bool is_coordinator_moved(std::int16_t code) noexcept {
  return code == kNotCoordinator || code == kCoordinatorNotAvailable;
}

}  // namespace weir::client
