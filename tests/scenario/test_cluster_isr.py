"""Seed 004, the short part: replication with an ISR in a 3-broker cluster under one Kafka 4.3.1
controller, the representative subset that runs in `make test` (issue 15).

Parametrized by broker kinds like test_cluster_replication.py: "kafka" (three Kafka brokers, the
oracle; `slow`, run with `-m slow`) and "weir" (three weir brokers; not slow: this is the
make-test part).

  - test_isr_shrinks_expands_and_leader_kill_loses_nothing: RF=3, min.insync.replicas=2,
    replica.lag.time.max.ms=3000, an idempotent acks=all producer of a numbered sequence running
    throughout. A SIGSTOPped follower leaves the ISR by the leader's lag check (it stays
    registered) and rejoins after SIGCONT; kill -9 of the leader moves the leadership to a
    member of the ISR and the producer keeps being acknowledged; the restarted old leader
    rejoins the ISR. Read back: every acknowledged value exactly once, at its offset, in order.
  - test_partitioned_leader_truncates_divergent_suffix: the leader is cut from the controller and
    from its followers (LinkProxy on its controller link and on its replication listener) and
    takes acks=1 writes that never replicate; the controller fences it and elects another ISR
    member, which takes acks=all writes at the same offsets; after the heal the old leader
    follows and truncates its divergent suffix: the three replicas' logs (kafka-dump-log of
    each broker's partition directory: offsets, leader epochs, producer fields, CRCs, payloads)
    are identical below the high watermark and hold none of the acks=1 values.
"""
from __future__ import annotations

import pytest

from harness.cluster import CONTROLLER_ID_BASE, wait_for
from harness.replication import (SequenceProducer, below, check_exact_sequence, check_log, create_topic,
                                 dump_values, high_watermark, partition_dump, produce, read_all)

pytestmark = [pytest.mark.kafka]

LAG_MS = 3000
BROKER_OVERRIDES = {
    "replica.lag.time.max.ms": LAG_MS,
    "unclean.leader.election.enable": False,
    "auto.create.topics.enable": False,
}
# The controller never moves a leadership back to the preferred replica on its own (default every
# 300 s): the leader a test elected by a fault stays the leader until the test's next fault.
CONTROLLER_OVERRIDES = {"auto.leader.rebalance.enable": False}


@pytest.fixture(params=[
    pytest.param(("kafka", "kafka", "kafka"), id="kafka", marks=pytest.mark.slow),
    pytest.param(("weir", "weir", "weir"), id="weir"),
])
def kinds(request):
    return list(request.param)


def registered(cluster) -> list[int]:
    return sorted(b.node_id for b in cluster.metadata([]).brokers)


# ------------------------------------------------------------------------------------ scenarios
# A broker session (the controller's broker.session.timeout.ms) far longer than the lag time: a
# paused follower can only leave the ISR by the leader's lag check (AlterPartition), not by being
# fenced, and it is still registered when the ISR has shrunk. The price is the kill -9 failover,
# which waits for that session to expire.
SESSION_MS = 20000


@pytest.mark.timeout(300)
def test_isr_shrinks_expands_and_leader_kill_loses_nothing(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides={**CONTROLLER_OVERRIDES,
                                                    "broker.session.timeout.ms": SESSION_MS})
    create_topic(cluster, topic_name, min_isr=2)
    replicas = sorted(cluster.replicas_of(topic_name, 0))
    leader = cluster.leader_of(topic_name, 0)
    follower = next(b for b in replicas if b != leader)
    session_s = SESSION_MS / 1000

    with SequenceProducer(cluster.bootstrap, topic_name, "seq") as sp:
        sp.wait_acked(20, 60)

        # A hung follower: out of the ISR after replica.lag.time.max.ms, acks=all goes on with 2.
        cluster.pause(follower)
        isr = cluster.wait_isr(topic_name, 0, 2, timeout=60)
        assert follower not in isr and leader in isr, isr
        assert follower in registered(cluster), "the paused follower was fenced, not dropped by the lag check"
        sp.wait_acked(sp.n_acked() + 20, 60)
        cluster.resume(follower)
        assert cluster.wait_isr(topic_name, 0, replicas, timeout=60) == replicas

        # kill -9 of the leader: the controller fences it and elects another ISR member.
        isr_before = cluster.isr_of(topic_name, 0)
        cluster.kill(leader)
        new_leader = cluster.wait_leader(topic_name, 0, timeout=session_s + 60, not_id=leader)
        assert new_leader in isr_before and new_leader != leader, (new_leader, isr_before)
        isr = cluster.wait_isr(topic_name, 0, [b for b in replicas if b != leader], timeout=60)
        assert leader not in isr
        sp.wait_acked(sp.n_acked() + 20, 60)  # acknowledged by the new leader, ISR of 2

        # The old leader comes back as a follower and rejoins the ISR.
        cluster.start_broker(leader)
        assert cluster.wait_isr(topic_name, 0, replicas, timeout=90) == replicas
        assert cluster.leader_of(topic_name, 0) == new_leader
        sp.wait_acked(sp.n_acked() + 20, 60)

    # Nothing was refused or timed out, so the log is exactly the acknowledged sequence.
    check_exact_sequence(cluster.bootstrap, topic_name, sp)


@pytest.mark.timeout(300)
def test_partitioned_leader_truncates_divergent_suffix(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES,
                              controller_proxies=True, replication_proxies=True)
    create_topic(cluster, topic_name, min_isr=2)
    replicas = sorted(cluster.replicas_of(topic_name, 0))
    old = cluster.leader_of(topic_name, 0)
    others = [b for b in replicas if b != old]
    others_bootstrap = ",".join(cluster.broker(b).bootstrap for b in others)

    # One numbered sequence (check_log wants it increasing in offset order): before-0000..0049,
    # stale-0050..0069 (acks=1 to the cut-off leader), after-0070..0099 (acks=all to the new one).
    before, failed = produce(cluster.bootstrap, topic_name, [f"before-{i:04d}" for i in range(50)],
                             **{"enable.idempotence": True})
    assert not failed and sorted(before.values()) == list(range(50)), (before, failed)
    rlink = cluster.replication_link(old)
    clink = cluster.controller_link(old, CONTROLLER_ID_BASE)
    assert rlink.connections >= 1 and rlink.bytes_down > 0, f"the followers do not fetch through {rlink}"
    assert clink.connections >= 1 and clink.bytes_up > 0, f"broker {old} does not reach the controller through {clink}"

    # Isolate the leader: no heartbeats, no metadata, no AlterPartition; no follower fetches.
    clink.cut()
    rlink.cut()
    # Clients still reach it directly, and its metadata still names it the leader: acks=1 writes
    # are appended to its log only. retries=0: each delivery report is its first answer.
    stale, refused = produce(cluster.broker(old).bootstrap, topic_name,
                             [f"stale-{i:04d}" for i in range(50, 70)],
                             **{"acks": "1", "enable.idempotence": False, "retries": 0})
    assert not refused, {v: str(e) for v, e in refused.items()}
    assert sorted(stale.values()) == list(range(50, 70)), stale
    old_dump = partition_dump(cluster.broker(old), topic_name)
    assert [v for _, v in dump_values(old_dump)] == sorted(before) + sorted(stale), old_dump

    # The controller fences the silent broker and elects a leader from the rest of the ISR.
    new = cluster.wait_leader(topic_name, 0, timeout=60, not_id=old, via=others[0])
    assert new in others
    assert cluster.wait_isr(topic_name, 0, others, timeout=60, via=new) == others
    assert cluster.leader_of(topic_name, 0, via=old) == old, "the cut-off broker saw the new leader"
    after, failed = produce(others_bootstrap, topic_name, [f"after-{i:04d}" for i in range(70, 100)],
                            **{"enable.idempotence": True})
    assert not failed, {v: str(e) for v, e in failed.items()}
    # The new leader's log ended at 50: the stale writes never reached it, their offsets are reused.
    assert sorted(after.values()) == list(range(50, 80)), after
    new_dump = partition_dump(cluster.broker(new), topic_name)
    assert not {v for _, v in dump_values(new_dump)} & set(stale), "acks=1 writes to the cut-off leader replicated"

    clink.heal()
    rlink.heal()
    cluster.wait_brokers(replicas, timeout=60)
    assert cluster.wait_isr(topic_name, 0, replicas, timeout=90, via=new) == replicas
    assert cluster.leader_of(topic_name, 0, via=new) == new
    hw = high_watermark(cluster.broker(new).bootstrap, topic_name)
    assert hw == 80, hw

    def same_logs():
        dumps = {b: partition_dump(cluster.broker(b), topic_name) for b in replicas}
        return dumps if all(below(d, hw) == below(dumps[new], hw) for d in dumps.values()) else None

    def differences():
        dumps = {b: below(partition_dump(cluster.broker(b), topic_name), hw) for b in replicas}
        return {b: [(x["baseOffset"], x["partitionLeaderEpoch"], [v for _, v in x["records"]][:3])
                    for x in d] for b, d in dumps.items()}
    dumps = wait_for(f"the three replicas' logs identical below the high watermark {hw}", same_logs, 60,
                     describe=differences)
    ref = below(dumps[new], hw)
    assert [v for _, v in dump_values(ref)] == sorted(before) + sorted(after)
    assert [r[0] for r in dump_values(ref)] == list(range(hw))
    # The suffix written in the old epoch is gone; the new leader's epoch starts where it began.
    epochs = {b["partitionLeaderEpoch"] for b in ref if b["baseOffset"] >= 50}
    assert len(epochs) == 1 and min(epochs) > max(b["partitionLeaderEpoch"] for b in ref if b["baseOffset"] < 50), ref
    for b, d in dumps.items():
        assert not {v for _, v in dump_values(d)} & set(stale), f"broker {b} still holds acks=1 values"

    records = read_all(cluster.bootstrap, topic_name)
    acked = {**before, **after}
    anomalies = check_log(records, acked)
    assert anomalies == [], "\n".join(anomalies[:50])
    assert [v for _, v in records] == sorted(before) + sorted(after)
