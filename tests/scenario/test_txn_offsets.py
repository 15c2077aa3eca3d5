"""Transactional offset commits (TxnOffsetCommit) sent with the raw-request tool, against weir and
Kafka 4.3.1.

A transaction coordinator is not needed to commit transactional offsets when the broker does not
verify transactions: Kafka 4.3.1 with `transaction.partition.verification.enable=false` accepts a
TxnOffsetCommit from an idempotent producer id and keeps the offsets pending (its default, with
verification, answers COORDINATOR_NOT_AVAILABLE because the producer has no transaction). The
pending offsets never see a marker here, so they stay pending: OffsetFetch with require_stable
answers UNSTABLE_OFFSET_COMMIT for their partitions, and everything else (plain OffsetFetch,
kafka-consumer-groups --describe) shows the offsets committed before. On weir, a restart replays
the transactional batch from `__consumer_offsets` and the offsets are still pending, beside the
committed ones. (Commit and abort markers are covered by the group unit tests, over real batches.)
"""
from __future__ import annotations

import time

import pytest

from harness import parse_table, run_tool
from harness.kreq import Kreq

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
ILLEGAL_GENERATION = 22
INVALID_GROUP_ID = 24
UNSTABLE_OFFSET_COMMIT = 88
NOT_READY = {14, 15, 16}  # the coordinator loading, not available, or not known yet
TOOL_ENV = {"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"}


NO_VERIFICATION = {"transaction.partition.verification.enable": "false"}


@pytest.fixture(params=["weir", pytest.param("kafka", marks=pytest.mark.differential)])
def unverified(request):
    """weir, or a Kafka of the test's own, that does not verify transactions (KIP-890)."""
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")(settings=NO_VERIFICATION)
    return request.getfixturevalue("kafka_factory")(overrides=NO_VERIFICATION)


def until(fn, ok, what: str, timeout: float = 30.0):
    """fn() until ok(answer); the coordinator of a new __consumer_offsets partition loads first."""
    deadline = time.monotonic() + timeout
    while True:
        answer = fn()
        if ok(answer):
            return answer
        assert time.monotonic() < deadline, f"{what}: {answer}"
        time.sleep(0.2)


def errors(resp: dict) -> dict:
    """{(topic, partition): error code} of an OffsetCommit / TxnOffsetCommit answer."""
    return {(t["Topic"], p["Partition"]): p["ErrorCode"] for t in resp["Topics"] for p in t["Partitions"]}


def txn_commit(k: Kreq, version: int, group: str, producer: dict, offsets: dict, **fields) -> dict:
    topics: dict[str, list] = {}
    for (t, p), off in offsets.items():
        topics.setdefault(t, []).append({"Partition": p, "Offset": off, "Metadata": "tx"})
    body = {"TransactionalID": "order-totals-app", "Group": group, "ProducerID": producer["ProducerID"],
            "ProducerEpoch": producer["ProducerEpoch"], "Generation": -1,
            "Topics": [{"Topic": t, "Partitions": ps} for t, ps in topics.items()], **fields}
    return errors(k.send("TxnOffsetCommit", version, body))


def fetch_v8(k: Kreq, group: str, topic: str | None, partitions=(), require_stable=False) -> dict:
    """OffsetFetch v8: {(topic, partition): (error code, offset)}; the group's error must be 0."""
    topics = None if topic is None else [{"Topic": topic, "Partitions": list(partitions)}]
    resp = k.send("OffsetFetch", 8, {"Groups": [{"Group": group, "Topics": topics}],
                                     "RequireStable": require_stable})
    [g] = resp["Groups"]
    assert g["ErrorCode"] == NONE, resp
    return {(t["Topic"], p["Partition"]): (p["ErrorCode"], p["Offset"]) for t in g["Topics"] for p in t["Partitions"]}


def fetch_v7(k: Kreq, group: str, topic: str, partitions, require_stable: bool) -> tuple[int, dict]:
    """OffsetFetch v7: (top-level error, {(topic, partition): (error code, offset)})."""
    resp = k.send("OffsetFetch", 7, {"Group": group, "Topics": [{"Topic": topic, "Partitions": list(partitions)}],
                                     "RequireStable": require_stable})
    return resp["ErrorCode"], {(t["Topic"], p["Partition"]): (p["ErrorCode"], p["Offset"])
                               for t in resp["Topics"] for p in t["Partitions"]}


def setup(k: Kreq, topic: str, group: str) -> dict:
    """A 2-partition topic, offset 5 committed for partition 0, and an idempotent producer id."""
    created = k.send("CreateTopics", 7, {
        "Topics": [{"Topic": topic, "NumPartitions": 2, "ReplicationFactor": 1}], "TimeoutMillis": 15000})
    assert created["Topics"][0]["ErrorCode"] == NONE, created
    # As a client does: FindCoordinator first (it creates __consumer_offsets).
    until(lambda: k.send("FindCoordinator", 4, {"CoordinatorType": 0, "CoordinatorKeys": [group]}),
          lambda r: r["Coordinators"][0]["ErrorCode"] == NONE, "FindCoordinator")
    body = {"Group": group, "Generation": -1, "Topics": [{"Topic": topic, "Partitions": [{"Partition": 0, "Offset": 5}]}]}
    until(lambda: errors(k.send("OffsetCommit", 8, body)), lambda e: e == {(topic, 0): NONE}, "plain commit")
    producer = until(lambda: k.send("InitProducerID", 4, {"TransactionalID": None, "TransactionTimeoutMillis": 60000,
                                                          "ProducerID": -1, "ProducerEpoch": -1}),
                     lambda r: r["ErrorCode"] not in NOT_READY, "InitProducerId")
    assert producer["ErrorCode"] == NONE and producer["ProducerID"] >= 0, producer
    return producer


def describe_offsets(broker, group: str, topic: str) -> dict:
    res = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=broker, env=TOOL_ENV,
                   timeout=90).check()
    return {int(r["PARTITION"]): r["CURRENT-OFFSET"] for r in parse_table(res.stdout, header_first="GROUP")
            if r["TOPIC"] == topic}


def test_txn_offsets_stay_pending_and_require_stable_reports_them(unverified, topic_name):
    group = f"{topic_name}-g"
    with Kreq(unverified) as k:
        producer = setup(k, topic_name, group)

        # Every version the old clients use commits; v3 carries (here empty) member fields.
        for version in (0, 2, 3):
            assert txn_commit(k, version, group, producer, {(topic_name, 0): 10 + version,
                                                            (topic_name, 1): 20}) == \
                {(topic_name, 0): NONE, (topic_name, 1): NONE}, version

        # Errors decided before the coordinator, then by it.
        assert txn_commit(k, 3, group, producer, {("no-such-topic", 0): 1, (topic_name, 9): 1}) == \
            {("no-such-topic", 0): UNKNOWN_TOPIC_OR_PARTITION, (topic_name, 9): UNKNOWN_TOPIC_OR_PARTITION}
        assert txn_commit(k, 3, "", producer, {(topic_name, 0): 1}) == {(topic_name, 0): INVALID_GROUP_ID}
        assert txn_commit(k, 3, f"{group}-none", producer, {(topic_name, 0): 1},
                          Generation=5, MemberID="m") == {(topic_name, 0): ILLEGAL_GENERATION}

        # Pending: invisible to a plain fetch, unstable to a stable one (per partition only).
        assert fetch_v8(k, group, topic_name, [0, 1]) == {(topic_name, 0): (NONE, 5), (topic_name, 1): (NONE, -1)}
        assert fetch_v8(k, group, topic_name, [0, 1], require_stable=True) == \
            {(topic_name, 0): (UNSTABLE_OFFSET_COMMIT, -1), (topic_name, 1): (UNSTABLE_OFFSET_COMMIT, -1)}
        # All topics lists what is committed (partition 1 has nothing yet).
        assert fetch_v8(k, group, None, require_stable=True) == {(topic_name, 0): (UNSTABLE_OFFSET_COMMIT, -1)}
        assert fetch_v8(k, group, None) == {(topic_name, 0): (NONE, 5)}
        assert fetch_v7(k, group, topic_name, [0, 1], require_stable=True) == \
            (NONE, {(topic_name, 0): (UNSTABLE_OFFSET_COMMIT, -1), (topic_name, 1): (UNSTABLE_OFFSET_COMMIT, -1)})
        assert fetch_v7(k, group, topic_name, [0], require_stable=False) == (NONE, {(topic_name, 0): (NONE, 5)})

    # The CLI reads without require_stable: the committed offset only.
    assert describe_offsets(unverified, group, topic_name) == {0: "5"}


def test_restart_keeps_committed_offsets_and_replays_pending_ones(weir_factory, topic_name):
    weir = weir_factory(settings=NO_VERIFICATION)
    group = f"{topic_name}-g"
    with Kreq(weir) as k:
        producer = setup(k, topic_name, group)
        assert txn_commit(k, 3, group, producer, {(topic_name, 0): 10, (topic_name, 1): 20}) == \
            {(topic_name, 0): NONE, (topic_name, 1): NONE}

    weir.restart()

    with Kreq(weir) as k:
        stable = until(lambda: k.send("OffsetFetch", 8, {"Groups": [{"Group": group, "Topics": [
            {"Topic": topic_name, "Partitions": [0, 1]}]}], "RequireStable": True}),
            lambda r: r["Groups"][0]["ErrorCode"] not in NOT_READY, "OffsetFetch after the restart")
        [g] = stable["Groups"]
        assert g["ErrorCode"] == NONE, stable
        # Still pending after the load: the transactional batch was replayed, not skipped.
        assert {(t["Topic"], p["Partition"]): (p["ErrorCode"], p["Offset"]) for t in g["Topics"]
                for p in t["Partitions"]} == \
            {(topic_name, 0): (UNSTABLE_OFFSET_COMMIT, -1), (topic_name, 1): (UNSTABLE_OFFSET_COMMIT, -1)}
        assert fetch_v8(k, group, topic_name, [0, 1]) == {(topic_name, 0): (NONE, 5), (topic_name, 1): (NONE, -1)}
