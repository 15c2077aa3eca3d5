// The broker keys weir knows: the one place where a broker config key is registered (see
// README.md). Types, defaults, validators, importance and update modes are Kafka 4.3.1's
// (KafkaConfig.configDef() and DynamicBrokerConfig; tests/scenario/test_config_parity.py compares
// them with Kafka's own definition); where weir's default differs on purpose the line says why and
// the parity test's table of differences lists it.
#include <cctype>
#include <limits>

#include "config/broker_config.h"
#include "config/java.h"

namespace weir::config {
namespace {

using I = Importance;
using M = UpdateMode;
using T = Type;

constexpr std::string_view kMaxLong = "9223372036854775807";
constexpr std::string_view kMaxInt = "2147483647";

constexpr std::string_view kProcessRoles[] = {"broker", "controller"};
constexpr std::string_view kCleanupPolicies[] = {"compact", "delete"};
constexpr std::string_view kCompressionTypes[] = {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"};
constexpr std::string_view kTimestampTypes[] = {"CreateTime", "LogAppendTime"};
// KIP-392: the replica selector weir implements (Kafka's own; custom classes cannot be loaded).
constexpr std::string_view kReplicaSelectors[] = {"org.apache.kafka.common.replica.RackAwareReplicaSelector"};

std::optional<std::string> gzip_level(std::string_view, const Value& value) {
  const std::int64_t n = std::get<std::int64_t>(value);
  if (n == -1 || (n >= 1 && n <= 9)) return std::nullopt;
  return std::string("Value must be between 1 and 9 or equal to -1");
}

// group.consumer.migration.policy: Kafka's CaseInsensitiveValidString over the policy names, which
// lists them upper-cased in its HashSet's order.
std::optional<std::string> migration_policy(std::string_view, const Value& value) {
  std::string s = std::get<std::string>(value);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s == "DISABLED" || s == "DOWNGRADE" || s == "UPGRADE" || s == "BIDIRECTIONAL") return std::nullopt;
  return std::string("String must be one of (case insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL");
}

// Kafka checks the voters' syntax elsewhere; the validator only names the shape.
std::optional<std::string> accept_any(std::string_view, const Value&) { return std::nullopt; }

constexpr KeyDef kBrokerKeys[] = {
    // Server basics.
    {"node.id", T::int32, "1", at_least(0), I::high,
     "The node's id. weir: defaults to 1 (Kafka requires it) so that `weir serve` runs without a config."},
    {"broker.id", T::int32, "-1", no_check(), I::high, "Alias of node.id; if both are set they must be equal."},
    {"process.roles", T::list, "broker,controller", list_of(kProcessRoles), I::high,
     "broker,controller (weir's default; Kafka requires the key): one node with its own local metadata log. "
     "broker: a broker under a KRaft controller quorum (controller.quorum.bootstrap.servers or "
     "controller.quorum.voters). controller alone is refused (weir's controller quorum comes later)."},
    {"controller.quorum.voters", T::list, "", custom(accept_any, "non-empty list"), I::high,
     "The quorum's voters, id@host:port,...; a broker-only node follows them (ignored with broker,controller)."},
    {"controller.quorum.bootstrap.servers", T::list, "", custom(accept_any, "non-empty list"), I::high,
     "Controllers a broker-only node contacts first, host:port,... (used instead of the voters when set)."},
    {"controller.listener.names", T::list, kNullDefault, no_check(), I::high,
     "Listener names of the controllers; required with process.roles=broker (the first one is used)."},
    {"controller.quorum.fetch.timeout.ms", T::int32, "2000", at_least(0), I::high,
     "A broker-only node looks for another controller when the leader answers no fetch this long."},
    {"controller.quorum.request.timeout.ms", T::int32, "2000", at_least(0), I::medium,
     "Timeout of a request to the controller quorum."},
    {"controller.quorum.retry.backoff.ms", T::int32, "20", at_least(0), I::low,
     "Wait before retrying a failed request to the quorum."},
    {"controller.quorum.fetch.max.bytes", T::int32, "1048576", at_least(1), I::low,
     "Largest metadata fetch response asked for."},
    {"controller.quorum.fetch.snapshot.max.bytes", T::int32, "1048576", at_least(1), I::low,
     "Largest metadata snapshot chunk asked for."},
    {"controller.quorum.election.timeout.ms", T::int32, "1000", at_least(0), I::high,
     "Accepted for compatibility (controllers only)."},
    {"controller.quorum.election.backoff.max.ms", T::int32, "1000", at_least(0), I::high,
     "Accepted for compatibility (controllers only)."},
    {"controller.quorum.append.linger.ms", T::int32, "25", at_least(0), I::medium,
     "Accepted for compatibility (controllers only)."},
    {"controller.quorum.auto.join.enable", T::boolean, "false", no_check(), I::low,
     "Accepted for compatibility (controllers only)."},
    {"broker.rack", T::string, kNullDefault, no_check(), I::medium, "The broker's rack, registered with the controller."},
    {"broker.heartbeat.interval.ms", T::int32, "2000", no_check(), I::medium,
     "Interval between a broker-only node's heartbeats to the active controller."},
    {"broker.session.timeout.ms", T::int32, "9000", no_check(), I::medium,
     "How long the controller keeps a broker's session without a heartbeat (sent in registration)."},
    {"initial.broker.registration.timeout.ms", T::int32, "60000", no_check(), I::medium,
     "A broker-only node that has not registered with the controller this long after start exits."},
    {"controlled.shutdown.enable", T::boolean, "true", no_check(), I::medium,
     "On SIGTERM a broker-only node asks the controller to move its leaderships away first."},
    // Replication (process.roles=broker).
    {"replica.lag.time.max.ms", T::int64, "30000", no_check(), I::high,
     "A follower that has not caught up with the leader's log end this long leaves the ISR."},
    {"replica.fetch.wait.max.ms", T::int32, "500", no_check(), I::high,
     "How long a follower's fetch waits at the leader for data."},
    {"replica.fetch.min.bytes", T::int32, "1", no_check(), I::high, "Bytes a follower's fetch waits for."},
    {"replica.fetch.max.bytes", T::int32, "1048576", at_least(0), I::medium,
     "Bytes a follower fetches per partition (at least one batch)."},
    {"replica.fetch.response.max.bytes", T::int32, "10485760", at_least(0), I::medium,
     "Bytes a follower's fetch response may carry (at least one batch)."},
    {"replica.fetch.backoff.ms", T::int32, "1000", at_least(0), I::medium,
     "How long a follower waits after a fetch error before fetching that partition again."},
    {"replication.quota.window.num", T::int32, "11", at_least(1), I::low,
     "Samples the replication throttles measure their rate over."},
    {"replication.quota.window.size.seconds", T::int32, "1", at_least(1), I::low,
     "Length of one replication throttle sample."},
    {"num.replica.fetchers", T::int32, "1", at_least(1), I::high,
     "Accepted for compatibility: weir runs one fetcher per source broker on each executor.", M::cluster_wide},
    {"replica.socket.timeout.ms", T::int32, "30000", no_check(), I::high,
     "Deadline of a follower's fetch request (beyond replica.fetch.wait.max.ms)."},
    {"replica.socket.receive.buffer.bytes", T::int32, "65536", no_check(), I::high, "Accepted for compatibility."},
    {"replica.high.watermark.checkpoint.interval.ms", T::int64, "5000", no_check(), I::high,
     "Accepted for compatibility: weir checkpoints high watermarks with its other checkpoints."},
    {"replica.selector.class", T::string, kNullDefault, one_of(kReplicaSelectors), I::medium,
     "KIP-392: with RackAwareReplicaSelector a leader sends a consumer whose client.rack matches a "
     "caught-up in-sync follower's broker.rack to that follower; unset, consumers read from leaders "
     "(Fetch v11+ may still read from a follower)."},
    {"listeners", T::list, "PLAINTEXT://:9092", non_empty_list(), I::high, "Addresses to listen on.", M::per_broker},
    {"advertised.listeners", T::list, kNullDefault, non_empty_list(), I::high,
     "Addresses given to clients; defaults to listeners."},
    {"listener.security.protocol.map", T::string,
     "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT", no_check(), I::low,
     "Security protocol of each listener name (weir serves PLAINTEXT only).", M::per_broker},
    {"inter.broker.listener.name", T::string, kNullDefault, no_check(), I::medium, "Accepted for compatibility."},
    {"num.network.threads", T::int32, "3", at_least(1), I::high, "Accepted for compatibility.", M::cluster_wide},
    {"num.io.threads", T::int32, "8", at_least(1), I::high, "Accepted for compatibility; see weir.cores.",
     M::cluster_wide},
    {"num.recovery.threads.per.data.dir", T::int32, "2", at_least(1), I::high,
     "Threads that load the partition logs and their producer state at start.",
     M::cluster_wide},
    // Sockets. Kafka's default buffer size is 102400; weir's is the OS's own, autotuned size, which
    // moved 1.3x the bytes per second on loopback in both directions (BENCHMARKS.md), except the
    // send buffer of a connection from this host: 262144 there (net::kSameHostSendBufferBytes), with
    // which a consumer on the same host spends less CPU and reads faster (BENCHMARKS.md, issue 18).
    {"socket.send.buffer.bytes", T::int32, "-1", no_check(), I::high,
     "SO_SNDBUF of client connections; -1 (or any value below 1): the OS default, autotuned, except "
     "262144 for a connection from this host."},
    {"socket.receive.buffer.bytes", T::int32, "-1", no_check(), I::high,
     "SO_RCVBUF of client connections; -1 (or any value below 1): the OS default."},
    {"socket.request.max.bytes", T::int32, "104857600", at_least(1), I::high, "Largest request accepted."},
    // Connections and request memory (net::ServerOptions). Kafka's defaults are unlimited; weir
    // bounds max.connections (from RLIMIT_NOFILE, when the key is not set) and
    // queued.max.request.bytes (-1 or 0: max(256 MiB, 2 x socket.request.max.bytes)).
    {"max.connections.per.ip", T::int32, kMaxInt, at_least(0), I::medium,
     "Connections from one address; one more is closed at accept.", M::cluster_wide},
    {"max.connections.per.ip.overrides", T::string, "", no_check(), I::medium,
     "Per-address limits: host:count,host:count.", M::cluster_wide},
    {"max.connections", T::int32, kMaxInt, at_least(0), I::medium,
     "Connections the broker accepts; at the limit it stops accepting until one closes. weir: half of "
     "RLIMIT_NOFILE when the key is not set (Kafka: unlimited).",
     M::cluster_wide},
    {"max.connection.creation.rate", T::int32, kMaxInt, at_least(0), I::medium,
     "Connections accepted per second, broker-wide.", M::cluster_wide},
    {"connections.max.idle.ms", T::int64, "600000", no_check(), I::medium,
     "Idle connections are closed after this long."},
    {"connection.failed.authentication.delay.ms", T::int32, "100", at_least(0), I::low,
     "Accepted for compatibility (weir has no authentication yet); must stay below connections.max.idle.ms."},
    {"queued.max.request.bytes", T::int64, "-1", no_check(), I::medium,
     "Request bytes read but not yet handled. weir: -1 (or 0) means max(256 MiB, 2 x socket.request.max.bytes) "
     "(Kafka: unlimited)."},
    {"message.max.bytes", T::int32, "1048588", at_least(0), I::high, "Largest record batch.", M::cluster_wide},
    // Log directories and segments.
    {"log.dir", T::list, "/tmp/kafka-logs", non_empty_list(), I::high, "Data directory when log.dirs is not set."},
    {"log.dirs", T::list, kNullDefault, non_empty_list(), I::high,
     "Data directory (one: several, Kafka's JBOD, are refused until weir has it)."},
    {"metadata.log.dir", T::string, kNullDefault, no_check(), I::high,
     "Where the metadata log is kept: weir keeps it in the log directory, so it may only name that directory."},
    {"log.segment.bytes", T::int32, "1073741824", at_least(1'048'576), I::high, "Segment size.", M::cluster_wide},
    {"log.roll.ms", T::int64, kNullDefault, no_check(), I::high, "Age at which a segment is rolled (segment.ms).",
     M::cluster_wide},
    {"log.roll.hours", T::int32, "168", at_least(1), I::high, "log.roll.ms in hours."},
    {"log.roll.jitter.ms", T::int64, kNullDefault, no_check(), I::high, "Jitter of segment rolls (segment.jitter.ms).",
     M::cluster_wide},
    {"log.roll.jitter.hours", T::int32, "0", at_least(0), I::high, "log.roll.jitter.ms in hours."},
    {"log.retention.hours", T::int32, "168", no_check(), I::high, "Retention of log segments, in hours."},
    {"log.retention.minutes", T::int32, kNullDefault, no_check(), I::high, "Retention of log segments, in minutes."},
    {"log.retention.ms", T::int64, kNullDefault, no_check(), I::high, "Retention of log segments (retention.ms).",
     M::cluster_wide},
    {"log.retention.bytes", T::int64, "-1", no_check(), I::high, "Size retention of a partition (retention.bytes).",
     M::cluster_wide},
    {"log.retention.check.interval.ms", T::int64, "300000", at_least(1), I::medium, "Retention check period."},
    {"log.cleanup.policy", T::list, "delete", list_of(kCleanupPolicies), I::medium, "Default cleanup.policy of topics.",
     M::cluster_wide},
    {"log.cleaner.threads", T::int32, "1", at_least(0), I::medium, "Cleaner threads (weir runs one cleaner).",
     M::cluster_wide},
    {"log.cleaner.io.max.bytes.per.second", T::float64, "1.7976931348623157E308", no_check(), I::medium,
     "Cleaner I/O limit.", M::cluster_wide},
    {"log.cleaner.dedupe.buffer.size", T::int64, "134217728", no_check(), I::medium,
     "Memory of the cleaner's offset map.", M::cluster_wide},
    {"log.cleaner.io.buffer.load.factor", T::float64, "0.9", no_check(), I::medium, "How full the offset map may get.",
     M::cluster_wide},
    {"log.cleaner.backoff.ms", T::int64, "15000", at_least(0), I::medium,
     "Pause of the cleaner when nothing needs cleaning.", M::cluster_wide},
    {"log.cleaner.min.cleanable.ratio", T::float64, "0.5", between(0, 1), I::medium,
     "Default min.cleanable.dirty.ratio of topics.", M::cluster_wide},
    {"log.cleaner.enable", T::boolean, "true", no_check(), I::medium, "Run the log cleaner for compacted topics."},
    {"log.cleaner.delete.retention.ms", T::int64, "86400000", at_least(0), I::medium,
     "Default delete.retention.ms of topics.", M::cluster_wide},
    {"log.cleaner.min.compaction.lag.ms", T::int64, "0", at_least(0), I::medium,
     "Default min.compaction.lag.ms of topics.", M::cluster_wide},
    {"log.cleaner.max.compaction.lag.ms", T::int64, kMaxLong, at_least(1), I::medium,
     "Default max.compaction.lag.ms of topics.", M::cluster_wide},
    {"log.index.size.max.bytes", T::int32, "10485760", at_least(4), I::medium, "Default segment.index.bytes of topics.",
     M::cluster_wide},
    {"log.index.interval.bytes", T::int32, "4096", at_least(0), I::medium, "Default index.interval.bytes of topics.",
     M::cluster_wide},
    {"log.flush.interval.messages", T::int64, kMaxLong, at_least(1), I::high,
     "Unflushed messages that trigger a flush (flush.messages).", M::cluster_wide},
    {"log.segment.delete.delay.ms", T::int64, "60000", at_least(0), I::high, "Default file.delete.delay.ms of topics.",
     M::cluster_wide},
    {"log.flush.scheduler.interval.ms", T::int64, kMaxLong, no_check(), I::high,
     "How often logs are checked for flush.ms (weir checks at least every second)."},
    {"log.flush.interval.ms", T::int64, kNullDefault, no_check(), I::high,
     "Age of the last flush that triggers one (flush.ms).", M::cluster_wide},
    {"log.flush.offset.checkpoint.interval.ms", T::int32, "60000", at_least(0), I::high,
     "How often recovery points and high watermarks are checkpointed."},
    {"log.flush.start.offset.checkpoint.interval.ms", T::int32, "60000", at_least(0), I::high,
     "How often log start offsets are checkpointed."},
    {"log.preallocate", T::boolean, "false", no_check(), I::medium, "Default preallocate of topics.", M::cluster_wide},
    {"log.message.timestamp.type", T::string, "CreateTime", one_of(kTimestampTypes), I::medium,
     "Default message.timestamp.type of topics.", M::cluster_wide},
    {"log.message.timestamp.before.max.ms", T::int64, kMaxLong, at_least(0), I::medium,
     "Default message.timestamp.before.max.ms of topics.", M::cluster_wide},
    {"log.message.timestamp.after.max.ms", T::int64, "3600000", at_least(0), I::medium,
     "Default message.timestamp.after.max.ms of topics.", M::cluster_wide},
    {"log.local.retention.ms", T::int64, "-2", at_least(-2), I::medium, "Accepted for compatibility (tiered storage).",
     M::cluster_wide},
    {"log.local.retention.bytes", T::int64, "-2", at_least(-2), I::medium,
     "Accepted for compatibility (tiered storage).", M::cluster_wide},
    {"min.insync.replicas", T::int32, "1", at_least(1), I::high, "Default min.insync.replicas of topics.",
     M::cluster_wide},
    {"unclean.leader.election.enable", T::boolean, "false", no_check(), I::high,
     "Default unclean.leader.election.enable of topics.", M::cluster_wide},
    {"compression.type", T::string, "producer", one_of(kCompressionTypes), I::high,
     "Default compression.type of topics.", M::cluster_wide},
    {"compression.gzip.level", T::int32, "-1", custom(gzip_level, "[1,...,9] or -1"), I::medium,
     "Default compression.gzip.level of topics.", M::cluster_wide},
    {"compression.lz4.level", T::int32, "9", between(1, 17), I::medium, "Default compression.lz4.level of topics.",
     M::cluster_wide},
    {"compression.zstd.level", T::int32, "3", between(-131'072, 22), I::medium,
     "Default compression.zstd.level of topics.", M::cluster_wide},
    // Topics.
    {"num.partitions", T::int32, "1", at_least(1), I::medium, "Partitions of auto-created topics."},
    {"default.replication.factor", T::int32, "1", no_check(), I::medium, "Replication factor of auto-created topics."},
    {"auto.create.topics.enable", T::boolean, "true", no_check(), I::high, "Create topics on metadata requests."},
    // Groups and offsets.
    {"group.initial.rebalance.delay.ms", T::int32, "3000", no_check(), I::medium,
     "Delay of a new group's first rebalance."},
    {"group.min.session.timeout.ms", T::int32, "6000", no_check(), I::medium,
     "Smallest session timeout a member may ask for."},
    {"group.max.session.timeout.ms", T::int32, "1800000", no_check(), I::medium,
     "Largest session timeout a member may ask for."},
    {"group.max.size", T::int32, kMaxInt, at_least(1), I::medium, "Most members a classic group may have."},
    // The consumer group protocol (KIP-848); the rules between them are checked at start-up.
    {"group.consumer.session.timeout.ms", T::int32, "45000", at_least(1), I::medium,
     "Session timeout of consumer-protocol members."},
    {"group.consumer.min.session.timeout.ms", T::int32, "45000", at_least(1), I::medium,
     "Smallest group.consumer.session.timeout.ms allowed."},
    {"group.consumer.max.session.timeout.ms", T::int32, "60000", at_least(1), I::medium,
     "Largest group.consumer.session.timeout.ms allowed."},
    {"group.consumer.heartbeat.interval.ms", T::int32, "5000", at_least(1), I::medium,
     "Heartbeat interval given to consumer-protocol members."},
    {"group.consumer.min.heartbeat.interval.ms", T::int32, "5000", at_least(1), I::medium,
     "Smallest group.consumer.heartbeat.interval.ms allowed."},
    {"group.consumer.max.heartbeat.interval.ms", T::int32, "15000", at_least(1), I::medium,
     "Largest group.consumer.heartbeat.interval.ms allowed."},
    {"group.consumer.max.size", T::int32, kMaxInt, at_least(1), I::medium, "Most members a consumer group may have."},
    {"group.consumer.assignors", T::list, "uniform,range", non_empty_list(), I::medium,
     "Server-side assignors (uniform, range); the first is the default. weir cannot load assignor classes."},
    {"group.consumer.assignment.interval.ms", T::int32, "1000", at_least(0), I::medium,
     "Least time between two target assignments of a consumer group. weir reads it at start-up only.", M::cluster_wide},
    {"group.consumer.min.assignment.interval.ms", T::int32, "0", at_least(0), I::medium,
     "Smallest group.consumer.assignment.interval.ms allowed."},
    {"group.consumer.max.assignment.interval.ms", T::int32, "15000", at_least(0), I::medium,
     "Largest group.consumer.assignment.interval.ms allowed."},
    {"group.consumer.regex.refresh.interval.ms", T::int32, "600000", at_least(10000), I::medium,
     "How often the topics matching a consumer group's subscribed regular expressions are looked up again "
     "(also when topics are created, at most every 10 s).",
     M::read_only, true},
    {"group.consumer.migration.policy", T::string, "bidirectional",
     custom(migration_policy, "(case insensitive) [DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL]"), I::medium,
     "Which online migrations between classic and consumer groups are allowed: bidirectional, upgrade "
     "(classic to consumer), downgrade (consumer to classic) or disabled."},
    {"offset.metadata.max.bytes", T::int32, "4096", no_check(), I::high,
     "Largest metadata string of a committed offset."},
    {"offsets.topic.num.partitions", T::int32, "50", at_least(1), I::high, "Partitions of __consumer_offsets."},
    {"offsets.topic.replication.factor", T::int16, "3", at_least(1), I::high, "Accepted; one node."},
    {"offsets.topic.segment.bytes", T::int32, "104857600", at_least(1), I::high, "Segment size of __consumer_offsets."},
    {"offsets.retention.minutes", T::int32, "10080", at_least(1), I::high,
     "How long committed offsets of empty groups are kept."},
    {"offsets.retention.check.interval.ms", T::int64, "600000", at_least(1), I::high,
     "How often expired offsets are removed."},
    // Transactions and producers.
    {"transaction.state.log.num.partitions", T::int32, "50", at_least(1), I::high,
     "Partitions of __transaction_state."},
    {"transaction.state.log.replication.factor", T::int16, "3", at_least(1), I::high, "Accepted; one node."},
    {"transaction.state.log.min.isr", T::int32, "2", at_least(1), I::high, "Accepted; one node."},
    {"transaction.state.log.segment.bytes", T::int32, "104857600", at_least(1), I::high,
     "Segment size of __transaction_state."},
    {"transaction.state.log.load.buffer.size", T::int32, "5242880", at_least(1), I::high,
     "Accepted; weir reads __transaction_state in 1 MiB steps at load."},
    {"transaction.max.timeout.ms", T::int32, "900000", at_least(1), I::high,
     "Largest transaction.timeout.ms a producer may ask for."},
    {"transactional.id.expiration.ms", T::int32, "604800000", at_least(1), I::high,
     "How long an idle transactional id is kept."},
    {"transaction.abort.timed.out.transaction.cleanup.interval.ms", T::int32, "10000", at_least(1), I::low,
     "How often transactions older than their timeout are aborted."},
    {"transaction.remove.expired.transaction.cleanup.interval.ms", T::int32, "3600000", at_least(1), I::low,
     "How often expired transactional ids are removed."},
    {"producer.id.expiration.ms", T::int32, "86400000", at_least(1), I::low,
     "How long an idle idempotent producer's state (sequence numbers) is kept.", M::cluster_wide},
    {"producer.id.expiration.check.interval.ms", T::int32, "600000", at_least(1), I::low,
     "How often idle producers are expired."},
    {"transaction.partition.verification.enable", T::boolean, "true", no_check(), I::low,
     "Verify with the transaction coordinator that a partition is in the producer's transaction before "
     "its first transactional batch is written (KIP-890).", M::cluster_wide},
    // Fetch sessions.
    {"max.incremental.fetch.session.cache.slots", T::int32, "1000", at_least(0), I::medium,
     "Incremental fetch sessions kept (split evenly over 8 shards, as Kafka does)."},

    // weir's own keys.
    {"weir.cores", T::int32, "0", at_least(0), I::high, "weir: executor threads, one per core (0 = every core)."},
    {"max.inflight.requests.per.connection", T::int32, "100", at_least(1), I::medium,
     "weir: requests read from one connection before its responses are written."},
    {"flush.on.acks.all", T::boolean, "true", no_check(), I::high, "weir: fdatasync before acknowledging acks=all."},
    {"metrics.listener", T::string, kNullDefault, no_check(), I::medium,
     "weir: host:port of the Prometheus endpoint (GET /metrics); empty = no endpoint."},
    {"weir.fetch.session.cache.max.partitions", T::int64, "1000000", at_least(0), I::medium,
     "weir: partitions all incremental fetch sessions may remember together."},
    // Compressed producer batches (src/broker/README.md, "Compressed batches"). Kafka has no limits.
    {"weir.produce.max.decompressed.batch.bytes", T::int64, "268435456", between(1, 2147483647), I::medium,
     "weir: bytes a compressed producer batch may decompress to; more is INVALID_RECORD (Kafka: no limit)."},
    {"weir.produce.max.compression.ratio", T::int32, "5000", at_least(0), I::medium,
     "weir: decompressed bytes per compressed byte a producer batch may have; more is INVALID_RECORD; 0 = no "
     "limit (Kafka: no limit)."},
    {"weir.partial.request.timeout.ms", T::int64, "30000", no_check(), I::medium,
     "weir: a request must arrive in full within this long of its first byte; -1: no deadline."},
    {"weir.decompression.threads", T::int32, "0", at_least(0), I::low,
     "weir: threads validating compressed producer batches off the executors (0 = half of weir.cores, 1 to 4)."},
};

}  // namespace

std::span<const KeyDef> broker_config_defs() noexcept { return kBrokerKeys; }

const KeyDef* find_broker_config(std::string_view name) noexcept {
  for (const auto& def : kBrokerKeys) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

}  // namespace weir::config
