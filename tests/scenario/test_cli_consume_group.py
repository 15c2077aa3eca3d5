"""`weir consume TOPIC --group G` (issue 17): the CLI as a member of a classic consumer group
(JoinGroup/SyncGroup/heartbeats, cooperative-sticky first, range too), against weir and against
Apache Kafka 4.3.1.

  - test_commits_what_it_read_and_a_second_run_resumes: `-n 5` reads five records; the offsets
    `weir group describe` and kafka-consumer-groups show are what it read; a second run of the
    group (`--output json`) reads the rest, nothing twice.
  - test_members_split_the_partitions_a_third_moves_only_its_own_then_one_takes_all: two
    `weir consume --group` processes on four partitions own two each (disjoint) and see every
    record once between them; a third joins and takes one partition, every other partition
    stays where it was (cooperative-sticky); when two exit (Ctrl+C) the first takes
    all four and carries on where the others stopped.
  - test_shares_partitions_with_a_librdkafka_member: a weir member and a confluent-kafka consumer
    (partition.assignment.strategy cooperative-sticky) split the partitions, whichever joined
    first (and so leads and runs the assignor).
  - test_sigint_commits_and_leaves_at_once: after SIGINT the group is empty at once (no wait for
    the 45 s session timeout) and holds the offsets of everything printed.
  - test_group_usage_errors: --partition or an offset --from with --group is bad usage (exit 2).
With `--group-protocol consumer` (KIP-848, ConsumerGroupHeartbeat; the coordinator assigns):
  - test_consumer_protocol_members_split_a_third_joins_and_ctrl_c_leaves: two members (one
    chooses the protocol with group.protocol in its --command-config file) split four
    partitions, a third joins and gets its share, every record is read exactly once, and after
    Ctrl+C the group is empty at once with every partition committed at its end.
  - test_consumer_protocol_member_with_a_java_console_consumer: a weir member and Kafka's
    kafka-console-consumer (group.protocol=consumer) split the partitions and read every record
    once between them; both stop and the offsets are committed.
  - test_consumer_protocol_static_member_with_a_rack_leaves_and_returns: a member with
    group.instance.id and client.rack in its --command-config joins with them (ConsumerGroupDescribe
    shows both; `weir group describe --members` prints the GROUP-INSTANCE-ID column as
    kafka-consumer-groups does); after Ctrl+C it stays in the group with its partitions (it left
    with epoch -2), and a new process with the same instance id takes its place and its partitions.
  - test_consumer_protocol_include_regex: `--include REGEX` sends the regex to the coordinator
    (SubscribedTopicRegex): the member reads both matching topics and not a third, and commits
    both; --include without the consumer protocol is bad usage.
Every wait polls for a state with a deadline.
"""
from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer

from harness import procs, run_tool
from harness.cluster import wait_for
from harness.paths import weir_bin
from harness.kreq import Kreq
from test_consumer_protocol import committed_offsets
from test_consumer_protocol_java import ConsoleMember
from test_consumer_protocol_java import describe as consumer_group_describe
from test_consumer_protocol_java import owned as reconciled_owners

WAIT = 25  # seconds: a rebalance takes up to a heartbeat interval (3 s) and a follow-up round


def weir_cli(*args, bootstrap, timeout: float = 60) -> subprocess.CompletedProcess:
    argv = [str(weir_bin()), *[str(a) for a in args], "--bootstrap", getattr(bootstrap, "bootstrap", bootstrap)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def ok(res: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert res.returncode == 0, (res.args, res.returncode, res.stdout[-4000:], res.stderr[-4000:])
    return res


def create_topic(broker, topic: str, partitions: int) -> None:
    ok(weir_cli("topic", "create", topic, "-p", partitions, "-r", 1, bootstrap=broker))


def produce(broker, topic: str, partitions: int, first: int, count: int) -> None:
    """Values v<first>..v<first+count-1>, round-robin over the partitions."""
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(first, first + count):
        p.produce(topic, value=f"v{i}".encode(), partition=i % partitions)
    assert p.flush(30) == 0


def describe(broker, group: str) -> dict | None:
    res = weir_cli("group", "describe", group, "--output", "json", bootstrap=broker)
    return json.loads(res.stdout) if res.returncode == 0 else None


def owners(broker, group: str) -> dict[str, list[int]]:
    """client id -> partitions it owns, while the group is Stable (else {})."""
    d = describe(broker, group)
    if not d or d["state"] != "Stable":
        return {}
    out: dict[str, list[int]] = {}
    for row in d["partitions"]:
        if row["client_id"] is not None:
            out.setdefault(row["client_id"], []).append(row["partition"])
    return {k: sorted(v) for k, v in out.items()}


def committed(broker, group: str) -> dict[int, int | None]:
    return {r["partition"]: r["current_offset"] for r in describe(broker, group)["partitions"]}


def wait_empty(broker, group: str, timeout: float) -> dict:
    return wait_for(f"group {group} to be empty", lambda: (d := describe(broker, group)) and d["state"] == "Empty"
                    and d, timeout, describe=lambda: describe(broker, group))


class Member:
    """A `weir consume --group` process in follow mode, printing partition:offset:value lines."""

    def __init__(self, broker, topic: str, group: str, tmp: Path, name: str, *extra, properties: str = "") -> None:
        self.name = name
        props = tmp / f"{name}.properties"
        props.write_text(f"client.id={name}\n{properties}")
        self.out_path, self.err_path = tmp / f"{name}.out", tmp / f"{name}.err"
        self.out, self.err = open(self.out_path, "w"), open(self.err_path, "w")
        argv = [weir_bin(), "consume", topic, "--group", group, "--from", "beginning", "--format",
                "{partition}:{offset}:{value}", "--bootstrap", broker.bootstrap, "--command-config", props, *extra]
        self.proc = procs.spawn(argv, stdout=self.out, stderr=self.err)

    def records(self) -> list[tuple[int, int, str]]:
        lines = self.out_path.read_text().splitlines()
        return [(int(p), int(o), v) for p, o, v in (line.split(":", 2) for line in lines if line.count(":") >= 2)]

    def interrupt(self, timeout: float = 30) -> str:
        """Ctrl+C; returns stderr after asserting exit code 0."""
        self.proc.send_signal(signal.SIGINT)
        try:
            rc = self.proc.wait(timeout)
        finally:
            procs.forget(self.proc)
            self.out.close()
            self.err.close()
        err = self.err_path.read_text()
        assert rc == 0, (rc, err)
        return err

    def kill(self) -> None:
        if self.proc.poll() is None:
            procs.terminate(self.proc, 5)
        procs.forget(self.proc)
        self.out.close()
        self.err.close()


def split_and_read_40(broker, topic: str, first, second, owners_of, describe_group, timeout: float = WAIT) -> dict:
    """Waits until the two members (`.name`, `.records()`) own two of the four partitions each
    (owners_of(): client id -> partitions), then produces v0..v39 and checks each member read
    exactly what its partitions hold, between them everything; returns the shares."""
    names = {first.name, second.name}

    def split():
        o = owners_of()
        return o if set(o) == names and all(len(v) == 2 for v in o.values()) else None
    shares = wait_for("two partitions each", split, timeout, describe=describe_group)
    assert sorted(shares[first.name] + shares[second.name]) == [0, 1, 2, 3]
    produce(broker, topic, 4, 0, 40)
    wait_for("all 40 records between the two", lambda: len(first.records()) + len(second.records()) == 40, WAIT)
    for m in (first, second):
        assert {p for p, _, _ in m.records()} == set(shares[m.name]), m.name
    assert sorted(v for _, _, v in first.records() + second.records()) == sorted(f"v{i}" for i in range(40))
    return shares


@pytest.mark.timeout(120)
@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_commits_what_it_read_and_a_second_run_resumes(broker, topic_name):
    create_topic(broker, topic_name, 3)
    produce(broker, topic_name, 3, 0, 12)
    group = f"g-{topic_name}"
    first = ok(weir_cli("consume", topic_name, "--group", group, "--from", "beginning", "-n", 5, "--format",
                        "{partition}:{offset}", bootstrap=broker))
    got = [tuple(map(int, line.split(":"))) for line in first.stdout.splitlines()]
    assert len(got) == 5 and len(set(got)) == 5, first.stdout
    assert "Processed a total of 5 messages" in first.stderr

    # Each partition's committed offset is where reading stopped in it (the start, 0, if it
    # was not read): the member committed on the way out and left.
    expected = {p: 0 for p in range(3)}
    for p, o in got:
        expected[p] = max(expected[p], o + 1)
    wait_empty(broker, group, 10)
    assert committed(broker, group) == expected
    theirs = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=broker).check()
    rows = [line.split() for line in theirs.stdout.splitlines() if line.startswith(group)]
    assert {int(r[2]): int(r[3]) for r in rows} == expected, theirs.stdout
    assert weir_cli("group", "describe", group, bootstrap=broker).stdout == theirs.stdout

    # A second run starts at the committed offsets (not at --from's default, the end).
    second = ok(weir_cli("consume", topic_name, "--group", group, "-n", 7, "--output", "json", bootstrap=broker))
    more = [(r["partition"], r["offset"]) for r in map(json.loads, second.stdout.splitlines())]
    assert len(more) == 7
    assert sorted(got + more) == [(p, o) for p in range(3) for o in range(4)]
    wait_empty(broker, group, 10)
    assert committed(broker, group) == {0: 4, 1: 4, 2: 4}


@pytest.mark.timeout(150)
def test_members_split_the_partitions_a_third_moves_only_its_own_then_one_takes_all(broker, topic_name, tmp_path):
    create_topic(broker, topic_name, 4)
    group = f"g-{topic_name}"
    a = Member(broker, topic_name, group, tmp_path, "member-a")
    b = c = None
    try:
        wait_for("member-a to own all four partitions", lambda: owners(broker, group) == {"member-a": [0, 1, 2, 3]},
                 WAIT, describe=lambda: describe(broker, group))
        b = Member(broker, topic_name, group, tmp_path, "member-b")
        shares = split_and_read_40(broker, topic_name, a, b, lambda: owners(broker, group),
                                   lambda: describe(broker, group))

        # A third member: cooperative-sticky moves only what it gets; the other two keep the rest.
        c = Member(broker, topic_name, group, tmp_path, "member-c")

        def three_ways():
            o = owners(broker, group)
            return o if set(o) == {"member-a", "member-b", "member-c"} and sorted(sum(o.values(), [])) == [
                0, 1, 2, 3] else None
        thirds = wait_for("four partitions over three members", three_ways, WAIT,
                          describe=lambda: describe(broker, group))
        assert sorted(len(v) for v in thirds.values()) == [1, 1, 2], thirds
        for name in ("member-a", "member-b"):
            assert set(thirds[name]) <= set(shares[name]), (shares, thirds)
        produce(broker, topic_name, 4, 40, 40)
        wait_for("the next 40 records among the three",
                 lambda: len(a.records()) + len(b.records()) + len(c.records()) == 80, WAIT)
        for m in (a, b, c):
            assert {p for p, _, v in m.records() if int(v[1:]) >= 40} == set(thirds[m.name]), m.name

        c.interrupt()
        b.interrupt()
        gone = b.records() + c.records()
        wait_for("member-a to own all four partitions again",
                 lambda: owners(broker, group) == {"member-a": [0, 1, 2, 3]}, WAIT,
                 describe=lambda: describe(broker, group))
        produce(broker, topic_name, 4, 80, 40)
        wait_for("the last 40 records at member-a", lambda: len(a.records()) + len(gone) >= 120, WAIT)
        a.interrupt()
        values = [v for _, _, v in a.records() + gone]
        assert sorted(values) == sorted(f"v{i}" for i in range(120))  # every record exactly once
        wait_empty(broker, group, 10)
        assert committed(broker, group) == {p: 30 for p in range(4)}
    finally:
        for m in (a, b, c):
            if m is not None:
                m.kill()


@pytest.mark.timeout(150)
@pytest.mark.parametrize("first", ["weir_first", "librdkafka_first"])
@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_shares_partitions_with_a_librdkafka_member(broker, topic_name, tmp_path, first):
    create_topic(broker, topic_name, 4)
    group = f"g-{topic_name}"
    rk = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "client.id": "rdkafka-member",
                   "partition.assignment.strategy": "cooperative-sticky", "auto.offset.reset": "earliest",
                   "auto.commit.interval.ms": 1000})
    rk_got: list[tuple[int, int, str]] = []

    def pump(what: str, until, timeout: float = WAIT):
        """Polls the librdkafka consumer (it only takes part in rebalances inside poll) until `until()`."""
        deadline = time.monotonic() + timeout
        while True:
            m = rk.poll(0.2)
            if m is not None and not m.error():
                rk_got.append((m.partition(), m.offset(), m.value().decode()))
            value = until()
            if value:
                return value
            assert time.monotonic() < deadline, f"timed out waiting for {what}: {describe(broker, group)}"

    w = None
    try:
        if first == "librdkafka_first":
            rk.subscribe([topic_name])
            pump("librdkafka to own all four", lambda: owners(broker, group) == {"rdkafka-member": [0, 1, 2, 3]})
            w = Member(broker, topic_name, group, tmp_path, "weir-member")
        else:
            w = Member(broker, topic_name, group, tmp_path, "weir-member")
            wait_for("weir to own all four", lambda: owners(broker, group) == {"weir-member": [0, 1, 2, 3]}, WAIT,
                     describe=lambda: describe(broker, group))
            rk.subscribe([topic_name])

        def split():
            # The coordinator's view, and librdkafka's own once it has taken its assignment in.
            o = owners(broker, group)
            return o if (set(o) == {"weir-member", "rdkafka-member"} and all(len(v) == 2 for v in o.values())
                         and sorted(p.partition for p in rk.assignment()) == o["rdkafka-member"]) else None
        shares = pump("two partitions each", split)
        assert sorted(shares["weir-member"] + shares["rdkafka-member"]) == [0, 1, 2, 3]

        produce(broker, topic_name, 4, 0, 40)
        pump("all 40 records between the two", lambda: len(rk_got) + len(w.records()) == 40)
        assert {p for p, _, _ in w.records()} == set(shares["weir-member"])
        assert {p for p, _, _ in rk_got} == set(shares["rdkafka-member"])

        w.interrupt()
        pump("librdkafka to own all four after weir left",
             lambda: sorted(p.partition for p in rk.assignment()) == [0, 1, 2, 3])
        values = sorted(v for _, _, v in rk_got + w.records())
        assert values == sorted(f"v{i}" for i in range(40))
    finally:
        rk.close()
        if w is not None:
            w.kill()


@pytest.mark.timeout(90)
def test_sigint_commits_and_leaves_at_once(broker, topic_name, tmp_path):
    create_topic(broker, topic_name, 2)
    produce(broker, topic_name, 2, 0, 10)
    group = f"g-{topic_name}"
    m = Member(broker, topic_name, group, tmp_path, "member", "--isolation", "read_committed")
    try:
        wait_for("the ten records", lambda: len(m.records()) == 10, WAIT)
        wait_for("a stable group", lambda: owners(broker, group) == {"member": [0, 1]}, WAIT)
        started = time.monotonic()
        err = m.interrupt()
        assert "Processed a total of 10 messages" in err
        # Empty at once: the member left (LeaveGroup), no session timeout ran out.
        d = wait_empty(broker, group, 10)
        assert time.monotonic() - started < 10
        assert {r["partition"]: r["current_offset"] for r in d["partitions"]} == {0: 5, 1: 5}
        assert all(r["lag"] == 0 and r["consumer_id"] is None for r in d["partitions"])
    finally:
        m.kill()


def consumer_owners(broker, group: str) -> dict[str, list[int]]:
    """client id -> partitions, once every member of the consumer-protocol group is reconciled."""
    return reconciled_owners(consumer_group_describe(broker, group))


@pytest.mark.timeout(180)
def test_consumer_protocol_members_split_a_third_joins_and_ctrl_c_leaves(broker, topic_name, tmp_path):
    create_topic(broker, topic_name, 4)
    group = f"g-{topic_name}"
    a = Member(broker, topic_name, group, tmp_path, "member-a", "--group-protocol", "consumer")
    b = Member(broker, topic_name, group, tmp_path, "member-b", properties="group.protocol=CONSUMER\n")
    members = [a, b]
    try:
        split_and_read_40(broker, topic_name, a, b, lambda: consumer_owners(broker, group),
                          lambda: consumer_group_describe(broker, group))

        c = Member(broker, topic_name, group, tmp_path, "member-c", "--group-protocol", "consumer")
        members.append(c)

        def three_ways():
            o = consumer_owners(broker, group)
            return o if set(o) == {"member-a", "member-b", "member-c"} and sorted(sum(o.values(), [])) == [
                0, 1, 2, 3] and all(o.values()) else None
        thirds = wait_for("four partitions over three members", three_ways, WAIT,
                          describe=lambda: consumer_group_describe(broker, group))
        produce(broker, topic_name, 4, 40, 40)
        wait_for("the next 40 records among the three", lambda: sum(len(m.records()) for m in members) == 80, WAIT)
        for m in members:
            assert {p for p, _, v in m.records() if int(v[1:]) >= 40} == set(thirds[m.name]), m.name

        started = time.monotonic()
        for m in members:
            assert "Processed a total of" in m.interrupt()
        values = sorted(v for m in members for _, _, v in m.records())
        assert values == sorted(f"v{i}" for i in range(80))  # every record exactly once
        # Empty at once: each member left with epoch -1 after committing what it printed.
        wait_for("an empty group", lambda: (g := consumer_group_describe(broker, group))["ErrorCode"] == 0
                 and not g["Members"], 10, describe=lambda: consumer_group_describe(broker, group))
        assert time.monotonic() - started < 30
        with Kreq(broker) as k:
            assert committed_offsets(k, group, [topic_name]) == {(topic_name, p): 20 for p in range(4)}
    finally:
        for m in members:
            m.kill()


@pytest.mark.timeout(180)
@pytest.mark.oracle_slow  # the Kafka variant: make test time
def test_consumer_protocol_member_with_a_java_console_consumer(broker, topic_name, tmp_path):
    create_topic(broker, topic_name, 4)
    group = f"g-{topic_name}"
    w = Member(broker, topic_name, group, tmp_path, "weir-member", "--group-protocol", "consumer")
    java = ConsoleMember(broker, group, topic_name, "java-member", tmp_path)
    try:
        split_and_read_40(broker, topic_name, w, java, lambda: consumer_owners(broker, group),
                          lambda: consumer_group_describe(broker, group), timeout=60)
        w.interrupt()
        java.stop()
        wait_for("an empty group", lambda: (g := consumer_group_describe(broker, group))["ErrorCode"] == 0
                 and not g["Members"], 20, describe=lambda: consumer_group_describe(broker, group))
        with Kreq(broker) as k:
            assert committed_offsets(k, group, [topic_name]) == {(topic_name, p): 10 for p in range(4)}
    finally:
        w.kill()
        java.kill()


@pytest.mark.timeout(120)
def test_consumer_protocol_static_member_with_a_rack_leaves_and_returns(broker, topic_name, tmp_path):
    create_topic(broker, topic_name, 2)
    group = f"g-{topic_name}"
    props = "group.instance.id=static-a\nclient.rack=rack-1\n"
    a = Member(broker, topic_name, group, tmp_path, "member-a", "--group-protocol", "consumer", properties=props)
    again = None
    try:
        wait_for("the static member to own both partitions",
                 lambda: consumer_owners(broker, group) == {"member-a": [0, 1]}, WAIT,
                 describe=lambda: consumer_group_describe(broker, group))
        (m,) = consumer_group_describe(broker, group)["Members"]
        assert (m["InstanceID"], m["RackID"]) == ("static-a", "rack-1"), m
        ours = ok(weir_cli("group", "describe", group, "--members", bootstrap=broker))
        theirs = run_tool("kafka-consumer-groups", "--describe", "--group", group, "--members",
                          bootstrap=broker).check()
        assert "GROUP-INSTANCE-ID" in ours.stdout and "static-a" in ours.stdout
        assert ours.stdout == theirs.stdout, (ours.stdout, theirs.stdout)
        first_id = m["MemberID"]

        a.interrupt()
        # Left with epoch -2: still a member (until its session times out), its partitions kept.
        (m,) = consumer_group_describe(broker, group)["Members"]
        assert m["MemberID"] == first_id and m["InstanceID"] == "static-a", m
        assert sorted(p for t in m["Assignment"]["TopicPartitions"] for p in t["Partitions"]) == [0, 1], m

        again = Member(broker, topic_name, group, tmp_path, "member-a2", "--group-protocol", "consumer",
                       properties=props)
        wait_for("the returning static member to take the place and the partitions",
                 lambda: consumer_owners(broker, group) == {"member-a2": [0, 1]}, WAIT,
                 describe=lambda: consumer_group_describe(broker, group))
        (m,) = consumer_group_describe(broker, group)["Members"]
        assert m["MemberID"] != first_id and m["InstanceID"] == "static-a", m
        produce(broker, topic_name, 2, 0, 6)
        wait_for("the returning member to read the records", lambda: len(again.records()) == 6, WAIT)
        again.interrupt()
    finally:
        a.kill()
        if again is not None:
            again.kill()


@pytest.mark.timeout(120)
def test_consumer_protocol_include_regex(broker, topic_name, tmp_path):
    first, second, other = f"{topic_name}-in1", f"{topic_name}-in2", f"{topic_name}-out"
    for t in (first, second, other):
        create_topic(broker, t, 2)
    group = f"g-{topic_name}"
    argv = [weir_bin(), "consume", "--include", f"{topic_name}-in.*", "--group", group, "--group-protocol",
            "consumer", "--from", "beginning", "--format", "{topic}:{partition}:{value}", "--bootstrap",
            broker.bootstrap]
    out_path = tmp_path / "include.out"
    with open(out_path, "w") as out, open(tmp_path / "include.err", "w") as err:
        proc = procs.spawn(argv, stdout=out, stderr=err)
        try:
            for t in (first, second, other):
                produce(broker, t, 2, 0, 4)

            def lines():
                return sorted(out_path.read_text().splitlines())
            expected = sorted(f"{t}:{i % 2}:v{i}" for t in (first, second) for i in range(4))
            wait_for("the records of both matching topics", lambda: lines() == expected, WAIT,
                     describe=lambda: (lines(), consumer_group_describe(broker, group)))
            (m,) = consumer_group_describe(broker, group)["Members"]
            assert (m["SubscribedTopicRegex"], m["SubscribedTopics"]) == (f"{topic_name}-in.*", []), m
            proc.send_signal(signal.SIGINT)
            assert proc.wait(30) == 0
        finally:
            if proc.poll() is None:
                procs.terminate(proc, 5)
            procs.forget(proc)
    assert lines() == expected  # nothing of the topic the regex does not match
    with Kreq(broker) as k:
        offsets = committed_offsets(k, group, [first, second])  # asks for partitions 0-3: 2 and 3 have none
    assert {tp: o for tp, o in offsets.items() if tp[1] < 2} == {(t, p): 2 for t in (first, second) for p in range(2)}


def test_group_usage_errors(tmp_path):
    res = weir_cli("consume", "t", "--group", "g", "--partition", "0", bootstrap="127.0.0.1:1")
    assert res.returncode == 2 and "--partition excludes --group" in res.stderr, res
    res = weir_cli("consume", "t", "--group", "g", "--from", "5", bootstrap="127.0.0.1:1")
    assert res.returncode == 2 and "--from 5" in res.stderr, res
    res = weir_cli("consume", "t", "--group-protocol", "consumer", bootstrap="127.0.0.1:1")
    assert res.returncode == 2 and "--group-protocol requires --group" in res.stderr, res
    res = weir_cli("consume", "t", "--group", "g", "--group-protocol", "eager", bootstrap="127.0.0.1:1")
    assert res.returncode == 2 and "--group-protocol" in res.stderr, res
    res = weir_cli("consume", "--include", "t.*", "--group", "g", bootstrap="127.0.0.1:1")
    assert res.returncode == 2 and "--include needs the consumer group protocol" in res.stderr, res
    res = weir_cli("consume", "--include", "t.*", bootstrap="127.0.0.1:1")
    assert res.returncode == 2 and "--include" in res.stderr, res
    res = weir_cli("consume", "--group", "g", bootstrap="127.0.0.1:1")
    assert res.returncode == 2 and "name a topic" in res.stderr, res
    props = tmp_path / "consumer.properties"
    props.write_text("group.protocol=eager\n")
    res = weir_cli("consume", "t", "--group", "g", "--command-config", props, bootstrap="127.0.0.1:1")
    assert res.returncode == 1, res
    assert res.stderr == ("error: Invalid value eager for configuration group.protocol: String must be one of "
                          "(case insensitive): CLASSIC, CONSUMER\n"), res
