// weir_sim: a deterministic simulation of one RF=3 partition replicated by weir's own classes.
//
// What runs is production code: Partition (leader side: appends, reads for followers, the
// ReplicaTracker's high watermark and ISR changes, acks=all completion in its purgatory;
// follower side: follower_fetch.h's position and answer handling, truncation, reset), the
// storage layer under it (LogManager, PartitionLog, recovery after a crash) over a
// FaultInjectingFileSystem that loses unsynced data on a crash, and MetadataImage replaying the
// metadata records each broker receives. Time is a ManualClock. What is modelled: the network (a
// seeded schedule of delays, drops, cut links), the producer client, and the controller: Kafka
// 4.3's KRaft partition rules with ELR off (fence on a missed session, the ISR shrinks by the
// fenced broker, a new leader from the ISR, no unclean election, AlterPartition checked against
// the leader and partition epochs and the members' broker epochs, unfence once caught up).
//
// Kills are kill -9 (the page cache survives) or, three times in ten, a power loss (unsynced data
// is lost, the last write may be torn). Every event is followed by the invariant checks; a broken
// one stops the run with the seed (those marked * are checked only until a seed's first power
// loss, see power_losses_):
//   - at most one leader per leader epoch;
//   - a leader's high watermark never decreases during its leadership; no replica's is above its
//     log end;
//   - * a follower never truncates below its own high watermark;
//   - * replicas agree below their high watermarks (byte for byte);
//   - every acks=all acknowledgement is durable in at least min.insync.replicas logs when sent;
//   - the ISR (the controller's, each broker's image and each leader's) is a subset of the replicas;
//   - at the end, with faults healed and the ISR back to 3: every acknowledged value is in the
//     log exactly once, and the three logs are identical.
//
// Usage: weir_sim [--seeds N] [--first S] [--duration-ms D] [--verbose] [--expect-violation]
//   --expect-violation: exit 0 only if some seed breaks an invariant (for the mutation builds,
//   compiled with WEIR_SIM_MUTATION_*; see tests/sim/README.md). A failing seed replays with
//   --first SEED --seeds 1 --verbose.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <ranges>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "base/uuid.h"
#include "broker/errors.h"
#include "broker/follower_fetch.h"
#include "broker/partition.h"
#include "metadata/image.h"
#include "metadata/metadata_record.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch_builder.h"
#include "storage/fault_file_system.h"
#include "storage/log_manager.h"

namespace weir::sim {
namespace {

using broker::code;
using broker::ErrorCode;
using broker::Partition;
namespace md = weir::metadata;

constexpr int kBrokers = 3;
constexpr int kController = 0;
constexpr int kClient = kBrokers + 1;
constexpr std::int32_t kMinIsr = 2;
constexpr std::int64_t kLagMs = 1000;       // replica.lag.time.max.ms
constexpr std::int64_t kSessionMs = 900;    // broker.session.timeout.ms
constexpr std::int64_t kHeartbeatMs = 100;  // broker.heartbeat.interval.ms
constexpr std::int64_t kRequestTimeoutMs = 1500;
constexpr std::int64_t kBackoffMs = 50;
// replica.fetch.max.bytes, below segment.bytes as with Kafka's defaults (1 MiB each at least).
constexpr std::int32_t kFetchMaxBytes = 2048;
const std::string kTopic = "t";
// The controller's answers (Kafka's error codes).
constexpr std::int16_t kStaleBrokerEpoch = 77;
constexpr std::int16_t kIneligibleReplica = 107;
constexpr std::int16_t kInvalidUpdateVersion = 95;

struct Violation : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// splitmix64: the same sequence on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {  // [lo, hi]
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return between(0, 99) < percent; }

 private:
  std::uint64_t s_;
};

struct Batch {
  std::int64_t base = 0;
  std::int64_t last = 0;
  std::string bytes;
  std::vector<std::string> values;
};

std::vector<Batch> split_batches(const std::vector<std::uint8_t>& data) {
  std::vector<Batch> out;
  record::BatchSplitter splitter(std::as_bytes(std::span(data)));
  for (;;) {
    auto next = splitter.next();
    if (!next) throw Violation("unreadable batch framing in a log");
    if (!*next) break;
    Batch b;
    b.base = (*next)->base_offset();
    b.last = (*next)->last_offset();
    const ByteSpan bytes = (*next)->bytes();
    b.bytes.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    auto ok = record::for_each_record(**next, [&](const record::RecordView& r) {
      b.values.emplace_back(r.value ? std::string(as_string_view(*r.value)) : std::string("<null>"));
    });
    if (!ok) throw Violation("unreadable records in a log");
    out.push_back(std::move(b));
  }
  return out;
}

// Every batch of the log from its start to `end` (its log end by default).
std::vector<Batch> read_log(const storage::PartitionLog& log, std::int64_t end = -1) {
  if (end < 0) end = log.log_end_offset();
  std::vector<Batch> all;
  std::int64_t next = log.log_start_offset();
  while (next < end) {
    auto read = log.read(next, 1 << 20, end, true);
    if (!read) throw Violation(fmt::format("log read at {} failed", next));
    std::vector<std::uint8_t> data;
    if (auto ok = read->append_to(data); !ok) throw Violation("log read copy failed");
    if (data.empty()) break;
    auto batches = split_batches(data);
    if (batches.empty()) break;
    for (auto& b : batches) {
      next = b.last + 1;
      all.push_back(std::move(b));
    }
  }
  return all;
}

std::vector<std::uint8_t> copy_records(const broker::PartitionRead& r) {
  std::vector<std::uint8_t> out;
  if (!r.records) return out;
  for (const auto& region : r.records->regions) {
    const std::size_t at = out.size();
    out.resize(at + static_cast<std::size_t>(region.size));
    const ssize_t n = ::pread(region.fd, out.data() + at, static_cast<std::size_t>(region.size), region.offset);
    if (n != static_cast<ssize_t>(region.size)) throw Violation("pread of a leader's records failed");
  }
  return out;
}

bool contains(const std::vector<std::int32_t>& v, std::int32_t x) { return std::ranges::find(v, x) != v.end(); }

struct Node {
  std::int32_t id = 0;
  std::filesystem::path dir;
  std::unique_ptr<storage::FaultInjectingFileSystem> fs;
  std::unique_ptr<storage::LogManager> logs;
  std::unique_ptr<Partition> part;
  md::MetadataImage image;
  std::int64_t md_offset = 0;
  bool md_in_flight = false;
  bool alive = false;
  int incarnation = 0;
  std::int64_t broker_epoch = -1;
  std::int64_t durable_floor = 0;  // everything below it survived a crash (present at open)
  std::int64_t last_hw = -1;       // the high watermark at the last check
  std::int32_t hw_epoch = -1;      // the leader epoch it was leading at then (-1: following)
  std::uint64_t fetch_in_flight = 0;
  std::uint64_t next_request = 1;
  std::int64_t backoff_until = 0;
  bool flush_scheduled = false;
  std::uint64_t alter_in_flight = 0;
  std::int64_t registered_at = 0;  // when the last BrokerRegistration went out
};

struct CtlBroker {
  std::int64_t epoch = -1;
  bool fenced = true;
  std::int64_t last_heartbeat = 0;
  std::int64_t registered_at_offset = 0;
};

struct Options {
  std::uint64_t first_seed = 1;
  std::int64_t seeds = 100;
  std::int64_t duration_ms = 15000;
  bool verbose = false;
  bool expect_violation = false;
};

class Sim {
 public:
  Sim(std::uint64_t seed, std::filesystem::path dir, const Options& o)
      : rng_(seed), dir_(std::move(dir)), options_(o), topic_id_(Uuid::random(uuid_rng_)) {}

  void run();
  [[nodiscard]] std::int64_t acked() const { return static_cast<std::int64_t>(acked_.size()); }
  [[nodiscard]] std::int64_t events() const { return events_; }
  [[nodiscard]] std::int64_t crashes() const { return crashes_; }
  [[nodiscard]] std::int64_t truncations() const { return truncations_; }
  [[nodiscard]] std::int64_t leader_changes() const { return static_cast<std::int64_t>(leaders_.size()); }

 private:
  struct Event {
    std::int64_t at;
    std::uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  void trace(const std::string& line) {
    if (options_.verbose) std::fprintf(stderr, "%8lld %s\n", static_cast<long long>(clock_.now_ms()), line.c_str());
  }
  void at(std::int64_t delay, std::function<void()> fn) {
    queue_.push(Event{clock_.now_ms() + std::max<std::int64_t>(0, delay), seq_++, std::move(fn)});
  }
  // Runs fn on broker b after `delay` if it is still the same process then.
  void on_node(Node& n, std::int64_t delay, std::function<void()> fn) {
    const int inc = n.incarnation;
    at(delay, [this, &n, inc, fn = std::move(fn)]() {
      if (n.alive && n.incarnation == inc) fn();
    });
  }
  [[nodiscard]] bool link_up(int a, int b) const {
    const auto key = std::minmax(a, b);
    auto it = cut_until_.find({key.first, key.second});
    return it == cut_until_.end() || it->second <= clock_.now_ms();
  }
  [[nodiscard]] int incarnation_of(int id) const { return id >= 1 && id <= kBrokers ? node(id).incarnation : 0; }
  [[nodiscard]] bool node_alive(int id) const { return id < 1 || id > kBrokers || node(id).alive; }
  // A message from `from` to `to`: lost when the link is cut (at sending or arrival), sometimes
  // dropped, and when either end is a broker that died meanwhile (its connections went with it).
  void send(int from, int to, std::function<void()> deliver) {
    if (!link_up(from, to) || !node_alive(from)) return;
    if (rng_.chance(2)) return;
    const int inc_from = incarnation_of(from);
    const int inc_to = incarnation_of(to);
    std::int64_t delay = rng_.between(1, 25);
    if (rng_.chance(5)) delay += rng_.between(50, 400);
    at(delay, [this, from, to, inc_from, inc_to, deliver = std::move(deliver)]() {
      if (!link_up(from, to) || !node_alive(to) || !node_alive(from)) return;
      if (incarnation_of(from) != inc_from || incarnation_of(to) != inc_to) return;
      deliver();
    });
  }
  Node& node(int id) { return nodes_[static_cast<std::size_t>(id - 1)]; }
  [[nodiscard]] const Node& node(int id) const { return nodes_[static_cast<std::size_t>(id - 1)]; }

  // ---- the controller (a model of Kafka's) ----
  void ctl_write(md::MetadataRecord r) {
    if (auto ok = ctl_image_.replay(r); !ok) throw Violation("the controller wrote a record its image refuses");
    ctl_log_.push_back(std::move(r));
  }
  [[nodiscard]] const md::PartitionImage& ctl_partition() const { return ctl_image_.topic(topic_id_)->partitions[0]; }
  void ctl_change(std::optional<std::vector<std::int32_t>> isr, std::int32_t leader) {
    protocol::PartitionChangeRecord r;
    r.partition_id = 0;
    r.topic_id = topic_id_;
    r.isr = std::move(isr);
    r.leader = leader;
    ctl_write(r);
    const auto& p = ctl_partition();
    trace(fmt::format("controller: leader={} epoch={} isr=[{}] partition_epoch={}", p.leader, p.leader_epoch,
                      fmt::join(p.isr, ","), p.partition_epoch));
  }
  void ctl_fence(std::int32_t id) {
    CtlBroker& b = ctl_brokers_[id];
    if (b.fenced) return;
    b.fenced = true;
    protocol::FenceBrokerRecord f;
    f.id = id;
    f.epoch = b.epoch;
    ctl_write(f);
    trace(fmt::format("controller: broker {} fenced", id));
    const md::PartitionImage p = ctl_partition();
    if (!contains(p.isr, id) && p.leader != id) return;
    std::vector<std::int32_t> isr = p.isr;
    std::erase(isr, id);
    if (isr.empty()) isr = p.isr;  // the last member stays (ELR off): no leader until it returns
    std::int32_t leader = md::kNoLeaderChange;
    if (p.leader == id) {
      leader = md::kNoLeader;
      for (std::int32_t r : p.replicas) {
        if (r != id && contains(isr, r) && !ctl_brokers_[r].fenced) {
          leader = r;
          break;
        }
      }
    }
    if (isr != p.isr || leader != md::kNoLeaderChange)
      ctl_change(isr != p.isr ? std::optional(isr) : std::nullopt, leader);
  }
  void ctl_unfence(std::int32_t id) {
    CtlBroker& b = ctl_brokers_[id];
    b.fenced = false;
    protocol::UnfenceBrokerRecord u;
    u.id = id;
    u.epoch = b.epoch;
    ctl_write(u);
    trace(fmt::format("controller: broker {} unfenced", id));
    const md::PartitionImage& p = ctl_partition();
    if (p.leader == md::kNoLeader && contains(p.isr, id)) ctl_change(std::nullopt, id);
  }
  void ctl_register(std::int32_t id, int inc) {
    CtlBroker& b = ctl_brokers_[id];
    if (!b.fenced) ctl_fence(id);  // a new incarnation: the old one is fenced first
    b.epoch = next_broker_epoch_++;
    b.last_heartbeat = clock_.now_ms();
    protocol::RegisterBrokerRecord r;
    r.broker_id = id;
    r.broker_epoch = b.epoch;
    r.fenced = true;
    r.incarnation_id = Uuid::random(uuid_rng_);
    ctl_write(r);
    b.registered_at_offset = static_cast<std::int64_t>(ctl_log_.size());
    const std::int64_t epoch = b.epoch;
    send(kController, id, [this, id, inc, epoch]() {
      Node& n = node(id);
      if (n.incarnation == inc) n.broker_epoch = epoch;
    });
  }
  void ctl_heartbeat(std::int32_t id, std::int64_t epoch, std::int64_t offset) {
    CtlBroker& b = ctl_brokers_[id];
    if (epoch != b.epoch) return;
    b.last_heartbeat = clock_.now_ms();
    if (b.fenced && offset >= b.registered_at_offset) ctl_unfence(id);
  }
  void ctl_check_sessions() {
    for (auto& [id, b] : ctl_brokers_) {
      if (!b.fenced && clock_.now_ms() - b.last_heartbeat > kSessionMs) ctl_fence(id);
    }
  }
  struct AlterAnswer {
    std::int16_t error = 0;
    std::vector<std::int32_t> isr;
    std::int32_t partition_epoch = -1;
  };
  AlterAnswer ctl_alter(std::int32_t from, std::int64_t broker_epoch, const broker::IsrProposal& proposal) {
    const CtlBroker& sender = ctl_brokers_[from];
    if (sender.epoch != broker_epoch) return {kStaleBrokerEpoch, {}, -1};
    const md::PartitionImage& p = ctl_partition();
    if (p.leader != from) return {code(ErrorCode::kNotLeaderOrFollower), {}, -1};
    if (proposal.leader_epoch < p.leader_epoch) return {code(ErrorCode::kFencedLeaderEpoch), {}, -1};
    if (proposal.partition_epoch != p.partition_epoch) return {kInvalidUpdateVersion, {}, -1};
    std::vector<std::int32_t> isr;
    for (const broker::IsrMember& m : proposal.new_isr) {
      if (!contains(p.replicas, m.broker_id)) return {code(ErrorCode::kInvalidRequest), {}, -1};
      if (!contains(p.isr, m.broker_id)) {
        const CtlBroker& joining = ctl_brokers_[m.broker_id];
        if (joining.fenced || (m.broker_epoch != -1 && m.broker_epoch != joining.epoch)) {
          return {kIneligibleReplica, {}, -1};
        }
      }
      isr.push_back(m.broker_id);
    }
    if (!contains(isr, from)) return {code(ErrorCode::kInvalidRequest), {}, -1};
    if (isr != p.isr) ctl_change(isr, md::kNoLeaderChange);
    return {0, ctl_partition().isr, ctl_partition().partition_epoch};
  }

  // ---- brokers ----
  storage::LogConfig log_config() const {
    storage::LogConfig c;
    c.min_insync_replicas = kMinIsr;
    c.segment_bytes = 8192;  // many rolls: recovery and truncation cross segments
    return c;
  }
  void open_logs(Node& n) {
    storage::LogManagerOptions o;
    o.default_config = log_config();
    auto opened = storage::LogManager::open(*n.fs, n.dir, clock_, o);
    if (!opened) throw Violation(fmt::format("broker {}: the log directory did not open after a crash", n.id));
    n.logs = std::move(*opened);
    if (auto* log = n.logs->get(storage::TopicPartition{kTopic, 0})) n.durable_floor = log->log_end_offset();
  }
  void start(Node& n) {
    n.alive = true;
    ++n.incarnation;
    if (!n.logs) open_logs(n);
    n.part.reset();
    n.image = md::MetadataImage();
    n.md_offset = 0;
    n.md_in_flight = false;
    n.broker_epoch = -1;
    n.last_hw = -1;
    n.hw_epoch = -1;
    n.fetch_in_flight = 0;
    n.backoff_until = 0;
    n.flush_scheduled = false;
    n.alter_in_flight = 0;
    if (auto* log = n.logs->get(storage::TopicPartition{kTopic, 0})) {
      std::string epochs;
      for (const auto& [e, o] : log->epoch_entries()) epochs += fmt::format("{}@{} ", e, o);
      trace(fmt::format("broker {} starts (incarnation {}), log end {}, epochs {}", n.id, n.incarnation,
                        log->log_end_offset(), epochs));
    } else {
      trace(fmt::format("broker {} starts (incarnation {})", n.id, n.incarnation));
    }
    register_broker(n);
    tick(n);
  }
  [[nodiscard]] static std::string epochs_of(const Node& n) {
    std::string out;
    if (!n.part) return out;
    for (const auto& [e, o] : n.part->log().epoch_entries()) out += fmt::format("{}@{} ", e, o);
    return out;
  }
  // A broker serves clients and followers only once unfenced at its current registration (as
  // weir's server waits for it, and Kafka's BrokerServer): before that its image may still name
  // it the leader of an epoch that has ended.
  [[nodiscard]] static bool running(const Node& n) {
    if (n.broker_epoch < 0) return false;
    const md::BrokerRegistration* b = n.image.broker(n.id);
    return b != nullptr && b->broker_epoch == n.broker_epoch && !n.image.is_fenced(n.id);
  }
  void register_broker(Node& n) {
    n.registered_at = clock_.now_ms();
    send(n.id, kController, [this, id = n.id, inc = n.incarnation]() { ctl_register(id, inc); });
  }
  void crash(Node& n) {
    if (n.part) {
      trace(fmt::format("broker {} killed (log end {}, recovery point {}, hw {}, {} segments, active at {})", n.id,
                        n.part->log().log_end_offset(), n.part->log().recovery_point(), n.part->high_watermark(),
                        n.part->log().segment_count(), n.part->log().active_segment_base_offset()));
    } else {
      trace(fmt::format("broker {} killed", n.id));
    }
    ++crashes_;
    n.alive = false;
    n.part.reset();
    n.logs.reset();
    // kill -9 keeps what the process wrote (the page cache survives it); a power loss drops
    // every unsynced byte, and may tear the last write of a file.
    const int kind = static_cast<int>(rng_.between(0, 9));
    if (kind >= 7) {
      ++power_losses_;
      n.fs->crash(kind == 9 ? storage::CrashMode::kTearLastWrite : storage::CrashMode::kDropUnsynced);
    }
    if (options_.verbose) {
      auto text = storage::read_file(*n.fs, n.dir / "t-0" / "leader-epoch-checkpoint", 1 << 20);
      trace(fmt::format("broker {} leader-epoch-checkpoint after the crash: {}", n.id,
                        text ? *text : std::string("(unreadable)")));
    }
    // The restart's recovery runs now, so that what survived can be counted while it is down.
    open_logs(n);
  }
  // The periodic work of a running broker (one loop; each part at its own interval).
  void tick(Node& n) {
    on_node(n, 10, [this, &n]() {
      const std::int64_t now = clock_.now_ms();
      if (n.broker_epoch < 0 && now - n.registered_at > kRequestTimeoutMs) register_broker(n);
      if (n.broker_epoch >= 0 && now % kHeartbeatMs < 10) {
        send(n.id, kController, [this, id = n.id, e = n.broker_epoch, o = n.md_offset]() { ctl_heartbeat(id, e, o); });
      }
      if (!n.md_in_flight) fetch_metadata(n);
      if (n.part && n.part->is_leader() && now % (kLagMs / 2) < 10) propose(n, n.part->maybe_shrink_isr());
      if (now % 500 < 10) (void)n.logs->write_checkpoints();
      follower_fetch(n);
      tick(n);
    });
  }
  void fetch_metadata(Node& n) {
    n.md_in_flight = true;
    const std::int64_t from = n.md_offset;
    const int inc = n.incarnation;
    send(n.id, kController, [this, id = n.id, from, inc]() {
      std::vector<md::MetadataRecord> records(ctl_log_.begin() + from, ctl_log_.end());
      send(kController, id, [this, id, inc, from, records = std::move(records)]() {
        Node& m = node(id);
        if (m.incarnation != inc || m.md_offset != from) return;  // a late answer to an older request
        m.md_in_flight = false;
        for (const auto& r : records) {
          if (auto ok = m.image.replay(r); !ok) throw Violation(fmt::format("broker {}: image refused a record", id));
          ++m.md_offset;
        }
        if (!records.empty()) apply_metadata(m);
      });
    });
    // A lost request or answer: asked again after the timeout.
    on_node(n, kRequestTimeoutMs, [&n, inc, from]() {
      if (n.incarnation == inc && n.md_in_flight && n.md_offset == from) n.md_in_flight = false;
    });
  }
  void apply_metadata(Node& n) {
    const md::TopicImage* t = n.image.topic(topic_id_);
    if (t == nullptr) return;
    const md::PartitionImage& p = t->partitions[0];
    if (!contains(p.replicas, n.id)) return;
    if (!n.part) {
      auto log = n.logs->create(storage::TopicPartition{kTopic, 0}, topic_id_, log_config());
      if (!log) throw Violation(fmt::format("broker {}: partition create failed", n.id));
      n.part = std::make_unique<Partition>(kTopic, topic_id_, 0, p.leader_epoch, *log);
      n.part->set_replication_options(kLagMs, /*durable_acks=*/true);
    }
    std::vector<std::int32_t> eligible;
    for (const auto& [id, b] : n.image.brokers()) {
      if (!n.image.is_fenced(id) && !n.image.in_controlled_shutdown(id)) eligible.push_back(id);
    }
    const auto change = n.part->apply_leadership(
        broker::Leadership{n.id, p.leader, p.leader_epoch, p.partition_epoch, p.replicas, p.isr, eligible});
    if (change == Partition::RoleChange::kBecameLeader) {
      trace(fmt::format("broker {} leads at epoch {} (log end {}, hw {}), epochs {}", n.id, p.leader_epoch,
                        n.part->log().log_end_offset(), n.part->high_watermark(), epochs_of(n)));
    }
  }
  void propose(Node& n, std::optional<broker::IsrProposal> proposal) {
    if (!proposal || n.broker_epoch < 0) {
      // The change stays "in flight" in the tracker otherwise: answer it as failed.
      if (proposal) n.part->isr_change_answered(code(ErrorCode::kRequestTimedOut), {}, -1);
      return;
    }
    const std::uint64_t id = n.next_request++;
    n.alter_in_flight = id;
    trace(fmt::format("broker {} asks isr=[{}]", n.id,
                      fmt::join(proposal->new_isr | std::views::transform([](auto& m) { return m.broker_id; }), ",")));
    const std::int32_t epoch = proposal->leader_epoch;
    send(n.id, kController, [this, from = n.id, be = n.broker_epoch, proposal = *proposal, id, epoch]() {
      const AlterAnswer a = ctl_alter(from, be, proposal);
      send(kController, from, [this, from, a, id, epoch]() {
        Node& m = node(from);
        if (m.alter_in_flight != id) return;
        m.alter_in_flight = 0;
        if (m.part && m.part->is_leader() && m.part->leader_epoch() == epoch) {
          trace(fmt::format("broker {} hears: error {} isr [{}] partition epoch {}", m.id, a.error,
                            fmt::join(a.isr, ","), a.partition_epoch));
          m.part->isr_change_answered(a.error, a.isr, a.partition_epoch);
        }
      });
    });
    on_node(n, kRequestTimeoutMs, [&n, id, epoch]() {
      if (n.alter_in_flight != id) return;
      n.alter_in_flight = 0;
      if (n.part && n.part->is_leader() && n.part->leader_epoch() == epoch) {
        n.part->isr_change_answered(code(ErrorCode::kRequestTimedOut), {}, -1);
      }
    });
  }

  // Follower: one fetch at a time to the leader the metadata names, after syncing (durable).
  void follower_fetch(Node& n) {
    if (!n.part || n.part->is_leader() || n.part->leader_id() < 0 || n.fetch_in_flight != 0 || n.broker_epoch < 0 ||
        clock_.now_ms() < n.backoff_until) {
      return;
    }
    const std::uint64_t id = n.next_request++;
    n.fetch_in_flight = id;
    if (broker::follower_must_sync(*n.part, true)) {
      on_node(n, rng_.between(1, 15), [this, &n, id]() {
        if (n.fetch_in_flight != id) return;
        n.fetch_in_flight = 0;
        if (!n.part) return;
        if (!n.part->log().flush()) throw Violation(fmt::format("broker {}: flush failed", n.id));
      });
      return;
    }
    const broker::FollowerPosition pos = broker::follower_position(*n.part);
    const std::int32_t leader = n.part->leader_id();
    const std::int32_t epoch = n.part->leader_epoch();
    broker::FollowerFetch f{n.id,  n.broker_epoch, pos.fetch_offset, pos.log_start_offset, pos.last_fetched_epoch,
                            epoch, kFetchMaxBytes};
    send(n.id, leader, [this, leader, f, id, from = n.id]() { leader_read(node(leader), f, id, from, true); });
    on_node(n, kRequestTimeoutMs, [&n, id]() {
      if (n.fetch_in_flight == id) n.fetch_in_flight = 0;
    });
  }
  // Leader: a follower's fetch (long poll: an empty read is tried once more a little later).
  void leader_read(Node& leader, const broker::FollowerFetch& f, std::uint64_t id, std::int32_t to, bool may_wait) {
    broker::LeaderAnswer answer;
    std::vector<std::uint8_t> bytes;
    if (!leader.part || !running(leader)) {
      answer.error = code(ErrorCode::kNotLeaderOrFollower);
    } else {
      broker::PartitionRead r = leader.part->read_for_follower(f);
      propose(leader, std::move(r.isr_change));
      if (r.error == 0 && !r.diverging && !r.records && may_wait) {
        on_node(leader, rng_.between(5, 100), [this, &leader, f, id, to]() { leader_read(leader, f, id, to, false); });
        return;
      }
      answer.error = r.error;
      if (r.diverging) {
        answer.diverging_epoch = r.diverging->first;
        answer.diverging_end_offset = r.diverging->second;
      }
      bytes = copy_records(r);
      answer.high_watermark = r.high_watermark;
      answer.log_start_offset = r.log_start_offset;
    }
    send(leader.id, to, [this, to, id, answer, bytes = std::move(bytes), epoch = f.current_leader_epoch]() mutable {
      Node& n = node(to);
      if (n.fetch_in_flight != id) return;
      n.fetch_in_flight = 0;
      if (!n.part || n.part->is_leader() || n.part->leader_epoch() != epoch) return;
      answer.records = std::as_bytes(std::span<const std::uint8_t>(bytes));
      const std::int64_t hw_before = n.part->high_watermark();
      const broker::FollowerOutcome out = broker::apply_leader_answer(*n.part, answer);
      if (out.step == broker::FollowerStep::kTruncated) {
        ++truncations_;
        trace(fmt::format("broker {} truncated to {} (diverging epoch {} end {}); epochs {}", n.id,
                          n.part->log().log_end_offset(), answer.diverging_epoch, answer.diverging_end_offset,
                          epochs_of(n)));
        check_truncation(n, hw_before);
      } else if (out.step == broker::FollowerStep::kOutOfRange) {
        reset_from_leader(n, epoch);
      } else if (out.step == broker::FollowerStep::kBackOff) {
        trace(fmt::format("broker {} backs off: error {} {}", n.id, out.error, out.message));
        n.backoff_until = clock_.now_ms() + kBackoffMs;
      }
    });
  }
  void reset_from_leader(Node& n, std::int32_t epoch) {
    const std::int32_t leader = n.part->leader_id();
    const std::uint64_t id = n.next_request++;
    n.fetch_in_flight = id;
    send(n.id, leader, [this, leader, id, epoch, to = n.id]() {
      Node& l = node(leader);
      if (!l.part || !running(l) || !l.part->is_leader() || l.part->leader_epoch() != epoch) return;
      const std::int64_t start = l.part->log().log_start_offset();
      const std::int64_t end = l.part->log().log_end_offset();
      send(leader, to, [this, to, id, epoch, start, end]() {
        Node& m = node(to);
        if (m.fetch_in_flight != id) return;
        m.fetch_in_flight = 0;
        if (!m.part || m.part->is_leader() || m.part->leader_epoch() != epoch) return;
        const std::int64_t hw_before = m.part->high_watermark();
        if (m.part->reset_to_leader(start, end) != 0) m.backoff_until = clock_.now_ms() + kBackoffMs;
        check_truncation(m, hw_before);
      });
    });
    on_node(n, kRequestTimeoutMs, [&n, id]() {
      if (n.fetch_in_flight == id) n.fetch_in_flight = 0;
    });
  }

  // ---- the producer ----
  void produce() {
    if (clock_.now_ms() >= options_.duration_ms) return;
    at(rng_.between(2, 30), [this]() {
      produce();
      if (outstanding_ >= 8) return;
      // The client's metadata: what some broker it can reach last told it.
      const int asked = static_cast<int>(rng_.between(1, kBrokers));
      const Node& a = node(asked);
      if (!a.alive || !link_up(kClient, asked)) return;
      const md::TopicImage* t = a.image.topic(topic_id_);
      if (t == nullptr || t->partitions[0].leader < 1) return;
      const int leader = t->partitions[0].leader;
      const bool all = rng_.chance(85);
      const std::string value = fmt::format("v{}", next_value_++);
      ++outstanding_;
      auto finished = std::make_shared<bool>(false);
      auto finish = [this, finished]() {
        if (*finished) return;
        *finished = true;
        --outstanding_;
      };
      send(kClient, leader, [this, leader, all, value, finish]() { leader_append(node(leader), value, all, finish); });
      at(kRequestTimeoutMs + 100, finish);  // no answer: the client gives up on it
    });
  }
  // The leader's side of a Produce; `answered` runs at the client when the answer arrives.
  void leader_append(Node& n, const std::string& value, bool all, std::function<void()> answered_at_client) {
    auto answer = [this, &n, answered_at_client]() { send(n.id, kClient, answered_at_client); };
    if (!n.part || !running(n) || !n.part->is_leader() || (all && n.part->under_min_isr())) {
      answer();  // NOT_LEADER_OR_FOLLOWER / NOT_ENOUGH_REPLICAS
      return;
    }
    record::RecordBatchBuilder builder;
    builder.append(clock_.wall_ms(), std::nullopt, as_bytes(value));
    std::vector<std::byte> batch = builder.build();
    const broker::PartitionAppend a = n.part->append(batch, broker::AppendOrigin::kClient);
    if (a.error != 0 || !all) {
      answer();
      return;
    }
    const std::int64_t offset = a.end_offset - 1;
    const int inc = n.incarnation;
    auto answered = std::make_shared<bool>(false);
    n.part->purgatory()->add(a.end_offset,
                             [this, &n, inc, value, offset, answered, answered_at_client](std::int16_t error) {
                               if (*answered || n.incarnation != inc) return;
                               *answered = true;
                               if (error != 0) {
                                 send(n.id, kClient, answered_at_client);
                                 return;
                               }
                               check_ack(value, offset);
                               send(n.id, kClient, [this, value, offset, answered_at_client]() {
                                 trace(fmt::format("acked {} at {}", value, offset));
                                 acked_[value] = offset;
                                 answered_at_client();
                               });
                             });
    on_node(n, kRequestTimeoutMs, [answered]() { *answered = true; });  // REQUEST_TIMED_OUT
    if (!n.flush_scheduled) {
      n.flush_scheduled = true;
      on_node(n, rng_.between(1, 15), [this, &n]() {
        n.flush_scheduled = false;
        if (!n.part) return;
        if (!n.part->log().flush()) throw Violation(fmt::format("broker {}: flush failed", n.id));
        n.part->complete_acks();
      });
    }
  }

  // ---- faults ----
  void faults() {
    at(rng_.between(200, 1500), [this]() {
      if (clock_.now_ms() >= options_.duration_ms) return;
      faults();
      const int kind = static_cast<int>(rng_.between(0, 9));
      if (kind <= 4) {
        std::vector<int> up;
        for (int i = 1; i <= kBrokers; ++i) {
          if (node(i).alive) up.push_back(i);
        }
        if (up.size() < 2) return;  // at most two down at once
        Node& victim = node(up[static_cast<std::size_t>(rng_.between(0, static_cast<std::int64_t>(up.size()) - 1))]);
        // The leader more often than not: that is where the interesting cases are.
        Node* target = &victim;
        for (int i = 1; i <= kBrokers; ++i) {
          if (node(i).alive && node(i).part && node(i).part->is_leader() && rng_.chance(60)) target = &node(i);
        }
        crash(*target);
        const std::int32_t id = target->id;
        at(rng_.between(100, 2500), [this, id]() {
          if (!node(id).alive) start(node(id));
        });
      } else {
        const int a = static_cast<int>(rng_.between(0, kClient));
        int b = static_cast<int>(rng_.between(0, kClient));
        if (a == b) b = (b + 1) % (kClient + 1);
        if ((a == kController || a == kClient) && (b == kController || b == kClient)) return;
        const auto key = std::minmax(a, b);
        const std::int64_t until = clock_.now_ms() + rng_.between(100, 2500);
        cut_until_[{key.first, key.second}] = until;
        trace(fmt::format("link {}-{} cut until {}", key.first, key.second, until));
      }
    });
  }

  // ---- invariants ----
  // A replica durably holds the batch of `offset` with `value`.
  [[nodiscard]] bool holds(Node& n, const std::string& value, std::int64_t offset) {
    storage::PartitionLog* log = n.logs ? n.logs->get(storage::TopicPartition{kTopic, 0}) : nullptr;
    if (log == nullptr || offset >= log->log_end_offset() || offset < log->log_start_offset()) return false;
    const bool durable = !n.alive || offset < log->recovery_point() || offset < n.durable_floor;
    if (!durable) return false;
    auto read = log->read(offset, 1 << 16, offset + 1, true);
    if (!read) return false;
    std::vector<std::uint8_t> data;
    if (!read->append_to(data)) return false;
    for (const Batch& b : split_batches(data)) {
      if (b.base <= offset && offset <= b.last) return b.values.size() == 1 && b.values[0] == value;
    }
    return false;
  }
  void check_ack(const std::string& value, std::int64_t offset) {
    int copies = 0;
    for (Node& n : nodes_) copies += holds(n, value, offset) ? 1 : 0;
    if (copies < kMinIsr) {
      throw Violation(
          fmt::format("acks=all acknowledged {} at offset {} durable in only {} log(s)", value, offset, copies));
    }
  }
  void check_truncation(Node& n, std::int64_t hw_before) {
    if (power_losses_ == 0 && n.part->log().log_end_offset() < hw_before) {
      throw Violation(fmt::format("broker {} truncated to {}, below its high watermark {}", n.id,
                                  n.part->log().log_end_offset(), hw_before));
    }
  }
  void check_step() {
    const md::PartitionImage& cp = ctl_partition();
    for (std::int32_t m : cp.isr) {
      if (!contains(cp.replicas, m)) throw Violation("the controller's ISR is not a subset of the replicas");
    }
    for (Node& n : nodes_) {
      if (!n.alive || !n.part) continue;
      const std::int64_t hw = n.part->high_watermark();
      const std::int64_t leo = n.part->log().log_end_offset();
      if (hw > leo) throw Violation(fmt::format("broker {}: high watermark {} above its log end {}", n.id, hw, leo));
      // A leader's high watermark never goes back during its leadership. (A follower's follows
      // its leader's, down too, as Kafka's maybeUpdateHighWatermark: a new leader may start
      // below what the old one had reached.)
      const std::int32_t leading = n.part->is_leader() ? n.part->leader_epoch() : -1;
      if (leading >= 0 && leading == n.hw_epoch && hw < n.last_hw) {
        throw Violation(fmt::format("broker {}: the leader's high watermark went back {} -> {} at epoch {}", n.id,
                                    n.last_hw, hw, leading));
      }
      if (hw != n.last_hw) {
        hw_moved_ = true;
        if (options_.verbose && leading >= 0) {
          std::string followers;
          for (const auto& f : n.part->replicas().followers()) {
            followers += fmt::format("{}:{}@{} ", f.id, f.log_end_offset, f.last_caught_up_ms);
          }
          trace(fmt::format("broker {} (leader at {}) high watermark {} isr [{}] followers {}", n.id, leading, hw,
                            fmt::join(n.part->replicas().maximal_isr(), ","), followers));
        }
      }
      n.last_hw = hw;
      n.hw_epoch = leading;
      if (const md::TopicImage* t = n.image.topic(topic_id_)) {
        for (std::int32_t m : t->partitions[0].isr) {
          if (!contains(t->partitions[0].replicas, m))
            throw Violation("an image's ISR is not a subset of the replicas");
        }
      }
      if (n.part->is_leader()) {
        const std::int32_t e = n.part->leader_epoch();
        auto [it, fresh] = leaders_.emplace(e, n.id);
        if (!fresh && it->second != n.id) {
          throw Violation(fmt::format("two leaders at epoch {}: brokers {} and {}", e, it->second, n.id));
        }
        for (std::int32_t m : n.part->replicas().maximal_isr()) {
          if (!contains(n.part->replicas().replicas(), m))
            throw Violation("a leader's ISR is not a subset of the replicas");
        }
      }
    }
    if (power_losses_ == 0 && hw_moved_ && ++since_agreement_ >= 1) {
      since_agreement_ = 0;
      hw_moved_ = false;
      check_agreement();
    }
  }
  // Below its high watermark every replica holds the committed log: the same bytes everywhere.
  void check_agreement() {
    for (Node& n : nodes_) {
      if (!n.alive || !n.part) continue;
      for (Batch& b : read_log(n.part->log(), n.part->high_watermark())) {
        if (b.last >= n.part->high_watermark()) break;
        auto [it, fresh] = committed_.emplace(b.base, b.bytes);
        if (!fresh && it->second != b.bytes) {
          throw Violation(
              fmt::format("broker {}: the batch at {} below its high watermark {} differs from the one "
                          "committed there",
                          n.id, b.base, n.part->high_watermark()));
        }
      }
    }
  }
  [[nodiscard]] bool converged() {
    const md::PartitionImage& cp = ctl_partition();
    if (cp.leader < 1 || cp.isr.size() != static_cast<std::size_t>(kBrokers)) return false;
    std::int64_t end = -1;
    for (Node& n : nodes_) {
      if (!n.alive || !n.part || n.broker_epoch < 0) return false;
      const std::int64_t leo = n.part->log().log_end_offset();
      if (end >= 0 && leo != end) return false;
      end = leo;
      if (n.part->high_watermark() != leo) return false;
      if (n.part->leader_epoch() != cp.leader_epoch) return false;
    }
    return true;
  }
  void check_final() {
    std::vector<std::vector<Batch>> logs;
    for (Node& n : nodes_) logs.push_back(read_log(n.part->log()));
    for (std::size_t i = 1; i < logs.size(); ++i) {
      if (logs[i].size() != logs[0].size()) {
        std::size_t k = 0;
        while (k < logs[0].size() && k < logs[i].size() && logs[0][k].bytes == logs[i][k].bytes) ++k;
        throw Violation(
            fmt::format("the logs differ after healing: broker 1 has {} batches, broker {} {}; the first "
                        "difference is batch {} (offsets {} / {})",
                        logs[0].size(), i + 1, logs[i].size(), k, k < logs[0].size() ? logs[0][k].base : -1,
                        k < logs[i].size() ? logs[i][k].base : -1));
      }
      for (std::size_t k = 0; k < logs[0].size(); ++k) {
        if (logs[i][k].bytes != logs[0][k].bytes) {
          throw Violation(fmt::format("the logs differ at offset {} after healing", logs[0][k].base));
        }
      }
    }
    std::map<std::string, std::int64_t> seen;
    std::int64_t expect = logs[0].empty() ? 0 : logs[0].front().base;
    for (const Batch& b : logs[0]) {
      if (b.base != expect) throw Violation(fmt::format("offset gap or repeat at {} (expected {})", b.base, expect));
      expect = b.last + 1;
      for (const std::string& v : b.values) {
        if (!seen.emplace(v, b.base).second) throw Violation(fmt::format("{} is in the log twice", v));
      }
    }
    for (const auto& [value, offset] : acked_) {
      auto it = seen.find(value);
      if (it == seen.end()) throw Violation(fmt::format("acknowledged {} (offset {}) is lost", value, offset));
      if (it->second != offset) {
        throw Violation(fmt::format("acknowledged {} at offset {} is at {} now", value, offset, it->second));
      }
    }
  }

  ManualClock clock_;
  Rng rng_;
  std::mt19937_64 uuid_rng_{7};
  std::filesystem::path dir_;
  Options options_;
  Uuid topic_id_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  std::uint64_t seq_ = 0;
  std::map<std::pair<int, int>, std::int64_t> cut_until_;
  std::vector<Node> nodes_;
  md::MetadataImage ctl_image_;
  std::vector<md::MetadataRecord> ctl_log_;
  std::map<std::int32_t, CtlBroker> ctl_brokers_;
  std::int64_t next_broker_epoch_ = 100;
  int outstanding_ = 0;
  std::int64_t next_value_ = 0;
  std::map<std::string, std::int64_t> acked_;
  std::map<std::int32_t, std::int32_t> leaders_;   // leader epoch -> broker
  std::map<std::int64_t, std::string> committed_;  // base offset -> batch bytes
  bool hw_moved_ = false;
  int since_agreement_ = 0;
  std::int64_t events_ = 0;
  std::int64_t crashes_ = 0;
  // Power losses so far: after one, only the guarantees for acknowledged writes are checked. The
  // high watermark counts the leader's unsynced data, as Kafka's does, so a leader that loses
  // power with the rest of its ISR down may come back without offsets consumers could read.
  std::int64_t power_losses_ = 0;
  std::int64_t truncations_ = 0;
};

void Sim::run() {
  nodes_.resize(kBrokers);
  for (int i = 1; i <= kBrokers; ++i) {
    Node& n = node(i);
    n.id = i;
    n.dir = dir_ / fmt::format("broker-{}", i);
    std::filesystem::create_directories(n.dir);
    n.fs = std::make_unique<storage::FaultInjectingFileSystem>();
  }
  protocol::TopicRecord t;
  t.name = kTopic;
  t.topic_id = topic_id_;
  ctl_write(t);
  protocol::PartitionRecord p;
  p.partition_id = 0;
  p.topic_id = topic_id_;
  p.replicas = {1, 2, 3};
  p.isr = {1, 2, 3};
  p.leader = static_cast<std::int32_t>(rng_.between(1, kBrokers));
  p.leader_epoch = 0;
  p.partition_epoch = 0;
  ctl_write(p);
  auto sessions = [this](auto&& self) -> void {
    at(50, [this, self]() {
      ctl_check_sessions();
      self(self);
    });
  };
  sessions(sessions);
  for (Node& n : nodes_) start(n);
  produce();
  faults();
  const std::int64_t deadline = options_.duration_ms + 60000;
  bool healed = false;
  while (!queue_.empty()) {
    Event e = queue_.top();
    queue_.pop();
    if (e.at > clock_.now_ms()) clock_.advance_ms(e.at - clock_.now_ms());
    e.fn();
    ++events_;
    check_step();
    if (clock_.now_ms() >= options_.duration_ms && !healed) {
      healed = true;
      trace("healing: links restored, every broker running");
      cut_until_.clear();
      for (Node& n : nodes_) {
        if (!n.alive) start(n);
      }
    }
    if (healed && outstanding_ == 0 && converged()) {
      if (power_losses_ == 0) check_agreement();
      check_final();
      return;
    }
    if (clock_.now_ms() > deadline) {
      const auto& cp = ctl_partition();
      std::string state;
      for (Node& n : nodes_) {
        state += fmt::format("; broker {}: alive={} epoch={} md_offset={}/{} ", n.id, n.alive, n.broker_epoch,
                             n.md_offset, ctl_log_.size());
        if (n.part) {
          state += fmt::format("leader={} epoch={} log_end={} hw={} fetching={}", n.part->leader_id(),
                               n.part->leader_epoch(), n.part->log().log_end_offset(), n.part->high_watermark(),
                               n.fetch_in_flight);
        }
      }
      throw Violation(fmt::format("no convergence 60 s after healing: leader {} isr [{}]{}", cp.leader,
                                  fmt::join(cp.isr, ","), state));
    }
  }
  throw Violation("the event queue ran dry");
}

int main_impl(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--seeds")
      o.seeds = std::stoll(value());
    else if (a == "--first")
      o.first_seed = std::stoull(value());
    else if (a == "--duration-ms")
      o.duration_ms = std::stoll(value());
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "--expect-violation")
      o.expect_violation = true;
    else
      throw std::invalid_argument("unknown argument " + a);
  }
  (void)log::set_level(o.verbose ? "info" : "off");
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/weir-sim-XXXXXX";
  const std::filesystem::path root = ::mkdtemp(pattern.data());
  std::int64_t acked = 0;
  std::int64_t events = 0;
  std::int64_t crashes = 0;
  std::int64_t truncations = 0;
  std::int64_t leaders = 0;
  int rc = o.expect_violation ? 1 : 0;
  for (std::int64_t k = 0; k < o.seeds; ++k) {
    const std::uint64_t seed = o.first_seed + static_cast<std::uint64_t>(k);
    const std::filesystem::path dir = root / fmt::format("seed-{}", seed);
    std::optional<std::string> broken;
    {
      Sim sim(seed, dir, o);
      try {
        sim.run();
      } catch (const Violation& v) {
        broken = v.what();
      }
      acked += sim.acked();
      events += sim.events();
      crashes += sim.crashes();
      truncations += sim.truncations();
      leaders += sim.leader_changes();
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (broken) {
      std::printf("seed %llu: invariant broken: %s\n  replay: weir_sim --first %llu --seeds 1 --verbose\n",
                  static_cast<unsigned long long>(seed), broken->c_str(), static_cast<unsigned long long>(seed));
      rc = o.expect_violation ? 0 : 1;
      break;
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  std::printf(
      "%s: seeds %llu..%llu, %lld events, %lld acknowledged acks=all writes, %lld kills, %lld leader epochs, "
      "%lld truncations\n",
      rc == 0 ? "ok" : "FAILED", static_cast<unsigned long long>(o.first_seed),
      static_cast<unsigned long long>(o.first_seed + static_cast<std::uint64_t>(o.seeds) - 1),
      static_cast<long long>(events), static_cast<long long>(acked), static_cast<long long>(crashes),
      static_cast<long long>(leaders), static_cast<long long>(truncations));
  if (o.expect_violation && rc != 0) std::printf("expected a broken invariant (a mutation build), found none\n");
  return rc;
}

}  // namespace
}  // namespace weir::sim

int main(int argc, char** argv) {
  try {
    return weir::sim::main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weir_sim: %s\n", e.what());
    return 2;
  }
}
