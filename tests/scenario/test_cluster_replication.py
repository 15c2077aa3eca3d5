"""Seed 004: replication under faults in a 3-broker cluster with one Kafka 4.3.1 controller.

Parametrized by broker kinds: three Kafka brokers (the oracle weir is held to), three weir brokers,
and a mixed cluster (broker 1 weir, 2 and 3 Kafka). The short form of these checks is in
test_cluster_isr.py (in `make test`).

  - RF=3, min.insync.replicas=2: with both followers stopped an acks=all produce fails with
    NOT_ENOUGH_REPLICAS, nothing acknowledged is lost, `kafka-topics --describe
    --under-min-isr-partitions` lists the partition; the followers come back into the ISR.
  - kill -9 of the leader during an idempotent acks=all producer of a numbered sequence: after the
    restart a checker reads everything back (every acknowledged value exactly once, one value
    per offset, the acknowledged offsets hold the acknowledged values, in order).
  - a follower SIGSTOPped past replica.lag.time.max.ms (3000 ms here) leaves the ISR while it
    stays registered, and rejoins after SIGCONT.

All of them are `slow` (each starts four JVMs); run with
`.cache/venv/bin/pytest tests/scenario/test_cluster_replication.py -m slow`.
"""
from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import KafkaError, Producer

from harness.cluster import wait_for
from harness.replication import check_log, create_topic, describe_partitions, produce, read_all

pytestmark = [pytest.mark.slow, pytest.mark.kafka]

LAG_MS = 3000
BROKER_OVERRIDES = {
    "replica.lag.time.max.ms": LAG_MS,
    "unclean.leader.election.enable": False,
    "auto.create.topics.enable": False,
}


@pytest.fixture(params=[
    pytest.param(("kafka", "kafka", "kafka"), id="kafka"),
    pytest.param(("weir", "weir", "weir"), id="weir"),
    pytest.param(("weir", "kafka", "kafka"), id="mixed"),
])
def kinds(request):
    return list(request.param)


def start_cluster(cluster_factory, kinds, **kwargs):
    return cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES, **kwargs)


# ------------------------------------------------------------------------------------ scenarios
@pytest.mark.timeout(600)
def test_min_isr_refuses_acks_all_without_followers(cluster_factory, kinds, topic_name):
    cluster = start_cluster(cluster_factory, kinds)
    create_topic(cluster, topic_name, min_isr=2)
    [row] = describe_partitions(cluster.bootstrap, topic_name)
    assert len(row["replicas"]) == 3 and sorted(row["isr"]) == sorted(row["replicas"]) \
        and row["leader"] in row["replicas"], row["raw"]

    before, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:05d}" for i in range(20)])
    assert not failed and len(before) == 20, failed

    leader = cluster.leader_of(topic_name, 0)
    followers = [b for b in row["replicas"] if b != leader]
    for f in followers:
        cluster.stop(f)
    assert cluster.wait_isr(topic_name, 0, [leader], timeout=60) == [leader]

    # retries=0: the broker's first answer is the delivery report's error.
    lone = cluster.broker(leader).bootstrap
    acked, refused = produce(lone, topic_name, [f"v-{i:05d}" for i in range(20, 25)],
                             **{"enable.idempotence": False, "retries": 0})
    assert not acked, f"acknowledged with an ISR of 1 and min.insync.replicas=2: {acked}"
    codes = {v: e.code() for v, e in refused.items()}
    assert set(codes.values()) == {KafkaError.NOT_ENOUGH_REPLICAS}, codes

    under = describe_partitions(lone, None, "--under-min-isr-partitions")
    assert [(r["topic"], r["partition"], r["isr"]) for r in under] == [(topic_name, 0, [leader])], \
        under[0]["raw"] if under else "no partition listed"

    for f in followers:
        cluster.start_broker(f)
    assert len(cluster.wait_isr(topic_name, 0, 3, timeout=120)) == 3
    [row] = describe_partitions(cluster.bootstrap, topic_name)
    assert sorted(row["isr"]) == sorted(row["replicas"]), row["raw"]
    assert describe_partitions(cluster.bootstrap, None, "--under-min-isr-partitions") == []

    records = read_all(cluster.bootstrap, topic_name)
    assert check_log(records, before) == []
    # Refused before the append: the refused values are nowhere in the log.
    assert [v for _, v in records] == sorted(before), records


@pytest.mark.timeout(600)
def test_leader_kill9_during_idempotent_producer_loses_nothing(cluster_factory, kinds, topic_name):
    cluster = start_cluster(cluster_factory, kinds)
    create_topic(cluster, topic_name, min_isr=2)
    leader = cluster.leader_of(topic_name, 0)
    total, kill_after = 3000, 500

    acked: dict[str, int] = {}
    failed: dict[str, KafkaError] = {}
    lock = threading.Lock()

    def report(err, msg):
        v = msg.value().decode()
        with lock:
            if err is None:
                acked[v] = msg.offset()
            else:
                failed[v] = err
    p = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True,
                  "linger.ms": 5, "message.timeout.ms": 120000, "max.in.flight": 5})
    produced = 0

    def produce_until(n: int) -> None:
        nonlocal produced
        while produced < n:
            try:
                p.produce(topic_name, value=f"seq-{produced:06d}".encode(), partition=0,
                          on_delivery=report)
                produced += 1
            except BufferError:
                p.poll(0.1)
            p.poll(0)

    produce_until(kill_after * 2)
    wait_for(f"{kill_after} acknowledgements before the kill", lambda: p.poll(0.1) >= 0 and len(acked) >= kill_after, 60)
    cluster.kill(leader)
    produce_until(total)  # the producer keeps going while the controller moves the leadership
    new_leader = cluster.wait_leader(topic_name, 0, timeout=60, not_id=leader)
    assert p.flush(150) == 0, "messages still undelivered 150 s after the kill"
    assert not failed, {v: str(e) for v, e in list(failed.items())[:10]}
    assert len(acked) == total

    cluster.start_broker(leader)  # waits until it is registered again (session expiry covered)
    assert len(cluster.wait_isr(topic_name, 0, 3, timeout=120)) == 3
    records = read_all(cluster.bootstrap, topic_name)
    anomalies = check_log(records, acked)
    assert anomalies == [], "\n".join(anomalies[:50])
    assert len(records) == total, f"{len(records)} records for {total} acknowledged (new leader {new_leader})"


@pytest.mark.timeout(600)
def test_paused_follower_leaves_isr_and_rejoins(cluster_factory, kinds, topic_name):
    # The controller must not fence the paused broker first (its heartbeats stop too): with a
    # long broker session the ISR shrink can only come from the leader's lag check.
    cluster = start_cluster(cluster_factory, kinds,
                            controller_overrides={"broker.session.timeout.ms": 60000})
    create_topic(cluster, topic_name, min_isr=2)
    leader = cluster.leader_of(topic_name, 0)
    follower = next(b for b in cluster.replicas_of(topic_name, 0) if b != leader)

    stop = threading.Event()
    acked: dict[str, int] = {}
    failed: dict[str, KafkaError] = {}

    def traffic():
        p = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "linger.ms": 0,
                      "enable.idempotence": True, "message.timeout.ms": 120000})

        def report(err, msg):
            (failed if err else acked)[msg.value().decode()] = err or msg.offset()
        i = 0
        while not stop.is_set() and i < 100_000:
            p.produce(topic_name, value=f"lag-{i:06d}".encode(), partition=0, on_delivery=report)
            i += 1
            p.poll(0.02)  # paces the traffic (about 50 records/s)
        p.flush(120)
    t = threading.Thread(target=traffic, daemon=True)
    t.start()
    try:
        wait_for("traffic flowing", lambda: len(acked) >= 20, 60)
        paused_at = time.monotonic()
        cluster.pause(follower)
        isr = cluster.wait_isr(topic_name, 0, 2, timeout=60)
        shrunk_after = time.monotonic() - paused_at
        assert follower not in isr, isr
        assert shrunk_after >= LAG_MS / 1000 * 0.9, f"ISR shrank after {shrunk_after:.1f}s, before the lag time"
        # Still registered: the lag check, not fencing, took it out of the ISR.
        assert follower in [b.node_id for b in cluster.metadata([]).brokers]
        cluster.resume(follower)
        assert len(cluster.wait_isr(topic_name, 0, 3, timeout=60)) == 3
    finally:
        stop.set()
        t.join(150)
    assert not t.is_alive(), "the producer thread did not finish"
    assert not failed, {v: str(e) for v, e in list(failed.items())[:10]}
    records = read_all(cluster.bootstrap, topic_name)
    assert check_log(records, acked) == []
