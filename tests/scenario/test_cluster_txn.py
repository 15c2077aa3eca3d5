"""Transactions across the brokers of a 3-broker cluster under one Kafka 4.3.1 controller (issues 14
and 15): the transaction coordinator (the leader of the transactional id's `__transaction_state`
partition) writes its markers to partition leaders on other brokers (WriteTxnMarkers), and those
leaders verify a producer's first transactional batch with the coordinator (KIP-890,
AddPartitionsToTxn v4 sent broker to broker); the group coordinator verifies TxnOffsetCommit the
same way.

Parametrized by broker kinds: "kafka" (three Kafka brokers, the oracle; `slow`), "weir" (three weir
brokers; in `make test`) and "mixed" (one Kafka and two weir brokers: Kafka coordinators and
leaders talking to weir ones and back; in `make test` for the confluent-kafka test, `slow` for the
Java producer's).

  - test_transactions_span_brokers: a topic of 3 partitions with RF=3 (leaders on different
    brokers), internal topics with RF=3. For each broker leading a `__transaction_state`
    partition, a transactional id it coordinates: a confluent-kafka transactional producer runs
    9 transactions of one record per partition plus its group's offsets, committing the even ones
    and aborting the odd ones. Afterwards every partition's last stable offset equals its high
    watermark (no marker missing anywhere), a read_committed reader sees exactly the committed
    records in order, a read_uncommitted one all of them, each group's committed offsets are its
    last committed transaction's, and `kafka-transactions describe` shows CompleteCommit at the
    expected coordinator. confluent-kafka runs transaction protocol v1 (the quorum finalizes
    transaction.version 2, so fences and timeouts end at v2, as on Kafka).
  - test_java_producer_v2_spans_brokers: three Kafka TransactionalMessageCopiers (the Java
    producer, on transaction protocol v2: no AddPartitionsToTxn, the partition leaders add the
    partitions at the coordinator with AddPartitionsToTxn v5, EndTxn v5 bumps the epoch), one per
    partition of a 3-partition RF=3 topic, copy 100 records each in transactions of 10: each id
    ends at epoch 10 in CompleteCommit, every output partition's LSO equals its HW, and
    read_committed reads exactly the input.
"""
from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec
from confluent_kafka import IsolationLevel

from harness import procs, run_tool
from harness.paths import kafka_classpath_file
from harness.cluster import wait_for
from harness.kafka_hash import partition_for

pytestmark = [pytest.mark.kafka]

PARTITIONS = 3
TRANSACTIONS = 9
TXN_TOPIC = "__transaction_state"
TXN_PARTITIONS = 3
BROKER_OVERRIDES = {
    "auto.create.topics.enable": False,
    "offsets.topic.replication.factor": 3,
    "offsets.topic.num.partitions": 3,
    "transaction.state.log.replication.factor": 3,
    "transaction.state.log.min.isr": 2,
    "transaction.state.log.num.partitions": 3,
}


@pytest.fixture(params=[
    pytest.param(("kafka", "kafka", "kafka"), id="kafka", marks=pytest.mark.slow),
    pytest.param(("weir", "weir", "weir"), id="weir"),
    pytest.param(("kafka", "weir", "weir"), id="mixed"),
])
def kinds(request):
    return list(request.param)


# The Java producer's test: its mixed variant is slow (make test time, 30 s); the weir variant and
# the confluent-kafka test's mixed variant keep Kafka and weir brokers talking in `make test`.
@pytest.fixture(params=[
    pytest.param(("kafka", "kafka", "kafka"), id="kafka", marks=pytest.mark.slow),
    pytest.param(("weir", "weir", "weir"), id="weir"),
    pytest.param(("kafka", "weir", "weir"), id="mixed", marks=pytest.mark.slow),
])
def java_kinds(request):
    return list(request.param)


def run_transactions(bootstrap: str, topic: str, txn_id: str, group: str, committed: dict, every: dict) -> None:
    """TRANSACTIONS transactions of one record per partition and the group's offsets; even ones
    commit, odd ones abort. Values are recorded in `committed` / `every` by partition."""
    meta_consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "transaction.timeout.ms": 60000})
    try:
        p.init_transactions(120)
        for t in range(TRANSACTIONS):
            p.begin_transaction()
            for q in range(PARTITIONS):
                v = f"{txn_id}-t{t}-p{q}"
                p.produce(topic, value=v.encode(), partition=q)
                every[q].append(v)
            offsets = [TopicPartition(topic, q, 100 + t) for q in range(PARTITIONS)]
            # generation -1 (the consumer never joins): a simple transactional offset commit
            p.send_offsets_to_transaction(offsets, meta_consumer.consumer_group_metadata(), 60)
            if t % 2 == 0:
                p.commit_transaction(60)
                for q in range(PARTITIONS):
                    committed[q].append(f"{txn_id}-t{t}-p{q}")
            else:
                # abort_transaction purges records still queued in the client (linger.ms), which
                # would leave this partition a record short; every record is written, then aborted.
                assert p.flush(60) == 0
                p.abort_transaction(60)
    finally:
        meta_consumer.close()
        p.flush(10)


def read_values(bootstrap: str, topic: str, isolation: str, ends: dict[int, int]) -> dict[int, list[str]]:
    """Every record of every partition up to `ends` (high watermarks), by partition."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{isolation}", "enable.auto.commit": False,
                  "isolation.level": isolation, "enable.partition.eof": True})
    got: dict[int, list[str]] = {p: [] for p in range(PARTITIONS)}
    try:
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        done: set[int] = {p for p in range(PARTITIONS) if ends[p] == 0}
        deadline = time.monotonic() + 60
        while len(done) < PARTITIONS:
            assert time.monotonic() < deadline, f"{isolation}: read {got}, done {done}"
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == -191:  # end of partition
                    if c.position([TopicPartition(topic, m.partition())])[0].offset >= ends[m.partition()]:
                        done.add(m.partition())
                    continue
                raise AssertionError(m.error())
            got[m.partition()].append(m.value().decode())
    finally:
        c.close()
    return got


def wait_stable(admin: AdminClient, topic: str) -> dict[int, int]:
    """Until every marker arrived: each partition's last stable offset equals its high watermark
    (returned, by partition)."""
    tps = [TopicPartition(topic, q) for q in range(PARTITIONS)]

    def offsets(isolation):
        specs = {tp: OffsetSpec.latest() for tp in tps}
        res = admin.list_offsets(specs, isolation_level=isolation, request_timeout=30)
        return {tp.partition: f.result().offset for tp, f in res.items()}

    def stable():
        hw, lso = offsets(IsolationLevel.READ_UNCOMMITTED), offsets(IsolationLevel.READ_COMMITTED)
        return hw if hw == lso else None
    return wait_for("LSO == HW on every partition", stable, 60,
                    describe=lambda: (offsets(IsolationLevel.READ_UNCOMMITTED),
                                      offsets(IsolationLevel.READ_COMMITTED)))


@pytest.mark.timeout(300)
def test_transactions_span_brokers(cluster_factory, kinds, topic_name):
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic_name, PARTITIONS, 3)], request_timeout=60)[topic_name].result(90)
    cluster.wait_topic(topic_name, partitions=PARTITIONS, replicas=3)
    leaders = {p: cluster.leader_of(topic_name, p) for p in range(PARTITIONS)}
    assert len(set(leaders.values())) >= 2, f"the partitions' leaders should be spread: {leaders}"

    committed_values: dict[int, list[str]] = {q: [] for q in range(PARTITIONS)}
    all_values: dict[int, list[str]] = {q: [] for q in range(PARTITIONS)}
    # The first transactional id creates __transaction_state; then one id per coordinator broker.
    first = f"tx-{topic_name}-0"
    run_transactions(cluster.bootstrap, topic_name, first, f"g-{first}", committed_values, all_values)
    cluster.wait_topic(TXN_TOPIC, partitions=TXN_PARTITIONS, replicas=3)
    coordinators = {q: cluster.leader_of(TXN_TOPIC, q) for q in range(TXN_PARTITIONS)}
    ids = {coordinators[partition_for(first, TXN_PARTITIONS)]: first}
    i = 1
    while set(ids) != set(coordinators.values()):
        candidate = f"tx-{topic_name}-{i}"
        ids.setdefault(coordinators[partition_for(candidate, TXN_PARTITIONS)], candidate)
        i += 1
    for coordinator, txn_id in sorted(ids.items()):
        if txn_id != first:
            run_transactions(cluster.bootstrap, topic_name, txn_id, f"g-{txn_id}", committed_values, all_values)

    hw = wait_stable(admin, topic_name)
    tps = [TopicPartition(topic_name, q) for q in range(PARTITIONS)]
    # Per partition and transactional id: TRANSACTIONS records and TRANSACTIONS markers.
    assert hw == {q: 2 * TRANSACTIONS * len(ids) for q in range(PARTITIONS)}, hw

    assert read_values(cluster.bootstrap, topic_name, "read_committed", hw) == committed_values
    assert read_values(cluster.bootstrap, topic_name, "read_uncommitted", hw) == all_values

    last_committed = max(t for t in range(TRANSACTIONS) if t % 2 == 0)
    for coordinator, txn_id in ids.items():
        c = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": f"g-{txn_id}"})
        try:
            got = c.committed(tps, timeout=30)
        finally:
            c.close()
        assert {tp.partition: tp.offset for tp in got} == {q: 100 + last_committed for q in range(PARTITIONS)}
        out = run_tool("kafka-transactions", "describe", "--transactional-id", txn_id, bootstrap=cluster.bootstrap,
                       check=True)
        row = dict(zip(out.lines[0].split(), out.lines[1].split()))
        assert (row["CoordinatorId"], row["TransactionState"]) == (str(coordinator), "CompleteCommit"), out.stdout


@pytest.mark.timeout(300)
def test_java_producer_v2_spans_brokers(cluster_factory, java_kinds, topic_name, tmp_path):
    kinds = java_kinds
    cluster = cluster_factory(kinds, controllers=1, broker_overrides=BROKER_OVERRIDES)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    in_topic, out_topic = f"{topic_name}-in", f"{topic_name}-out"
    for name in (in_topic, out_topic):
        admin.create_topics([NewTopic(name, PARTITIONS, 3)], request_timeout=60)[name].result(90)
        cluster.wait_topic(name, partitions=PARTITIONS, replicas=3)
    p = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True})
    for i in range(100 * PARTITIONS):
        p.produce(in_topic, value=f"v{i}".encode(), partition=i % PARTITIONS)
    assert p.flush(60) == 0
    # __transaction_state exists once a transactional producer looked its coordinator up.
    Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": f"first-{topic_name}"}).init_transactions(120)
    cluster.wait_topic(TXN_TOPIC, partitions=TXN_PARTITIONS, replicas=3)
    coordinators = {q: cluster.leader_of(TXN_TOPIC, q) for q in range(TXN_PARTITIONS)}

    def txn_id_for(q: int) -> str:
        """An id for copier q whose coordinator does not lead output partition q."""
        leader = cluster.leader_of(out_topic, q)
        i = 0
        while coordinators[partition_for(f"copier-{topic_name}-{q}-{i}", TXN_PARTITIONS)] == leader:
            i += 1
        return f"copier-{topic_name}-{q}-{i}"
    ids = [txn_id_for(q) for q in range(PARTITIONS)]
    # One copier per input partition (each writes the same partition of the output topic), each
    # with a transactional id coordinated by another broker than that partition's leader.
    copiers = []
    for q in range(PARTITIONS):
        log = open(tmp_path / f"copier-{q}.log", "w")
        copiers.append((log, procs.spawn(
            ["java", "-Xmx256m", "-cp", kafka_classpath_file().read_text().strip(),
             "org.apache.kafka.tools.TransactionalMessageCopier", "--broker-list", cluster.bootstrap,
             "--input-topic", in_topic, "--input-partition", str(q), "--output-topic", out_topic,
             "--consumer-group", f"g-{topic_name}-{q}", "--transactional-id", ids[q],
             "--transaction-size", "10", "--transaction-timeout", "30000", "--use-group-metadata",
             "--max-messages", "100"],
            stdout=log, stderr=log)))
    try:
        for q, (log, proc) in enumerate(copiers):
            rc = proc.wait(timeout=180)
            assert rc == 0, (tmp_path / f"copier-{q}.log").read_text()[-3000:]
    finally:
        for log, proc in copiers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            procs.forget(proc)
            log.close()
    for q in range(PARTITIONS):
        out = run_tool("kafka-transactions", "describe", "--transactional-id", ids[q], bootstrap=cluster.bootstrap,
                       check=True)
        row = dict(zip(out.lines[0].split(), out.lines[1].split()))
        # transaction protocol v2: one epoch bump per committed transaction
        assert (row["TransactionState"], row["ProducerEpoch"]) == ("CompleteCommit", "10"), out.stdout
        assert row["CoordinatorId"] != str(cluster.leader_of(out_topic, q)), out.stdout

    tps = [TopicPartition(out_topic, q) for q in range(PARTITIONS)]

    def offsets(isolation):
        res = admin.list_offsets({tp: OffsetSpec.latest() for tp in tps}, isolation_level=isolation,
                                 request_timeout=30)
        return {tp.partition: f.result().offset for tp, f in res.items()}

    def stable():
        hw, lso = offsets(IsolationLevel.READ_UNCOMMITTED), offsets(IsolationLevel.READ_COMMITTED)
        return hw if hw == lso else None
    hw = wait_for("LSO == HW on every output partition", stable, 60)
    got = read_values(cluster.bootstrap, out_topic, "read_committed", hw)
    assert got == {q: [f"v{i}" for i in range(q, 100 * PARTITIONS, PARTITIONS)] for q in range(PARTITIONS)}
