"""`weir group list|describe` (issue 17), against weir and against Apache Kafka 4.3.1: for the same
group, `weir group describe` (also with --members, --state, --verbose) prints what
`kafka-consumer-groups --describe` prints, line for line,
while a member owns the partitions and after it left (the "has no active members" message on
stderr, owners shown as "-"); `--output json` carries the same numbers; an unknown group is an
error (exit 1). A consumer protocol group (KIP-848: `weir consume --group-protocol consumer`
members) is read with ConsumerGroupDescribe as Kafka's tool reads it: the same tables (with the
member and target epochs and assignments under --members --verbose, the group and assignment
epochs under --state --verbose) while two members own the partitions and after they left; its
offsets are not reset while it is active.
"""
from __future__ import annotations

import json
import subprocess

import pytest
from confluent_kafka import Consumer, Producer

from harness import run_tool
from harness.cluster import wait_for
from harness.paths import weir_bin
from test_cli_consume_group import Member


def weir_cli(*args, bootstrap) -> subprocess.CompletedProcess:
    argv = [str(weir_bin()), *[str(a) for a in args], "--bootstrap", getattr(bootstrap, "bootstrap", bootstrap)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def kafka_describe(broker, group: str):
    return run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=broker).check()


@pytest.mark.timeout(240)
@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_group_describe_matches_kafka_consumer_groups(broker, topic_name):
    assert weir_cli("topic", "create", topic_name, "-p", 3, "-r", 1, bootstrap=broker).returncode == 0
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i, (key, value) in enumerate([("user1", "hello"), ("uesr2", "hi"), ("user1", "bye"), ("user3", "hey")]):
        p.produce(topic_name, key=key.encode(), value=value.encode())
    assert p.flush(30) == 0
    group = f"g-{topic_name}"
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "client.id": "cli-probe"})
    try:
        c.subscribe([topic_name])
        got = 0
        while got < 3:  # commit three of the four records: one partition keeps a lag
            m = c.poll(1)
            if m is None or m.error():
                continue
            got += 1
            c.commit(message=m, asynchronous=False)

        def stable_describe():
            res = weir_cli("group", "describe", group, bootstrap=broker)
            return res if res.returncode == 0 and "CONSUMER-ID" in res.stdout and "cli-probe" in res.stdout else None
        ours = wait_for("the member's assignment in weir group describe", stable_describe, 60)
        theirs = kafka_describe(broker, group)
        assert ours.stdout == theirs.stdout, (ours.stdout, theirs.stdout)
        rows = [line.split() for line in ours.stdout.splitlines()[2:]]
        assert len(rows) == 3 and all(r[0] == group and r[1] == topic_name for r in rows), rows
        assert sum(int(r[5]) for r in rows if r[5] != "-") + sum(1 for r in rows if r[3] == "-") >= 1

        shown = {}
        for flags in (["--members"], ["--members", "--verbose"], ["--state"], ["--state", "--verbose"]):
            ours = weir_cli("group", "describe", group, *flags, bootstrap=broker)
            theirs = run_tool("kafka-consumer-groups", "--describe", "--group", group, *flags, bootstrap=broker).check()
            assert ours.returncode == 0 and ours.stdout == theirs.stdout, (flags, ours.stdout, theirs.stdout)
            shown[flags[0]] = ours.stdout
        assert "cli-probe" in shown["--members"] and "Stable" in shown["--state"], shown

        listed = weir_cli("group", "list", bootstrap=broker)
        assert listed.returncode == 0 and group in listed.stdout.splitlines(), listed
    finally:
        c.close()

    def empty():
        res = weir_cli("group", "describe", group, "--output", "json", bootstrap=broker)
        return json.loads(res.stdout) if res.returncode == 0 and json.loads(res.stdout)["state"] == "Empty" else None
    as_json = wait_for("the group to be empty", empty, 60)
    assert all(r["consumer_id"] is None for r in as_json["partitions"])
    committed = {r["partition"]: r["current_offset"] for r in as_json["partitions"]}
    ours = weir_cli("group", "describe", group, bootstrap=broker)
    theirs = kafka_describe(broker, group)
    assert ours.returncode == 0
    assert ours.stdout == theirs.stdout, (ours.stdout, theirs.stdout)
    assert f"Consumer group '{group}' has no active members." in ours.stderr
    for flags in (["--members"], ["--state"]):
        ours = weir_cli("group", "describe", group, *flags, bootstrap=broker)
        theirs = run_tool("kafka-consumer-groups", "--describe", "--group", group, *flags, bootstrap=broker).check()
        assert ours.returncode == 0 and ours.stdout == theirs.stdout, (flags, ours.stdout, theirs.stdout)
        assert f"Consumer group '{group}' has no active members." in ours.stderr
    assert sum(v for v in committed.values() if v is not None) == 3

    missing = weir_cli("group", "describe", f"{group}-nosuch", bootstrap=broker)
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"error: consumer group '{group}-nosuch' does not exist"


FLAGS = ([], ["--members"], ["--members", "--verbose"], ["--state"], ["--state", "--verbose"])


def same_as_kafka(broker, group: str, flags: list[str]) -> tuple[str, str] | None:
    """weir's and kafka-consumer-groups' output for the flags when they agree (the group's
    offsets and epochs may move between the two calls: the caller asks again), else None."""
    ours = weir_cli("group", "describe", group, *flags, bootstrap=broker)
    theirs = run_tool("kafka-consumer-groups", "--describe", "--group", group, *flags, bootstrap=broker).check()
    assert ours.returncode == 0, (flags, ours.stderr)
    return (ours.stdout, ours.stderr) if ours.stdout == theirs.stdout else None


@pytest.mark.timeout(240)
@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_consumer_protocol_group_describe_matches_kafka_consumer_groups(broker, topic_name, tmp_path):
    assert weir_cli("topic", "create", topic_name, "-p", 3, "-r", 1, bootstrap=broker).returncode == 0
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(9):
        p.produce(topic_name, value=f"v{i}".encode(), partition=i % 3)
    assert p.flush(30) == 0
    group = f"g-{topic_name}"
    a = Member(broker, topic_name, group, tmp_path, "member-a", "--group-protocol", "consumer")
    b = Member(broker, topic_name, group, tmp_path, "member-b", "--group-protocol", "consumer")
    try:
        def settled():
            # Both members reconciled (current = target), everything read and committed.
            res = weir_cli("group", "describe", group, "--members", "--output", "json", bootstrap=broker)
            doc = json.loads(res.stdout) if res.returncode == 0 else None
            if not doc or doc["state"] != "Stable" or len(doc["members"]) != 2:
                return None
            if any(m["partitions"] != m["target_partitions"] or not m["partitions"] for m in doc["members"]):
                return None
            offsets = json.loads(weir_cli("group", "describe", group, "--output", "json", bootstrap=broker).stdout)
            return doc if offsets["total_lag"] == 0 and len(offsets["partitions"]) == 3 else None
        members = wait_for("two reconciled members with everything committed", settled, 60)
        assert len(a.records()) + len(b.records()) == 9
        assert all(m["member_epoch"] is not None and m["group_instance_id"] is None for m in members["members"])
        shown = {}
        for flags in FLAGS:
            shown[" ".join(flags)] = wait_for(f"weir and Kafka to agree on describe {flags}",
                                              lambda: same_as_kafka(broker, group, flags), 30)[0]
        assert "member-a" in shown[""] and "member-b" in shown[""], shown
        assert "TARGET-ASSIGNMENT" in shown["--members --verbose"] and "GROUP-EPOCH" in shown["--state --verbose"]
        state = json.loads(weir_cli("group", "describe", group, "--state", "--output", "json", bootstrap=broker).stdout)
        assert state["type"] == "consumer" and state["state"] == "Stable" and state["members"] == 2, state
        assert state["group_epoch"] >= 1 and state["target_assignment_epoch"] == state["group_epoch"], state
        assert state["assignment_strategy"] in shown["--state"]
        # An active consumer protocol group's offsets are not reset (DescribeGroups alone would call it Dead).
        refused = weir_cli("group", "seek", group, "--to", "earliest", "--all-topics", "--execute", bootstrap=broker)
        assert refused.returncode == 1 and "inactive" in refused.stderr and "Stable" in refused.stderr, refused
        theirs = run_tool("kafka-consumer-groups", "--reset-offsets", "--group", group, "--to-earliest", "--all-topics",
                          "--execute", bootstrap=broker)
        assert "is inactive, but the current state is Stable" in theirs.stdout, theirs.stdout

        a.interrupt()
        b.interrupt()

        def empty():
            res = weir_cli("group", "describe", group, "--output", "json", bootstrap=broker)
            doc = json.loads(res.stdout) if res.returncode == 0 else None
            return doc if doc and doc["state"] == "Empty" else None
        doc = wait_for("the group to be empty", empty, 30)
        assert doc["type"] == "consumer" and doc["members"] == 0
        assert {r["partition"]: r["current_offset"] for r in doc["partitions"]} == {0: 3, 1: 3, 2: 3}
        for flags in ([], ["--members"], ["--state"]):
            _, err = wait_for(f"weir and Kafka to agree on describe {flags} of the empty group",
                              lambda: same_as_kafka(broker, group, flags), 30)
            assert f"Consumer group '{group}' has no active members." in err
    finally:
        a.kill()
        b.kill()
