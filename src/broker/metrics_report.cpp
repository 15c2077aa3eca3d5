#include "broker/metrics_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "broker/async.h"
#include "broker/broker.h"
#include "broker/handlers/registry.h"
#include "broker/txn_host.h"
#include "metrics/exposition.h"
#include "net/server.h"
#include "protocol/error_names.h"
#include "protocol/gen/api_registry.h"

namespace weir::broker {

namespace {

using metrics::Type;

struct ApiSample {
  std::uint64_t requests = 0;
  std::array<std::uint64_t, kCountedVersions> by_version{};
  std::uint64_t error_responses = 0;
  std::uint64_t request_bytes = 0;
  std::uint64_t response_bytes = 0;
  std::int64_t in_flight = 0;
  metrics::HistogramSnapshot latency_us;

  void add(const ApiSample& o) {
    requests += o.requests;
    for (std::size_t v = 0; v < by_version.size(); ++v) by_version[v] += o.by_version[v];
    error_responses += o.error_responses;
    request_bytes += o.request_bytes;
    response_bytes += o.response_bytes;
    in_flight += o.in_flight;
    latency_us.merge(o.latency_us);
  }
};

struct PartitionSample {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t log_start_offset = 0;
  std::int64_t log_end_offset = 0;
  std::int64_t high_watermark = 0;
  std::int64_t segments = 0;
  std::int64_t size_bytes = 0;
  Partition::Traffic traffic;
};

struct GroupSample {
  std::string group;
  bool has_members_state = false;  // false: offsets committed without joining (no ClassicGroup)
  std::string state;
  std::int64_t members = 0;
  std::int64_t generation = 0;
  std::uint64_t rebalances = 0;
  std::int64_t last_rebalance_ms = -1;
  std::vector<std::pair<std::pair<std::string, std::int32_t>, std::int64_t>> offsets;
};

struct ShardSample {
  std::vector<ApiSample> apis;  // in served_apis() order
  std::vector<std::pair<std::uint32_t, std::uint64_t>> errors;
  std::array<std::uint64_t, static_cast<std::size_t>(Malformed::kCount)> malformed{};
  std::array<std::uint64_t, static_cast<std::size_t>(Limit::kCount)> limits{};
  std::uint64_t reject_lines_dropped = 0;
  std::uint64_t close_lines_dropped = 0;
  std::vector<PartitionSample> partitions;
  std::vector<GroupSample> groups;
};

// Runs on the shard: copies, nothing more.
ShardSample sample_shard(Broker& broker, const net::Server& server, std::size_t shard,
                         const std::vector<ServedApi>& apis) {
  ShardSample out;
  const RequestStats& stats = broker.request_stats(shard);
  for (const auto& a : apis) {
    const ApiStats& s = stats.apis[static_cast<std::size_t>(a.key)];
    ApiSample sample{s.requests.value(),        {},
                     s.error_responses.value(), s.request_bytes.value(),
                     s.response_bytes.value(),  s.in_flight.value(),
                     s.latency_us.snapshot()};
    for (std::size_t v = 0; v < kCountedVersions; ++v) sample.by_version[v] = s.requests_by_version[v].value();
    out.apis.push_back(std::move(sample));
  }
  out.errors.assign(stats.errors.begin(), stats.errors.end());
  for (std::size_t i = 0; i < out.malformed.size(); ++i) out.malformed[i] = stats.malformed[i].value();
  for (std::size_t i = 0; i < out.limits.size(); ++i) out.limits[i] = stats.limits[i].value();
  out.reject_lines_dropped = stats.reject_log.dropped_total();
  if (shard < server.context_count()) out.close_lines_dropped = server.stats(shard).close_log.dropped_total();

  broker.shards().table(shard).for_each([&](Partition& p) {
    const auto& log = p.log();
    out.partitions.push_back(PartitionSample{p.topic(), p.index(), log.log_start_offset(), log.log_end_offset(),
                                             p.high_watermark(), static_cast<std::int64_t>(log.segment_count()),
                                             log.size_bytes(), p.traffic()});
  });

  for (const auto& [index, host] : broker.group_hosts(shard)) {
    auto& coordinator = host->coordinator();
    std::map<std::string, GroupSample> groups;
    for (const auto& [id, g] : coordinator.groups()) {
      GroupSample& gs = groups[id];
      gs.has_members_state = true;
      gs.state = std::string(group::to_string(g->state()));
      gs.members = static_cast<std::int64_t>(g->size());
      gs.generation = g->generation_id();
      gs.rebalances = g->rebalances();
      gs.last_rebalance_ms = g->last_rebalance_ms();
    }
    for (const auto& [id, offsets] : coordinator.offsets()) {
      GroupSample& gs = groups[id];
      for (const auto& [tp, committed] : offsets) gs.offsets.emplace_back(tp, committed.offset);
    }
    for (auto& [id, gs] : groups) {
      gs.group = id;
      out.groups.push_back(std::move(gs));
    }
  }
  return out;
}

std::string api_name(std::int16_t key) {
  const auto* d = protocol::find_api(key);
  return d != nullptr ? std::string(d->name) : std::to_string(key);
}

void render_requests(metrics::Exposition& x, const std::vector<ServedApi>& apis,
                     const std::vector<ShardSample>& shards) {
  std::vector<ApiSample> total(apis.size());
  for (const auto& s : shards) {
    for (std::size_t i = 0; i < apis.size(); ++i) total[i].add(s.apis[i]);
  }
  std::vector<std::string> names;
  for (const auto& a : apis) names.push_back(api_name(a.key));
  auto per_api = [&](std::string_view name, Type type, std::string_view help, auto value) {
    x.family(name, type, help);
    for (std::size_t i = 0; i < apis.size(); ++i) x.sample(name, {{"api", names[i]}}, value(total[i]));
  };
  per_api("weir_requests_total", Type::kCounter, "Requests received, by API.",
          [](const ApiSample& a) { return a.requests; });
  x.family("weir_requests_by_version_total", Type::kCounter,
           "Requests received, by API and version (versions used so far).");
  for (std::size_t i = 0; i < apis.size(); ++i) {
    for (std::size_t v = 0; v < kCountedVersions; ++v) {
      if (total[i].by_version[v] == 0) continue;
      x.sample("weir_requests_by_version_total", {{"api", names[i]}, {"version", std::to_string(v)}},
               total[i].by_version[v]);
    }
  }
  per_api("weir_request_errors_total", Type::kCounter, "Responses carrying at least one non-zero error code.",
          [](const ApiSample& a) { return a.error_responses; });
  per_api("weir_request_bytes_total", Type::kCounter, "Request bytes received (with the size prefix).",
          [](const ApiSample& a) { return a.request_bytes; });
  per_api("weir_response_bytes_total", Type::kCounter, "Response bytes sent (with the size prefix).",
          [](const ApiSample& a) { return a.response_bytes; });
  per_api("weir_requests_in_flight", Type::kGauge, "Requests received and not yet answered.",
          [](const ApiSample& a) { return a.in_flight; });
  x.family("weir_request_latency_seconds", Type::kHistogram,
           "Time from a request's last byte read to its response queued for writing (APIs used so far).");
  for (std::size_t i = 0; i < apis.size(); ++i) {
    if (total[i].latency_us.count == 0) continue;  // 26 lines per API: only those in use
    x.histogram("weir_request_latency_seconds", {{"api", names[i]}}, total[i].latency_us, 1e-6);
  }
  x.family("weir_request_latency_quantile_seconds", Type::kGauge,
           "Request latency quantiles estimated from the histogram buckets (since start).");
  for (std::size_t i = 0; i < apis.size(); ++i) {
    if (total[i].latency_us.count == 0) continue;
    for (const auto& [label, q] : {std::pair{"0.5", 0.5}, std::pair{"0.99", 0.99}, std::pair{"0.999", 0.999}}) {
      x.sample("weir_request_latency_quantile_seconds", {{"api", names[i]}, {"quantile", label}},
               total[i].latency_us.percentile(q) * 1e-6);
    }
  }

  std::map<std::uint32_t, std::uint64_t> errors;
  for (const auto& s : shards) {
    for (const auto& [k, n] : s.errors) errors[k] += n;
  }
  x.family("weir_errors_total", Type::kCounter,
           "Non-zero error codes in responses, by code; scope=request for a response's own error code, "
           "entry for a partition's, topic's, group's or other entry's.");
  for (const auto& [k, n] : errors) {
    const auto api = static_cast<std::int16_t>(k >> 17);
    const auto error_code = static_cast<std::int16_t>(static_cast<std::uint16_t>((k >> 1) & 0xffff));
    const std::string_view name = protocol::error_name(error_code);
    const std::string code_text = std::to_string(error_code);
    x.sample("weir_errors_total",
             {{"api", api_name(api)},
              {"error", name.empty() ? std::string_view(code_text) : name},
              {"code", code_text},
              {"scope", (k & 1) != 0 ? "request" : "entry"}},
             n);
  }
}

void render_connections(metrics::Exposition& x, const net::Server& server, const std::vector<ShardSample>& shards) {
  std::uint64_t opened = 0;
  std::uint64_t closed = 0;
  std::uint64_t oversized = 0;
  std::uint64_t inflight = 0;
  std::uint64_t from_memory = 0;
  std::uint64_t from_files = 0;
  std::uint64_t budget_waits = 0;
  std::uint64_t partial_timeouts = 0;
  std::uint64_t idle_closes = 0;
  std::uint64_t stalled_reclaims = 0;
  std::uint64_t per_ip = 0;
  std::uint64_t max_conn_pauses = 0;
  std::uint64_t rate_pauses = 0;
  std::uint64_t accept_errors = 0;
  for (std::size_t i = 0; i < server.context_count(); ++i) {
    const auto& st = server.stats(i);
    budget_waits += st.memory_budget_waits.value();
    partial_timeouts += st.partial_request_timeouts.value();
    idle_closes += st.idle_closes.value();
    stalled_reclaims += st.stalled_frame_reclaims.value();
    per_ip += st.per_ip_rejections.value();
    max_conn_pauses += st.max_connections_pauses.value();
    rate_pauses += st.creation_rate_pauses.value();
    accept_errors += st.accept_errors.value();
    opened += st.connections_opened.value();
    closed += st.connections_closed.value();
    oversized += st.oversized_frames.value();
    inflight += st.inflight_limit_hits.value();
    from_memory += st.bytes_sent_from_memory.value();
    from_files += st.bytes_sent_from_files.value();
  }
  x.family("weir_response_bytes_sent_total", Type::kCounter,
           "Response bytes written to clients, by source: memory (encoded), or files with sendfile "
           "(Fetch record data, zero-copy).");
  x.sample("weir_response_bytes_sent_total", {{"source", "memory"}}, from_memory);
  x.sample("weir_response_bytes_sent_total", {{"source", "files"}}, from_files);
  x.family("weir_connections_opened_total", Type::kCounter, "Client connections accepted.");
  x.sample("weir_connections_opened_total", {}, opened);
  x.family("weir_connections_closed_total", Type::kCounter, "Client connections closed.");
  x.sample("weir_connections_closed_total", {}, closed);
  x.family("weir_connections_active", Type::kGauge, "Client connections open.");
  x.sample("weir_connections_active", {}, static_cast<std::int64_t>(opened - std::min(opened, closed)));
  x.family("weir_connections_max", Type::kGauge,
           "max.connections in force (configured, or derived from RLIMIT_NOFILE).");
  x.sample("weir_connections_max", {}, static_cast<std::int64_t>(server.max_connections()));
  x.family("weir_connections_closed_by_timeout_total", Type::kCounter,
           "Connections closed by connections.max.idle.ms (idle), weir.partial.request.timeout.ms (partial), or "
           "because their partial request held request memory, stalled, while others waited for it (stalled).");
  x.sample("weir_connections_closed_by_timeout_total", {{"timeout", "idle"}}, idle_closes);
  x.sample("weir_connections_closed_by_timeout_total", {{"timeout", "partial"}}, partial_timeouts);
  x.sample("weir_connections_closed_by_timeout_total", {{"timeout", "stalled"}}, stalled_reclaims);
  x.family("weir_accept_errors_total", Type::kCounter, "accept(2) failures (EMFILE, ENFILE, ...); each backs off.");
  x.sample("weir_accept_errors_total", {}, accept_errors);
  const net::MemoryBudget& budget = server.memory_budget();
  x.family("weir_request_memory_bytes", Type::kGauge,
           "Request bytes read but not yet released by their handlers (queued.max.request.bytes budget).");
  x.sample("weir_request_memory_bytes", {}, budget.in_use_bytes());
  x.family("weir_request_memory_peak_bytes", Type::kGauge, "Highest weir_request_memory_bytes since start.");
  x.sample("weir_request_memory_peak_bytes", {}, budget.peak_bytes());
  x.family("weir_request_memory_limit_bytes", Type::kGauge, "queued.max.request.bytes in force.");
  x.sample("weir_request_memory_limit_bytes", {}, budget.limit_bytes());

  std::array<std::uint64_t, static_cast<std::size_t>(Malformed::kCount)> malformed{};
  std::array<std::uint64_t, static_cast<std::size_t>(Limit::kCount)> limits{};
  std::uint64_t reject_dropped = 0;
  std::uint64_t close_dropped = 0;
  for (const auto& s : shards) {
    for (std::size_t i = 0; i < malformed.size(); ++i) malformed[i] += s.malformed[i];
    for (std::size_t i = 0; i < limits.size(); ++i) limits[i] += s.limits[i];
    reject_dropped += s.reject_lines_dropped;
    close_dropped += s.close_lines_dropped;
  }
  x.family("weir_malformed_requests_total", Type::kCounter,
           "Request frames that closed their connection: unparseable header, unknown or unserved API, "
           "unsupported version, undecodable body.");
  for (std::size_t i = 0; i < malformed.size(); ++i) {
    x.sample("weir_malformed_requests_total", {{"reason", to_string(static_cast<Malformed>(i))}}, malformed[i]);
  }
  x.family("weir_limit_hits_total", Type::kCounter, "Requests or connections refused because a limit was reached.");
  x.sample("weir_limit_hits_total", {{"limit", "socket.request.max.bytes"}}, oversized);
  x.sample("weir_limit_hits_total", {{"limit", "max.inflight.requests.per.connection"}}, inflight);
  // Each: a reader (or the acceptor) paused until memory (or a slot, or time) was available, or
  // (per ip) a connection closed at accept.
  x.sample("weir_limit_hits_total", {{"limit", "queued.max.request.bytes"}}, budget_waits);
  x.sample("weir_limit_hits_total", {{"limit", "max.connections"}}, max_conn_pauses);
  x.sample("weir_limit_hits_total", {{"limit", "max.connections.per.ip"}}, per_ip);
  x.sample("weir_limit_hits_total", {{"limit", "max.connection.creation.rate"}}, rate_pauses);
  for (std::size_t i = 0; i < limits.size(); ++i) {
    x.sample("weir_limit_hits_total", {{"limit", config_name(static_cast<Limit>(i))}}, limits[i]);
  }
  x.family("weir_log_lines_dropped_total", Type::kCounter, "Log lines dropped by rate limiting, by event.");
  x.sample("weir_log_lines_dropped_total", {{"event", "request_rejected"}}, reject_dropped);
  x.sample("weir_log_lines_dropped_total", {{"event", "connection_closed"}}, close_dropped);
}

void render_partitions(metrics::Exposition& x, std::vector<PartitionSample>& parts) {
  std::ranges::sort(parts, [](const auto& a, const auto& b) {
    return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
  });
  std::vector<std::string> indexes;
  for (const auto& p : parts) indexes.push_back(std::to_string(p.partition));
  auto family = [&](std::string_view name, Type type, std::string_view help, auto value) {
    x.family(name, type, help);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      x.sample(name, {{"topic", parts[i].topic}, {"partition", indexes[i]}}, value(parts[i]));
    }
  };
  family("weir_partition_log_start_offset", Type::kGauge, "First offset of the partition's log.",
         [](const PartitionSample& p) { return p.log_start_offset; });
  family("weir_partition_log_end_offset", Type::kGauge, "Offset the next record appended gets.",
         [](const PartitionSample& p) { return p.log_end_offset; });
  family("weir_partition_high_watermark", Type::kGauge, "High watermark (on one node, the log end offset).",
         [](const PartitionSample& p) { return p.high_watermark; });
  family("weir_partition_segments", Type::kGauge, "Segments of the partition's log.",
         [](const PartitionSample& p) { return p.segments; });
  family("weir_partition_size_bytes", Type::kGauge, "Bytes of the partition's log segments.",
         [](const PartitionSample& p) { return p.size_bytes; });
  family("weir_partition_bytes_in_total", Type::kCounter, "Record batch bytes appended by producers.",
         [](const PartitionSample& p) { return p.traffic.bytes_in; });
  family("weir_partition_messages_in_total", Type::kCounter, "Records appended by producers.",
         [](const PartitionSample& p) { return p.traffic.messages_in; });
  family("weir_partition_bytes_out_total", Type::kCounter,
         "Record bytes read by fetches (a long-poll re-read counts again).",
         [](const PartitionSample& p) { return p.traffic.bytes_out; });
}

void render_groups(metrics::Exposition& x, std::vector<GroupSample>& groups,
                   const std::vector<PartitionSample>& parts) {
  std::ranges::sort(groups, {}, &GroupSample::group);
  std::map<std::pair<std::string, std::int32_t>, std::int64_t> end_offsets;
  for (const auto& p : parts) end_offsets[{p.topic, p.partition}] = p.log_end_offset;
  x.family("weir_group_state", Type::kGauge, "1 for the classic group's current state.");
  for (const auto& g : groups) {
    if (g.has_members_state) x.sample("weir_group_state", {{"group", g.group}, {"state", g.state}}, std::int64_t{1});
  }
  auto family = [&](std::string_view name, Type type, std::string_view help, auto value) {
    x.family(name, type, help);
    for (const auto& g : groups) {
      if (g.has_members_state) x.sample(name, {{"group", g.group}}, value(g));
    }
  };
  family("weir_group_members", Type::kGauge, "Members of the group.", [](const GroupSample& g) { return g.members; });
  family("weir_group_generation", Type::kGauge, "The group's generation id.",
         [](const GroupSample& g) { return g.generation; });
  family("weir_group_rebalances_total", Type::kCounter, "Rebalances completed since this broker loaded the group.",
         [](const GroupSample& g) { return g.rebalances; });
  family("weir_group_last_rebalance_seconds", Type::kGauge,
         "Duration of the last completed rebalance (PreparingRebalance to Stable); -1 if none.",
         [](const GroupSample& g) {
           return g.last_rebalance_ms < 0 ? -1.0 : static_cast<double>(g.last_rebalance_ms) / 1000.0;
         });
  x.family("weir_group_committed_offset", Type::kGauge, "Committed offset of the group for a partition.");
  for (const auto& g : groups) {
    for (const auto& [tp, offset] : g.offsets) {
      const std::string index = std::to_string(tp.second);
      x.sample("weir_group_committed_offset", {{"group", g.group}, {"topic", tp.first}, {"partition", index}}, offset);
    }
  }
  x.family("weir_group_lag", Type::kGauge, "Log end offset minus the committed offset (0 at least).");
  for (const auto& g : groups) {
    for (const auto& [tp, offset] : g.offsets) {
      auto it = end_offsets.find(tp);
      if (it == end_offsets.end()) continue;  // the topic is gone
      const std::string index = std::to_string(tp.second);
      x.sample("weir_group_lag", {{"group", g.group}, {"topic", tp.first}, {"partition", index}},
               std::max<std::int64_t>(0, it->second - offset));
    }
  }
}

}  // namespace

boost::asio::awaitable<std::string> render_metrics(Broker& broker, const net::Server& server) {
  const std::vector<ServedApi> apis = served_apis();
  FanOut<ShardSample> fan;
  for (std::size_t s = 0; s < broker.shards().count(); ++s) {
    fan.add(broker.shards().executor(s),
            [&broker, &server, s, &apis]() { return sample_shard(broker, server, s, apis); });
  }
  std::vector<ShardSample> shards = co_await fan.run();

  std::vector<PartitionSample> parts;
  std::vector<GroupSample> groups;
  for (auto& s : shards) {
    std::ranges::move(s.partitions, std::back_inserter(parts));
    std::ranges::move(s.groups, std::back_inserter(groups));
  }
  metrics::Exposition x;
  x.family("weir_shards", Type::kGauge, "Executor threads (shards).");
  x.sample("weir_shards", {}, static_cast<std::uint64_t>(broker.shards().count()));
  render_requests(x, apis, shards);
  render_connections(x, server, shards);
  render_partitions(x, parts);
  render_groups(x, groups, parts);
  // Group commit (acks=all with fdatasync): written by the flusher thread, read as a snapshot.
  x.family("weir_flush_queue_seconds", Type::kHistogram,
           "How long an acks=all sync request waited for its flush cycle to start (the wait beyond "
           "the fdatasync it needs: the rest of a cycle already running).");
  x.histogram("weir_flush_queue_seconds", {}, broker.flush_queue_us().snapshot(), 1e-6);
  x.family("weir_flush_cycle_seconds", Type::kHistogram,
           "Duration of the flush cycle that served each acks=all sync request (its fdatasyncs).");
  x.histogram("weir_flush_cycle_seconds", {}, broker.flush_cycle_us().snapshot(), 1e-6);
  // Fetch sessions (KIP-227): the broker-wide cache is thread-safe, read here directly.
  const FetchSessionCache& sessions = broker.fetch_sessions();
  x.family("weir_fetch_sessions", Type::kGauge, "Incremental fetch sessions cached.");
  x.sample("weir_fetch_sessions", {}, static_cast<std::uint64_t>(sessions.size()));
  x.family("weir_fetch_session_partitions", Type::kGauge, "Partitions remembered by all fetch sessions.");
  x.sample("weir_fetch_session_partitions", {}, sessions.cached_partitions());
  x.family("weir_fetch_session_evictions_total", Type::kCounter, "Fetch sessions evicted to make room.");
  x.sample("weir_fetch_session_evictions_total", {}, sessions.evictions());
  x.family("weir_incremental_fetches_total", Type::kCounter, "Fetches served on an incremental session.");
  x.sample("weir_incremental_fetches_total", {}, sessions.incremental_fetches());
  // Transaction coordinators (txn_host.h), summed over the partitions this node hosts.
  const TxnMetrics t = co_await broker.txns().metrics();
  x.family("weir_transactions_ongoing", Type::kGauge, "Transactions in state Ongoing.");
  x.sample("weir_transactions_ongoing", {}, t.ongoing);
  x.family("weir_transactions_committed_total", Type::kCounter, "Transactions completed as committed.");
  x.sample("weir_transactions_committed_total", {}, t.committed);
  x.family("weir_transactions_aborted_total", Type::kCounter, "Transactions completed as aborted.");
  x.sample("weir_transactions_aborted_total", {}, t.aborted);
  x.family("weir_transactions_timed_out_total", Type::kCounter,
           "Transactions aborted by the coordinator for exceeding their timeout.");
  x.sample("weir_transactions_timed_out_total", {}, t.timed_out);
  x.family("weir_transaction_oldest_ongoing_age_seconds", Type::kGauge,
           "Age of the oldest Ongoing transaction (0 when none).");
  x.sample("weir_transaction_oldest_ongoing_age_seconds", {}, static_cast<double>(t.oldest_ongoing_age_ms) / 1000.0);
  co_return x.take();
}

}  // namespace weir::broker
