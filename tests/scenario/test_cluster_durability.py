"""Seed 004's durability claim, the long form (issue 15; every test here is `slow`): an RF=3
partition with min.insync.replicas=2 and an idempotent acks=all producer of a numbered sequence
(confluent-kafka) running throughout while faults repeat a fixed number of times, each fault
started only once the ISR is whole again. Afterwards the log is read from the start and checked:
every acknowledged value exactly once, at the offset it was acknowledged at, in order, nothing
refused. The same bodies on three Kafka brokers (the oracle), three weir brokers and a mixed
cluster (broker 1 Kafka, 2 and 3 weir: both kinds are killed).

  - test_leader_killed_repeatedly_loses_nothing: the partition leader is killed -9, the
    controller fences it and elects another ISR member, the producer is acknowledged by it, the
    killed broker starts again and rejoins the ISR; KILLS times.
  - test_controller_leader_killed_repeatedly_loses_nothing: three controllers; the active
    controller is killed -9, the quorum elects another, the producer goes on, the killed
    controller starts again; CONTROLLER_KILLS times, then the partition leader is killed once
    under the last elected controller.

The short form (one kill, one ISR shrink/expand, one divergence) is test_cluster_isr.py.
"""
from __future__ import annotations

import pytest

from harness.replication import SequenceProducer, check_exact_sequence

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

KILLS = 5
CONTROLLER_KILLS = 3
BROKER_OVERRIDES = {"unclean.leader.election.enable": False, "auto.create.topics.enable": False}
CONTROLLER_OVERRIDES = {"auto.leader.rebalance.enable": False}


@pytest.fixture(params=[
    pytest.param(("kafka", "kafka", "kafka"), id="kafka"),
    pytest.param(("weir", "weir", "weir"), id="weir"),
    pytest.param(("kafka", "weir", "weir"), id="mixed"),
])
def kinds(request):
    return list(request.param)


def create(cluster, topic: str) -> None:
    from harness import run_tool
    from harness.replication import TOOL_ENV
    # Led by broker 1 first: in the mixed cluster the first kill is the Kafka broker's.
    run_tool("kafka-topics", "--create", "--topic", topic, "--replica-assignment", "1:2:3", "--config",
             "min.insync.replicas=2", bootstrap=cluster.bootstrap, env=TOOL_ENV, timeout=90, check=True)
    cluster.wait_topic(topic, partitions=1, replicas=3)


def kill_leader_and_restart(cluster, topic: str, sp: SequenceProducer) -> int:
    """One round: kill -9 the leader, wait for another, acknowledgements from it, the restart and
    the whole ISR; returns the killed broker's id."""
    leader = cluster.wait_leader(topic, 0)
    isr = cluster.isr_of(topic, 0)
    cluster.kill(leader)
    new_leader = cluster.wait_leader(topic, 0, timeout=90, not_id=leader)
    assert new_leader in isr, (new_leader, isr)
    sp.wait_acked(sp.n_acked() + 10, 90)
    cluster.start_broker(leader)
    assert cluster.wait_isr(topic, 0, 3, timeout=120) == [1, 2, 3]
    sp.wait_acked(sp.n_acked() + 10, 60)
    return leader


@pytest.mark.timeout(900)
def test_leader_killed_repeatedly_loses_nothing(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES)
    create(cluster, topic_name)
    killed = []
    with SequenceProducer(cluster.bootstrap, topic_name, "seq", limit=100_000) as sp:
        sp.wait_acked(20, 60)
        for _ in range(KILLS):
            killed.append(kill_leader_and_restart(cluster, topic_name, sp))
    assert {kinds[b - 1] for b in killed} == set(kinds), (killed, kinds)
    check_exact_sequence(cluster.bootstrap, topic_name, sp)


@pytest.mark.timeout(900)
def test_controller_leader_killed_repeatedly_loses_nothing(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=3, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES)
    create(cluster, topic_name)
    quorum = cluster.quorum
    with SequenceProducer(cluster.bootstrap, topic_name, "seq", limit=100_000) as sp:
        sp.wait_acked(20, 60)
        for _ in range(CONTROLLER_KILLS):
            active = quorum.wait_leader()
            quorum.kill(active)
            quorum.wait_leader(timeout=60, not_id=active)
            sp.wait_acked(sp.n_acked() + 20, 90)
            quorum.restart(active)
            cluster.wait_brokers([1, 2, 3])
            assert cluster.wait_isr(topic_name, 0, 3, timeout=60) == [1, 2, 3]
            sp.wait_acked(sp.n_acked() + 20, 60)
        kill_leader_and_restart(cluster, topic_name, sp)
    check_exact_sequence(cluster.bootstrap, topic_name, sp)
