#include "cli/group.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "cli/client_command.h"
#include "protocol/gen/consumer_group_describe_request.h"
#include "protocol/gen/delete_groups_request.h"
#include "protocol/gen/describe_groups_request.h"
#include "protocol/gen/list_groups_request.h"
#include "protocol/gen/offset_commit_request.h"
#include "protocol/gen/offset_delete_request.h"
#include "protocol/gen/offset_fetch_request.h"

namespace weir::cli {

namespace asio = boost::asio;

namespace {

constexpr std::string_view kMissing = "-";

// The partitions of a consumer protocol assignment (ConsumerProtocolAssignment: version, then
// [topic, [partition]]; user data after it is not read). Empty when the bytes do not parse.
std::vector<TopicPartition> assigned_partitions(const protocol::Bytes& bytes) {
  std::vector<TopicPartition> out;
  std::size_t at = 0;
  const auto take = [&](std::size_t n) { return at + n <= bytes.size() ? (at += n, true) : false; };
  const auto be = [&](std::size_t from, int n) {
    std::uint32_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | bytes[from + static_cast<std::size_t>(i)];
    return v;
  };
  if (!take(2)) return {};
  if (!take(4)) return {};
  const auto topics = static_cast<std::int32_t>(be(at - 4, 4));
  for (std::int32_t t = 0; t < topics; ++t) {
    if (!take(2)) return {};
    const auto len = static_cast<std::int16_t>(be(at - 2, 2));
    if (len < 0 || !take(static_cast<std::size_t>(len))) return {};
    std::string name(reinterpret_cast<const char*>(bytes.data() + at - static_cast<std::size_t>(len)),
                     static_cast<std::size_t>(len));
    if (!take(4)) return {};
    const auto count = static_cast<std::int32_t>(be(at - 4, 4));
    for (std::int32_t i = 0; i < count; ++i) {
      if (!take(4)) return {};
      out.emplace_back(name, static_cast<std::int32_t>(be(at - 4, 4)));
    }
  }
  return out;
}

// --- list ---

// Why an operation failed, for Session::fail (or for one group's row when there are several).
struct Failure {
  std::string message;
  std::optional<client::Error> cause;
};

// The consumer groups of every broker (ListGroups of each; classic groups of another protocol
// type, such as Connect's, are left out), sorted.
asio::awaitable<Result<std::vector<std::string>, Failure>> consumer_group_names(Session& s) {
  std::optional<std::vector<std::string>> none{std::in_place};
  auto md = co_await s.client().metadata(std::move(none), s.deadline());
  if (!md) co_return unexpected(Failure{"cannot reach the cluster", md.error()});
  std::set<std::string> names;
  for (const auto& b : md->brokers) {
    protocol::ListGroupsRequest req;
    client::Target node = client::target::Node{b.node_id};
    auto resp = co_await s.send(std::move(node), std::move(req), client::RetryOn::kAllRetriable);
    const std::string what = fmt::format("cannot list the groups of broker {}", b.node_id);
    if (!resp) co_return unexpected(Failure{what, resp.error()});
    if (resp->error_code != client::codes::kNone)
      co_return unexpected(Failure{what, client::Error::kafka(resp->error_code, "")});
    for (const auto& g : resp->groups) {
      if (g.protocol_type == "consumer" || g.protocol_type.empty()) names.insert(g.group_id);
    }
  }
  co_return std::vector<std::string>(names.begin(), names.end());
}

asio::awaitable<int> list_groups(Session& s) {
  auto names = co_await consumer_group_names(s);
  if (!names) co_return s.fail(names.error().message, names.error().cause);
  if (s.json()) {
    Json j;
    j.begin_object().key("groups").begin_array();
    for (const auto& n : *names) j.value(n);
    j.end_array().end_object();
    print(j.str() + "\n");
  } else {
    std::string out;
    for (const auto& n : *names) out += n + "\n";
    print(out);
  }
  co_return kExitOk;
}

// The group's committed offsets (OffsetFetch of every partition, at v9: v10 names topics by id).
asio::awaitable<Result<std::map<TopicPartition, std::int64_t>, client::Error>> committed_offsets(Session& s,
                                                                                                 std::string group) {
  protocol::OffsetFetchRequest oreq;
  oreq.group_id = group;
  oreq.topics = std::nullopt;  // every partition with a committed offset
  auto& og = oreq.groups.emplace_back();
  og.group_id = group;
  og.topics = std::nullopt;
  client::Target coordinator = client::target::Coordinator{client::CoordinatorType::kGroup, group};
  client::CallOptions options;
  options.deadline = s.deadline();
  options.retry_on = client::RetryOn::kAllRetriable;
  options.max_version = 9;
  auto fetched = co_await s.client().send(std::move(coordinator), std::move(oreq), std::move(options));
  if (!fetched) co_return unexpected(fetched.error());
  const std::int16_t group_error =
      fetched->error_code != client::codes::kNone
          ? fetched->error_code
          : (fetched->groups.empty() ? std::int16_t{client::codes::kNone} : fetched->groups[0].error_code);
  if (group_error != client::codes::kNone) co_return unexpected(client::Error::kafka(group_error, ""));
  std::map<TopicPartition, std::int64_t> committed;
  const auto take = [&committed](const auto& topics) {
    for (const auto& t : topics) {
      for (const auto& p : t.partitions) {
        if (p.error_code == client::codes::kNone && p.committed_offset >= 0)
          committed[{t.name, p.partition_index}] = p.committed_offset;
      }
    }
  };
  take(fetched->topics);
  for (const auto& fg : fetched->groups) take(fg.topics);
  co_return committed;
}

// --- describe ---

struct DescribeArgs {
  std::string group;
  bool members = false;  // --members: one row per member (kafka-consumer-groups --describe --members)
  bool state = false;    // --state: the group's coordinator, assignor, state and size
  bool verbose = false;  // with --members / --state: the columns --verbose adds
};

// The group as kafka-consumer-groups reads it: ConsumerGroupDescribe first, DescribeGroups when
// the coordinator does not know the group as a consumer protocol group (GROUP_ID_NOT_FOUND,
// UNSUPPORTED_VERSION) or does not offer the API. nullopt: no such group (DescribeGroups'
// GROUP_ID_NOT_FOUND or "Dead"). A classic group of another protocol type is an error.
asio::awaitable<Result<std::optional<GroupDescription>, client::Error>> describe_consumer_group(Session& s,
                                                                                                std::string group) {
  {
    protocol::ConsumerGroupDescribeRequest req;
    req.group_ids.push_back(group);
    client::Target coordinator = client::target::Coordinator{client::CoordinatorType::kGroup, group};
    auto described = co_await s.send(std::move(coordinator), std::move(req), client::RetryOn::kAllRetriable);
    if (!described && described.error().kind != client::ErrorKind::kUnsupported)
      co_return unexpected(described.error());
    if (described && !described->groups.empty()) {
      const auto& g = described->groups.front();
      if (g.error_code == client::codes::kNone) co_return std::optional<GroupDescription>(group_description(g));
      if (g.error_code != client::codes::kGroupIdNotFound && g.error_code != client::codes::kUnsupportedVersion)
        co_return unexpected(client::Error::kafka(g.error_code, g.error_message.value_or("")));
    }
  }
  protocol::DescribeGroupsRequest req;
  req.groups.push_back(group);
  client::Target coordinator = client::target::Coordinator{client::CoordinatorType::kGroup, group};
  auto described = co_await s.send(std::move(coordinator), std::move(req), client::RetryOn::kAllRetriable);
  if (!described) co_return unexpected(described.error());
  if (described->groups.empty()) co_return std::optional<GroupDescription>();
  const auto& g = described->groups.front();
  if (g.error_code == client::codes::kGroupIdNotFound ||
      (g.error_code == client::codes::kNone && g.group_state == "Dead")) {
    co_return std::optional<GroupDescription>();
  }
  if (g.error_code != client::codes::kNone)
    co_return unexpected(client::Error::kafka(g.error_code, g.error_message.value_or("")));
  if (!g.protocol_type.empty() && g.protocol_type != "consumer") {
    co_return unexpected(client::Error::invalid_argument(
        fmt::format("group '{}' is not a consumer group (its protocol type is {})", group, g.protocol_type)));
  }
  co_return std::optional<GroupDescription>(group_description(g));
}

// The group's description, or the failure printed (kExitFailed).
asio::awaitable<Result<GroupDescription, int>> describe_or_fail(Session& s, std::string group) {
  auto described = co_await describe_consumer_group(s, group);
  if (!described) {
    const std::string what = fmt::format("cannot describe group '{}'", group);
    const client::Error& e = described.error();
    if (e.kind == client::ErrorKind::kKafka) co_return unexpected(s.fail_code(what, e.code, e.message));
    co_return unexpected(s.fail(what, e));
  }
  if (!*described) co_return unexpected(s.fail(fmt::format("consumer group '{}' does not exist", group)));
  co_return std::move(**described);
}

asio::awaitable<int> describe_members(Session& s, const DescribeArgs& args, const GroupDescription& g);
asio::awaitable<int> describe_state(Session& s, const DescribeArgs& args, const GroupDescription& g);
void state_notice(const std::string& group, const std::string& state);

struct Row {
  std::string topic;
  std::int32_t partition;
  std::optional<std::int64_t> offset;
  std::optional<std::int64_t> log_end;
  std::string consumer_id;
  std::string host;
  std::string client_id;
};

std::string opt(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string(kMissing); }

// A nullable string: null for kafka-consumer-groups' "-".
void str_or_null(Json& j, std::string_view key, const std::string& v) {
  j.key(key);
  if (v == kMissing) {
    j.null();
  } else {
    j.value(v);
  }
}

std::string_view type_name(const GroupDescription& g) { return g.consumer_protocol ? "consumer" : "classic"; }

asio::awaitable<int> describe_group(Session& s, const DescribeArgs& args) {
  auto described = co_await describe_or_fail(s, args.group);
  if (!described) co_return described.error();
  const GroupDescription& g = *described;
  if (args.members) co_return co_await describe_members(s, args, g);
  if (args.state) co_return co_await describe_state(s, args, g);

  auto fetched = co_await committed_offsets(s, args.group);
  if (!fetched) co_return s.fail(fmt::format("cannot fetch the offsets of group '{}'", args.group), fetched.error());
  const std::map<TopicPartition, std::int64_t>& committed = *fetched;

  // Rows as kafka-consumer-groups --describe orders them: members by assignment size (largest
  // first), each member's partitions by topic and partition, then committed partitions nobody owns.
  std::vector<const GroupMemberDescription*> members;
  for (const auto& m : g.members) {
    if (!m.assignment.empty()) members.push_back(&m);
  }
  std::ranges::stable_sort(members, [](const GroupMemberDescription* a, const GroupMemberDescription* b) {
    return a->assignment.size() > b->assignment.size();
  });
  std::vector<Row> rows;
  std::set<TopicPartition> owned;
  for (const auto* m : members) {
    for (const auto& tp : m->assignment) {
      owned.insert(tp);
      rows.push_back({tp.first, tp.second, std::nullopt, std::nullopt, m->member_id, m->host, m->client_id});
    }
  }
  for (const auto& [tp, offset] : committed) {
    if (owned.contains(tp)) continue;
    rows.push_back({tp.first, tp.second, std::nullopt, std::nullopt, std::string(kMissing), std::string(kMissing),
                    std::string(kMissing)});
  }
  for (auto& r : rows) {
    if (auto it = committed.find({r.topic, r.partition}); it != committed.end()) r.offset = it->second;
  }

  // Log end offsets, asked of each partition's leader.
  std::set<std::string> topics;
  for (const auto& r : rows) topics.insert(r.topic);
  if (!topics.empty()) {
    std::optional<std::vector<std::string>> wanted{std::in_place,
                                                   std::vector<std::string>(topics.begin(), topics.end())};
    (void)co_await s.client().metadata(std::move(wanted), s.deadline());
  }
  std::vector<TopicPartition> parts;
  for (const auto& r : rows) parts.emplace_back(r.topic, r.partition);
  const auto ends = co_await s.list_offsets(std::move(parts), client::kLatestTimestamp);
  for (auto& r : rows) {
    if (auto it = ends.find({r.topic, r.partition}); it != ends.end()) r.log_end = it->second;
  }
  const auto lag = [](const Row& r) -> std::optional<std::int64_t> {
    if (!r.offset || !r.log_end) return std::nullopt;
    return *r.log_end - *r.offset;
  };

  if (s.json()) {
    Json j;
    j.begin_object().key("group").value(args.group).key("type").value(type_name(g)).key("state").value(g.state);
    j.key("protocol").value(g.assignor).key("members").value(static_cast<std::int64_t>(g.members.size()));
    j.key("partitions").begin_array();
    std::int64_t total_lag = 0;
    for (const auto& r : rows) {
      j.begin_object().key("topic").value(r.topic).key("partition").value(r.partition);
      j.key("current_offset").value(r.offset).key("log_end_offset").value(r.log_end).key("lag").value(lag(r));
      if (const auto l = lag(r)) total_lag += *l;
      str_or_null(j, "consumer_id", r.consumer_id);
      str_or_null(j, "host", r.host);
      str_or_null(j, "client_id", r.client_id);
      j.end_object();
    }
    j.end_array().key("total_lag").value(total_lag).end_object();
    print(j.str() + "\n");
    co_return kExitOk;
  }

  // kafka-consumer-groups' own messages and layout.
  state_notice(args.group, g.state);
  if (rows.empty()) co_return kExitOk;
  std::size_t gw = std::max<std::size_t>(15, args.group.size());
  std::size_t tw = 15;
  std::size_t cw = 15;
  std::size_t hw = 15;
  for (const auto& r : rows) {
    tw = std::max(tw, r.topic.size());
    cw = std::max(cw, r.consumer_id.size());
    hw = std::max(hw, r.host.size());
  }
  const auto line = [&](std::string_view group, std::string_view topic, std::string_view partition,
                        std::string_view offset, std::string_view end, std::string_view lag_text,
                        std::string_view consumer, std::string_view host, std::string_view client) {
    return fmt::format("\n{:<{}} {:<{}} {:<10} {:<15} {:<15} {:<15} {:<{}} {:<{}} {}", group, gw, topic, tw, partition,
                       offset, end, lag_text, consumer, cw, host, hw, client);
  };
  std::string out = line("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
                         "HOST", "CLIENT-ID");
  for (const auto& r : rows) {
    out += line(args.group, r.topic, std::to_string(r.partition), opt(r.offset), opt(r.log_end), opt(lag(r)),
                r.consumer_id, r.host, r.client_id);
  }
  print(out + "\n");
  co_return kExitOk;
}

// --- describe --members / --state ---

bool rebalancing(const std::string& state) {
  return state == "PreparingRebalance" || state == "CompletingRebalance" || state == "Assigning" ||
         state == "Reconciling";
}

void state_notice(const std::string& group, const std::string& state) {
  if (state == "Empty") {
    std::fprintf(stderr, "\nConsumer group '%s' has no active members.\n", group.c_str());
  } else if (rebalancing(state)) {
    std::fprintf(stderr, "\nWarning: Consumer group '%s' is rebalancing.\n", group.c_str());
  }
}

void partitions_json(Json& j, const std::vector<TopicPartition>& parts) {
  j.begin_array();
  for (const auto& [t, p] : parts) j.begin_object().key("topic").value(t).key("partition").value(p).end_object();
  j.end_array();
}

std::optional<std::int64_t> widen(const std::optional<std::int32_t>& v) {
  return v ? std::optional<std::int64_t>(*v) : std::nullopt;
}

asio::awaitable<int> describe_members(Session& s, const DescribeArgs& args, const GroupDescription& g) {
  if (s.json()) {
    Json j;
    j.begin_object().key("group").value(args.group).key("type").value(type_name(g)).key("state").value(g.state);
    j.key("members").begin_array();
    for (const auto& m : g.members) {
      j.begin_object().key("consumer_id").value(m.member_id).key("group_instance_id");
      if (m.instance_id.empty()) {
        j.null();
      } else {
        j.value(m.instance_id);
      }
      j.key("host").value(m.host).key("client_id").value(m.client_id).key("partitions");
      partitions_json(j, m.assignment);
      j.key("member_epoch").value(widen(m.member_epoch)).key("target_partitions");
      if (m.target_assignment) {
        partitions_json(j, *m.target_assignment);
      } else {
        j.null();
      }
      j.end_object();
    }
    j.end_array().end_object();
    print(j.str() + "\n");
    co_return kExitOk;
  }
  state_notice(args.group, g.state);
  print(members_table(args.group, g, args.verbose));
  co_return kExitOk;
}

asio::awaitable<int> describe_state(Session& s, const DescribeArgs& args, const GroupDescription& g) {
  auto coordinator = co_await s.client().find_coordinator(client::CoordinatorType::kGroup, args.group, s.deadline());
  if (!coordinator) {
    co_return s.fail(fmt::format("cannot find the coordinator of group '{}'", args.group), coordinator.error());
  }
  const std::string strategy = g.assignor.empty() ? std::string(kMissing) : g.assignor;
  if (s.json()) {
    Json j;
    j.begin_object().key("group").value(args.group).key("type").value(type_name(g)).key("coordinator").begin_object();
    j.key("id").value(coordinator->node_id).key("host").value(coordinator->endpoint.host);
    j.key("port").value(static_cast<std::int32_t>(coordinator->endpoint.port)).end_object();
    j.key("assignment_strategy").value(strategy).key("state").value(g.state);
    j.key("group_epoch").value(widen(g.group_epoch));
    j.key("target_assignment_epoch").value(widen(g.target_assignment_epoch));
    j.key("members").value(static_cast<std::int64_t>(g.members.size())).end_object();
    print(j.str() + "\n");
    co_return kExitOk;
  }
  state_notice(args.group, g.state);
  const std::size_t gw = std::max<std::size_t>(15, args.group.size());
  const std::string where =
      fmt::format("{}:{}  ({})", coordinator->endpoint.host, coordinator->endpoint.port, coordinator->node_id);
  const std::size_t ww = std::max<std::size_t>(25, where.size());
  const auto epoch = [](const std::optional<std::int32_t>& e) {
    return e ? std::to_string(*e) : std::string(kMissing);
  };
  std::string out = fmt::format("\n{:<{}} {:<{}} {:<20} {:<20} ", "GROUP", gw, "COORDINATOR (ID)", ww,
                                "ASSIGNMENT-STRATEGY", "STATE");
  if (args.verbose) out += fmt::format("{:<15} {:<25} ", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH");
  out += "#MEMBERS\n";
  out += fmt::format("{:<{}} {:<{}} {:<20} {:<20} ", args.group, gw, where, ww, strategy, g.state);
  if (args.verbose) out += fmt::format("{:<15} {:<25} ", epoch(g.group_epoch), epoch(g.target_assignment_epoch));
  out += std::to_string(g.members.size()) + "\n";
  print(out);
  co_return kExitOk;
}

// --- shared by seek, delete-offsets ---

// "topic" or "topic:0,1,2" (kafka-consumer-groups' --topic). Partitions empty: all of the topic.
struct TopicScope {
  std::string topic;
  std::vector<std::int32_t> partitions;
};

std::optional<TopicScope> parse_topic_scope(const std::string& text) {
  TopicScope out;
  const auto colon = text.rfind(':');
  out.topic = text.substr(0, colon);
  if (out.topic.empty()) return std::nullopt;
  if (colon == std::string::npos) return out;
  std::string_view rest = std::string_view(text).substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    std::int32_t p = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), p);
    if (ec != std::errc() || end != item.data() + item.size() || p < 0) return std::nullopt;
    out.partitions.push_back(p);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (out.partitions.empty()) return std::nullopt;
  return out;
}

// The partitions the scopes name (a topic alone: every partition the cluster has for it), sorted.
// A topic the cluster does not have is an error naming it.
asio::awaitable<Result<std::vector<TopicPartition>, std::string>> resolve_scopes(Session& s,
                                                                                 std::vector<TopicScope> scopes) {
  std::set<TopicPartition> out;
  std::vector<std::string> whole;
  for (const auto& sc : scopes) {
    if (sc.partitions.empty()) {
      whole.push_back(sc.topic);
    } else {
      for (const auto p : sc.partitions) out.emplace(sc.topic, p);
    }
  }
  if (!whole.empty()) {
    std::optional<std::vector<std::string>> wanted{std::in_place, whole};
    auto md = co_await s.client().metadata(std::move(wanted), s.deadline());
    if (!md) co_return unexpected(fmt::format("cannot read the topics' metadata: {}", md.error().to_string()));
    for (const auto& name : whole) {
      const client::TopicInfo* t = s.client().cluster().topic(name);
      if (t == nullptr || t->error_code != client::codes::kNone || t->partitions.empty()) {
        co_return unexpected(fmt::format("topic '{}' does not exist", name));
      }
      for (const auto& p : t->partitions) out.emplace(name, p.partition);
    }
  }
  co_return std::vector<TopicPartition>(out.begin(), out.end());
}

// The group's state as kafka-consumer-groups --reset-offsets reads it ("Dead" for a group the
// coordinator does not know).
asio::awaitable<Result<std::string, client::Error>> group_state(Session& s, std::string group) {
  auto described = co_await describe_consumer_group(s, std::move(group));
  if (!described) co_return unexpected(described.error());
  if (!*described) co_return std::string("Dead");
  co_return (*described)->state;
}

// --- seek ---

struct SeekArgs {
  std::vector<std::string> groups;
  bool all_groups = false;
  std::vector<std::string> topics;
  bool all_topics = false;
  std::string to;
  std::optional<std::int64_t> shift_by;
  std::string from_file;
  bool execute = false;
  bool dry_run = false;
  bool export_csv = false;
};

// Where --to points: a ListOffsets timestamp (earliest, latest, a time), an offset, or the
// committed offset ("current"); or by how much to move the committed offset; or the offsets a
// --from-file plan names.
struct SeekTarget {
  enum class Kind : std::int8_t { kTimestamp, kOffset, kCurrent, kShift, kFromFile } kind = Kind::kTimestamp;
  std::int64_t value = 0;
};

std::optional<SeekTarget> parse_seek_target(const std::string& text) {
  using Kind = SeekTarget::Kind;
  if (text == "earliest" || text == "beginning") return SeekTarget{Kind::kTimestamp, client::kEarliestTimestamp};
  if (text == "latest" || text == "end") return SeekTarget{Kind::kTimestamp, client::kLatestTimestamp};
  if (text == "current") return SeekTarget{Kind::kCurrent, 0};
  const auto number = [](std::string_view v, std::int64_t& out) {
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    return ec == std::errc() && end == v.data() + v.size() && !v.empty();
  };
  std::int64_t n = 0;
  if (text.starts_with("@")) {
    const auto at = parse_time_spec(text);
    if (!at) return std::nullopt;
    return SeekTarget{Kind::kTimestamp, *at};
  }
  if (!number(text, n) || n < 0) return std::nullopt;
  return SeekTarget{Kind::kOffset, n};
}

void warn(const Session& s, const std::string& text) {
  if (!s.json()) std::fprintf(stderr, "warning: %s\n", text.c_str());
}

using OffsetPlan = std::map<TopicPartition, std::int64_t>;

// One group's new offsets (kafka-consumer-groups --reset-offsets), committed with --execute.
// `from_file`: the group's rows of a --from-file plan (kind kFromFile).
asio::awaitable<Result<OffsetPlan, Failure>> seek_one_group(Session& s, const SeekArgs& args, std::string group,
                                                                SeekTarget target, OffsetPlan from_file) {
  auto state = co_await group_state(s, group);
  if (!state) co_return unexpected(Failure{fmt::format("cannot describe group '{}'", group), state.error()});
  if (*state != "Empty" && *state != "Dead") {
    co_return unexpected(Failure{
        fmt::format("offsets can only be reset while group '{}' is inactive, but its state is {}", group, *state), {}});
  }
  auto fetched = co_await committed_offsets(s, group);
  if (!fetched) {
    co_return unexpected(Failure{fmt::format("cannot fetch the offsets of group '{}'", group), fetched.error()});
  }
  const std::map<TopicPartition, std::int64_t>& committed = *fetched;

  using Kind = SeekTarget::Kind;
  std::vector<TopicPartition> parts;
  if (target.kind == Kind::kFromFile) {
    // As Kafka's tool: the file names the partitions; --topic / --all-topics do not narrow it.
    std::set<std::string> names;
    for (const auto& [tp, offset] : from_file) names.insert(tp.first);
    std::vector<TopicScope> scopes;
    for (const auto& n : names) scopes.push_back(TopicScope{n, {}});
    auto resolved = co_await resolve_scopes(s, std::move(scopes));
    if (!resolved) co_return unexpected(Failure{resolved.error(), {}});
    for (const auto& [tp, offset] : from_file) {
      if (!std::ranges::binary_search(*resolved, tp)) {
        co_return unexpected(Failure{
            fmt::format("topic '{}' has no partition {} (in the --from-file plan of group '{}')", tp.first, tp.second,
                        group),
            {}});
      }
      parts.push_back(tp);
    }
  } else if (args.all_topics) {
    for (const auto& [tp, offset] : committed) parts.push_back(tp);
  } else {
    std::vector<TopicScope> scopes;
    for (const auto& t : args.topics) scopes.push_back(*parse_topic_scope(t));  // checked by the caller
    auto resolved = co_await resolve_scopes(s, std::move(scopes));
    if (!resolved) co_return unexpected(Failure{resolved.error(), {}});
    parts = std::move(*resolved);
  }
  if (!parts.empty()) {
    std::set<std::string> names;
    for (const auto& tp : parts) names.insert(tp.first);
    std::optional<std::vector<std::string>> wanted{std::in_place, std::vector<std::string>(names.begin(), names.end())};
    (void)co_await s.client().metadata(std::move(wanted), s.deadline());
  }
  const auto earliest = co_await s.list_offsets(parts, client::kEarliestTimestamp);
  const auto latest = co_await s.list_offsets(parts, client::kLatestTimestamp);
  std::map<TopicPartition, std::int64_t> at_time;
  if (target.kind == Kind::kTimestamp && target.value >= 0) {
    at_time = co_await s.list_offsets(parts, target.value);
  }

  OffsetPlan planned;
  for (const auto& tp : parts) {
    const std::string name = fmt::format("{}-{}", tp.first, tp.second);
    auto lo = earliest.find(tp);
    auto hi = latest.find(tp);
    if (lo == earliest.end() || hi == latest.end()) {
      co_return unexpected(
          Failure{fmt::format("cannot read the offsets of partition {}: no leader answered", name), {}});
    }
    const auto current = committed.find(tp);
    std::int64_t offset = 0;
    switch (target.kind) {
      case Kind::kTimestamp:
        if (target.value == client::kEarliestTimestamp) {
          offset = lo->second;
        } else if (target.value == client::kLatestTimestamp) {
          offset = hi->second;
        } else if (auto it = at_time.find(tp); it != at_time.end() && it->second >= 0) {
          offset = it->second;
        } else {
          warn(s, fmt::format("partition {} has no record at or after that time: using its log end offset", name));
          offset = hi->second;
        }
        break;
      case Kind::kOffset:
        offset = target.value;
        break;
      case Kind::kCurrent:
        offset = current != committed.end() ? current->second : hi->second;
        break;
      case Kind::kShift:
        if (current == committed.end()) {
          co_return unexpected(Failure{
              fmt::format("cannot shift the offset of partition {}: group '{}' has no committed offset there", name,
                          group),
              {}});
        }
        offset = current->second + target.value;
        break;
      case Kind::kFromFile:
        offset = from_file.at(tp);
        break;
    }
    // Out of the log's range: the nearest end, as kafka-consumer-groups does.
    if (offset < lo->second) {
      warn(s, fmt::format("offset {} is below the log start offset of {}: using {}", offset, name, lo->second));
      offset = lo->second;
    } else if (offset > hi->second) {
      warn(s, fmt::format("offset {} is above the log end offset of {}: using {}", offset, name, hi->second));
      offset = hi->second;
    }
    planned[tp] = offset;
  }

  if (args.execute && !planned.empty()) {
    protocol::OffsetCommitRequest req;
    req.group_id = group;
    req.generation_id_or_member_epoch = -1;  // an admin commit: no member, no generation
    for (const auto& [tp, offset] : planned) {
      if (req.topics.empty() || req.topics.back().name != tp.first) req.topics.emplace_back().name = tp.first;
      auto& p = req.topics.back().partitions.emplace_back();
      p.partition_index = tp.second;
      p.committed_offset = offset;
    }
    client::Target coordinator = client::target::Coordinator{client::CoordinatorType::kGroup, group};
    client::CallOptions options;
    options.deadline = s.deadline();
    options.retry_on = client::RetryOn::kAllRetriable;
    options.max_version = 9;  // v10 names topics by id only
    auto resp = co_await s.client().send(std::move(coordinator), std::move(req), std::move(options));
    if (!resp) {
      co_return unexpected(Failure{fmt::format("cannot commit the offsets of group '{}'", group), resp.error()});
    }
    for (const auto& t : resp->topics) {
      for (const auto& p : t.partitions) {
        if (p.error_code != client::codes::kNone) {
          co_return unexpected(
              Failure{fmt::format("cannot commit the offset of {}-{} for group '{}'", t.name, p.partition_index,
                                      group),
                          client::Error::kafka(p.error_code, "")});
        }
      }
    }
  }
  co_return planned;
}

// kafka-consumer-groups --reset-offsets for one group, several, or --all-groups: each group's new
// offsets in one table (or CSV with --export, group,topic,partition,offset rows when there are
// several groups, as Kafka's tool writes them). A group that cannot be reset (active, no plan in
// the file, ...) is reported and the others go on; the exit status is then 1.
asio::awaitable<int> seek_groups(Session& s, const SeekArgs& args, SeekTarget target, GroupResetPlans plans) {
  std::vector<std::string> groups = args.groups;
  if (args.all_groups) {
    auto names = co_await consumer_group_names(s);
    if (!names) co_return s.fail(names.error().message, names.error().cause);
    groups = std::move(*names);
  }
  struct Outcome {
    std::string group;
    OffsetPlan planned;
    std::optional<Failure> failure;
  };
  std::vector<Outcome> outcomes;
  for (const auto& group : groups) {
    Outcome& o = outcomes.emplace_back();
    o.group = group;
    OffsetPlan from_file;
    if (target.kind == SeekTarget::Kind::kFromFile) {
      auto it = plans.find(group);
      if (it == plans.end()) {
        o.failure = Failure{fmt::format("the --from-file plan has no rows for group '{}'", group), {}};
        continue;
      }
      from_file = it->second;
    }
    auto result = co_await seek_one_group(s, args, group, target, std::move(from_file));
    if (result) {
      o.planned = std::move(*result);
    } else {
      o.failure = std::move(result.error());
    }
  }
  // One group named: its failure is the command's (as every command fails).
  if (!args.all_groups && outcomes.size() == 1 && outcomes.front().failure) {
    co_return s.fail(outcomes.front().failure->message, outcomes.front().failure->cause);
  }
  bool failed = false;
  for (const auto& o : outcomes) {
    if (!o.failure) continue;
    failed = true;
    if (!s.json()) {
      std::string text = o.failure->message;
      if (o.failure->cause) text += ": " + o.failure->cause->to_string();
      std::fprintf(stderr, "error: %s\n", text.c_str());
    }
  }

  if (s.json()) {
    Json j;
    j.begin_object().key("executed").value(args.execute).key("groups").begin_array();
    for (const auto& o : outcomes) {
      j.begin_object().key("group").value(o.group).key("offsets").begin_array();
      for (const auto& [tp, offset] : o.planned) {
        j.begin_object().key("topic").value(tp.first).key("partition").value(tp.second);
        j.key("new_offset").value(offset).end_object();
      }
      j.end_array().key("error");
      if (o.failure) {
        std::string text = o.failure->message;
        if (o.failure->cause) text += ": " + o.failure->cause->to_string();
        j.value(text);
      } else {
        j.null();
      }
      j.end_object();
    }
    j.end_array().end_object();
    print(j.str() + "\n");
  } else if (args.export_csv) {
    // kafka-consumer-groups --export: topic,partition,offset per line (group,topic,partition,offset
    // for more than one group), then an empty line.
    const bool with_group = args.all_groups || args.groups.size() > 1;
    std::string out;
    for (const auto& o : outcomes) {
      for (const auto& [tp, offset] : o.planned) {
        if (with_group) out += csv_field(o.group) + ",";
        out += fmt::format("{},{},{}\n", tp.first, tp.second, offset);
      }
    }
    print(out + "\n");
  } else {
    std::size_t gw = 15;
    std::size_t tw = 15;
    for (const auto& o : outcomes) {
      if (!o.failure) gw = std::max(gw, o.group.size());
      for (const auto& [tp, offset] : o.planned) tw = std::max(tw, tp.first.size());
    }
    std::string out = fmt::format("\n{:<{}} {:<{}} {:<10} {}\n", "GROUP", gw, "TOPIC", tw, "PARTITION", "NEW-OFFSET");
    for (const auto& o : outcomes) {
      for (const auto& [tp, offset] : o.planned) {
        out += fmt::format("{:<{}} {:<{}} {:<10} {}\n", o.group, gw, tp.first, tw, tp.second, offset);
      }
    }
    print(out);
  }
  co_return failed ? kExitFailed : kExitOk;
}

// --- delete ---

struct DeleteArgs {
  std::vector<std::string> groups;
};

// Human text of a Kafka error code these commands meet: what it means here, then its name.
std::string error_text(std::int16_t code) {
  const std::string name(client::Error::kafka(code, "").name());
  const char* meaning = nullptr;
  switch (code) {
    case client::codes::kUnknownTopicOrPartition:
      meaning = "the cluster has no such topic or partition";
      break;
    case client::codes::kNonEmptyGroup:
      meaning = "the group is not empty";
      break;
    case client::codes::kGroupIdNotFound:
      meaning = "the group does not exist";
      break;
    case client::codes::kGroupSubscribedToTopic:
      meaning = "the group is subscribed to the topic";
      break;
    default:
      break;
  }
  const std::string shown = name.empty() ? fmt::format("error code {}", code) : name;
  return meaning == nullptr ? shown : fmt::format("{} ({})", meaning, shown);
}

asio::awaitable<int> delete_groups(Session& s, const DeleteArgs& args) {
  std::vector<std::string> deleted;
  std::vector<std::pair<std::string, std::string>> failed;  // group, why
  for (const auto& group : args.groups) {
    protocol::DeleteGroupsRequest req;
    req.groups_names.push_back(group);
    client::Target coordinator = client::target::Coordinator{client::CoordinatorType::kGroup, group};
    auto resp = co_await s.send(std::move(coordinator), std::move(req), client::RetryOn::kAllRetriable);
    if (!resp) {
      failed.emplace_back(group, resp.error().to_string());
      continue;
    }
    std::int16_t code = resp->results.empty() ? std::int16_t{client::codes::kNone} : resp->results.front().error_code;
    if (code == client::codes::kNone) {
      deleted.push_back(group);
    } else {
      failed.emplace_back(group, error_text(code));
    }
  }
  const auto quoted = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
    return out;
  };
  if (s.json()) {
    Json j;
    j.begin_object().key("deleted").begin_array();
    for (const auto& g : deleted) j.value(g);
    j.end_array().key("failed").begin_array();
    for (const auto& [g, why] : failed) j.begin_object().key("group").value(g).key("error").value(why).end_object();
    j.end_array().end_object();
    print(j.str() + "\n");
    co_return failed.empty() ? kExitOk : kExitFailed;
  }
  if (failed.empty()) {
    print(fmt::format("Deletion of requested consumer groups ({}) was successful.\n", quoted(deleted)));
    co_return kExitOk;
  }
  for (const auto& [g, why] : failed)
    std::fprintf(stderr, "error: group '%s' could not be deleted: %s\n", g.c_str(), why.c_str());
  if (!deleted.empty()) print(fmt::format("These consumer groups were deleted successfully: {}\n", quoted(deleted)));
  co_return kExitFailed;
}

// --- delete-offsets ---

struct DeleteOffsetsArgs {
  std::string group;
  std::vector<std::string> topics;
};

asio::awaitable<int> delete_offsets(Session& s, const DeleteOffsetsArgs& args) {
  // Topics the cluster does not have are reported per row (as kafka-consumer-groups does), the
  // others are asked of the coordinator.
  std::vector<TopicPartition> parts;
  std::vector<std::string> unknown;
  for (const auto& text : args.topics) {
    const TopicScope sc = *parse_topic_scope(text);  // checked by the caller
    std::vector<TopicScope> one{sc};
    auto resolved = co_await resolve_scopes(s, std::move(one));
    if (!resolved) {
      unknown.push_back(sc.topic);
      continue;
    }
    for (auto& tp : *resolved) parts.push_back(std::move(tp));
  }
  std::ranges::sort(parts);
  parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  std::map<TopicPartition, std::int16_t> status;
  std::int16_t group_error = 0;
  if (!parts.empty()) {
    protocol::OffsetDeleteRequest req;
    req.group_id = args.group;
    for (const auto& tp : parts) {
      if (req.topics.empty() || req.topics.back().name != tp.first) req.topics.emplace_back().name = tp.first;
      req.topics.back().partitions.emplace_back().partition_index = tp.second;
    }
    client::Target coordinator = client::target::Coordinator{client::CoordinatorType::kGroup, args.group};
    auto resp = co_await s.send(std::move(coordinator), std::move(req), client::RetryOn::kAllRetriable);
    if (!resp) co_return s.fail(fmt::format("cannot delete the offsets of group '{}'", args.group), resp.error());
    group_error = resp->error_code;
    for (const auto& t : resp->topics) {
      for (const auto& p : t.partitions) status[{t.name, p.partition_index}] = p.error_code;
    }
  }
  if (group_error == client::codes::kGroupIdNotFound || (group_error != client::codes::kNone && status.empty())) {
    co_return s.fail_code(fmt::format("cannot delete the offsets of group '{}'", args.group), group_error,
                          std::nullopt);
  }
  struct Line {
    std::string topic;
    std::optional<std::int32_t> partition;  // none: the topic does not exist
    std::int16_t code;
  };
  std::vector<Line> lines;
  for (const auto& t : unknown) lines.push_back({t, std::nullopt, client::codes::kUnknownTopicOrPartition});
  for (const auto& tp : parts) {
    auto it = status.find(tp);
    lines.push_back({tp.first, tp.second, it == status.end() ? group_error : it->second});
  }
  std::ranges::stable_sort(lines, [](const Line& a, const Line& b) { return a.topic < b.topic; });
  const bool all_ok = std::ranges::all_of(lines, [](const Line& l) { return l.code == client::codes::kNone; });
  if (s.json()) {
    Json j;
    j.begin_object().key("group").value(args.group).key("partitions").begin_array();
    for (const auto& l : lines) {
      j.begin_object().key("topic").value(l.topic).key("partition");
      j.value(l.partition);
      j.key("error");
      if (l.code == client::codes::kNone) {
        j.null();
      } else {
        j.value(client::Error::kafka(l.code, "").name());
      }
      j.end_object();
    }
    j.end_array().end_object();
    print(j.str() + "\n");
    co_return all_ok ? kExitOk : kExitFailed;
  }
  std::string out = all_ok ? fmt::format("Request succeeded for deleting offsets from group {}.\n", args.group)
                           : std::string("Error: Encountered some partition-level error, see the follow-up details.\n");
  std::size_t tw = 15;
  for (const auto& l : lines) tw = std::max(tw, l.topic.size());
  out += fmt::format("\n{:<{}} {:<10} {:<15}\n", "TOPIC", tw, "PARTITION", "STATUS");
  for (const auto& l : lines) {
    out += fmt::format("{:<{}} {:<10} {:<15}\n", l.topic, tw, l.partition ? std::to_string(*l.partition) : "-",
                       l.code == client::codes::kNone ? std::string("Successful") : "Error: " + error_text(l.code));
  }
  print(out);
  co_return all_ok ? kExitOk : kExitFailed;
}

}  // namespace

// A member as both describe APIs name it: id, instance id, client id and host.
template <class Member>
GroupMemberDescription& add_member(GroupDescription& d, const Member& m,
                                   const std::optional<std::string>& instance_id) {
  auto& dm = d.members.emplace_back();
  dm.member_id = m.member_id;
  dm.instance_id = instance_id.value_or("");
  dm.client_id = m.client_id;
  dm.host = m.client_host;
  return dm;
}

GroupDescription group_description(const protocol::ConsumerGroupDescribeResponse::DescribedGroup& g) {
  const auto partitions = [](const protocol::ConsumerGroupDescribeResponse::Assignment& a) {
    std::vector<TopicPartition> out;
    for (const auto& t : a.topic_partitions) {
      for (const std::int32_t p : t.partitions) out.emplace_back(t.topic_name, p);
    }
    std::ranges::sort(out);
    return out;
  };
  GroupDescription d;
  d.consumer_protocol = true;
  d.state = g.group_state;
  d.assignor = g.assignor_name;
  d.group_epoch = g.group_epoch;
  d.target_assignment_epoch = g.assignment_epoch;
  for (const auto& m : g.members) {
    auto& dm = add_member(d, m, m.instance_id);
    dm.assignment = partitions(m.assignment);
    dm.target_assignment = partitions(m.target_assignment);
    dm.member_epoch = m.member_epoch;
    if (m.member_type >= 0) dm.upgraded = m.member_type == 1;  // MemberType: 0 classic, 1 consumer
  }
  return d;
}

GroupDescription group_description(const protocol::DescribeGroupsResponse::DescribedGroup& g) {
  GroupDescription d;
  d.state = g.group_state;
  d.assignor = g.protocol_data;
  for (const auto& m : g.members) {
    auto& dm = add_member(d, m, m.group_instance_id);
    dm.assignment = assigned_partitions(m.member_assignment);
    std::ranges::sort(dm.assignment);
  }
  return d;
}

std::string assignment_text(const std::vector<TopicPartition>& parts) {
  std::map<std::string, std::vector<std::int32_t>> by_topic;
  for (const auto& [t, p] : parts) by_topic[t].push_back(p);
  std::vector<std::string> texts;
  for (auto& [t, ps] : by_topic) {
    std::ranges::sort(ps);
    std::string text = t + ":";
    for (std::size_t i = 0; i < ps.size(); ++i) text += (i == 0 ? "" : ",") + std::to_string(ps[i]);
    texts.push_back(std::move(text));
  }
  std::ranges::sort(texts);
  std::string out;
  for (const auto& t : texts) out += (out.empty() ? "" : ";") + t;
  return out.empty() ? std::string(kMissing) : out;
}

std::string members_table(const std::string& group, const GroupDescription& g, bool verbose) {
  std::size_t gw = 15;
  std::size_t cw = 15;
  std::size_t iw = 17;
  std::size_t hw = 15;
  std::size_t kw = 15;
  std::size_t aw = 20;
  std::size_t tw = 20;
  bool with_instance = false;
  bool classic_member = false;
  bool consumer_member = false;
  for (const auto& m : g.members) {
    gw = std::max(gw, group.size());
    cw = std::max(cw, m.member_id.size());
    iw = std::max(iw, m.instance_id.size());
    hw = std::max(hw, m.host.size());
    kw = std::max(kw, m.client_id.size());
    aw = std::max(aw, assignment_text(m.assignment).size());
    tw = std::max(tw, assignment_text(m.target_assignment.value_or(std::vector<TopicPartition>{})).size());
    with_instance = with_instance || !m.instance_id.empty();
    classic_member = classic_member || m.upgraded == false;
    consumer_member = consumer_member || m.upgraded == true;
  }
  const bool mixed = classic_member && consumer_member;
  // Every column but the last verbose one is padded and followed by a space, as Kafka's tool prints.
  const auto columns = [&](std::string_view grp, std::string_view id, std::string_view instance, std::string_view host,
                           std::string_view client, std::string_view count) {
    std::string out = fmt::format("{:<{}} {:<{}} ", grp, gw, id, cw);
    if (with_instance) out += fmt::format("{:<{}} ", instance, iw);
    return out + fmt::format("{:<{}} {:<{}} {:<15} ", host, hw, client, kw, count);
  };
  const auto verbose_columns = [&](std::string_view epoch, std::string_view current, std::string_view target_epoch,
                                   std::string_view target, std::string_view upgraded) {
    std::string out = fmt::format("{:<15} {:<{}} {:<15} {:<{}}", epoch, current, aw, target_epoch, target, tw);
    if (mixed) out += fmt::format(" {}", upgraded);
    return out;
  };
  std::string out = "\n" + columns("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS");
  if (verbose)
    out += verbose_columns("CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT", "UPGRADED");
  out += "\n";
  const auto number = [](const std::optional<std::int32_t>& v) {
    return v ? std::to_string(*v) : std::string(kMissing);
  };
  for (const auto& m : g.members) {
    out += columns(group, m.member_id, m.instance_id, m.host, m.client_id, std::to_string(m.assignment.size()));
    if (verbose) {
      const std::string upgraded = m.upgraded ? (*m.upgraded ? "true" : "false") : std::string(kMissing);
      out += verbose_columns(number(m.member_epoch), assignment_text(m.assignment), number(g.target_assignment_epoch),
                             assignment_text(m.target_assignment.value_or(std::vector<TopicPartition>{})), upgraded);
    }
    out += "\n";
  }
  return out;
}

std::string csv_field(std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::optional<std::vector<std::string>> split_csv_line(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  std::size_t i = 0;
  for (;;) {
    field.clear();
    if (i < line.size() && line[i] == '"') {
      // A quoted field: "" is a quote; it ends at a lone quote, which a comma or the end follows.
      for (++i;; ++i) {
        if (i >= line.size()) return std::nullopt;
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            ++i;
          } else {
            ++i;
            break;
          }
        } else {
          field += line[i];
        }
      }
      if (i < line.size() && line[i] != ',') return std::nullopt;
    } else {
      const auto comma = line.find(',', i);
      field = line.substr(i, comma == std::string_view::npos ? std::string_view::npos : comma - i);
      i = comma == std::string_view::npos ? line.size() : comma;
    }
    fields.push_back(field);
    if (i >= line.size()) return fields;
    ++i;  // the comma
  }
}

Result<GroupResetPlans, std::string> parse_reset_plan(std::string_view csv, const std::string& single_group) {
  GroupResetPlans plans;
  std::size_t line_no = 0;
  std::optional<bool> with_group;  // the rows' format, from the first row
  while (!csv.empty()) {
    const auto nl = csv.find('\n');
    std::string_view line = csv.substr(0, nl);
    csv = nl == std::string_view::npos ? std::string_view{} : csv.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const auto fields = split_csv_line(line);
    if (!fields || (fields->size() != 3 && fields->size() != 4)) {
      return unexpected(
          fmt::format("line {}: expected topic,partition,offset or group,topic,partition,offset: {}", line_no, line));
    }
    const bool has_group = fields->size() == 4;
    if (with_group && *with_group != has_group) {
      return unexpected(fmt::format("line {}: every row needs the same columns (with or without the group): {}",
                                    line_no, line));
    }
    with_group = has_group;
    const std::size_t at = has_group ? 1 : 0;
    const std::string& topic = (*fields)[at];
    const std::string& partition_text = (*fields)[at + 1];
    const std::string& offset_text = (*fields)[at + 2];
    std::int32_t partition = -1;
    std::int64_t offset = -1;
    const auto [pend, pec] = std::from_chars(partition_text.data(), partition_text.data() + partition_text.size(),
                                             partition);
    if (topic.empty() || pec != std::errc() || pend != partition_text.data() + partition_text.size() ||
        partition < 0) {
      return unexpected(fmt::format("line {}: expected a topic and a partition number: {}", line_no, line));
    }
    const auto [oend, oec] = std::from_chars(offset_text.data(), offset_text.data() + offset_text.size(), offset);
    if (oec != std::errc() || oend != offset_text.data() + offset_text.size() || offset_text.empty()) {
      return unexpected(fmt::format("line {}: expected an offset: {}", line_no, line));
    }
    if (offset < 0) return unexpected(fmt::format("line {}: invalid negative offset {}", line_no, offset));
    std::string group;
    if (has_group) {
      group = (*fields)[0];
      if (group.empty()) return unexpected(fmt::format("line {}: the group is empty: {}", line_no, line));
    } else if (single_group.empty()) {
      return unexpected(fmt::format(
          "line {}: topic,partition,offset rows are for one group; for several, write group,topic,partition,offset",
          line_no));
    } else {
      group = single_group;
    }
    plans[group][{topic, partition}] = offset;
  }
  return plans;
}

void add_group_command(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand(
      "group", "Consumer groups: list them, describe their offsets and lag, move or delete their offsets");
  group->require_subcommand(1);
  auto flags = std::make_shared<ClientFlags>();

  auto* list = group->add_subcommand("list", "The consumer groups of every broker");
  add_client_flags(*list, *flags);
  list->callback([flags, &exit_code]() { exit_code = run_client(*flags, [](Session& s) { return list_groups(s); }); });

  auto args = std::make_shared<DescribeArgs>();
  auto* describe = group->add_subcommand(
      "describe",
      "Committed offsets, log end offsets, lag and owners per partition (as kafka-consumer-groups --describe)");
  add_client_flags(*describe, *flags);
  describe->add_option("group", args->group, "The group id")->required();
  auto* members_flag = describe->add_flag("--members", args->members, "One row per member, as --describe --members");
  describe->add_flag("--state", args->state, "The coordinator, assignor, state and member count, as --describe --state")
      ->excludes(members_flag);
  describe->add_flag("--verbose", args->verbose, "With --members or --state: the epochs and assignments too");
  describe->callback([flags, args, &exit_code]() {
    exit_code = run_client(*flags, [args](Session& s) { return describe_group(s, *args); });
  });

  auto seek_args = std::make_shared<SeekArgs>();
  auto* seek = group->add_subcommand(
      "seek",
      "Moves inactive groups' committed offsets (kafka-consumer-groups --reset-offsets); prints the plan "
      "unless --execute");
  add_client_flags(*seek, *flags);
  auto* groups_opt = seek->add_option("group", seek_args->groups, "The group ids");
  auto* all_groups_opt = seek->add_flag("--all-groups", seek_args->all_groups, "Every consumer group of the cluster");
  groups_opt->excludes(all_groups_opt);
  auto* topic_opt = seek->add_option("--topic", seek_args->topics, "A topic, or topic:0,1,2 for some partitions");
  auto* all_opt = seek->add_flag("--all-topics", seek_args->all_topics, "Every partition the group has an offset for");
  topic_opt->excludes(all_opt);
  auto* to_opt = seek->add_option("--to", seek_args->to,
                                  "earliest, latest, current (the committed offset, else the log end), an offset, "
                                  "@<ms since the epoch> or @-<N>s|m|h|d (that long ago)");
  auto* shift_opt =
      seek->add_option("--shift-by", seek_args->shift_by, "Move each committed offset by N (may be negative)");
  to_opt->excludes(shift_opt);
  auto* file_opt = seek->add_option("--from-file", seek_args->from_file,
                                    "The offsets of a CSV file: topic,partition,offset rows (as --export writes "
                                    "them) or group,topic,partition,offset rows for several groups");
  file_opt->excludes(to_opt)->excludes(shift_opt)->excludes(topic_opt)->excludes(all_opt);
  auto* execute_opt = seek->add_flag("--execute", seek_args->execute, "Commit the new offsets");
  seek->add_flag("--dry-run", seek_args->dry_run, "Only print the new offsets (the default)")->excludes(execute_opt);
  seek->add_flag("--export", seek_args->export_csv,
                 "Print topic,partition,offset lines (CSV; group,topic,partition,offset for several groups) "
                 "instead of the table");
  seek->callback([flags, seek_args, &exit_code]() {
    const SeekArgs& a = *seek_args;
    const auto usage = [&exit_code](const std::string& text) {
      std::fprintf(stderr, "error: %s\n", text.c_str());
      exit_code = kExitUsage;
    };
    if (a.groups.empty() && !a.all_groups) return usage("name a group (or several), or pass --all-groups");
    SeekTarget target;
    GroupResetPlans plans;
    if (!a.from_file.empty()) {
      std::ifstream in(a.from_file, std::ios::binary);
      if (!in) return usage(fmt::format("--from-file {}: cannot read the file", a.from_file));
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto parsed = parse_reset_plan(text, a.groups.size() == 1 ? a.groups.front() : std::string());
      if (!parsed) return usage(fmt::format("--from-file {}: {}", a.from_file, parsed.error()));
      plans = std::move(*parsed);
      target = SeekTarget{SeekTarget::Kind::kFromFile, 0};
    } else {
      if (a.topics.empty() && !a.all_topics) return usage("one of --topic, --all-topics or --from-file is required");
      for (const auto& t : a.topics) {
        if (!parse_topic_scope(t)) return usage(fmt::format("--topic {}: expected a topic or topic:0,1,2", t));
      }
      if (a.shift_by) {
        target = SeekTarget{SeekTarget::Kind::kShift, *a.shift_by};
      } else if (a.to.empty()) {
        return usage("one of --to, --shift-by or --from-file is required");
      } else if (auto t = parse_seek_target(a.to)) {
        target = *t;
      } else {
        return usage(
            fmt::format("--to {}: expected earliest, latest, current, an offset, @<epoch ms> or @-<N>s|m|h|d", a.to));
      }
    }
    auto shared_plans = std::make_shared<GroupResetPlans>(std::move(plans));
    exit_code = run_client(*flags, [seek_args, target, shared_plans](Session& s) {
      return seek_groups(s, *seek_args, target, *shared_plans);
    });
  });

  auto delete_args = std::make_shared<DeleteArgs>();
  auto* del = group->add_subcommand("delete", "Deletes groups with no members, and their committed offsets");
  add_client_flags(*del, *flags);
  del->add_option("groups", delete_args->groups, "The group ids")->required();
  del->callback([flags, delete_args, &exit_code]() {
    exit_code = run_client(*flags, [delete_args](Session& s) { return delete_groups(s, *delete_args); });
  });

  auto offsets_args = std::make_shared<DeleteOffsetsArgs>();
  auto* del_offsets =
      group->add_subcommand("delete-offsets", "Deletes a group's committed offsets of topics it is not subscribed to");
  add_client_flags(*del_offsets, *flags);
  del_offsets->add_option("group", offsets_args->group, "The group id")->required();
  del_offsets->add_option("--topic", offsets_args->topics, "A topic, or topic:0,1,2 for some partitions")->required();
  del_offsets->callback([flags, offsets_args, &exit_code]() {
    for (const auto& t : offsets_args->topics) {
      if (!parse_topic_scope(t)) {
        std::fprintf(stderr, "error: --topic %s: expected a topic or topic:0,1,2\n", t.c_str());
        exit_code = kExitUsage;
        return;
      }
    }
    exit_code = run_client(*flags, [offsets_args](Session& s) { return delete_offsets(s, *offsets_args); });
  });
}

}  // namespace weir::cli
