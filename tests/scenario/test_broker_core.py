"""Broker core: topics, produce, fetch, offsets — with the real tools (kafka-topics, the console
producer, kafka-get-offsets, kcat, confluent-kafka), differential against Apache Kafka where the
`broker` fixture is used."""
from __future__ import annotations

import subprocess
import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from harness import run_tool


def create_topic(broker, name, partitions=3, rf=1):
    res = run_tool("kafka-topics", "--create", "--topic", name, "--partitions", partitions,
                   "--replication-factor", rf, bootstrap=broker, timeout=90)
    return res


def produce(broker, topic, messages, **conf):
    """messages: list of (key, value[, partition]); returns delivery reports (partition, offset)."""
    p = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", **conf})
    reports = []

    def on_delivery(err, msg):
        reports.append((err, msg.partition(), msg.offset(), msg.key(), msg.value()))

    for m in messages:
        kw = {"key": m[0], "value": m[1], "on_delivery": on_delivery}
        if len(m) > 2:
            kw["partition"] = m[2]
        p.produce(topic, **kw)
    assert p.flush(60) == 0
    errors = [r for r in reports if r[0] is not None]
    assert not errors, errors
    return reports


def consume_all(broker, topic, partitions, expected, timeout=60.0, **conf):
    """Reads from offset 0 of each partition (assign, no group) until `expected` messages."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "core-reader",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest", **conf})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got = []
    deadline = time.monotonic() + timeout
    try:
        while len(got) < expected and time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            got.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
    finally:
        c.close()
    return got


# ------------------------------------------------------------------------------------- topics
def test_kafka_topics_create_list_describe_delete(broker, topic_name):
    res = create_topic(broker, topic_name, partitions=3).check()
    assert f"Created topic {topic_name}." in res.stdout

    listed = run_tool("kafka-topics", "--list", bootstrap=broker, timeout=90).check()
    assert topic_name in listed.lines

    desc = run_tool("kafka-topics", "--describe", "--topic", topic_name, bootstrap=broker, timeout=90).check()
    assert f"PartitionCount: 3" in desc.stdout
    assert "ReplicationFactor: 1" in desc.stdout
    rows = [l for l in desc.lines if l.strip().startswith("Topic:") and "Partition:" in l]
    assert len(rows) == 3
    for row in rows:
        assert f"Leader: {broker.node_id}" in row
        assert f"Replicas: {broker.node_id}" in row
        assert f"Isr: {broker.node_id}" in row

    run_tool("kafka-topics", "--delete", "--topic", topic_name, bootstrap=broker, timeout=90).check()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        listed = run_tool("kafka-topics", "--list", bootstrap=broker, timeout=90).check()
        if topic_name not in listed.lines:
            break
        time.sleep(0.5)
    assert topic_name not in listed.lines


def test_creating_an_existing_topic_fails_with_topic_already_exists(broker, topic_name):
    create_topic(broker, topic_name, partitions=1).check()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    fut = admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name]
    with pytest.raises(KafkaException) as e:
        fut.result(30)
    assert e.value.args[0].name() == "TOPIC_ALREADY_EXISTS"


def test_replication_factor_above_broker_count_is_refused(broker, topic_name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    fut = admin.create_topics([NewTopic(topic_name, 1, 3)])[topic_name]
    with pytest.raises(KafkaException) as e:
        fut.result(30)
    err = e.value.args[0]
    assert err.name() == "INVALID_REPLICATION_FACTOR"
    assert "replication factor of 3" in err.str() or "3 time(s)" in err.str()


def test_invalid_topic_name_is_refused(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    fut = admin.create_topics([NewTopic("bad/name", 1, 1)])["bad/name"]
    with pytest.raises(KafkaException) as e:
        fut.result(30)
    assert e.value.args[0].name() == "TOPIC_EXCEPTION"  # librdkafka's name for INVALID_TOPIC_EXCEPTION (17)
    assert e.value.args[0].code() == 17


# Kafka 4 refuses topic configs the librdkafka 2.0.2 suite still sets (0077, 0129, 0092): the same
# error code and message from weir.
def test_segment_bytes_below_kafkas_minimum_is_refused(broker, topic_name):
    res = run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", 1,
                   "--replication-factor", 1, "--config", "segment.bytes=10000", bootstrap=broker,
                   timeout=90)
    assert res.rc != 0
    assert ("Invalid value 10000 for configuration segment.bytes: Value must be at least 1048576"
            in res.stdout + res.stderr)

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    fut = admin.create_topics([NewTopic(topic_name, 1, 1, config={"segment.bytes": "20000"})])[topic_name]
    with pytest.raises(KafkaException) as e:
        fut.result(30)
    err = e.value.args[0]
    assert err.name() == "INVALID_CONFIG"
    assert err.str() == "Invalid value 20000 for configuration segment.bytes: Value must be at least 1048576"
    assert topic_name not in admin.list_topics(timeout=30).topics


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated")
def test_message_format_version_is_an_unknown_topic_config(broker, topic_name):
    create_topic(broker, topic_name, partitions=1).check()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic_name,
                              set_config={"message.format.version": "0.10.0.0"})
    fut = admin.alter_configs([resource])[resource]  # legacy AlterConfigs, as librdkafka 2.0.2 sends
    with pytest.raises(KafkaException) as e:
        fut.result(30)
    err = e.value.args[0]
    assert err.name() == "INVALID_CONFIG"
    assert err.str() == "Unknown topic config name: message.format.version"


# ----------------------------------------------------------------------------- produce/fetch
def test_keyed_messages_roundtrip_and_keep_per_key_partitions(broker, topic_name):
    create_topic(broker, topic_name, partitions=3).check()
    msgs = [(f"key-{i % 7}".encode(), f"value-{i}".encode()) for i in range(60)]
    reports = produce(broker, topic_name, msgs)

    # Same key, same partition; offsets dense from 0 in each partition.
    by_key = {}
    for _, part, _, key, _ in reports:
        by_key.setdefault(key, set()).add(part)
    assert all(len(parts) == 1 for parts in by_key.values())
    per_part = {}
    for _, part, off, _, _ in reports:
        per_part.setdefault(part, []).append(off)
    for offs in per_part.values():
        assert sorted(offs) == list(range(len(offs)))

    got = consume_all(broker, topic_name, 3, len(msgs))
    assert sorted((p, o, k, v) for _, p, o, k, v in reports) == sorted(got)


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_compression_codec_roundtrips(broker, topic_name, codec):
    create_topic(broker, topic_name, partitions=1).check()
    msgs = [(None, (f"payload-{i}-" + "x" * 200).encode()) for i in range(100)]
    produce(broker, topic_name, msgs, **{"compression.type": codec, "linger.ms": 50})
    got = consume_all(broker, topic_name, 1, len(msgs))
    assert [v for _, _, _, v in got] == [m[1] for m in msgs]


def test_kcat_produces_and_consumes(broker, topic_name):
    create_topic(broker, topic_name, partitions=1).check()
    lines = "\n".join(f"k{i}:v{i}" for i in range(10)) + "\n"
    subprocess.run(["kcat", "-b", broker.bootstrap, "-P", "-t", topic_name, "-K", ":"], input=lines.encode(),
                   check=True, timeout=60)
    out = subprocess.run(["kcat", "-b", broker.bootstrap, "-C", "-t", topic_name, "-e", "-f", "%k=%s@%o\n"],
                         capture_output=True, check=True, timeout=60).stdout.decode().splitlines()
    assert out == [f"k{i}=v{i}@{i}" for i in range(10)]


def test_console_producer_then_get_offsets(broker, topic_name):
    create_topic(broker, topic_name, partitions=3).check()
    lines = "".join(f"key{i}:m{i}\n" for i in range(12))
    run_tool("kafka-console-producer", "--topic", topic_name, "--property", "parse.key=true",
             "--property", "key.separator=:", bootstrap=broker, input=lines, timeout=90).check()
    res = run_tool("kafka-get-offsets", "--topic", topic_name, bootstrap=broker, timeout=90).check()
    counts = {}
    for line in res.lines:
        t, p, off = line.rsplit(":", 2)
        assert t == topic_name
        counts[int(p)] = int(off)
    assert sorted(counts) == [0, 1, 2]
    assert sum(counts.values()) == 12
    got = consume_all(broker, topic_name, 3, 12)
    assert sorted(v.decode() for _, _, _, v in got) == sorted(f"m{i}" for i in range(12))


def test_offsets_for_times_and_earliest_latest(broker, topic_name):
    create_topic(broker, topic_name, partitions=1).check()
    p = Producer({"bootstrap.servers": broker.bootstrap})
    base = int(time.time() * 1000) - 100_000
    for i in range(5):
        p.produce(topic_name, value=f"v{i}".encode(), timestamp=base + i * 1000)
    assert p.flush(30) == 0
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "times", "enable.auto.commit": False})
    try:
        lo, hi = c.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=30)
        assert (lo, hi) == (0, 5)
        found = c.offsets_for_times([TopicPartition(topic_name, 0, base + 2500)], timeout=30)
        assert found[0].offset == 3
        past = c.offsets_for_times([TopicPartition(topic_name, 0, base + 10_000)], timeout=30)
        assert past[0].offset in (-1, 5)  # "no such offset": Kafka answers -1, librdkafka may map it to the end
    finally:
        c.close()


def test_fetch_waits_for_data_then_returns_it(broker, topic_name):
    create_topic(broker, topic_name, partitions=1).check()
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "wait", "enable.auto.commit": False,
                  "fetch.wait.max.ms": 5000})
    c.assign([TopicPartition(topic_name, 0, 0)])
    try:
        assert c.poll(1.0) is None
        produce(broker, topic_name, [(None, b"late")])
        deadline = time.monotonic() + 30
        msg = None
        while msg is None and time.monotonic() < deadline:
            msg = c.poll(0.5)
        assert msg is not None and msg.error() is None and msg.value() == b"late"
    finally:
        c.close()


def test_metadata_request_auto_creates_topic(broker, topic_name):
    reports = produce(broker, topic_name, [(None, b"x")])
    assert reports[0][1] == 0
    md = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(topic_name, timeout=30)
    assert len(md.topics[topic_name].partitions) == 1


# ---------------------------------------------------------------------------- weir only
def test_data_and_topics_survive_kill_9(weir, topic_name):
    create_topic(weir, topic_name, partitions=2).check()
    msgs = [(f"k{i}".encode(), f"v{i}".encode()) for i in range(200)]
    reports = produce(weir, topic_name, msgs)
    weir.kill()
    weir.restart()
    got = consume_all(weir, topic_name, 2, len(msgs))
    assert sorted((p, o, k, v) for _, p, o, k, v in reports) == sorted(got)
    # New data continues after the recovered offsets.
    more = produce(weir, topic_name, [(b"k0", b"after")])
    assert more[0][2] == max(o for _, p, o, _, _ in reports if p == more[0][1]) + 1


def test_a_large_topic_survives_kill_9_right_after_its_creation(weir, topic_name):
    """500 partitions are made durable by LogManager::prepare's syncfs batch before the
    CreateTopics response: killed at once, the broker restarts with every one of them led and
    writable."""
    create_topic(weir, topic_name, partitions=500).check()
    weir.kill()
    weir.restart()
    md = AdminClient({"bootstrap.servers": weir.bootstrap}).list_topics(topic_name, timeout=30)
    parts = md.topics[topic_name].partitions
    assert len(parts) == 500
    assert all(p.leader >= 0 for p in parts.values())
    reports = produce(weir, topic_name, [(b"k", b"v", 499)])
    assert reports[0][1] == 499 and reports[0][2] == 0


def test_produce_to_unknown_topic_without_auto_create(weir_factory, topic_name):
    b = weir_factory(settings={"auto.create.topics.enable": "false"})
    p = Producer({"bootstrap.servers": b.bootstrap, "message.timeout.ms": 3000})
    errors = []
    p.produce(topic_name, value=b"x", on_delivery=lambda err, msg: errors.append(err))
    p.flush(15)
    assert errors and errors[0] is not None
    assert errors[0].name() in ("UNKNOWN_TOPIC_OR_PART", "_MSG_TIMED_OUT", "_UNKNOWN_TOPIC")


def test_delete_records_advances_the_log_start(broker, topic_name):
    create_topic(broker, topic_name, partitions=1).check()
    produce(broker, topic_name, [(None, f"v{i}".encode()) for i in range(10)])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    fut = admin.delete_records([TopicPartition(topic_name, 0, 4)])
    res = list(fut.values())[0].result(30)
    assert res.low_watermark == 4
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "dr", "enable.auto.commit": False})
    try:
        assert c.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=30) == (4, 10)
    finally:
        c.close()
    got = consume_all(broker, topic_name, 1, 6, **{"auto.offset.reset": "earliest"})
    assert [o for _, o, _, _ in got] == list(range(4, 10))


def test_delete_records_beyond_the_high_watermark_is_out_of_range(broker, topic_name):
    create_topic(broker, topic_name, partitions=1).check()
    produce(broker, topic_name, [(None, b"x")])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    fut = admin.delete_records([TopicPartition(topic_name, 0, 5)])
    with pytest.raises(KafkaException) as e:
        list(fut.values())[0].result(30)
    assert e.value.args[0].name() == "OFFSET_OUT_OF_RANGE"


def test_deleted_topic_name_is_reusable_at_once_and_starts_empty(broker, topic_name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(30)
    produce(broker, topic_name, [(None, b"old")] * 3)
    admin.delete_topics([topic_name])[topic_name].result(30)
    deadline = time.monotonic() + 30
    while True:
        try:
            admin.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(30)
            break
        except KafkaException as e:  # Kafka may still be finishing the deletion
            if time.monotonic() > deadline or e.args[0].name() != "TOPIC_ALREADY_EXISTS":
                raise
            time.sleep(0.5)
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "reuse", "enable.auto.commit": False})
    try:
        deadline = time.monotonic() + 30
        while True:  # the client learns about the new topic from a metadata refresh
            try:
                marks = c.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10)
                break
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        assert marks == (0, 0)
    finally:
        c.close()


def test_pipelined_metadata_auto_create_never_goes_backwards(broker, topic_name):
    """Several Metadata requests for one new topic pipelined on one connection (librdkafka does
    this at start-up): once a broker has described the topic with partitions, no later answer may
    call it unknown again (librdkafka would fail the messages it queued for it)."""
    from harness import wire
    with wire.Connection(broker.host, broker.port, timeout=30) as conn:
        cids = [conn.correlation_id() for _ in range(8)]
        conn.send_raw(b"".join(wire.encode_metadata_v1_request(c, [topic_name]) for c in cids))
        answers = []
        for cid in cids:
            frame = conn.recv_frame()
            assert int.from_bytes(frame[:4], "big") == cid
            (t,) = wire.decode_metadata_v1_response(frame[4:]).topics
            answers.append((t.error_code, len(t.partitions)))
    # Kafka answers UNKNOWN_TOPIC_OR_PARTITION (3) or LEADER_NOT_AVAILABLE (5) while an
    # auto-created topic is on its way; weir creates it before answering.
    assert all(err in (0, 3, 5) for err, _ in answers), answers
    described = [i for i, (err, _) in enumerate(answers) if err == 0]
    if described:
        assert all(answers[i] == (0, 1) for i in range(described[0], len(answers))), answers
    deadline = time.time() + 30
    with wire.Connection(broker.host, broker.port) as conn:
        while True:
            (t,) = conn.metadata_v1([topic_name]).topics
            if t.error_code == 0 or time.time() > deadline:
                break
            time.sleep(0.2)
    assert (t.error_code, len(t.partitions)) == (0, 1)


def test_metadata_of_every_topic_larger_than_a_write_piece_arrives_whole_and_follows_changes(weir, topic_name):
    """weir keeps the encoded answer of every topic while the catalog stays as it is and writes it
    after each request's own header in pieces of 256 KiB (issue 18): pipelined requests each get
    the whole answer, in order, with their own correlation id, and a topic created in between is
    in the next answers."""
    from harness import wire
    admin = AdminClient({"bootstrap.servers": weir.bootstrap})
    # Long names make a large answer of few partitions: about 300 KB in v1.
    names = [f"{topic_name[:40]}-{i:04d}-".ljust(249, "m") for i in range(1100)]
    for f in admin.create_topics([NewTopic(n, 1, 1) for n in names], operation_timeout=120).values():
        f.result(timeout=180)

    def every_topic_pipelined(count):
        with wire.Connection(weir.host, weir.port, timeout=60) as conn:
            cids = [conn.correlation_id() for _ in range(count)]
            conn.send_raw(b"".join(wire.encode_metadata_v1_request(c, None) for c in cids))
            answers = []
            for cid in cids:
                frame = conn.recv_frame()
                assert int.from_bytes(frame[:4], "big") == cid
                assert len(frame) > 256 * 1024
                answers.append(wire.decode_metadata_v1_response(frame[4:]))
            return answers

    for md in every_topic_pipelined(3):
        described = {t.name: (t.error_code, len(t.partitions)) for t in md.topics}
        assert all(described.get(n) == (0, 1) for n in names)
        assert topic_name not in described
    create_topic(weir, topic_name, partitions=2)
    for md in every_topic_pipelined(2):
        described = {t.name: (t.error_code, len(t.partitions)) for t in md.topics}
        assert described.get(topic_name) == (0, 2)
        assert all(described.get(n) == (0, 1) for n in names)


def test_kill_9_loop_under_idempotent_acks_all_load_loses_and_duplicates_nothing(weir, topic_name):
    """weir only: an idempotent acks=all producer keeps producing while weir is killed with -9 and
    restarted five times. Every record is acknowledged in the end, every acknowledged record is
    in the log at the offset it was acknowledged with, and none is there twice (retries of
    batches written just before a kill are recognised from the producer state rebuilt from the
    log)."""
    import random
    import threading
    create_topic(weir, topic_name, partitions=3).check()
    acked: list[tuple[int, int, bytes]] = []
    failed: list[str] = []
    stop = threading.Event()

    def run():
        p = Producer({"bootstrap.servers": weir.bootstrap, "acks": "all", "enable.idempotence": True,
                      "message.timeout.ms": 120000, "linger.ms": 2, "reconnect.backoff.max.ms": 200})

        def on_delivery(err, msg):
            if err is not None:
                failed.append(str(err))
            else:
                acked.append((msg.partition(), msg.offset(), msg.value()))

        i = 0
        while not stop.is_set():
            try:
                p.produce(topic_name, value=b"r%07d" % i, on_delivery=on_delivery)
                i += 1
            except BufferError:
                pass
            p.poll(0.001)
        assert p.flush(120) == 0
        run.sent = i

    producer = threading.Thread(target=run, daemon=True)
    producer.start()
    rng = random.Random(7)
    for _ in range(5):
        time.sleep(rng.uniform(0.5, 1.5))
        weir.kill()
        weir.start()
    time.sleep(1.0)
    stop.set()
    producer.join(180)
    assert not producer.is_alive()
    assert not failed, failed[:3]
    assert len(acked) == run.sent and run.sent > 100
    got = consume_all(weir, topic_name, 3, len(acked), timeout=60)
    assert sorted((p, o, v) for p, o, _, v in got) == sorted(acked)
    c = Consumer({"bootstrap.servers": weir.bootstrap, "group.id": "core-reader"})
    try:  # and nothing else: the log ends where the acknowledged records end
        ends = [c.get_watermark_offsets(TopicPartition(topic_name, p), timeout=30) for p in range(3)]
    finally:
        c.close()
    assert sum(high - low for low, high in ends) == len(acked)
