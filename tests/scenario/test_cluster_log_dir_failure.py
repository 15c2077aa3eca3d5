"""A broker of a replicated cluster whose log directory fails (issue 15): its only log dir fills
up while it leads an RF=3 partition (min.insync.replicas=2) with an idempotent acks=all producer
of a numbered sequence writing to it. As Kafka does when the last live log directory of a broker
goes offline, the broker halts with exit code 1; the controller fences it and elects another ISR
member, the producer goes on with the others, and once the disk has room again the broker starts,
recovers its log (whose tail holds whatever part of the failed append reached the disk) and
rejoins the ISR. Afterwards every acknowledged value is in the log exactly once, at its offset.

(A single weir node deliberately stays up on a full disk, answering KAFKA_STORAGE_ERROR:
test_full_disk.py. There is no other replica to take over there.)

Broker 1's log.dirs is a 24 MiB tmpfs (the small_disk fixture; skipped where mounting is not
allowed); the other brokers' dirs are on the normal disk. The Kafka variant (the oracle) is slow.
"""
from __future__ import annotations

import subprocess

import pytest

from harness import run_tool
from harness.cluster import wait_for
from harness.replication import TOOL_ENV, SequenceProducer, check_exact_sequence

BROKER_OVERRIDES = {"unclean.leader.election.enable": False, "auto.create.topics.enable": False}
CONTROLLER_OVERRIDES = {"auto.leader.rebalance.enable": False}
# What each kind writes when it halts (Kafka: ReplicaManager's fatal line).
HALT_LINE = {"kafka": "have failed", "weir": "event=log_dir_failed"}


def disk_usage(path) -> str:
    return subprocess.run(["df", "-h", str(path)], capture_output=True, text=True).stdout.strip()


@pytest.fixture(params=[
    pytest.param("kafka", id="kafka", marks=pytest.mark.slow),
    pytest.param("weir", id="weir"),
])
def kind(request):
    return request.param


@pytest.mark.timeout(600)
def test_leader_whose_disk_fills_halts_and_nothing_acknowledged_is_lost(small_disk, cluster_factory, kind,
                                                                       topic_name):
    data = small_disk / "data"
    cluster = cluster_factory([kind] * 3, controllers=1, broker_overrides=BROKER_OVERRIDES,
                              controller_overrides=CONTROLLER_OVERRIDES,
                              per_broker_overrides={1: {"log.dirs": str(data)}})
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--replica-assignment", "1:2:3", "--config",
             "min.insync.replicas=2", bootstrap=cluster.bootstrap, env=TOOL_ENV, timeout=90, check=True)
    cluster.wait_topic(topic_name, partitions=1, replicas=3)
    assert cluster.wait_leader(topic_name, 0) == 1
    assert cluster.wait_isr(topic_name, 0, 3, timeout=60) == [1, 2, 3]
    b1 = cluster.broker(1)

    # 4 KiB values at up to ~500 a second fill the 24 MiB in well under a minute.
    with SequenceProducer(cluster.bootstrap, topic_name, "seq", pace=0.002, limit=60_000,
                          value_bytes=4096) as sp:
        sp.wait_acked(20, 60)
        wait_for("broker 1 to halt on its full log dir", lambda: b1.proc.poll() is not None, timeout=240,
                 describe=lambda: f"acked {sp.n_acked()}, disk usage {disk_usage(small_disk)}")
        assert b1.proc.returncode == 1, f"broker 1 exited with {b1.proc.returncode}"
        assert HALT_LINE[kind] in b1.log_path.read_text(errors="replace")
        halted_at = sp.n_acked()
        new_leader = cluster.wait_leader(topic_name, 0, timeout=90, not_id=1)
        assert new_leader in (2, 3)
        sp.wait_acked(halted_at + 50, 90)

        # Room again: broker 1 starts, recovers its log and catches up.
        subprocess.run(["mount", "-o", "remount,size=512m", str(small_disk)], check=True)
        cluster.start_broker(1)
        assert cluster.wait_isr(topic_name, 0, 3, timeout=120) == [1, 2, 3]
        sp.wait_acked(sp.n_acked() + 50, 60)
    assert halted_at > 1000, f"only {halted_at} records acknowledged before the halt"
    check_exact_sequence(cluster.bootstrap, topic_name, sp)
