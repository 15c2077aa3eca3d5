"""A weir broker keeps its own copy of __cluster_metadata, as a Kafka broker does (issue 15).

One Kafka 4.3.1 controller, a weir broker and a Kafka broker:
  - both brokers' `__cluster_metadata-0/00000000000000000000.log` hold the same bytes (the
    batches as the controller wrote them), and `kafka-dump-log --cluster-metadata-decoder`
    reads weir's copy;
  - a weir broker stopped while a topic is created, then started, resumes from its copy (the log
    says how much it loaded) and serves both topics;
  - after kill -9 and a torn tail appended to its segment, it cuts the tail, resumes and serves
    the topics again, with the records written before.
The Kafka broker in the same cluster is the oracle for the file's content.
"""
from __future__ import annotations

import re
import secrets

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness import run_tool
from harness.cluster import wait_for

TOOL_ENV = {"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"}
SEGMENT = "__cluster_metadata-0/00000000000000000000.log"


def segment(broker) -> bytes:
    return (broker.data_dir / SEGMENT).read_bytes()


def topic_names(cluster, via: int) -> set[str]:
    md = cluster.metadata(via=via)
    return {t.name for t in md.topics if t.error_code == 0 and t.partitions and
            all(p["leader"] >= 0 for p in t.partitions)}


def loaded_lines(broker) -> list[str]:
    return [line for line in broker.log_path.read_text(errors="replace").splitlines()
            if "event=metadata_copy_loaded" in line]


def read_all(bootstrap: str, topic: str, n: int) -> list[str]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "copy-" + secrets.token_hex(3),
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    values: list[str] = []
    try:
        wait_for(f"{n} records of {topic}", lambda: (values.extend(
            m.value().decode() for m in c.consume(100, 1.0) if m.error() is None) or len(values) >= n), timeout=60)
    finally:
        c.close()
    return values


@pytest.mark.timeout(300)
def test_a_weir_broker_resumes_from_its_copy_of_the_metadata_log(cluster_factory):
    cluster = cluster_factory(["weir", "kafka"], controllers=1, replication=1,
                              broker_overrides={"auto.create.topics.enable": False})
    weir, kafka = cluster.broker(1), cluster.broker(2)
    first = "copy-a-" + secrets.token_hex(3)
    run_tool("kafka-topics", "--create", "--topic", first, "--partitions", "2", "--replication-factor", "2",
             bootstrap=weir, env=TOOL_ENV, timeout=90, check=True)
    cluster.wait_topic(first, 2, 2)
    wait_for("both brokers to serve the topic", lambda: all(first in topic_names(cluster, via) for via in (1, 2)),
             timeout=30)

    # The same bytes as the Kafka broker's copy, as far as both have them.
    def same_prefix():
        w, k = segment(weir), segment(kafka)
        n = min(len(w), len(k))
        return n > 0 and first.encode() in w[:n] and w[:n] == k[:n]
    wait_for("weir's segment to match the Kafka broker's", same_prefix, timeout=30)
    dump = run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(weir.data_dir / SEGMENT),
                    env=TOOL_ENV, timeout=90, check=True)
    assert re.search(r'"type":"TOPIC_RECORD".*"name":"%s"' % re.escape(first), dump.stdout), dump.stdout[-2000:]

    p = Producer({"bootstrap.servers": weir.bootstrap, "acks": "all"})
    for i in range(20):
        p.produce(first, value=f"v{i}".encode(), partition=i % 2)
    assert p.flush(30) == 0

    # Stopped while a topic is created: resumes from the copy and learns the new topic.
    cluster.stop(1)
    size_before = len(segment(weir))
    second = "copy-b-" + secrets.token_hex(3)
    run_tool("kafka-topics", "--create", "--topic", second, "--partitions", "1", "--replication-factor", "1",
             bootstrap=kafka, env=TOOL_ENV, timeout=90, check=True)
    cluster.start_broker(1)
    (line,) = loaded_lines(weir)[-1:]
    loaded = dict(re.findall(r"(\w+)=(-?\d+)", line))
    assert int(loaded["batches"]) > 0 and int(loaded["next_offset"]) > 0, line
    wait_for("weir to serve both topics", lambda: {first, second} <= topic_names(cluster, 1), timeout=30)
    wait_for("the copy to grow past the restart", lambda: len(segment(weir)) > size_before, timeout=30)

    # kill -9 and a torn write at the end of the segment: the tail is cut, the rest resumes.
    cluster.kill(1)
    with open(weir.data_dir / SEGMENT, "ab") as f:
        f.write(segment(weir)[:40])
    cluster.start_broker(1)
    log = weir.log_path.read_text(errors="replace")
    assert re.search(r"event=metadata_copy_recovery note=\"cut 40 bytes", log), log[-3000:]
    (line,) = loaded_lines(weir)[-1:]
    assert int(dict(re.findall(r"(\w+)=(-?\d+)", line))["batches"]) > 0, line
    wait_for("weir to serve both topics again", lambda: {first, second} <= topic_names(cluster, 1), timeout=30)
    assert sorted(read_all(weir.bootstrap, first, 20)) == sorted(f"v{i}" for i in range(20))
    wait_for("weir's segment to match the Kafka broker's again", same_prefix, timeout=30)


@pytest.mark.timeout(120)
def test_sigterm_while_waiting_for_the_quorum_stops_cleanly(tmp_path):
    """A broker whose controllers do not answer waits for them (initial.broker.registration.timeout.ms);
    SIGTERM during that wait stops it cleanly (exit 0), as after a normal start."""
    import signal
    import subprocess

    from harness.paths import weir_bin
    from harness.ports import free_port

    port, nobody = free_port(), free_port()
    cfg = tmp_path / "server.properties"
    cfg.write_text("".join(f"{k}={v}\n" for k, v in {
        "process.roles": "broker", "node.id": "4", "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "controller.quorum.voters": f"3000@127.0.0.1:{nobody}", "log.dirs": str(tmp_path / "data"),
        "listeners": f"PLAINTEXT://127.0.0.1:{port}", "initial.broker.registration.timeout.ms": "60000",
    }.items()))
    subprocess.run([str(weir_bin()), "format", "-t", "AAAAAAAAAAAAAAAAAAAAAA", "-c", str(cfg)], check=True,
                   capture_output=True, timeout=30)
    log = tmp_path / "weir.log"
    with open(log, "wb") as out:
        p = subprocess.Popen([str(weir_bin()), "serve", "--config", str(cfg)], stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for("the broker to wait for its quorum",
                 lambda: "event=metadata_copy_loaded" in log.read_text(errors="replace"), timeout=30)
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0, log.read_text(errors="replace")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    text = log.read_text(errors="replace")
    assert "shutting down signal=15 (during start-up" in text, text
    assert "stopped" in text.splitlines()[-1], text
    assert (tmp_path / "data" / SEGMENT).exists()


@pytest.mark.timeout(300)
def test_a_broker_behind_the_controllers_log_start_takes_its_snapshot(cluster_factory):
    """A controller that snapshots and deletes its old log quickly (Kafka's internal test knobs): a
    weir broker whose copy is gone starts from offset 0, gets the controller's snapshot through
    FetchSnapshot, keeps it byte for byte under the controller's file name, and resumes from it
    after a restart."""
    cluster = cluster_factory(["weir"], controllers=1, replication=1, controller_overrides={
        "internal.metadata.log.segment.bytes": 4096, "metadata.log.max.record.bytes.between.snapshots": 2048,
        "metadata.max.retention.bytes": 1, "metadata.max.retention.ms": 1000, "internal.metadata.delete.delay.millis": 0,
        # No NoOpRecords: once the topics are in, the log and its last snapshot stay as they are.
        "metadata.max.idle.interval.ms": 0,
    })
    weir = cluster.broker(1)
    controller_dir = next(iter(cluster.quorum.controllers.values())).data_dir / "__cluster_metadata-0"
    # Records for two snapshots (a batch of about 1.5 KB each time), written before the
    # controller's first log cleaning (KRaft cleans every 60 s); the cleaning deletes the older
    # snapshot and the segments before the newer one (it keeps at least one snapshot).
    topics = []
    admin = AdminClient({"bootstrap.servers": weir.bootstrap})
    for _ in range(6):
        batch = [f"snap-{len(topics) + i}-" + secrets.token_hex(3) for i in range(6)]
        for future in admin.create_topics([NewTopic(t, 2, 1) for t in batch], operation_timeout=30).values():
            future.result(timeout=60)
        topics += batch

    def log_start_moved():
        segments = sorted(controller_dir.glob("*.log"))
        return bool(segments) and segments[0].name != "00000000000000000000.log" and \
            any(controller_dir.glob("*.checkpoint"))
    wait_for("the controller to snapshot and delete its first segment", log_start_moved, timeout=150)

    cluster.stop(1)
    for f in (weir.data_dir / "__cluster_metadata-0").iterdir():
        f.unlink()
    cluster.start_broker(1)
    wait_for("weir to serve the topics", lambda: set(topics) <= topic_names(cluster, 1), timeout=30)
    copy_dir = weir.data_dir / "__cluster_metadata-0"
    (checkpoint,) = list(copy_dir.glob("*.checkpoint"))
    assert checkpoint.read_bytes() == (controller_dir / checkpoint.name).read_bytes()
    end = int(checkpoint.name.split("-")[0])
    assert end > 0 and (copy_dir / f"{end:020d}.log").exists(), sorted(p.name for p in copy_dir.iterdir())

    cluster.restart(1)
    (line,) = loaded_lines(weir)[-1:]
    assert int(dict(re.findall(r"(\w+)=(-?\d+)", line))["snapshot_end"]) >= end, line
    wait_for("weir to serve the topics again", lambda: set(topics) <= topic_names(cluster, 1), timeout=30)
