"""The consumer group protocol (KIP-848, issue 16) on brokers under a Kafka 4.3.1 KRaft controller:
ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69) follow the cluster's finalized
group.version, as Kafka's brokers do (KafkaApis.isConsumerGroupProtocolEnabled).

Parametrized by broker kinds like test_cluster_groups.py: "kafka" (the oracle; `slow`) and "weir".

  - test_group_version_0_refuses_the_consumer_protocol: one broker, formatted with the harness's
    DEFAULT_FEATURES (group.version=0, so no FeatureLevelRecord for it). ApiVersions still lists
    keys 68 and 69 (Kafka does not filter them by feature) and finalizes no group.version;
    ConsumerGroupHeartbeat answers UNSUPPORTED_VERSION without a message, ConsumerGroupDescribe
    UNSUPPORTED_VERSION for each group.
  - test_two_members_share_a_replicated_topic: three brokers formatted with group.version=1,
    __consumer_offsets and the topic with RF=3. Every broker finalizes group.version 1. Two
    confluent-kafka consumers with group.protocol=consumer: the first reads a first batch from all
    four partitions, the second joins, the partitions split 2/2 (the first commits what it read as
    it gives partitions up), then a second batch is produced and read; every record is read exactly
    once.
"""
from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness.cluster import DEFAULT_FEATURES, wait_for
from harness.consumer_protocol import Member, expected, values
from harness.kreq import Kreq

pytestmark = [pytest.mark.kafka]

PARTITIONS = 4
BATCH = 40  # records per phase, spread evenly over the partitions
UNSUPPORTED_VERSION = 35
SOFTWARE = {"ClientSoftwareName": "weir-test", "ClientSoftwareVersion": "1"}


def api_versions(k: Kreq) -> tuple[set[int], dict[str, int]]:
    """(API keys, finalized feature levels) from ApiVersions v4."""
    r = k.send("ApiVersions", 4, SOFTWARE)
    assert r["ErrorCode"] == 0, r
    return ({a["ApiKey"] for a in r["ApiKeys"]},
            {f["Name"]: f["MaxVersionLevel"] for f in r["FinalizedFeatures"]})


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", [pytest.param("kafka", marks=pytest.mark.slow), "weir"])
def test_group_version_0_refuses_the_consumer_protocol(cluster_factory, kind):
    assert DEFAULT_FEATURES["group.version"] == 0
    cluster = cluster_factory([kind], controllers=1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    with Kreq(cluster.broker(1)) as k:
        keys, finalized = wait_for("finalized features from the broker",
                                   lambda: av if (av := api_versions(k))[1] else None, 30)
        assert {68, 69} <= keys
        assert "group.version" not in finalized, finalized
        assert finalized.get("transaction.version") == 2, finalized
        hb = k.send("ConsumerGroupHeartbeat", 1, {
            "Group": group, "MemberID": str(uuid.uuid4()), "MemberEpoch": 0, "RebalanceTimeoutMillis": 30000,
            "SubscribedTopicNames": ["t"], "Topics": []})
        assert (hb["ErrorCode"], hb["ErrorMessage"], hb["MemberEpoch"]) == (UNSUPPORTED_VERSION, None, 0), hb
        d = k.send("ConsumerGroupDescribe", 0, {"Groups": [group, ""]})
        assert [(g["Group"], g["ErrorCode"], g["ErrorMessage"]) for g in d["Groups"]] == [
            (group, UNSUPPORTED_VERSION, None), ("", UNSUPPORTED_VERSION, None)], d


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", [pytest.param("kafka", marks=pytest.mark.slow), "weir"])
def test_two_members_share_a_replicated_topic(cluster_factory, kind, topic_name):
    cluster = cluster_factory([kind] * 3, controllers=1, features={**DEFAULT_FEATURES, "group.version": 1},
                              broker_overrides={"auto.create.topics.enable": False,
                                                "offsets.topic.replication.factor": 3,
                                                "offsets.topic.num.partitions": 3})
    for b in cluster.brokers.values():
        with Kreq(b) as k:
            keys, finalized = api_versions(k)
        assert {68, 69} <= keys
        assert finalized.get("group.version") == 1, (b.node_id, finalized)

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic_name, PARTITIONS, 3)], request_timeout=60)[topic_name].result(90)
    cluster.wait_topic(topic_name, partitions=PARTITIONS, replicas=3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True})

    def produce(start: int) -> None:
        for i in range(start, start + BATCH):
            producer.produce(topic_name, value=f"v{i}".encode(), partition=i % PARTITIONS)
        assert producer.flush(60) == 0

    group = f"g-{topic_name}"
    produce(0)
    first = Member(cluster, group, topic_name, "member-1")
    second = None
    try:
        def first_read_everything():
            first.poll(0.2)
            return first.owned == set(range(PARTITIONS)) and len(first.read) >= BATCH
        wait_for("the only member to own every partition and read the first batch", first_read_everything, 90,
                 interval=0, describe=lambda: f"owned={first.owned} read={len(first.read)}")

        second = Member(cluster, group, topic_name, "member-2")

        def split():
            first.poll(0.2)
            second.poll(0.2)
            return len(first.owned) == 2 and len(second.owned) == 2 and not first.owned & second.owned
        # The second batch goes out only once the split is done: produced earlier, the first member can
        # read all of it before it gives two partitions up, and the second reads nothing.
        wait_for("the partitions to split 2/2", split, 90, interval=0,
                 describe=lambda: f"owned {first.owned} / {second.owned}")
        produce(BATCH)

        def split_and_read():
            return split() and len(first.read) + len(second.read) >= 2 * BATCH
        wait_for("both batches to be read, split 2/2", split_and_read, 90, interval=0,
                 describe=lambda: f"owned {first.owned} / {second.owned}, read {len(first.read)} + {len(second.read)}")
        assert values(first, second) == expected(2 * BATCH)
        positions = [(p, o) for m in (first, second) for (p, o, _) in m.read]
        assert len(positions) == len(set(positions)), "a record was read twice"
        assert second.read, "the second member read nothing"

        with Kreq(cluster.broker(1)) as k:
            fc = k.send("FindCoordinator", 4, {"CoordinatorType": 0, "CoordinatorKeys": [group]})
            coordinator = fc["Coordinators"][0]["NodeID"]
        with Kreq(cluster.broker(coordinator)) as k:
            d = k.send("ConsumerGroupDescribe", 0, {"Groups": [group]})["Groups"][0]
        assert d["ErrorCode"] == 0 and len(d["Members"]) == 2, d
    finally:
        for m in (second, first):
            if m is not None:
                m.close(commit=False)
        producer.close()  # before the cluster stops, or librdkafka keeps reconnecting to it
