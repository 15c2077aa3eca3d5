// DescribeTopicPartitions (KIP-966): Kafka 4's paginated topic describe, which the admin client
// (kafka-topics --describe) prefers to Metadata when the broker serves it.
//
// Topics are answered in name order, requested ones deduplicated; an empty list means every
// topic. The answer holds at most min(ResponsePartitionLimit, 2000) partitions (at least 1);
// where it stops, NextCursor names the first partition left out (the start of the next topic
// when the limit ran out exactly at a topic's end). A cursor skips the topics named before it
// and starts its own topic at its partition. As Kafka does:
//   - an unknown requested topic is answered with UNKNOWN_TOPIC_OR_PARTITION (or
//     INVALID_TOPIC_EXCEPTION for an illegal name) in its place in name order, unknown topics
//     being skipped when every topic is described;
//   - a cursor on a topic missing from a non-empty request list, or with a negative partition,
//     makes the whole request invalid: every requested topic gets INVALID_REQUEST, and an
//     all-topics request an empty answer;
//   - an empty topic name in a request without a cursor fails the request the same way, with
//     UNKNOWN_SERVER_ERROR;
//   - a cursor partition past a topic's end gives the topic with no partitions.
// Differs from Kafka on purpose: Kafka computes the end of a topic's page as cursor partition +
// limit in 32 bits, so a cursor partition near 2^31 wraps and Kafka answers a negative
// NextCursor; here the page is empty and there is no next cursor.
// One node: the leader, replicas and ISR are this node, the ELR lists and offline replicas empty.
// No authorizer: every topic operation is authorized.
#include <algorithm>
#include <set>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace {

using Response = DescribeTopicPartitionsHandler::Response;
using ResponseTopic = Response::DescribeTopicPartitionsResponseTopic;

// Kafka's max.request.partition.size.limit (default 2000), not configurable here.
constexpr std::int32_t kMaxPartitionsPerResponse = 2000;

// AclOperation codes READ(3) WRITE(4) CREATE(5) DELETE(6) ALTER(7) DESCRIBE(8)
// DESCRIBE_CONFIGS(10) ALTER_CONFIGS(11): what Kafka reports for a topic without an authorizer.
constexpr std::int32_t kAllTopicOperations =
    (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11);
static_assert(kAllTopicOperations == 3576);

// Kafka's Topic.isInternal: decided by the name, for unknown topics too.
bool is_internal_topic(std::string_view name) {
  return name == "__consumer_offsets" || name == "__transaction_state" || name == "__share_group_state";
}

// Kafka's answer to a request it throws on: every requested topic with the error.
Response error_response(const DescribeTopicPartitionsHandler::Request& req, ErrorCode error) {
  Response resp;
  for (const auto& t : req.topics) {
    auto& out = resp.topics.emplace_back();
    out.name = t.name;
    out.error_code = code(error);
  }
  return resp;
}

ResponseTopic unknown_topic(const std::string& name) {
  ResponseTopic out;
  out.name = name;
  out.error_code =
      code(metadata::topic_name_error(name) ? ErrorCode::kInvalidTopicException : ErrorCode::kUnknownTopicOrPartition);
  out.is_internal = is_internal_topic(name);
  out.topic_authorized_operations = kAllTopicOperations;
  return out;
}

// Partitions [first, first + max_count) of a topic; returns how many there were.
std::int32_t fill_partitions(const TopicInfo& t, const Catalog& catalog, std::int32_t first, std::int32_t max_count,
                             ResponseTopic& out) {
  const std::int32_t end = first + std::min(max_count, std::max(t.partitions - first, 0));
  for (std::int32_t i = first; i < end; ++i) {
    const PartitionInfo& info = t.parts[static_cast<std::size_t>(i)];
    auto& p = out.partitions.emplace_back();
    p.partition_index = i;
    p.leader_id = info.leader;
    p.leader_epoch = info.leader_epoch;
    p.replica_nodes = info.replicas;
    p.isr_nodes = info.isr;
    p.eligible_leader_replicas = info.eligible_leader_replicas;
    p.last_known_elr = info.last_known_elr;
    p.offline_replicas = info.offline_replicas;
    if (info.leader < 0 || catalog.broker(info.leader) == nullptr) p.error_code = code(ErrorCode::kLeaderNotAvailable);
  }
  return std::max(end - first, 0);
}

}  // namespace

boost::asio::awaitable<HandlerResult<DescribeTopicPartitionsHandler::Response>> DescribeTopicPartitionsHandler::handle(
    RequestContext& ctx, Request& req) {
  const Broker& broker = ctx.broker;
  auto catalog = broker.catalog();
  const bool all_topics = req.topics.empty();
  const std::string cursor_topic = req.cursor ? req.cursor->topic_name : std::string();

  // Names at or after the cursor's topic, in order.
  std::set<std::string> names;
  if (all_topics) {
    for (const auto& [name, t] : catalog->topics) {
      if (name >= cursor_topic) {
        names.insert(name);
      }
    }
  } else {
    for (const auto& t : req.topics) {
      if (t.name >= cursor_topic) {
        names.insert(t.name);
      }
    }
    // The cursor's topic must be one of the requested topics.
    if (req.cursor && !names.contains(req.cursor->topic_name)) {
      co_return error_response(req, ErrorCode::kInvalidRequest);
    }
  }
  if (req.cursor && req.cursor->partition_index < 0) {
    co_return error_response(req, ErrorCode::kInvalidRequest);
  }
  // Without a cursor Kafka fails on an empty topic name: it looks the cursor up for the topic
  // named "" (its default cursor topic) and finds none.
  if (!req.cursor && names.contains("")) {
    co_return error_response(req, ErrorCode::kUnknownServerError);
  }

  Response resp;
  std::int32_t remaining = std::max(std::min(kMaxPartitionsPerResponse, req.response_partition_limit), 1);
  for (const auto& name : names) {
    if (remaining == 0) {
      // The previous topic ended exactly at the limit: the next answer starts at this one.
      auto& next = resp.next_cursor.emplace();
      next.topic_name = name;
      next.partition_index = 0;
      break;
    }
    const TopicInfo* info = catalog->find(name);
    if (info == nullptr) {
      if (!all_topics) {
        resp.topics.push_back(unknown_topic(name));
      }
      continue;
    }
    auto& out = resp.topics.emplace_back();
    out.name = name;
    out.topic_id = info->id;
    out.is_internal = is_internal_topic(name);
    out.topic_authorized_operations = kAllTopicOperations;
    const std::int32_t first = req.cursor && name == cursor_topic ? req.cursor->partition_index : 0;
    const std::int32_t filled = fill_partitions(*info, *catalog, first, remaining, out);
    if (first + filled < info->partitions) {
      auto& next = resp.next_cursor.emplace();
      next.topic_name = name;
      next.partition_index = first + filled;
      break;
    }
    remaining -= filled;
  }
  co_return resp;
}

}  // namespace weir::broker
