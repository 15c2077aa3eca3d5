#include "cli/group.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "cli/client_command.h"
#include "protocol/gen/describe_groups_request.h"
#include "protocol/gen/list_groups_request.h"
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

asio::awaitable<int> list_groups(Session& s) {
  std::optional<std::vector<std::string>> none{std::in_place};
  auto md = co_await s.client().metadata(std::move(none), s.deadline());
  if (!md) co_return s.fail("cannot reach the cluster", md.error());
  std::set<std::string> names;
  for (const auto& b : md->brokers) {
    protocol::ListGroupsRequest req;
    client::Target node = client::target::Node{b.node_id};
    auto resp = co_await s.send(std::move(node), std::move(req), client::RetryOn::kAllRetriable);
    if (!resp) co_return s.fail(fmt::format("cannot list the groups of broker {}", b.node_id), resp.error());
    if (resp->error_code != 0) {
      co_return s.fail_code(fmt::format("cannot list the groups of broker {}", b.node_id), resp->error_code,
                            std::nullopt);
    }
    for (const auto& g : resp->groups) {
      if (g.protocol_type == "consumer" || g.protocol_type.empty()) names.insert(g.group_id);
    }
  }
  if (s.json()) {
    Json j;
    j.begin_object().key("groups").begin_array();
    for (const auto& n : names) j.value(n);
    j.end_array().end_object();
    print(j.str() + "\n");
  } else {
    std::string out;
    for (const auto& n : names) out += n + "\n";
    print(out);
  }
  co_return kExitOk;
}

// --- describe ---

struct DescribeArgs {
  std::string group;
};

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

asio::awaitable<int> describe_group(Session& s, const DescribeArgs& args) {
  protocol::DescribeGroupsRequest dreq;
  dreq.groups.push_back(args.group);
  client::Target coordinator = client::target::Coordinator{client::CoordinatorType::kGroup, args.group};
  auto described = co_await s.send(std::move(coordinator), std::move(dreq), client::RetryOn::kAllRetriable);
  if (!described) co_return s.fail(fmt::format("cannot describe group '{}'", args.group), described.error());
  if (described->groups.empty())
    co_return s.fail(fmt::format("group '{}': the broker returned no description", args.group));
  const auto& g = described->groups.front();
  constexpr std::int16_t kGroupIdNotFound = 69;
  if (g.error_code == kGroupIdNotFound || (g.error_code == 0 && g.group_state == "Dead")) {
    co_return s.fail(fmt::format("consumer group '{}' does not exist", args.group));
  }
  if (g.error_code != 0) {
    co_return s.fail_code(fmt::format("cannot describe group '{}'", args.group), g.error_code, g.error_message);
  }

  protocol::OffsetFetchRequest oreq;
  oreq.group_id = args.group;
  oreq.topics = std::nullopt;  // every partition with a committed offset
  auto& og = oreq.groups.emplace_back();
  og.group_id = args.group;
  og.topics = std::nullopt;
  client::Target coordinator2 = client::target::Coordinator{client::CoordinatorType::kGroup, args.group};
  client::CallOptions options;
  options.deadline = s.deadline();
  options.retry_on = client::RetryOn::kAllRetriable;
  options.max_version = 9;  // v10 names topics by id only
  auto fetched = co_await s.client().send(std::move(coordinator2), std::move(oreq), std::move(options));
  if (!fetched) co_return s.fail(fmt::format("cannot fetch the offsets of group '{}'", args.group), fetched.error());
  std::map<TopicPartition, std::int64_t> committed;
  const auto take = [&committed](const auto& topics) {
    for (const auto& t : topics) {
      for (const auto& p : t.partitions) {
        if (p.error_code == 0 && p.committed_offset >= 0) committed[{t.name, p.partition_index}] = p.committed_offset;
      }
    }
  };
  take(fetched->topics);
  for (const auto& fg : fetched->groups) take(fg.topics);

  // Rows as kafka-consumer-groups --describe orders them: members by assignment size (largest
  // first), each member's partitions by topic and partition, then committed partitions nobody owns.
  struct Member {
    const protocol::DescribeGroupsResponse::DescribedGroupMember* m;
    std::vector<TopicPartition> parts;
  };
  std::vector<Member> members;
  for (const auto& m : g.members) {
    auto parts = assigned_partitions(m.member_assignment);
    if (parts.empty()) continue;
    std::ranges::sort(parts);
    members.push_back({&m, std::move(parts)});
  }
  std::ranges::stable_sort(members, [](const Member& a, const Member& b) { return a.parts.size() > b.parts.size(); });
  std::vector<Row> rows;
  std::set<TopicPartition> owned;
  for (const auto& member : members) {
    for (const auto& tp : member.parts) {
      owned.insert(tp);
      rows.push_back({tp.first, tp.second, std::nullopt, std::nullopt, member.m->member_id, member.m->client_host,
                      member.m->client_id});
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
    j.begin_object().key("group").value(args.group).key("state").value(g.group_state);
    j.key("protocol").value(g.protocol_data).key("members").value(static_cast<std::int64_t>(g.members.size()));
    j.key("partitions").begin_array();
    std::int64_t total_lag = 0;
    for (const auto& r : rows) {
      j.begin_object().key("topic").value(r.topic).key("partition").value(r.partition);
      const auto put = [&j](std::string_view k, const std::optional<std::int64_t>& v) {
        j.key(k);
        if (v) {
          j.value(*v);
        } else {
          j.null();
        }
      };
      put("current_offset", r.offset);
      put("log_end_offset", r.log_end);
      put("lag", lag(r));
      if (const auto l = lag(r)) total_lag += *l;
      const auto str_or_null = [&j](std::string_view k, const std::string& v) {
        j.key(k);
        if (v == kMissing) {
          j.null();
        } else {
          j.value(v);
        }
      };
      str_or_null("consumer_id", r.consumer_id);
      str_or_null("host", r.host);
      str_or_null("client_id", r.client_id);
      j.end_object();
    }
    j.end_array().key("total_lag").value(total_lag).end_object();
    print(j.str() + "\n");
    co_return kExitOk;
  }

  // kafka-consumer-groups' own messages and layout.
  if (g.group_state == "Empty") {
    std::fprintf(stderr, "\nConsumer group '%s' has no active members.\n", args.group.c_str());
  } else if (g.group_state == "PreparingRebalance" || g.group_state == "CompletingRebalance" ||
             g.group_state == "Assigning" || g.group_state == "Reconciling") {
    std::fprintf(stderr, "\nWarning: Consumer group '%s' is rebalancing.\n", args.group.c_str());
  }
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

}  // namespace

void add_group_command(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand("group", "Consumer groups: list them, describe their offsets and lag");
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
  describe->callback([flags, args, &exit_code]() {
    exit_code = run_client(*flags, [args](Session& s) { return describe_group(s, *args); });
  });
}

}  // namespace weir::cli
