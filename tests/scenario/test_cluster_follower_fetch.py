"""KIP-392, fetching from the closest replica (issue 15): three brokers in racks r1, r2, r3 with
`replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector`, a topic led by
broker 1 with replicas 1,2,3. The same body on three Kafka 4.3.1 brokers (the oracle, `slow`),
on three weir brokers and on a mixed cluster (Kafka broker 1 leads, weir brokers follow; both
in `make test`).

  - On the wire (Fetch v12 from a consumer): the leader answers a consumer in rack r3 with
    PreferredReadReplica 3 and no records; in rack r1 (its own) or without a rack it sends the
    records itself. A follower serves a consumer's Fetch v11+ up to its high watermark, and
    refuses Fetch v10 (NOT_LEADER_OR_FOLLOWER), as Kafka's ClientMetadata rule says.
  - With a client: a confluent-kafka consumer with `client.rack=r3` is sent to broker 3 (its
    statistics name broker 3 as the one it fetches from while broker 1 leads) and reads every
    record, also those produced after it moved.
"""
from __future__ import annotations

import base64
import json
import secrets
import threading

import pytest
from confluent_kafka import Consumer, TopicPartition

from harness.cluster import wait_for
from harness.kreq import Kreq
from harness.replication import TOOL_ENV, produce
from harness import run_tool

pytestmark = [pytest.mark.kafka]

SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
MAX_BYTES = 1 << 20


@pytest.fixture(params=[
    pytest.param(("kafka", "kafka", "kafka"), id="kafka", marks=pytest.mark.slow),
    pytest.param(("weir", "weir", "weir"), id="weir"),
    # slow (make test time): the weir variant covers the same behaviour; run with -m slow.
    pytest.param(("kafka", "weir", "weir"), id="mixed", marks=pytest.mark.slow),
])
def kinds(request):
    return list(request.param)


def fetch(k: Kreq, topic: str, version: int, rack: str | None, offset: int = 0) -> dict:
    body = {"ReplicaID": -1, "MaxWaitMillis": 0, "MinBytes": 0, "MaxBytes": MAX_BYTES, "SessionEpoch": -1,
            "Topics": [{"Topic": topic, "Partitions": [{"Partition": 0, "FetchOffset": offset,
                                                        "PartitionMaxBytes": MAX_BYTES}]}]}
    if rack is not None:
        body["Rack"] = rack
    resp = k.send("Fetch", version, body)
    return resp["Topics"][0]["Partitions"][0]


def record_bytes(p: dict) -> int:
    data = p.get("RecordBatches")
    return len(base64.b64decode(data)) if data else 0


@pytest.mark.timeout(360)
def test_consumer_fetches_from_the_replica_in_its_rack(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1,
                              broker_overrides={"auto.create.topics.enable": False, "replica.selector.class": SELECTOR},
                              per_broker_overrides={i: {"broker.rack": f"r{i}"} for i in (1, 2, 3)},
                              controller_overrides={"auto.leader.rebalance.enable": False})
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--replica-assignment", "1:2:3",
             bootstrap=cluster.bootstrap, env=TOOL_ENV, timeout=90, check=True)
    cluster.wait_topic(topic_name, partitions=1, replicas=3)
    acked, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(200)])
    assert not failed and len(acked) == 200

    # Metadata names each broker's rack.
    racks = {b.node_id: b.rack for b in cluster.metadata([]).brokers}
    assert racks == {1: "r1", 2: "r2", 3: "r3"}, racks

    with Kreq(cluster.broker(1)) as leader, Kreq(cluster.broker(3)) as follower:
        # The follower's high watermark catches up with the leader's on its next fetches.
        wait_for("broker 3 to serve the records up to the high watermark",
                 lambda: fetch(follower, topic_name, 12, "r3")["HighWatermark"] == 200, 60,
                 describe=lambda: fetch(follower, topic_name, 12, "r3"))
        p = fetch(leader, topic_name, 12, "r3")
        assert p["ErrorCode"] == 0 and p["PreferredReadReplica"] == 3, p
        assert record_bytes(p) == 0 and p["HighWatermark"] == 200, p
        for rack in ("r1", "", None):
            p = fetch(leader, topic_name, 12, rack)
            assert p["ErrorCode"] == 0 and p["PreferredReadReplica"] == -1 and record_bytes(p) > 0, (rack, p)
        p = fetch(leader, topic_name, 12, "nowhere")
        assert p["PreferredReadReplica"] == -1 and record_bytes(p) > 0, p

        for version in (11, 12):
            p = fetch(follower, topic_name, version, "r3")
            assert p["ErrorCode"] == 0 and p["PreferredReadReplica"] == -1, (version, p)
            assert record_bytes(p) > 0 and p["HighWatermark"] == 200, (version, p)
        p = fetch(follower, topic_name, 12, "r3", offset=200)
        assert p["ErrorCode"] == 0 and record_bytes(p) == 0, p
        assert fetch(follower, topic_name, 10, None)["ErrorCode"] == 6

    # A consumer in rack r3 moves to broker 3 and reads everything from there.
    fetched_from: list[tuple[int, int]] = []
    lock = threading.Lock()

    def stats(js: str) -> None:
        part = json.loads(js).get("topics", {}).get(topic_name, {}).get("partitions", {}).get("0")
        if part is not None:
            with lock:
                fetched_from.append((part.get("leader", -1), part.get("broker", -1)))

    c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"rack-{secrets.token_hex(4)}",
                  "client.rack": "r3", "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "statistics.interval.ms": 200, "stats_cb": stats})
    try:
        c.assign([TopicPartition(topic_name, 0, 0)])
        values: list[str] = []

        def pump() -> None:  # statistics are delivered by poll() too
            msg = c.poll(0.2)
            if msg is not None:
                assert msg.error() is None, msg.error()
                values.append(msg.value().decode())

        def read_until(n: int) -> None:
            wait_for(f"{n} records read", lambda: pump() or len(values) >= n, 90, interval=0)

        read_until(200)
        wait_for("the consumer's statistics to show it fetching from broker 3 while broker 1 leads",
                 lambda: pump() or (1, 3) in fetched_from, 60, interval=0, describe=lambda: fetched_from[-5:])
        more, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(200, 250)])
        assert not failed and len(more) == 50
        read_until(250)
        assert values == [f"v-{i:04d}" for i in range(250)]
        n = len(fetched_from)
        wait_for("fresh statistics", lambda: pump() or len(fetched_from) > n, 30, interval=0)
        with lock:
            recent = fetched_from[-1]
        assert recent == (1, 3), fetched_from[-5:]
    finally:
        c.close()
