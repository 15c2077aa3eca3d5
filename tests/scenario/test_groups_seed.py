"""Seeds 000 and 002: consumer groups as users meet them, against weir and the real Kafka.

Every scenario runs on both brokers (the `broker` fixture) and asserts what Apache Kafka does.
Consumers are confluent-kafka (librdkafka) Consumers, each polled by its own thread (`Member`),
or Kafka's console tools, as the seed articles use them.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness import parse_table, run_tool

SESSION_MS = 6000  # Kafka's group.min.session.timeout.ms: the shortest session a member may ask for


def create_topic(broker, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def produce(broker, topic: str, records) -> None:
    """records: iterable of (partition, key, value)."""
    p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for partition, key, value in records:
        p.produce(topic, key=key, value=value, partition=partition)
    assert p.flush(30) == 0


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Member:
    """A group member: a Consumer polled by a background thread, recording what it sees."""

    def __init__(self, broker, group: str, topics: list[str], **conf) -> None:
        base = {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": 500,
        }
        base.update(conf)
        self.cooperative = base.get("partition.assignment.strategy") == "cooperative-sticky"
        self.consumer = Consumer(base)
        self.lock = threading.Lock()
        self.assignment: set[tuple[str, int]] = set()
        self.events: list[tuple[str, set]] = []  # ("assign"|"revoke"|"lost", partitions)
        self.records: list[tuple[int, int, bytes]] = []  # (partition, offset, value)
        self.record_times: list[float] = []  # time.monotonic() of each of self.records
        self.event_times: list[float] = []  # time.monotonic() of each of self.events
        self.errors: list[str] = []
        self.commit_each = False
        self.paused = False
        self._stop = threading.Event()
        self._hold = threading.Event()  # set: stop polling for a while (max.poll.interval tests)
        self.consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_lost)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _parts(self, parts) -> set:
        return {(p.topic, p.partition) for p in parts}

    def _on_assign(self, consumer, parts):
        with self.lock:
            got = self._parts(parts)
            self.events.append(("assign", got))
            self.event_times.append(time.monotonic())
            self.assignment = (self.assignment | got) if self.cooperative else got

    def _on_revoke(self, consumer, parts):
        with self.lock:
            gone = self._parts(parts)
            self.events.append(("revoke", gone))
            self.event_times.append(time.monotonic())
            self.assignment -= gone

    def _on_lost(self, consumer, parts):
        with self.lock:
            gone = self._parts(parts)
            self.events.append(("lost", gone))
            self.event_times.append(time.monotonic())
            self.assignment -= gone

    def _run(self):
        while not self._stop.is_set():
            if self._hold.is_set():
                time.sleep(0.05)
                continue
            msg = self.consumer.poll(0.1)
            if msg is None:
                continue
            if msg.error():
                with self.lock:
                    self.errors.append(str(msg.error()))
                continue
            with self.lock:
                self.records.append((msg.partition(), msg.offset(), msg.value()))
                self.record_times.append(time.monotonic())
            if self.commit_each:
                try:
                    self.consumer.commit(message=msg, asynchronous=False)
                except KafkaException as e:  # e.g. a rebalance in between: the next one commits
                    with self.lock:
                        self.errors.append(f"commit: {e}")

    def owned(self) -> set:
        with self.lock:
            return set(self.assignment)

    def seen(self) -> list:
        with self.lock:
            return list(self.records)

    def event_log(self) -> list:
        with self.lock:
            return list(self.events)

    def hold(self, on: bool) -> None:
        if on:
            self._hold.set()
        else:
            self._hold.clear()

    def close(self) -> None:
        self._stop.set()
        self.thread.join(10)
        self.consumer.close()


@pytest.fixture
def members():
    made: list[Member] = []

    def make(*args, **kwargs) -> Member:
        m = Member(*args, **kwargs)
        made.append(m)
        return m

    yield make
    for m in made:
        if not m._stop.is_set():
            try:
                m.close()
            except Exception:
                pass


def describe(broker, group: str):
    res = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=broker).check()
    rows = parse_table(res.stdout, header_first="GROUP") if "GROUP" in res.stdout else []
    return res, rows


# ------------------------------------------------------------------------------ seed 000, console
def test_seed000_console_offsets_lag_and_resume(broker, topic_name):
    group = f"g-{topic_name[-6:]}"
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", "3",
             "--replication-factor", "1", bootstrap=broker).check()
    keyed = "k1:order-1\nk2:order-2\nk3:order-3\nk1:order-4\n"
    run_tool("kafka-console-producer", "--topic", topic_name, "--property", "parse.key=true",
             "--property", "key.separator=:", bootstrap=broker, input=keyed).check()
    first = run_tool("kafka-console-consumer", "--topic", topic_name, "--group", group, "--from-beginning",
                     "--max-messages", "4", "--timeout-ms", "30000", "--property", "print.key=true",
                     "--property", "print.partition=true", bootstrap=broker).check()
    lines = [l for l in first.stdout.splitlines() if "order-" in l]
    assert sorted(l.split("\t")[-1] for l in lines) == ["order-1", "order-2", "order-3", "order-4"]
    # Same key, same partition: k1's two records share one.
    k1_parts = {l.split("\t")[0] for l in lines if "\tk1\t" in l}
    assert len(k1_parts) == 1

    res, rows = describe(broker, group)
    assert f"Consumer group '{group}' has no active members." in res.stdout + res.stderr
    assert [r["PARTITION"] for r in sorted(rows, key=lambda r: r["PARTITION"])] == ["0", "1", "2"]
    assert sum(int(r["LOG-END-OFFSET"]) for r in rows) == 4
    for r in rows:
        assert r["CURRENT-OFFSET"] == r["LOG-END-OFFSET"] and r["LAG"] == "0"
        assert r["CONSUMER-ID"] == "-" and r["HOST"] == "-" and r["CLIENT-ID"] == "-"
    before = {r["PARTITION"]: r["CURRENT-OFFSET"] for r in rows}

    more = "".join(f"m{i}:m{i}\n" for i in range(1, 6))
    run_tool("kafka-console-producer", "--topic", topic_name, "--property", "parse.key=true",
             "--property", "key.separator=:", bootstrap=broker, input=more).check()
    res, rows = describe(broker, group)
    assert f"Consumer group '{group}' has no active members." in res.stdout + res.stderr
    assert {r["PARTITION"]: r["CURRENT-OFFSET"] for r in rows} == before
    assert sum(int(r["LAG"]) for r in rows) == 5
    assert sum(int(r["LOG-END-OFFSET"]) for r in rows) == 9

    again = run_tool("kafka-console-consumer", "--topic", topic_name, "--group", group,
                     "--max-messages", "5", "--timeout-ms", "30000", bootstrap=broker).check()
    assert sorted(l for l in again.stdout.splitlines() if l.startswith("m")) == [f"m{i}" for i in range(1, 6)]
    res, rows = describe(broker, group)
    assert sum(int(r["LAG"]) for r in rows) == 0


# ------------------------------------------------------------------------------ seed 000, python
def test_seed000_second_member_splits_then_first_takes_all(broker, topic_name, members):
    create_topic(broker, topic_name, 3)
    produce(broker, topic_name, [(p, None, f"a-{p}-{i}".encode()) for p in range(3) for i in range(5)])
    group = f"g-{topic_name[-6:]}"
    a = members(broker, group, [topic_name], **{"client.id": "A"})
    a.commit_each = True
    wait_for(lambda: len(a.owned()) == 3, 30, "A to own all 3 partitions")
    wait_for(lambda: len(a.seen()) == 15, 30, "A to read the first 15 records")

    d = members(broker, group, [topic_name], **{"client.id": "D"})
    d.commit_each = True
    wait_for(lambda: sorted([len(a.owned()), len(d.owned())]) == [1, 2], 30, "a 1:2 split")
    assert a.owned().isdisjoint(d.owned())
    res, rows = describe(broker, group)
    assert "has no active members" not in res.stdout
    owners = {r["PARTITION"]: r["CLIENT-ID"] for r in rows}
    assert sorted(owners.values()).count("A") == len(a.owned())
    assert sorted(owners.values()).count("D") == len(d.owned())

    produce(broker, topic_name, [(p, None, f"b-{p}-{i}".encode()) for p in range(3) for i in range(4)])
    wait_for(lambda: len(a.seen()) + len(d.seen()) == 27, 30, "both to read the next 12")
    d.close()  # LeaveGroup: A takes everything back at once
    wait_for(lambda: len(a.owned()) == 3, 30, "A to own all 3 again")
    produce(broker, topic_name, [(p, None, f"c-{p}-{i}".encode()) for p in range(3) for i in range(2)])
    wait_for(lambda: len(a.seen()) + len(d.seen()) >= 33, 30, "A to read the last 6")
    time.sleep(1)
    # Every offset of every partition read exactly once between them: A resumed D's partitions
    # from the group's committed offsets, not from scratch.
    got = sorted((p, o) for p, o, _ in a.seen() + d.seen())
    assert got == sorted((p, o) for p in range(3) for o in range(11))


_CRASHER = textwrap.dedent("""
    import os, sys
    from confluent_kafka import Consumer
    bootstrap, group, topic, mode = sys.argv[1:5]
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "session.timeout.ms": %d})
    c.subscribe([topic])
    while True:
        m = c.poll(1.0)
        if m is None or m.error():
            continue
        if mode == "process-then-crash":
            print("processed", m.value().decode(), flush=True)
            os._exit(9)  # crash before committing
        if mode == "commit-then-crash":
            c.commit(message=m, asynchronous=False)
            os._exit(9)  # crash before processing
        if mode == "hang":
            print("assigned", flush=True)
            while True:
                c.poll(0.5)
""" % SESSION_MS)


def _crasher(broker, group, topic, mode):
    return subprocess.Popen([sys.executable, "-c", _CRASHER, broker.bootstrap, group, topic, mode],
                            stdout=subprocess.PIPE, text=True)


@pytest.mark.parametrize("mode,first_seen", [("process-then-crash", "r0"), ("commit-then-crash", "r1")])
def test_seed000_crash_around_commit(broker, topic_name, members, mode, first_seen):
    """At-least-once (process, crash, never commit: processed again) and at-most-once (commit,
    crash before processing: the record is skipped by the group)."""
    create_topic(broker, topic_name, 1)
    produce(broker, topic_name, [(0, None, f"r{i}".encode()) for i in range(3)])
    group = f"g-{topic_name[-6:]}"
    proc = _crasher(broker, group, topic_name, mode)
    try:
        assert proc.wait(60) == 9
    finally:
        if proc.poll() is None:
            proc.kill()
    # The crashed member stays in the group until its session expires; then the next member
    # starts from the committed offset.
    b = members(broker, group, [topic_name])
    wait_for(lambda: b.seen(), 60, "the next member to read")
    assert b.seen()[0][2].decode() == first_seen


def test_seed000_kill9_member_partitions_move_after_session_timeout(broker, topic_name, members):
    create_topic(broker, topic_name, 3)
    group = f"g-{topic_name[-6:]}"
    proc = _crasher(broker, group, topic_name, "hang")
    try:
        produce(broker, topic_name, [(p, None, b"x") for p in range(3)])
        assert proc.stdout.readline().strip() == "assigned"
        a = members(broker, group, [topic_name])
        wait_for(lambda: len(a.owned()) in (1, 2), 60, "A to get its share")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        wait_for(lambda: len(a.owned()) == 3, 60, "A to take over after the session timeout")
    finally:
        if proc.poll() is None:
            proc.kill()


# ------------------------------------------------------------------------------ seed 002
def two_cooperative_members(broker, topic_name, members):
    """A 6-partition topic and two cooperative-sticky members holding 3 partitions each."""
    create_topic(broker, topic_name, 6)
    group = f"g-{topic_name[-6:]}"
    coop = {"partition.assignment.strategy": "cooperative-sticky"}
    c1 = members(broker, group, [topic_name], **coop)
    c2 = members(broker, group, [topic_name], **coop)
    wait_for(lambda: len(c1.owned()) == 3 and len(c2.owned()) == 3, 60, "a 3:3 split")
    return group, coop, c1, c2


def test_seed002_cooperative_third_member_revokes_only_what_moves(broker, topic_name, members):
    group, coop, c1, c2 = two_cooperative_members(broker, topic_name, members)
    before = {1: c1.owned(), 2: c2.owned()}
    n1, n2 = len(c1.event_log()), len(c2.event_log())
    c3 = members(broker, group, [topic_name], **coop)
    wait_for(lambda: all(len(c.owned()) == 2 for c in (c1, c2, c3)), 60, "a 2:2:2 split")
    moved = c3.owned()
    for idx, c, n in ((1, c1, n1), (2, c2, n2)):
        revoked = set().union(*[p for kind, p in c.event_log()[n:] if kind == "revoke"] or [set()])
        # Only partitions that went to c3 were revoked; the rest stayed (and kept being consumed).
        assert revoked <= moved, (idx, revoked, moved)
        assert before[idx] - revoked == c.owned()
    assert not any(kind == "lost" for c in (c1, c2, c3) for kind, _ in c.event_log())


def test_seed002_cooperative_rebalance_keeps_records_flowing(broker, topic_name, members):
    """While a third cooperative-sticky member joins, the members keep consuming the partitions
    they keep. c2 stops polling for a few seconds as c3 joins, so the rebalance cannot finish
    before c2 hands over its partition; meanwhile c1, which has already given up the partition
    that moves, still receives records of the partitions it keeps. (With an eager protocol c1
    would hold nothing from its revoke until the rebalance completes.)"""
    group, coop, c1, c2 = two_cooperative_members(broker, topic_name, members)
    stop = threading.Event()

    def keep_producing():
        p = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        i = 0
        while not stop.is_set():
            p.produce(topic_name, value=b"v%d" % i, partition=i % 6)
            p.poll(0)
            i += 1
            time.sleep(0.002)
        p.flush(30)

    producer = threading.Thread(target=keep_producing, daemon=True)
    producer.start()
    try:
        wait_for(lambda: len(c1.seen()) > 50 and len(c2.seen()) > 50, 60, "records flowing to both members")
        n1 = len(c1.event_log())
        c2.hold(True)
        c3 = members(broker, group, [topic_name], **coop)
        time.sleep(4)
        c2.hold(False)
        wait_for(lambda: all(len(c.owned()) == 2 for c in (c1, c2, c3)), 60, "a 2:2:2 split")
        assigned_at = next(t for (kind, parts), t in zip(c3.event_log(), c3.event_times) if kind == "assign" and parts)
    finally:
        stop.set()
        producer.join(30)
    with c1.lock:
        revoked_at = next(t for (kind, _), t in zip(c1.events[n1:], c1.event_times[n1:]) if kind == "revoke")
        during = {p for (p, _, _), t in zip(c1.records, c1.record_times) if revoked_at < t < assigned_at}
    kept = {p for _, p in c1.owned()}
    assert assigned_at - revoked_at > 1, (revoked_at, assigned_at)  # c2's pause held the rebalance open
    assert during and during <= kept, (during, kept)
    assert not any(kind == "lost" for c in (c1, c2, c3) for kind, _ in c.event_log())


def test_seed002_static_member_restart_causes_no_rebalance(broker, topic_name, members):
    create_topic(broker, topic_name, 4)
    group = f"g-{topic_name[-6:]}"
    s1 = members(broker, group, [topic_name], **{"group.instance.id": "s1", "session.timeout.ms": 15000})
    s2 = members(broker, group, [topic_name], **{"group.instance.id": "s2", "session.timeout.ms": 15000})
    wait_for(lambda: len(s1.owned()) == 2 and len(s2.owned()) == 2, 60, "a 2:2 split")
    time.sleep(1)
    owned_s2 = s2.owned()
    n1 = len(s1.event_log())
    s2.close()  # a static member does not leave the group on close
    s2b = members(broker, group, [topic_name], **{"group.instance.id": "s2", "session.timeout.ms": 15000})
    wait_for(lambda: len(s2b.owned()) == 2, 30, "the restarted static member to get its partitions")
    assert s2b.owned() == owned_s2
    time.sleep(2)
    assert s1.event_log()[n1:] == [], "the other member saw a rebalance"


def test_seed002_max_poll_interval_exceeded_moves_partitions(broker, topic_name, members):
    create_topic(broker, topic_name, 2)
    group = f"g-{topic_name[-6:]}"
    slow = members(broker, group, [topic_name], **{"max.poll.interval.ms": 7000})
    fast = members(broker, group, [topic_name])
    wait_for(lambda: len(slow.owned()) == 1 and len(fast.owned()) == 1, 60, "a 1:1 split")
    slow.hold(True)  # stops calling poll()
    wait_for(lambda: len(fast.owned()) == 2, 60, "the polling member to get both partitions")
    slow.hold(False)
    wait_for(lambda: len(slow.owned()) == 1 and len(fast.owned()) == 1, 60, "the slow member to rejoin")


def test_seed002_pause_resume_keeps_membership(broker, topic_name, members):
    create_topic(broker, topic_name, 2)
    group = f"g-{topic_name[-6:]}"
    a = members(broker, group, [topic_name])
    b = members(broker, group, [topic_name])
    wait_for(lambda: len(a.owned()) == 1 and len(b.owned()) == 1, 60, "a 1:1 split")
    na, nb = len(a.event_log()), len(b.event_log())
    a.consumer.pause([TopicPartition(t, p) for t, p in a.owned()])
    produce(broker, topic_name, [(p, None, b"y") for p in range(2) for _ in range(3)])
    time.sleep(SESSION_MS / 1000 + 2)  # longer than a session: heartbeats keep a paused member in
    assert len(a.seen()) == 0 and len(b.seen()) == 3
    a.consumer.resume([TopicPartition(t, p) for t, p in a.owned()])
    wait_for(lambda: len(a.seen()) == 3, 30, "the resumed member to read")
    assert a.event_log()[na:] == [] and b.event_log()[nb:] == []


# ------------------------------------------------------------------------------ weir: persistence
@pytest.mark.parametrize("how", ["graceful", "kill9"])
def test_committed_offsets_survive_restart(weir_factory, topic_name, how):
    w = weir_factory()
    create_topic(w, topic_name, 3)
    group = "persist"
    c = Consumer({"bootstrap.servers": w.bootstrap, "group.id": group})
    parts = [TopicPartition(topic_name, p, 10 + p) for p in range(3)]
    c.commit(offsets=parts, asynchronous=False)
    c.close()
    if how == "graceful":
        w.stop()
    else:
        w.kill()
    w.start()
    c = Consumer({"bootstrap.servers": w.bootstrap, "group.id": group})
    got = c.committed([TopicPartition(topic_name, p) for p in range(3)], timeout=30)
    c.close()
    assert [(tp.partition, tp.offset) for tp in got] == [(0, 10), (1, 11), (2, 12)]
    res, rows = describe(w, group)
    assert sorted(r["CURRENT-OFFSET"] for r in rows) == ["10", "11", "12"]


def test_deleting_the_offsets_topic_then_using_groups_again(weir_factory, topic_name, members):
    """Kafka lets an admin delete __consumer_offsets; groups then start over on a new one."""
    w = weir_factory()
    create_topic(w, topic_name, 2)
    c = Consumer({"bootstrap.servers": w.bootstrap, "group.id": "before"})
    c.commit(offsets=[TopicPartition(topic_name, 0, 7)], asynchronous=False)
    c.close()
    admin = AdminClient({"bootstrap.servers": w.bootstrap})
    admin.delete_topics(["__consumer_offsets"])["__consumer_offsets"].result(30)
    produce(w, topic_name, [(p, None, b"z") for p in range(2)])
    m = members(w, "after", [topic_name])
    wait_for(lambda: len(m.seen()) == 2, 60, "a new group to read after the delete")
    c = Consumer({"bootstrap.servers": w.bootstrap, "group.id": "before"})
    got = c.committed([TopicPartition(topic_name, 0)], timeout=30)
    c.close()
    assert got[0].offset < 0  # the old commits went with the topic


def test_only_kafkas_internal_topics_are_marked_internal(broker, topic_name):
    """Metadata's is_internal: true for __consumer_offsets, false for a user topic named __x."""
    from harness.kreq import Kreq

    user = "__" + topic_name
    create_topic(broker, user, 1)
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"g-{topic_name[-6:]}"})
    c.commit(offsets=[TopicPartition(user, 0, 1)], asynchronous=False)  # __consumer_offsets exists now
    c.close()
    with Kreq(broker) as k:
        md = k.send("Metadata", 12, {"Topics": [{"Topic": user}, {"Topic": "__consumer_offsets"}]})
    internal = {t["Topic"]: t["IsInternal"] for t in md["Topics"]}
    assert internal == {user: False, "__consumer_offsets": True}
