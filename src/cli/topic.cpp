#include "cli/topic.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "cli/client_command.h"
#include "cli/configs.h"
#include "protocol/gen/create_partitions_request.h"
#include "protocol/gen/delete_topics_request.h"

namespace weir::cli {

namespace asio = boost::asio;

namespace {


// "key=value" into its parts; false without '=' or with an empty key.
bool split_assignment(const std::string& text, std::pair<std::string, std::string>& out) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  out = {text.substr(0, eq), text.substr(eq + 1)};
  return true;
}

// Every topic name the cluster has (for "did you mean" hints); empty if the lookup fails.
asio::awaitable<std::vector<std::string>> all_topic_names(Session& s) {
  std::optional<std::vector<std::string>> all;
  auto md = co_await s.client().metadata(std::move(all), s.deadline());
  std::vector<std::string> names;
  if (!md) co_return names;
  for (const auto& t : md->topics) {
    if (t.name) names.push_back(*t.name);
  }
  co_return names;
}

asio::awaitable<int> unknown_topic(Session& s, const std::string& name) {
  const auto names = co_await all_topic_names(s);
  std::string message = fmt::format("topic '{}' does not exist", name);
  if (auto near = closest_name(name, names)) message += fmt::format("; did you mean '{}'?", *near);
  co_return s.fail(message);
}

// --- list ---

struct ListArgs {
  bool exclude_internal = false;
};

asio::awaitable<int> list_topics(Session& s, const ListArgs& args) {
  std::optional<std::vector<std::string>> all;
  auto md = co_await s.client().metadata(std::move(all), s.deadline());
  if (!md) co_return s.fail("cannot list topics", md.error());
  struct Row {
    std::string name;
    std::size_t partitions;
    std::size_t replication_factor;
    bool internal;
  };
  std::vector<Row> rows;
  for (const auto& t : md->topics) {
    if (!t.name || (args.exclude_internal && t.is_internal)) continue;
    rows.push_back({*t.name, t.partitions.size(), t.partitions.empty() ? 0 : t.partitions.front().replica_nodes.size(),
                    t.is_internal});
  }
  std::ranges::sort(rows, {}, &Row::name);
  if (s.json()) {
    Json j;
    j.begin_object().key("topics").begin_array();
    for (const auto& r : rows) {
      j.begin_object().key("name").value(r.name);
      j.key("partitions").value(static_cast<std::int64_t>(r.partitions));
      j.key("replication_factor").value(static_cast<std::int64_t>(r.replication_factor));
      j.key("internal").value(r.internal).end_object();
    }
    j.end_array().end_object();
    print(j.str() + "\n");
  } else {
    std::string out;
    for (const auto& r : rows) out += r.name + "\n";
    print(out);
  }
  co_return kExitOk;
}

// --- create ---

struct CreateArgs {
  std::string name;
  std::int32_t partitions = -1;
  std::int32_t replication_factor = -1;
  std::vector<std::string> configs;
  bool if_not_exists = false;
};

asio::awaitable<int> create_topic(Session& s, const CreateArgs& args) {
  client::NewTopic topic;
  topic.name = args.name;
  topic.num_partitions = args.partitions;
  topic.replication_factor = static_cast<std::int16_t>(args.replication_factor);
  for (const auto& c : args.configs) {
    std::pair<std::string, std::string> kv;
    if (!split_assignment(c, kv)) co_return s.fail(fmt::format("--config {}: expected key=value", c));
    topic.configs.push_back(std::move(kv));
  }
  std::vector<client::NewTopic> topics{std::move(topic)};
  auto results = co_await s.client().create_topics(std::move(topics), s.deadline());
  if (!results) co_return s.fail(fmt::format("cannot create topic '{}'", args.name), results.error());
  if (results->empty())
    co_return s.fail(fmt::format("cannot create topic '{}': the broker returned no result", args.name));
  const auto& r = results->front();
  const bool existed = r.error_code == client::codes::kTopicAlreadyExists;
  if (r.error_code != client::codes::kNone && !(existed && args.if_not_exists)) {
    co_return s.fail_code(fmt::format("cannot create topic '{}'", args.name), r.error_code, r.error_message);
  }
  if (s.json()) {
    Json j;
    j.begin_object().key("topic").value(args.name).key("created").value(!existed);
    if (!existed) {
      j.key("partitions").value(r.num_partitions);
      j.key("replication_factor").value(static_cast<std::int32_t>(r.replication_factor));
    }
    j.end_object();
    print(j.str() + "\n");
  } else {
    print(existed ? fmt::format("Topic {} already exists.\n", args.name)
                  : fmt::format("Created topic {}.\n", args.name));
  }
  co_return kExitOk;
}

// --- delete ---

struct DeleteArgs {
  std::vector<std::string> names;
  bool if_exists = false;
};

asio::awaitable<int> delete_topics(Session& s, const DeleteArgs& args) {
  protocol::DeleteTopicsRequest req;
  for (const auto& n : args.names) {
    req.topic_names.push_back(n);
    auto& t = req.topics.emplace_back();
    t.name = n;
  }
  req.timeout_ms = 30'000;
  client::Target target = client::target::Controller{};
  auto resp = co_await s.send(std::move(target), std::move(req));
  if (!resp) co_return s.fail("cannot delete topics", resp.error());
  int status = kExitOk;
  std::vector<std::pair<std::string, bool>> deleted;  // name, whether it existed
  for (const auto& r : resp->responses) {
    const std::string name = r.name.value_or("");
    if (r.error_code == client::codes::kUnknownTopicOrPartition && args.if_exists) {
      deleted.emplace_back(name, false);
      continue;
    }
    if (r.error_code == client::codes::kUnknownTopicOrPartition) {
      status = co_await unknown_topic(s, name);
      continue;
    }
    if (r.error_code != client::codes::kNone) {
      status = s.fail_code(fmt::format("cannot delete topic '{}'", name), r.error_code, r.error_message);
      continue;
    }
    deleted.emplace_back(name, true);
  }
  if (s.json()) {
    if (status == kExitOk) {
      Json j;
      j.begin_object().key("topics").begin_array();
      for (const auto& [name, existed] : deleted) {
        j.begin_object().key("name").value(name).key("deleted").value(existed).end_object();
      }
      j.end_array().end_object();
      print(j.str() + "\n");
    }
  } else {
    for (const auto& [name, existed] : deleted) {
      print(existed ? fmt::format("Deleted topic {}.\n", name) : fmt::format("Topic {} does not exist.\n", name));
    }
  }
  co_return status;
}

// --- add-partitions ---

struct AddPartitionsArgs {
  std::string name;
  std::int32_t total = 0;
};

asio::awaitable<int> add_partitions(Session& s, const AddPartitionsArgs& args) {
  protocol::CreatePartitionsRequest req;
  auto& t = req.topics.emplace_back();
  t.name = args.name;
  t.count = args.total;
  t.assignments = std::nullopt;
  req.timeout_ms = 30'000;
  client::Target target = client::target::Controller{};
  auto resp = co_await s.send(std::move(target), std::move(req));
  if (!resp) co_return s.fail(fmt::format("cannot add partitions to topic '{}'", args.name), resp.error());
  for (const auto& r : resp->results) {
    if (r.error_code == client::codes::kUnknownTopicOrPartition) co_return co_await unknown_topic(s, args.name);
    if (r.error_code != client::codes::kNone) {
      co_return s.fail_code(fmt::format("cannot add partitions to topic '{}'", args.name), r.error_code,
                            r.error_message);
    }
  }
  if (s.json()) {
    Json j;
    j.begin_object().key("topic").value(args.name).key("partitions").value(args.total).end_object();
    print(j.str() + "\n");
  } else {
    print(fmt::format("Topic {} has {} partitions.\n", args.name, args.total));
  }
  co_return kExitOk;
}

// --- alter-config ---

struct AlterConfigArgs {
  std::string name;
  std::vector<std::string> set;
  std::vector<std::string> remove;
};

asio::awaitable<int> alter_config(Session& s, const AlterConfigArgs& args) {
  if (args.set.empty() && args.remove.empty()) {
    co_return s.fail("nothing to change: give --set key=value or --delete key");
  }
  ConfigChange change{args.set, args.remove};
  std::string name = args.name;
  client::Target target = client::target::AnyNode{};
  auto outcome = co_await change_configs(s, kTopicResource, std::move(name), std::move(change), std::move(target));
  if (!outcome) co_return s.fail(fmt::format("cannot change the configs of topic '{}'", args.name), outcome.error());
  if (outcome->error_code == client::codes::kUnknownTopicOrPartition) co_return co_await unknown_topic(s, args.name);
  if (outcome->error_code != client::codes::kNone) {
    co_return s.fail_code(fmt::format("cannot change the configs of topic '{}'", args.name), outcome->error_code,
                          outcome->error_message);
  }
  if (s.json()) {
    Json j;
    j.begin_object().key("topic").value(args.name).key("set").begin_array();
    for (const auto& c : args.set) j.value(c);
    j.end_array().key("deleted").begin_array();
    for (const auto& k : args.remove) j.value(k);
    j.end_array().end_object();
    print(j.str() + "\n");
  } else {
    print(fmt::format("Updated the configs of topic {}.\n", args.name));
  }
  co_return kExitOk;
}

// --- describe ---

struct DescribeArgs {
  std::vector<std::string> names;
  bool exclude_internal = false;
};

struct PartitionOffsets {
  std::int64_t start = -1;
  std::int64_t end = -1;
};

using OffsetsByPartition = std::map<TopicPartition, PartitionOffsets>;

// The earliest and latest offsets of every partition; -1 where its leader did not answer.
asio::awaitable<OffsetsByPartition> partition_offsets(Session& s, const protocol::MetadataResponse& md) {
  OffsetsByPartition out;
  std::vector<TopicPartition> parts;
  for (const auto& t : md.topics) {
    if (!t.name || t.error_code != client::codes::kNone) continue;
    for (const auto& p : t.partitions) {
      out[{*t.name, p.partition_index}] = {};
      parts.emplace_back(*t.name, p.partition_index);
    }
  }
  std::vector<TopicPartition> again = parts;
  const auto starts = co_await s.list_offsets(std::move(parts), client::kEarliestTimestamp);
  const auto ends = co_await s.list_offsets(std::move(again), client::kLatestTimestamp);
  for (const auto& [tp, offset] : starts) out[tp].start = offset;
  for (const auto& [tp, offset] : ends) out[tp].end = offset;
  co_return out;
}

asio::awaitable<int> describe_topics(Session& s, const DescribeArgs& args) {
  std::optional<std::vector<std::string>> wanted;
  if (!args.names.empty()) wanted = args.names;
  auto md = co_await s.client().metadata(std::move(wanted), s.deadline());
  if (!md) co_return s.fail("cannot describe topics", md.error());
  std::vector<const protocol::MetadataResponse::MetadataResponseTopic*> topics;
  for (const auto& t : md->topics) {
    if (!t.name) continue;
    if (t.error_code == client::codes::kUnknownTopicOrPartition) co_return co_await unknown_topic(s, *t.name);
    if (t.error_code != client::codes::kNone) {
      co_return s.fail_code(fmt::format("cannot describe topic '{}'", *t.name), t.error_code, std::nullopt);
    }
    if (args.exclude_internal && t.is_internal) continue;
    topics.push_back(&t);
  }
  std::ranges::sort(topics, {}, [](const auto* t) { return *t->name; });
  std::vector<std::string> names;
  for (const auto* t : topics) names.push_back(*t->name);
  const OffsetsByPartition offsets = co_await partition_offsets(s, *md);
  std::vector<std::string> config_names = names;
  client::Target any = client::target::AnyNode{};
  auto configs = co_await describe_configs(s, kTopicResource, std::move(config_names), std::move(any), false);
  if (!configs) co_return s.fail("cannot describe the topics' configs", configs.error());

  Json j;
  std::string text;
  j.begin_object().key("topics").begin_array();
  for (const auto* t : topics) {
    auto parts = t->partitions;
    std::ranges::sort(parts, {}, &protocol::MetadataResponse::MetadataResponsePartition::partition_index);
    const std::size_t rf = parts.empty() ? 0 : parts.front().replica_nodes.size();
    const auto& cfgs = (*configs)[*t->name].entries;
    if (s.json()) {
      j.begin_object().key("name").value(*t->name).key("topic_id").value(t->topic_id.to_string());
      j.key("internal").value(t->is_internal).key("replication_factor").value(static_cast<std::int64_t>(rf));
      j.key("partitions").begin_array();
      for (const auto& p : parts) {
        const PartitionOffsets o = offsets.at({*t->name, p.partition_index});
        j.begin_object().key("partition").value(p.partition_index).key("leader").value(p.leader_id);
        j.key("leader_epoch").value(p.leader_epoch).key("replicas").ints(p.replica_nodes);
        j.key("isr").ints(p.isr_nodes).key("offline_replicas").ints(p.offline_replicas);
        j.key("log_start_offset").value(o.start).key("log_end_offset").value(o.end).end_object();
      }
      j.end_array().key("configs").begin_array();
      for (const auto& c : cfgs) {
        j.begin_object();
        config_json(j, c);
        j.end_object();
      }
      j.end_array().end_object();
      continue;
    }
    if (!text.empty()) text += "\n";
    text += fmt::format("Topic: {}  TopicId: {}  PartitionCount: {}  ReplicationFactor: {}{}\n", *t->name,
                        t->topic_id.to_string(), parts.size(), rf, t->is_internal ? "  Internal: true" : "");
    std::string cfg_text;
    for (const auto& c : cfgs) {
      if (!cfg_text.empty()) cfg_text += ", ";
      cfg_text += config_text(c);
    }
    text += fmt::format("Configs: {}\n", cfg_text.empty() ? "(none)" : cfg_text);
    Table table({"PARTITION", "LEADER", "REPLICAS", "ISR", "LOG-START-OFFSET", "LOG-END-OFFSET"});
    for (const auto& p : parts) {
      const PartitionOffsets o = offsets.at({*t->name, p.partition_index});
      table.add({std::to_string(p.partition_index), p.leader_id < 0 ? "none" : std::to_string(p.leader_id),
                 join_ints(p.replica_nodes), join_ints(p.isr_nodes), o.start < 0 ? "-" : std::to_string(o.start),
                 o.end < 0 ? "-" : std::to_string(o.end)});
    }
    text += table.render();
  }
  j.end_array().end_object();
  print(s.json() ? j.str() + "\n" : text);
  co_return kExitOk;
}

}  // namespace

void add_topic_command(CLI::App& app, int& exit_code) {
  auto* topic = app.add_subcommand("topic", "Create, list, describe, change and delete topics");
  topic->require_subcommand(1);

  auto flags = std::make_shared<ClientFlags>();

  auto list = std::make_shared<ListArgs>();
  auto* list_cmd = topic->add_subcommand("list", "List the topics' names");
  add_client_flags(*list_cmd, *flags);
  list_cmd->add_flag("--exclude-internal", list->exclude_internal, "Leave out internal topics");
  list_cmd->callback([flags, list, &exit_code]() {
    exit_code = run_client(*flags, [list](Session& s) { return list_topics(s, *list); });
  });

  auto create = std::make_shared<CreateArgs>();
  auto* create_cmd = topic->add_subcommand("create", "Create a topic");
  add_client_flags(*create_cmd, *flags);
  create_cmd->add_option("topic", create->name, "The topic's name")->required();
  create_cmd->add_option("--partitions,-p", create->partitions, "Number of partitions (default: the broker's)")
      ->check(CLI::PositiveNumber);
  create_cmd
      ->add_option("--replication-factor,-r", create->replication_factor,
                   "Replicas of each partition (default: the broker's)")
      ->check(CLI::Range(1, 32767));
  create_cmd->add_option("--config,-c", create->configs, "A topic config: key=value (repeatable)");
  create_cmd->add_flag("--if-not-exists", create->if_not_exists, "Succeed if the topic exists already");
  create_cmd->callback([flags, create, &exit_code]() {
    exit_code = run_client(*flags, [create](Session& s) { return create_topic(s, *create); });
  });

  auto del = std::make_shared<DeleteArgs>();
  auto* delete_cmd = topic->add_subcommand("delete", "Delete topics");
  add_client_flags(*delete_cmd, *flags);
  delete_cmd->add_option("topics", del->names, "Topic names")->required();
  delete_cmd->add_flag("--if-exists", del->if_exists, "Succeed for a topic that does not exist");
  delete_cmd->callback([flags, del, &exit_code]() {
    exit_code = run_client(*flags, [del](Session& s) { return delete_topics(s, *del); });
  });

  auto describe = std::make_shared<DescribeArgs>();
  auto* describe_cmd = topic->add_subcommand(
      "describe", "Partitions (leader, replicas, ISR, log start and end offsets) and non-default configs");
  add_client_flags(*describe_cmd, *flags);
  describe_cmd->add_option("topics", describe->names, "Topic names (default: every topic)");
  describe_cmd->add_flag("--exclude-internal", describe->exclude_internal, "Leave out internal topics");
  describe_cmd->callback([flags, describe, &exit_code]() {
    exit_code = run_client(*flags, [describe](Session& s) { return describe_topics(s, *describe); });
  });

  auto add = std::make_shared<AddPartitionsArgs>();
  auto* add_cmd = topic->add_subcommand("add-partitions", "Raise a topic's partition count");
  add_client_flags(*add_cmd, *flags);
  add_cmd->add_option("topic", add->name, "The topic's name")->required();
  add_cmd->add_option("--partitions,-p", add->total, "The new total number of partitions (as kafka-topics --alter)")
      ->required()
      ->check(CLI::PositiveNumber);
  add_cmd->callback([flags, add, &exit_code]() {
    exit_code = run_client(*flags, [add](Session& s) { return add_partitions(s, *add); });
  });

  auto alter = std::make_shared<AlterConfigArgs>();
  auto* alter_cmd = topic->add_subcommand("alter-config", "Set or delete topic configs");
  add_client_flags(*alter_cmd, *flags);
  alter_cmd->add_option("topic", alter->name, "The topic's name")->required();
  alter_cmd->add_option("--set", alter->set, "key=value to set (repeatable)");
  alter_cmd->add_option("--delete", alter->remove, "A key to return to its default (repeatable)");
  alter_cmd->callback([flags, alter, &exit_code]() {
    exit_code = run_client(*flags, [alter](Session& s) { return alter_config(s, *alter); });
  });
}

}  // namespace weir::cli
