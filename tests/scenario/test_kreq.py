"""The raw-request tool (harness.kreq, tests/go/kreq) works against weir and the real Kafka:
requests at chosen versions decode, answers can be compared across brokers, malformed frames
close the connection (and kreq reconnects), and requests can be outstanding on two connections at
once (as JoinGroup needs)."""
from __future__ import annotations

import concurrent.futures
import time

import pytest
from confluent_kafka import Producer

from harness import wire
from harness.kreq import Kreq, KreqConnectionClosed, as_uuid, kreq_once

INVALID_TOPIC_EXCEPTION = 17
MEMBER_ID_REQUIRED = 79
COORDINATOR_NOT_READY = {14, 15, 16}  # load in progress, not available, not coordinator


def create_topic(k: Kreq, name: str, partitions: int = 1) -> dict:
    resp = k.send("CreateTopics", 7, {
        "Topics": [{"Topic": name, "NumPartitions": partitions, "ReplicationFactor": 1}],
        "TimeoutMillis": 15000,
    })
    [topic] = resp["Topics"]
    assert topic["ErrorCode"] == 0, topic
    return topic


def wait_for_leaders(k: Kreq, name: str, partitions: int, timeout: float = 15.0) -> dict:
    """Metadata v12 for one topic, once every partition has a leader."""
    deadline = time.monotonic() + timeout
    while True:
        md = k.send("Metadata", 12, {"Topics": [{"Topic": name}]})
        [topic] = md["Topics"]
        if (topic["ErrorCode"] == 0 and len(topic["Partitions"]) == partitions
                and all(p["Leader"] >= 0 for p in topic["Partitions"])):
            return md
        assert time.monotonic() < deadline, f"no leaders for {name} after {timeout}s: {md}"
        time.sleep(0.2)


def supports(k: Kreq, api: int, version: int) -> bool:
    resp = k.send("ApiVersions", 3, {"ClientSoftwareName": "kreq", "ClientSoftwareVersion": "1"})
    return any(a["ApiKey"] == api and a["MinVersion"] <= version <= a["MaxVersion"]
               for a in resp["ApiKeys"])


# --------------------------------------------------------------------------------- basics
def test_api_versions_v3_agrees_with_the_independent_codec(broker):
    resp = kreq_once(broker, "ApiVersions", 3,
                     {"ClientSoftwareName": "kreq", "ClientSoftwareVersion": "1.0"})

    assert resp["ErrorCode"] == 0
    ranges = {a["ApiKey"]: (a["MinVersion"], a["MaxVersion"]) for a in resp["ApiKeys"]}
    assert ranges[18][0] == 0 and ranges[18][1] >= 3
    assert wire.api_versions(broker.host, broker.port, 3).api_keys == ranges


def test_unsupported_api_versions_version_is_answered_in_v0(broker):
    with Kreq(broker) as k:
        answer = k.request("ApiVersions", 127, {})

    assert answer["ok"], answer
    assert answer["decoded_version"] == 0
    assert answer["response"]["ErrorCode"] == 35  # UNSUPPORTED_VERSION
    assert any(a["ApiKey"] == 18 for a in answer["response"]["ApiKeys"])


def test_metadata_v12_for_a_created_topic(broker, topic_name):
    with Kreq(broker) as k:
        created = create_topic(k, topic_name, partitions=3)
        md = wait_for_leaders(k, topic_name, 3)
        connections = {k.last_answer["connection"]}

    assert connections == {1}  # create and every metadata poll on one connection
    assert [(b["NodeID"], b["Host"], b["Port"]) for b in md["Brokers"]] == \
        [(broker.node_id, broker.host, broker.port)]
    assert md["ControllerID"] == broker.node_id
    [topic] = md["Topics"]
    assert topic["Topic"] == topic_name and topic["IsInternal"] is False
    assert as_uuid(topic["TopicID"]) == as_uuid(created["TopicID"])
    assert as_uuid(topic["TopicID"]).int != 0
    parts = sorted(topic["Partitions"], key=lambda p: p["Partition"])
    assert [p["Partition"] for p in parts] == [0, 1, 2]
    for p in parts:
        assert (p["ErrorCode"], p["Leader"], p["Replicas"], p["ISR"]) == \
            (0, broker.node_id, [broker.node_id], [broker.node_id])


@pytest.mark.differential
def test_create_topics_v7_invalid_names_answer_like_kafka(weir, kafka):
    names = ["bad/name", "has space", "", ".", "..", "x" * 250]
    codes = {}
    for b in (weir, kafka):
        resp = kreq_once(b, "CreateTopics", 7, {
            "Topics": [{"Topic": n, "NumPartitions": 1, "ReplicationFactor": 1} for n in names],
            "TimeoutMillis": 15000,
        })
        codes[b.kind] = {t["Topic"]: t["ErrorCode"] for t in resp["Topics"]}

    assert codes["kafka"]["bad/name"] == INVALID_TOPIC_EXCEPTION
    assert codes["weir"] == codes["kafka"]


def test_a_misspelt_body_field_is_refused_before_sending(broker):
    with Kreq(broker) as k:
        answer = k.request("Metadata", 12, {"Topicz": []})
    assert not answer["ok"] and "no field" in answer["error"], answer


# ----------------------------------------------------------------------- malformed input
@pytest.mark.parametrize("payload, framed", [
    pytest.param(bytes.fromhex("0012"), True, id="truncated-header"),
    pytest.param(bytes.fromhex("ffffffff"), False, id="negative-size"),
])
def test_malformed_frame_closes_the_connection_and_kreq_reconnects(broker, payload, framed):
    with Kreq(broker, timeout=10) as k:
        first = k.send("ApiVersions", 0, {})
        assert first["ErrorCode"] == 0 and k.last_answer["connection"] == 1

        assert k.send_raw(payload, framed=framed) is None  # closed, no answer

        with pytest.raises(KreqConnectionClosed):
            k.send("Metadata", 12, {"Topics": []}, body_hex="ff")
        again = k.send("ApiVersions", 3, {"ClientSoftwareName": "kreq", "ClientSoftwareVersion": "1"},
                       allow_closed=True)
        assert again["ErrorCode"] == 0
        assert k.last_answer["connection"] == 3


# ------------------------------------------------------------------------- concurrency
def fetch_body(topic: str, max_wait_ms: int) -> dict:
    return {"MaxWaitMillis": max_wait_ms, "MinBytes": 1, "MaxBytes": 1 << 20,
            "Topics": [{"Topic": topic,
                        "Partitions": [{"Partition": 0, "FetchOffset": 0, "PartitionMaxBytes": 1 << 20}]}]}


def wait_until_fetchable(k: Kreq, name: str, timeout: float = 30.0) -> None:
    """Metadata can name a leader before that broker serves the partition (Kafka answers
    NOT_LEADER_OR_FOLLOWER until its replica manager has become leader): wait for a Fetch to work."""
    deadline = time.monotonic() + timeout
    while True:
        resp = k.send("Fetch", 12, fetch_body(name, 0))
        [part] = resp["Topics"][0]["Partitions"]
        if resp["ErrorCode"] == 0 and part["ErrorCode"] == 0:
            return
        assert time.monotonic() < deadline, f"{name}-0 not fetchable after {timeout}s: {resp}"
        time.sleep(0.2)


def test_long_polls_on_two_connections_are_outstanding_at_once(broker, topic_name):
    with Kreq(broker) as a, Kreq(broker) as b:
        create_topic(a, topic_name)
        wait_for_leaders(a, topic_name, 1)
        wait_until_fetchable(a, topic_name)
        # a long poll on one connection, then a short one on another: the short one must be
        # answered while the long one still waits. Served one after the other, b's answer would
        # come only after a's 60 s.
        slow = a.send_async("Fetch", 12, fetch_body(topic_name, 60000), timeout=120)
        short = b.wait(b.send_async("Fetch", 12, fetch_body(topic_name, 300)), timeout=45)
        assert not slow.done(), "the long poll was answered before its wait or a record"
        # A record ends the long poll.
        p = Producer({"bootstrap.servers": broker.bootstrap})
        p.produce(topic_name, partition=0, value=b"wake")
        assert p.flush(30) == 0
        woken = a.wait(slow, timeout=90)

    for resp, hw in ((short, 0), (woken, 1)):
        assert resp["ErrorCode"] == 0
        [part] = resp["Topics"][0]["Partitions"]
        assert part["ErrorCode"] == 0 and part["HighWatermark"] == hw, part


def join_body(group: str, member_id: str) -> dict:
    return {"Group": group, "SessionTimeoutMillis": 30000, "RebalanceTimeoutMillis": 20000,
            "MemberID": member_id, "ProtocolType": "kreq-test",
            "Protocols": [{"Name": "only", "Metadata": b"m"}]}


def join(k: Kreq, group: str, timeout: float = 60.0) -> str:
    """First JoinGroup v9 of a new member: the broker hands out the member id. Retried while the
    group coordinator is not there yet (the first group creates __consumer_offsets)."""
    deadline = time.monotonic() + timeout
    while True:
        coord = k.send("FindCoordinator", 4, {"CoordinatorType": 0, "CoordinatorKeys": [group]})
        [c] = coord["Coordinators"]
        if c["ErrorCode"] == 0:
            resp = k.send("JoinGroup", 9, join_body(group, ""))
            if resp["ErrorCode"] not in COORDINATOR_NOT_READY:
                assert resp["ErrorCode"] == MEMBER_ID_REQUIRED, resp
                return resp["MemberID"]
        assert time.monotonic() < deadline, f"no group coordinator for {group}: {coord}"
        time.sleep(0.2)


def test_join_group_blocks_until_the_other_member_rejoins(broker, topic_name):
    group = f"g-{topic_name}"
    with Kreq(broker) as a, Kreq(broker) as b:
        if not supports(a, 11, 9):
            pytest.skip(f"{broker.kind} does not serve JoinGroup v9")
        # a alone: a stable group of one (JoinGroup, then SyncGroup on the same connection).
        ma = join(a, group)
        first = a.send("JoinGroup", 9, join_body(group, ma))
        assert (first["ErrorCode"], first["LeaderID"], first["Generation"]) == (0, ma, 1)
        sync = a.send("SyncGroup", 5, {
            "Group": group, "Generation": 1, "MemberID": ma, "ProtocolType": "kreq-test",
            "Protocol": "only", "GroupAssignment": [{"MemberID": ma, "MemberAssignment": b"x"}]})
        assert sync["ErrorCode"] == 0 and sync["MemberAssignment"] == "eA=="  # b"x"

        # b's join waits for a to rejoin: two requests outstanding on two connections.
        mb = join(b, group)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            fb = pool.submit(b.send, "JoinGroup", 9, join_body(group, mb))
            time.sleep(1.0)
            assert not fb.done(), "JoinGroup of the second member returned before a rejoined"
            fa = pool.submit(a.send, "JoinGroup", 9, join_body(group, ma))
            ra, rb = fa.result(timeout=30), fb.result(timeout=30)

        for r in (ra, rb):
            assert (r["ErrorCode"], r["Generation"], r["LeaderID"]) == (0, 2, ma)
        assert sorted(m["MemberID"] for m in ra["Members"]) == sorted([ma, mb])
        assert rb["Members"] == []
        left = a.send("LeaveGroup", 5, {"Group": group,
                                        "Members": [{"MemberID": ma}, {"MemberID": mb}]})
        assert left["ErrorCode"] == 0


def test_a_long_poll_is_woken_by_an_append_racing_its_watch(broker, topic_name):
    """A Fetch that found nothing waits for appends to its partitions; an append landing while the
    fetch is still setting its watches must wake it (the wake-up once ran before the wait began and
    was lost, and the fetch slept to its MaxWaitMillis). Each round sends a long poll, then at once
    a produce, and the answer must carry the record well before the wait would have ended."""
    from test_fetch_sessions import produce
    wait_ms = 20_000
    with Kreq(broker) as fetcher, Kreq(broker) as producer:
        create_topic(fetcher, topic_name, 2)
        wait_for_leaders(fetcher, topic_name, 2)
        offsets = [0, 0]
        deadline = time.monotonic() + 30  # Kafka answers NOT_LEADER_OR_FOLLOWER for a moment
        while True:
            probe = fetcher.send("Fetch", 12, {"MaxWaitMillis": 0, "MinBytes": 1, "MaxBytes": 1 << 20, "Topics": [
                {"Topic": topic_name, "Partitions": [
                    {"Partition": p, "FetchOffset": 0, "PartitionMaxBytes": 1 << 20} for p in (0, 1)]}]})
            if all(p["ErrorCode"] == 0 for p in probe["Topics"][0]["Partitions"]):
                break
            assert time.monotonic() < deadline, probe
            time.sleep(0.2)
        slow = []
        for i in range(60):
            fetch = {"MaxWaitMillis": wait_ms, "MinBytes": 1, "MaxBytes": 1 << 20,
                     "Topics": [{"Topic": topic_name, "Partitions": [
                         {"Partition": p, "FetchOffset": offsets[p], "PartitionMaxBytes": 1 << 20}
                         for p in (0, 1)]}]}
            t0 = time.monotonic()
            call = fetcher.send_async("Fetch", 12, fetch)
            produce(producer, topic_name, i % 2, b"r%d" % i)
            resp = fetcher.wait(call, timeout=wait_ms / 1000 + 30)
            elapsed = time.monotonic() - t0
            got = {p["Partition"]: p for p in resp["Topics"][0]["Partitions"]}
            assert got[i % 2]["ErrorCode"] == 0 and got[i % 2]["RecordBatches"], resp
            offsets[i % 2] += 1
            if elapsed > wait_ms / 2000:
                slow.append((i, round(elapsed, 1)))
    assert not slow, f"fetches that slept to their deadline with data waiting (round, seconds): {slow}"
