"""Consumer-group requests with bad input, sent raw (harness.kreq) to weir and to Apache Kafka.

Every test runs against both brokers and asserts what Kafka 4.3.1 answers; the error codes below
are the ones Kafka was seen to return for these requests. After each refused request the test
checks that nothing was damaged: the group still works and committed offsets are unchanged.

Groups here are driven by hand (JoinGroup, SyncGroup, Heartbeat, ...) with the "consumer" protocol
type and real ConsumerProtocolSubscription metadata, so the coordinator knows which topics a member
subscribes to (OffsetDelete looks at that).
"""
from __future__ import annotations

import struct
import time

import pytest

from harness.kreq import Kreq

# Kafka's error codes (org.apache.kafka.common.protocol.Errors), as Kafka 4.3.1 answers them here.
NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
INVALID_SESSION_TIMEOUT = 26
INVALID_REQUEST = 42
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
MEMBER_ID_REQUIRED = 79
GROUP_SUBSCRIBED_TO_TOPIC = 86

COORDINATOR_NOT_READY = {COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR}
# Errors.INVALID_REQUEST.message(), which Kafka puts in FindCoordinator answers to unknown key types.
INVALID_REQUEST_MESSAGE = (
    "This most likely occurs because of a request being malformed by the client library or the "
    "message was sent to an incompatible broker. See the broker logs for more details.")

MIN_SESSION_TIMEOUT_MS = 6000  # group.min.session.timeout.ms (Kafka's default; weir's too)
MAX_SESSION_TIMEOUT_MS = 1_800_000  # group.max.session.timeout.ms
CLIENT_ID = "bad-input"
PROTOCOL = "range"


# ------------------------------------------------------------------------------------ helpers
def subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0: topics, then null user data."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def join_body(group: str, member_id: str = "", *, session_ms: int = 30000, topics=(),
              protocol_type: str = "consumer") -> dict:
    return {"Group": group, "SessionTimeoutMillis": session_ms, "RebalanceTimeoutMillis": 20000,
            "MemberID": member_id, "ProtocolType": protocol_type,
            "Protocols": [{"Name": PROTOCOL, "Metadata": subscription(*topics)}]}


def create_topic(k: Kreq, name: str, partitions: int) -> None:
    resp = k.send("CreateTopics", 7, {
        "Topics": [{"Topic": name, "NumPartitions": partitions, "ReplicationFactor": 1}],
        "TimeoutMillis": 15000})
    assert resp["Topics"][0]["ErrorCode"] == NONE, resp
    deadline = time.monotonic() + 15
    while True:
        md = k.send("Metadata", 12, {"Topics": [{"Topic": name}]})
        parts = md["Topics"][0]["Partitions"]
        if len(parts) == partitions and all(p["Leader"] >= 0 for p in parts):
            return
        assert time.monotonic() < deadline, md
        time.sleep(0.1)


def wait_for_coordinator(k: Kreq, group: str, timeout: float = 60.0) -> None:
    """Until the group's coordinator answers group requests. A fresh Kafka first answers
    COORDINATOR_NOT_AVAILABLE (creating __consumer_offsets), then NOT_COORDINATOR or
    COORDINATOR_LOAD_IN_PROGRESS while it loads the partition; weir is ready at once."""
    deadline = time.monotonic() + timeout
    while True:
        fc = k.send("FindCoordinator", 4, {"CoordinatorType": 0, "CoordinatorKeys": [group]})
        if fc["Coordinators"][0]["ErrorCode"] == NONE:
            dg = k.send("DescribeGroups", 5, {"Groups": [group]})
            if dg["Groups"][0]["ErrorCode"] not in COORDINATOR_NOT_READY:
                return
        assert time.monotonic() < deadline, f"no coordinator for {group} after {timeout}s: {fc}"
        time.sleep(0.2)


def join(k: Kreq, group: str, topics=(), version: int = 9) -> tuple[str, int]:
    """A new member of a one-member group: JoinGroup (MEMBER_ID_REQUIRED, then again with the
    id), SyncGroup as the leader. Returns (member id, generation); the group is Stable."""
    first = k.send("JoinGroup", version, join_body(group, topics=topics))
    assert first["ErrorCode"] == MEMBER_ID_REQUIRED, first
    member = first["MemberID"]
    joined = k.send("JoinGroup", version, join_body(group, member, topics=topics))
    assert joined["ErrorCode"] == NONE and joined["LeaderID"] == member, joined
    gen = joined["Generation"]
    sync(k, group, member, gen)
    return member, gen


def sync(k: Kreq, group: str, member: str, gen: int) -> dict:
    resp = k.send("SyncGroup", 5, {
        "Group": group, "Generation": gen, "MemberID": member, "ProtocolType": "consumer",
        "Protocol": PROTOCOL, "GroupAssignment": [{"MemberID": member, "MemberAssignment": b""}]})
    assert resp["ErrorCode"] == NONE, resp
    return resp


def heartbeat(k: Kreq, group: str, member: str, gen: int) -> int:
    return k.send("Heartbeat", 4, {"Group": group, "Generation": gen, "MemberID": member})["ErrorCode"]


def commit(k: Kreq, group: str, gen: int, member: str, offsets: dict, version: int = 9) -> dict:
    """OffsetCommit {(topic, partition): offset}; returns {(topic, partition): error code}."""
    topics: dict[str, list] = {}
    for (t, p), off in offsets.items():
        topics.setdefault(t, []).append({"Partition": p, "Offset": off})
    resp = k.send("OffsetCommit", version, {
        "Group": group, "Generation": gen, "MemberID": member,
        "Topics": [{"Topic": t, "Partitions": ps} for t, ps in topics.items()]})
    return {(t["Topic"], p["Partition"]): p["ErrorCode"] for t in resp["Topics"] for p in t["Partitions"]}


def fetch(k: Kreq, group: str, topic: str | None = None, partitions=()) -> dict:
    """OffsetFetch v8 for one group: {(topic, partition): offset} (all the group's offsets when
    topic is None). Asserts the group and partition error codes are 0."""
    topics = None if topic is None else [{"Topic": topic, "Partitions": list(partitions)}]
    resp = k.send("OffsetFetch", 8, {"Groups": [{"Group": group, "Topics": topics}]})
    [g] = resp["Groups"]
    assert g["Group"] == group and g["ErrorCode"] == NONE, resp
    out = {}
    for t in g["Topics"]:
        for p in t["Partitions"]:
            assert p["ErrorCode"] == NONE, resp
            out[(t["Topic"], p["Partition"])] = p["Offset"]
    return out


def describe(k: Kreq, group: str, version: int = 5) -> dict:
    [g] = k.send("DescribeGroups", version, {"Groups": [group]})["Groups"]
    assert g["Group"] == group
    return g


def listed(k: Kreq) -> dict[str, str]:
    """ListGroups v5: {group: state}."""
    return {g["Group"]: g["GroupState"] for g in k.send("ListGroups", 5, {})["Groups"]}


@pytest.fixture
def k(broker):
    with Kreq(broker, client_id=CLIENT_ID) as kreq:
        yield kreq


@pytest.fixture
def group(topic_name):
    return f"g-{topic_name}"


# ------------------------------------------------------------------------- FindCoordinator
def test_find_coordinator_v3_and_batched_v4_name_this_broker(broker, k, group):
    deadline = time.monotonic() + 60
    while True:  # Kafka: COORDINATOR_NOT_AVAILABLE until __consumer_offsets exists
        v3 = k.send("FindCoordinator", 3, {"CoordinatorType": 0, "CoordinatorKey": group})
        if v3["ErrorCode"] != COORDINATOR_NOT_AVAILABLE or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert (v3["ErrorCode"], v3["ErrorMessage"], v3["NodeID"], v3["Host"], v3["Port"]) == \
        (NONE, "NONE", broker.node_id, broker.host, broker.port)

    keys = [group, f"{group}-other", f"{group}-third"]
    v4 = k.send("FindCoordinator", 4, {"CoordinatorType": 0, "CoordinatorKeys": keys})
    # v4 answers per key; Kafka leaves the per-key error message empty on success.
    assert [(c["Key"], c["ErrorCode"], c["ErrorMessage"], c["NodeID"], c["Host"], c["Port"])
            for c in v4["Coordinators"]] == \
        [(key, NONE, "", broker.node_id, broker.host, broker.port) for key in keys]


def test_find_coordinator_unknown_key_type_is_invalid_request(broker, k, group):
    v3 = k.send("FindCoordinator", 3, {"CoordinatorType": 7, "CoordinatorKey": group})
    assert (v3["ErrorCode"], v3["ErrorMessage"], v3["NodeID"], v3["Host"], v3["Port"]) == \
        (INVALID_REQUEST, INVALID_REQUEST_MESSAGE, -1, "", -1)

    v4 = k.send("FindCoordinator", 4, {"CoordinatorType": 7, "CoordinatorKeys": [group, "x"]})
    assert [(c["Key"], c["ErrorCode"], c["ErrorMessage"], c["NodeID"], c["Host"], c["Port"])
            for c in v4["Coordinators"]] == \
        [(key, INVALID_REQUEST, INVALID_REQUEST_MESSAGE, -1, "", -1) for key in (group, "x")]

    # Share groups are off in this cluster: Kafka refuses their key type per key (v4+, no
    # message) or for the request (v3, with the message).
    share = k.send("FindCoordinator", 6, {"CoordinatorType": 2, "CoordinatorKeys": [f"{group}:t:0"]})
    assert [(c["ErrorCode"], c["ErrorMessage"], c["NodeID"]) for c in share["Coordinators"]] == \
        [(INVALID_REQUEST, "", -1)]
    share_v3 = k.send("FindCoordinator", 3, {"CoordinatorType": 2, "CoordinatorKey": group})
    assert (share_v3["ErrorCode"], share_v3["ErrorMessage"], share_v3["NodeID"]) == \
        (INVALID_REQUEST, INVALID_REQUEST_MESSAGE, -1)

    # The connection and the group coordinator are fine afterwards.
    wait_for_coordinator(k, group)


# ------------------------------------------------------------------------------- JoinGroup
def test_join_group_refuses_empty_group_id_and_session_timeouts_out_of_range(k, group, topic_name):
    create_topic(k, topic_name, 1)
    wait_for_coordinator(k, group)

    empty = k.send("JoinGroup", 9, join_body("", topics=[topic_name]))
    assert (empty["ErrorCode"], empty["MemberID"], empty["Generation"]) == (INVALID_GROUP_ID, "", -1)
    assert empty["Protocol"] is None  # v7+: Kafka's error answers carry a null protocol name

    for session_ms in (MIN_SESSION_TIMEOUT_MS - 1, MAX_SESSION_TIMEOUT_MS + 1, 0):
        resp = k.send("JoinGroup", 9, join_body(group, session_ms=session_ms, topics=[topic_name]))
        assert (resp["ErrorCode"], resp["MemberID"], resp["Generation"], resp["Protocol"]) == \
            (INVALID_SESSION_TIMEOUT, "", -1, None), session_ms

    # None of that created the group ...
    assert (describe(k, group)["State"], describe(k, group)["Members"]) == ("Dead", [])
    assert group not in listed(k)
    # ... and the bounds themselves are accepted.
    first = k.send("JoinGroup", 9, join_body(group, session_ms=MIN_SESSION_TIMEOUT_MS,
                                             topics=[topic_name]))
    assert first["ErrorCode"] == MEMBER_ID_REQUIRED
    joined = k.send("JoinGroup", 9, join_body(group, first["MemberID"],
                                              session_ms=MIN_SESSION_TIMEOUT_MS, topics=[topic_name]))
    assert (joined["ErrorCode"], joined["Generation"]) == (NONE, 1)
    left = k.send("LeaveGroup", 5, {"Group": group, "Members": [{"MemberID": first["MemberID"]}]})
    assert left["ErrorCode"] == NONE and left["Members"][0]["ErrorCode"] == NONE


def test_join_group_v4_requires_a_member_id_then_the_rejoin_succeeds(k, group, topic_name):
    create_topic(k, topic_name, 2)
    wait_for_coordinator(k, group)

    first = k.send("JoinGroup", 4, join_body(group, topics=[topic_name]))
    member = first["MemberID"]
    assert first["ErrorCode"] == MEMBER_ID_REQUIRED
    assert member.startswith(f"{CLIENT_ID}-") and len(member) == len(CLIENT_ID) + 1 + 36, member
    assert (first["Generation"], first["LeaderID"], first["Members"]) == (-1, "", [])
    # The id is only pending: the group has no member yet.
    assert describe(k, group)["Members"] == []

    # Another id the coordinator never handed out is refused ...
    bogus = k.send("JoinGroup", 4, join_body(group, f"{CLIENT_ID}-not-handed-out", topics=[topic_name]))
    assert bogus["ErrorCode"] == UNKNOWN_MEMBER_ID
    # ... the handed-out one joins.
    joined = k.send("JoinGroup", 4, join_body(group, member, topics=[topic_name]))
    assert (joined["ErrorCode"], joined["Generation"], joined["LeaderID"], joined["MemberID"],
            joined["Protocol"]) == (NONE, 1, member, member, PROTOCOL)
    assert [m["MemberID"] for m in joined["Members"]] == [member]

    # SyncGroup v5+ must name the protocol type and name (Kafka checks before the coordinator).
    nameless = k.send("SyncGroup", 5, {"Group": group, "Generation": 1, "MemberID": member,
                                       "GroupAssignment": [{"MemberID": member, "MemberAssignment": b""}]})
    assert nameless["ErrorCode"] == INCONSISTENT_GROUP_PROTOCOL
    synced = sync(k, group, member, 1)
    assert (synced["ProtocolType"], synced["Protocol"]) == ("consumer", PROTOCOL)
    desc = describe(k, group)
    assert (desc["State"], desc["ProtocolType"], desc["Protocol"]) == ("Stable", "consumer", PROTOCOL)
    assert [(m["MemberID"], m["ClientID"], m["ClientHost"]) for m in desc["Members"]] == \
        [(member, CLIENT_ID, "/127.0.0.1")]
    assert heartbeat(k, group, member, 1) == NONE


# --------------------------------------------------------- unknown members, stale generations
def test_unknown_member_id_is_refused_by_sync_heartbeat_and_commit(k, group, topic_name):
    create_topic(k, topic_name, 2)
    wait_for_coordinator(k, group)
    member, gen = join(k, group, [topic_name])
    assert commit(k, group, gen, member, {(topic_name, 0): 5, (topic_name, 1): 7}) == \
        {(topic_name, 0): NONE, (topic_name, 1): NONE}

    stranger = f"{CLIENT_ID}-00000000-0000-4000-8000-000000000000"
    resp = k.send("SyncGroup", 5, {"Group": group, "Generation": gen, "MemberID": stranger,
                                   "ProtocolType": "consumer", "Protocol": PROTOCOL,
                                   "GroupAssignment": [{"MemberID": stranger, "MemberAssignment": b""}]})
    assert resp["ErrorCode"] == UNKNOWN_MEMBER_ID
    assert heartbeat(k, group, stranger, gen) == UNKNOWN_MEMBER_ID
    assert commit(k, group, gen, stranger, {(topic_name, 0): 99}) == {(topic_name, 0): UNKNOWN_MEMBER_ID}
    # A group that does not exist knows no member either.
    assert heartbeat(k, f"{group}-nowhere", member, gen) == UNKNOWN_MEMBER_ID

    assert heartbeat(k, group, member, gen) == NONE
    assert fetch(k, group) == {(topic_name, 0): 5, (topic_name, 1): 7}
    desc = describe(k, group)
    assert desc["State"] == "Stable" and [m["MemberID"] for m in desc["Members"]] == [member]


def test_stale_generation_is_illegal_generation(k, group, topic_name):
    create_topic(k, topic_name, 1)
    wait_for_coordinator(k, group)
    member, gen1 = join(k, group, [topic_name])
    assert commit(k, group, gen1, member, {(topic_name, 0): 3}) == {(topic_name, 0): NONE}
    # The leader rejoining a Stable group starts the next generation.
    again = k.send("JoinGroup", 9, join_body(group, member, topics=[topic_name]))
    assert (again["ErrorCode"], again["Generation"]) == (NONE, gen1 + 1)
    gen2 = again["Generation"]
    sync(k, group, member, gen2)

    assert heartbeat(k, group, member, gen1) == ILLEGAL_GENERATION
    assert commit(k, group, gen1, member, {(topic_name, 0): 50}) == {(topic_name, 0): ILLEGAL_GENERATION}
    assert commit(k, group, gen2 + 1, member, {(topic_name, 0): 51}) == {(topic_name, 0): ILLEGAL_GENERATION}
    stale_sync = k.send("SyncGroup", 5, {"Group": group, "Generation": gen1, "MemberID": member,
                                         "ProtocolType": "consumer", "Protocol": PROTOCOL})
    assert stale_sync["ErrorCode"] == ILLEGAL_GENERATION
    # The current generation still works and the refused commits changed nothing.
    assert fetch(k, group) == {(topic_name, 0): 3}
    assert heartbeat(k, group, member, gen2) == NONE
    assert commit(k, group, gen2, member, {(topic_name, 0): 4}) == {(topic_name, 0): NONE}
    assert fetch(k, group) == {(topic_name, 0): 4}


# ------------------------------------------------------------------------------ OffsetCommit
def test_commit_with_generation_minus_one_only_to_a_group_without_members(k, group, topic_name):
    create_topic(k, topic_name, 2)
    simple = f"{group}-simple"
    wait_for_coordinator(k, simple)
    wait_for_coordinator(k, group)

    # No such group: a "simple" commit (admin client, manual assignment) creates an empty group.
    assert commit(k, simple, -1, "", {(topic_name, 0): 11, (topic_name, 1): 12}) == \
        {(topic_name, 0): NONE, (topic_name, 1): NONE}
    assert fetch(k, simple) == {(topic_name, 0): 11, (topic_name, 1): 12}
    desc = describe(k, simple)
    assert (desc["ErrorCode"], desc["State"], desc["ProtocolType"], desc["Members"]) == \
        (NONE, "Empty", "", [])
    assert commit(k, simple, -1, "", {(topic_name, 0): 13}) == {(topic_name, 0): NONE}
    assert fetch(k, simple) == {(topic_name, 0): 13, (topic_name, 1): 12}

    # A group with a live member refuses commits from outside it.
    member, gen = join(k, group, [topic_name])
    assert commit(k, group, gen, member, {(topic_name, 0): 2}) == {(topic_name, 0): NONE}
    assert commit(k, group, -1, "", {(topic_name, 0): 40}) == {(topic_name, 0): UNKNOWN_MEMBER_ID}
    # generation -1 with a member id is checked as a member commit: the generation is wrong
    assert commit(k, group, -1, member, {(topic_name, 0): 41}) == {(topic_name, 0): ILLEGAL_GENERATION}
    # From v9 a commit with a generation to a group that does not exist is GROUP_ID_NOT_FOUND,
    # before that ILLEGAL_GENERATION.
    assert commit(k, f"{group}-nowhere", 3, member, {(topic_name, 0): 1}) == \
        {(topic_name, 0): GROUP_ID_NOT_FOUND}
    assert commit(k, f"{group}-nowhere", 3, member, {(topic_name, 0): 1}, version=8) == \
        {(topic_name, 0): ILLEGAL_GENERATION}
    assert describe(k, f"{group}-nowhere")["State"] == "Dead"

    assert fetch(k, group) == {(topic_name, 0): 2}
    assert heartbeat(k, group, member, gen) == NONE
    # Once the member left, the group is empty and takes simple commits.
    left = k.send("LeaveGroup", 5, {"Group": group, "Members": [{"MemberID": member}]})
    assert left["Members"][0]["ErrorCode"] == NONE
    assert commit(k, group, -1, "", {(topic_name, 0): 42}) == {(topic_name, 0): NONE}
    assert fetch(k, group) == {(topic_name, 0): 42}


def test_commit_to_unknown_topic_or_partition(k, group, topic_name):
    create_topic(k, topic_name, 2)
    wait_for_coordinator(k, group)
    member, gen = join(k, group, [topic_name])
    missing = f"{topic_name}-missing"

    assert commit(k, group, gen, member, {(missing, 0): 1}) == {(missing, 0): UNKNOWN_TOPIC_OR_PARTITION}
    # In one request: a good partition, one past the end, a negative one.
    assert commit(k, group, gen, member, {(topic_name, 0): 8, (topic_name, 2): 9, (topic_name, -1): 10}) == \
        {(topic_name, 0): NONE, (topic_name, 2): UNKNOWN_TOPIC_OR_PARTITION,
         (topic_name, -1): UNKNOWN_TOPIC_OR_PARTITION}
    assert fetch(k, group) == {(topic_name, 0): 8}
    assert heartbeat(k, group, member, gen) == NONE

    # A simple commit that names only unknown partitions does not create the group.
    ghost = f"{group}-ghost"
    wait_for_coordinator(k, ghost)
    assert commit(k, ghost, -1, "", {(missing, 0): 1, (topic_name, 5): 2}) == \
        {(missing, 0): UNKNOWN_TOPIC_OR_PARTITION, (topic_name, 5): UNKNOWN_TOPIC_OR_PARTITION}
    assert describe(k, ghost)["State"] == "Dead"
    assert ghost not in listed(k)


def test_offset_apis_accept_the_empty_group_id(k, topic_name):
    """Kafka keeps the empty group id usable for OffsetCommit/OffsetFetch/DescribeGroups/
    DeleteGroups (backwards compatibility); the membership APIs refuse it."""
    create_topic(k, topic_name, 1)
    wait_for_coordinator(k, "")
    assert commit(k, "", -1, "", {(topic_name, 0): 6}) == {(topic_name, 0): NONE}
    assert fetch(k, "", topic_name, [0]) == {(topic_name, 0): 6}
    assert describe(k, "")["State"] == "Empty"
    assert heartbeat(k, "", "m", 1) == INVALID_GROUP_ID
    resp = k.send("OffsetDelete", 0, {"Group": "", "Topics": [{"Topic": topic_name,
                                                               "Partitions": [{"Partition": 0}]}]})
    assert resp["ErrorCode"] == INVALID_GROUP_ID
    assert fetch(k, "", topic_name, [0]) == {(topic_name, 0): 6}
    deleted = k.send("DeleteGroups", 2, {"Groups": [""]})
    assert [(g["Group"], g["ErrorCode"]) for g in deleted["Groups"]] == [("", NONE)]
    assert fetch(k, "", topic_name, [0]) == {(topic_name, 0): -1}


# ------------------------------------------------------------------------------- OffsetFetch
def test_offset_fetch_for_a_group_that_never_committed(k, group, topic_name):
    create_topic(k, topic_name, 2)
    wait_for_coordinator(k, group)

    resp = k.send("OffsetFetch", 8, {"Groups": [{"Group": group, "Topics": [
        {"Topic": topic_name, "Partitions": [0, 1]}]}]})
    [g] = resp["Groups"]
    assert (g["Group"], g["ErrorCode"]) == (group, NONE)
    assert [(t["Topic"], [(p["Partition"], p["Offset"], p["LeaderEpoch"], p["Metadata"], p["ErrorCode"])
                          for p in t["Partitions"]]) for t in g["Topics"]] == \
        [(topic_name, [(0, -1, -1, "", NONE), (1, -1, -1, "", NONE)])]
    assert fetch(k, group) == {}  # all topics: none

    old = k.send("OffsetFetch", 5, {"Group": group, "Topics": [{"Topic": topic_name, "Partitions": [1]}]})
    assert old["ErrorCode"] == NONE
    assert [(p["Partition"], p["Offset"], p["ErrorCode"]) for t in old["Topics"] for p in t["Partitions"]] \
        == [(1, -1, NONE)]
    # Asking did not create the group.
    assert describe(k, group)["State"] == "Dead"
    assert group not in listed(k)


# ---------------------------------------------------------------- DeleteGroups, DescribeGroups
def test_delete_groups_refuses_non_empty_and_unknown_groups(k, group, topic_name):
    create_topic(k, topic_name, 1)
    live, simple, unknown = group, f"{group}-simple", f"{group}-unknown"
    for g in (live, simple, unknown):
        wait_for_coordinator(k, g)
    member, gen = join(k, live, [topic_name])
    assert commit(k, live, gen, member, {(topic_name, 0): 4}) == {(topic_name, 0): NONE}
    assert commit(k, simple, -1, "", {(topic_name, 0): 9}) == {(topic_name, 0): NONE}

    resp = k.send("DeleteGroups", 2, {"Groups": [live, unknown, simple]})
    # (Kafka answers in its own order.)
    assert {g["Group"]: g["ErrorCode"] for g in resp["Groups"]} == \
        {live: NON_EMPTY_GROUP, unknown: GROUP_ID_NOT_FOUND, simple: NONE}
    assert len(resp["Groups"]) == 3

    # The live group is untouched, the empty one is gone with its offsets.
    assert heartbeat(k, live, member, gen) == NONE
    assert fetch(k, live) == {(topic_name, 0): 4}
    assert describe(k, live)["State"] == "Stable"
    assert fetch(k, simple, topic_name, [0]) == {(topic_name, 0): -1}
    assert describe(k, simple)["State"] == "Dead"
    groups = listed(k)
    assert groups.get(live) == "Stable" and simple not in groups and unknown not in groups


def test_describe_unknown_group(k, group):
    wait_for_coordinator(k, group)
    v5 = describe(k, group, 5)
    assert (v5["ErrorCode"], v5["ErrorMessage"], v5["State"], v5["ProtocolType"], v5["Protocol"],
            v5["Members"]) == (NONE, None, "Dead", "", "", [])
    v6 = describe(k, group, 6)  # KIP-1043: v6 says so with an error
    assert (v6["ErrorCode"], v6["ErrorMessage"], v6["State"], v6["Members"]) == \
        (GROUP_ID_NOT_FOUND, f"Group {group} not found.", "Dead", [])


# ------------------------------------------------------------------------------- OffsetDelete
def test_offset_delete_of_a_live_group_spares_subscribed_topics(k, group, topic_name):
    other = f"{topic_name}-other"
    create_topic(k, topic_name, 2)
    create_topic(k, other, 2)
    wait_for_coordinator(k, group)
    member, gen = join(k, group, [topic_name])  # subscribed to topic_name only
    offsets = {(topic_name, 0): 1, (topic_name, 1): 2, (other, 0): 3, (other, 1): 4}
    assert set(commit(k, group, gen, member, offsets).values()) == {NONE}

    resp = k.send("OffsetDelete", 0, {"Group": group, "Topics": [
        {"Topic": topic_name, "Partitions": [{"Partition": 0}]},
        {"Topic": other, "Partitions": [{"Partition": 1}]},
        {"Topic": f"{topic_name}-missing", "Partitions": [{"Partition": 0}]}]})
    assert resp["ErrorCode"] == NONE
    assert {(t["Topic"], p["Partition"]): p["ErrorCode"] for t in resp["Topics"] for p in t["Partitions"]} == \
        {(topic_name, 0): GROUP_SUBSCRIBED_TO_TOPIC, (other, 1): NONE,
         (f"{topic_name}-missing", 0): UNKNOWN_TOPIC_OR_PARTITION}
    assert fetch(k, group) == {(topic_name, 0): 1, (topic_name, 1): 2, (other, 0): 3}

    unknown = k.send("OffsetDelete", 0, {"Group": f"{group}-unknown", "Topics": [
        {"Topic": topic_name, "Partitions": [{"Partition": 0}]}]})
    assert (unknown["ErrorCode"], unknown["Topics"]) == (GROUP_ID_NOT_FOUND, [])
    assert heartbeat(k, group, member, gen) == NONE
