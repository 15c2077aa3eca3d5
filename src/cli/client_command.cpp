#include "cli/client_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <utility>

#include "client/bootstrap.h"
#include "config/properties.h"
#include "protocol/gen/list_offsets_request.h"

namespace weir::cli {

namespace asio = boost::asio;

void add_client_flags(CLI::App& command, ClientFlags& flags) {
  command.add_option("--bootstrap,-b", flags.bootstrap,
                     "Brokers to bootstrap from, host:port[,host:port...] (default: $WEIR_BOOTSTRAP or "
                     "localhost:9092)");
  command.add_option("--command-config", flags.config_file,
                     "Client properties file with Kafka client keys (bootstrap.servers, client.id, "
                     "request.timeout.ms)");
  command.add_option("--timeout", flags.timeout_ms, "Give up after this many milliseconds (default 30000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86'400'000}));
  command.add_option("--output,-o", flags.output, "text (for people) or json (for scripts)")
      ->check(CLI::IsMember({"text", "json"}));
}

std::optional<std::int64_t> parse_time_spec(std::string_view text) {
  const auto number = [](std::string_view v, std::int64_t& out) {
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    return ec == std::errc() && end == v.data() + v.size() && !v.empty();
  };
  std::int64_t n = 0;
  if (text.starts_with("@-") && text.size() > 3) {
    const char unit = text.back();
    const std::int64_t scale = unit == 's'   ? 1000
                               : unit == 'm' ? 60'000
                               : unit == 'h' ? 3'600'000
                               : unit == 'd' ? 86'400'000
                                             : 0;
    if (scale == 0 || !number(text.substr(2, text.size() - 3), n) || n < 0) return std::nullopt;
    const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    return now - n * scale;
  }
  if (!text.starts_with("@") || !number(text.substr(1), n) || n < 0) return std::nullopt;
  return n;
}

int Session::fail(std::string_view message, const std::optional<client::Error>& cause) const {
  std::string text(message);
  if (cause) text += ": " + cause->to_string();
  if (json()) {
    Json j;
    j.begin_object().key("error").begin_object().key("message").value(text);
    if (cause) {
      j.key("kind").value(client::to_string(cause->kind)).key("code").value(static_cast<std::int32_t>(cause->code));
      if (!cause->name().empty()) j.key("name").value(cause->name());
    }
    j.end_object().end_object();
    print(j.str() + "\n");
  } else {
    std::fprintf(stderr, "error: %s\n", text.c_str());
  }
  return kExitFailed;
}

int Session::fail_code(std::string_view what, std::int16_t code,
                       const std::optional<std::string>& broker_message) const {
  const client::Error e = client::Error::kafka(code, broker_message.value_or(""));
  std::string text(what);
  if (broker_message && !broker_message->empty()) text += ": " + *broker_message;
  text += fmt::format(" ({})", e.name().empty() ? fmt::format("error code {}", code) : std::string(e.name()));
  if (json()) {
    Json j;
    j.begin_object().key("error").begin_object().key("message").value(text).key("kind").value("kafka");
    j.key("code").value(static_cast<std::int32_t>(code)).key("name").value(e.name()).end_object().end_object();
    print(j.str() + "\n");
  } else {
    std::fprintf(stderr, "error: %s\n", text.c_str());
  }
  return kExitFailed;
}

asio::awaitable<Result<const client::TopicInfo*, std::string>> Session::wait_for_topic(const std::string& topic) {
  asio::steady_timer pause(co_await asio::this_coro::executor);
  std::string last;
  for (;;) {
    std::optional<std::vector<std::string>> wanted{std::in_place, {topic}};
    auto md = co_await client_.metadata(std::move(wanted), deadline_);
    if (!md)
      co_return unexpected(fmt::format("cannot read the metadata of topic '{}': {}", topic, md.error().to_string()));
    const client::TopicInfo* info = client_.cluster().topic(topic);
    if (info != nullptr && info->error_code == client::codes::kNone && !info->partitions.empty() &&
        std::ranges::all_of(info->partitions, [](const client::PartitionInfo& p) { return p.leader >= 0; })) {
      co_return info;
    }
    if (info != nullptr && info->error_code != client::codes::kNone &&
        info->error_code != client::codes::kUnknownTopicOrPartition && !client::is_retriable(info->error_code)) {
      const client::Error e = client::Error::kafka(info->error_code, "");
      co_return unexpected(fmt::format("topic '{}': {}", topic, e.name()));
    }
    last = info == nullptr || info->error_code == client::codes::kUnknownTopicOrPartition
               ? fmt::format("topic '{}' does not exist", topic)
               : fmt::format("topic '{}' has a partition without a leader", topic);
    if (std::chrono::steady_clock::now() + std::chrono::milliseconds(100) >= deadline_) co_return unexpected(last);
    pause.expires_after(std::chrono::milliseconds(100));
    co_await pause.async_wait(asio::use_awaitable);
  }
}

asio::awaitable<std::map<TopicPartition, std::int64_t>> Session::list_offsets(std::vector<TopicPartition> partitions,
                                                                              std::int64_t timestamp) {
  std::map<std::int32_t, protocol::ListOffsetsRequest> by_leader;
  for (const auto& [topic, partition] : partitions) {
    const auto leader = client_.cluster().leader(topic, partition);
    if (!leader) continue;
    protocol::ListOffsetsRequest& req = by_leader[*leader];
    req.replica_id = -1;
    auto t = std::ranges::find(req.topics, topic, &protocol::ListOffsetsRequest::ListOffsetsTopic::name);
    if (t == req.topics.end()) {
      req.topics.emplace_back().name = topic;
      t = std::prev(req.topics.end());
    }
    auto& p = t->partitions.emplace_back();
    p.partition_index = partition;
    p.timestamp = timestamp;
  }
  std::map<TopicPartition, std::int64_t> out;
  for (auto& [leader, req] : by_leader) {
    client::Target node = client::target::Node{leader};
    auto resp = co_await send(std::move(node), std::move(req), client::RetryOn::kAllRetriable);
    if (!resp) continue;
    for (const auto& t : resp->topics) {
      for (const auto& p : t.partitions) {
        if (p.error_code == client::codes::kNone) out[{t.name, p.partition_index}] = p.offset;
      }
    }
  }
  co_return out;
}

namespace {

bool parse_ms(std::string_view text, std::int64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out > 0;
}

}  // namespace

int run_client(const ClientFlags& flags, std::function<asio::awaitable<int>(Session&)> body) {
  std::string bootstrap = flags.bootstrap;
  client::ClientOptions options;
  options.request_timeout_ms = std::min<std::int64_t>(flags.timeout_ms, 30'000);
  options.default_api_timeout_ms = flags.timeout_ms;
  std::map<std::string, std::string> command_properties;
  if (!flags.config_file.empty()) {
    auto entries = config::load_properties_file(flags.config_file);
    if (!entries) {
      std::fprintf(stderr, "error: %s\n", entries.error().c_str());
      return kExitUsage;
    }
    for (const auto& [key, value] : *entries) {
      if (key == "bootstrap.servers") {
        if (bootstrap.empty()) bootstrap = value;
      } else if (key == "client.id") {
        options.connection.client_id = value;
      } else if (key == "request.timeout.ms") {
        std::int64_t ms = 0;
        if (!parse_ms(value, ms)) {
          std::fprintf(stderr, "error: Invalid value %s for configuration request.timeout.ms in %s\n", value.c_str(),
                       flags.config_file.c_str());
          return kExitUsage;
        }
        options.request_timeout_ms = std::min(ms, flags.timeout_ms);
      } else if (key == "security.protocol" && value != "PLAINTEXT") {
        std::fprintf(stderr, "error: security.protocol=%s: the weir CLI speaks PLAINTEXT only for now\n",
                     value.c_str());
        return kExitUsage;
      } else if (std::ranges::find(flags.command_keys, key) != flags.command_keys.end()) {
        command_properties[key] = value;
      } else {
        std::fprintf(stderr, "warning: client config '%s' in %s is not used by the weir CLI\n", key.c_str(),
                     flags.config_file.c_str());
      }
    }
  }
  if (bootstrap.empty()) {
    const char* env = std::getenv("WEIR_BOOTSTRAP");
    bootstrap = env != nullptr && *env != '\0' ? env : "localhost:9092";
  }
  auto servers = client::parse_bootstrap(bootstrap);
  if (!servers) {
    std::fprintf(stderr, "error: --bootstrap %s: %s\n", bootstrap.c_str(), servers.error().message.c_str());
    return kExitUsage;
  }
  options.bootstrap = std::move(*servers);

  asio::io_context io;
  client::Client c(io.get_executor(), options);
  Session session(c, flags, client::deadline_after_ms(flags.timeout_ms));
  session.set_properties(std::move(command_properties));
  int exit_code = kExitFailed;
  std::exception_ptr failure;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          exit_code = co_await body(session);
        } catch (...) {
          failure = std::current_exception();
        }
        c.stop();
      },
      asio::detached);
  io.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal error: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "error: internal error\n");
    }
    return kExitFailed;
  }
  return exit_code;
}

// --- Table ---

Table::Table(std::vector<std::string> headers) { rows_.push_back(std::move(headers)); }

void Table::add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

std::string Table::render() const {
  std::vector<std::size_t> widths;
  for (const auto& row : rows_) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string join_ints(const std::vector<std::int32_t>& v) {
  std::string out;
  for (const std::int32_t i : v) {
    if (!out.empty()) out += ',';
    out += std::to_string(i);
  }
  return out;
}

namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
// transpositions each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1, 0));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& c : candidates) {
    if (c == name) continue;
    const std::size_t d = edit_distance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

void print(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace weir::cli
