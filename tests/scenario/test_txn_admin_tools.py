"""Kafka's transaction admin tools against weir and Apache Kafka 4.3.1 (issue 14): the same actions
on both brokers, then the output of Kafka's own CLI compared once what legitimately differs
(producer ids, timestamps, offsets, file positions, CRCs) is normalised.

  1. kafka-dump-log --transaction-log-decoder of the `__transaction_state` partition of a
     transactional id (Kafka's partitionFor: abs(String.hashCode) % 50) after one committed and
     one aborted transaction of confluent-kafka's transactional producer: the same records (key,
     producer id and epoch, the state sequence Empty, Ongoing, PrepareCommit, CompleteCommit,
     Ongoing, PrepareAbort, CompleteAbort, partitions, timeout, timestamps' relations, sizes).
  2. kafka-transactions list and describe-producers with a transaction open.
  3. kafka-transactions find-hanging (--broker-id, --topic) finds a transaction that wrote to a
     partition never added with AddPartitionsToTxn (a raw transactional Produce, with
     transaction.partition.verification.enable=false on both brokers); kafka-transactions abort
     --start-offset ends it; then find-hanging finds nothing and read_committed reaches the end.
  4. kafka-transactions forceTerminateTransaction (Kafka 4.3.1's name for it; `force-terminate` is
     refused by the tool itself) of an open transaction and of an unknown transactional id.

Each scenario runs on weir and on Kafka and asserts what Kafka 4.3.1 answers, spelled out.
"""
from __future__ import annotations

import json
import re
import secrets
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness import parse_table, run_tool
from harness.kreq import Kreq
from harness.kafka_hash import partition_for
from test_txn_partitions import batch

TOOL_ENV = {"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"}
TXN_STATE_PARTITIONS = 50  # transaction.state.log.num.partitions, Kafka's default and weir's
NO_VERIFICATION = {"transaction.partition.verification.enable": "false"}
RETRIABLE = {3, 5, 6, 14, 15, 16}  # a new topic's leader not known yet, coordinator loading / moving
# TransactionState ids in the TransactionLogValue (Kafka's TransactionState.id).
EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT = 0, 1, 2, 3, 4, 5


# ------------------------------------------------------------------------------ helpers
def names() -> tuple[str, str]:
    """A topic and a transactional id of fixed lengths (record sizes in the dump depend on them,
    and must not depend on the test's parameter id)."""
    tag = secrets.token_hex(4)
    return f"txn-admin-{tag}", f"app-{tag}"


def txn_state_partition(transactional_id: str) -> int:
    """Kafka's TransactionStateManager.partitionFor."""
    return partition_for(transactional_id, TXN_STATE_PARTITIONS)


def transactions_tool(broker, *args, timeout: float = 90):
    return run_tool("kafka-transactions", *args, bootstrap=broker, env=TOOL_ENV, timeout=timeout)


def make_topic(broker, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        f.result(timeout=30)


def txn_producer(broker, transactional_id: str) -> Producer:
    return Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": transactional_id,
                     "transaction.timeout.ms": 60000, "linger.ms": 0})


def describe_txn(broker, transactional_id: str) -> dict:
    """DescribeTransactions v0 (raw): the coordinator's view, without a JVM."""
    deadline = time.monotonic() + 30
    with Kreq(broker) as k:
        while True:
            resp = k.send("DescribeTransactions", 0, {"TransactionalIDs": [transactional_id]})
            [state] = resp["TransactionStates"]
            if state["ErrorCode"] not in RETRIABLE or time.monotonic() > deadline:
                return state
            time.sleep(0.2)


def wait_txn_state(broker, transactional_id: str, want: str, timeout: float = 30.0) -> dict:
    """Until the coordinator has written `want` (the Complete* record follows the markers)."""
    deadline = time.monotonic() + timeout
    while True:
        state = describe_txn(broker, transactional_id)
        if state["State"] == want or time.monotonic() > deadline:
            assert state["State"] == want, state
            return state
        time.sleep(0.2)


def list_offsets(broker, topic: str) -> tuple[int, int]:
    """(high watermark, last stable offset) of partition 0: ListOffsets latest at both isolation levels."""
    out = []
    with Kreq(broker) as k:
        for isolation in (0, 1):
            resp = k.send("ListOffsets", 7, {"ReplicaID": -1, "IsolationLevel": isolation, "Topics": [
                {"Topic": topic, "Partitions": [{"Partition": 0, "CurrentLeaderEpoch": -1, "Timestamp": -1}]}]})
            p = resp["Topics"][0]["Partitions"][0]
            assert p["ErrorCode"] == 0, p
            out.append(p["Offset"])
    return out[0], out[1]


def table(result, first: str) -> tuple[list[str], list[dict[str, str]]]:
    """A kafka-transactions table: its header cells and its rows."""
    result.check()
    header_line = next(ln for ln in result.stdout.splitlines() if ln.startswith(first))
    header = [c.strip() for c in header_line.split("\t") if c.strip()]
    return header, parse_table(result.stdout, header_first=first)


# ------------------------------------------------------------------------------ 1. dump-log
_FIELD = re.compile(r"(\w+): (\S+)")


def parse_transaction_log_dump(text: str, transactional_id: str) -> list[dict]:
    """The records of transactional_id in a kafka-dump-log --transaction-log-decoder output: per
    record its batch's fields, its own fields, and key and payload as JSON."""
    out = []
    batch = None
    for line in text.splitlines():
        if line.startswith("baseOffset:"):
            batch = dict(_FIELD.findall(line))
        elif line.startswith("| offset:"):
            head, _, rest = line[2:].partition(" key: ")
            key, _, payload = rest.partition(" payload: ")
            key = json.loads(key)
            if key["data"]["transactionalId"] != transactional_id:
                continue  # another test's transactional id in the same partition (shared Kafka)
            try:
                value = json.loads(payload)
            except ValueError:
                value = {"raw": payload}  # a tombstone prints <DELETE>
            out.append({"batch": batch, "record": dict(_FIELD.findall(head)), "key": key, "payload": value})
    return out


def normalise_transaction_log(records: list[dict]) -> list[dict]:
    """What must be equal on every broker: offsets, positions, CRCs and timestamps replaced,
    producer ids named by order of appearance (P1, P2, ...; -1 stays)."""
    pids: dict[int, str] = {}

    def pid(v: int):
        return v if v == -1 else pids.setdefault(v, f"P{len(pids) + 1}")

    out = []
    for r in records:
        batch = {k: v for k, v in r["batch"].items()
                 if k not in ("baseOffset", "lastOffset", "position", "CreateTime", "crc")}
        record = {k: v for k, v in r["record"].items() if k not in ("offset", "CreateTime")}
        data = dict(r["payload"]["data"])
        for k in ("producerId", "previousProducerId", "nextProducerId"):
            if k in data:
                data[k] = pid(data[k])
        for k in ("transactionLastUpdateTimestampMs", "transactionStartTimestampMs"):
            if k in data and data[k] != -1:
                data[k] = "<ts>"
        out.append({"batch": batch, "record": record, "key": r["key"],
                    "payload": {**r["payload"], "data": data}})
    return out


def coordinator_batch(size: int) -> dict:
    """The batch fields of a coordinator's record (non-transactional, one record, no producer)."""
    return {"count": "1", "baseSequence": "-1", "lastSequence": "-1", "producerId": "-1", "producerEpoch": "-1",
            "partitionLeaderEpoch": "0", "isTransactional": "false", "isControl": "false",
            "deleteHorizonMs": "OptionalLong.empty", "size": str(size), "magic": "2", "compresscodec": "none",
            "isvalid": "true"}


def transaction_log_entry(transactional_id: str, topic: str, status: int, partitions: bool | None, *,
                          batch_size: int, value_size: int, started: bool) -> dict:
    data = {"producerId": "P1", "previousProducerId": "P1", "producerEpoch": 0, "transactionTimeoutMs": 60000,
            "transactionStatus": status,
            "transactionPartitions": None if partitions is None else
            ([{"topic": topic, "partitionIds": [0]}] if partitions else []),
            "transactionLastUpdateTimestampMs": "<ts>",
            "transactionStartTimestampMs": "<ts>" if started else -1}
    return {"batch": coordinator_batch(batch_size),
            "record": {"keySize": str(len(transactional_id) + 4), "valueSize": str(value_size), "sequence": "-1",
                       "headerKeys": "[]"},
            "key": {"type": "0", "data": {"transactionalId": transactional_id}},
            "payload": {"version": "1", "data": data}}


@pytest.mark.differential
def test_dump_log_decodes_the_same_transaction_log(broker):
    topic, txn_id = names()
    make_topic(broker, topic)
    t0 = int(time.time() * 1000)
    p = txn_producer(broker, txn_id)
    p.init_transactions(60)
    p.begin_transaction()
    p.produce(topic, value=b"committed")
    p.commit_transaction(30)
    p.begin_transaction()
    p.produce(topic, value=b"aborted")
    p.flush(30)
    p.abort_transaction(30)
    final = wait_txn_state(broker, txn_id, "CompleteAbort")
    t1 = int(time.time() * 1000)

    part_dir = Path(broker.data_dir) / f"__transaction_state-{txn_state_partition(txn_id)}"
    segments = sorted(part_dir.glob("*.log"))
    assert segments, f"no segment in {part_dir}: {sorted(p.name for p in part_dir.parent.iterdir())}"
    res = run_tool("kafka-dump-log", "--transaction-log-decoder", "--files", ",".join(map(str, segments)),
                   env=TOOL_ENV, timeout=90).check()
    assert f"Dumping {segments[0]}" in res.stdout.splitlines()
    assert "Log starting offset: 0" in res.stdout.splitlines()
    raw = parse_transaction_log_dump(res.stdout, txn_id)

    statuses = [r["payload"].get("data", {}).get("transactionStatus") for r in raw]
    assert statuses == [EMPTY, ONGOING, PREPARE_COMMIT, COMPLETE_COMMIT, ONGOING, PREPARE_ABORT, COMPLETE_ABORT], raw
    assert {r["payload"]["data"]["producerId"] for r in raw} == {final["ProducerID"]}, raw
    # Offsets and positions grow; the batch's and the record's offsets and times agree; the times
    # are the coordinator's clock during the test.
    offsets = [int(r["record"]["offset"]) for r in raw]
    assert offsets == sorted(set(offsets)), offsets
    assert [int(r["batch"]["position"]) for r in raw] == sorted(int(r["batch"]["position"]) for r in raw)
    for r in raw:
        assert r["batch"]["baseOffset"] == r["batch"]["lastOffset"] == r["record"]["offset"], r
        assert r["batch"]["CreateTime"] == r["record"]["CreateTime"], r
        assert t0 <= int(r["record"]["CreateTime"]) <= t1, (t0, r, t1)
        assert t0 <= r["payload"]["data"]["transactionLastUpdateTimestampMs"] <= t1, (t0, r, t1)
    # A transaction's start time is its Ongoing record's update time, kept until it completes.
    data = [r["payload"]["data"] for r in raw]
    for ongoing, later in ((1, (2, 3)), (4, (5, 6))):
        start = data[ongoing]["transactionStartTimestampMs"]
        assert start == data[ongoing]["transactionLastUpdateTimestampMs"], data[ongoing]
        assert [data[i]["transactionStartTimestampMs"] for i in later] == [start, start], data

    got = normalise_transaction_log(raw)
    entry = lambda *a, **kw: transaction_log_entry(txn_id, topic, *a, **kw)  # noqa: E731
    # What Kafka 4.3.1 writes (TransactionLogValue v1, transaction.version 2 finalized).
    want = [
        entry(EMPTY, None, batch_size=130, value_size=45, started=False),
        entry(ONGOING, True, batch_size=156, value_size=70, started=True),
        entry(PREPARE_COMMIT, True, batch_size=156, value_size=70, started=True),
        entry(COMPLETE_COMMIT, False, batch_size=130, value_size=45, started=True),
        entry(ONGOING, True, batch_size=156, value_size=70, started=True),
        entry(PREPARE_ABORT, True, batch_size=156, value_size=70, started=True),
        entry(COMPLETE_ABORT, False, batch_size=130, value_size=45, started=True),
    ]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"record {i} (offset {raw[i]['record']['offset']}) differs:\n got {g}\nwant {w}"
    assert len(got) == len(want)


# ------------------------------------------------------------------------------ 2. list, describe-producers
LIST_HEADER = ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
PRODUCERS_HEADER = ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                    "CurrentTransactionStartOffset"]


@pytest.mark.differential
def test_list_and_describe_producers_show_the_open_transaction(broker):
    topic, txn_id = names()
    make_topic(broker, topic)
    p = txn_producer(broker, txn_id)
    p.init_transactions(60)
    p.begin_transaction()
    p.produce(topic, value=b"committed")  # offset 0, its commit marker at 1
    p.commit_transaction(30)
    wait_txn_state(broker, txn_id, "CompleteCommit")
    p.begin_transaction()
    t0 = int(time.time() * 1000)
    p.produce(topic, value=b"open-1")  # offsets 2 and 3, left open
    p.produce(topic, value=b"open-2")
    p.flush(30)
    t1 = int(time.time() * 1000)
    assert list_offsets(broker, topic) == (4, 2)

    header, rows = table(transactions_tool(broker, "list"), "TransactionalId")
    assert header == LIST_HEADER
    mine = [r for r in rows if r["TransactionalId"] == txn_id]
    assert len(mine) == 1, rows
    (listed,) = mine
    pid = listed.pop("ProducerId")
    assert listed == {"TransactionalId": txn_id, "Coordinator": str(broker.node_id), "TransactionState": "Ongoing"}

    header, rows = table(transactions_tool(broker, "describe-producers", "--topic", topic, "--partition", "0"),
                         "ProducerId")
    assert header == PRODUCERS_HEADER
    assert len(rows) == 1, rows
    (row,) = rows
    last_ts = int(row.pop("LastTimestamp"))
    assert t0 <= last_ts <= t1, (t0, last_ts, t1)
    # The coordinator epoch the commit marker carried; two records at sequences 1 and 2 open at 2.
    assert row == {"ProducerId": pid, "ProducerEpoch": "0", "LatestCoordinatorEpoch": "0", "LastSequence": "2",
                   "CurrentTransactionStartOffset": "2"}
    p.abort_transaction(30)


# ------------------------------------------------------------------------------ 3. find-hanging, abort
HANGING_HEADER = ["Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                  "LastTimestamp", "Duration(min)"]


@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential)),
])
def unverified_broker(request):
    """weir or a Kafka of the test's own, both with transaction.partition.verification.enable=false
    (with it, the broker asks the coordinator and refuses a partition never added)."""
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")(settings=NO_VERIFICATION)
    return request.getfixturevalue("kafka_factory")(overrides=NO_VERIFICATION)


def _retrying(call, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        result = call()
        if result[0] not in RETRIABLE:
            return result
        assert time.monotonic() < deadline, f"{what}: still error {result[0]} after {timeout}s"
        time.sleep(0.3)


def start_hanging_transaction(broker, topic: str, txn_id: str, timestamp: int) -> int:
    """A producer id for txn_id (InitProducerId), then a transactional batch to topic-0 that the
    coordinator never heard of (no AddPartitionsToTxn), then a plain record after it. Returns the
    producer id."""
    with Kreq(broker) as k:
        resp = k.send("CreateTopics", 7, {"Topics": [{"Topic": topic, "NumPartitions": 1, "ReplicationFactor": 1}],
                                          "TimeoutMillis": 15000})
        assert resp["Topics"][0]["ErrorCode"] == 0, resp

        def find():  # FindCoordinator creates __transaction_state
            [c] = k.send("FindCoordinator", 4, {"CoordinatorType": 1, "CoordinatorKeys": [txn_id]})["Coordinators"]
            return c["ErrorCode"], c
        assert _retrying(find, "FindCoordinator")[0] == 0

        def init():
            r = k.send("InitProducerId", 4, {"TransactionalID": txn_id, "TransactionTimeoutMillis": 60000,
                                             "ProducerID": -1, "ProducerEpoch": -1})
            return r["ErrorCode"], r
        code, ids = _retrying(init, "InitProducerId")
        assert code == 0 and ids["ProducerEpoch"] == 0, ids
        pid = ids["ProducerID"]

        def produce(records: bytes, transactional_id: str | None):
            partitions = [{"Partition": 0, "Records": records}]
            r = k.send("Produce", 9, {"TransactionID": transactional_id, "Acks": -1, "TimeoutMillis": 15000,
                                      "Topics": [{"Topic": topic, "Partitions": partitions}]})
            part = r["Topics"][0]["Partitions"][0]
            return part["ErrorCode"], part["BaseOffset"]
        assert _retrying(lambda: produce(batch([b"hanging"], pid, 0, 0, True, timestamp=timestamp), txn_id),
                         "Produce") == (0, 0)
        assert _retrying(lambda: produce(batch([b"plain"], timestamp=timestamp), None), "Produce") == (0, 1)
    return pid


def read_committed(broker, topic: str) -> tuple[list[bytes], int, int]:
    """What a read_committed consumer of topic-0 from the beginning gets: the values, its
    position once it has nothing more, and the end offset it sees (the LSO)."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"{topic}-reader",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    try:
        tp = TopicPartition(topic, 0, 0)
        c.assign([tp])
        values = []
        deadline = time.monotonic() + 20
        _, end = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                values.append(m.value())
            [pos] = c.position([TopicPartition(topic, 0)])
            if pos.offset >= end and m is None:
                break
        [pos] = c.position([TopicPartition(topic, 0)])
        return values, pos.offset, end
    finally:
        c.close()


@pytest.mark.differential
@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_find_hanging_lists_an_unadded_partition_until_abort_ends_it(unverified_broker):
    b = unverified_broker
    topic, txn_id = names()
    ts = int(time.time() * 1000) - 5000
    pid = start_hanging_transaction(b, topic, txn_id, ts)
    assert list_offsets(b, topic) == (2, 0), "the open transaction holds the LSO at its first offset"
    # The coordinator knows the producer id but not the partition: Empty, nothing added.
    state = describe_txn(b, txn_id)
    assert (state["ErrorCode"], state["State"], state["ProducerID"], state["Topics"]) == (0, "Empty", pid, []), state

    hanging = {"Topic": topic, "Partition": "0", "ProducerId": str(pid), "ProducerEpoch": "0",
               "CoordinatorEpoch": "-1", "StartOffset": "0", "LastTimestamp": str(ts), "Duration(min)": "0"}
    for scope in (["--broker-id", b.node_id], ["--topic", topic]):
        header, rows = table(transactions_tool(b, "find-hanging", *scope, "--max-transaction-timeout", "0"), "Topic")
        assert header == HANGING_HEADER
        assert rows == [hanging], (scope, rows)
    # With the default --max-transaction-timeout (15 minutes) a 5-second-old transaction is not hanging.
    header, rows = table(transactions_tool(b, "find-hanging", "--broker-id", b.node_id), "Topic")
    assert (header, rows) == (HANGING_HEADER, [])

    res = transactions_tool(b, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0").check()
    assert (res.stdout, res.stderr) == ("", ""), res.describe()
    for scope in (["--broker-id", b.node_id], ["--topic", topic]):
        header, rows = table(transactions_tool(b, "find-hanging", *scope, "--max-transaction-timeout", "0"), "Topic")
        assert (header, rows) == (HANGING_HEADER, []), scope
    # Nothing open any more at that offset.
    res = transactions_tool(b, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0")
    assert (res.rc, res.stdout, res.stderr) == (
        1, "", f"Could not find any open transactions starting at offset 0 on partition {topic}-0\n"), res.describe()

    # The abort marker at offset 2: the LSO is the high watermark, a read_committed consumer gets
    # only the plain record and reaches the end.
    assert list_offsets(b, topic) == (3, 3)
    assert read_committed(b, topic) == ([b"plain"], 3, 3)


# ------------------------------------------------------------------------------ 4. force terminate
DESCRIBE_HEADER = ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                   "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions"]


def describe_row(broker, transactional_id: str, producer_id, epoch: int) -> dict[str, str]:
    """kafka-transactions describe of a transactional id left Empty by forceTerminateTransaction."""
    return {"CoordinatorId": str(broker.node_id), "TransactionalId": transactional_id, "ProducerId": str(producer_id),
            "ProducerEpoch": str(epoch), "TransactionState": "Empty", "TransactionTimeoutMs": "30000",
            "CurrentTransactionStartTimeMs": "None", "TransactionDurationMs": "None", "TopicPartitions": ""}


@pytest.mark.differential
def test_force_terminate_transaction(broker):
    topic, txn_id = names()
    make_topic(broker, topic)
    # Kafka 4.3.1's tool has no `force-terminate`: argparse refuses it before any connection.
    res = transactions_tool(broker, "force-terminate", "--transactional-id", txn_id)
    assert (res.rc, res.stdout) == (1, ""), res.describe()
    assert " ".join(res.stderr.split()) == (
        "usage: kafka-transactions.sh [-h] [-v] [--command-config FILE] --bootstrap-server host:port COMMAND ... "
        "kafka-transactions.sh: error: invalid choice: 'force-terminate' (choose from 'list', 'describe', "
        "'describe-producers', 'abort', 'find-hanging', 'forceTerminateTransaction')"), res.describe()

    # An open transaction: forceTerminateTransaction (InitProducerId from the admin client, as
    # fenceProducers) aborts it and bumps the epoch twice (fence, then the new producer's epoch).
    p = txn_producer(broker, txn_id)
    p.init_transactions(60)
    p.begin_transaction()
    p.produce(topic, value=b"open")
    p.flush(30)
    assert list_offsets(broker, topic) == (1, 0)
    pid = describe_txn(broker, txn_id)["ProducerID"]
    res = transactions_tool(broker, "forceTerminateTransaction", "--transactionalId", txn_id)
    assert (res.rc, res.stdout, res.stderr) == (0, "", ""), res.describe()
    assert list_offsets(broker, topic) == (2, 2), "the open transaction is aborted (marker at offset 1)"

    # An unknown transactional id: the InitProducerId creates it.
    unknown = f"{txn_id}-unknown"
    res = transactions_tool(broker, "forceTerminateTransaction", "--transactionalId", unknown)
    assert (res.rc, res.stdout, res.stderr) == (0, "", ""), res.describe()

    # kafka-transactions describe of both: Empty, no transaction start time, the 30 s transaction
    # timeout the admin client's InitProducerId asks for.
    described = {}
    for tid in (txn_id, unknown):
        header, rows = table(transactions_tool(broker, "describe", "--transactional-id", tid), "CoordinatorId")
        assert header == DESCRIBE_HEADER
        assert len(rows) == 1, rows
        described[tid] = rows[0]
    unknown_pid = described[unknown].get("ProducerId", "")
    assert unknown_pid.isdigit() and int(unknown_pid) != pid, described
    assert described == {
        txn_id: describe_row(broker, txn_id, pid, 2),
        unknown: describe_row(broker, unknown, unknown_pid, 0),
    }
