// The fetch session cache (KIP-227) as a state machine: contexts, epochs, what an incremental
// answer carries, and Kafka's eviction rules, driven with test time.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "broker/errors.h"
#include "broker/fetch_session.h"

namespace wb = weir::broker;
using weir::Uuid;
using Kind = wb::FetchContext::Kind;

namespace {

constexpr std::int64_t kEvictionMs = 120000;

wb::FetchPartitionSpec part(std::string topic, std::int32_t partition, std::int64_t offset = 0) {
  wb::FetchPartitionSpec p;
  p.topic = std::move(topic);
  p.partition = partition;
  p.fetch_offset = offset;
  p.max_bytes = 1 << 20;
  return p;
}

wb::FetchPartitionSpec id_part(Uuid id, std::string topic, std::int32_t partition) {
  auto p = part(std::move(topic), partition);
  p.topic_id = id;
  return p;
}

std::optional<std::string> no_names(const Uuid&) { return std::nullopt; }

wb::FetchSessionRequest request(std::int32_t id, std::int32_t epoch, std::vector<wb::FetchPartitionSpec> parts = {},
                                std::int16_t version = 12) {
  wb::FetchSessionRequest r;
  r.version = version;
  r.session_id = id;
  r.session_epoch = epoch;
  r.partitions = std::move(parts);
  return r;
}

// An outcome per context partition, in order: (high watermark, records?) pairs.
std::vector<wb::FetchPartitionOutcome> outcomes(const std::vector<std::pair<std::int64_t, bool>>& per_partition) {
  std::vector<wb::FetchPartitionOutcome> out;
  for (std::size_t i = 0; i < per_partition.size(); ++i) {
    out.push_back(wb::FetchPartitionOutcome{i, 0, per_partition[i].first, 0, per_partition[i].second});
  }
  return out;
}

std::vector<std::string> names_in(const wb::FetchContext& ctx) {
  std::vector<std::string> out;
  for (const auto& p : ctx.partitions()) out.push_back(p.topic + "-" + std::to_string(p.partition));
  return out;
}

wb::FetchSessionConfig one_shard(std::int32_t slots, std::int64_t max_partitions = 1000000) {
  return wb::FetchSessionConfig{.cache_slots = slots, .eviction_ms = kEvictionMs,
                                .max_cached_partitions = max_partitions, .shards = 1, .seed = 7};
}

// Creates a session over `parts` at now_ms (all answered with high watermark 0).
std::int32_t create(wb::FetchSessionCache& cache, std::vector<wb::FetchPartitionSpec> parts, std::int64_t now_ms,
                    bool follower = false) {
  auto req = request(0, 0, std::move(parts));
  req.from_follower = follower;
  auto ctx = cache.new_context(std::move(req), no_names, now_ms);
  std::vector<std::pair<std::int64_t, bool>> per(ctx.partitions().size(), {0, false});
  return cache.finish(ctx, outcomes(per), now_ms).session_id;
}

// One incremental fetch naming no partitions, answered with nothing new.
void use(wb::FetchSessionCache& cache, std::int32_t id, std::int32_t epoch, std::int64_t now_ms) {
  auto ctx = cache.new_context(request(id, epoch), no_names, now_ms);
  ASSERT_EQ(ctx.kind(), Kind::kIncremental);
  std::vector<std::pair<std::int64_t, bool>> per(ctx.partitions().size(), {0, false});
  cache.finish(ctx, outcomes(per), now_ms);
}

}  // namespace

TEST(FetchSession, EpochsStepAndWrapPastTheLargest) {
  EXPECT_EQ(wb::next_fetch_session_epoch(0), 1);
  EXPECT_EQ(wb::next_fetch_session_epoch(41), 42);
  EXPECT_EQ(wb::next_fetch_session_epoch(std::numeric_limits<std::int32_t>::max()), 1);
  EXPECT_EQ(wb::next_fetch_session_epoch(-1), -1);
}

TEST(FetchSession, SessionlessFetchCreatesNoSession) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  auto ctx = cache.new_context(request(0, -1, {part("a", 0), part("a", 1)}), no_names, 0);
  ASSERT_EQ(ctx.kind(), Kind::kSessionless);
  auto answer = cache.finish(ctx, outcomes({{5, true}, {0, false}}), 0);
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_EQ(answer.session_id, 0);
  EXPECT_EQ(answer.send, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(FetchSession, InitialEpochCreatesASessionAnsweringEveryPartition) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  auto ctx = cache.new_context(request(0, 0, {part("a", 0), part("b", 0)}), no_names, 0);
  ASSERT_EQ(ctx.kind(), Kind::kFull);
  auto answer = cache.finish(ctx, outcomes({{0, false}, {0, false}}), 0);
  EXPECT_GT(answer.session_id, 0);
  EXPECT_EQ(answer.send, (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(cache.contains(answer.session_id));
  EXPECT_EQ(cache.cached_partitions(), 2);
}

TEST(FetchSession, IncrementalFetchReadsTheWholeSessionAndSendsOnlyNews) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  auto full = cache.new_context(request(0, 0, {part("a", 0), part("a", 1), part("a", 2)}), no_names, 0);
  const std::int32_t id = cache.finish(full, outcomes({{10, false}, {20, false}, {30, false}}), 0).session_id;

  auto inc = cache.new_context(request(id, 1), no_names, 10);
  ASSERT_EQ(inc.kind(), Kind::kIncremental);
  EXPECT_EQ(names_in(inc), (std::vector<std::string>{"a-0", "a-1", "a-2"}));
  // a-0: nothing new; a-1: records; a-2: the high watermark moved.
  auto answer = cache.finish(inc, outcomes({{10, false}, {20, true}, {31, false}}), 10);
  EXPECT_EQ(answer.error_code, 0);
  EXPECT_EQ(answer.session_id, id);
  EXPECT_EQ(answer.send, (std::vector<std::size_t>{1, 2}));

  // The moved high watermark was remembered (and a-1, which had records, went last).
  auto next = cache.new_context(request(id, 2), no_names, 20);
  EXPECT_EQ(names_in(next), (std::vector<std::string>{"a-0", "a-2", "a-1"}));
  auto again = cache.finish(next, outcomes({{10, false}, {31, false}, {20, false}}), 20);
  EXPECT_TRUE(again.send.empty());
}

TEST(FetchSession, LogStartOffsetChangeIsNews) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0)}, 0);
  auto inc = cache.new_context(request(id, 1), no_names, 1);
  std::vector<wb::FetchPartitionOutcome> moved{{0, 0, 0, 5, false}};
  EXPECT_EQ(cache.finish(inc, moved, 1).send, (std::vector<std::size_t>{0}));
}

TEST(FetchSession, PartitionsThatReturnedRecordsMoveToTheEnd) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0), part("a", 1), part("a", 2)}, 0);
  auto inc = cache.new_context(request(id, 1), no_names, 1);
  cache.finish(inc, outcomes({{1, true}, {0, false}, {0, false}}), 1);

  auto next = cache.new_context(request(id, 2), no_names, 2);
  EXPECT_EQ(names_in(next), (std::vector<std::string>{"a-1", "a-2", "a-0"}));
}

TEST(FetchSession, ListedPartitionsUpdateTheAskAndNewOnesAreAlwaysSent) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0)}, 0);
  auto inc = cache.new_context(request(id, 1, {part("a", 0, 42), part("b", 3, 7)}), no_names, 1);
  ASSERT_EQ(inc.kind(), Kind::kIncremental);
  ASSERT_EQ(inc.partitions().size(), 2u);
  EXPECT_EQ(inc.partitions()[0].fetch_offset, 42);
  EXPECT_EQ(inc.partitions()[1].topic, "b");
  EXPECT_EQ(inc.partitions()[1].fetch_offset, 7);
  // b-3 is new to the session, so its high watermark is news even when it is 0.
  EXPECT_EQ(cache.finish(inc, outcomes({{0, false}, {0, false}}), 1).send, (std::vector<std::size_t>{1}));
}

TEST(FetchSession, ErrorsAreAlwaysSentAndThePartitionAgainOnceTheErrorIsGone) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0)}, 0);
  auto inc = cache.new_context(request(id, 1), no_names, 1);
  std::vector<wb::FetchPartitionOutcome> failed{{0, wb::code(wb::ErrorCode::kUnknownTopicOrPartition), -1, -1, false}};
  EXPECT_EQ(cache.finish(inc, failed, 1).send, (std::vector<std::size_t>{0}));
  auto again = cache.new_context(request(id, 2), no_names, 2);
  EXPECT_EQ(cache.finish(again, failed, 2).send, (std::vector<std::size_t>{0}));
  auto healed = cache.new_context(request(id, 3), no_names, 3);
  std::vector<wb::FetchPartitionOutcome> ok{{0, 0, 5, 0, false}};
  EXPECT_EQ(cache.finish(healed, ok, 3).send, (std::vector<std::size_t>{0}));
}

TEST(FetchSession, WrongEpochIsInvalidFetchSessionEpochAndTheSessionLivesOn) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0)}, 0);
  for (std::int32_t epoch : {2, 7, -2}) {
    auto ctx = cache.new_context(request(id, epoch), no_names, 1);
    ASSERT_EQ(ctx.kind(), Kind::kSessionError);
    auto answer = cache.finish(ctx, {}, 1);
    EXPECT_EQ(answer.error_code, wb::code(wb::ErrorCode::kInvalidFetchSessionEpoch));
    EXPECT_EQ(answer.session_id, 0);
    EXPECT_TRUE(answer.send.empty());
  }
  EXPECT_EQ(cache.new_context(request(id, 1), no_names, 1).kind(), Kind::kIncremental);
}

TEST(FetchSession, UnknownSessionIdIsFetchSessionIdNotFound) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  for (std::int32_t id : {0, 12345, -5}) {
    auto ctx = cache.new_context(request(id, 1), no_names, 0);
    ASSERT_EQ(ctx.kind(), Kind::kSessionError) << id;
    EXPECT_EQ(ctx.error_code(), wb::code(wb::ErrorCode::kFetchSessionIdNotFound));
  }
}

TEST(FetchSession, SessionIdsOutsideEveryShardFailTheRequestAsInKafka) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t range = std::numeric_limits<std::int32_t>::max() / 8;
  for (std::int32_t id : {8 * range, std::numeric_limits<std::int32_t>::max(), -range,
                          std::numeric_limits<std::int32_t>::min()}) {
    for (std::int32_t epoch : {1, 0, -1}) {
      auto ctx = cache.new_context(request(id, epoch), no_names, 0);
      ASSERT_EQ(ctx.kind(), Kind::kSessionError) << id;
      auto answer = cache.finish(ctx, {}, 0);
      EXPECT_EQ(answer.error_code, wb::code(wb::ErrorCode::kUnknownServerError));
      EXPECT_EQ(answer.session_id, id);
    }
  }
}

TEST(FetchSession, FinalEpochClosesTheSessionAndFetchesWithoutOne) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0)}, 0);
  auto close = cache.new_context(request(id, -1, {part("a", 0)}), no_names, 1);
  EXPECT_EQ(close.kind(), Kind::kSessionless);
  EXPECT_EQ(cache.finish(close, outcomes({{0, false}}), 1).session_id, 0);
  EXPECT_FALSE(cache.contains(id));
  EXPECT_EQ(cache.new_context(request(id, 1), no_names, 2).error_code(),
            wb::code(wb::ErrorCode::kFetchSessionIdNotFound));
}

TEST(FetchSession, InitialEpochNamingASessionReplacesIt) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0)}, 0);
  auto ctx = cache.new_context(request(id, 0, {part("b", 0)}), no_names, 1);
  ASSERT_EQ(ctx.kind(), Kind::kFull);
  const std::int32_t fresh = cache.finish(ctx, outcomes({{0, false}}), 1).session_id;
  EXPECT_NE(fresh, 0);
  EXPECT_NE(fresh, id);
  EXPECT_FALSE(cache.contains(id));
  EXPECT_EQ(cache.size(), 1u);
}

TEST(FetchSession, ForgottenPartitionsLeaveAndForgettingAllClosesTheSession) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0), part("a", 1)}, 0);
  auto req = request(id, 1);
  req.forgotten = {part("a", 0), part("zzz", 9)};
  auto ctx = cache.new_context(std::move(req), no_names, 1);
  ASSERT_EQ(ctx.kind(), Kind::kIncremental);
  EXPECT_EQ(names_in(ctx), (std::vector<std::string>{"a-1"}));
  cache.finish(ctx, outcomes({{0, false}}), 1);

  auto last = request(id, 2);
  last.forgotten = {part("a", 1)};
  auto empty = cache.new_context(std::move(last), no_names, 2);
  EXPECT_EQ(empty.kind(), Kind::kSessionless);
  EXPECT_TRUE(empty.partitions().empty());
  EXPECT_FALSE(cache.contains(id));
  EXPECT_EQ(cache.cached_partitions(), 0);
}

TEST(FetchSession, APartitionListedAndForgottenEmptiesTheSessionAndIsServedWithoutOne) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0), part("a", 1)}, 0);
  auto req = request(id, 1, {part("a", 1, 5)});
  req.forgotten = {part("a", 0), part("a", 1)};
  auto ctx = cache.new_context(std::move(req), no_names, 1);
  ASSERT_EQ(ctx.kind(), Kind::kSessionless);
  ASSERT_EQ(ctx.partitions().size(), 1u);
  EXPECT_EQ(ctx.partitions()[0].fetch_offset, 5);
  EXPECT_EQ(cache.finish(ctx, outcomes({{0, false}}), 1).session_id, 0);
  EXPECT_FALSE(cache.contains(id));
}

TEST(FetchSession, TopicIdUseMustMatchTheSession) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const Uuid t(1, 2);
  auto full = cache.new_context(request(0, 0, {id_part(t, "a", 0)}, 13), no_names, 0);
  const std::int32_t with_ids = cache.finish(full, outcomes({{0, false}}), 0).session_id;
  const std::int32_t with_names = create(cache, {part("a", 0)}, 0);  // Fetch v12

  EXPECT_EQ(cache.new_context(request(with_ids, 1, {}, 12), no_names, 1).error_code(),
            wb::code(wb::ErrorCode::kFetchSessionTopicIdError));
  EXPECT_EQ(cache.new_context(request(with_names, 1, {}, 13), no_names, 1).error_code(),
            wb::code(wb::ErrorCode::kFetchSessionTopicIdError));
  EXPECT_EQ(cache.new_context(request(with_ids, 1, {}, 17), no_names, 1).kind(), Kind::kIncremental);
}

TEST(FetchSession, TopicIdsUnknownAtFirstAreNamedOnceKnown) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const Uuid t(3, 4);
  auto full = cache.new_context(request(0, 0, {id_part(t, "", 0)}, 13), no_names, 0);
  std::vector<wb::FetchPartitionOutcome> unknown{{0, wb::code(wb::ErrorCode::kUnknownTopicId), -1, -1, false}};
  const std::int32_t id = cache.finish(full, unknown, 0).session_id;

  auto names = [t](const Uuid& u) -> std::optional<std::string> {
    return u == t ? std::optional<std::string>("born") : std::nullopt;
  };
  auto inc = cache.new_context(request(id, 1, {}, 13), names, 1);
  ASSERT_EQ(inc.kind(), Kind::kIncremental);
  EXPECT_EQ(names_in(inc), (std::vector<std::string>{"born-0"}));
  // Forgetting goes by id, whatever name the forgetter knows.
  auto req = request(id, 2, {}, 13);
  req.forgotten = {id_part(t, "", 0)};
  EXPECT_EQ(cache.new_context(std::move(req), names, 2).kind(), Kind::kSessionless);
}

TEST(FetchSession, ADuplicateRequestIsToldTheEpochMovedOn) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  const std::int32_t id = create(cache, {part("a", 0)}, 0);
  auto first = cache.new_context(request(id, 1), no_names, 1);
  auto second = cache.new_context(request(id, 2), no_names, 1);  // sent before the first was answered
  auto late = cache.finish(first, outcomes({{1, true}}), 2);
  EXPECT_EQ(late.error_code, wb::code(wb::ErrorCode::kInvalidFetchSessionEpoch));
  EXPECT_EQ(late.session_id, id);
  EXPECT_TRUE(late.send.empty());
  EXPECT_EQ(cache.finish(second, outcomes({{1, true}}), 2).send, (std::vector<std::size_t>{0}));
}

TEST(FetchSession, SessionIdsComeFromTheShardsInTurn) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 3});
  const std::int32_t range = std::numeric_limits<std::int32_t>::max() / 8;
  for (std::int32_t i = 0; i < 16; ++i) {
    const std::int32_t id = create(cache, {part("a", 0)}, 0);
    const std::int32_t shard = i % 8;
    EXPECT_GE(id, std::max(1, shard * range)) << i;
    EXPECT_LT(id, (shard + 1) * range) << i;
  }
  EXPECT_EQ(cache.size(), 16u);
}

TEST(FetchSession, SlotsAreSplitOverEightShards) {
  // 7 slots over 8 shards leave every shard without room, as in Kafka.
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.cache_slots = 7, .seed = 1});
  EXPECT_EQ(create(cache, {part("a", 0)}, 0), 0);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(FetchSession, FullCacheOfYoungSessionsAnswersSessionIdZero) {
  wb::FetchSessionCache cache(one_shard(2));
  ASSERT_NE(create(cache, {part("a", 0)}, 0), 0);
  ASSERT_NE(create(cache, {part("a", 0), part("a", 1)}, 0), 0);
  EXPECT_EQ(create(cache, {part("a", 0), part("a", 1), part("a", 2)}, 1000), 0);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.evictions(), 0u);
}

TEST(FetchSession, TheLeastRecentlyUsedSessionIdleTooLongIsEvicted) {
  wb::FetchSessionCache cache(one_shard(2));
  const std::int32_t a = create(cache, {part("a", 0)}, 0);
  const std::int32_t b = create(cache, {part("a", 0)}, 0);
  use(cache, a, 1, 10);  // b is now the least recently used
  const std::int32_t c = create(cache, {part("a", 0)}, kEvictionMs + 5);
  EXPECT_NE(c, 0);
  EXPECT_TRUE(cache.contains(a));
  EXPECT_FALSE(cache.contains(b));
  EXPECT_EQ(cache.evictions(), 1u);
}

TEST(FetchSession, ABiggerSessionEvictsTheSmallestOldSession) {
  wb::FetchSessionCache cache(one_shard(2));
  const std::int32_t small = create(cache, {part("a", 0)}, 0);
  const std::int32_t big = create(cache, {part("a", 0), part("a", 1), part("a", 2)}, 0);
  // Both in use (not idle), and older than the eviction time when last used.
  use(cache, small, 1, kEvictionMs + 10);
  use(cache, big, 1, kEvictionMs + 10);
  // As small as the smallest: not worth more, nothing evicted.
  EXPECT_EQ(create(cache, {part("b", 0)}, kEvictionMs + 20), 0);
  const std::int32_t two = create(cache, {part("b", 0), part("b", 1)}, kEvictionMs + 20);
  EXPECT_NE(two, 0);
  EXPECT_FALSE(cache.contains(small));
  EXPECT_TRUE(cache.contains(big));
}

TEST(FetchSession, FollowersEvictYoungConsumerSessionsButNotTheOtherWayRound) {
  wb::FetchSessionCache cache(one_shard(1));
  const std::int32_t consumer = create(cache, {part("a", 0), part("a", 1)}, 0);
  const std::int32_t follower = create(cache, {part("a", 0)}, 1, /*follower=*/true);
  EXPECT_NE(follower, 0);
  EXPECT_FALSE(cache.contains(consumer));
  EXPECT_EQ(create(cache, {part("a", 0), part("a", 1), part("a", 2)}, 2), 0);
  EXPECT_TRUE(cache.contains(follower));
}

TEST(FetchSession, SessionsStayWithinTheCachedPartitionLimit) {
  wb::FetchSessionCache cache(one_shard(10, /*max_partitions=*/3));
  EXPECT_EQ(create(cache, {part("a", 0), part("a", 1), part("a", 2), part("a", 3)}, 0), 0);
  const std::int32_t id = create(cache, {part("a", 0), part("a", 1)}, 0);
  ASSERT_NE(id, 0);
  auto grow = cache.new_context(request(id, 1, {part("b", 0), part("b", 1)}), no_names, 1);
  EXPECT_EQ(grow.error_code(), wb::code(wb::ErrorCode::kFetchSessionIdNotFound));
  EXPECT_FALSE(cache.contains(id));
  EXPECT_EQ(cache.cached_partitions(), 0);
}

TEST(FetchSession, DuplicatePartitionsKeepTheirFirstPlaceAndLastAsk) {
  std::vector<wb::FetchPartitionSpec> parts{part("a", 0, 1), part("b", 0, 2), part("a", 0, 3)};
  wb::dedupe_fetch_partitions(parts);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].topic, "a");
  EXPECT_EQ(parts[0].fetch_offset, 3);
  EXPECT_EQ(parts[1].topic, "b");
}

TEST(FetchSession, APartitionWhoseLastStableOffsetMovedIsSentAgain) {
  wb::FetchSessionCache cache(wb::FetchSessionConfig{.seed = 1});
  auto full = cache.new_context(request(0, 0, {part("a", 0), part("a", 1)}), no_names, 0);
  auto first = outcomes({{10, false}, {10, false}});
  for (auto& o : first) o.last_stable_offset = 4;  // an open transaction at offset 4 on both
  const std::int32_t id = cache.finish(full, first, 0).session_id;
  ASSERT_GT(id, 0);
  // Partition 1's transaction ends: only its last stable offset moves.
  auto ctx = cache.new_context(request(id, 1), no_names, 0);
  ASSERT_EQ(ctx.kind(), Kind::kIncremental);
  auto next = outcomes({{10, false}, {10, false}});
  next[0].last_stable_offset = 4;
  next[1].last_stable_offset = 10;
  EXPECT_EQ(cache.finish(ctx, next, 0).send, (std::vector<std::size_t>{1}));
  // Unchanged since: nothing to send.
  auto again = cache.new_context(request(id, 2), no_names, 0);
  auto same = outcomes({{10, false}, {10, false}});
  same[0].last_stable_offset = 4;
  same[1].last_stable_offset = 10;
  EXPECT_TRUE(cache.finish(again, same, 0).send.empty());
}
