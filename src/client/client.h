// An asynchronous Kafka client over the generated codec, for the weir CLI, replication's
// follower fetchers and controller RPCs, and the console.
//
//   boost::asio::io_context io;
//   client::Client c(io.get_executor(), {.bootstrap = *client::parse_bootstrap("localhost:9092")});
//   co_spawn(io, [&]() -> awaitable<void> {
//     std::optional<std::vector<std::string>> topics{{"orders"}};
//     auto md = co_await c.metadata(topics, client::deadline_after_ms(5000));
//     client::Target leader = client::target::Leader{"orders", 0};
//     auto sent = co_await c.send(leader, std::move(list_offsets_request));
//     c.stop();
//   }, detached);
//   io.run();
//
// What it does: bootstraps from a host:port list; keeps one connection per node (connection.h:
// ApiVersions negotiation, pipelining); routes a request to any node, a given node, the leader of
// a partition (from cached metadata, refreshed when older than metadata_max_age_ms, when routing
// finds no leader, and after NOT_LEADER_OR_FOLLOWER-style errors), the controller, or a group /
// transaction coordinator (FindCoordinator, batched v4+ form when the broker has it); retries
// with exponential backoff on transport failures and on Kafka's retriable error codes; stops at
// the call's deadline with a timeout error naming the last failure.
//
// Retrying resends the whole request: for a Produce without idempotence that may duplicate
// records, as with Kafka's producer when retries are on.
//
// GCC 12: pass named objects (std::move them) to these coroutines, never temporaries of types with
// destructors (a Target, a vector): GCC 12 destroys such temporaries twice.
//
// Threading: not thread-safe. Every call must be made from coroutines on the executor passed to
// the constructor, and the Client must outlive them. stop() closes all connections; calls in
// progress then fail.
#pragma once

#include <fmt/format.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "base/result.h"
#include "client/backoff.h"
#include "client/bootstrap.h"
#include "client/connection.h"
#include "client/errors.h"
#include "client/messages.h"
#include "client/metadata.h"

namespace weir::client {

enum class CoordinatorType : std::int8_t { kGroup = 0, kTransaction = 1 };

namespace target {
struct AnyNode {};  // the least loaded connected node, else a known one, else a bootstrap server
struct Node {
  std::int32_t id;
};
struct Leader {
  std::string topic;
  std::int32_t partition;
};
struct Controller {};  // Metadata's controller id (any broker forwards in KRaft), else any node
struct Coordinator {
  CoordinatorType type;
  std::string key;  // group id or transactional id
};
}  // namespace target

using Target = std::variant<target::AnyNode, target::Node, target::Leader, target::Controller, target::Coordinator>;

// Which error codes found in a response (for_each_error_code) make the client try again.
enum class RetryOn : std::uint8_t {
  kTransportOnly,  // only failures to get a response
  kRoutingErrors,  // also stale-leader codes for Leader targets, coordinator moves for Coordinator
                   // targets, NOT_CONTROLLER for Controller targets
  kAllRetriable,   // also every code Kafka marks retriable (errors.h)
};

struct CallOptions {
  std::optional<Deadline> deadline;  // default: now + default_api_timeout_ms
  std::optional<std::int16_t> max_version;
  RetryOn retry_on = RetryOn::kRoutingErrors;
  bool expect_response = true;  // false for Produce with acks=0
  // One attempt's time limit (default: ClientOptions::request_timeout_ms); longer for requests
  // the broker holds, such as JoinGroup (Kafka's clients allow it the rebalance timeout + 5 s).
  std::optional<std::int64_t> request_timeout_ms;
};

// Reported before each retry (for logs, tests, the console).
struct RetryEvent {
  std::string_view api;
  int attempt = 0;  // 1 for the first retry
  Error error;
};

struct ClientOptions {
  std::vector<Endpoint> bootstrap;
  ConnectionOptions connection;
  std::int64_t request_timeout_ms = 30'000;      // request.timeout.ms: one attempt
  std::int64_t default_api_timeout_ms = 60'000;  // default.api.timeout.ms: a call without a deadline
  BackoffPolicy retry_backoff;                   // retry.backoff.ms / retry.backoff.max.ms
  std::int64_t metadata_max_age_ms = 300'000;    // metadata.max.age.ms
  bool allow_auto_topic_creation = false;        // in Metadata requests the client sends to route
  std::function<void(const RetryEvent&)> on_retry;
};

struct CoordinatorInfo {
  std::int32_t node_id = -1;
  Endpoint endpoint;
};

struct NewTopic {
  std::string name;
  std::int32_t num_partitions = -1;      // -1: the broker's num.partitions
  std::int16_t replication_factor = -1;  // -1: the broker's default.replication.factor
  std::vector<std::pair<std::string, std::string>> configs;
};

struct ProduceOptions {
  std::int16_t acks = -1;
  std::int32_t timeout_ms = 30'000;
  std::optional<std::string> transactional_id;
};

struct ProduceResult {
  std::int64_t base_offset = -1;  // -1 for acks=0
  std::int64_t log_append_time_ms = -1;
  std::int64_t log_start_offset = -1;
  std::int32_t leader = -1;
};

struct FetchArgs {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::int32_t partition_max_bytes = 1 << 20;
  std::int32_t max_bytes = 50 << 20;
  std::int32_t max_wait_ms = 500;
  std::int32_t min_bytes = 1;
  std::int8_t isolation_level = 0;  // 0 read_uncommitted, 1 read_committed
};

struct FetchResult {
  std::int64_t high_watermark = -1;
  std::int64_t last_stable_offset = -1;
  std::int64_t log_start_offset = -1;
  protocol::Bytes records;  // concatenated record batches, possibly ending in a partial one
  std::int32_t leader = -1;
};

struct ListOffsetsResult {
  std::int64_t offset = -1;
  std::int64_t timestamp = -1;
  std::int32_t leader_epoch = -1;
};

// ListOffsets timestamps with special meanings.
inline constexpr std::int64_t kLatestTimestamp = -1;
inline constexpr std::int64_t kEarliestTimestamp = -2;

class Client {
 public:
  Client(boost::asio::any_io_executor executor, ClientOptions options);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  void start() {}
  // Closes every connection; calls in progress fail, later calls fail at once.
  void stop();

  // Sends request to target and returns the typed response; retries as options say.
  template <class Request>
  boost::asio::awaitable<Result<ResponseOf<Request>, Error>> send(Target target, Request request,
                                                                  CallOptions options = {});

  // Metadata for these topics (nullopt: all topics); the cache takes the answer in.
  boost::asio::awaitable<Result<protocol::MetadataResponse, Error>> metadata(
      std::optional<std::vector<std::string>> topics, Deadline deadline, bool allow_auto_topic_creation = false);
  // Creates topics through the controller; one result per topic (errors such as
  // TOPIC_ALREADY_EXISTS are in the results, not an Error).
  boost::asio::awaitable<Result<std::vector<protocol::CreateTopicsResponse::CreatableTopicResult>, Error>>
  create_topics(std::vector<NewTopic> topics, Deadline deadline, std::int32_t timeout_ms = 30'000);
  // Appends one record batch v2 (record/record_batch_builder.h) to a partition's leader.
  boost::asio::awaitable<Result<ProduceResult, Error>> produce(std::string topic, std::int32_t partition,
                                                               std::vector<std::byte> batch, ProduceOptions options,
                                                               Deadline deadline);
  // One Fetch (no fetch session) of one partition from its leader.
  boost::asio::awaitable<Result<FetchResult, Error>> fetch(FetchArgs args, Deadline deadline);
  // The offset for a timestamp (kLatestTimestamp, kEarliestTimestamp or a time in ms).
  boost::asio::awaitable<Result<ListOffsetsResult, Error>> list_offsets(std::string topic, std::int32_t partition,
                                                                        std::int64_t timestamp, Deadline deadline);
  // The coordinator of a group or transactional id, looked up now (and cached for routing).
  boost::asio::awaitable<Result<CoordinatorInfo, Error>> find_coordinator(CoordinatorType type, std::string key,
                                                                          Deadline deadline);

  // Waits until metadata names a leader for the partition (refreshing, with backoff).
  boost::asio::awaitable<Result<std::int32_t, Error>> wait_for_leader(std::string topic, std::int32_t partition,
                                                                      Deadline deadline);

  [[nodiscard]] const MetadataCache& cluster() const noexcept { return metadata_; }
  [[nodiscard]] const ClientOptions& options() const noexcept { return options_; }
  [[nodiscard]] std::size_t connections_opened() const noexcept { return connections_opened_; }
  // The connection a request to `node` uses (for tools showing negotiated versions).
  boost::asio::awaitable<Result<std::shared_ptr<Connection>, Error>> connection(std::int32_t node, Deadline deadline);

 private:
  // Where target goes now: a node id (bootstrap servers are -1, -2, ...).
  boost::asio::awaitable<Result<std::int32_t, Error>> resolve(const Target& target, Deadline deadline);
  boost::asio::awaitable<Status<Error>> refresh_metadata(Deadline deadline);
  boost::asio::awaitable<Result<CoordinatorInfo, Error>> lookup_coordinator(CoordinatorType type,
                                                                            const std::string& key, Deadline deadline);
  [[nodiscard]] std::optional<Endpoint> endpoint_of(std::int32_t node) const;
  [[nodiscard]] std::int32_t pick_any_node();
  // Sleeps the backoff for retry number `attempt` (0-based); false if the deadline comes first.
  boost::asio::awaitable<bool> backoff(int attempt, Deadline deadline);
  // The first error code in response that warrants a retry for this target, or 0.
  template <class Response>
  [[nodiscard]] std::int16_t retry_code(const Response& response, const Target& target, RetryOn retry_on) const;
  [[nodiscard]] bool is_retry_code(std::int16_t code, const Target& target, RetryOn retry_on) const noexcept;
  // Forgets what routed target to a node that failed or moved.
  void note_failure(const Target& target, std::int16_t code);
  void report_retry(std::string_view api, int attempt, const Error& error);
  // Records error as the last one, unless it only says the deadline cut an attempt short and an
  // earlier attempt failed for a reason worth reporting.
  static void keep_most_telling(std::optional<Error>& last, Error error);
  [[nodiscard]] Error deadline_error(std::string_view api, int attempts, const std::optional<Error>& last) const;

  boost::asio::any_io_executor executor_;
  ClientOptions options_;
  ExponentialBackoff backoff_;
  std::mt19937_64 random_;
  MetadataCache metadata_;
  std::map<std::int32_t, std::shared_ptr<Connection>> connections_;
  std::map<std::pair<CoordinatorType, std::string>, CoordinatorInfo> coordinators_;
  std::size_t next_bootstrap_ = 0;
  std::size_t next_node_ = 0;
  std::size_t connections_opened_ = 0;
  bool stopped_ = false;
};

template <class Response>
std::int16_t Client::retry_code(const Response& response, const Target& target, RetryOn retry_on) const {
  std::int16_t found = 0;
  response.for_each_error_code([&](std::int16_t code, int) {
    if (found == 0 && is_retry_code(code, target, retry_on)) found = code;
  });
  return found;
}

template <class Request>
boost::asio::awaitable<Result<ResponseOf<Request>, Error>> Client::send(Target target, Request request,
                                                                        CallOptions options) {
  const Deadline deadline = options.deadline.value_or(deadline_after_ms(options_.default_api_timeout_ms));
  constexpr std::string_view api = Request::kName;
  std::optional<Error> last;
  int attempts_made = 0;
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) {
      report_retry(api, attempt, *last);
      if (!co_await backoff(attempt - 1, deadline)) break;
    }
    if (stopped_) co_return unexpected(Error::transport("the client is stopped"));
    ++attempts_made;
    auto node = co_await resolve(target, deadline);
    if (!node) {
      if (!node.error().retriable() && node.error().kind != ErrorKind::kTimeout) co_return unexpected(node.error());
      last = std::move(node.error());
      if (std::chrono::steady_clock::now() >= deadline) break;
      continue;
    }
    auto conn = co_await connection(*node, deadline);
    if (!conn) {
      keep_most_telling(last, std::move(conn.error()));
      note_failure(target, 0);
      if (std::chrono::steady_clock::now() >= deadline) break;
      continue;
    }
    const auto version = (*conn)->versions().pick(Request::kApiKey, options.max_version);
    if (!version) {
      co_return unexpected(Error::unsupported(
          fmt::format("{} offers no version of {} that this client can use", (*conn)->describe(), api)));
    }
    const Deadline attempt_deadline =
        std::min(deadline, deadline_after_ms(options.request_timeout_ms.value_or(options_.request_timeout_ms)));
    auto response = co_await (*conn)->send(request, *version, attempt_deadline, options.expect_response);
    if (!response) {
      if (response.error().kind == ErrorKind::kProtocol) co_return unexpected(std::move(response.error()));
      keep_most_telling(last, std::move(response.error()));
      note_failure(target, 0);
      if (std::chrono::steady_clock::now() >= deadline) break;
      continue;
    }
    if (const std::int16_t code = retry_code(*response, target, options.retry_on); code != 0) {
      last = Error::kafka(code, fmt::format("{} answered {} with a retriable error", (*conn)->describe(), api));
      note_failure(target, code);
      continue;
    }
    co_return std::move(*response);
  }
  co_return unexpected(deadline_error(api, attempts_made, last));
}

}  // namespace weir::client
