// TxnOffsetCommit: the offsets a transactional producer commits for a group, written as that
// producer's transactional batch in the group's `__consumer_offsets` partition and pending until
// the transaction's marker reaches it. As Kafka's KafkaApis and group coordinator service:
// partitions of unknown topics (or past a topic's partition count) are answered
// UNKNOWN_TOPIC_OR_PARTITION first; then an empty group id answers INVALID_GROUP_ID for the rest;
// the coordinator checks the group (generation, member, instance id) and the metadata size.
// KIP-890 verification of the transaction (Kafka's default) is not done here yet: a producer with
// no transaction is accepted, as Kafka does with transaction.partition.verification.enable=false.
#include <map>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/group_service.h"
#include "broker/handlers/handlers.h"

namespace weir::broker {

namespace asio = boost::asio;

asio::awaitable<HandlerResult<TxnOffsetCommitHandler::Response>> TxnOffsetCommitHandler::handle(RequestContext& ctx,
                                                                                                Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  const auto catalog = broker.catalog();

  using Key = std::pair<std::string, std::int32_t>;
  std::map<Key, std::int16_t> decided;
  Request valid = req;
  valid.topics.clear();
  for (const auto& t : req.topics) {
    const TopicInfo* info = catalog->find(t.name);
    Request::TxnOffsetCommitRequestTopic* vt = nullptr;
    for (const auto& p : t.partitions) {
      if (info == nullptr || p.partition_index < 0 || p.partition_index >= info->partitions) {
        decided[{t.name, p.partition_index}] = code(ErrorCode::kUnknownTopicOrPartition);
        continue;
      }
      if (vt == nullptr) {
        vt = &valid.topics.emplace_back();
        vt->name = t.name;
      }
      vt->partitions.push_back(p);
    }
  }

  if (!valid.topics.empty()) {
    std::int16_t error = 0;
    Response answered;
    if (valid.group_id.empty()) {
      error = code(ErrorCode::kInvalidGroupId);
    } else {
      auto out = co_await broker.groups().update<Response>(
          broker.group_partition(valid.group_id),
          [&](group::GroupCoordinator& c, std::int64_t now) { return c.txn_offset_commit(valid, version, now); });
      error = out.error;
      answered = std::move(out.response);
    }
    for (const auto& t : answered.topics) {
      for (const auto& p : t.partitions) decided[{t.name, p.partition_index}] = p.error_code;
    }
    if (error != 0) {
      for (const auto& t : valid.topics) {
        for (const auto& p : t.partitions) {
          auto& slot = decided[{t.name, p.partition_index}];
          if (slot == 0) slot = error;
        }
      }
    }
  }

  Response resp;
  for (const auto& t : req.topics) {
    auto& rt = resp.topics.emplace_back();
    rt.name = t.name;
    for (const auto& p : t.partitions) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = p.partition_index;
      auto d = decided.find({t.name, p.partition_index});
      rp.error_code = d != decided.end() ? d->second : code(ErrorCode::kUnknownServerError);
    }
  }
  co_return resp;
}

}  // namespace weir::broker
