"""Seed 004's operator tools on a 3-broker cluster under one Kafka 4.3.1 controller (issue 15):
`kafka-leader-election` and `kafka-reassign-partitions`, the same commands and the same checks on
three Kafka brokers (the oracle, `slow`), on three weir brokers (in `make test`) and on a mixed cluster
(one Kafka broker, two weir brokers; `slow`).

  - test_preferred_leader_election: a partition whose leader moved off its preferred replica
    (a controlled shutdown and restart of that broker) stays there (the controller's automatic
    rebalance is off); `kafka-leader-election --election-type preferred` moves it back, the tool
    reports what it did, an election on a partition already led by its preferred replica is
    "not needed", an unclean election on a partition with a live leader too, an unknown
    partition is an error; records written before and after are all there.
  - test_reassign_partitions: an RF=2 topic on brokers 1,2 with records moves to 2,3 while
    nothing reaches the leader's replication listener: `--execute` starts it, `--verify` and `kafka-topics
    --describe` show it in progress (adding 3, removing 1); after the heal the new replica
    catches up, the controller completes the move, `--verify` reports it completed, broker 1 no
    longer lists the partition in `kafka-log-dirs`, and the new replica's log (kafka-dump-log)
    is the leader's below the high watermark. Records written before and after: none lost.
  - test_reassignment_cancelled: the same move, kept in progress, cancelled with `--cancel`
    (a second cancel finds nothing active): replicas, ISR and leader are back to 2,1 / 1,2 / 1,
    broker 3 gives up the replica it was given, and nothing is lost.
  - test_controlled_shutdown_under_load: SIGTERM of the leader of an RF=3 partition while an
    idempotent acks=all producer writes a numbered sequence: the broker exits 0 after the
    controller moved its leadership to another ISR member, the producer sees only retriable
    errors (nothing fails, every value acknowledged once), the broker rejoins the ISR after its
    restart, and the log is exactly the acknowledged sequence.
  - test_replication_throttle: three topics on brokers 2,3 gain a replica on broker 1: one with
    `kafka-reassign-partitions --throttle 1` (leader and follower throttles), one throttled on
    the follower side only, one on the leader side only (`kafka-configs`). The new replicas
    stall after their first fetch (less than half copied 5 s after they appear; unthrottled
    the copy takes well under a second), `kafka-configs --describe` shows the broker and topic
    throttles (the rates as DYNAMIC_BROKER_CONFIG; a bad rate or a read-only key is refused
    with Kafka's message), a higher
    `--throttle` with `--additional` lets the moves finish, `--verify` clears the throttles, and
    every record is on the new replicas.
  - test_cluster_wide_topic_default: `kafka-configs --entity-default` sets message.max.bytes=2000:
    every leader (one partition led by each broker) refuses a 5000-byte record, the topic reports
    max.message.bytes from DYNAMIC_DEFAULT_BROKER_CONFIG, and after the delete every leader takes
    it again.

The requests behind them (ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments)
go from the tools to a broker, which carries them to the active controller, as Kafka's brokers do.
"""
from __future__ import annotations

import json
import secrets
import time

import pytest
from confluent_kafka import KafkaError, Producer

from harness import run_tool
from harness.cluster import wait_for
from harness.replication import (TOOL_ENV, SequenceProducer, below, check_exact_sequence, check_log,
                                 describe_partitions, partition_dump, produce, read_all)

pytestmark = [pytest.mark.kafka]

BROKER_OVERRIDES = {"auto.create.topics.enable": False, "unclean.leader.election.enable": False}
# No automatic move back to the preferred replica (default every 300 s): only the tool does it.
CONTROLLER_OVERRIDES = {"auto.leader.rebalance.enable": False}


@pytest.fixture(params=[
    pytest.param(("kafka", "kafka", "kafka"), id="kafka", marks=pytest.mark.slow),
    pytest.param(("weir", "weir", "weir"), id="weir"),
    # slow (make test time): the weir variant covers the same behaviour; run with -m slow.
    pytest.param(("kafka", "weir", "weir"), id="mixed", marks=pytest.mark.slow),
])
def kinds(request):
    return list(request.param)


def tool(cluster, name: str, *args, check: bool = True):
    res = run_tool(name, *args, bootstrap=cluster.bootstrap, env=TOOL_ENV, timeout=120)
    if check:
        res.check()
    return res


def create(cluster, topic: str, assignment: str, min_isr: int) -> None:
    tool(cluster, "kafka-topics", "--create", "--topic", topic, "--replica-assignment", assignment,
         "--config", f"min.insync.replicas={min_isr}")
    parts = assignment.split(",")
    cluster.wait_topic(topic, partitions=len(parts), replicas=len(parts[0].split(":")))


def leaders_everywhere(cluster, topic: str, partition: int) -> set[int]:
    """The leader of topic-partition as each live broker's Metadata names it."""
    out = set()
    for b in cluster.live_brokers():
        out.add(cluster.leader_of(topic, partition, via=b.node_id))
    return out


def log_dir_sizes(cluster, broker_id: int) -> dict[str, int]:
    """partition name -> bytes, as `kafka-log-dirs --describe` reports broker_id's replicas."""
    r = tool(cluster, "kafka-log-dirs", "--describe", "--broker-list", str(broker_id))
    line = next(x for x in r.stdout.splitlines() if x.startswith("{"))
    return {p["partition"]: p["size"] for b in json.loads(line)["brokers"] for d in b["logDirs"]
            for p in d["partitions"]}


@pytest.mark.timeout(420)
def test_preferred_leader_election(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES)
    # Partition 0 prefers broker 1, partition 1 broker 2.
    create(cluster, topic_name, "1:2:3,2:3:1", min_isr=2)
    assert cluster.leader_of(topic_name, 0) == 1 and cluster.leader_of(topic_name, 1) == 2
    acked, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(100)])
    assert not failed and len(acked) == 100

    # Led by its preferred replica already: nothing to do, for either election type.
    res = tool(cluster, "kafka-leader-election", "--election-type", "preferred", "--topic", topic_name,
               "--partition", "0")
    assert f"Valid replica already elected for partitions {topic_name}-0" in res.stdout, res.describe()
    res = tool(cluster, "kafka-leader-election", "--election-type", "unclean", "--topic", topic_name,
               "--partition", "0")
    assert f"Valid replica already elected for partitions {topic_name}-0" in res.stdout, res.describe()

    # Controlled shutdown of broker 1 moves partition 0's leadership away; it stays away after
    # broker 1 is back in the ISR.
    cluster.stop(1)
    moved_to = cluster.wait_leader(topic_name, 0, not_id=1)
    cluster.restart(1)
    cluster.wait_brokers([1, 2, 3])
    cluster.wait_isr(topic_name, 0, 3)
    assert cluster.leader_of(topic_name, 0) == moved_to != 1
    rows = {r["partition"]: r for r in describe_partitions(cluster.bootstrap, topic_name)}
    assert rows[0]["replicas"] == [1, 2, 3] and rows[0]["leader"] == moved_to, rows[0]["raw"]

    # Both partitions named in a JSON file: partition 0 is elected, partition 1 needs nothing.
    path = cluster.base_dir / "election.json"
    path.write_text(json.dumps({"partitions": [{"topic": topic_name, "partition": 0},
                                               {"topic": topic_name, "partition": 1}]}))
    res = tool(cluster, "kafka-leader-election", "--election-type", "PREFERRED", "--path-to-json-file", str(path))
    assert f"Successfully completed leader election (PREFERRED) for partitions {topic_name}-0" in res.stdout, \
        res.describe()
    assert f"Valid replica already elected for partitions {topic_name}-1" in res.stdout, res.describe()
    wait_for("every broker to name broker 1 the leader of partition 0",
             lambda: leaders_everywhere(cluster, topic_name, 0) == {1}, 60,
             describe=lambda: cluster.partition(topic_name, 0))
    assert cluster.isr_of(topic_name, 0) == [1, 2, 3]

    # A partition that does not exist.
    res = tool(cluster, "kafka-leader-election", "--election-type", "preferred", "--topic", topic_name,
               "--partition", "7", check=False)
    assert res.rc != 0, res.describe()
    assert f"Error completing leader election (PREFERRED) for partition: {topic_name}-7" in res.stdout + res.stderr, \
        res.describe()
    assert "UnknownTopicOrPartitionException" in res.stdout + res.stderr, res.describe()

    # --all-topic-partitions: every partition is led by its preferred replica now.
    res = tool(cluster, "kafka-leader-election", "--election-type", "preferred", "--all-topic-partitions")
    assert "Successfully completed leader election" not in res.stdout, res.describe()

    more, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(100, 150)])
    assert not failed and len(more) == 50
    anomalies = check_log(read_all(cluster.bootstrap, topic_name), {**acked, **more})
    assert not anomalies, anomalies


@pytest.mark.timeout(420)
def test_reassign_partitions(cluster_factory, kinds, topic_name):
    # The cut below holds broker 2's fetches too: a lag time it cannot reach, so the ISR stays.
    cluster = cluster_factory(kinds, controllers=1, replication_proxies=True,
                              broker_overrides={**BROKER_OVERRIDES, "replica.lag.time.max.ms": 60000},
                              controller_overrides=CONTROLLER_OVERRIDES)
    create(cluster, topic_name, "1:2", min_isr=1)
    acked, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(200)])
    assert not failed and len(acked) == 200

    plan = cluster.base_dir / "reassign.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic_name, "partition": 0, "replicas": [2, 3], "log_dirs": ["any", "any"]}]}))

    # Nothing reaches the leader's replication listener: the new replica cannot catch up before
    # we look at the move (broker 3 stays registered and unfenced, as the tool requires).
    link = cluster.replication_link(1)
    link.cut()
    try:
        res = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--execute")
        assert f"Successfully started partition reassignment for {topic_name}-0" in res.stdout, res.describe()
        assert '"replicas":[1,2]' in res.stdout.replace(" ", ""), res.describe()  # the rollback plan
        res = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--verify",
                   check=False)
        assert f"Reassignment of partition {topic_name}-0 is still in progress." in res.stdout, res.describe()
        out = tool(cluster, "kafka-topics", "--describe", "--topic", topic_name).stdout
        assert "Adding Replicas: 3" in out and "Removing Replicas: 1" in out, out
        rows = describe_partitions(cluster.bootstrap, topic_name)
        assert rows[0]["replicas"] == [2, 3, 1] and rows[0]["isr"] == [1, 2] and rows[0]["leader"] == 1, out
    finally:
        link.heal()

    def completed():
        r = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--verify",
                 check=False)
        return r if f"Reassignment of partition {topic_name}-0 is completed." in r.stdout else None
    res = wait_for("the reassignment to complete", completed, 120)
    assert res.rc == 0, res.describe()
    wait_for("every broker to name replicas 2,3 with ISR 2,3", lambda: all(
        cluster.replicas_of(topic_name, 0, via=b.node_id) == [2, 3]
        and cluster.isr_of(topic_name, 0, via=b.node_id) == [2, 3] for b in cluster.live_brokers()), 60,
        describe=lambda: {b.node_id: cluster.partition(topic_name, 0, via=b.node_id) for b in cluster.live_brokers()})
    out = tool(cluster, "kafka-topics", "--describe", "--topic", topic_name).stdout
    assert "Adding Replicas" not in out and "Removing Replicas" not in out, out

    # Broker 1 gave its replica up.
    wait_for("broker 1 to drop its replica", lambda: f"{topic_name}-0" not in log_dir_sizes(cluster, 1), 60)
    assert f"{topic_name}-0" in log_dir_sizes(cluster, 3)

    after, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(250, 300)])
    assert not failed and len(after) == 50
    records = read_all(cluster.bootstrap, topic_name)
    anomalies = check_log(records, {**acked, **after})
    assert not anomalies, anomalies
    hw = records[-1][0] + 1
    leader = cluster.leader_of(topic_name, 0)
    follower = 5 - leader  # the other of 2 and 3
    wait_for("the follower to have the whole log", lambda: sum(
        b["count"] for b in below(partition_dump(cluster.broker(follower), topic_name), hw)) == hw, 60)
    assert below(partition_dump(cluster.broker(follower), topic_name), hw) == \
        below(partition_dump(cluster.broker(leader), topic_name), hw)


@pytest.mark.timeout(300)
def test_controlled_shutdown_under_load(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES)
    create(cluster, topic_name, "1:2:3", min_isr=2)
    with SequenceProducer(cluster.bootstrap, topic_name, "seq") as sp:
        sp.wait_acked(30, 60)
        cluster.stop(1)  # SIGTERM: a controlled shutdown (a clean exit is checked)
        new_leader = cluster.wait_leader(topic_name, 0, not_id=1)
        assert new_leader in (2, 3)
        sp.wait_acked(sp.n_acked() + 30, 60)  # acknowledged by the new leader with an ISR of 2
        cluster.start_broker(1)
        assert cluster.wait_isr(topic_name, 0, [1, 2, 3], timeout=90) == [1, 2, 3]
        assert cluster.leader_of(topic_name, 0) == new_leader
        sp.wait_acked(sp.n_acked() + 30, 60)
    check_exact_sequence(cluster.bootstrap, topic_name, sp)


@pytest.mark.timeout(300)
def test_reassignment_cancelled(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, replication_proxies=True,
                              broker_overrides={**BROKER_OVERRIDES, "replica.lag.time.max.ms": 60000},
                              controller_overrides=CONTROLLER_OVERRIDES)
    create(cluster, topic_name, "1:2", min_isr=1)
    acked, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(100)])
    assert not failed and len(acked) == 100
    plan = cluster.base_dir / "reassign.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic_name, "partition": 0, "replicas": [2, 3], "log_dirs": ["any", "any"]}]}))

    link = cluster.replication_link(1)
    link.cut()  # the new replica cannot catch up: the move stays in progress until cancelled
    try:
        tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--execute")
        res = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--cancel")
        assert f"Successfully cancelled partition reassignment for: {topic_name}-0" in res.stdout, res.describe()
        res = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--cancel")
        assert "None of the specified partition reassignments are active." in res.stdout, res.describe()
    finally:
        link.heal()
    # Kafka's controller puts the original replicas back in the order of the move's replica list
    # (2,3,1 without the adding 3): 2,1, still led by 1.
    wait_for("every broker to name replicas 2,1 with ISR 1,2 and leader 1", lambda: all(
        cluster.replicas_of(topic_name, 0, via=b.node_id) == [2, 1]
        and cluster.isr_of(topic_name, 0, via=b.node_id) == [1, 2]
        and cluster.leader_of(topic_name, 0, via=b.node_id) == 1 for b in cluster.live_brokers()), 60,
        describe=lambda: {b.node_id: cluster.partition(topic_name, 0, via=b.node_id) for b in cluster.live_brokers()})
    out = tool(cluster, "kafka-topics", "--describe", "--topic", topic_name).stdout
    assert "Adding Replicas" not in out and "Removing Replicas" not in out, out

    wait_for("broker 3 to drop the replica it was given",
             lambda: f"{topic_name}-0" not in log_dir_sizes(cluster, 3), 60)
    more, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(100, 150)])
    assert not failed and len(more) == 50
    anomalies = check_log(read_all(cluster.bootstrap, topic_name), {**acked, **more})
    assert not anomalies, anomalies


THROTTLE_VALUES = 3000  # ~12 MiB a topic: many 1 MiB replica fetches


# slow (make test time: 81 s, mostly JVM tool runs and 36 MiB to replicate): ReplicationQuota's
# rules are unit-tested (tests/unit/broker/replication_quota_test.cpp); run with -m slow.
@pytest.mark.slow
@pytest.mark.timeout(480)
def test_replication_throttle(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES)
    # Three topics on brokers 2,3 (led by 2), each gaining a replica on broker 1: one throttled by
    # the tool (both sides), one only on the follower side, one only on the leader side.
    topics = {side: f"{topic_name}-{side}" for side in ("tool", "follower", "leader")}
    acked = {}
    for side, t in topics.items():
        create(cluster, t, "2:3", min_isr=1)
        values = [f"{side}-{i:05d}-{secrets.token_hex(2000)}" for i in range(THROTTLE_VALUES)]
        acked[side], failed = produce(cluster.bootstrap, t, values, **{"batch.size": 65536, "linger.ms": 5})
        assert not failed and len(acked[side]) == THROTTLE_VALUES
    total = {side: log_dir_sizes(cluster, 2)[f"{t}-0"] for side, t in topics.items()}
    assert all(size > 10 * 1024 * 1024 for size in total.values()), total

    tool(cluster, "kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", topics["follower"],
         "--add-config", "follower.replication.throttled.replicas=0:1")
    tool(cluster, "kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", topics["leader"],
         "--add-config", "leader.replication.throttled.replicas=[0:2,0:3]")
    plan_tool = cluster.base_dir / "throttle-tool.json"
    plan_tool.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topics["tool"], "partition": 0, "replicas": [2, 3, 1]}]}))
    plan_sides = cluster.base_dir / "throttle-sides.json"
    plan_sides.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topics[side], "partition": 0, "replicas": [2, 3, 1]} for side in ("follower", "leader")]}))

    # 1 B/s on brokers 1, 2 and 3, both sides (the rates apply to every throttled partition).
    res = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan_tool), "--execute",
               "--throttle", "1")
    assert "The inter-broker throttle limit was set to 1 B/s" in res.stdout, res.describe()
    assert f"Successfully started partition reassignment for {topics['tool']}-0" in res.stdout, res.describe()
    res = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan_sides), "--execute",
               "--additional")
    assert "Successfully started partition reassignments for" in res.stdout, res.describe()

    out = tool(cluster, "kafka-configs", "--describe", "--entity-type", "brokers", "--entity-name", "2").stdout
    assert "leader.replication.throttled.rate=1 sensitive=false" in out, out
    assert "follower.replication.throttled.rate=1 sensitive=false" in out, out
    out = tool(cluster, "kafka-configs", "--describe", "--entity-type", "topics", "--entity-name",
               topics["tool"]).stdout
    assert "leader.replication.throttled.replicas=0:2,0:3 sensitive=false" in out, out
    assert "follower.replication.throttled.replicas=0:1 sensitive=false" in out, out

    # Bad values are refused by the broker before they reach the controller, as Kafka words it.
    for value, why in (("leader.replication.throttled.rate=abc",
                        "Invalid value abc for configuration leader.replication.throttled.rate: Not a number of type LONG"),
                       ("follower.replication.throttled.rate=-5",
                        "Invalid value -5 for configuration follower.replication.throttled.rate: Value must be at least 0"),
                       ("log.dirs=/elsewhere", "Cannot update these configs dynamically: [log.dirs]")):
        res = tool(cluster, "kafka-configs", "--alter", "--entity-type", "brokers", "--entity-name", "2",
                   "--add-config", value, check=False)
        assert res.rc != 0 and f"InvalidRequestException: {why}" in res.stdout + res.stderr, res.describe()
    out = tool(cluster, "kafka-configs", "--describe", "--entity-type", "brokers", "--entity-name", "2").stdout
    assert "leader.replication.throttled.rate=1 sensitive=false" in out and "log.dirs" not in out, out

    # The new replicas get about one fetch's worth (1 MiB) and then stall: an unthrottled copy
    # takes well under a second; at 1 B/s one 1 MiB fetch keeps the quota exceeded for the 11 s
    # the rate is measured over. (A slower machine copies less, never more.)
    wait_for("broker 1 to host the three new replicas", lambda: all(
        f"{t}-0" in log_dir_sizes(cluster, 1) for t in topics.values()), 60)
    time.sleep(5)
    sizes = log_dir_sizes(cluster, 1)
    for side, t in topics.items():
        assert sizes[f"{t}-0"] < total[side] // 2, (side, sizes, total)
    for plan in (plan_tool, plan_sides):
        res = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--verify",
                   check=False)
        assert "is still in progress." in res.stdout and "is completed." not in res.stdout, res.describe()

    # A higher throttle for the running move (--additional resubmits it): the copies finish.
    res = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan_tool), "--execute",
               "--additional", "--throttle", "1000000000")
    assert "The inter-broker throttle limit was set to 1000000000 B/s" in res.stdout, res.describe()

    def completed(plan, n):
        r = tool(cluster, "kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--verify",
                 check=False)
        return r if r.stdout.count("is completed.") == n else None
    res = wait_for("the throttled move to complete", lambda: completed(plan_tool, 1), 120)
    assert "Clearing broker-level throttles on brokers 1,2,3" in res.stdout, res.describe()
    assert f"Clearing topic-level throttles on topic {topics['tool']}" in res.stdout, res.describe()
    res = wait_for("the other two moves to complete", lambda: completed(plan_sides, 2), 120)
    assert "Clearing topic-level throttles on topics" in res.stdout, res.describe()

    for b in (1, 2, 3):
        out = tool(cluster, "kafka-configs", "--describe", "--entity-type", "brokers", "--entity-name",
                   str(b)).stdout
        assert "throttled.rate" not in out, out
    for t in topics.values():
        out = tool(cluster, "kafka-configs", "--describe", "--entity-type", "topics", "--entity-name", t).stdout
        assert "throttled.replicas" not in out, out
    wait_for("broker 1's replicas to match the leader's", lambda: all(
        log_dir_sizes(cluster, 1).get(f"{t}-0") == log_dir_sizes(cluster, 2).get(f"{t}-0")
        for t in topics.values()), 60)
    for side, t in topics.items():
        assert cluster.replicas_of(t, 0) == [2, 3, 1] and sorted(cluster.isr_of(t, 0)) == [1, 2, 3]
        anomalies = check_log(read_all(cluster.bootstrap, t), acked[side])
        assert not anomalies, anomalies


@pytest.mark.timeout(300)
def test_cluster_wide_topic_default(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES)
    # One partition led by each broker.
    create(cluster, topic_name, "1:2:3,2:3:1,3:1:2", min_isr=1)
    big = b"x" * 5000

    def produce_each() -> dict[int, object]:
        """partition -> the error of a 5000-byte record (None: written)."""
        errors: dict[int, object] = {}
        p = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "retries": 0})
        for partition in range(3):
            p.produce(topic_name, value=big, partition=partition,
                      on_delivery=lambda err, msg: errors.__setitem__(msg.partition(), err))
        assert p.flush(60) == 0
        return errors

    assert produce_each() == {0: None, 1: None, 2: None}
    tool(cluster, "kafka-configs", "--alter", "--entity-type", "brokers", "--entity-default",
         "--add-config", "message.max.bytes=2000")
    wait_for("every leader to refuse records above the cluster-wide message.max.bytes", lambda: all(
        e is not None and e.code() == KafkaError.MSG_SIZE_TOO_LARGE for e in produce_each().values()), 60)
    out = tool(cluster, "kafka-configs", "--describe", "--entity-type", "brokers", "--entity-default").stdout
    assert "message.max.bytes=2000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=2000}" \
        in out, out
    out = tool(cluster, "kafka-configs", "--describe", "--entity-type", "topics", "--entity-name", topic_name,
               "--all").stdout
    assert "max.message.bytes=2000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=2000" \
        in out, out
    out = tool(cluster, "kafka-configs", "--describe", "--entity-type", "brokers", "--entity-name", "2",
               "--all").stdout
    assert "message.max.bytes=2000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:message.max.bytes=2000" \
        in out, out

    tool(cluster, "kafka-configs", "--alter", "--entity-type", "brokers", "--entity-default",
         "--delete-config", "message.max.bytes")
    wait_for("every leader to take the record again", lambda: produce_each() == {0: None, 1: None, 2: None}, 60)
    out = tool(cluster, "kafka-configs", "--describe", "--entity-type", "brokers", "--entity-default").stdout
    assert "message.max.bytes" not in out, out
