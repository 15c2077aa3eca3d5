// weir_client_probe: runs one src/client call against a broker and prints the outcome as one
// line of JSON, for the scenario tests (tests/scenario/test_client.py). Not a user tool: the
// weir CLI will offer these operations.
//
//   weir_client_probe --bootstrap HOST:PORT[,...] [--timeout-ms N] COMMAND ARGS...
//     metadata [TOPIC...]                 brokers, topics, leaders, negotiated versions
//     create-topic TOPIC PARTITIONS
//     produce TOPIC PARTITION VALUE...    one batch holding the values
//     fetch TOPIC PARTITION OFFSET        the records from OFFSET (one Fetch)
//     list-offsets TOPIC PARTITION earliest|latest
//     find-coordinator group|transaction KEY
//     produce-to-late-topic TOPIC VALUE   produce to a missing topic; create it (CreateTopics)
//                                         once the client has retried on its absence
//     pipeline N                          N Metadata requests at once
//
// Exit status 0 with {"ok":true,...}; 2 with {"ok":false,"error":{kind,code,name,message}};
// 1 for bad usage.
#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "client/client.h"
#include "protocol/error_names.h"
#include "protocol/gen/api_registry.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch_builder.h"

namespace asio = boost::asio;
using namespace weir;
using client::Error;

namespace {

std::string quote(std::string_view s) { return JsonWriter::quote(s); }

std::string error_json(const Error& e) {
  return fmt::format(R"({{"ok":false,"error":{{"kind":{},"code":{},"name":{},"message":{}}}}})",
                     quote(client::to_string(e.kind)), e.code, quote(e.name()), quote(e.message));
}

template <class T>
bool parse_int(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

struct Run {
  client::Client& c;
  std::vector<std::string> args;
  std::int64_t timeout_ms;
  std::string out;
  int status = 0;

  client::Deadline deadline() const { return client::deadline_after_ms(timeout_ms); }
  void fail(const Error& e) {
    out = error_json(e);
    status = 2;
  }
  void usage(std::string_view why) {
    out = fmt::format(R"({{"ok":false,"usage":{}}})", quote(why));
    status = 1;
  }
};

// Per API the broker and the codec share: the version the connection uses, and the codec's range.
std::string versions_json(const client::Connection& conn) {
  std::string out = "[";
  for (const auto& d : protocol::kApiDescriptors) {
    const auto v = conn.versions().pick(d.key);
    if (!v) continue;
    out += fmt::format("{}{{\"key\":{},\"used\":{},\"codec_max\":{},\"unstable\":{}}}", out.size() > 1 ? "," : "",
                       d.key, *v, d.max_version, d.latest_version_unstable);
  }
  return out + "]";
}

asio::awaitable<void> metadata(Run& run) {
  std::optional<std::vector<std::string>> topics;
  if (!run.args.empty()) topics = run.args;
  auto md = co_await run.c.metadata(topics, run.deadline());
  if (!md) co_return run.fail(md.error());
  std::string brokers;
  for (const auto& b : md->brokers) {
    brokers += fmt::format("{}{{\"node_id\":{},\"host\":{},\"port\":{}}}", brokers.empty() ? "" : ",", b.node_id,
                           quote(b.host), b.port);
  }
  std::string topics_json;
  for (const auto& t : md->topics) {
    std::string parts;
    for (const auto& p : t.partitions) {
      parts += fmt::format("{}{{\"partition\":{},\"leader\":{},\"error_code\":{}}}", parts.empty() ? "" : ",",
                           p.partition_index, p.leader_id, p.error_code);
    }
    topics_json += fmt::format("{}{{\"name\":{},\"error_code\":{},\"partitions\":[{}]}}",
                               topics_json.empty() ? "" : ",", quote(t.name.value_or("")), t.error_code, parts);
  }
  std::string versions = "[]";
  if (!md->brokers.empty()) {
    auto conn = co_await run.c.connection(md->brokers.front().node_id, run.deadline());
    if (!conn) co_return run.fail(conn.error());
    versions = versions_json(**conn);
  }
  run.out =
      fmt::format(R"({{"ok":true,"cluster_id":{},"controller_id":{},"brokers":[{}],"topics":[{}],"versions":{}}})",
                  quote(md->cluster_id.value_or("")), md->controller_id, brokers, topics_json, versions);
}

asio::awaitable<void> create_topic(Run& run) {
  std::int32_t partitions = 0;
  if (run.args.size() != 2 || !parse_int(run.args[1], partitions)) co_return run.usage("create-topic TOPIC PARTITIONS");
  std::vector<client::NewTopic> topics(1);
  topics[0].name = run.args[0];
  topics[0].num_partitions = partitions;
  auto r = co_await run.c.create_topics(std::move(topics), run.deadline());
  if (!r) co_return run.fail(r.error());
  if (r->empty()) co_return run.fail(Error::protocol("no result for the topic"));
  const auto& t = r->front();
  run.out = fmt::format(R"({{"ok":true,"name":{},"error_code":{},"error_name":{},"num_partitions":{}}})", quote(t.name),
                        t.error_code, quote(protocol::error_name(t.error_code)), t.num_partitions);
}

std::vector<std::byte> make_batch(const std::vector<std::string>& values) {
  record::RecordBatchBuilder builder;
  const auto now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  for (const auto& v : values) builder.append(now_ms, std::nullopt, as_bytes(v));
  return builder.build();
}

asio::awaitable<void> produce(Run& run) {
  std::int32_t partition = 0;
  if (run.args.size() < 3 || !parse_int(run.args[1], partition))
    co_return run.usage("produce TOPIC PARTITION VALUE...");
  std::vector<std::string> values(run.args.begin() + 2, run.args.end());
  // Named arguments: GCC 12 destroys temporaries passed to a coroutine twice.
  std::vector<std::byte> batch = make_batch(values);
  client::ProduceOptions options;
  auto r = co_await run.c.produce(run.args[0], partition, std::move(batch), std::move(options), run.deadline());
  if (!r) co_return run.fail(r.error());
  run.out = fmt::format(R"({{"ok":true,"base_offset":{},"leader":{}}})", r->base_offset, r->leader);
}

asio::awaitable<void> fetch(Run& run) {
  client::FetchArgs args;
  if (run.args.size() != 3 || !parse_int(run.args[1], args.partition) || !parse_int(run.args[2], args.offset)) {
    co_return run.usage("fetch TOPIC PARTITION OFFSET");
  }
  args.topic = run.args[0];
  auto r = co_await run.c.fetch(args, run.deadline());
  if (!r) co_return run.fail(r.error());
  std::string records;
  record::BatchSplitter splitter(std::as_bytes(std::span(r->records)));
  while (true) {
    auto batch = splitter.next();
    if (!batch || !*batch) break;
    const auto base = (*batch)->base_offset();
    auto walked = record::for_each_record(**batch, [&](const record::RecordView& rec) {
      std::string value;
      if (rec.value) value.assign(reinterpret_cast<const char*>(rec.value->data()), rec.value->size());
      records += fmt::format("{}{{\"offset\":{},\"value\":{}}}", records.empty() ? "" : ",", base + rec.offset_delta,
                             quote(value));
    });
    if (!walked) co_return run.fail(Error::protocol("a fetched batch does not parse"));
  }
  run.out = fmt::format(R"({{"ok":true,"high_watermark":{},"records":[{}]}})", r->high_watermark, records);
}

asio::awaitable<void> list_offsets(Run& run) {
  std::int32_t partition = 0;
  if (run.args.size() != 3 || !parse_int(run.args[1], partition) ||
      (run.args[2] != "earliest" && run.args[2] != "latest")) {
    co_return run.usage("list-offsets TOPIC PARTITION earliest|latest");
  }
  const auto ts = run.args[2] == "earliest" ? client::kEarliestTimestamp : client::kLatestTimestamp;
  auto r = co_await run.c.list_offsets(run.args[0], partition, ts, run.deadline());
  if (!r) co_return run.fail(r.error());
  run.out = fmt::format(R"({{"ok":true,"offset":{}}})", r->offset);
}

asio::awaitable<void> find_coordinator(Run& run) {
  if (run.args.size() != 2 || (run.args[0] != "group" && run.args[0] != "transaction")) {
    co_return run.usage("find-coordinator group|transaction KEY");
  }
  const auto type = run.args[0] == "group" ? client::CoordinatorType::kGroup : client::CoordinatorType::kTransaction;
  auto r = co_await run.c.find_coordinator(type, run.args[1], run.deadline());
  if (!r) co_return run.fail(r.error());
  run.out = fmt::format(R"({{"ok":true,"node_id":{},"host":{},"port":{}}})", r->node_id, quote(r->endpoint.host),
                        r->endpoint.port);
}

// Produces to a topic that does not exist yet; a second coroutine creates it through CreateTopics
// once the producing one has been told UNKNOWN_TOPIC_OR_PARTITION and is retrying.
struct LateTopic {
  asio::steady_timer retried;  // cancelled on the first UNKNOWN_TOPIC_OR_PARTITION retry, and at the end
  std::vector<std::string> retry_errors;
  bool seen_unknown_topic = false;
  bool finished = false;
};

asio::awaitable<void> create_when_retried(Run& run, LateTopic& late, std::string topic) {
  boost::system::error_code ec;
  while (!late.seen_unknown_topic && !late.finished) {
    co_await late.retried.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (late.finished) co_return;
  std::vector<client::NewTopic> topics(1);
  topics[0].name = topic;
  topics[0].num_partitions = 1;
  auto r = co_await run.c.create_topics(std::move(topics), run.deadline());
  if (!r || r->empty() || r->front().error_code != 0) {
    run.out = r ? error_json(Error::kafka(r->empty() ? 0 : r->front().error_code, "CreateTopics failed"))
                : error_json(r.error());
    run.status = 2;
  }
}

asio::awaitable<void> produce_to_late_topic(Run& run, LateTopic& late) {
  if (run.args.size() != 2) co_return run.usage("produce-to-late-topic TOPIC VALUE");
  const std::string topic = run.args[0];
  auto ex = co_await asio::this_coro::executor;
  asio::co_spawn(ex, create_when_retried(run, late, topic), asio::detached);
  std::vector<std::string> values(1, run.args[1]);
  std::vector<std::byte> batch = make_batch(values);
  client::ProduceOptions options;
  auto r = co_await run.c.produce(topic, 0, std::move(batch), std::move(options), run.deadline());
  if (run.status != 0) co_return;
  if (!r) co_return run.fail(r.error());
  std::string errors;
  for (const auto& e : late.retry_errors) errors += fmt::format("{}{}", errors.empty() ? "" : ",", quote(e));
  run.out = fmt::format(R"({{"ok":true,"base_offset":{},"retried_on":[{}]}})", r->base_offset, errors);
}

asio::awaitable<void> pipeline(Run& run) {
  int n = 0;
  if (run.args.size() != 1 || !parse_int(run.args[0], n) || n <= 0 || n > 1000) co_return run.usage("pipeline N");
  std::optional<std::vector<std::string>> no_topics(std::in_place);
  auto warm = co_await run.c.metadata(no_topics, run.deadline());
  if (!warm) co_return run.fail(warm.error());
  auto ex = co_await asio::this_coro::executor;
  int answered = 0;
  std::optional<Error> failure;
  asio::steady_timer all_done(ex);
  all_done.expires_at(asio::steady_timer::time_point::max());
  const auto opened_before = run.c.connections_opened();
  for (int i = 0; i < n; ++i) {
    asio::co_spawn(
        ex,
        [&run, &answered, &failure, &all_done, n]() -> asio::awaitable<void> {
          std::optional<std::vector<std::string>> none(std::in_place);
          auto r = co_await run.c.metadata(none, run.deadline());
          if (!r && !failure) failure = r.error();
          if (++answered == n) all_done.cancel();
        },
        asio::detached);
  }
  // Every request has been queued on the connection once the coroutines started above ran up
  // to their first wait: they were posted before this continuation.
  co_await asio::post(ex, asio::use_awaitable);
  std::size_t in_flight = 0;
  auto conn = co_await run.c.connection(-1, run.deadline());
  if (conn) in_flight = (*conn)->in_flight();
  boost::system::error_code ec;
  while (answered < n) co_await all_done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (failure) co_return run.fail(*failure);
  run.out = fmt::format(R"({{"ok":true,"answered":{},"in_flight_at_once":{},"connections_opened":{}}})", answered,
                        in_flight, run.c.connections_opened() - opened_before);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string bootstrap;
  std::int64_t timeout_ms = 30'000;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    if (args[i] == "--bootstrap" && i + 1 < args.size()) {
      bootstrap = args[++i];
    } else if (args[i] == "--timeout-ms" && i + 1 < args.size()) {
      if (!parse_int(args[++i], timeout_ms) || timeout_ms <= 0) {
        std::puts(R"({"ok":false,"usage":"--timeout-ms needs a positive number"})");
        return 1;
      }
    } else {
      break;
    }
  }
  if (i >= args.size()) {
    std::puts(R"({"ok":false,"usage":"weir_client_probe --bootstrap HOST:PORT [--timeout-ms N] COMMAND ARGS..."})");
    return 1;
  }
  auto servers = client::parse_bootstrap(bootstrap);
  if (!servers) {
    std::puts(error_json(servers.error()).c_str());
    return 2;
  }
  const std::string command = args[i];
  asio::io_context io;
  LateTopic late{asio::steady_timer(io), {}};
  late.retried.expires_at(asio::steady_timer::time_point::max());
  client::ClientOptions options;
  options.bootstrap = *servers;
  options.request_timeout_ms = std::min<std::int64_t>(timeout_ms, 30'000);
  options.on_retry = [&late](const client::RetryEvent& e) {
    late.retry_errors.push_back(e.error.name().empty() ? std::string(client::to_string(e.error.kind))
                                                       : std::string(e.error.name()));
    if (e.error.code == 3) {  // UNKNOWN_TOPIC_OR_PARTITION
      late.seen_unknown_topic = true;
      late.retried.cancel();
    }
  };
  client::Client c(io.get_executor(), options);
  Run run{
      c, std::vector<std::string>(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end()), timeout_ms, {}, 0};
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        if (command == "metadata") {
          co_await metadata(run);
        } else if (command == "create-topic") {
          co_await create_topic(run);
        } else if (command == "produce") {
          co_await produce(run);
        } else if (command == "fetch") {
          co_await fetch(run);
        } else if (command == "list-offsets") {
          co_await list_offsets(run);
        } else if (command == "find-coordinator") {
          co_await find_coordinator(run);
        } else if (command == "produce-to-late-topic") {
          co_await produce_to_late_topic(run, late);
        } else if (command == "pipeline") {
          co_await pipeline(run);
        } else {
          run.usage("unknown command " + command);
        }
        late.finished = true;
        late.retried.cancel();
        c.stop();
      },
      asio::detached);
  io.run();
  std::puts(run.out.c_str());
  return run.status;
}
