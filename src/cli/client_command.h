// What every client subcommand of `weir` (topic, cluster, ...) shares: the connection flags, a
// Client on its own io_context for the length of one command, the command's deadline, output for
// people (aligned tables) or scripts (`--output json`), and the exit codes.
//
// Exit codes: 0 the operation succeeded; 1 it failed (the broker refused it, a topic does not
// exist, no broker answered within --timeout); 2 bad usage (CLI11 parse errors, handled in main).
// A failure prints "error: <what went wrong>" on stderr, or {"error": {...}} on stdout with
// `--output json`.
#pragma once

#include <CLI/CLI.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/json.h"
#include "client/client.h"
#include "client/errors.h"

namespace weir::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

struct ClientFlags {
  std::string bootstrap;    // empty: $WEIR_BOOTSTRAP, else localhost:9092
  std::string config_file;  // Kafka client properties (bootstrap.servers, client.id, request.timeout.ms)
  std::int64_t timeout_ms = 30'000;
  std::string output = "text";  // text | json
  // Client properties the command itself reads from the properties file (e.g. group.protocol):
  // kept for Session::property() instead of being warned about as unused.
  std::vector<std::string> command_keys;
};

// Adds --bootstrap, --command-config (Kafka's tools' name), --timeout and --output to a subcommand.
void add_client_flags(CLI::App& command, ClientFlags& flags);

using TopicPartition = std::pair<std::string, std::int32_t>;

class Session {
 public:
  Session(client::Client& client, const ClientFlags& flags, client::Deadline deadline)
      : client_(client), flags_(flags), deadline_(deadline) {}

  [[nodiscard]] client::Client& client() { return client_; }
  [[nodiscard]] bool json() const { return flags_.output == "json"; }
  // The whole command's deadline (now + --timeout when it started).
  [[nodiscard]] client::Deadline deadline() const { return deadline_; }
  // --timeout: for commands that go on past deadline() (produce, consume), per operation.
  [[nodiscard]] std::int64_t timeout_ms() const { return flags_.timeout_ms; }
  // A property of ClientFlags::command_keys from the properties file, if it is set there.
  [[nodiscard]] std::optional<std::string> property(const std::string& key) const {
    const auto it = properties_.find(key);
    return it == properties_.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  void set_properties(std::map<std::string, std::string> properties) { properties_ = std::move(properties); }

  // `request` to `target` within the command's deadline (pass named objects: see client.h on GCC 12).
  // kAllRetriable also retries Kafka's retriable codes (COORDINATOR_LOAD_IN_PROGRESS, ...).
  template <class Request>
  boost::asio::awaitable<Result<client::ResponseOf<Request>, client::Error>> send(
      client::Target target, Request request, client::RetryOn retry_on = client::RetryOn::kRoutingErrors) {
    client::CallOptions options;
    options.deadline = deadline_;
    options.retry_on = retry_on;
    co_return co_await client_.send(std::move(target), std::move(request), std::move(options));
  }

  // Each partition's offset for `timestamp` (client::kEarliestTimestamp, kLatestTimestamp or a
  // time in ms), one ListOffsets per leader as the client's metadata names it (read the topics'
  // metadata first). A partition without a leader, or whose leader does not answer, is left out.
  boost::asio::awaitable<std::map<TopicPartition, std::int64_t>> list_offsets(std::vector<TopicPartition> partitions,
                                                                              std::int64_t timestamp);

  // The topic's metadata once it exists with a leader for every partition, asking again (as
  // Kafka's producer waits up to max.block.ms) until the command's deadline: just after
  // CreateTopics a broker may not know the topic yet. An error message when it never does.
  boost::asio::awaitable<Result<const client::TopicInfo*, std::string>> wait_for_topic(const std::string& topic);

  // Prints the failure (stderr, or JSON on stdout) and returns kExitFailed.
  int fail(std::string_view message, const std::optional<client::Error>& cause = std::nullopt) const;
  // A per-item Kafka error code with the broker's message (may be empty).
  int fail_code(std::string_view what, std::int16_t code, const std::optional<std::string>& broker_message) const;

 private:
  client::Client& client_;
  const ClientFlags& flags_;
  client::Deadline deadline_;
  std::map<std::string, std::string> properties_;
};

// Resolves the flags (bootstrap list, client properties), runs `body` on a fresh io_context with a
// Client, and returns its exit code (kExitUsage for a bad bootstrap list or properties file).
int run_client(const ClientFlags& flags, std::function<boost::asio::awaitable<int>(Session&)> body);

// JSON output (base/json.h).
using Json = JsonWriter;

// Columns separated by two spaces, each as wide as its widest cell (the last one unpadded).
class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  void add(std::vector<std::string> row);
  [[nodiscard]] std::string render() const;
  [[nodiscard]] bool empty() const { return rows_.size() <= 1; }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// "1,2,3" (as Kafka's tools print replica lists).
[[nodiscard]] std::string join_ints(const std::vector<std::int32_t>& v);

// The candidate closest to `name` by edit distance (adjacent transpositions count once), if it is
// close enough to be what was meant; for "did you mean ...?" hints.
[[nodiscard]] std::optional<std::string> closest_name(std::string_view name,
                                                      const std::vector<std::string>& candidates);

// "@<ms since the epoch>" or "@-<N><s|m|h|d>" (that long before now) as a time in ms; nullopt
// for anything else.
[[nodiscard]] std::optional<std::int64_t> parse_time_spec(std::string_view text);

// Writes text to stdout as it is.
void print(std::string_view text);

}  // namespace weir::cli
