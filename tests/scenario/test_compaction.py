"""Seed 004: log compaction keeps the latest value per key (and drops tombstones later), on weir
and on the real Kafka, observed the way users observe it: by reading the topic from the start."""
from __future__ import annotations

import time

import pytest

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic


def read_all(broker, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                  "enable.partition.eof": True})
    c.subscribe([topic])
    out = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                break
            continue
        out.append((m.offset(), m.key(), m.value()))
    c.close()
    return out


@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_compacted_topic_keeps_latest_value_per_key(broker, topic_name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic_name, 1, 1, config={
        "cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "86400000"})])[topic_name].result(30)
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    # What the log held before any clean comes from the delivery reports, not from a read: a
    # broker's cleaner may compact as soon as a segment rolls (Kafka's can run before the read).
    acked, errors = [], []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)
        else:
            acked.append((msg.offset(), msg.key(), msg.value()))

    # Rounds of updates to 5 keys; each round lands in a new segment (segment.ms elapsed).
    for rnd in range(6):
        for k in range(5):
            p.produce(topic_name, key=f"k{k}".encode(), value=f"v{rnd}".encode(), on_delivery=on_delivery)
        if rnd == 5:
            p.produce(topic_name, key=b"k4", value=None, on_delivery=on_delivery)  # a tombstone
        assert p.flush(30) == 0
        time.sleep(0.3)
    p.produce(topic_name, key=b"roll", value=b"x", on_delivery=on_delivery)  # rolls the last round's segment
    assert p.flush(30) == 0

    def latest(records):
        state = {}
        for _, k, v in records:
            state[k] = v
        return state

    assert errors == []
    before = sorted(acked)
    assert [o for o, _, _ in before] == list(range(32))
    expected = latest(before)
    deadline = time.monotonic() + 90  # Kafka's cleaner backs off 15 s between checks
    after = before
    while time.monotonic() < deadline:
        after = read_all(broker, topic_name)
        if len(after) <= 7:
            break
        time.sleep(2)
    # Every key keeps its latest value (the tombstone stays for delete.retention.ms), at its
    # original offset; older values are gone.
    assert latest(after) == expected
    assert [k for _, k, _ in after].count(b"k0") == 1
    assert after == [r for r in before if r in after]
    assert len(after) <= 7
