"""The transaction coordinator against weir and Apache Kafka 4.3.1 (same script, both brokers).

confluent-kafka's transactional producer initialises, commits and aborts; `kafka-transactions`
describe and list show the states Kafka shows; a second producer with the same transactional.id
fences the first (epoch bump, the open transaction aborted, the zombie's commit refused as
fenced); InitProducerId with a timeout above transaction.max.timeout.ms is refused; raw
AddPartitionsToTxn / EndTxn errors per version.
"""
from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness import parse_table, run_tool
from harness.kreq import Kreq

TOOL_ENV = {"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"}
INVALID_TXN_STATE = 48
INVALID_PRODUCER_ID_MAPPING = 49
INVALID_TRANSACTION_TIMEOUT = 50
INVALID_PRODUCER_EPOCH = 47
PRODUCER_FENCED = 90
COORDINATOR_NOT_READY = {14, 15, 16}


def make_topic(broker, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(name, 1, 1)]).values():
        f.result(timeout=30)


def producer(broker, txn_id: str, **extra) -> Producer:
    return Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id,
                     "transaction.timeout.ms": 60000, **extra})


def describe(broker, txn_id: str) -> dict[str, str]:
    out = run_tool("kafka-transactions", "describe", "--transactional-id", txn_id, bootstrap=broker,
                   env=TOOL_ENV, timeout=90).check().stdout
    [row] = parse_table(out, header_first="CoordinatorId")
    return row


def wait_state(broker, txn_id: str, state: str, timeout: float = 60.0) -> dict[str, str]:
    """describe until the transaction reaches `state` (markers are written after EndTxn)."""
    deadline = time.monotonic() + timeout
    while True:
        row = describe(broker, txn_id)
        if row["TransactionState"] == state or time.monotonic() > deadline:
            assert row["TransactionState"] == state, row
            return row
        time.sleep(0.5)


def test_commit_abort_describe_and_list(broker, topic_name):
    make_topic(broker, topic_name)
    txn_id = f"{topic_name}-app"
    p = producer(broker, txn_id)
    p.init_transactions(30)
    p.begin_transaction()
    p.produce(topic_name, key=b"k", value=b"v1")
    p.flush(30)
    row = describe(broker, txn_id)
    assert row["TransactionState"] == "Ongoing"
    assert row["ProducerEpoch"] == "0"
    assert row["TransactionTimeoutMs"] == "60000"
    assert row["TopicPartitions"] == f"{topic_name}-0"
    assert row["CurrentTransactionStartTimeMs"] != "None"
    producer_id = row["ProducerId"]
    p.commit_transaction(30)
    row = wait_state(broker, txn_id, "CompleteCommit")
    assert row["ProducerId"] == producer_id and row["ProducerEpoch"] == "0"
    assert row["TopicPartitions"] == ""

    p.begin_transaction()
    p.produce(topic_name, key=b"k", value=b"v2")
    p.flush(30)
    p.abort_transaction(30)
    wait_state(broker, txn_id, "CompleteAbort")

    out = run_tool("kafka-transactions", "list", bootstrap=broker, env=TOOL_ENV, timeout=90).check().stdout
    rows = {r["TransactionalId"]: r for r in parse_table(out, header_first="TransactionalId")}
    assert rows[txn_id]["TransactionState"] == "CompleteAbort"
    assert rows[txn_id]["ProducerId"] == producer_id
    # ListTransactions v2: the transactional id pattern (a regular expression, whole id).
    out = run_tool("kafka-transactions", "list", "--transactional-id-pattern", f"{topic_name}-a.*",
                   bootstrap=broker, env=TOOL_ENV, timeout=90).check().stdout
    assert [r["TransactionalId"] for r in parse_table(out, header_first="TransactionalId")] == [txn_id]
    out = run_tool("kafka-transactions", "list", "--transactional-id-pattern", f"{topic_name}-b.*",
                   bootstrap=broker, env=TOOL_ENV, timeout=90).check().stdout
    assert parse_table(out, header_first="TransactionalId") == []


def test_second_producer_fences_the_first(broker, topic_name):
    make_topic(broker, topic_name)
    txn_id = f"{topic_name}-app"
    zombie = producer(broker, txn_id)
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(topic_name, value=b"from-zombie")
    zombie.flush(30)
    assert describe(broker, txn_id)["TransactionState"] == "Ongoing"
    # The new instance's init fences the epoch, aborts the open transaction (the client retries
    # through CONCURRENT_TRANSACTIONS) and gets the second bump.
    fresh = producer(broker, txn_id)
    fresh.init_transactions(60)
    row = describe(broker, txn_id)
    assert row["TransactionState"] == "Empty" and row["ProducerEpoch"] == "2", row
    with pytest.raises(KafkaException) as caught:
        zombie.commit_transaction(30)
    err = caught.value.args[0]
    assert err.fatal(), err
    assert err.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED), err
    fresh.begin_transaction()
    fresh.produce(topic_name, value=b"from-fresh")
    fresh.commit_transaction(30)
    row = wait_state(broker, txn_id, "CompleteCommit")
    assert row["ProducerEpoch"] == "2"


def find_txn_coordinator(k: Kreq, txn_id: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        resp = k.send("FindCoordinator", 4, {"CoordinatorType": 1, "CoordinatorKeys": [txn_id]})
        [c] = resp["Coordinators"]
        if c["ErrorCode"] == 0:
            return
        assert c["ErrorCode"] in COORDINATOR_NOT_READY, c
        assert time.monotonic() < deadline, c
        time.sleep(0.2)


def init_pid(k: Kreq, txn_id: str, version: int, timeout_ms: int = 60000) -> dict:
    deadline = time.monotonic() + 30
    while True:
        resp = k.send("InitProducerId", version, {"TransactionalID": txn_id, "TransactionTimeoutMillis": timeout_ms,
                                                   "ProducerID": -1, "ProducerEpoch": -1})
        if resp["ErrorCode"] not in COORDINATOR_NOT_READY or time.monotonic() > deadline:
            return resp
        time.sleep(0.2)


def test_init_producer_id_errors(broker, topic_name):
    txn_id = f"{topic_name}-raw"
    with Kreq(broker) as k:
        find_txn_coordinator(k, txn_id)
        resp = init_pid(k, txn_id, 4, timeout_ms=900001)
        assert resp["ErrorCode"] == INVALID_TRANSACTION_TIMEOUT
        assert resp["ProducerID"] == -1
        resp = init_pid(k, txn_id, 4, timeout_ms=0)
        assert resp["ErrorCode"] == INVALID_TRANSACTION_TIMEOUT
        first = init_pid(k, txn_id, 4)
        assert first["ErrorCode"] == 0 and first["ProducerEpoch"] == 0
        second = init_pid(k, txn_id, 4)
        assert second["ErrorCode"] == 0
        assert second["ProducerID"] == first["ProducerID"] and second["ProducerEpoch"] == 1


def test_end_txn_and_add_partitions_errors_by_version(broker, topic_name):
    make_topic(broker, topic_name)
    txn_id = f"{topic_name}-raw"
    with Kreq(broker) as k:
        find_txn_coordinator(k, txn_id)
        ids = init_pid(k, txn_id, 4)
        assert ids["ErrorCode"] == 0
        pid, epoch = ids["ProducerID"], ids["ProducerEpoch"]
        # No transaction open: EndTxn is an invalid state.
        resp = k.send("EndTxn", 3, {"TransactionalID": txn_id, "ProducerID": pid, "ProducerEpoch": epoch,
                                    "Commit": True})
        assert resp["ErrorCode"] == INVALID_TXN_STATE
        # An unknown producer id.
        resp = k.send("EndTxn", 3, {"TransactionalID": txn_id, "ProducerID": pid + 1000, "ProducerEpoch": epoch,
                                    "Commit": True})
        assert resp["ErrorCode"] == INVALID_PRODUCER_ID_MAPPING
        # A stale epoch: PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH below.
        for version, want in ((1, INVALID_PRODUCER_EPOCH), (2, PRODUCER_FENCED), (3, PRODUCER_FENCED)):
            body = {"TransactionalID": txn_id, "ProducerID": pid, "ProducerEpoch": epoch + 1,
                    "Topics": [{"Topic": topic_name, "Partitions": [0]}]}
            resp = k.send("AddPartitionsToTxn", version, body)
            [topic] = resp["Topics"]
            assert [p["ErrorCode"] for p in topic["Partitions"]] == [want], (version, resp)
            resp = k.send("EndTxn", version, {"TransactionalID": txn_id, "ProducerID": pid,
                                              "ProducerEpoch": epoch + 1, "Commit": False})
            assert resp["ErrorCode"] == want, (version, resp)
        # An unknown partition fails the request; the known ones are not attempted.
        body = {"TransactionalID": txn_id, "ProducerID": pid, "ProducerEpoch": epoch,
                "Topics": [{"Topic": topic_name, "Partitions": [0, 7]}]}
        resp = k.send("AddPartitionsToTxn", 3, body)
        [topic] = resp["Topics"]
        errors = {p["Partition"]: p["ErrorCode"] for p in topic["Partitions"]}
        assert errors == {0: 55, 7: 3}
        # Added, then committed.
        body["Topics"] = [{"Topic": topic_name, "Partitions": [0]}]
        resp = k.send("AddPartitionsToTxn", 3, body)
        [topic] = resp["Topics"]
        assert [p["ErrorCode"] for p in topic["Partitions"]] == [0]
        resp = k.send("EndTxn", 3, {"TransactionalID": txn_id, "ProducerID": pid, "ProducerEpoch": epoch,
                                    "Commit": True})
        assert resp["ErrorCode"] == 0
        desc = k.send("DescribeTransactions", 0, {"TransactionalIDs": [txn_id, f"{txn_id}-missing"]})
        found, missing = desc["TransactionStates"]
        assert found["ErrorCode"] == 0 and found["State"] in ("PrepareCommit", "CompleteCommit")
        assert missing["ErrorCode"] == 105  # TRANSACTIONAL_ID_NOT_FOUND


def test_coordinator_metrics(weir_factory, topic_name):
    """weir only: /metrics counts ongoing, committed, aborted and timed-out transactions."""
    from harness.ports import free_port
    from test_metrics import scrape

    port = free_port()
    b = weir_factory(settings={"metrics.listener": f"127.0.0.1:{port}",
                               "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"})
    b.metrics_port = port
    make_topic(b, topic_name)
    p = producer(b, f"{topic_name}-m")
    p.init_transactions(30)
    for commit in (True, False):
        p.begin_transaction()
        p.produce(topic_name, value=b"x")
        p.flush(30)
        assert scrape(b).value("weir_transactions_ongoing") == 1
        (p.commit_transaction if commit else p.abort_transaction)(30)
    wait_state(b, f"{topic_name}-m", "CompleteAbort")
    m = scrape(b)
    assert m.value("weir_transactions_committed_total") == 1
    assert m.value("weir_transactions_aborted_total") == 1
    assert m.value("weir_transactions_ongoing") == 0
    # A transaction left open past its timeout is aborted by the coordinator.
    slow = producer(b, f"{topic_name}-t", **{"transaction.timeout.ms": 1000})
    slow.init_transactions(30)
    slow.begin_transaction()
    slow.produce(topic_name, value=b"y")
    slow.flush(30)
    wait_state(b, f"{topic_name}-t", "CompleteAbort")
    assert scrape(b).value("weir_transactions_timed_out_total") == 1
