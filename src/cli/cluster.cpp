#include "cli/cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "cli/client_command.h"
#include "cli/configs.h"
#include "protocol/gen/api_registry.h"

namespace weir::cli {

namespace asio = boost::asio;

namespace {

// Metadata without topics: cluster id, controller and brokers.
asio::awaitable<Result<protocol::MetadataResponse, client::Error>> cluster_metadata(Session& s) {
  std::optional<std::vector<std::string>> none{std::in_place};
  co_return co_await s.client().metadata(std::move(none), s.deadline());
}

asio::awaitable<int> cluster_info(Session& s) {
  auto md = co_await cluster_metadata(s);
  if (!md) co_return s.fail("cannot reach the cluster", md.error());
  auto brokers = md->brokers;
  std::ranges::sort(brokers, {}, &protocol::MetadataResponse::MetadataResponseBroker::node_id);
  if (s.json()) {
    Json j;
    j.begin_object().key("cluster_id").value(md->cluster_id);
    j.key("controller").value(md->controller_id).key("brokers").begin_array();
    for (const auto& b : brokers) {
      j.begin_object().key("id").value(b.node_id).key("host").value(b.host).key("port").value(b.port);
      j.key("rack").value(b.rack).end_object();
    }
    j.end_array().end_object();
    print(j.str() + "\n");
    co_return kExitOk;
  }
  std::string out = fmt::format("Cluster: {}\nController: {}\n\n", md->cluster_id.value_or("(none)"),
                                md->controller_id < 0 ? std::string("none") : std::to_string(md->controller_id));
  Table table({"BROKER", "HOST", "PORT", "RACK"});
  for (const auto& b : brokers) {
    table.add({std::to_string(b.node_id), b.host, std::to_string(b.port), b.rack.value_or("")});
  }
  print(out + table.render());
  co_return kExitOk;
}

struct ApiVersionsArgs {
  std::optional<std::int32_t> broker;
};

asio::awaitable<int> api_versions(Session& s, const ApiVersionsArgs& args) {
  auto md = co_await cluster_metadata(s);
  if (!md) co_return s.fail("cannot reach the cluster", md.error());
  std::vector<std::int32_t> ids;
  for (const auto& b : md->brokers) ids.push_back(b.node_id);
  std::ranges::sort(ids);
  if (args.broker) {
    if (std::ranges::find(ids, *args.broker) == ids.end()) {
      co_return s.fail(fmt::format("broker {} is not in the cluster (brokers: {})", *args.broker, join_ints(ids)));
    }
    ids = {*args.broker};
  }
  Json j;
  std::string text;
  j.begin_object().key("brokers").begin_array();
  for (const std::int32_t id : ids) {
    auto conn = co_await s.client().connection(id, s.deadline());
    if (!conn) co_return s.fail(fmt::format("cannot connect to broker {}", id), conn.error());
    const client::VersionTable& versions = (*conn)->versions();
    Table table({"API", "KEY", "BROKER-MIN", "BROKER-MAX", "USED"});
    j.begin_object().key("id").value(id).key("apis").begin_array();
    for (const auto& d : protocol::kApiDescriptors) {
      const auto range = versions.broker_range(d.key);
      if (!range) continue;
      const auto used = versions.pick(d.key);
      j.begin_object().key("name").value(d.name).key("key").value(static_cast<std::int32_t>(d.key));
      j.key("min").value(static_cast<std::int32_t>(range->min)).key("max").value(static_cast<std::int32_t>(range->max));
      j.key("used");
      if (used) {
        j.value(static_cast<std::int32_t>(*used));
      } else {
        j.null();
      }
      j.end_object();
      table.add({std::string(d.name), std::to_string(d.key), std::to_string(range->min), std::to_string(range->max),
                 used ? std::to_string(*used) : "-"});
    }
    j.end_array().end_object();
    if (!text.empty()) text += "\n";
    text += fmt::format("Broker {} ({})\n", id, (*conn)->describe()) + table.render();
  }
  j.end_array().end_object();
  print(s.json() ? j.str() + "\n" : text);
  co_return kExitOk;
}

// The config resource a `cluster config` command names.
struct ResourceFlags {
  std::optional<std::int32_t> broker;
  bool broker_default = false;
  std::string topic;
};

struct Resource {
  std::int8_t type = kBrokerResource;
  std::string name;       // broker id, "" for the cluster-wide default, or the topic
  std::string described;  // for messages: "broker 1", "the broker default", "topic 'orders'"
};

Resource resource_of(const ResourceFlags& f) {
  if (!f.topic.empty()) return {kTopicResource, f.topic, fmt::format("topic '{}'", f.topic)};
  if (f.broker) return {kBrokerResource, std::to_string(*f.broker), fmt::format("broker {}", *f.broker)};
  return {kBrokerResource, "", "the cluster-wide broker default"};
}

// A named broker's configs are asked of that broker, as Kafka's admin client does; the rest of
// any broker.
client::Target target_of(const ResourceFlags& f) {
  if (f.topic.empty() && f.broker) return client::target::Node{*f.broker};
  return client::target::AnyNode{};
}

struct ConfigGetArgs {
  ResourceFlags resource;
  bool all = false;
};

asio::awaitable<int> config_get(Session& s, const ConfigGetArgs& args) {
  const Resource r = resource_of(args.resource);
  if (args.resource.broker) {
    auto md = co_await cluster_metadata(s);  // the client must know the broker to route to it
    if (!md) co_return s.fail("cannot reach the cluster", md.error());
  }
  std::vector<std::string> names{r.name};
  client::Target target = target_of(args.resource);
  auto got = co_await describe_configs(s, r.type, std::move(names), std::move(target), args.all);
  if (!got) co_return s.fail(fmt::format("cannot describe the configs of {}", r.described), got.error());
  const ResourceConfigs& rc = (*got)[r.name];
  if (rc.error_code != client::codes::kNone) {
    co_return s.fail_code(fmt::format("cannot describe the configs of {}", r.described), rc.error_code,
                          rc.error_message);
  }
  if (s.json()) {
    Json j;
    j.begin_object().key("resource").value(r.type == kTopicResource ? "topic" : "broker").key("name").value(r.name);
    j.key("configs").begin_array();
    for (const auto& c : rc.entries) {
      j.begin_object();
      config_json(j, c);
      j.end_object();
    }
    j.end_array().end_object();
    print(j.str() + "\n");
    co_return kExitOk;
  }
  Table table({"NAME", "VALUE", "SOURCE"});
  for (const auto& c : rc.entries) {
    table.add({c.name, c.is_sensitive ? "(sensitive)" : c.value.value_or("null"),
               std::string(config_source_name(c.config_source))});
  }
  print(table.empty() ? fmt::format("{} has no config that differs from its default.\n", r.described) : table.render());
  co_return kExitOk;
}

struct ConfigSetArgs {
  ResourceFlags resource;
  ConfigChange change;
};

asio::awaitable<int> config_set(Session& s, const ConfigSetArgs& args) {
  if (args.change.set.empty() && args.change.remove.empty()) {
    co_return s.fail("nothing to change: give --set key=value or --delete key");
  }
  const Resource r = resource_of(args.resource);
  if (args.resource.broker) {
    auto md = co_await cluster_metadata(s);
    if (!md) co_return s.fail("cannot reach the cluster", md.error());
  }
  std::string name = r.name;
  ConfigChange change = args.change;
  client::Target target = target_of(args.resource);
  auto outcome = co_await change_configs(s, r.type, std::move(name), std::move(change), std::move(target));
  if (!outcome) co_return s.fail(fmt::format("cannot change the configs of {}", r.described), outcome.error());
  if (outcome->error_code != client::codes::kNone) {
    co_return s.fail_code(fmt::format("cannot change the configs of {}", r.described), outcome->error_code,
                          outcome->error_message);
  }
  if (s.json()) {
    Json j;
    j.begin_object().key("resource").value(r.type == kTopicResource ? "topic" : "broker").key("name").value(r.name);
    j.key("changed").value(true).end_object();
    print(j.str() + "\n");
  } else {
    print(fmt::format("Updated the configs of {}.\n", r.described));
  }
  co_return kExitOk;
}

// --broker ID | --broker-default | --topic NAME, exactly one.
void add_resource_flags(CLI::App& cmd, ResourceFlags& f) {
  auto* broker = cmd.add_option("--broker", f.broker, "A broker's configs (its id)");
  auto* dflt = cmd.add_flag("--broker-default", f.broker_default, "The cluster-wide default of the broker configs");
  auto* topic = cmd.add_option("--topic", f.topic, "A topic's configs");
  broker->excludes(dflt)->excludes(topic);
  dflt->excludes(topic);
}

// Bad usage (exit 2) unless exactly one resource flag was given.
void check_resource(const ResourceFlags& f) {
  if (!f.broker && !f.broker_default && f.topic.empty()) {
    throw CLI::ValidationError("--broker, --broker-default or --topic", "name the configs' resource");
  }
}

}  // namespace

void add_cluster_command(CLI::App& app, int& exit_code) {
  auto* cluster = app.add_subcommand("cluster", "The cluster's brokers and the API versions they offer");
  cluster->require_subcommand(1);
  auto flags = std::make_shared<ClientFlags>();

  auto* info = cluster->add_subcommand("info", "Cluster id, controller and brokers");
  add_client_flags(*info, *flags);
  info->callback([flags, &exit_code]() { exit_code = run_client(*flags, [](Session& s) { return cluster_info(s); }); });

  auto args = std::make_shared<ApiVersionsArgs>();
  auto* versions =
      cluster->add_subcommand("api-versions", "Each broker's API version ranges and the versions weir uses");
  add_client_flags(*versions, *flags);
  versions->add_option("--broker", args->broker, "Only this broker id");
  versions->callback([flags, args, &exit_code]() {
    exit_code = run_client(*flags, [args](Session& s) { return api_versions(s, *args); });
  });

  auto* config = cluster->add_subcommand("config", "Read and change broker and topic configs");
  config->require_subcommand(1);
  auto get = std::make_shared<ConfigGetArgs>();
  auto* get_cmd = config->add_subcommand("get", "Configs that differ from their default (--all: every config)");
  add_client_flags(*get_cmd, *flags);
  add_resource_flags(*get_cmd, get->resource);
  get_cmd->add_flag("--all", get->all, "Every config, defaults included");
  get_cmd->callback([flags, get, &exit_code]() {
    check_resource(get->resource);
    exit_code = run_client(*flags, [get](Session& s) { return config_get(s, *get); });
  });
  auto set = std::make_shared<ConfigSetArgs>();
  auto* set_cmd =
      config->add_subcommand("set", "Set configs (--set key=value) or return them to their default (--delete key)");
  add_client_flags(*set_cmd, *flags);
  add_resource_flags(*set_cmd, set->resource);
  set_cmd->add_option("--set", set->change.set, "key=value to set (repeatable)");
  set_cmd->add_option("--delete", set->change.remove, "A key to return to its default (repeatable)");
  set_cmd->callback([flags, set, &exit_code]() {
    check_resource(set->resource);
    exit_code = run_client(*flags, [set](Session& s) { return config_set(s, *set); });
  });
}

}  // namespace weir::cli
