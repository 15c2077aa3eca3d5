#include "client/client.h"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/assert.h"
#include "base/log.h"

namespace weir::client {

namespace asio = boost::asio;

// Coroutine calls here never take a temporary of a non-trivial type as an argument (they take
// named objects, moved): GCC 12 destroys such temporaries twice.

namespace {

constexpr std::int16_t kNone = 0;
constexpr std::int16_t kCoordinatorLoadInProgress = 14;
constexpr std::int16_t kNotController = 41;

std::int64_t steady_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::int64_t ms_until(Deadline deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
}

CallOptions call_options(Deadline deadline, RetryOn retry_on, bool expect_response = true) {
  CallOptions o;
  o.deadline = deadline;
  o.retry_on = retry_on;
  o.expect_response = expect_response;
  return o;
}

std::string_view type_name(CoordinatorType type) { return type == CoordinatorType::kGroup ? "group" : "transaction"; }

}  // namespace

Client::Client(asio::any_io_executor executor, ClientOptions options)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      backoff_(options_.retry_backoff),
      random_(std::random_device{}()) {
  WEIR_ASSERT(!options_.bootstrap.empty(), "a client needs at least one bootstrap server");
  WEIR_ASSERT(options_.request_timeout_ms > 0 && options_.default_api_timeout_ms > 0, "timeouts must be positive");
}

Client::~Client() { stop(); }

void Client::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& [id, conn] : connections_) conn->close("client stopped");
  connections_.clear();
}

void Client::report_retry(std::string_view api, int attempt, const Error& error) {
  log::get("client")->debug("event=retry {} {} {}", log::kv("api", api), log::kv("attempt", attempt),
                            log::kv("error", error.to_string()));
  if (options_.on_retry) options_.on_retry(RetryEvent{api, attempt, error});
}

void Client::keep_most_telling(std::optional<Error>& last, Error error) {
  if (error.kind == ErrorKind::kTimeout && last && last->kind != ErrorKind::kTimeout) return;
  last = std::move(error);
}

Error Client::deadline_error(std::string_view api, int attempts, const std::optional<Error>& last) const {
  if (!last) return Error::timeout(fmt::format("{} not sent before the deadline", api));
  if (last->kind == ErrorKind::kTimeout && attempts <= 1) return *last;
  return Error::timeout(fmt::format("{} did not complete before the deadline ({} attempts); last error: {}", api,
                                    attempts, last->to_string()),
                        last->code);
}

asio::awaitable<bool> Client::backoff(int attempt, Deadline deadline) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const std::int64_t wait_ms = backoff_.backoff_ms(attempt, uniform(random_));
  const std::int64_t left_ms = ms_until(deadline);
  if (left_ms <= 0) co_return false;
  asio::steady_timer timer(executor_);
  timer.expires_after(std::chrono::milliseconds(std::min(wait_ms, left_ms)));
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return wait_ms < left_ms && !stopped_;
}

bool Client::is_retry_code(std::int16_t code, const Target& target, RetryOn retry_on) const noexcept {
  if (code == kNone || retry_on == RetryOn::kTransportOnly) return false;
  if (retry_on == RetryOn::kAllRetriable && is_retriable(code)) return true;
  if (std::holds_alternative<target::Leader>(target)) return is_stale_metadata(code);
  if (std::holds_alternative<target::Coordinator>(target)) {
    return is_coordinator_moved(code) || code == kCoordinatorLoadInProgress;
  }
  if (std::holds_alternative<target::Controller>(target)) return code == kNotController;
  return false;
}

void Client::note_failure(const Target& target, std::int16_t code) {
  if (const auto* leader = std::get_if<target::Leader>(&target)) {
    if (code == kNone || is_stale_metadata(code)) metadata_.invalidate();
    (void)leader;
  } else if (const auto* c = std::get_if<target::Coordinator>(&target)) {
    if (code == kNone || is_coordinator_moved(code)) coordinators_.erase({c->type, c->key});
  } else if (std::holds_alternative<target::Controller>(target)) {
    if (code == kNone || code == kNotController) metadata_.invalidate();
  }
}

std::optional<Endpoint> Client::endpoint_of(std::int32_t node) const {
  if (node < 0) {
    const auto index = static_cast<std::size_t>(-1 - static_cast<std::int64_t>(node));
    if (index < options_.bootstrap.size()) return options_.bootstrap[index];
    return std::nullopt;
  }
  if (auto ep = metadata_.node(node)) return ep;
  for (const auto& [key, info] : coordinators_) {
    if (info.node_id == node) return info.endpoint;
  }
  return std::nullopt;
}

std::int32_t Client::pick_any_node() {
  // A ready connection with the fewest requests in flight (Kafka's least loaded node).
  std::int32_t best = INT32_MIN;
  std::size_t best_load = SIZE_MAX;
  for (const auto& [id, conn] : connections_) {
    if (conn->state() == Connection::State::kReady && conn->in_flight() < best_load) {
      best = id;
      best_load = conn->in_flight();
    }
  }
  if (best != INT32_MIN) return best;
  const auto ids = metadata_.node_ids();
  if (!ids.empty()) return ids[next_node_++ % ids.size()];
  const auto index = next_bootstrap_++ % options_.bootstrap.size();
  return static_cast<std::int32_t>(-1 - static_cast<std::int64_t>(index));
}

asio::awaitable<Result<std::shared_ptr<Connection>, Error>> Client::connection(std::int32_t node, Deadline deadline) {
  if (stopped_) co_return unexpected(Error::transport("the client is stopped"));
  auto it = connections_.find(node);
  if (it != connections_.end() && it->second->state() == Connection::State::kClosed) {
    connections_.erase(it);
    it = connections_.end();
  }
  if (it == connections_.end()) {
    const auto endpoint = endpoint_of(node);
    if (!endpoint) co_return unexpected(Error::invalid_argument(fmt::format("no address known for node {}", node)));
    auto conn = std::make_shared<Connection>(executor_, node, *endpoint, options_.connection);
    it = connections_.emplace(node, conn).first;
    ++connections_opened_;
    conn->start();
  }
  std::shared_ptr<Connection> conn = it->second;
  auto ready = co_await conn->ready(deadline);
  if (!ready) co_return unexpected(std::move(ready.error()));
  co_return conn;
}

asio::awaitable<Status<Error>> Client::refresh_metadata(Deadline deadline) {
  protocol::MetadataRequest request;
  request.topics.emplace();
  for (const auto& name : metadata_.tracked()) {
    auto& t = request.topics->emplace_back();
    t.name = name;
  }
  request.allow_auto_topic_creation = options_.allow_auto_topic_creation;
  const Target to = target::AnyNode{};
  auto response = co_await send(to, std::move(request), call_options(deadline, RetryOn::kTransportOnly));
  if (!response) co_return unexpected(std::move(response.error()));
  if (response->brokers.empty()) {
    co_return unexpected(Error::kafka(5, "the metadata response listed no brokers"));  // LEADER_NOT_AVAILABLE
  }
  metadata_.update(*response, steady_now_ms());
  co_return Status<Error>{};
}

asio::awaitable<Result<std::int32_t, Error>> Client::resolve(const Target& target, Deadline deadline) {
  if (std::holds_alternative<target::AnyNode>(target)) co_return pick_any_node();
  if (const auto* n = std::get_if<target::Node>(&target)) {
    if (!endpoint_of(n->id) && !metadata_.has_brokers()) {
      if (auto r = co_await refresh_metadata(deadline); !r) co_return unexpected(std::move(r.error()));
    }
    if (!endpoint_of(n->id)) co_return unexpected(Error::invalid_argument(fmt::format("unknown node {}", n->id)));
    co_return n->id;
  }
  if (const auto* l = std::get_if<target::Leader>(&target)) {
    metadata_.track(l->topic);
    const TopicInfo* known = metadata_.topic(l->topic);
    if (known == nullptr || metadata_.needs_refresh(steady_now_ms(), options_.metadata_max_age_ms)) {
      if (auto r = co_await refresh_metadata(deadline); !r) co_return unexpected(std::move(r.error()));
    }
    auto leader = metadata_.leader(l->topic, l->partition);
    if (leader) co_return *leader;
    const TopicInfo* t = metadata_.topic(l->topic);
    if (t != nullptr && t->error_code == 0 && !t->partitions.empty() &&
        l->partition >= static_cast<std::int32_t>(t->partitions.size())) {
      co_return unexpected(Error::invalid_argument(fmt::format("partition {} is not in the range [0...{}) of topic {}",
                                                               l->partition, t->partitions.size(), l->topic)));
    }
    metadata_.invalidate();
    co_return unexpected(
        Error::kafka(leader.error(), fmt::format("no leader known for {}-{}", l->topic, l->partition)));
  }
  if (std::holds_alternative<target::Controller>(target)) {
    if (metadata_.needs_refresh(steady_now_ms(), options_.metadata_max_age_ms)) {
      if (auto r = co_await refresh_metadata(deadline); !r) co_return unexpected(std::move(r.error()));
    }
    const std::int32_t id = metadata_.controller_id();
    if (id >= 0 && endpoint_of(id)) co_return id;
    co_return pick_any_node();
  }
  const auto& c = std::get<target::Coordinator>(target);
  if (const auto it = coordinators_.find({c.type, c.key}); it != coordinators_.end()) co_return it->second.node_id;
  auto found = co_await lookup_coordinator(c.type, c.key, deadline);
  if (!found) co_return unexpected(std::move(found.error()));
  co_return found->node_id;
}

asio::awaitable<Result<CoordinatorInfo, Error>> Client::lookup_coordinator(CoordinatorType type, const std::string& key,
                                                                           Deadline deadline) {
  protocol::FindCoordinatorRequest request;
  request.key = key;  // v0-v3
  request.key_type = static_cast<std::int8_t>(type);
  request.coordinator_keys = {key};  // v4+
  const Target to = target::AnyNode{};
  auto response = co_await send(to, std::move(request), call_options(deadline, RetryOn::kTransportOnly));
  if (!response) co_return unexpected(std::move(response.error()));
  std::int32_t node_id = response->node_id;
  std::string host = response->host;
  std::int32_t port = response->port;
  std::int16_t code = response->error_code;
  std::optional<std::string> message = response->error_message;
  if (!response->coordinators.empty()) {  // the v4+ form
    const auto& e = response->coordinators.front();
    node_id = e.node_id;
    host = e.host;
    port = e.port;
    code = e.error_code;
    message = e.error_message;
  }
  if (code != kNone) {
    co_return unexpected(
        Error::kafka(code, fmt::format("no {} coordinator for {}{}{}", type_name(type), key,
                                       message && !message->empty() ? ": " : "", message.value_or(""))));
  }
  if (port <= 0 || port > 65535 || node_id < 0) {
    co_return unexpected(
        Error::protocol(fmt::format("FindCoordinator answered node {} at {}:{}", node_id, host, port)));
  }
  CoordinatorInfo info{node_id, Endpoint{host, static_cast<std::uint16_t>(port)}};
  coordinators_[{type, key}] = info;
  co_return info;
}

asio::awaitable<Result<CoordinatorInfo, Error>> Client::find_coordinator(CoordinatorType type, std::string key,
                                                                         Deadline deadline) {
  std::optional<Error> last;
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) {
      report_retry("FindCoordinatorRequest", attempt, *last);
      if (!co_await backoff(attempt - 1, deadline))
        co_return unexpected(deadline_error("FindCoordinatorRequest", attempt, last));
    }
    auto found = co_await lookup_coordinator(type, key, deadline);
    if (found) co_return found;
    if (!found.error().retriable()) co_return unexpected(std::move(found.error()));
    last = std::move(found.error());
  }
}

asio::awaitable<Result<std::int32_t, Error>> Client::wait_for_leader(std::string topic, std::int32_t partition,
                                                                     Deadline deadline) {
  const Target target = target::Leader{topic, partition};
  std::optional<Error> last;
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) {
      report_retry("MetadataRequest", attempt, *last);
      if (!co_await backoff(attempt - 1, deadline))
        co_return unexpected(deadline_error("MetadataRequest", attempt, last));
    }
    auto leader = co_await resolve(target, deadline);
    if (leader) co_return leader;
    if (!leader.error().retriable()) co_return unexpected(std::move(leader.error()));
    last = std::move(leader.error());
  }
}

asio::awaitable<Result<protocol::MetadataResponse, Error>> Client::metadata(
    std::optional<std::vector<std::string>> topics, Deadline deadline, bool allow_auto_topic_creation) {
  protocol::MetadataRequest request;
  if (topics) {
    request.topics.emplace();
    for (auto& name : *topics) {
      auto& t = request.topics->emplace_back();
      t.name = std::move(name);
    }
  } else {
    request.topics.reset();
  }
  request.allow_auto_topic_creation = allow_auto_topic_creation;
  const Target to = target::AnyNode{};
  auto response = co_await send(to, std::move(request), call_options(deadline, RetryOn::kTransportOnly));
  if (response && !response->brokers.empty()) metadata_.update(*response, steady_now_ms());
  co_return response;
}

asio::awaitable<Result<std::vector<protocol::CreateTopicsResponse::CreatableTopicResult>, Error>> Client::create_topics(
    std::vector<NewTopic> topics, Deadline deadline, std::int32_t timeout_ms) {
  protocol::CreateTopicsRequest request;
  request.timeout_ms = timeout_ms;
  for (auto& t : topics) {
    auto& c = request.topics.emplace_back();
    c.name = t.name;
    c.num_partitions = t.num_partitions;
    c.replication_factor = t.replication_factor;
    for (auto& [k, v] : t.configs) {
      auto& cfg = c.configs.emplace_back();
      cfg.name = k;
      cfg.value = v;
    }
  }
  const Target to = target::Controller{};
  auto response = co_await send(to, std::move(request), call_options(deadline, RetryOn::kRoutingErrors));
  if (!response) co_return unexpected(std::move(response.error()));
  for (const auto& t : topics) metadata_.track(t.name);
  metadata_.invalidate();
  co_return std::move(response->topics);
}

asio::awaitable<Result<ProduceResult, Error>> Client::produce(std::string topic, std::int32_t partition,
                                                              std::vector<std::byte> batch, ProduceOptions options,
                                                              Deadline deadline) {
  auto leader = co_await wait_for_leader(topic, partition, deadline);
  if (!leader) co_return unexpected(std::move(leader.error()));
  protocol::ProduceRequest request;
  request.transactional_id = options.transactional_id;
  request.acks = options.acks;
  request.timeout_ms = options.timeout_ms;
  auto& t = request.topic_data.emplace_back();
  t.name = topic;
  const TopicInfo* info = metadata_.topic(topic);
  if (info != nullptr) t.topic_id = info->id;
  auto& p = t.partition_data.emplace_back();
  p.index = partition;
  const auto* data = reinterpret_cast<const std::uint8_t*>(batch.data());
  p.records = protocol::Bytes(data, data + batch.size());
  CallOptions call = call_options(deadline, RetryOn::kAllRetriable, options.acks != 0);
  if (t.topic_id.is_zero()) call.max_version = 12;  // v13 names topics by id only
  const Target to = target::Leader{topic, partition};
  auto response = co_await send(to, std::move(request), call);
  if (!response) co_return unexpected(std::move(response.error()));
  ProduceResult result;
  result.leader = metadata_.leader(topic, partition).value_or(-1);
  if (options.acks == 0) co_return result;
  if (response->responses.empty() || response->responses.front().partition_responses.empty()) {
    co_return unexpected(
        Error::protocol(fmt::format("the Produce response has no result for {}-{}", topic, partition)));
  }
  const auto& r = response->responses.front().partition_responses.front();
  if (r.error_code != kNone) {
    co_return unexpected(
        Error::kafka(r.error_code, r.error_message.value_or(fmt::format("produce to {}-{} failed", topic, partition))));
  }
  result.base_offset = r.base_offset;
  result.log_append_time_ms = r.log_append_time_ms;
  result.log_start_offset = r.log_start_offset;
  co_return result;
}

asio::awaitable<Result<FetchResult, Error>> Client::fetch(FetchArgs args, Deadline deadline) {
  auto leader = co_await wait_for_leader(args.topic, args.partition, deadline);
  if (!leader) co_return unexpected(std::move(leader.error()));
  protocol::FetchRequest request;
  request.max_wait_ms = args.max_wait_ms;
  request.min_bytes = args.min_bytes;
  request.max_bytes = args.max_bytes;
  request.isolation_level = args.isolation_level;
  request.session_id = 0;
  request.session_epoch = -1;  // no fetch session
  auto& t = request.topics.emplace_back();
  t.topic = args.topic;
  const TopicInfo* info = metadata_.topic(args.topic);
  if (info != nullptr) t.topic_id = info->id;
  auto& p = t.partitions.emplace_back();
  p.partition = args.partition;
  p.fetch_offset = args.offset;
  p.partition_max_bytes = args.partition_max_bytes;
  CallOptions call = call_options(deadline, RetryOn::kAllRetriable);
  if (t.topic_id.is_zero()) call.max_version = 12;  // v13 names topics by id only
  const Uuid topic_id = t.topic_id;
  const Target to = target::Leader{args.topic, args.partition};
  auto response = co_await send(to, std::move(request), call);
  if (!response) co_return unexpected(std::move(response.error()));
  if (response->error_code != kNone) {
    co_return unexpected(Error::kafka(response->error_code, "the Fetch request failed"));
  }
  for (auto& topic : response->responses) {
    if (topic.topic != args.topic && !(topic_id == topic.topic_id && !topic_id.is_zero())) continue;
    for (auto& part : topic.partitions) {
      if (part.partition_index != args.partition) continue;
      if (part.error_code != kNone) {
        co_return unexpected(Error::kafka(part.error_code, fmt::format("fetch from {}-{} at offset {} failed",
                                                                       args.topic, args.partition, args.offset)));
      }
      FetchResult result;
      result.high_watermark = part.high_watermark;
      result.last_stable_offset = part.last_stable_offset;
      result.log_start_offset = part.log_start_offset;
      if (part.records) result.records = std::move(*part.records);
      result.leader = metadata_.leader(args.topic, args.partition).value_or(-1);
      co_return result;
    }
  }
  co_return unexpected(
      Error::protocol(fmt::format("the Fetch response has no result for {}-{}", args.topic, args.partition)));
}

asio::awaitable<Result<ListOffsetsResult, Error>> Client::list_offsets(std::string topic, std::int32_t partition,
                                                                       std::int64_t timestamp, Deadline deadline) {
  protocol::ListOffsetsRequest request;
  request.replica_id = -1;
  auto& t = request.topics.emplace_back();
  t.name = topic;
  auto& p = t.partitions.emplace_back();
  p.partition_index = partition;
  p.timestamp = timestamp;
  request.timeout_ms =
      static_cast<std::int32_t>(std::clamp<std::int64_t>(ms_until(deadline), 0, options_.request_timeout_ms));
  const Target to = target::Leader{topic, partition};
  auto response = co_await send(to, std::move(request), call_options(deadline, RetryOn::kAllRetriable));
  if (!response) co_return unexpected(std::move(response.error()));
  for (const auto& rt : response->topics) {
    if (rt.name != topic) continue;
    for (const auto& rp : rt.partitions) {
      if (rp.partition_index != partition) continue;
      if (rp.error_code != kNone) {
        co_return unexpected(
            Error::kafka(rp.error_code, fmt::format("list offsets of {}-{} failed", topic, partition)));
      }
      co_return ListOffsetsResult{rp.offset, rp.timestamp, rp.leader_epoch};
    }
  }
  co_return unexpected(
      Error::protocol(fmt::format("the ListOffsets response has no result for {}-{}", topic, partition)));
}

}  // namespace weir::client
