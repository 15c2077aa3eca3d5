// TxnOffsetCommit: the offsets a transactional producer commits for a group, written as that
// producer's transactional batch in the group's `__consumer_offsets` partition and pending until
// the transaction's marker reaches it. As Kafka's KafkaApis and group coordinator service:
// partitions of unknown topics (or past a topic's partition count) are answered
// UNKNOWN_TOPIC_OR_PARTITION first; then an empty group id answers INVALID_GROUP_ID for the rest;
// the coordinator checks the group (generation, member, instance id) and the metadata size.
// Before that, KIP-890: with transaction.partition.verification.enable the transaction
// coordinator is asked whether the group's `__consumer_offsets` partition is in the producer's
// transaction (v0-v4), and from v5 (transaction version 2: the client sent no AddOffsetsToTxn)
// it adds the partition, whatever that setting says — Kafka's
// txnOffsetCommitRequestVersionToTransactionSupportedOperation.
#include <map>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/group_service.h"
#include "broker/handlers/handlers.h"
#include "broker/partition_service.h"
#include "broker/txn_host.h"

namespace weir::broker {

namespace asio = boost::asio;

namespace {

// The verification (or, v5+, the addition) of the group's offsets partition to the transaction;
// 0 when it is in it. Errors are as Kafka's group coordinator answers a failed transactional
// write: the verification's error for the matching Produce version (v5 ~ Produce v12, v4 ~ v11,
// below ~ v10), then its handleOperationException mapping.
asio::awaitable<std::int16_t> verify_offsets_partition(Broker& broker, const TxnOffsetCommitHandler::Request& req,
                                                       std::int16_t version) {
  const bool add = version >= 5;
  if (!add && !broker.partitions().verification_enabled()) co_return 0;
  std::vector<PartitionRef> parts{{std::string(kOffsetsTopic), broker.group_partition(req.group_id)}};
  const std::vector<std::int16_t> errors = co_await broker.txns().verifier().verify(
      req.transactional_id, req.producer_id, req.producer_epoch, std::move(parts), add);
  if (errors.empty() || errors.front() == 0) co_return 0;
  const std::int16_t produce_version = add ? 12 : (version == 4 ? 11 : 10);
  const std::int16_t error = transaction_verification_error(errors.front(), produce_version).first;
  const auto is = [error](ErrorCode e) { return error == code(e); };
  if (is(ErrorCode::kNetworkException)) co_return code(ErrorCode::kCoordinatorLoadInProgress);
  if (is(ErrorCode::kUnknownTopicOrPartition) || is(ErrorCode::kNotEnoughReplicas) ||
      is(ErrorCode::kRequestTimedOut)) {
    co_return code(ErrorCode::kCoordinatorNotAvailable);
  }
  if (is(ErrorCode::kNotLeaderOrFollower) || is(ErrorCode::kKafkaStorageError)) {
    co_return code(ErrorCode::kNotCoordinator);
  }
  co_return error;
}

}  // namespace

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
    } else if (const std::int16_t refused = co_await verify_offsets_partition(broker, valid, version); refused != 0) {
      error = refused;
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
