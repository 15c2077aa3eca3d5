#include "cli/txn.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "cli/client_command.h"
#include "protocol/gen/describe_producers_request.h"
#include "protocol/gen/describe_transactions_request.h"
#include "protocol/gen/list_transactions_request.h"
#include "protocol/gen/write_txn_markers_request.h"

namespace weir::cli {

namespace asio = boost::asio;

namespace {

constexpr std::size_t kMaxBatch = 500;  // partitions per DescribeProducers, as kafka-transactions sends them

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// kafka-transactions' tables: every cell, the header's included, padded to its column's widest
// cell and followed by a tab.
std::string tab_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& h : headers) widths.push_back(h.size());
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < widths.size() && i < r.size(); ++i) widths[i] = std::max(widths[i], r[i].size());
  }
  std::string out;
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < widths.size(); ++i) {
      out += fmt::format("{:<{}}\t", i < cells.size() ? cells[i] : std::string(), widths[i]);
    }
    out += "\n";
  };
  line(headers);
  for (const auto& r : rows) line(r);
  return out;
}

// The topic's partitions from a fresh Metadata answer; an error message when it does not exist.
asio::awaitable<Result<const client::TopicInfo*, std::string>> topic_info(Session& s, std::string topic) {
  std::optional<std::vector<std::string>> wanted{std::in_place, std::vector<std::string>{topic}};
  auto md = co_await s.client().metadata(std::move(wanted), s.deadline());
  if (!md)
    co_return unexpected(fmt::format("cannot read the metadata of topic '{}': {}", topic, md.error().to_string()));
  const client::TopicInfo* t = s.client().cluster().topic(topic);
  if (t == nullptr || t->error_code != client::codes::kNone || t->partitions.empty()) {
    co_return unexpected(fmt::format("topic '{}' does not exist", topic));
  }
  co_return t;
}

// --- list ---

struct ListArgs {
  std::string pattern;                // --transactional-id-pattern (ListTransactions v2)
  std::int64_t duration_filter = -1;  // --duration-filter: open at least this many ms (v1)
  std::vector<std::string> states;    // --state
};

asio::awaitable<int> list_transactions(Session& s, const ListArgs& args) {
  std::optional<std::vector<std::string>> none{std::in_place};
  auto md = co_await s.client().metadata(std::move(none), s.deadline());
  if (!md) co_return s.fail("cannot reach the cluster", md.error());
  std::vector<std::int32_t> brokers;
  for (const auto& b : md->brokers) brokers.push_back(b.node_id);
  std::ranges::sort(brokers);
  std::vector<std::vector<std::string>> rows;
  Json j;
  j.begin_object().key("transactions").begin_array();
  for (const std::int32_t id : brokers) {
    protocol::ListTransactionsRequest req;
    req.state_filters = args.states;
    req.duration_filter = args.duration_filter;
    if (!args.pattern.empty()) req.transactional_id_pattern = args.pattern;
    client::Target node = client::target::Node{id};
    auto resp = co_await s.send(std::move(node), std::move(req), client::RetryOn::kAllRetriable);
    if (!resp) co_return s.fail(fmt::format("cannot list the transactions of broker {}", id), resp.error());
    if (resp->error_code != client::codes::kNone) {
      co_return s.fail_code(fmt::format("cannot list the transactions of broker {}", id), resp->error_code,
                            std::nullopt);
    }
    for (const auto& t : resp->transaction_states) {
      rows.push_back({t.transactional_id, std::to_string(id), std::to_string(t.producer_id), t.transaction_state});
      j.begin_object().key("transactional_id").value(t.transactional_id).key("coordinator").value(id);
      j.key("producer_id").value(t.producer_id).key("state").value(t.transaction_state).end_object();
    }
  }
  j.end_array().end_object();
  print(s.json() ? j.str() + "\n"
                 : tab_table({"TransactionalId", "Coordinator", "ProducerId", "TransactionState"}, rows));
  co_return kExitOk;
}

// --- describe ---

struct DescribeArgs {
  std::string transactional_id;
};

struct Described {
  std::int32_t coordinator = -1;
  protocol::DescribeTransactionsResponse::TransactionState state;
};

// DescribeTransactions at the id's coordinator; the error code when the coordinator refused.
asio::awaitable<Result<Described, client::Error>> describe_one(Session& s, std::string id) {
  auto where = co_await s.client().find_coordinator(client::CoordinatorType::kTransaction, id, s.deadline());
  if (!where) co_return unexpected(where.error());
  protocol::DescribeTransactionsRequest req;
  req.transactional_ids.push_back(id);
  client::Target coordinator = client::target::Coordinator{client::CoordinatorType::kTransaction, id};
  auto resp = co_await s.send(std::move(coordinator), std::move(req), client::RetryOn::kAllRetriable);
  if (!resp) co_return unexpected(resp.error());
  if (resp->transaction_states.empty()) co_return unexpected(client::Error::protocol("no transaction state answered"));
  Described d{where->node_id, resp->transaction_states.front()};
  if (d.state.error_code != client::codes::kNone) co_return unexpected(client::Error::kafka(d.state.error_code, ""));
  co_return d;
}

std::vector<std::string> partitions_of(const protocol::DescribeTransactionsResponse::TransactionState& t) {
  std::vector<std::string> out;
  for (const auto& topic : t.topics) {
    for (const auto p : topic.partitions) out.push_back(fmt::format("{}-{}", topic.topic, p));
  }
  std::ranges::sort(out);
  return out;
}

asio::awaitable<int> describe_transaction(Session& s, const DescribeArgs& args) {
  auto d = co_await describe_one(s, args.transactional_id);
  if (!d) {
    if (d.error().code == client::codes::kTransactionalIdNotFound) {
      co_return s.fail(fmt::format("transactional id '{}' does not exist", args.transactional_id));
    }
    co_return s.fail(fmt::format("cannot describe transactional id '{}'", args.transactional_id), d.error());
  }
  const auto& t = d->state;
  const bool started = t.transaction_start_time_ms >= 0;
  const std::vector<std::string> parts = partitions_of(t);
  if (s.json()) {
    Json j;
    j.begin_object().key("coordinator").value(d->coordinator).key("transactional_id").value(args.transactional_id);
    j.key("producer_id").value(t.producer_id).key("producer_epoch").value(static_cast<std::int32_t>(t.producer_epoch));
    j.key("state").value(t.transaction_state).key("timeout_ms").value(t.transaction_timeout_ms);
    j.key("start_time_ms").value(started ? std::optional(t.transaction_start_time_ms) : std::nullopt);
    j.key("partitions").begin_array();
    for (const auto& p : parts) j.value(p);
    j.end_array().end_object();
    print(j.str() + "\n");
    co_return kExitOk;
  }
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : ",") + p;
  print(tab_table({"CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                   "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"},
                  {{std::to_string(d->coordinator), args.transactional_id, std::to_string(t.producer_id),
                    std::to_string(t.producer_epoch), t.transaction_state, std::to_string(t.transaction_timeout_ms),
                    started ? std::to_string(t.transaction_start_time_ms) : "None",
                    started ? std::to_string(now_ms() - t.transaction_start_time_ms) : "None", joined}}));
  co_return kExitOk;
}

// --- producers ---

using Producers = std::vector<protocol::DescribeProducersResponse::ProducerState>;
using TopicPartition = std::pair<std::string, std::int32_t>;

// DescribeProducers of partitions, asked of `broker` (a replica) or of each partition's leader.
// A partition the broker refused maps to its error code.
struct ProducerStates {
  std::map<TopicPartition, Producers> producers;
  std::map<TopicPartition, std::pair<std::int16_t, std::string>> errors;
};

asio::awaitable<Result<ProducerStates, client::Error>> describe_producers(Session& s, std::vector<TopicPartition> parts,
                                                                          std::optional<std::int32_t> broker) {
  // One request per destination and batch.
  std::map<std::int32_t, std::vector<TopicPartition>> by_node;  // -1: by leader, one request per partition
  for (const auto& tp : parts) {
    if (broker) {
      by_node[*broker].push_back(tp);
    } else if (auto leader = s.client().cluster().leader(tp.first, tp.second)) {
      by_node[*leader].push_back(tp);
    } else {
      by_node[-1].push_back(tp);
    }
  }
  ProducerStates out;
  for (auto& [node, list] : by_node) {
    for (std::size_t from = 0; from < list.size(); from += node < 0 ? 1 : kMaxBatch) {
      const std::size_t to = std::min(list.size(), from + (node < 0 ? 1 : kMaxBatch));
      protocol::DescribeProducersRequest req;
      for (std::size_t i = from; i < to; ++i) {
        if (req.topics.empty() || req.topics.back().name != list[i].first)
          req.topics.emplace_back().name = list[i].first;
        req.topics.back().partition_indexes.push_back(list[i].second);
      }
      client::Target target = node >= 0 ? client::Target{client::target::Node{node}}
                                        : client::Target{client::target::Leader{list[from].first, list[from].second}};
      auto resp = co_await s.send(std::move(target), std::move(req), client::RetryOn::kAllRetriable);
      if (!resp) co_return unexpected(resp.error());
      for (auto& t : resp->topics) {
        for (auto& p : t.partitions) {
          const TopicPartition tp{t.name, p.partition_index};
          if (p.error_code != client::codes::kNone) {
            out.errors[tp] = {p.error_code, p.error_message.value_or("")};
          } else {
            out.producers[tp] = std::move(p.active_producers);
          }
        }
      }
    }
  }
  co_return out;
}

struct ProducersArgs {
  std::string topic;
  std::int32_t partition = -1;
  std::optional<std::int32_t> broker;
};

asio::awaitable<int> show_producers(Session& s, const ProducersArgs& args) {
  auto t = co_await topic_info(s, args.topic);
  if (!t) co_return s.fail(t.error());
  const TopicPartition tp{args.topic, args.partition};
  std::vector<TopicPartition> parts{tp};
  auto states = co_await describe_producers(s, std::move(parts), args.broker);
  const std::string where = args.broker ? fmt::format("broker {}", *args.broker) : std::string("its leader");
  if (!states) {
    co_return s.fail(fmt::format("cannot describe the producers of {}-{} on {}", tp.first, tp.second, where),
                     states.error());
  }
  if (auto e = states->errors.find(tp); e != states->errors.end()) {
    co_return s.fail_code(fmt::format("cannot describe the producers of {}-{} on {}", tp.first, tp.second, where),
                          e->second.first, e->second.second);
  }
  const Producers& producers = states->producers[tp];
  if (s.json()) {
    Json j;
    j.begin_object().key("producers").begin_array();
    for (const auto& p : producers) {
      j.begin_object().key("producer_id").value(p.producer_id).key("producer_epoch").value(p.producer_epoch);
      j.key("coordinator_epoch").value(p.coordinator_epoch).key("last_sequence").value(p.last_sequence);
      j.key("last_timestamp").value(p.last_timestamp).key("current_transaction_start_offset");
      j.value(p.current_txn_start_offset >= 0 ? std::optional(p.current_txn_start_offset) : std::nullopt).end_object();
    }
    j.end_array().end_object();
    print(j.str() + "\n");
    co_return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : producers) {
    rows.push_back({std::to_string(p.producer_id), std::to_string(p.producer_epoch),
                    std::to_string(p.coordinator_epoch), std::to_string(p.last_sequence),
                    std::to_string(p.last_timestamp),
                    p.current_txn_start_offset >= 0 ? std::to_string(p.current_txn_start_offset) : "None"});
  }
  print(tab_table({"ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                   "CurrentTransactionStartOffset"},
                  rows));
  co_return kExitOk;
}

// --- find-hanging ---

struct HangingArgs {
  std::optional<std::int32_t> broker;
  std::string topic;
  std::optional<std::int32_t> partition;
  std::int32_t max_transaction_timeout_min = 15;
};

// An open transaction (a producer with a transaction start offset) on a partition: hanging when it
// has been open longer than any transaction may be and its coordinator does not expect to end it
// there (kafka-transactions find-hanging's rule).
asio::awaitable<int> find_hanging(Session& s, const HangingArgs& args) {
  std::vector<TopicPartition> parts;
  if (!args.topic.empty() && args.partition) {
    parts.emplace_back(args.topic, *args.partition);
  } else {
    std::optional<std::vector<std::string>> wanted;  // nullopt: every topic
    if (!args.topic.empty()) wanted.emplace(std::vector<std::string>{args.topic});
    auto md = co_await s.client().metadata(std::move(wanted), s.deadline());
    if (!md) co_return s.fail("cannot read the topics' metadata", md.error());
    for (const auto& t : md->topics) {
      if (!t.name || t.error_code != client::codes::kNone) {
        if (!args.topic.empty()) co_return s.fail(fmt::format("topic '{}' does not exist", args.topic));
        continue;
      }
      for (const auto& p : t.partitions) {
        if (args.broker && std::ranges::find(p.replica_nodes, *args.broker) == p.replica_nodes.end()) continue;
        parts.emplace_back(*t.name, p.partition_index);
      }
    }
    std::ranges::sort(parts);
  }
  auto states = co_await describe_producers(s, parts, args.broker);
  if (!states) co_return s.fail("cannot describe the producers", states.error());
  for (const auto& [tp, e] : states->errors) {
    co_return s.fail_code(fmt::format("cannot describe the producers of {}-{}", tp.first, tp.second), e.first,
                          e.second);
  }
  const std::int64_t now = now_ms();
  const std::int64_t max_ms = std::int64_t{args.max_transaction_timeout_min} * 60'000;
  struct Open {
    TopicPartition tp;
    protocol::DescribeProducersResponse::ProducerState p;
  };
  std::vector<Open> candidates;
  for (const auto& [tp, producers] : states->producers) {
    for (const auto& p : producers) {
      if (p.current_txn_start_offset >= 0 && now - p.last_timestamp > max_ms) candidates.push_back({tp, p});
    }
  }
  std::vector<Open> hanging;
  if (!candidates.empty()) {
    // Which transactional ids these producers belong to, from every coordinator.
    std::set<std::int64_t> ids;
    for (const auto& c : candidates) ids.insert(c.p.producer_id);
    std::optional<std::vector<std::string>> none{std::in_place};
    auto md = co_await s.client().metadata(std::move(none), s.deadline());
    if (!md) co_return s.fail("cannot reach the cluster", md.error());
    std::map<std::int64_t, std::string> txn_ids;
    for (const auto& b : md->brokers) {
      protocol::ListTransactionsRequest req;
      req.producer_id_filters.assign(ids.begin(), ids.end());
      client::Target node = client::target::Node{b.node_id};
      auto resp = co_await s.send(std::move(node), std::move(req), client::RetryOn::kAllRetriable);
      if (!resp) co_return s.fail(fmt::format("cannot list the transactions of broker {}", b.node_id), resp.error());
      for (const auto& t : resp->transaction_states) {
        if (ids.contains(t.producer_id)) txn_ids[t.producer_id] = t.transactional_id;
      }
    }
    std::map<std::string, std::optional<std::set<std::string>>> expected;  // id -> partitions its coordinator ends
    for (const auto& [pid, tid] : txn_ids) {
      if (expected.contains(tid)) continue;
      auto d = co_await describe_one(s, tid);
      if (!d) {
        if (d.error().code != client::codes::kTransactionalIdNotFound) {
          co_return s.fail(fmt::format("cannot describe transactional id '{}'", tid), d.error());
        }
        expected[tid] = std::nullopt;
        continue;
      }
      const auto listed = partitions_of(d->state);
      expected[tid] = std::set<std::string>(listed.begin(), listed.end());
    }
    for (const auto& c : candidates) {
      auto tid = txn_ids.find(c.p.producer_id);
      if (tid == txn_ids.end() || !expected[tid->second] ||
          !expected[tid->second]->contains(fmt::format("{}-{}", c.tp.first, c.tp.second))) {
        hanging.push_back(c);
      }
    }
  }
  if (s.json()) {
    Json j;
    j.begin_object().key("hanging").begin_array();
    for (const auto& h : hanging) {
      j.begin_object().key("topic").value(h.tp.first).key("partition").value(h.tp.second);
      j.key("producer_id").value(h.p.producer_id).key("producer_epoch").value(h.p.producer_epoch);
      j.key("coordinator_epoch").value(h.p.coordinator_epoch).key("start_offset").value(h.p.current_txn_start_offset);
      j.key("last_timestamp").value(h.p.last_timestamp).end_object();
    }
    j.end_array().end_object();
    print(j.str() + "\n");
    co_return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& h : hanging) {
    rows.push_back({h.tp.first, std::to_string(h.tp.second), std::to_string(h.p.producer_id),
                    std::to_string(h.p.producer_epoch), std::to_string(h.p.coordinator_epoch),
                    std::to_string(h.p.current_txn_start_offset), std::to_string(h.p.last_timestamp),
                    std::to_string((now - h.p.last_timestamp) / 60'000)});
  }
  print(tab_table({"Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                   "LastTimestamp", "Duration(min)"},
                  rows));
  co_return kExitOk;
}

// --- abort ---

struct AbortArgs {
  std::string topic;
  std::int32_t partition = -1;
  std::optional<std::int64_t> start_offset;
  std::optional<std::int64_t> producer_id;
  std::optional<std::int16_t> producer_epoch;
  std::optional<std::int32_t> coordinator_epoch;
};

// Writes an abort marker for the producer's open transaction on the partition (WriteTxnMarkers to
// its leader, as Kafka's Admin.abortTransaction does). The producer comes from --start-offset (the
// producer whose open transaction starts there) or is given whole.
asio::awaitable<int> abort_transaction(Session& s, const AbortArgs& args) {
  auto t = co_await topic_info(s, args.topic);
  if (!t) co_return s.fail(t.error());
  const TopicPartition tp{args.topic, args.partition};
  std::int64_t producer_id = args.producer_id.value_or(-1);
  std::int16_t epoch = args.producer_epoch.value_or(0);
  std::int32_t coordinator_epoch = args.coordinator_epoch.value_or(0);
  if (args.start_offset) {
    std::vector<TopicPartition> parts{tp};
    auto states = co_await describe_producers(s, std::move(parts), std::nullopt);
    if (!states) {
      co_return s.fail(fmt::format("cannot read the producers of {}-{}", tp.first, tp.second), states.error());
    }
    if (auto e = states->errors.find(tp); e != states->errors.end()) {
      co_return s.fail_code(fmt::format("cannot read the producers of {}-{}", tp.first, tp.second), e->second.first,
                            e->second.second);
    }
    const Producers& producers = states->producers[tp];
    auto it = std::ranges::find_if(producers,
                                   [&](const auto& p) { return p.current_txn_start_offset == *args.start_offset; });
    if (it == producers.end()) {
      co_return s.fail(fmt::format("no open transaction starts at offset {} in partition {}-{}", *args.start_offset,
                                   tp.first, tp.second));
    }
    producer_id = it->producer_id;
    epoch = static_cast<std::int16_t>(it->producer_epoch);
    coordinator_epoch = it->coordinator_epoch;
  }
  // A transaction that hangs since a new producer's first one has no coordinator epoch yet (-1);
  // 0 is at most any real one, as kafka-transactions assumes.
  coordinator_epoch = std::max(0, coordinator_epoch);
  protocol::WriteTxnMarkersRequest req;
  auto& m = req.markers.emplace_back();
  m.producer_id = producer_id;
  m.producer_epoch = epoch;
  m.transaction_result = false;  // abort
  m.coordinator_epoch = coordinator_epoch;
  auto& topic = m.topics.emplace_back();
  topic.name = tp.first;
  topic.partition_indexes.push_back(tp.second);
  client::Target leader = client::target::Leader{tp.first, tp.second};
  auto resp = co_await s.send(std::move(leader), std::move(req), client::RetryOn::kRoutingErrors);
  const std::string what = fmt::format("cannot abort the transaction of producer {} (epoch {}) in {}-{}", producer_id,
                                       epoch, tp.first, tp.second);
  if (!resp) co_return s.fail(what, resp.error());
  for (const auto& marker : resp->markers) {
    for (const auto& rt : marker.topics) {
      for (const auto& p : rt.partitions) {
        if (p.error_code != client::codes::kNone) co_return s.fail_code(what, p.error_code, std::nullopt);
      }
    }
  }
  if (s.json()) {
    Json j;
    j.begin_object().key("aborted").begin_object().key("topic").value(tp.first).key("partition").value(tp.second);
    j.key("producer_id").value(producer_id).key("producer_epoch").value(static_cast<std::int32_t>(epoch));
    j.key("coordinator_epoch").value(coordinator_epoch).end_object().end_object();
    print(j.str() + "\n");
  }
  co_return kExitOk;
}

}  // namespace

void add_txn_command(CLI::App& app, int& exit_code) {
  auto* txn = app.add_subcommand(
      "txn", "Transactions: list and describe them, the producers of a partition, find and abort hanging ones");
  txn->require_subcommand(1);
  auto flags = std::make_shared<ClientFlags>();

  auto list_args = std::make_shared<ListArgs>();
  auto* list = txn->add_subcommand("list", "The transactional ids every coordinator knows (kafka-transactions list)");
  add_client_flags(*list, *flags);
  list->add_option("--transactional-id-pattern", list_args->pattern, "Only ids matching this regular expression");
  list->add_option("--duration-filter", list_args->duration_filter,
                   "Only transactions open at least this many milliseconds");
  list->add_option("--state", list_args->states, "Only transactions in these states (Ongoing, PrepareCommit, ...)");
  list->callback([flags, list_args, &exit_code]() {
    exit_code = run_client(*flags, [list_args](Session& s) { return list_transactions(s, *list_args); });
  });

  auto describe_args = std::make_shared<DescribeArgs>();
  auto* describe = txn->add_subcommand("describe", "One transactional id's state at its coordinator");
  add_client_flags(*describe, *flags);
  describe->add_option("--transactional-id", describe_args->transactional_id, "The transactional id")->required();
  describe->callback([flags, describe_args, &exit_code]() {
    exit_code = run_client(*flags, [describe_args](Session& s) { return describe_transaction(s, *describe_args); });
  });

  auto producers_args = std::make_shared<ProducersArgs>();
  auto* producers =
      txn->add_subcommand("producers", "The active producers of a partition (kafka-transactions describe-producers)");
  add_client_flags(*producers, *flags);
  producers->add_option("--topic", producers_args->topic, "The topic")->required();
  producers->add_option("--partition", producers_args->partition, "The partition")->required();
  producers->add_option("--broker-id", producers_args->broker, "Ask this replica instead of the leader");
  producers->callback([flags, producers_args, &exit_code]() {
    exit_code = run_client(*flags, [producers_args](Session& s) { return show_producers(s, *producers_args); });
  });

  auto hanging_args = std::make_shared<HangingArgs>();
  auto* hanging = txn->add_subcommand("find-hanging",
                                      "Open transactions older than any may be that their coordinator will not end");
  add_client_flags(*hanging, *flags);
  hanging->add_option("--broker-id", hanging_args->broker, "Search the partitions this broker has a replica of");
  hanging->add_option("--topic", hanging_args->topic, "Search this topic");
  hanging->add_option("--partition", hanging_args->partition, "Search this partition of --topic");
  hanging
      ->add_option("--max-transaction-timeout", hanging_args->max_transaction_timeout_min,
                   "The longest transaction timeout in use, in minutes (default 15)")
      ->check(CLI::Range(0, 1'000'000));
  hanging->callback([flags, hanging_args, &exit_code]() {
    if (hanging_args->topic.empty() && !hanging_args->broker) {
      std::fprintf(stderr, "error: find-hanging needs --topic or --broker-id to limit the search\n");
      exit_code = kExitUsage;
      return;
    }
    if (hanging_args->partition && hanging_args->topic.empty()) {
      std::fprintf(stderr, "error: --partition needs --topic\n");
      exit_code = kExitUsage;
      return;
    }
    exit_code = run_client(*flags, [hanging_args](Session& s) { return find_hanging(s, *hanging_args); });
  });

  auto abort_args = std::make_shared<AbortArgs>();
  auto* abort = txn->add_subcommand("abort", "Aborts a hanging transaction on one partition");
  add_client_flags(*abort, *flags);
  abort->add_option("--topic", abort_args->topic, "The topic")->required();
  abort->add_option("--partition", abort_args->partition, "The partition")->required();
  abort->add_option("--start-offset", abort_args->start_offset, "The offset the open transaction starts at");
  abort->add_option("--producer-id", abort_args->producer_id, "Without --start-offset: the producer id");
  abort->add_option("--producer-epoch", abort_args->producer_epoch, "Without --start-offset: its epoch");
  abort->add_option("--coordinator-epoch", abort_args->coordinator_epoch,
                    "Without --start-offset: its coordinator epoch");
  abort->callback([flags, abort_args, &exit_code]() {
    const AbortArgs& a = *abort_args;
    if (!a.start_offset && !(a.producer_id && a.producer_epoch && a.coordinator_epoch)) {
      std::fprintf(stderr,
                   "error: name the transaction with --start-offset, or with --producer-id, --producer-epoch and "
                   "--coordinator-epoch\n");
      exit_code = kExitUsage;
      return;
    }
    exit_code = run_client(*flags, [abort_args](Session& s) { return abort_transaction(s, *abort_args); });
  });
}

}  // namespace weir::cli
