"""TxnOffsetCommit for a consumer-protocol group (KIP-848), with raw requests, on weir and on
Apache Kafka 4.3.1 with the same assertions.

A member joins with ConsumerGroupHeartbeat v1 (client-generated member id) and gets both partitions
of a topic; a transactional producer (InitProducerId, AddOffsetsToTxn, TxnOffsetCommit v4, EndTxn
v4) commits offsets for the group. Kafka's OffsetMetadataManager checks a transactional commit with
the group's validateOffsetCommit (transactional) and answers:
  - a member id the group does not know: UNKNOWN_MEMBER_ID;
  - the member's id with an epoch newer than its own, or older than the epoch a partition was
    assigned at (generation -1 included): ILLEGAL_GENERATION for the whole request (OffsetCommit
    answers STALE_MEMBER_EPOCH there); an older epoch at or after the assignment of every
    partition committed is accepted (KIP-1251);
  - no member at all (generation -1, empty member id, no instance id): accepted although the group
    has a member (OffsetCommit answers UNKNOWN_MEMBER_ID);
  - a group that does not exist: ILLEGAL_GENERATION with a generation >= 0, accepted with -1.
The offsets are pending until the transaction ends: OffsetFetch with RequireStable answers
UNSTABLE_OFFSET_COMMIT for them, the commit marker makes them the committed offsets, and after an
abort the ones committed before stay.
"""
from __future__ import annotations

import uuid

from harness.kreq import Kreq
from test_txn_offsets import ILLEGAL_GENERATION, NONE, NOT_READY, UNSTABLE_OFFSET_COMMIT, until

UNKNOWN_MEMBER_ID = 25
CONCURRENT_TRANSACTIONS = 51
STALE_MEMBER_EPOCH = 113


class Member:
    """A consumer-protocol member driven by raw ConsumerGroupHeartbeat v1 requests."""

    def __init__(self, k: Kreq, group: str, topic: str):
        self.k, self.group, self.topic = k, group, topic
        self.id, self.epoch, self.owned, self.topic_id = str(uuid.uuid4()), 0, [], None

    def heartbeat(self) -> dict:
        body = {"Group": self.group, "MemberID": self.id, "MemberEpoch": self.epoch}
        if self.epoch == 0:
            body |= {"RebalanceTimeoutMillis": 30000, "SubscribedTopicNames": [self.topic], "Topics": []}
        else:  # what it owns now: the assignment it was given
            body |= {"SubscribedTopicNames": None, "Topics": None if not self.owned else [
                {"TopicID": self.topic_id, "Partitions": self.owned}]}
        r = self.k.send("ConsumerGroupHeartbeat", 1, body)
        if r["ErrorCode"] == NONE:
            self.epoch = r["MemberEpoch"]
            if r["Assignment"] is not None:
                [t] = r["Assignment"]["Topics"] or [{"TopicID": None, "Partitions": []}]
                self.topic_id, self.owned = t["TopicID"], sorted(t["Partitions"])
        return r

    def join(self, partitions: list[int]) -> None:
        until(self.heartbeat, lambda r: r["ErrorCode"] == NONE and self.owned == partitions,
              f"member {self.id} to own {partitions}")


class Producer:
    """A transactional producer of the pre-KIP-890-part-2 kind: AddOffsetsToTxn, EndTxn v4."""

    def __init__(self, k: Kreq, txn_id: str):
        self.k, self.txn_id = k, txn_id
        until(lambda: k.send("FindCoordinator", 4, {"CoordinatorType": 1, "CoordinatorKeys": [txn_id]}),
              lambda r: r["Coordinators"][0]["ErrorCode"] == NONE, "FindCoordinator(transaction)")
        r = until(lambda: k.send("InitProducerID", 4, {"TransactionalID": txn_id, "TransactionTimeoutMillis": 60000,
                                                      "ProducerID": -1, "ProducerEpoch": -1}),
                  lambda r: r["ErrorCode"] not in NOT_READY | {CONCURRENT_TRANSACTIONS}, "InitProducerId")
        assert r["ErrorCode"] == NONE, r
        self.id, self.epoch = r["ProducerID"], r["ProducerEpoch"]

    def add_offsets(self, group: str) -> None:
        r = until(lambda: self.k.send("AddOffsetsToTxn", 3, {"TransactionalID": self.txn_id, "ProducerID": self.id,
                                                            "ProducerEpoch": self.epoch, "Group": group}),
                  lambda r: r["ErrorCode"] not in NOT_READY | {CONCURRENT_TRANSACTIONS}, "AddOffsetsToTxn")
        assert r["ErrorCode"] == NONE, r

    def commit_offsets(self, group: str, offsets: dict, generation: int, member_id: str = "",
                       instance_id: str | None = None) -> dict:
        """TxnOffsetCommit v4: {(topic, partition): error code}."""
        topics: dict[str, list] = {}
        for (t, p), off in offsets.items():
            topics.setdefault(t, []).append({"Partition": p, "Offset": off, "LeaderEpoch": -1, "Metadata": "tx"})
        body = {"TransactionalID": self.txn_id, "Group": group, "ProducerID": self.id, "ProducerEpoch": self.epoch,
                "Generation": generation, "MemberID": member_id, "InstanceID": instance_id,
                "Topics": [{"Topic": t, "Partitions": ps} for t, ps in topics.items()]}
        r = until(lambda: self.k.send("TxnOffsetCommit", 4, body),
                  lambda r: r["Topics"][0]["Partitions"][0]["ErrorCode"] not in NOT_READY, "TxnOffsetCommit")
        return {(t["Topic"], p["Partition"]): p["ErrorCode"] for t in r["Topics"] for p in t["Partitions"]}

    def end(self, commit: bool) -> None:
        r = self.k.send("EndTxn", 4, {"TransactionalID": self.txn_id, "ProducerID": self.id,
                                      "ProducerEpoch": self.epoch, "Commit": commit})
        assert r["ErrorCode"] == NONE, r


def stable_offsets(k: Kreq, group: str, topic: str) -> dict:
    """OffsetFetch v8 with RequireStable, as an admin: {partition: (error code, offset)}."""
    r = k.send("OffsetFetch", 8, {"Groups": [{"Group": group, "Topics": [{"Topic": topic, "Partitions": [0, 1]}]}],
                                  "RequireStable": True})
    [g] = r["Groups"]
    assert g["ErrorCode"] == NONE, r
    return {p["Partition"]: (p["ErrorCode"], p["Offset"]) for t in g["Topics"] for p in t["Partitions"]}


def settled(k: Kreq, group: str, topic: str) -> dict:
    """The stable offsets once no partition is pending any more (the markers land after EndTxn)."""
    return until(lambda: stable_offsets(k, group, topic),
                 lambda o: all(code != UNSTABLE_OFFSET_COMMIT for code, _ in o.values()), "the markers")


def offset_commit_v9(k: Kreq, group: str, topic: str, generation: int, member_id: str) -> int:
    r = k.send("OffsetCommit", 9, {"Group": group, "Generation": generation, "MemberID": member_id,
                                   "Topics": [{"Topic": topic, "Partitions": [{"Partition": 0, "Offset": 1}]}]})
    return r["Topics"][0]["Partitions"][0]["ErrorCode"]


def test_txn_offset_commit_of_a_consumer_group_member(broker, topic_name):
    group, nowhere = f"{topic_name}-g", f"{topic_name}-none"
    both = {(topic_name, 0): 10, (topic_name, 1): 20}
    with Kreq(broker) as k:
        r = k.send("CreateTopics", 7, {"Topics": [{"Topic": t, "NumPartitions": n, "ReplicationFactor": 1}
                                                  for t, n in ((topic_name, 2), (f"{topic_name}-other", 1))],
                                       "TimeoutMillis": 15000})
        assert [t["ErrorCode"] for t in r["Topics"]] == [NONE, NONE], r
        for g in (group, nowhere):
            until(lambda: k.send("FindCoordinator", 4, {"CoordinatorType": 0, "CoordinatorKeys": [g]}),
                  lambda r: r["Coordinators"][0]["ErrorCode"] == NONE, "FindCoordinator(group)")
        member = Member(k, group, topic_name)
        member.join([0, 1])
        epoch = member.epoch
        producer = Producer(k, f"{topic_name}-tx")
        producer.add_offsets(group)
        producer.add_offsets(nowhere)

        def commit(**fields) -> set:
            """The error codes of a commit of both partitions (one per request, as Kafka fails all)."""
            return set(producer.commit_offsets(group, both, **fields).values())

        assert commit(generation=epoch, member_id=str(uuid.uuid4())) == {UNKNOWN_MEMBER_ID}
        assert commit(generation=epoch + 1, member_id=member.id) == {ILLEGAL_GENERATION}
        assert offset_commit_v9(k, group, topic_name, epoch + 1, member.id) == STALE_MEMBER_EPOCH
        # Older than the epoch the partitions were assigned at.
        assert commit(generation=epoch - 1, member_id=member.id) == {ILLEGAL_GENERATION}
        assert commit(generation=-1, member_id=member.id) == {ILLEGAL_GENERATION}
        assert offset_commit_v9(k, group, topic_name, epoch - 1, member.id) == STALE_MEMBER_EPOCH
        # No member at all: a transactional commit passes, a plain one does not.
        assert commit(generation=-1) == {NONE}
        assert offset_commit_v9(k, group, topic_name, -1, "") == UNKNOWN_MEMBER_ID
        # A group that does not exist.
        assert producer.commit_offsets(nowhere, both, generation=3, member_id=member.id) == \
            {(topic_name, 0): ILLEGAL_GENERATION, (topic_name, 1): ILLEGAL_GENERATION}
        assert producer.commit_offsets(nowhere, both, generation=-1) == {(topic_name, 0): NONE, (topic_name, 1): NONE}

        # An epoch older than the member's but not than its partitions' (KIP-1251) commits: a second
        # member, on another topic, bumps the first one's epoch and leaves it its partitions.
        other = Member(k, group, f"{topic_name}-other")
        other.join([0])
        until(member.heartbeat, lambda r: r["ErrorCode"] == NONE and member.epoch > epoch, "a new member epoch")
        assert member.owned == [0, 1]
        assert commit(generation=epoch, member_id=member.id) == {NONE}
        # The member's own epoch: pending until the commit marker.
        assert commit(generation=member.epoch, member_id=member.id) == {NONE}
        assert stable_offsets(k, group, topic_name) == {0: (UNSTABLE_OFFSET_COMMIT, -1),
                                                        1: (UNSTABLE_OFFSET_COMMIT, -1)}
        producer.end(commit=True)
        assert settled(k, group, topic_name) == {0: (NONE, 10), 1: (NONE, 20)}
        assert settled(k, nowhere, topic_name) == {0: (NONE, 10), 1: (NONE, 20)}

        # An aborted transaction leaves the committed offsets as they were.
        producer.add_offsets(group)
        assert producer.commit_offsets(group, {(topic_name, 0): 30, (topic_name, 1): 40}, generation=member.epoch,
                                       member_id=member.id) == {(topic_name, 0): NONE, (topic_name, 1): NONE}
        assert stable_offsets(k, group, topic_name) == {0: (UNSTABLE_OFFSET_COMMIT, -1),
                                                        1: (UNSTABLE_OFFSET_COMMIT, -1)}
        producer.end(commit=False)
        assert settled(k, group, topic_name) == {0: (NONE, 10), 1: (NONE, 20)}
