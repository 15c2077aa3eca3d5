"""The consumer group protocol (KIP-848, issue 16) with Kafka's own Java consumer
(`kafka-console-consumer --consumer-property group.protocol=consumer`, Kafka 4.3.1's
AsyncKafkaConsumer), against weir and against Apache Kafka 4.3.1, with the same assertions:
  - a first console consumer owns all four partitions and prints every record;
  - a second one joins: ConsumerGroupDescribe shows two members with two partitions each, every
    member at the group's epoch with nothing left to reconcile;
  - records produced after that reach one of the two, each exactly once: the Java consumer
    commits what it consumed when it gives partitions up (auto-commit on revocation), so the
    partitions' new owner starts where the old one stopped;
  - `kafka-consumer-groups --describe --members --verbose` shows both members with their
    current and target assignments;
  - after both stop, `kafka-consumer-groups --describe` shows every partition committed at its
    end with no lag.
The members are watched through ConsumerGroupDescribe on the wire (no JVM tool per poll).
"""
from __future__ import annotations

import time

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from harness import parse_table, run_tool
from harness.cluster import wait_for
from harness.java_console import BATCH, PARTITIONS, ConsoleMember, describe, owned, produce


@pytest.mark.timeout(240)
def test_java_consumers_share_partitions_without_loss_or_duplicates(broker, topic_name, tmp_path):
    group = f"g-{topic_name}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic_name, num_partitions=PARTITIONS, replication_factor=1)])[topic_name].result(30)
    produce(broker, topic_name, 0, BATCH)

    started = time.monotonic()
    a = ConsoleMember(broker, group, topic_name, "java-a", tmp_path)
    b = None
    try:
        wait_for("the first member to print the first batch", lambda: len(a.records()) >= BATCH, 90,
                 describe=lambda: f"{len(a.records())} lines; stderr: {a.err.read_text()[-2000:]}")
        wait_for("the first member to own every partition",
                 lambda: owned(describe(broker, group)) == {"java-a": list(range(PARTITIONS))}, 60,
                 describe=lambda: repr(describe(broker, group)))

        print(f"first member reconciled after {time.monotonic() - started:.1f}s")
        b = ConsoleMember(broker, group, topic_name, "java-b", tmp_path)
        wait_for("the partitions to split 2/2",
                 lambda: sorted(len(p) for p in owned(describe(broker, group)).values()) == [2, 2], 90,
                 describe=lambda: f"{describe(broker, group)!r}; b stderr: {b.err.read_text()[-2000:]}")
        print(f"split after {time.monotonic() - started:.1f}s")
        split = owned(describe(broker, group))
        assert sorted(split["java-a"] + split["java-b"]) == list(range(PARTITIONS)), split
        # The Java admin tool's view of the same members (ConsumerGroupDescribe).
        out = run_tool("kafka-consumer-groups", "--describe", "--group", group, "--members", "--verbose",
                       bootstrap=broker, timeout=60)
        assert out.ok, out.stderr
        members = {r["CLIENT-ID"]: r for r in parse_table(out.stdout) if r.get("GROUP") == group}
        assert sorted(members) == ["java-a", "java-b"], out.stdout
        for name, r in members.items():
            assert r["#PARTITIONS"] == "2" and r["CURRENT-EPOCH"] == r["TARGET-EPOCH"], out.stdout
            want = f"{topic_name}:" + ",".join(map(str, split[name]))
            assert r["CURRENT-ASSIGNMENT"] == want == r["TARGET-ASSIGNMENT"], out.stdout

        produce(broker, topic_name, BATCH, BATCH)
        everything = {f"v{i}" for i in range(2 * BATCH)}
        wait_for("every record to be printed by one of the members",
                 lambda: {r[2] for r in a.records() + b.records()} >= everything, 60,
                 describe=lambda: f"missing {sorted(everything - {r[2] for r in a.records() + b.records()})}")
        print(f"all read after {time.monotonic() - started:.1f}s")
        a.stop()
        b.stop()
        print(f"stopped after {time.monotonic() - started:.1f}s")
        read_a, read_b = a.records(), b.records()
        values = sorted(r[2] for r in read_a + read_b)
        assert values == sorted(everything), "a record was read twice or not at all"
        # The second batch went to the owner of each partition after the split.
        for member, rows in (("java-a", read_a), ("java-b", read_b)):
            late = {p for p, _, v in rows if int(v[1:]) >= BATCH}
            assert late and late <= set(split[member]), (member, late, split)
    finally:
        a.kill()
        if b is not None:
            b.kill()

    out = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=broker, timeout=60)
    assert out.ok, out.stderr
    rows = {int(r["PARTITION"]): r for r in parse_table(out.stdout) if r.get("TOPIC") == topic_name}
    assert sorted(rows) == list(range(PARTITIONS)), out.stdout
    for r in rows.values():
        assert (r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"]) == (str(2 * BATCH // PARTITIONS),) * 2 + ("0",), r
