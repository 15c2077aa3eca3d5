"""`--output json` of every weir command (issue 17), against weir and against Apache Kafka 4.3.1:
each command's output has the keys and value types of its schema in cli_json_schemas.py, and a
failed command prints the error object (exit 1). A static check makes every command that takes
--output have a schema, so a new command cannot go without one.
"""
from __future__ import annotations

import json
import re
import subprocess

import pytest
from confluent_kafka import Consumer, Producer

from cli_json_schemas import ERROR, SCHEMAS, problems
from harness.cluster import wait_for
from harness.paths import weir_bin


def weir_json(*args, bootstrap, stdin: str | None = None) -> subprocess.CompletedProcess:
    argv = [str(weir_bin()), *[str(a) for a in args], "--output", "json", "--bootstrap",
            getattr(bootstrap, "bootstrap", bootstrap)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, input=stdin)


def conforms(command: str, res: subprocess.CompletedProcess, *, lines: bool = False, exit_code: int = 0):
    """The command's output (its documents with lines=True), checked against its schema."""
    assert res.returncode == exit_code, (command, res.stdout, res.stderr)
    docs = [json.loads(line) for line in res.stdout.splitlines()] if lines else [json.loads(res.stdout)]
    assert docs, command
    for doc in docs:
        assert problems(doc, SCHEMAS[command]) == [], (command, doc)
    return docs if lines else docs[0]


def fails_with_error_object(res: subprocess.CompletedProcess) -> dict:
    assert res.returncode == 1, (res.stdout, res.stderr)
    doc = json.loads(res.stdout)
    assert problems(doc, ERROR) == [], doc
    return doc


def test_every_command_with_json_output_has_a_schema():
    script = subprocess.run([str(weir_bin()), "completion", "bash"], capture_output=True, text=True,
                            check=True).stdout
    with_output = set()
    for path, words in re.findall(r'^    "(/[^"]*)"\) words="([^"]*)"', script, re.M):
        if "--output" in words.split():
            with_output.add(path.strip("/").replace("/", " "))
    assert "topic create" in with_output and "group seek" in with_output, with_output
    described = {name.split(" --")[0] for name in SCHEMAS}
    assert with_output == described, (with_output - described, described - with_output)
    # The checker itself: it notices a missing key, an extra key, a wrong type and a bool for an int.
    assert problems({"a": 1, "b": None}, {"a": int, "b?": str}) == ["$.b: expected str, got None"]
    assert problems({"a": True, "c": 1}, {"a": int}) == ["$.a: expected an integer, got True",
                                                         "$: unexpected key 'c'"]
    assert problems([{}], [{"x": str}]) == ["$[0]: missing key 'x'"]


@pytest.mark.timeout(240)
def test_topic_produce_and_consume_json(broker, topic_name):
    created = conforms("topic create", weir_json("topic", "create", topic_name, "-p", 2, "-r", 1, bootstrap=broker))
    assert created["created"] is True and created["partitions"] == 2
    again = conforms("topic create", weir_json("topic", "create", topic_name, "-p", 2, "--if-not-exists",
                                               bootstrap=broker))
    assert again["created"] is False
    listed = conforms("topic list", weir_json("topic", "list", bootstrap=broker))
    assert topic_name in [t["name"] for t in listed["topics"]]
    conforms("topic alter-config", weir_json("topic", "alter-config", topic_name, "--set", "retention.ms=3600000",
                                             bootstrap=broker))
    assert conforms("topic add-partitions", weir_json("topic", "add-partitions", topic_name, "-p", 3,
                                                      bootstrap=broker))["partitions"] == 3

    sent = conforms("produce", weir_json("produce", topic_name, "-p", 1, "-k", ":", "-H", "h=1",
                                         stdin="k1:v1\nk2:v2\n", bootstrap=broker))
    assert sent["records"] == 2
    records = conforms("consume", weir_json("consume", topic_name, "--from", "beginning", "-n", 2,
                                            bootstrap=broker), lines=True)
    assert [(r["key"], r["value"], r["headers"]) for r in records] == [("k1", "v1", {"h": "1"}),
                                                                       ("k2", "v2", {"h": "1"})]

    def described():
        doc = conforms("topic describe", weir_json("topic", "describe", topic_name, bootstrap=broker))
        return doc if [p["log_end_offset"] for p in doc["topics"][0]["partitions"]] == [0, 2, 0] else None
    doc = wait_for("the records in topic describe", described, 30)
    assert {"name": "retention.ms", "value": "3600000", "source": "DYNAMIC_TOPIC_CONFIG", "sensitive": False} in \
        doc["topics"][0]["configs"]

    missing = fails_with_error_object(weir_json("topic", "describe", f"{topic_name}-nosuch", bootstrap=broker))
    assert "does not exist" in missing["error"]["message"]
    gone = conforms("topic delete", weir_json("topic", "delete", topic_name, bootstrap=broker))
    assert gone["topics"] == [{"name": topic_name, "deleted": True}]


@pytest.mark.timeout(240)
def test_cluster_json(broker, topic_name):
    info = conforms("cluster info", weir_json("cluster", "info", bootstrap=broker))
    assert len(info["brokers"]) == 1
    node = info["brokers"][0]["id"]
    versions = conforms("cluster api-versions", weir_json("cluster", "api-versions", bootstrap=broker))
    assert any(a["name"] == "Produce" and a["used"] is not None for a in versions["brokers"][0]["apis"])
    got = conforms("cluster config get", weir_json("cluster", "config", "get", "--broker", node, bootstrap=broker))
    assert got["resource"] == "broker"
    conforms("cluster config get", weir_json("cluster", "config", "get", "--broker", node, "--all", bootstrap=broker))
    assert conforms("topic create", weir_json("topic", "create", topic_name, "-p", 1, bootstrap=broker))["created"]
    changed = conforms("cluster config set", weir_json("cluster", "config", "set", "--topic", topic_name, "--set",
                                                       "retention.ms=7200000", bootstrap=broker))
    assert changed == {"resource": "topic", "name": topic_name, "changed": True}
    topic_configs = conforms("cluster config get", weir_json("cluster", "config", "get", "--topic", topic_name,
                                                             bootstrap=broker))
    assert ["7200000"] == [c["value"] for c in topic_configs["configs"] if c["name"] == "retention.ms"]


@pytest.mark.timeout(300)
def test_group_json(broker, topic_name):
    assert conforms("topic create", weir_json("topic", "create", topic_name, "-p", 2, bootstrap=broker))["created"]
    conforms("produce", weir_json("produce", topic_name, stdin="".join(f"v{i}\n" for i in range(6)),
                                  bootstrap=broker))
    group = f"g-{topic_name}"
    read = conforms("consume", weir_json("consume", topic_name, "--group", group, "--from", "beginning", "-n", 3,
                                         bootstrap=broker), lines=True)
    assert len(read) == 3

    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "client.id": "json-probe",
                  "enable.auto.commit": False})
    try:
        c.subscribe([topic_name])

        def stable():
            c.poll(0.2)
            doc = conforms("group describe", weir_json("group", "describe", group, bootstrap=broker))
            return doc if doc["state"] == "Stable" and all(p["consumer_id"] for p in doc["partitions"]) else None
        doc = wait_for("the member in group describe", stable, 60)
        assert doc["members"] == 1 and doc["total_lag"] == 3
        members = conforms("group describe --members", weir_json("group", "describe", group, "--members",
                                                                 bootstrap=broker))
        assert [m["client_id"] for m in members["members"]] == ["json-probe"]
        state = conforms("group describe --state", weir_json("group", "describe", group, "--state", bootstrap=broker))
        assert state["members"] == 1
        assert group in conforms("group list", weir_json("group", "list", bootstrap=broker))["groups"]
        # Two groups, one active: its row carries the error, the other is planned, exit 1.
        refused = conforms("group seek", weir_json("group", "seek", group, f"{group}-other", "--to", "earliest",
                                                   "--topic", topic_name, bootstrap=broker), exit_code=1)
        assert [g["error"] is not None for g in refused["groups"]] == [True, False], refused
    finally:
        c.close()

    def empty():
        doc = conforms("group describe", weir_json("group", "describe", group, bootstrap=broker))
        return doc if doc["state"] == "Empty" else None
    doc = wait_for("the group to be empty", empty, 60)
    assert all(p["consumer_id"] is None for p in doc["partitions"])
    plan = conforms("group seek", weir_json("group", "seek", group, "--to", "earliest", "--all-topics",
                                            "--execute", bootstrap=broker))
    assert plan["executed"] is True and plan["groups"][0]["error"] is None
    assert {o["new_offset"] for o in plan["groups"][0]["offsets"]} == {0}
    deleted = conforms("group delete-offsets", weir_json("group", "delete-offsets", group, "--topic",
                                                         f"{topic_name}:0", bootstrap=broker))
    assert deleted["partitions"] == [{"topic": topic_name, "partition": 0, "error": None}]
    gone = conforms("group delete", weir_json("group", "delete", group, bootstrap=broker))
    assert gone == {"deleted": [group], "failed": []}
    fails_with_error_object(weir_json("group", "describe", group, bootstrap=broker))


@pytest.mark.timeout(240)
def test_txn_json(broker, topic_name):
    assert conforms("topic create", weir_json("topic", "create", topic_name, "-p", 1, bootstrap=broker))["created"]
    txn_id = f"tx-{topic_name}"
    p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id,
                  "transaction.timeout.ms": 600000})
    try:
        p.init_transactions(60)
        p.begin_transaction()
        p.produce(topic_name, b"open", partition=0)
        assert p.flush(30) == 0

        def listed():
            doc = conforms("txn list", weir_json("txn", "list", bootstrap=broker))
            return doc if any(t["transactional_id"] == txn_id for t in doc["transactions"]) else None
        wait_for("the transaction in txn list", listed, 60)
        described = conforms("txn describe", weir_json("txn", "describe", "--transactional-id", txn_id,
                                                       bootstrap=broker))
        assert described["state"] == "Ongoing" and described["start_time_ms"] is not None
        assert described["partitions"] == [f"{topic_name}-0"]
        producers = conforms("txn producers", weir_json("txn", "producers", "--topic", topic_name, "--partition", 0,
                                                        bootstrap=broker))
        assert [q["current_transaction_start_offset"] for q in producers["producers"]] == [0]
        hanging = conforms("txn find-hanging", weir_json("txn", "find-hanging", "--topic", topic_name,
                                                         "--max-transaction-timeout", 0, bootstrap=broker))
        assert hanging["hanging"] == [], "the coordinator still owns the open transaction"
        aborted = conforms("txn abort", weir_json("txn", "abort", "--topic", topic_name, "--partition", 0,
                                                  "--start-offset", 0, bootstrap=broker))
        assert aborted["aborted"]["producer_id"] == producers["producers"][0]["producer_id"]
        p.abort_transaction(60)
    finally:
        p.flush(10)
    after = conforms("txn producers", weir_json("txn", "producers", "--topic", topic_name, "--partition", 0,
                                                bootstrap=broker))
    assert [q["current_transaction_start_offset"] for q in after["producers"]] == [None]
    fails_with_error_object(weir_json("txn", "describe", "--transactional-id", f"{txn_id}-nosuch", bootstrap=broker))
