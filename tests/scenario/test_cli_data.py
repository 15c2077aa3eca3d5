"""`weir produce` and `weir consume` (issue 17), against weir and against Apache Kafka 4.3.1.

  - test_seed_000_keyed_records: seed 000's producer lines (`user1:hello`, ...) sent with
    `weir produce --key-separator :` land on the partitions Kafka's own console producer
    (parse.key=true, the Java client's default partitioner) puts the same keys on, and
    `weir consume --from beginning` prints them as the seed's console consumer does
    (Partition:N<TAB>key<TAB>value).
  - test_produce_options_round_trip: headers, a fixed partition, gzip and zstd batches, `-v`
    offsets and the `--output json` summary; confluent-kafka reads back exactly what was sent.
  - test_produce_pipelines_batches_in_order: 20,000 keyed lines in 4 KiB batches (many batches
    in flight at once, idempotent): every record arrives once, each partition's in the order of
    the input.
  - test_produce_answers_before_waiting_for_input: lines written one at a time to a pipe kept
    open: each is sent and its offset printed (-v) before the next comes.
  - test_consume_positions: --from an offset, a timestamp (@ms) and end; -n; --partition;
    --idle-timeout-ms; read_committed leaves out an aborted transaction that read_uncommitted shows.
  - test_bad_input: a line without the key separator (Kafka's message, exit 1), an unknown topic
    (after --timeout, as Kafka's producer waits max.block.ms for it), a partition the topic does
    not have, a bad --from (exit 1).
"""
from __future__ import annotations

import json
import subprocess
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from harness import procs, run_tool
from harness.cluster import wait_for
from harness.paths import weir_bin

SEED_LINES = ["user1:hello", "uesr2:hi", "user1:bye", "user3:hey"]


def weir_cli(*args, bootstrap, input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    argv = [str(weir_bin()), *[str(a) for a in args], "--bootstrap", getattr(bootstrap, "bootstrap", bootstrap)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=input)


def ok(res: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert res.returncode == 0, (res.args, res.returncode, res.stdout[-4000:], res.stderr[-4000:])
    return res


def read_all(bootstrap: str, topic: str, partitions: int) -> list[tuple[int, int, bytes | None, bytes, list]]:
    """Every record (partition, offset, key, value, headers), by confluent-kafka."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
                  "enable.auto.commit": False})
    try:
        ends = {}
        for p in range(partitions):
            _, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            ends[p] = hi
        c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        got = []
        deadline = time.monotonic() + 60
        while len(got) < sum(ends.values()):
            assert time.monotonic() < deadline, (got, ends)
            m = c.poll(1)
            if m is None or m.error():
                continue
            got.append((m.partition(), m.offset(), m.key(), m.value(), m.headers() or []))
        return sorted(got)
    finally:
        c.close()


@pytest.mark.timeout(180)
def test_seed_000_keyed_records(broker, topic_name):
    ours, theirs = topic_name, topic_name + "-k"
    for t in (ours, theirs):
        ok(weir_cli("topic", "create", t, "-p", 3, "-r", 1, bootstrap=broker))
    ok(weir_cli("produce", ours, "--key-separator", ":", bootstrap=broker, input="\n".join(SEED_LINES) + "\n"))
    run_tool("kafka-console-producer", "--topic", theirs, "--reader-property", "parse.key=true",
             "--reader-property", "key.separator=:", bootstrap=broker, input="\n".join(SEED_LINES) + "\n").check()

    def placed(topic):
        return {(k.decode(), v.decode()): p for p, _, k, v, _ in read_all(broker.bootstrap, topic, 3)}
    assert placed(ours) == placed(theirs)

    res = ok(weir_cli("consume", ours, "--from", "beginning", "-n", 4, bootstrap=broker))
    lines = res.stdout.splitlines()
    assert sorted(lines) == sorted(f"Partition:{p}\t{k}\t{v}" for (k, v), p in placed(ours).items())
    by_partition: dict[str, list[str]] = {}
    for line in lines:
        part, key, value = line.split("\t")
        by_partition.setdefault(part, []).append(f"{key}:{value}")
    for values in by_partition.values():  # within a partition, in the order sent
        assert values == [x for x in SEED_LINES if x in values]
    assert "Processed a total of 4 messages" in res.stderr


@pytest.mark.timeout(180)
def test_produce_options_round_trip(broker, topic_name):
    ok(weir_cli("topic", "create", topic_name, "-p", 2, "-r", 1, bootstrap=broker))
    plain = ok(weir_cli("produce", topic_name, "--partition", 1, "-H", "source=cli", "-H", "n=1", "-v",
                        bootstrap=broker, input="a\nb\nc\n"))
    assert plain.stdout.splitlines() == [f"{topic_name}-1@0", f"{topic_name}-1@1", f"{topic_name}-1@2"]
    for codec in ("gzip", "zstd"):
        summary = json.loads(ok(weir_cli("produce", topic_name, "-p", 0, "-z", codec, "--output", "json",
                                         bootstrap=broker, input="".join(f"{codec}-{i}\n" for i in range(100)))).stdout)
        assert summary["topic"] == topic_name and summary["records"] == 100
        [part] = summary["partitions"]
        assert part["partition"] == 0 and part["records"] == 100
        assert part["last_offset"] - part["first_offset"] == 99
    ok(weir_cli("produce", topic_name, "-p", 0, "--acks", 1, bootstrap=broker, input="last\n"))

    got = read_all(broker.bootstrap, topic_name, 2)
    p1 = [(o, v, h) for p, o, _, v, h in got if p == 1]
    assert p1 == [(i, x.encode(), [("source", b"cli"), ("n", b"1")]) for i, x in enumerate("abc")]
    p0 = [v.decode() for p, _, _, v, _ in got if p == 0]
    assert p0 == [f"gzip-{i}" for i in range(100)] + [f"zstd-{i}" for i in range(100)] + ["last"]
    assert all(k is None for _, _, k, _, _ in got)


@pytest.mark.timeout(120)
def test_produce_pipelines_batches_in_order(broker, topic_name):
    ok(weir_cli("topic", "create", topic_name, "-p", 3, "-r", 1, bootstrap=broker))
    lines = [f"k{i % 7}:{i:06d}" for i in range(20000)]
    summary = json.loads(ok(weir_cli("produce", topic_name, "-k", ":", "--batch-bytes", 4096, "--output", "json",
                                     bootstrap=broker, input="\n".join(lines) + "\n")).stdout)
    assert summary["records"] == 20000
    got = read_all(broker.bootstrap, topic_name, 3)
    assert len(got) == 20000
    by_partition: dict[int, list[str]] = {}
    for p, _, _, value, _ in got:  # sorted by partition and offset
        by_partition.setdefault(p, []).append(value.decode())
    for p, values in by_partition.items():
        assert values == sorted(values), p  # the input's order: the values count up
    assert sorted(v for vs in by_partition.values() for v in vs) == [f"{i:06d}" for i in range(20000)]


@pytest.mark.timeout(60)
def test_produce_answers_before_waiting_for_input(broker, topic_name, tmp_path):
    ok(weir_cli("topic", "create", topic_name, "-p", 1, "-r", 1, bootstrap=broker))
    out_path = tmp_path / "produce.out"
    with open(out_path, "w") as out:
        proc = procs.spawn([weir_bin(), "produce", topic_name, "-v", "--bootstrap", broker.bootstrap],
                           stdin=subprocess.PIPE, stdout=out, stderr=subprocess.DEVNULL)
        try:
            for i in range(3):
                proc.stdin.write(f"line{i}\n".encode())
                proc.stdin.flush()
                wait_for(f"line {i}'s offset", lambda: out_path.read_text().splitlines() == [
                    f"{topic_name}-0@{j}" for j in range(i + 1)], 20)
            proc.stdin.close()
            assert proc.wait(20) == 0
        finally:
            if proc.poll() is None:
                procs.terminate(proc, 5)
            procs.forget(proc)


@pytest.mark.timeout(180)
def test_consume_positions(broker, topic_name):
    ok(weir_cli("topic", "create", topic_name, "-p", 2, "-r", 1, bootstrap=broker))
    ok(weir_cli("produce", topic_name, "-p", 0, bootstrap=broker, input="".join(f"v{i}\n" for i in range(10))))
    fmt = "{partition}:{offset}:{value}"
    res = ok(weir_cli("consume", topic_name, "-p", 0, "--from", 5, "-n", 3, "--format", fmt, bootstrap=broker))
    assert res.stdout.splitlines() == ["0:5:v5", "0:6:v6", "0:7:v7"]

    # A timestamp: the records sent after it.
    time.sleep(0.05)
    cut = int(time.time() * 1000)
    time.sleep(0.05)
    ok(weir_cli("produce", topic_name, "-p", 0, bootstrap=broker, input="late\n"))
    res = ok(weir_cli("consume", topic_name, "--from", f"@{cut}", "-n", 1, "--format", fmt, bootstrap=broker))
    assert res.stdout.splitlines() == ["0:10:late"]

    res = ok(weir_cli("consume", topic_name, "--idle-timeout-ms", 1500, "--output", "json", bootstrap=broker))
    assert res.stdout == ""  # from the end: nothing new

    # read_committed leaves out an aborted transaction.
    p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": f"tx-{topic_name}"})
    p.init_transactions(60)
    p.begin_transaction()
    p.produce(topic_name, value=b"aborted", partition=1)
    p.flush(30)
    p.abort_transaction(60)
    p.begin_transaction()
    p.produce(topic_name, value=b"committed", partition=1)
    p.commit_transaction(60)
    uncommitted = ok(weir_cli("consume", topic_name, "-p", 1, "--from", "beginning", "-n", 2, "--format", "{value}",
                              bootstrap=broker))
    assert uncommitted.stdout.splitlines() == ["aborted", "committed"]
    committed = ok(weir_cli("consume", topic_name, "-p", 1, "--from", "beginning", "--isolation", "read_committed",
                            "-n", 1, "--output", "json", bootstrap=broker))
    rows = [json.loads(x) for x in committed.stdout.splitlines()]
    assert [(r["partition"], r["value"], r["key"]) for r in rows] == [(1, "committed", None)]
    assert rows[0]["offset"] == 2  # after the aborted record and its marker


def test_bad_input(broker, topic_name):
    ok(weir_cli("topic", "create", topic_name, "-p", 1, "-r", 1, bootstrap=broker))
    res = weir_cli("produce", topic_name, "-k", ":", bootstrap=broker, input="a:1\nnokey\n")
    assert res.returncode == 1
    assert res.stderr.strip() == "error: No key separator found on line number 2: 'nokey'"
    # As Kafka's producer waits for a topic it does not know yet (max.block.ms), up to --timeout.
    res = weir_cli("produce", topic_name + "-missing", "--timeout", 2000, bootstrap=broker, input="x\n")
    assert res.returncode == 1 and res.stderr.strip() == f"error: topic '{topic_name}-missing' does not exist", res
    res = weir_cli("produce", topic_name, "-p", 7, bootstrap=broker, input="x\n")
    assert res.returncode == 1 and "has no partition 7" in res.stderr, res
    res = weir_cli("consume", topic_name, "--from", "yesterday", bootstrap=broker)
    assert res.returncode == 1 and "--from yesterday" in res.stderr, res
