// The transaction coordinator's APIs: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
// DescribeTransactions, ListTransactions (InitProducerId is in init_producer_id.cpp). Each
// transactional id's requests run on the shard owning its `__transaction_state` partition
// (TxnService); the coordinator answers in its own terms and these handlers map its errors to
// what each request version knows, as Kafka's KafkaApis does.
#include <regex>
#include <set>

#include "broker/broker.h"
#include "broker/errors.h"
#include "broker/group_host.h"
#include "broker/handlers/handlers.h"
#include "broker/txn_host.h"

namespace weir::broker {

namespace asio = boost::asio;

namespace {

// PRODUCER_FENCED is unknown to requests below `first_version`: they get INVALID_PRODUCER_EPOCH.
std::int16_t for_version(txn::Error e, std::int16_t version, std::int16_t first_version) {
  if (e == txn::Error::kProducerFenced && version < first_version) return code(ErrorCode::kInvalidProducerEpoch);
  return txn::code(e);
}

using TxnTopic = protocol::AddPartitionsToTxnRequest::AddPartitionsToTxnTopic;
using TopicResult = protocol::AddPartitionsToTxnResponse::AddPartitionsToTxnTopicResult;

// Every partition of `topics` with the error `error_for(topic, partition)`, in request order.
template <class F>
std::vector<TopicResult> topic_results(const std::vector<TxnTopic>& topics, F error_for) {
  std::vector<TopicResult> out;
  for (const auto& t : topics) {
    auto it = std::find_if(out.begin(), out.end(), [&](const TopicResult& r) { return r.name == t.name; });
    if (it == out.end()) {
      it = out.emplace(out.end());
      it->name = t.name;
    }
    for (const std::int32_t p : t.partitions) {
      auto& r = it->results_by_partition.emplace_back();
      r.partition_index = p;
      r.partition_error_code = error_for(t.name, p);
    }
  }
  return out;
}

// Kafka's handling of one transaction of an AddPartitionsToTxn: unknown partitions fail the
// whole transaction (the others get OPERATION_NOT_ATTEMPTED); else add (or verify, v4+).
asio::awaitable<std::vector<TopicResult>> add_one(Broker& broker, std::int16_t version, const std::string& id,
                                                  std::int64_t producer_id, std::int16_t producer_epoch,
                                                  bool verify_only, const std::vector<TxnTopic>& topics) {
  auto catalog = broker.catalog();
  std::set<std::pair<std::string, std::int32_t>> unknown;
  std::vector<txn::TopicPartition> parts;
  for (const auto& t : topics) {
    const TopicInfo* info = catalog->find(t.name);
    for (const std::int32_t p : t.partitions) {
      if (info == nullptr || p < 0 || p >= info->partitions) {
        unknown.emplace(t.name, p);
      } else {
        txn::TopicPartition tp{t.name, p};
        if (std::find(parts.begin(), parts.end(), tp) == parts.end()) parts.push_back(std::move(tp));
      }
    }
  }
  if (!unknown.empty()) {
    co_return topic_results(topics, [&](const std::string& t, std::int32_t p) {
      return unknown.contains({t, p}) ? code(ErrorCode::kUnknownTopicOrPartition)
                                      : static_cast<std::int16_t>(55);  // OPERATION_NOT_ATTEMPTED
    });
  }
  if (verify_only) {
    std::vector<std::int16_t> errors = co_await broker.txns().verify(id, producer_id, producer_epoch, parts);
    co_return topic_results(topics, [&](const std::string& t, std::int32_t p) {
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].topic == t && parts[i].partition == p) return errors[i];
      }
      return std::int16_t{0};
    });
  }
  // v4+ adds at transaction version 2 (Kafka's transactionVersionForAddPartitionsToTxn).
  const txn::Answer a = co_await broker.txns().add_partitions(id, producer_id, producer_epoch, std::move(parts),
                                                              version > 3 ? std::int16_t{2} : std::int16_t{0});
  const std::int16_t error = for_version(a.error, version, 2);
  co_return topic_results(topics, [&](const std::string&, std::int32_t) { return error; });
}

}  // namespace

asio::awaitable<HandlerResult<AddPartitionsToTxnHandler::Response>> AddPartitionsToTxnHandler::handle(
    RequestContext& ctx, Request& req) {
  Broker& broker = ctx.broker;
  const std::int16_t version = ctx.version();
  Response resp;
  if (version < 4) {
    resp.results_by_topic_v3_and_below =
        co_await add_one(broker, version, req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
                         req.v3_and_below_producer_epoch, false, req.v3_and_below_topics);
    co_return resp;
  }
  for (const auto& t : req.transactions) {
    auto& r = resp.results_by_transaction.emplace_back();
    r.transactional_id = t.transactional_id;
    r.topic_results =
        co_await add_one(broker, version, t.transactional_id, t.producer_id, t.producer_epoch, t.verify_only, t.topics);
  }
  co_return resp;
}

asio::awaitable<HandlerResult<AddOffsetsToTxnHandler::Response>> AddOffsetsToTxnHandler::handle(RequestContext& ctx,
                                                                                                Request& req) {
  Broker& broker = ctx.broker;
  std::vector<txn::TopicPartition> parts{{std::string(kOffsetsTopic), broker.group_partition(req.group_id)}};
  const txn::Answer a = co_await broker.txns().add_partitions(req.transactional_id, req.producer_id, req.producer_epoch,
                                                              std::move(parts));
  Response resp;
  resp.error_code = for_version(a.error, ctx.version(), 2);
  co_return resp;
}

asio::awaitable<HandlerResult<EndTxnHandler::Response>> EndTxnHandler::handle(RequestContext& ctx, Request& req) {
  // v5+ ends the transaction at transaction version 2: the epoch is bumped and answered.
  const std::int16_t transaction_version = ctx.version() > 4 ? 2 : 0;
  const txn::Answer a = co_await ctx.broker.txns().end_txn(req.transactional_id, req.producer_id, req.producer_epoch,
                                                           req.committed, transaction_version);
  Response resp;
  resp.error_code = for_version(a.error, ctx.version(), 2);
  resp.producer_id = a.producer_id;
  resp.producer_epoch = a.producer_epoch;
  co_return resp;
}

asio::awaitable<HandlerResult<DescribeTransactionsHandler::Response>> DescribeTransactionsHandler::handle(
    RequestContext& ctx, Request& req) {
  Response resp;
  for (const auto& id : req.transactional_ids) {
    resp.transaction_states.push_back(co_await ctx.broker.txns().describe(id));
  }
  co_return resp;
}

asio::awaitable<HandlerResult<ListTransactionsHandler::Response>> ListTransactionsHandler::handle(RequestContext& ctx,
                                                                                                  Request& req) {
  Response resp;
  for (const auto& s : req.state_filters) {
    if (!txn::state_from_name(s)) resp.unknown_state_filters.push_back(s);
  }
  const std::int64_t duration = ctx.version() >= 1 ? req.duration_filter : -1;
  auto states = co_await ctx.broker.txns().list(req.state_filters, req.producer_id_filters, duration);
  std::optional<std::regex> pattern;
  if (ctx.version() >= 2 && req.transactional_id_pattern && !req.transactional_id_pattern->empty()) {
    try {
      pattern.emplace(*req.transactional_id_pattern);
    } catch (const std::regex_error&) {
      resp.error_code = code(ErrorCode::kInvalidRequest);
      co_return resp;
    }
  }
  for (auto& s : states) {
    if (pattern && !std::regex_match(s.transactional_id, *pattern)) continue;
    resp.transaction_states.push_back(std::move(s));
  }
  co_return resp;
}

}  // namespace weir::broker
