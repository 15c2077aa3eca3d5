"""`weir group seek|delete-offsets|delete` (issue 17), against weir and against Apache Kafka 4.3.1.

- seek plans what `kafka-consumer-groups --reset-offsets` plans: for --to earliest / latest /
  current / an offset (clamped into the log) / a time, and --shift-by, the dry run prints the same
  table rows as Kafka's tool (weir sorts them by topic and partition; Kafka prints them in its hash
  map's order) and changes nothing; --execute commits them, as kafka-consumer-groups --describe
  then shows; --export prints topic,partition,offset lines; a group with members is refused.
- delete-offsets removes one partition's committed offset and prints Kafka's table; delete removes
  an empty group; a group that does not exist is an error (exit 1) naming GROUP_ID_NOT_FOUND.
"""
from __future__ import annotations

import csv
import subprocess
import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from harness import run_tool
from harness.cluster import wait_for
from harness.paths import weir_bin


def weir_cli(*args, bootstrap) -> subprocess.CompletedProcess:
    argv = [str(weir_bin()), *[str(a) for a in args], "--bootstrap", getattr(bootstrap, "bootstrap", bootstrap)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def table(stdout: str) -> tuple[list[str], list[list[str]]]:
    """The header and the rows (sorted) of a kafka-consumer-groups table."""
    lines = [line.split() for line in stdout.splitlines() if line.strip()]
    return lines[0], sorted(lines[1:])


def commit(broker, group: str, offsets: list[TopicPartition]) -> None:
    """Commits as a consumer outside the group would, calling again while the coordinator is still
    being set up (Kafka answers NOT_COORDINATOR while __consumer_offsets is created, a broker that
    is still loading it COORDINATOR_LOAD_IN_PROGRESS)."""
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        def done():
            try:
                c.commit(offsets=offsets, asynchronous=False)
                return True
            except KafkaException as e:
                if e.args[0].retriable() or e.args[0].code() in (KafkaError.NOT_COORDINATOR,
                                                                 KafkaError.COORDINATOR_LOAD_IN_PROGRESS):
                    return None
                raise
        wait_for("the commit", done, 60)
    finally:
        c.close()


def committed(broker, group: str, topic: str, partitions: int) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    try:
        got = c.committed([TopicPartition(topic, q) for q in range(partitions)], timeout=30)
    finally:
        c.close()
    return {tp.partition: tp.offset for tp in got if tp.offset >= 0}


@pytest.mark.timeout(300)
@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_group_seek_plans_and_commits_what_kafka_consumer_groups_does(broker, topic_name):
    assert weir_cli("topic", "create", topic_name, "-p", 3, "-r", 1, bootstrap=broker).returncode == 0
    # Partition q holds 4 + q records; the third record of each partition is an hour younger.
    now_ms = int(time.time() * 1000)
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for q in range(3):
        for i in range(4 + q):
            ts = now_ms - 2 * 3_600_000 if i < 2 else now_ms - 600_000
            p.produce(topic_name, value=f"v{q}-{i}".encode(), partition=q, timestamp=ts)
    assert p.flush(30) == 0
    group = f"g-{topic_name}"
    commit(broker, group, [TopicPartition(topic_name, 0, 3), TopicPartition(topic_name, 1, 1)])
    before = committed(broker, group, topic_name, 3)
    assert before == {0: 3, 1: 1}

    def kafka_plan(*spec):
        return run_tool("kafka-consumer-groups", "--group", group, "--reset-offsets", *spec, "--dry-run",
                        bootstrap=broker).check()

    cases = [
        (["--to", "earliest", "--topic", topic_name], ["--to-earliest", "--topic", topic_name],
         {0: 0, 1: 0, 2: 0}),
        (["--to", "latest", "--all-topics"], ["--to-latest", "--all-topics"], {0: 4, 1: 5}),
        (["--to", "current", "--topic", topic_name], ["--to-current", "--topic", topic_name],
         {0: 3, 1: 1, 2: 6}),
        (["--to", "100", "--topic", f"{topic_name}:1,2"], ["--to-offset", "100", "--topic", f"{topic_name}:1,2"],
         {1: 5, 2: 6}),
        (["--shift-by", "-2", "--topic", f"{topic_name}:0,1"], ["--shift-by", "-2", "--topic", f"{topic_name}:0,1"],
         {0: 1, 1: 0}),
        (["--to", "@-1h", "--topic", topic_name], ["--by-duration", "PT1H", "--topic", topic_name],
         {0: 2, 1: 2, 2: 2}),
    ]
    for ours_spec, kafka_spec, expected in cases:
        ours = weir_cli("group", "seek", group, *ours_spec, bootstrap=broker)
        assert ours.returncode == 0, (ours_spec, ours.stderr)
        header, rows = table(ours.stdout)
        assert header == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], ours.stdout
        assert rows == [[group, topic_name, str(q), str(o)] for q, o in sorted(expected.items())], (ours_spec, rows)
        theirs = kafka_plan(*kafka_spec)
        kafka_lines = [line for line in theirs.stdout.splitlines() if not line.startswith("Warn")]
        assert table("\n".join(kafka_lines)) == (header, rows), (ours_spec, theirs.stdout)
    assert committed(broker, group, topic_name, 3) == before, "a dry run changes nothing"

    export = weir_cli("group", "seek", group, "--to", "earliest", "--all-topics", "--export", bootstrap=broker)
    assert export.stdout == f"{topic_name},0,0\n{topic_name},1,0\n\n", export.stdout

    done = weir_cli("group", "seek", group, "--to", "latest", "--topic", topic_name, "--execute", bootstrap=broker)
    assert done.returncode == 0, done.stderr
    assert committed(broker, group, topic_name, 3) == {0: 4, 1: 5, 2: 6}
    described = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=broker).check()
    assert sorted(line.split()[2:6] for line in described.stdout.splitlines()[2:] if line.strip()) == [
        ["0", "4", "4", "0"], ["1", "5", "5", "0"], ["2", "6", "6", "0"]], described.stdout

    missing_scope = weir_cli("group", "seek", group, "--to", "latest", bootstrap=broker)
    assert missing_scope.returncode == 2, missing_scope
    no_offset = weir_cli("group", "seek", f"{group}-new", "--shift-by", "1", "--topic", topic_name, bootstrap=broker)
    assert no_offset.returncode == 1
    assert "has no committed offset" in no_offset.stderr, no_offset.stderr

    # A group with a member is refused (kafka-consumer-groups refuses it too).
    member = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        member.subscribe([topic_name])

        def stable():
            member.poll(0.2)
            res = weir_cli("group", "describe", group, "-o", "json", bootstrap=broker)
            return res if res.returncode == 0 and '"state":"Stable"' in res.stdout else None
        wait_for("the member to join", stable, 60)
        refused = weir_cli("group", "seek", group, "--to", "earliest", "--topic", topic_name, "--execute",
                           bootstrap=broker)
        assert refused.returncode == 1
        assert "inactive, but its state is Stable" in refused.stderr, refused.stderr
        theirs = run_tool("kafka-consumer-groups", "--group", group, "--reset-offsets", "--to-earliest", "--topic",
                          topic_name, "--execute", bootstrap=broker)
        assert "is inactive, but the current state is Stable" in theirs.stdout + theirs.stderr
    finally:
        member.close()
    assert committed(broker, group, topic_name, 3) == {0: 4, 1: 5, 2: 6}


@pytest.mark.timeout(240)
def test_group_delete_offsets_and_delete(broker, topic_name):
    assert weir_cli("topic", "create", topic_name, "-p", 2, "-r", 1, bootstrap=broker).returncode == 0
    group = f"g-{topic_name}"
    commit(broker, group, [TopicPartition(topic_name, 0, 0), TopicPartition(topic_name, 1, 0)])

    out = weir_cli("group", "delete-offsets", group, "--topic", f"{topic_name}:1", bootstrap=broker)
    assert out.returncode == 0, out.stderr
    width = max(15, len(topic_name))
    assert out.stdout == (f"Request succeeded for deleting offsets from group {group}.\n\n"
                          f"{'TOPIC':<{width}} {'PARTITION':<10} {'STATUS':<15}\n"
                          f"{topic_name:<{width}} {'1':<10} {'Successful':<15}\n"), out.stdout
    assert committed(broker, group, topic_name, 2) == {0: 0}

    unknown = weir_cli("group", "delete-offsets", group, "--topic", f"{topic_name}-nosuch", bootstrap=broker)
    assert unknown.returncode == 1
    assert "UNKNOWN_TOPIC_OR_PARTITION" in unknown.stdout, unknown.stdout

    gone = weir_cli("group", "delete", group, bootstrap=broker)
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout == f"Deletion of requested consumer groups ('{group}') was successful.\n"
    assert committed(broker, group, topic_name, 2) == {}
    again = weir_cli("group", "delete", group, bootstrap=broker)
    assert again.returncode == 1
    assert "GROUP_ID_NOT_FOUND" in again.stderr, again.stderr
    described = weir_cli("group", "describe", group, bootstrap=broker)
    assert described.returncode == 1


def plan_rows(stdout: str, groups: set[str]) -> list[list[str]]:
    """The rows (sorted) of a --reset-offsets table that belong to `groups`: on the session's shared
    Kafka, --all-groups also meets other tests' groups."""
    header, rows = table("\n".join(line for line in stdout.splitlines()
                                   if line.strip() and not line.startswith(("Warn", "WARN", "Error", "["))))
    assert header == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], stdout
    return [r for r in rows if r[0] in groups]


def csv_rows(stdout: str, groups: set[str]) -> list[list[str]]:
    """The CSV rows (sorted) of `groups`: Kafka's tool quotes fields longer than 24 characters,
    weir only those that need it, so rows are compared as fields."""
    return sorted(row for row in csv.reader(stdout.splitlines()) if row and row[0] in groups)


@pytest.mark.timeout(300)
def test_group_seek_from_file_and_all_groups_plan_what_kafka_consumer_groups_does(broker, topic_name, tmp_path):
    assert weir_cli("topic", "create", topic_name, "-p", 3, "-r", 1, bootstrap=broker).returncode == 0
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for q in range(3):
        for i in range(5 + q):  # log end offsets 5, 6, 7
            p.produce(topic_name, value=f"v{q}-{i}".encode(), partition=q)
    assert p.flush(30) == 0
    g1, g2 = f"g1-{topic_name}", f"g2-{topic_name}"
    ours_groups = {g1, g2}
    commit(broker, g1, [TopicPartition(topic_name, 0, 1), TopicPartition(topic_name, 1, 2)])
    commit(broker, g2, [TopicPartition(topic_name, 2, 3)])

    def kafka_reset(*spec):
        return run_tool("kafka-consumer-groups", "--reset-offsets", *spec, bootstrap=broker).check()

    # --all-groups: one table with every group's rows, as Kafka's tool prints it.
    ours = weir_cli("group", "seek", "--all-groups", "--all-topics", "--to", "earliest", bootstrap=broker)
    assert ours.returncode in (0, 1), ours.stderr  # 1 only for other tests' groups that are still active
    assert plan_rows(ours.stdout, ours_groups) == [[g1, topic_name, "0", "0"], [g1, topic_name, "1", "0"],
                                                   [g2, topic_name, "2", "0"]], ours.stdout
    theirs = kafka_reset("--all-groups", "--all-topics", "--to-earliest", "--dry-run")
    assert plan_rows(theirs.stdout, ours_groups) == plan_rows(ours.stdout, ours_groups), theirs.stdout

    # --export of several groups: group,topic,partition,offset rows, as Kafka writes them.
    exported = weir_cli("group", "seek", "--all-groups", "--all-topics", "--to", "latest", "--export", bootstrap=broker)
    assert csv_rows(exported.stdout, ours_groups) == [
        [g1, topic_name, "0", "5"], [g1, topic_name, "1", "6"], [g2, topic_name, "2", "7"]], exported.stdout
    theirs = kafka_reset("--all-groups", "--all-topics", "--to-latest", "--export", "--dry-run")
    assert csv_rows(theirs.stdout, ours_groups) == csv_rows(exported.stdout, ours_groups), theirs.stdout
    # ... and weir reads the file Kafka's tool wrote (quoted fields and all).
    kafka_export = tmp_path / "kafka-export.csv"
    kafka_export.write_text("".join(line + "\n" for line in theirs.stdout.splitlines()
                                    if (next(csv.reader([line]), None) or [""])[0] in ours_groups))
    assert '"' in kafka_export.read_text(), "Kafka's tool quotes these long names"
    ours = weir_cli("group", "seek", g1, g2, "--from-file", kafka_export, bootstrap=broker)
    assert ours.returncode == 0, ours.stderr
    assert plan_rows(ours.stdout, ours_groups) == [[g1, topic_name, "0", "5"], [g1, topic_name, "1", "6"],
                                                   [g2, topic_name, "2", "7"]], ours.stdout

    # --from-file with topic,partition,offset rows for one group (offsets out of range are clamped,
    # a partition the group has no offset for is planned too), and group,... rows for several.
    single = tmp_path / "single.csv"
    single.write_text(f"{topic_name},0,3\n{topic_name},2,100\n\n")
    several = tmp_path / "several.csv"
    several.write_text(f"{g1},{topic_name},1,4\n{g2},{topic_name},0,2\n{g2},{topic_name},2,6\n")
    cases = [
        ([g1], ["--group", g1], single,
         [[g1, topic_name, "0", "3"], [g1, topic_name, "2", "7"]]),
        ([g1, g2], ["--group", g1, "--group", g2], several,
         [[g1, topic_name, "1", "4"], [g2, topic_name, "0", "2"], [g2, topic_name, "2", "6"]]),
    ]
    for ours_groups_args, kafka_groups_args, plan, expected in cases:
        ours = weir_cli("group", "seek", *ours_groups_args, "--from-file", plan, bootstrap=broker)
        assert ours.returncode == 0, (plan.read_text(), ours.stderr)
        assert plan_rows(ours.stdout, ours_groups) == expected, ours.stdout
        # Kafka's tool reads a file without the blank line in the middle only (Java's split drops
        # trailing empty strings, so a trailing blank line is fine for both).
        theirs = kafka_reset(*kafka_groups_args, "--from-file", plan, "--dry-run")
        assert plan_rows(theirs.stdout, ours_groups) == expected, theirs.stdout + theirs.stderr
    ours = weir_cli("group", "seek", "--all-groups", "--from-file", several, bootstrap=broker)
    assert plan_rows(ours.stdout, ours_groups) == cases[1][3], ours.stdout
    theirs = kafka_reset("--all-groups", "--from-file", several, "--dry-run")
    assert plan_rows(theirs.stdout, ours_groups) == cases[1][3], theirs.stdout
    assert committed(broker, g1, topic_name, 3) == {0: 1, 1: 2}, "a dry run changes nothing"

    # What --export writes, --from-file reads back; --execute commits it.
    exported = weir_cli("group", "seek", g1, "--topic", topic_name, "--to", "earliest", "--export", bootstrap=broker)
    roundtrip = tmp_path / "export.csv"
    roundtrip.write_text(exported.stdout)
    done = weir_cli("group", "seek", g1, "--from-file", roundtrip, "--execute", bootstrap=broker)
    assert done.returncode == 0, done.stderr
    assert committed(broker, g1, topic_name, 3) == {0: 0, 1: 0, 2: 0}
    done = weir_cli("group", "seek", g1, g2, "--from-file", several, "--execute", bootstrap=broker)
    assert done.returncode == 0, done.stderr
    assert committed(broker, g1, topic_name, 3) == {0: 0, 1: 4, 2: 0}
    assert committed(broker, g2, topic_name, 3) == {0: 2, 2: 6}

    # Bad input: a group the file has no rows for fails (the others are still planned), a negative
    # offset or rows without a group for several groups are bad usage.
    partial = weir_cli("group", "seek", g1, f"{g1}-other", "--from-file", several, bootstrap=broker)
    assert partial.returncode == 1
    assert f"the --from-file plan has no rows for group '{g1}-other'" in partial.stderr, partial.stderr
    assert plan_rows(partial.stdout, ours_groups) == [[g1, topic_name, "1", "4"]], partial.stdout
    negative = tmp_path / "negative.csv"
    negative.write_text(f"{topic_name},0,-5\n")
    bad = weir_cli("group", "seek", g1, "--from-file", negative, bootstrap=broker)
    assert bad.returncode == 2 and "invalid negative offset -5" in bad.stderr, bad.stderr
    theirs = run_tool("kafka-consumer-groups", "--reset-offsets", "--group", g1, "--from-file", negative,
                      bootstrap=broker)
    assert "Invalid negative offset" in theirs.stdout + theirs.stderr, theirs.stdout + theirs.stderr
    bad = weir_cli("group", "seek", g1, g2, "--from-file", single, bootstrap=broker)
    assert bad.returncode == 2 and "rows are for one group" in bad.stderr, bad.stderr
    bad = weir_cli("group", "seek", g1, "--from-file", single, "--to", "earliest", bootstrap=broker)
    assert bad.returncode == 2, bad.stderr
