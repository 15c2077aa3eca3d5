// weir_cluster_probe: a broker's side of a KRaft cluster without the broker — registers with the
// controllers, follows __cluster_metadata as an observer, heartbeats until unfenced, reports what
// it applies, and leaves by controlled shutdown. JSON lines on stdout, for
// tests/scenario/test_cluster_quorum.py. Not a user tool.
//
//   weir_cluster_probe (--controllers HOST:PORT,... | --voters ID@HOST:PORT,...) --cluster-id ID
//       --node-id N --listener NAME://HOST:PORT [--feature NAME=MIN-MAX]... [--seconds S]
//       [--timeout-ms T]
//
// Lines: {"event":"registered",...}, {"event":"batch",...} per delivered batch,
// {"event":"caught_up",...}, {"event":"unfenced",...}, {"event":"error",...},
// {"event":"shutdown",...} last. It runs S seconds (default: until SIGTERM/SIGINT or stdin
// closes), then shuts down by controlled shutdown. Exit 0, 2 on a failure, 1 on bad usage.
#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "cluster/broker_lifecycle.h"
#include "cluster/controller_channel.h"
#include "cluster/metadata_follower.h"
#include "cluster/quorum_config.h"

namespace asio = boost::asio;
using namespace weir;
using namespace weir::cluster;

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void emit(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::string error_json(const client::Error& e) {
  return fmt::format(R"({{"kind":{},"code":{},"name":{},"message":{}}})", json_string(client::to_string(e.kind)),
                     e.code, json_string(e.name()), json_string(e.message));
}

struct Args {
  std::string controllers;
  std::string voters;
  std::string cluster_id;
  std::int32_t node_id = -1;
  ListenerInfo listener;
  std::vector<FeatureRange> features;
  std::int64_t seconds = -1;
  std::int64_t timeout_ms = 30'000;
};

template <class T>
bool parse_int(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

bool parse_listener(std::string_view s, ListenerInfo& out) {
  const auto sep = s.find("://");
  if (sep == std::string_view::npos) return false;
  out.name = std::string(s.substr(0, sep));
  auto ep = client::parse_endpoint(s.substr(sep + 3));
  if (!ep) return false;
  out.host = ep->host;
  out.port = ep->port;
  out.security_protocol = 0;
  return true;
}

bool parse_feature(std::string_view s, FeatureRange& out) {
  const auto eq = s.find('=');
  const auto dash = s.rfind('-');
  if (eq == std::string_view::npos || dash == std::string_view::npos || dash < eq) return false;
  out.name = std::string(s.substr(0, eq));
  return parse_int(s.substr(eq + 1, dash - eq - 1), out.min_version) && parse_int(s.substr(dash + 1), out.max_version);
}

std::optional<Args> parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return std::nullopt;
    const std::string_view value = argv[++i];
    if (flag == "--controllers") a.controllers = value;
    else if (flag == "--voters") a.voters = value;
    else if (flag == "--cluster-id") a.cluster_id = value;
    else if (flag == "--node-id") { if (!parse_int(value, a.node_id)) return std::nullopt; }
    else if (flag == "--listener") { if (!parse_listener(value, a.listener)) return std::nullopt; }
    else if (flag == "--feature") {
      FeatureRange f;
      if (!parse_feature(value, f)) return std::nullopt;
      a.features.push_back(f);
    } else if (flag == "--seconds") { if (!parse_int(value, a.seconds)) return std::nullopt; }
    else if (flag == "--timeout-ms") { if (!parse_int(value, a.timeout_ms)) return std::nullopt; }
    else return std::nullopt;
  }
  if (a.cluster_id.empty() || a.node_id < 0 || a.listener.port == 0) return std::nullopt;
  if (a.controllers.empty() && a.voters.empty()) return std::nullopt;
  return a;
}

std::string describe_record(const metadata::VersionedRecord& r) {
  std::string out = fmt::format(R"({{"type":{})", json_string(metadata::record_name(r.record)));
  if (const auto* t = std::get_if<metadata::TopicRecord>(&r.record)) {
    out += fmt::format(R"(,"topic":{},"topic_id":{})", json_string(t->name), json_string(t->topic_id.to_string()));
  } else if (const auto* p = std::get_if<metadata::PartitionRecord>(&r.record)) {
    out += fmt::format(R"(,"partition":{},"topic_id":{},"leader":{},"replicas":[{}])", p->partition_id,
                       json_string(p->topic_id.to_string()), p->leader, fmt::join(p->replicas, ","));
  } else if (const auto* b = std::get_if<metadata::RegisterBrokerRecord>(&r.record)) {
    out += fmt::format(R"(,"broker_id":{},"broker_epoch":{},"fenced":{})", b->broker_id, b->broker_epoch, b->fenced);
  } else if (const auto* f = std::get_if<metadata::FeatureLevelRecord>(&r.record)) {
    out += fmt::format(R"(,"name":{},"level":{})", json_string(f->name), f->feature_level);
  }
  return out + "}";
}

asio::awaitable<void> wait_ms(std::int64_t ms) {
  asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
  boost::system::error_code ec;
  co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

struct Probe {
  Args args;
  int exit_code = 0;
  bool stop_requested = false;
  std::shared_ptr<asio::steady_timer> stop_timer = nullptr;

  asio::awaitable<void> run(QuorumConfig quorum) {
    auto ex = co_await asio::this_coro::executor;
    std::map<std::string, std::int64_t> applied;  // records by type
    std::int64_t batches = 0;
    FollowerOptions fo;
    fo.cluster_id = args.cluster_id;
    fo.node_id = args.node_id;
    auto follower = std::make_shared<MetadataFollower>(
        ex, fo, quorum,
        [&](const MetadataBatch& b) {
          ++batches;
          std::vector<std::string> records;
          for (const auto& r : b.records) {
            ++applied[std::string(metadata::record_name(r.record))];
            records.push_back(describe_record(r));
          }
          emit(fmt::format(R"({{"event":"batch","base_offset":{},"last_offset":{},"epoch":{},"snapshot":{},"records":[{}]}})",
                           b.base_offset, b.last_offset, b.epoch, b.snapshot, fmt::join(records, ",")));
        },
        [&](const client::Error& e, bool fatal) {
          emit(fmt::format(R"({{"event":"error","fatal":{},"error":{}}})", fatal, error_json(e)));
          if (fatal) exit_code = 2;
        });
    ControllerChannel channel(ex, quorum.bootstrap_endpoints(), ChannelOptions{.request_timeout_ms = quorum.request_timeout_ms},
                              [&] { return follower->leader_address(); });
    LifecycleOptions lo;
    lo.node_id = args.node_id;
    lo.cluster_id = args.cluster_id;
    lo.incarnation_id = Uuid::random();
    lo.listeners = {args.listener};
    if (!args.features.empty()) lo.features = args.features;
    lo.log_dirs = {Uuid::random()};
    auto lifecycle = std::make_shared<BrokerLifecycle>(ex, lo, channel, [&] { return follower->last_delivered_offset(); },
                                                       quorum.request_timeout_ms);
    follower->start();
    lifecycle->start();
    const client::Deadline deadline = client::deadline_after_ms(args.timeout_ms);

    // Registration: wait for the epoch.
    while (lifecycle->broker_epoch() < 0 && std::chrono::steady_clock::now() < deadline && !stop_requested) {
      co_await wait_ms(10);
    }
    if (lifecycle->broker_epoch() < 0) {
      emit(fmt::format(R"({{"event":"error","fatal":true,"error":{}}})",
                       lifecycle->last_error() ? error_json(*lifecycle->last_error())
                                               : std::string(R"({"kind":"timeout","message":"not registered"})")));
      exit_code = 2;
    } else {
      emit(fmt::format(R"({{"event":"registered","broker_epoch":{},"incarnation_id":{}}})", lifecycle->broker_epoch(),
                       json_string(lo.incarnation_id.to_string())));
      if (co_await follower->caught_up(deadline)) {
        emit(fmt::format(R"({{"event":"caught_up","offset":{},"high_watermark":{}}})", follower->last_delivered_offset(),
                         follower->high_watermark()));
        lifecycle->set_caught_up();
        if (co_await lifecycle->unfenced(deadline)) {
          emit(fmt::format(R"({{"event":"unfenced","broker_epoch":{},"leader":{},"leader_epoch":{}}})",
                           lifecycle->broker_epoch(), follower->leader().id, follower->leader().epoch));
        } else {
          emit(R"({"event":"error","fatal":true,"error":{"kind":"timeout","message":"not unfenced"}})");
          exit_code = 2;
        }
      } else {
        emit(R"({"event":"error","fatal":true,"error":{"kind":"timeout","message":"metadata not caught up"}})");
        exit_code = 2;
      }
      if (exit_code == 0) {
        stop_timer = std::make_shared<asio::steady_timer>(ex);
        stop_timer->expires_after(args.seconds >= 0 ? std::chrono::milliseconds(args.seconds * 1000)
                                                    : std::chrono::hours(24));
        boost::system::error_code ec;
        if (!stop_requested) co_await stop_timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      const bool controlled = co_await lifecycle->controlled_shutdown(client::deadline_after_ms(args.timeout_ms));
      std::string counts;
      for (const auto& [k, v] : applied) counts += fmt::format("{}{}:{}", counts.empty() ? "" : ",", json_string(k), v);
      emit(fmt::format(
          R"({{"event":"shutdown","controlled":{},"state":{},"broker_epoch":{},"last_offset":{},"high_watermark":{},"batches":{},"applied":{{{}}},"leader":{}}})",
          controlled, json_string(to_string(lifecycle->state())), lifecycle->broker_epoch(),
          follower->last_delivered_offset(), follower->high_watermark(), batches, counts, follower->leader().id));
      if (!controlled) exit_code = 2;
    }
    lifecycle->stop();
    follower->stop();
    channel.stop();
    co_await wait_ms(1);
    auto& io = static_cast<asio::io_context&>(ex.context());
    io.stop();
  }

  void request_stop() {
    stop_requested = true;
    if (stop_timer) stop_timer->cancel();
  }
};

}  // namespace

int main(int argc, char** argv) {
  auto args = parse_args(argc, argv);
  if (!args) {
    std::fputs("usage: weir_cluster_probe (--controllers HOST:PORT,... | --voters ID@HOST:PORT,...) --cluster-id ID "
               "--node-id N --listener NAME://HOST:PORT [--feature NAME=MIN-MAX]... [--seconds S] [--timeout-ms T]\n",
               stderr);
    return 1;
  }
  auto quorum = parse_quorum_config(args->voters, args->controllers);
  if (!quorum) {
    emit(fmt::format(R"({{"event":"error","fatal":true,"error":{}}})", error_json(quorum.error())));
    return 1;
  }
  asio::io_context io;
  Probe probe{*args};
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) probe.request_stop();
  });
  // stdin closing (the test's pipe) also asks to stop.
  asio::posix::stream_descriptor in(io, ::dup(STDIN_FILENO));
  std::array<char, 256> buf{};
  std::function<void()> read_more = [&] {
    in.async_read_some(asio::buffer(buf), [&](const boost::system::error_code& ec, std::size_t) {
      if (ec) {
        probe.request_stop();
        return;
      }
      read_more();
    });
  };
  if (args->seconds < 0) read_more();
  asio::co_spawn(io, probe.run(*quorum), asio::detached);
  io.run();
  return probe.exit_code;
}
