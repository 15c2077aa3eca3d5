"""Eligible leader replicas (KIP-966) under a Kafka 4.3.1 quorum formatted with its default
eligible.leader.replicas.version=1 (issue 15): the same scenario on three Kafka brokers (the
oracle, `slow`), on three weir brokers and on a mixed cluster (broker 1 Kafka, 2 and 3 weir).

  - test_clean_replica_leads_from_elr: an RF=3 partition with min.insync.replicas=2 led by broker
    1; broker 3 and then broker 2 stop cleanly (SIGTERM). The second stop takes the ISR below
    min.insync.replicas: broker 2 leaves the ISR for the ELR (`kafka-topics --describe` shows
    `Elr: 2`). Broker 1, the last ISR member, is killed (-9), and broker 2 starts again; its registration carries the broker epoch of its clean shutdown
    (PreviousBrokerEpoch, from the log dir's .kafka_cleanshutdown), so the controller knows it
    kept its log and elects it from the ELR: every record acknowledged with acks=all is there.
"""
from __future__ import annotations

import re

import pytest

from harness import run_tool
from harness.cluster import DEFAULT_FEATURES, wait_for
from harness.replication import TOOL_ENV, check_log, produce, read_all

pytestmark = [pytest.mark.kafka]

ELR_FEATURES = {**DEFAULT_FEATURES, "eligible.leader.replicas.version": 1}
BROKER_OVERRIDES = {"auto.create.topics.enable": False, "unclean.leader.election.enable": False}
CONTROLLER_OVERRIDES = {"auto.leader.rebalance.enable": False}

_ROW = re.compile(r"Partition:\s*0\s+Leader:\s*(?P<leader>-?\d+|none)\s+Replicas:\s*(?P<replicas>[\d,]*)\s+"
                  r"Isr:\s*(?P<isr>[\d,]*)\s+Elr:\s*(?P<elr>[\d,]*)\s+LastKnownElr:\s*(?P<last>[\d,]*)")


@pytest.fixture(params=[
    pytest.param(("kafka", "kafka", "kafka"), id="kafka", marks=pytest.mark.slow),
    pytest.param(("weir", "weir", "weir"), id="weir"),
    # slow (make test time): the weir variant covers the same behaviour; run with -m slow.
    pytest.param(("kafka", "weir", "weir"), id="mixed", marks=pytest.mark.slow),
])
def kinds(request):
    return list(request.param)


def describe(cluster, topic: str) -> dict | None:
    """Leader, ISR and ELR of partition 0 as `kafka-topics --describe` prints them."""
    out = run_tool("kafka-topics", "--describe", "--topic", topic, bootstrap=cluster.bootstrap, env=TOOL_ENV,
                   timeout=90).check().stdout
    m = _ROW.search(out)
    if m is None:
        return None
    ids = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
    return {"leader": -1 if m["leader"] == "none" else int(m["leader"]), "isr": ids(m["isr"]),
            "elr": ids(m["elr"]), "last_known_elr": ids(m["last"]), "raw": out}


@pytest.mark.timeout(420)
def test_clean_replica_leads_from_elr(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, features=ELR_FEATURES, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES)
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--replica-assignment", "1:2:3", "--config",
             "min.insync.replicas=2", bootstrap=cluster.bootstrap, env=TOOL_ENV, timeout=90, check=True)
    cluster.wait_topic(topic_name, partitions=1, replicas=3)
    acked, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(100)])
    assert not failed and len(acked) == 100

    cluster.stop(3)
    cluster.wait_isr(topic_name, 0, [1, 2])
    more, failed = produce(cluster.bootstrap, topic_name, [f"v-{i:04d}" for i in range(100, 150)])
    assert not failed and len(more) == 50
    acked.update(more)
    row = describe(cluster, topic_name)
    assert row is not None and row["elr"] == [], row

    # Below min.insync.replicas: broker 2 leaves the ISR for the ELR.
    cluster.stop(2)
    row = wait_for("broker 2 to move from the ISR to the ELR", lambda: (
        r if (r := describe(cluster, topic_name)) and r["isr"] == [1] and r["elr"] == [2] else None), 60,
        describe=lambda: describe(cluster, topic_name))
    assert row["leader"] == 1, row

    # The last ISR member dies (no broker is left to ask; the partition has no leader until an
    # eligible replica is back).
    cluster.kill(1)
    cluster.start_broker(2)
    row = wait_for("broker 2 to be elected from the ELR", lambda: (
        r if (r := describe(cluster, topic_name)) and r["leader"] == 2 else None), 90,
        describe=lambda: describe(cluster, topic_name))
    assert row["isr"] == [2], row
    anomalies = check_log(read_all(cluster.bootstrap, topic_name), acked)
    assert not anomalies, anomalies
