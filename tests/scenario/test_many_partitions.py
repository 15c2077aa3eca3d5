"""10,000 partitions under `ulimit -n 1024` (issue 12): created, written, and reopened after a restart;
also 800 partitions under 256 descriptors (2,400 segment and index files, ten times what the limit
allows open at once).

weir keeps at most a bounded number of segment and index files open (storage/file_cache.h, 3/8 of
the soft RLIMIT_NOFILE by default) and reopens the others on demand, so the number of partitions
is not limited by the descriptor limit. weir only: Apache Kafka keeps every segment's log and
index files open and mapped, and stops with "Too many open files" long before 10,000 partitions
under this limit, which is the difference this test pins down.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from harness.paths import weir_bin

def end_offsets(admin: AdminClient, topics: list[str], partitions: int) -> dict[tuple[str, int], int]:
    specs = {TopicPartition(t, p): OffsetSpec.latest() for t in topics for p in range(partitions)}
    return {(tp.topic, tp.partition): f.result().offset for tp, f in admin.list_offsets(specs, request_timeout=120).items()}


# Creating 10,000 partitions syncs each one's partition.metadata and directory, and a clean shutdown
# syncs each log and writes a producer snapshot per partition: weir runs those syncs from several
# threads at once (storage/parallel.h), about a minute for this case on 2 busy cores (it was 5-8
# minutes with one sync at a time).
@pytest.mark.timeout(600)
@pytest.mark.parametrize("topics_n,partitions,nofile", [
    pytest.param(10, 1000, 1024, id="10000-under-1024"),
    pytest.param(2, 400, 256, id="800-under-256"),
])
def test_many_partitions_under_few_descriptors(weir_factory, tmp_path: Path, topic_name, topics_n, partitions, nofile):
    wrapper = tmp_path / f"weir-nofile-{nofile}"
    wrapper.write_text(f'#!/bin/sh\nexec prlimit --nofile={nofile}:{nofile} "{weir_bin()}" "$@"\n')
    wrapper.chmod(0o755)
    broker = weir_factory(binary=wrapper)
    broker.stop_timeout = 300
    topics = [f"{topic_name}-{i}" for i in range(topics_n)]
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    # One CreateTopics per topic: a request may create at most 10,000 partitions (Kafka's
    # controller limit, POLICY_VIOLATION beyond).
    t0 = time.monotonic()
    for t in topics:
        admin.create_topics([NewTopic(t, partitions, 1)], request_timeout=120)[t].result(180)
    print(f"created {topics_n * partitions} partitions in {time.monotonic() - t0:.1f} s")

    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20, "acks": "all",
                         "message.timeout.ms": 120000})
    failures = []
    for t in topics:
        for p in range(partitions):
            producer.produce(t, value=f"{t}/{p}".encode(), partition=p,
                             on_delivery=lambda err, msg: err and failures.append(err))
        producer.poll(0)
    assert producer.flush(180) == 0
    assert failures == []
    expected = {(t, p): 1 for t in topics for p in range(partitions)}
    assert end_offsets(admin, topics, partitions) == expected

    t0 = time.monotonic()
    broker.restart()
    print(f"restart (clean shutdown and start) of {topics_n * partitions} partitions: {time.monotonic() - t0:.1f} s")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert end_offsets(admin, topics, partitions) == expected
    # Every partition of one topic reads back its record after the restart (each read opens the
    # partition's segment again, through the bounded cache).
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "many-partitions", "enable.partition.eof": True,
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topics[-1], p, 0) for p in range(partitions)])
    seen, eof = {}, set()
    while len(eof) < partitions:
        m = c.poll(30)
        assert m is not None, f"reading stalled: {len(seen)} records, {len(eof)} partitions at their end"
        if m.error():
            assert m.error().code() == KafkaError._PARTITION_EOF, str(m.error())
            eof.add(m.partition())
            continue
        seen[m.partition()] = m.value().decode()
    c.close()
    assert seen == {p: f"{topics[-1]}/{p}" for p in range(partitions)}
    log = broker.log_path.read_text(errors="replace")
    assert "Too many open files" not in log
