#include "client/group_membership.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <utility>

#include "protocol/gen/consumer_group_heartbeat_response.h"
#include "protocol/gen/heartbeat_response.h"
#include "protocol/gen/leave_group_response.h"
#include "protocol/gen/offset_fetch_request.h"
#include "protocol/gen/offset_fetch_response.h"

namespace weir::client {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// OffsetCommit and OffsetFetch v10 name topics by id only; this member names them.
constexpr std::int16_t kMaxOffsetApiVersion = 9;
constexpr std::int64_t kMaxBackoffMs = 1'000;  // retry.backoff.max.ms

Target coordinator_of(const GroupMemberConfig& config) {
  return target::Coordinator{CoordinatorType::kGroup, config.group_id};
}

}  // namespace

GroupMembership::GroupMembership(asio::any_io_executor executor, ClientOptions client_options, GroupMemberConfig config)
    : executor_(executor),
      client_options_(std::move(client_options)),
      client_(std::make_unique<Client>(executor, client_options_)),
      member_(config),
      wake_(executor),
      finished_(executor, Clock::time_point::max()) {
  if (config.consumer_protocol) consumer_.emplace(std::move(config), Uuid::random().to_string());
}

GroupMembership::~GroupMembership() {
  if (client_) client_->stop();
  for (auto& c : retired_) c->stop();
}

void GroupMembership::start() {
  running_ = true;
  asio::co_spawn(executor_, run(), asio::detached);
}

asio::awaitable<void> GroupMembership::close() {
  closing_ = true;
  usable_ = false;
  wake_.cancel();
  if (running_ && holding_) {
    // The coordinator holds a JoinGroup or SyncGroup on that connection and would answer nothing
    // else on it before: leave over new connections.
    client_->stop();
    retired_.push_back(std::move(client_));
    client_ = std::make_unique<Client>(executor_, client_options_);
  }
  if (running_) {
    boost::system::error_code ignored;
    co_await finished_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  client_->stop();
  for (auto& c : retired_) c->stop();
}

const std::set<TopicPartition>& GroupMembership::owned() const noexcept {
  return consumer_ ? consumer_->owned() : member_.owned();
}

bool GroupMembership::can_commit() const noexcept { return consumer_ ? consumer_->can_commit() : member_.can_commit(); }

std::int64_t GroupMembership::backoff_ms() const {
  return std::min<std::int64_t>(kMaxBackoffMs, member_.config().retry_backoff_ms << std::min(failures_, 4));
}

std::vector<TopicPartition> GroupMembership::assignment() const { return {owned().begin(), owned().end()}; }

std::optional<std::int64_t> GroupMembership::position(const TopicPartition& tp) const {
  const auto it = positions_.find(tp);
  return it == positions_.end() ? std::nullopt : it->second;
}

void GroupMembership::seek(const TopicPartition& tp, std::int64_t offset) {
  if (owned().contains(tp)) positions_[tp] = offset;
}

Deadline GroupMembership::request_deadline() const { return deadline_after_ms(client_options_.request_timeout_ms); }

template <class Request>
asio::awaitable<Result<ResponseOf<Request>, Error>> GroupMembership::to_coordinator(
    Request request, std::optional<std::int16_t> max_version) {
  CallOptions options;
  options.deadline = request_deadline();
  options.max_version = max_version;
  Target to = coordinator_of(member_.config());
  co_return co_await client_->send(std::move(to), std::move(request), std::move(options));
}

template <class Request>
asio::awaitable<std::optional<ResponseOf<Request>>> GroupMembership::send_leave(Request request) {
  auto response = co_await to_coordinator(std::move(request));
  if (!response) {
    if (on_warning) on_warning(fmt::format("leaving the group failed: {}", response.error().to_string()));
    co_return std::nullopt;
  }
  co_return std::move(*response);
}

void GroupMembership::fail(Error error) {
  if (!failure_) failure_ = std::move(error);
  usable_ = false;
}

void GroupMembership::forget(const std::vector<TopicPartition>& partitions) {
  for (const auto& tp : partitions) {
    positions_.erase(tp);
    committed_.erase(tp);
  }
  ++epoch_;
}

asio::awaitable<void> GroupMembership::sleep_ms(std::int64_t ms) {
  if (closing_) co_return;
  wake_.expires_after(std::chrono::milliseconds(ms));
  boost::system::error_code ignored;
  co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

asio::awaitable<void> GroupMembership::run() {
  try {
    while (!closing_ && !failure_) {
      if (consumer_) {
        co_await run_consumer_protocol();
        continue;
      }
      if (member_.rejoin_needed() || member_.state() != MemberState::kStable) {
        co_await rebalance();
        continue;
      }
      const auto now = Clock::now();
      if (now >= next_heartbeat_) {
        co_await heartbeat();
        continue;
      }
      if (now >= next_commit_) {
        next_commit_ = now + std::chrono::milliseconds(member_.config().auto_commit_interval_ms);
        std::optional<std::vector<TopicPartition>> all;
        (void)co_await commit(std::move(all));
        continue;
      }
      wake_.expires_at(std::min(next_heartbeat_, next_commit_));
      boost::system::error_code ignored;
      co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
    usable_ = false;
    if (closing_ && !failure_) {
      std::optional<std::vector<TopicPartition>> all;
      (void)co_await commit(std::move(all));
    }
    co_await leave();
  } catch (const std::exception& e) {
    fail(Error::protocol(fmt::format("the group membership stopped: {}", e.what())));
  }
  usable_ = false;
  running_ = false;
  finished_.cancel();
}

asio::awaitable<void> GroupMembership::rebalance() {
  usable_ = false;
  ++epoch_;
  const GroupMemberConfig& config = member_.config();
  // Kafka's onJoinPrepare: commit what was read before anything is given up.
  if (member_.can_commit()) {
    std::optional<std::vector<TopicPartition>> all;
    (void)co_await commit(std::move(all));
  }
  if (closing_) co_return;
  JoinPreparation prep = member_.prepare_join();
  if (!prep.revoked.empty() || !prep.lost.empty()) {
    AssignmentChange change;
    change.assigned = assignment();
    change.revoked = prep.revoked;
    change.revoked.insert(change.revoked.end(), prep.lost.begin(), prep.lost.end());
    forget(change.revoked);
    if (on_assignment) on_assignment(change);
  }

  const auto call_failed = [&](const Error& e) {
    ++failures_;
    if (!e.retriable() && e.kind != ErrorKind::kTimeout) fail(e);
  };
  const std::int64_t held_ms =
      std::max<std::int64_t>(client_options_.request_timeout_ms, std::int64_t{config.rebalance_timeout_ms} + 5'000);

  holding_ = true;
  std::optional<std::string> reason;
  auto join = member_.join_request(std::move(reason));
  CallOptions join_options;
  join_options.deadline = deadline_after_ms(held_ms);
  join_options.request_timeout_ms = held_ms;
  Target to = coordinator_of(config);
  auto joined = co_await client_->send(std::move(to), std::move(join), std::move(join_options));
  holding_ = false;
  if (closing_) co_return;
  if (!joined) {
    call_failed(joined.error());
    co_await sleep_ms(backoff_ms());
    co_return;
  }
  const Next after_join = member_.on_join_response(*joined);
  if (after_join != Next::kSync) {
    if (after_join == Next::kFatal) fail(member_.error());
    if (after_join == Next::kRetry || after_join == Next::kFindCoordinator) {
      ++failures_;
      co_await sleep_ms(backoff_ms());
    }
    co_return;
  }

  std::vector<protocol::SyncGroupRequest::SyncGroupRequestAssignment> assignments;
  if (member_.is_leader()) {
    std::optional<std::vector<std::string>> topics{member_.subscribed_topics()};
    auto md = co_await client_->metadata(std::move(topics), request_deadline());
    if (closing_) co_return;
    if (!md) {
      call_failed(md.error());
      member_.request_rejoin();
      co_await sleep_ms(backoff_ms());
      co_return;
    }
    PartitionCounts counts;
    for (const auto& t : member_.subscribed_topics()) {
      const TopicInfo* info = client_->cluster().topic(t);
      if (info != nullptr && info->error_code == 0 && !info->partitions.empty()) {
        counts[t] = static_cast<std::int32_t>(info->partitions.size());
      }
    }
    assignments = member_.leader_assignments(counts);
  }

  holding_ = true;
  auto sync = member_.sync_request(std::move(assignments));
  CallOptions sync_options;
  sync_options.deadline = deadline_after_ms(held_ms);
  sync_options.request_timeout_ms = held_ms;
  Target again = coordinator_of(config);
  auto synced = co_await client_->send(std::move(again), std::move(sync), std::move(sync_options));
  holding_ = false;
  if (closing_) co_return;
  if (!synced) {
    call_failed(synced.error());
    member_.request_rejoin();
    co_await sleep_ms(backoff_ms());
    co_return;
  }
  AssignmentChange change;
  const Next after_sync = member_.on_sync_response(*synced, change);
  if (after_sync != Next::kStable) {
    if (after_sync == Next::kFatal) fail(member_.error());
    if (after_sync == Next::kFindCoordinator) {
      ++failures_;
      co_await sleep_ms(backoff_ms());
    }
    co_return;
  }

  // Cooperative: what this member gives up is committed first, then no longer read.
  if (!change.revoked.empty()) {
    std::optional<std::vector<TopicPartition>> revoked{change.revoked};
    (void)co_await commit(std::move(revoked));
    forget(change.revoked);
  }
  for (const auto& tp : change.added) positions_[tp] = std::nullopt;
  if (!change.added.empty()) {
    std::vector<TopicPartition> added = change.added;
    auto offsets = co_await committed(std::move(added));
    if (closing_) co_return;
    if (!offsets) {
      fail(offsets.error());
      co_return;
    }
    for (const auto& [tp, offset] : *offsets) {
      if (!member_.owned().contains(tp)) continue;
      positions_[tp] = offset;
      committed_[tp] = offset;
    }
  }
  failures_ = 0;
  ++epoch_;
  const auto now = Clock::now();
  next_heartbeat_ = now + std::chrono::milliseconds(config.heartbeat_interval_ms);
  next_commit_ = now + std::chrono::milliseconds(config.auto_commit_interval_ms);
  usable_ = !member_.rejoin_needed();
  if (on_assignment) on_assignment(change);
}

asio::awaitable<void> GroupMembership::heartbeat() {
  const GroupMemberConfig& config = member_.config();
  next_heartbeat_ = Clock::now() + std::chrono::milliseconds(config.heartbeat_interval_ms);
  auto request = member_.heartbeat_request();
  auto response = co_await to_coordinator(std::move(request));
  if (closing_) co_return;
  if (!response) {
    // Kafka's heartbeat thread tries again after retry.backoff.ms; a member the coordinator
    // dropped meanwhile learns it from the next answer (UNKNOWN_MEMBER_ID).
    next_heartbeat_ = Clock::now() + std::chrono::milliseconds(config.retry_backoff_ms);
    co_return;
  }
  const Next next = member_.on_heartbeat_response(response->error_code);
  if (next == Next::kFatal) fail(member_.error());
  if (next == Next::kRejoin) usable_ = false;
  if (next == Next::kFindCoordinator) {
    next_heartbeat_ = Clock::now() + std::chrono::milliseconds(config.retry_backoff_ms);
    std::string group = config.group_id;
    (void)co_await client_->find_coordinator(CoordinatorType::kGroup, std::move(group), request_deadline());
  }
}

asio::awaitable<void> GroupMembership::run_consumer_protocol() {
  ConsumerGroupMember& m = *consumer_;
  const auto now = Clock::now();
  if (m.state() == ConsumerMemberState::kReconciling && now >= next_reconcile_) {
    co_await reconcile();
    co_return;
  }
  if (m.heartbeat_now() || now >= next_heartbeat_) {
    co_await consumer_heartbeat();
    co_return;
  }
  if (m.can_commit() && now >= next_commit_) {
    next_commit_ = now + std::chrono::milliseconds(m.config().auto_commit_interval_ms);
    std::optional<std::vector<TopicPartition>> all;
    (void)co_await commit(std::move(all));
    co_return;
  }
  auto wake_at = std::min(next_heartbeat_, m.can_commit() ? next_commit_ : Clock::time_point::max());
  if (m.state() == ConsumerMemberState::kReconciling) wake_at = std::min(wake_at, next_reconcile_);
  wake_.expires_at(wake_at);
  boost::system::error_code ignored;
  co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

asio::awaitable<void> GroupMembership::consumer_heartbeat() {
  ConsumerGroupMember& m = *consumer_;
  const GroupMemberConfig& config = m.config();
  auto request = m.heartbeat_request(topic_ids_);
  auto response = co_await to_coordinator(std::move(request));
  if (closing_) co_return;
  if (!response) {
    ++failures_;
    m.heartbeat_failed();
    const Error& e = response.error();
    if (!e.retriable() && e.kind != ErrorKind::kTimeout) fail(e);
    next_heartbeat_ = Clock::now() + std::chrono::milliseconds(backoff_ms());
    co_return;
  }
  std::vector<TopicPartition> lost;
  const Next next = m.on_heartbeat_response(*response, lost);
  const auto now = Clock::now();
  switch (next) {
    case Next::kFatal:
      fail(m.error());
      co_return;
    case Next::kRetry:
    case Next::kFindCoordinator:
      ++failures_;
      next_heartbeat_ = now + std::chrono::milliseconds(backoff_ms());
      if (next == Next::kFindCoordinator) {
        std::string group = config.group_id;
        (void)co_await client_->find_coordinator(CoordinatorType::kGroup, std::move(group), request_deadline());
      }
      co_return;
    case Next::kRejoin: {
      // Fenced: the partitions are lost (not committed) and the member joins again at once.
      usable_ = false;
      AssignmentChange change;
      change.revoked = std::move(lost);
      forget(change.revoked);
      if (on_assignment && !change.revoked.empty()) on_assignment(change);
      co_return;
    }
    default:
      break;
  }
  failures_ = 0;
  next_heartbeat_ = now + std::chrono::milliseconds(m.heartbeat_interval_ms() > 0 ? m.heartbeat_interval_ms()
                                                                                  : config.heartbeat_interval_ms);
  if (m.state() == ConsumerMemberState::kReconciling) {
    usable_ = false;
    next_reconcile_ = now;
  } else {
    usable_ = m.state() == ConsumerMemberState::kStable && m.epoch() > 0;
  }
}

asio::awaitable<void> GroupMembership::reconcile() {
  ConsumerGroupMember& m = *consumer_;
  const GroupMemberConfig& config = m.config();
  usable_ = false;
  ++epoch_;
  // The target names topics by id: the subscribed topics' ids come from metadata.
  const auto resolve = [&](std::set<TopicPartition>& out) {
    out.clear();
    for (const auto& [id, partitions] : *m.target()) {
      const auto it = std::ranges::find_if(topic_ids_, [&](const auto& e) { return e.second == id; });
      if (it == topic_ids_.end()) return false;
      for (const std::int32_t p : partitions) out.emplace(it->first, p);
    }
    return true;
  };
  std::set<TopicPartition> assigned;
  if (!resolve(assigned)) {
    // A regex subscription may be given any topic: every topic's metadata then.
    std::optional<std::vector<std::string>> topics;
    if (!config.topic_regex) topics = config.topics;
    auto md = co_await client_->metadata(std::move(topics), request_deadline());
    if (closing_ || m.state() != ConsumerMemberState::kReconciling) co_return;
    if (md) {
      for (const auto& t : md->topics) {
        if (t.name && t.error_code == 0 && !t.topic_id.is_zero()) topic_ids_[*t.name] = t.topic_id;
      }
    }
    if (!resolve(assigned)) {  // a topic the metadata does not show yet: try again shortly
      ++failures_;
      next_reconcile_ = Clock::now() + std::chrono::milliseconds(backoff_ms());
      co_return;
    }
  }
  AssignmentChange change;
  change.assigned.assign(assigned.begin(), assigned.end());
  std::ranges::set_difference(assigned, m.owned(), std::back_inserter(change.added));
  std::ranges::set_difference(m.owned(), assigned, std::back_inserter(change.revoked));
  // Revoked: committed, then no longer read, before the next heartbeat acknowledges the target.
  if (!change.revoked.empty()) {
    std::optional<std::vector<TopicPartition>> revoked{change.revoked};
    (void)co_await commit(std::move(revoked));
    forget(change.revoked);
  }
  if (closing_ || m.state() != ConsumerMemberState::kReconciling) co_return;
  if (!change.added.empty()) {
    std::vector<TopicPartition> added = change.added;
    auto offsets = co_await committed(std::move(added));
    if (closing_ || m.state() != ConsumerMemberState::kReconciling) co_return;
    if (!offsets) {
      fail(offsets.error());
      co_return;
    }
    for (const auto& tp : change.added) {
      const auto it = offsets->find(tp);
      positions_[tp] = it == offsets->end() ? std::nullopt : std::optional<std::int64_t>(it->second);
      if (it != offsets->end()) committed_[tp] = it->second;
    }
  }
  m.reconciled(std::move(assigned));
  failures_ = 0;
  ++epoch_;
  next_commit_ = Clock::now() + std::chrono::milliseconds(config.auto_commit_interval_ms);
  usable_ = true;
  if (on_assignment) on_assignment(change);
}

asio::awaitable<bool> GroupMembership::commit(std::optional<std::vector<TopicPartition>> only) {
  if (!can_commit()) co_return false;
  std::map<TopicPartition, std::int64_t> offsets;
  for (const auto& [tp, position] : positions_) {
    if (!position) continue;
    if (only && std::ranges::find(*only, tp) == only->end()) continue;
    if (const auto c = committed_.find(tp); c != committed_.end() && c->second == *position) continue;
    offsets[tp] = *position;
  }
  if (offsets.empty()) co_return true;
  auto request = consumer_ ? consumer_->commit_request(offsets) : member_.commit_request(offsets);
  auto response = co_await to_coordinator(std::move(request), kMaxOffsetApiVersion);
  if (!response) {
    if (on_warning) on_warning(fmt::format("offset commit failed: {}", response.error().to_string()));
    co_return false;
  }
  const Next next = consumer_ ? consumer_->on_commit_response(*response) : member_.on_commit_response(*response);
  if (next == Next::kContinue) {
    for (const auto& [tp, offset] : offsets) committed_[tp] = offset;
    co_return true;
  }
  if (on_warning) {
    on_warning(fmt::format("offset commit failed: {}", (consumer_ ? consumer_->error() : member_.error()).to_string()));
  }
  if (next == Next::kRejoin) usable_ = false;
  if (next == Next::kFindCoordinator) {
    std::string group = member_.config().group_id;
    (void)co_await client_->find_coordinator(CoordinatorType::kGroup, std::move(group), request_deadline());
  }
  co_return false;
}

asio::awaitable<Result<std::map<TopicPartition, std::int64_t>, Error>> GroupMembership::committed(
    std::vector<TopicPartition> partitions) {
  const std::string& group = member_.config().group_id;
  protocol::OffsetFetchRequest request;
  request.group_id = group;  // v1-7
  request.require_stable = true;
  auto& g = request.groups.emplace_back();  // v8+
  g.group_id = group;
  std::vector<protocol::OffsetFetchRequest::OffsetFetchRequestTopic> old_topics;
  for (const auto& [topic, partition] : partitions) {
    if (old_topics.empty() || old_topics.back().name != topic) old_topics.emplace_back().name = topic;
    old_topics.back().partition_indexes.push_back(partition);
    if (g.topics->empty() || g.topics->back().name != topic) g.topics->emplace_back().name = topic;
    g.topics->back().partition_indexes.push_back(partition);
  }
  request.topics = std::move(old_topics);
  CallOptions options;
  options.deadline = deadline_after_ms(client_options_.default_api_timeout_ms);
  options.max_version = kMaxOffsetApiVersion;
  options.retry_on = RetryOn::kAllRetriable;  // COORDINATOR_LOAD_IN_PROGRESS, UNSTABLE_OFFSET_COMMIT
  Target to = coordinator_of(member_.config());
  auto response = co_await client_->send(std::move(to), std::move(request), std::move(options));
  if (!response) co_return unexpected(std::move(response.error()));
  std::int16_t code = response->error_code;
  if (code == 0 && !response->groups.empty()) code = response->groups.front().error_code;
  if (code != 0) co_return unexpected(Error::kafka(code, fmt::format("cannot read the offsets of group '{}'", group)));
  std::map<TopicPartition, std::int64_t> out;
  std::optional<Error> partition_error;
  const auto take = [&](const auto& topics) {
    for (const auto& t : topics) {
      for (const auto& p : t.partitions) {
        if (p.error_code != 0 && !partition_error) {
          partition_error = Error::kafka(
              p.error_code, fmt::format("cannot read the committed offset of {}-{}", t.name, p.partition_index));
        }
        if (p.error_code == 0 && p.committed_offset >= 0) out[{t.name, p.partition_index}] = p.committed_offset;
      }
    }
  };
  take(response->topics);
  for (const auto& rg : response->groups) take(rg.topics);
  if (partition_error) co_return unexpected(std::move(*partition_error));
  co_return out;
}

asio::awaitable<void> GroupMembership::leave() {
  positions_.clear();
  committed_.clear();
  ++epoch_;
  std::int16_t code = codes::kNone;
  if (consumer_) {
    // Epoch -1; a member the coordinator already dropped has nothing to leave.
    auto request = consumer_->leave_request();
    if (!request) co_return;
    auto response = co_await send_leave(std::move(*request));
    if (!response) co_return;
    code = response->error_code;
    if (code == codes::kUnknownMemberId || code == codes::kFencedMemberEpoch || code == codes::kGroupIdNotFound) {
      co_return;
    }
  } else {
    auto request = member_.leave_request("the consumer is being closed");
    if (!request) co_return;
    auto response = co_await send_leave(std::move(*request));
    if (!response) co_return;
    code = response->error_code;
    for (const auto& m : response->members) {
      if (code == codes::kNone) code = m.error_code;
    }
  }
  if (code != codes::kNone && on_warning) {
    on_warning(fmt::format("leaving the group failed: {}", Error::kafka(code, "").to_string()));
  }
}

}  // namespace weir::client
