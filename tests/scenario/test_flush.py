"""Periodic flushes and checkpoints as Kafka does them, seen in the log dir's checkpoint files:
flush.messages (flush after that many unflushed messages), flush.ms (flush when the last flush is
that old), the flush of a segment after it is rolled, and recovery-point-offset-checkpoint /
replication-offset-checkpoint written every log.flush.offset.checkpoint.interval.ms. The same
scenario runs against weir and against a Kafka of its own with the same settings."""
from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer

from harness import run_tool

SETTINGS = {
    "log.flush.offset.checkpoint.interval.ms": "200",
    "log.flush.start.offset.checkpoint.interval.ms": "200",
    # flush.ms is checked this often (Kafka checks only with this set); log.flush.interval.ms set
    # explicitly, or it would default to the scheduler interval for every topic.
    "log.flush.scheduler.interval.ms": "100",
    "log.flush.interval.ms": "9223372036854775807",
}


# The oracle variant is slow (make test time); the weir variant runs in make test.
@pytest.fixture(params=["weir", pytest.param("kafka", marks=(pytest.mark.kafka, pytest.mark.differential, pytest.mark.slow))])
def flushing_broker(request):
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")(settings=dict(SETTINGS))
    return request.getfixturevalue("kafka_factory")(overrides=dict(SETTINGS))


def read_checkpoint(path) -> dict[tuple[str, int], int]:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return {}
    if len(lines) < 2 or len(lines) < 2 + int(lines[1]):
        return {}  # caught while being rewritten
    assert lines[0] == "0", lines[:2]
    out = {}
    for line in lines[2:2 + int(lines[1])]:
        topic, partition, offset = line.rsplit(" ", 2)
        out[(topic, int(partition))] = int(offset)
    return out


# Kafka's LogManager runs its first recovery-point checkpoint 30 s after start-up
# (InitialTaskDelayMs), then every log.flush.offset.checkpoint.interval.ms: the bound covers that.
def wait_for(predicate, timeout=60.0):
    deadline = time.time() + timeout
    while True:
        value = predicate()
        if value or time.time() > deadline:
            return value
        time.sleep(0.1)


def create(broker, topic, *configs):
    args = ["--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1"]
    for c in configs:
        args += ["--config", c]
    run_tool("kafka-topics", *args, bootstrap=broker, timeout=90).check()


def produce(broker, topic, count, size=100):
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "1", "enable.idempotence": False,
                  "linger.ms": 0, "batch.num.messages": 1})
    for i in range(count):
        p.produce(topic, value=bytes([i % 256]) * size)
        p.poll(0)
    assert p.flush(60) == 0


def test_flush_messages_flush_ms_rolls_and_checkpoints(flushing_broker, topic_name):
    b = flushing_broker
    by_count, by_time, never, rolled = (f"{topic_name}-{s}" for s in ("count", "time", "never", "rolled"))
    create(b, by_count, "flush.messages=1")
    create(b, by_time, "flush.ms=300")
    create(b, never)
    create(b, rolled, "segment.bytes=1048576")
    for t in (by_count, by_time, never):
        produce(b, t, 10)
    produce(b, rolled, 1500, size=1000)  # ~1.5 MB of 1 KB batches: at least one roll

    recovery = b.data_dir / "recovery-point-offset-checkpoint"
    hw = b.data_dir / "replication-offset-checkpoint"
    # Every log's high watermark is checkpointed; with acks=1 and no flush settings nothing flushes
    # the other logs, but flush.messages=1 and flush.ms=300 do.
    assert wait_for(lambda: read_checkpoint(hw).get((never, 0)) == 10 and
                    read_checkpoint(hw).get((rolled, 0)) == 1500), read_checkpoint(hw)
    assert wait_for(lambda: read_checkpoint(recovery).get((by_count, 0)) == 10), read_checkpoint(recovery)
    assert wait_for(lambda: read_checkpoint(recovery).get((by_time, 0)) == 10), read_checkpoint(recovery)

    # A rolled segment is flushed: the recovery point reaches at least the active segment's base.
    rolled_dir = b.data_dir / f"{rolled}-0"
    bases = sorted(int(p.name.split(".")[0]) for p in rolled_dir.glob("*.log"))
    assert len(bases) >= 2, bases
    assert wait_for(lambda: read_checkpoint(recovery).get((rolled, 0), 0) >= bases[-1]), \
        (bases, read_checkpoint(recovery))

    time.sleep(1.0)  # a few more checkpoint intervals: the unflushed log stays unflushed
    assert read_checkpoint(recovery).get((never, 0), 0) == 0, read_checkpoint(recovery)

    # flush.ms set afterwards on a topic whose log holds unflushed messages and takes no more:
    # the periodic check still flushes it.
    run_tool("kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", never,
             "--add-config", "flush.ms=300", bootstrap=b, timeout=90).check()
    assert wait_for(lambda: read_checkpoint(recovery).get((never, 0)) == 10), read_checkpoint(recovery)


def test_restart_after_kill_scans_only_from_the_checkpointed_recovery_point(weir_factory, topic_name):
    """weir only (the log line is weir's): after kill -9, a log whose rolled segments were flushed
    and checkpointed is checked batch by batch only from its recovery point, not from the start,
    and nothing acknowledged is lost."""
    b = weir_factory(settings=dict(SETTINGS))
    create(b, topic_name, "segment.bytes=1048576")
    produce(b, topic_name, 3500, size=1000)  # ~3.5 MB: four segments
    bases = sorted(int(p.name.split(".")[0]) for p in (b.data_dir / f"{topic_name}-0").glob("*.log"))
    assert len(bases) >= 4, bases
    recovery = b.data_dir / "recovery-point-offset-checkpoint"
    assert wait_for(lambda: read_checkpoint(recovery).get((topic_name, 0), 0) >= bases[-1]), read_checkpoint(recovery)
    b.kill()
    b.restart()
    loaded = [line for line in b.log_path.read_text().splitlines()
              if "event=log_loaded" in line and f"{topic_name}-0" in line]
    assert loaded, "no log_loaded line for the partition"
    assert "recovered=true" in loaded[-1] and "scanned_segments=1" in loaded[-1], loaded[-1]
    out = run_tool("kafka-get-offsets", "--topic", topic_name, bootstrap=b, timeout=60).check()
    assert out.stdout.split() == [f"{topic_name}:0:3500"], out.stdout
