"""`weir txn list|describe|producers|find-hanging|abort` (issue 17), against weir and against Apache
Kafka 4.3.1: for one committed and one open transaction, list, describe and producers print what
kafka-transactions prints (the same tab-separated columns and values; describe's duration aside,
which moves with the clock), find-hanging finds nothing while the coordinator still owns the open
transaction, and abort --start-offset ends the open transaction on its partition (as
kafka-transactions describe-producers then shows); an unknown id or start offset is exit 1.
"""
from __future__ import annotations

import subprocess

import pytest
from confluent_kafka import Producer

from harness import run_tool
from harness.cluster import wait_for
from harness.paths import weir_bin


def weir_cli(*args, bootstrap) -> subprocess.CompletedProcess:
    argv = [str(weir_bin()), *[str(a) for a in args], "--bootstrap", getattr(bootstrap, "bootstrap", bootstrap)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def kafka_txn(broker, *args) -> subprocess.CompletedProcess:
    return run_tool("kafka-transactions", *args, bootstrap=broker).check()


def cells(stdout: str) -> list[list[str]]:
    return [[c.strip() for c in line.rstrip("\t").split("\t")] for line in stdout.splitlines() if line.strip()]


@pytest.mark.timeout(240)
def test_txn_commands_show_what_kafka_transactions_shows(broker, topic_name):
    assert weir_cli("topic", "create", topic_name, "-p", 2, "-r", 1, bootstrap=broker).returncode == 0
    txn_id = f"tx-{topic_name}"
    p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id,
                  "transaction.timeout.ms": 600000})
    try:
        p.init_transactions(60)
        p.begin_transaction()
        p.produce(topic_name, b"committed", partition=0)
        p.commit_transaction(60)
        p.begin_transaction()
        p.produce(topic_name, b"open", partition=1)
        assert p.flush(30) == 0

        def listed():
            res = weir_cli("txn", "list", bootstrap=broker)
            return res if res.returncode == 0 and txn_id in res.stdout else None
        ours = wait_for("the transaction in weir txn list", listed, 60)
        theirs = kafka_txn(broker, "list")
        assert cells(ours.stdout)[0] == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
        assert sorted(cells(ours.stdout)) == sorted(cells(theirs.stdout)), (ours.stdout, theirs.stdout)
        assert [txn_id, "Ongoing"] == [r for r in cells(ours.stdout) if r[0] == txn_id][0][::3]

        ours = weir_cli("txn", "describe", "--transactional-id", txn_id, bootstrap=broker)
        theirs = kafka_txn(broker, "describe", "--transactional-id", txn_id)
        assert ours.returncode == 0, ours.stderr
        (oh, orow), (th, trow) = cells(ours.stdout), cells(theirs.stdout)
        assert oh == th, (ours.stdout, theirs.stdout)
        duration = oh.index("TransactionDurationMs")
        assert orow[:duration] + orow[duration + 1:] == trow[:duration] + trow[duration + 1:], (orow, trow)
        assert orow[oh.index("TopicPartitions")] == f"{topic_name}-1"

        for q in (0, 1):
            ours = weir_cli("txn", "producers", "--topic", topic_name, "--partition", q, bootstrap=broker)
            theirs = kafka_txn(broker, "describe-producers", "--topic", topic_name, "--partition", str(q))
            assert ours.returncode == 0 and ours.stdout == theirs.stdout, (q, ours.stdout, theirs.stdout)
        open_row = cells(ours.stdout)[1]
        start = open_row[-1]
        assert start == "0", ours.stdout  # the open transaction's record is partition 1's first

        ours = weir_cli("txn", "find-hanging", "--topic", topic_name, "--max-transaction-timeout", 0,
                        bootstrap=broker)
        theirs = kafka_txn(broker, "find-hanging", "--topic", topic_name, "--max-transaction-timeout", "0")
        assert ours.returncode == 0 and ours.stdout == theirs.stdout, (ours.stdout, theirs.stdout)
        assert len(cells(ours.stdout)) == 1, "the coordinator still owns the open transaction: not hanging"

        wrong = weir_cli("txn", "abort", "--topic", topic_name, "--partition", 1, "--start-offset", 999,
                         bootstrap=broker)
        assert wrong.returncode == 1 and "no open transaction starts at offset 999" in wrong.stderr, wrong
        aborted = weir_cli("txn", "abort", "--topic", topic_name, "--partition", 1, "--start-offset", start,
                           bootstrap=broker)
        assert aborted.returncode == 0, aborted.stderr
        after = cells(kafka_txn(broker, "describe-producers", "--topic", topic_name, "--partition", "1").stdout)
        assert after[1][-1] == "None", after
        p.abort_transaction(60)
    finally:
        p.flush(10)

    missing = weir_cli("txn", "describe", "--transactional-id", f"{txn_id}-nosuch", bootstrap=broker)
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"error: transactional id '{txn_id}-nosuch' does not exist"
    usage = weir_cli("txn", "abort", "--topic", topic_name, "--partition", 1, bootstrap=broker)
    assert usage.returncode == 2
