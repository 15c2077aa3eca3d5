#include "metadata/errc.h"

namespace weir::metadata {

std::int16_t kafka_code(Errc e) noexcept {
  switch (e) {
    case Errc::none:
      return 0;
    case Errc::unknown_server_error:
      return -1;
    case Errc::unknown_topic_or_partition:
      return 3;
    case Errc::invalid_topic:
      return 17;
    case Errc::topic_already_exists:
      return 36;
    case Errc::invalid_partitions:
      return 37;
    case Errc::invalid_replication_factor:
      return 38;
    case Errc::invalid_replica_assignment:
      return 39;
    case Errc::invalid_config:
      return 40;
    case Errc::invalid_request:
      return 42;
    case Errc::policy_violation:
      return 44;
    case Errc::preferred_leader_not_available:
      return 80;
    case Errc::eligible_leaders_not_available:
      return 83;
    case Errc::election_not_needed:
      return 84;
    case Errc::no_reassignment_in_progress:
      return 85;
    case Errc::unknown_topic_id:
      return 100;
  }
  return -1;
}

// The texts of Kafka 4.3.1's org.apache.kafka.common.protocol.Errors (protocol facts: clients
// show them to users).
std::string_view default_message(Errc e) noexcept {
  switch (e) {
    case Errc::none:
      return "";
    case Errc::unknown_server_error:
      return "The server experienced an unexpected error when processing the request.";
    case Errc::unknown_topic_or_partition:
      return "This server does not host this topic-partition.";
    case Errc::invalid_topic:
      return "The request attempted to perform an operation on an invalid topic.";
    case Errc::topic_already_exists:
      return "Topic with this name already exists.";
    case Errc::invalid_partitions:
      return "Number of partitions is below 1.";
    case Errc::invalid_replication_factor:
      return "Replication factor is below 1 or larger than the number of available brokers.";
    case Errc::invalid_replica_assignment:
      return "Replica assignment is invalid.";
    case Errc::invalid_config:
      return "Configuration is invalid.";
    case Errc::invalid_request:
      return "This most likely occurs because of a request being malformed by the client library "
             "or the message was sent to an incompatible broker. See the broker logs for more "
             "details.";
    case Errc::policy_violation:
      return "Request parameters do not satisfy the configured policy.";
    case Errc::preferred_leader_not_available:
      return "The preferred leader was not available.";
    case Errc::eligible_leaders_not_available:
      return "Eligible topic partition leaders are not available.";
    case Errc::election_not_needed:
      return "Leader election not needed for topic partition.";
    case Errc::no_reassignment_in_progress:
      return "No partition reassignment is in progress.";
    case Errc::unknown_topic_id:
      return "This server does not host this topic ID.";
  }
  return "";
}

std::string_view to_string(Errc e) noexcept {
  switch (e) {
    case Errc::none:
      return "none";
    case Errc::unknown_server_error:
      return "unknown_server_error";
    case Errc::unknown_topic_or_partition:
      return "unknown_topic_or_partition";
    case Errc::invalid_topic:
      return "invalid_topic";
    case Errc::topic_already_exists:
      return "topic_already_exists";
    case Errc::invalid_partitions:
      return "invalid_partitions";
    case Errc::invalid_replication_factor:
      return "invalid_replication_factor";
    case Errc::invalid_replica_assignment:
      return "invalid_replica_assignment";
    case Errc::invalid_config:
      return "invalid_config";
    case Errc::invalid_request:
      return "invalid_request";
    case Errc::policy_violation:
      return "policy_violation";
    case Errc::preferred_leader_not_available:
      return "preferred_leader_not_available";
    case Errc::eligible_leaders_not_available:
      return "eligible_leaders_not_available";
    case Errc::election_not_needed:
      return "election_not_needed";
    case Errc::no_reassignment_in_progress:
      return "no_reassignment_in_progress";
    case Errc::unknown_topic_id:
      return "unknown_topic_id";
  }
  return "unknown";
}

std::string_view to_string(StoreErrc e) noexcept {
  switch (e) {
    case StoreErrc::truncated_record:
      return "truncated_record";
    case StoreErrc::unsupported_frame:
      return "unsupported_frame";
    case StoreErrc::unknown_record_type:
      return "unknown_record_type";
    case StoreErrc::unsupported_version:
      return "unsupported_version";
    case StoreErrc::trailing_bytes:
      return "trailing_bytes";
    case StoreErrc::inconsistent_record:
      return "inconsistent_record";
    case StoreErrc::io_error:
      return "io_error";
    case StoreErrc::corrupt_log:
      return "corrupt_log";
    case StoreErrc::batch_too_large:
      return "batch_too_large";
    case StoreErrc::log_failed:
      return "log_failed";
  }
  return "unknown";
}

}  // namespace weir::metadata
