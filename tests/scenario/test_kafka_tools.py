"""Apache Kafka's CLI tools (tests/kafka/bin) driven against the real Kafka broker.

These prove the wrappers and the harness work end to end; each is also the Kafka half of a
future differential scenario (switch the fixture to `broker` once weir serves the APIs involved).
"""
from __future__ import annotations

import re
import time

import pytest

from harness import parse_table, run_tool
from harness.paths import KAFKA_BIN

pytestmark = pytest.mark.kafka  # every test here runs Kafka's JVM tools

VERSION_FLAG_TOOLS = [
    "kafka-broker-api-versions", "kafka-configs", "kafka-console-consumer", "kafka-console-producer",
    "kafka-consumer-groups", "kafka-consumer-perf-test", "kafka-dump-log", "kafka-get-offsets",
    "kafka-log-dirs", "kafka-topics", "kafka-transactions", "kafka-server-start", "kafka-leader-election",
    "kafka-reassign-partitions",
]


@pytest.mark.parametrize("tool", VERSION_FLAG_TOOLS)
def test_wrapper_runs_kafka_4_3_1(tool):
    res = run_tool(tool, "--version", timeout=60).check()
    assert res.stdout.split()[0] == "4.3.1"


def test_wrappers_without_version_flag_run_their_tool():
    assert "usage: kafka-producer-perf-test" in run_tool("kafka-producer-perf-test", "--help").stdout
    assert "usage: kafka-features" in run_tool("kafka-features", "--help").stdout
    uuid = run_tool("kafka-storage", "random-uuid").check().stdout.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", uuid)
    res = run_tool("kafka-run-class", "org.apache.kafka.tools.TopicCommand", "--version").check()
    assert res.stdout.strip() == "4.3.1"
    assert sorted(p.name for p in KAFKA_BIN.iterdir()) == sorted(
        VERSION_FLAG_TOOLS + ["kafka-producer-perf-test", "kafka-storage", "kafka-run-class", "kafka-features"])


def _wait_for(predicate, timeout=30.0, interval=0.5):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def _end_offsets(broker, topic) -> dict[int, int]:
    res = run_tool("kafka-get-offsets", "--topic", topic, bootstrap=broker).check()
    out = {}
    for line in res.lines:
        t, p, off = line.rsplit(":", 2)
        assert t == topic
        out[int(p)] = int(off)
    return out


def test_topics_create_describe_list_delete(kafka, topic_name):
    res = run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", 3,
                   "--replication-factor", 1, bootstrap=kafka).check()
    assert res.stdout.strip() == f"Created topic {topic_name}."

    assert topic_name in run_tool("kafka-topics", "--list", bootstrap=kafka).check().lines

    desc = run_tool("kafka-topics", "--describe", "--topic", topic_name, bootstrap=kafka).check().stdout
    assert re.search(rf"Topic: {re.escape(topic_name)}\s+TopicId: \S+\s+PartitionCount: 3\s+ReplicationFactor: 1", desc)
    assert sorted(int(p) for p in re.findall(r"Partition: (\d+)\s+Leader: 1\b", desc)) == [0, 1, 2]

    again = run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", 1,
                     bootstrap=kafka)
    assert again.rc == 1
    assert f"Topic '{topic_name}' already exists." in again.stdout + again.stderr

    run_tool("kafka-topics", "--delete", "--topic", topic_name, bootstrap=kafka).check()
    assert _wait_for(lambda: topic_name not in run_tool("kafka-topics", "--list", bootstrap=kafka).lines)


def test_console_producer_consumer_and_group_offsets(kafka, topic_name):
    group = f"g-{topic_name}"
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", 2,
             bootstrap=kafka).check()
    records = {"k1": "v1", "k2": "v2", "k3": "v3"}
    run_tool("kafka-console-producer", "--topic", topic_name,
             "--reader-property", "parse.key=true", "--reader-property", "key.separator=:",
             input="".join(f"{k}:{v}\n" for k, v in records.items()), bootstrap=kafka).check()

    res = run_tool("kafka-console-consumer", "--topic", topic_name, "--group", group,
                   "--from-beginning", "--max-messages", 3, "--timeout-ms", 30000,
                   "--formatter-property", "print.key=true",
                   "--formatter-property", "print.partition=true", bootstrap=kafka).check()
    got = {}
    for line in res.lines:
        part, key, value = line.split("\t")
        assert re.fullmatch(r"Partition:[01]", part)
        got[key] = value
    assert got == records
    assert "Processed a total of 3 messages" in res.stderr

    ends = _end_offsets(kafka, topic_name)
    assert sorted(ends) == [0, 1] and sum(ends.values()) == 3

    desc = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=kafka).check()
    rows = parse_table(desc.stdout, header_first="GROUP")
    assert {int(r["PARTITION"]): int(r["CURRENT-OFFSET"]) for r in rows} == ends
    assert all(r["LAG"] == "0" and r["GROUP"] == group and r["TOPIC"] == topic_name for r in rows)
    assert f"Consumer group '{group}' has no active members." in desc.stdout + desc.stderr

    assert group in run_tool("kafka-consumer-groups", "--list", bootstrap=kafka).check().lines


def test_perf_tools_and_transactions(kafka, topic_name):
    txn_id = f"tx-{topic_name}"
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", 1,
             bootstrap=kafka).check()
    res = run_tool("kafka-producer-perf-test", "--topic", topic_name, "--num-records", 500,
                   "--record-size", 100, "--throughput", -1, "--transactional-id", txn_id,
                   "--transaction-duration-ms", 100, bootstrap=kafka).check()
    assert re.search(r"^500 records sent", res.stdout, re.M)

    def committed():
        out = run_tool("kafka-transactions", "describe", "--transactional-id", txn_id,
                       bootstrap=kafka).check().stdout
        rows = parse_table(out, header_first="CoordinatorId")
        return rows if rows and rows[0]["TransactionState"] == "CompleteCommit" else None

    rows = _wait_for(committed)
    assert rows and rows[0]["TransactionalId"] == txn_id and rows[0]["CoordinatorId"] == "1"
    listed = parse_table(run_tool("kafka-transactions", "list", bootstrap=kafka).check().stdout,
                         header_first="TransactionalId")
    assert txn_id in {r["TransactionalId"] for r in listed}

    # transaction markers occupy offsets: the log end is past the 500 records
    assert _end_offsets(kafka, topic_name)[0] > 500

    res = run_tool("kafka-consumer-perf-test", "--topic", topic_name, "--num-records", 500,
                   "--timeout", 30000, bootstrap=kafka).check()
    header, values = [ln for ln in res.lines if "," in ln][-2:]
    stats = dict(zip([h.strip() for h in header.split(",")], [v.strip() for v in values.split(",")]))
    assert int(stats["data.consumed.in.nMsg"]) == 500


def test_configs_alter_and_describe(kafka, topic_name):
    run_tool("kafka-topics", "--create", "--topic", topic_name, bootstrap=kafka).check()
    before = run_tool("kafka-configs", "--describe", "--entity-type", "topics",
                      "--entity-name", topic_name, bootstrap=kafka).check()
    assert before.lines == [f"Dynamic configs for topic {topic_name} are:"]

    run_tool("kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", topic_name,
             "--add-config", "retention.ms=12345", bootstrap=kafka).check()
    after = run_tool("kafka-configs", "--describe", "--entity-type", "topics",
                     "--entity-name", topic_name, bootstrap=kafka).check()
    assert any(ln.split()[0] == "retention.ms=12345" for ln in after.lines[1:])

    broker_cfg = run_tool("kafka-configs", "--describe", "--all", "--entity-type", "brokers",
                          "--entity-name", kafka.node_id, bootstrap=kafka).check()
    assert any(ln.split()[0] == "num.partitions=1" for ln in broker_cfg.lines[1:])


def test_dump_log_reads_kafka_segment(kafka, topic_name):
    run_tool("kafka-topics", "--create", "--topic", topic_name, bootstrap=kafka).check()
    run_tool("kafka-console-producer", "--topic", topic_name, input="hello\nworld\n",
             bootstrap=kafka).check()
    assert _end_offsets(kafka, topic_name) == {0: 2}

    segment = kafka.data_dir / f"{topic_name}-0" / ("0" * 20 + ".log")
    res = run_tool("kafka-dump-log", "--files", segment, "--print-data-log").check()
    assert f"Dumping {segment}" in res.stdout
    assert re.findall(r"\| offset: (\d+) .* payload: (\w+)$", res.stdout, re.M) == [
        ("0", "hello"), ("1", "world")]
    assert "isvalid: true" in res.stdout and "isvalid: false" not in res.stdout


@pytest.mark.slow  # Kafka refuses the restarted broker's registration for broker.session.timeout.ms (9 s)
def test_own_kafka_survives_kill_9_and_restarts(kafka_factory, topic_name):
    k = kafka_factory()
    run_tool("kafka-topics", "--create", "--topic", topic_name, bootstrap=k).check()
    run_tool("kafka-console-producer", "--topic", topic_name, input="a\nb\nc\n", bootstrap=k).check()

    assert k.kill() == -9
    k.restart()
    assert topic_name in run_tool("kafka-topics", "--list", bootstrap=k).check().lines
    assert _end_offsets(k, topic_name) == {0: 3}

    assert k.stop() in k.clean_exit_codes
