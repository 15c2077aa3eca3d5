"""A full data disk (weir only: a Kafka broker whose only log dir fails takes the dir offline and
shuts down). weir answers the produces that do not fit KAFKA_STORAGE_ERROR, keeps serving every
acknowledged record, stays up, and takes writes again once space is freed (here by deleting the
topic that filled the disk). The disk is a small tmpfs, so this needs permission to mount one."""
from __future__ import annotations

import subprocess
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from harness import run_tool


def produce(bootstrap: str, topic: str, count: int) -> tuple[list[bytes], dict[str, int]]:
    """The values acknowledged, in offset order, and the errors by name."""
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": False, "retries": 0,
                  "message.timeout.ms": 20000, "linger.ms": 5})
    acked: list[tuple[int, bytes]] = []
    errors: dict[str, int] = {}

    def on_delivery(err, msg):
        if err is None:
            acked.append((msg.offset(), msg.value()))
        else:
            errors[err.name()] = errors.get(err.name(), 0) + 1

    for i in range(count):
        while True:
            try:
                p.produce(topic, value=(b"%08d" % i) * 125, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    assert p.flush(60) == 0
    return [v for _, v in sorted(acked)], errors


def consume_all(bootstrap: str, topic: str) -> list[bytes]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.partition.eof": True,
                  "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    values = []
    try:
        while True:
            m = c.poll(10)
            assert m is not None, f"no end of partition after {len(values)} records"
            if m.error():
                assert m.error().code() == m.error()._PARTITION_EOF, m.error()
                return values
            values.append(m.value())
    finally:
        c.close()


def test_full_disk_refuses_writes_keeps_acknowledged_data_and_recovers(weir_factory, small_disk, topic_name):
    b = weir_factory(settings={"log.dirs": str(small_disk / "data")})
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", "1", "--replication-factor", "1",
             bootstrap=b, timeout=60).check()
    acked, errors = produce(b.bootstrap, topic_name, 40000)  # ~40 MB into 24 MB
    assert len(acked) > 1000 and errors, (len(acked), errors)
    assert set(errors) == {"KAFKA_STORAGE_ERROR"}, errors
    assert b.running
    # The refused appends are logged with the partition, the file and the errno (rate-limited).
    failed_appends = [ln for ln in b.log_path.read_text(errors="replace").splitlines()
                      if "event=storage_io_failed op=append" in ln and f"partition={topic_name}-0 " in ln]
    assert failed_appends and all('error="No space left on device (errno 28)"' in ln for ln in failed_appends)
    assert len(failed_appends) < 100

    # Every acknowledged record is there, in order, intact; nothing else is.
    assert consume_all(b.bootstrap, topic_name) == acked

    # Free the space: the topic's deletion still fits in the metadata log; then writes succeed.
    run_tool("kafka-topics", "--delete", "--topic", topic_name, bootstrap=b, timeout=60).check()
    again = f"{topic_name}-again"
    deadline = time.monotonic() + 30
    while True:
        acked2, errors2 = produce(b.bootstrap, again, 2000)
        if len(acked2) == 2000 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert (len(acked2), errors2) == (2000, {})
    assert len(consume_all(b.bootstrap, again)) == 2000
    b.stop()  # a clean exit (code 0) after all that


@pytest.mark.parametrize("partitions", [8, 200])  # 200: LogManager::prepare's syncfs batch
def test_create_topics_on_a_full_disk_leaves_no_topic_behind(weir_factory, small_disk, topic_name, partitions):
    """A CreateTopics whose logs cannot be created answers KAFKA_STORAGE_ERROR, leaves no topic
    (in Metadata or on disk) behind, logs the errno; once space is freed, topics can be created
    again at once, and after a restart the same topic can be created and used."""
    from confluent_kafka.admin import AdminClient, NewTopic

    data = small_disk / "data"
    b = weir_factory(settings={"log.dirs": str(data)})
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    filler = small_disk / "filler"
    # Fill the disk: dd stops at ENOSPC (non-zero exit, expected).
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=1M"], capture_output=True)
    fut = admin.create_topics([NewTopic(topic_name, partitions, 1)], request_timeout=30)[topic_name]
    with pytest.raises(Exception) as failed:
        fut.result(60)
    assert failed.value.args[0].name() == "KAFKA_STORAGE_ERROR", failed.value
    assert b.running
    assert topic_name not in admin.list_topics(timeout=30).topics
    assert not [d for d in data.iterdir() if d.name.startswith(topic_name)]
    assert "No space left on device" in b.log_path.read_text(errors="replace")

    filler.unlink()
    # Space again: topics can be created without a restart ...
    other = f"{topic_name}-after"
    admin.create_topics([NewTopic(other, 2, 1)])[other].result(60)
    acked, errors = produce(b.bootstrap, other, 10)
    assert (len(acked), errors) == (10, {})
    # ... and after one, the refused topic is still absent and can be created.
    b.restart()
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    assert topic_name not in admin.list_topics(timeout=30).topics
    admin.create_topics([NewTopic(topic_name, partitions, 1)])[topic_name].result(60)
    acked, errors = produce(b.bootstrap, topic_name, 100)
    assert (len(acked), errors) == (100, {})
    b.stop()


def test_create_partitions_on_a_full_disk_adds_none_of_them(weir_factory, small_disk, topic_name):
    """CreatePartitions whose new logs cannot all be made answers KAFKA_STORAGE_ERROR and adds no
    partition (in Metadata or on disk), logging the errno; once space is freed the same request
    succeeds and every partition takes writes, also after a restart."""
    from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

    data = small_disk / "data"
    b = weir_factory(settings={"log.dirs": str(data)})
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    admin.create_topics([NewTopic(topic_name, 2, 1)])[topic_name].result(60)
    filler = small_disk / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=1M"], capture_output=True)
    fut = admin.create_partitions([NewPartitions(topic_name, 8)], request_timeout=30)[topic_name]
    with pytest.raises(Exception) as failed:
        fut.result(60)
    assert failed.value.args[0].name() == "KAFKA_STORAGE_ERROR", failed.value
    assert b.running
    assert len(admin.list_topics(topic_name, timeout=30).topics[topic_name].partitions) == 2
    assert sorted(d.name for d in data.iterdir() if d.name.startswith(topic_name)) == [
        f"{topic_name}-0", f"{topic_name}-1"]
    assert "No space left on device" in b.log_path.read_text(errors="replace")

    filler.unlink()
    admin.create_partitions([NewPartitions(topic_name, 8)])[topic_name].result(60)
    assert len(admin.list_topics(topic_name, timeout=30).topics[topic_name].partitions) == 8
    b.restart()
    p = Producer({"bootstrap.servers": b.bootstrap, "acks": "all"})
    delivered = []
    for q in range(8):
        p.produce(topic_name, value=b"v%d" % q, partition=q,
                  on_delivery=lambda err, msg: delivered.append((err, msg.partition(), msg.offset())))
    assert p.flush(60) == 0
    assert sorted(delivered) == [(None, q, 0) for q in range(8)]
    c = Consumer({"bootstrap.servers": b.bootstrap, "group.id": "unused"})
    try:
        assert [c.get_watermark_offsets(TopicPartition(topic_name, q), timeout=30) for q in range(8)] == [(0, 1)] * 8
    finally:
        c.close()
    b.stop()
