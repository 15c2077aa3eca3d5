"""Seed 003: what exactly-once does and does not do, replayed against weir and the real Kafka.

A consume-process-produce app (apps/seed003_processor.py, confluent-kafka) reads orders, writes
each order's total and commits the order's offset; it exits between writing O-2's result and
committing. Without a transaction O-2's result is written twice and both copies are committed
data; with one (transactional.id order-totals-app) the restarted app's init_transactions waits
out the abort of the open transaction, O-2 is reprocessed, and read_committed sees each result
once while read_uncommitted also sees the aborted copy. Every value the seed prints is asserted.

Each run needs a broker of its own (the seed's fixed topic, group and transactional ids, and
producer id 1): weir's function-scoped fixture, or a fresh Kafka.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from harness import parse_table, run_tool

APPS = Path(__file__).parent / "apps"
ORDERS = "O-1 2x15000\nO-2 1x42000\nO-3 3x9000\n"
GROUP_COLUMNS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                 "CONSUMER-ID", "HOST", "CLIENT-ID"]
TXN_COLUMNS = ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
               "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs",
               "TopicPartitions"]


@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    # The oracle variant is slow (make test time); the weir variant runs in make test.
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential, pytest.mark.slow)),
])
def fresh_broker(request):
    if request.param == "weir":
        return request.getfixturevalue("weir")
    return request.getfixturevalue("kafka_factory")()


def processor(broker, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(APPS / "seed003_processor.py"), broker.bootstrap, *args],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def read(broker, topic: str, isolation: str) -> list[str]:
    proc = subprocess.run([sys.executable, str(APPS / "seed003_read.py"), broker.bootstrap, topic, isolation],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.splitlines()


def group_rows(broker, group: str) -> tuple[list[dict[str, str]], str]:
    out = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=broker, check=True)
    text = out.stdout + out.stderr
    header = next(ln.split() for ln in out.stdout.splitlines() if ln.startswith("GROUP"))
    assert header == GROUP_COLUMNS
    return parse_table(out.stdout, header_first="GROUP"), text


def describe_txn(broker) -> dict[str, str]:
    out = run_tool("kafka-transactions", "describe", "--transactional-id", "order-totals-app",
                   bootstrap=broker, check=True)
    rows = parse_table(out.stdout, header_first="CoordinatorId")
    assert list(rows[0]) == TXN_COLUMNS
    [row] = rows
    return row


@pytest.mark.timeout(400)
def test_seed_003(fresh_broker):
    broker = fresh_broker
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for name in ("orders", "order-totals", "order-totals-tx"):
        admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    run_tool("kafka-console-producer", "--topic", "orders", bootstrap=broker, input=ORDERS, check=True)

    # Practice 1: no transaction, exit after writing O-2's result, before committing its offset.
    first = processor(broker, "plain", "order-totals", "O-2")
    assert first.stdout.splitlines() == [
        "offset 0 O-1 processed, wrote 'O-1 total=30000' to order-totals",
        "offset 1 O-2 processed, wrote 'O-2 total=42000' to order-totals",
        "O-2: exiting before the offset commit",
    ]
    rows, text = group_rows(broker, "totals-plain")
    assert "Consumer group 'totals-plain' has no active members." in text
    assert rows == [dict(zip(GROUP_COLUMNS, ["totals-plain", "orders", "0", "1", "3", "2", "-", "-", "-"]))]

    again = processor(broker, "plain", "order-totals")
    assert again.stdout.splitlines() == [
        "offset 1 O-2 processed, wrote 'O-2 total=42000' to order-totals",
        "offset 2 O-3 processed, wrote 'O-3 total=27000' to order-totals",
    ]
    assert read(broker, "order-totals", "read_committed") == [
        "[read_committed]",
        "  offset 0: O-1 total=30000",
        "  offset 1: O-2 total=42000",
        "  offset 2: O-2 total=42000",
        "  offset 3: O-3 total=27000",
    ]

    # Practice 2: the same exit, with the result and the offset in one transaction.
    crashed = processor(broker, "tx", "order-totals-tx", "O-2")
    assert crashed.stdout.splitlines() == [
        "offset 0 O-1 processed, wrote 'O-1 total=30000' to order-totals-tx",
        "offset 1 O-2 processed, wrote 'O-2 total=42000' to order-totals-tx",
        "O-2: exiting before the offset commit",
    ]
    ongoing = describe_txn(broker)
    assert ongoing["CoordinatorId"] == str(broker.node_id)
    assert (ongoing["TransactionalId"], ongoing["ProducerId"], ongoing["ProducerEpoch"],
            ongoing["TransactionState"], ongoing["TransactionTimeoutMs"], ongoing["TopicPartitions"]) == \
        ("order-totals-app", "1", "0", "Ongoing", "60000", "order-totals-tx-0,__consumer_offsets-2")
    assert int(ongoing["CurrentTransactionStartTimeMs"]) > 0
    assert int(ongoing["TransactionDurationMs"]) >= 0

    restarted = processor(broker, "tx", "order-totals-tx")
    assert restarted.stdout.splitlines() == [
        "offset 1 O-2 processed, wrote 'O-2 total=42000' to order-totals-tx",
        "offset 2 O-3 processed, wrote 'O-3 total=27000' to order-totals-tx",
    ]
    # init_transactions met the open transaction: CONCURRENT_TRANSACTIONS while it was aborted.
    assert "Failed to acquire transactional PID from broker TxnCoordinator/" in restarted.stderr
    assert "another concurrent operation on the same transaction was ongoing: retrying" in restarted.stderr
    done = describe_txn(broker)
    assert (done["TransactionalId"], done["ProducerId"], done["ProducerEpoch"], done["TransactionState"],
            done["TransactionTimeoutMs"], done["TopicPartitions"]) == \
        ("order-totals-app", "1", "2", "CompleteCommit", "60000", "")
    assert read(broker, "order-totals-tx", "read_committed") == [
        "[read_committed]",
        "  offset 0: O-1 total=30000",
        "  offset 4: O-2 total=42000",
        "  offset 6: O-3 total=27000",
    ]
    rows, text = group_rows(broker, "totals-tx")
    assert "Consumer group 'totals-tx' has no active members." in text
    assert rows == [dict(zip(GROUP_COLUMNS, ["totals-tx", "orders", "0", "3", "3", "0", "-", "-", "-"]))]

    # Practice 3: the aborted copy of O-2 is still in the partition.
    assert read(broker, "order-totals-tx", "read_uncommitted") == [
        "[read_uncommitted]",
        "  offset 0: O-1 total=30000",
        "  offset 2: O-2 total=42000",
        "  offset 4: O-2 total=42000",
        "  offset 6: O-3 total=27000",
    ]
    # The Java console consumer reads uncommitted by default, and hides the aborted record with
    # --isolation-level read_committed.
    java_default = run_tool("kafka-console-consumer", "--topic", "order-totals-tx", "--from-beginning",
                            "--max-messages", "4", bootstrap=broker, check=True)
    assert java_default.stdout.splitlines() == [
        "O-1 total=30000", "O-2 total=42000", "O-2 total=42000", "O-3 total=27000"]
    java_committed = run_tool("kafka-console-consumer", "--topic", "order-totals-tx", "--from-beginning",
                              "--max-messages", "3", "--isolation-level", "read_committed",
                              bootstrap=broker, check=True)
    assert java_committed.stdout.splitlines() == ["O-1 total=30000", "O-2 total=42000", "O-3 total=27000"]
