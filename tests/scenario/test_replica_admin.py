"""ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments on one node, the
same requests against weir and Apache Kafka 4.3.1 (`broker` fixture). On one node every partition
is led by its only, preferred replica: elections are "not needed", the only valid reassignment is
the current one, nothing is ever being reassigned. The codes and messages asserted are the ones
Kafka 4.3.1 answered. The tools on top (`kafka-leader-election`, `kafka-reassign-partitions`) are
run too; the same tools moving real replicas are test_cluster_admin.py.
"""
from __future__ import annotations

import json

from harness import run_tool
from harness.kreq import Kreq
from harness.replication import TOOL_ENV

NOT_NEEDED = (84, "Leader election not needed for topic partition.")


def results(resp: dict) -> dict:
    """{(topic, partition): (error code, message)} of an ElectLeaders or AlterPartitionReassignments answer."""
    out = {}
    for t in resp["Topics"]:
        for p in t["Partitions"]:
            out[(t["Topic"], p["Partition"])] = (p["ErrorCode"], p["ErrorMessage"])
    return out


def test_elections_and_reassignments_on_one_node(broker, topic_name):
    with Kreq(broker) as k:
        md = k.send("Metadata", 12, {"Topics": [], "AllowAutoTopicCreation": False})
        me = md["Brokers"][0]["NodeID"]
        r = k.send("CreateTopics", 7, {"Topics": [{"Topic": topic_name, "NumPartitions": 2, "ReplicationFactor": 1}]})
        assert r["Topics"][0]["ErrorCode"] == 0

        for v in (0, 1, 2):
            r = k.send("ElectLeaders", v, {"ElectionType": 0, "TimeoutMillis": 5000, "Topics": [
                {"Topic": topic_name, "Partitions": [0, 1, 7]}, {"Topic": "nope-x", "Partitions": [0]}]})
            assert results(r) == {
                (topic_name, 0): NOT_NEEDED, (topic_name, 1): NOT_NEEDED,
                (topic_name, 7): (3, f"No such partition as {topic_name}-7"),
                ("nope-x", 0): (3, "No such topic as nope-x")}, (v, r)
            assert r["ErrorCode"] == 0
        r = k.send("ElectLeaders", 2, {"ElectionType": 1, "TimeoutMillis": 5000,
                                       "Topics": [{"Topic": topic_name, "Partitions": [0, 0]}]})
        assert [p["ErrorCode"] for p in r["Topics"][0]["Partitions"]] == [84, 84]
        r = k.send("ElectLeaders", 2, {"ElectionType": 5, "TimeoutMillis": 5000,
                                       "Topics": [{"Topic": topic_name, "Partitions": [0]}]})
        assert r["ErrorCode"] == 42
        assert results(r) == {(topic_name, 0): (42, "Unknown election type 5")}
        # Null = every partition: only the ones an election was needed for are answered.
        r = k.send("ElectLeaders", 2, {"ElectionType": 0, "TimeoutMillis": 5000, "Topics": None})
        assert r["ErrorCode"] == 0
        assert all(not t["Partitions"] for t in r["Topics"]), r
        assert topic_name in [t["Topic"] for t in r["Topics"]]

        r = k.send("AlterPartitionReassignments", 1, {"TimeoutMillis": 5000, "Topics": [
            {"Topic": topic_name, "Partitions": [{"Partition": 0, "Replicas": [me]},
                                                 {"Partition": 1, "Replicas": [me + 5]},
                                                 {"Partition": 7, "Replicas": [me]}]},
            {"Topic": "nope-x", "Partitions": [{"Partition": 0, "Replicas": [me]}]}]})
        assert r["ErrorCode"] == 0 and r["ErrorMessage"] is None
        assert results(r) == {
            (topic_name, 0): (0, None),
            (topic_name, 1): (39, f"The manual partition assignment includes broker {me + 5}, but no such broker "
                                  "is registered."),
            (topic_name, 7): (3, f"Unable to find partition {topic_name}:7."),
            ("nope-x", 0): (3, "Unable to find a topic named nope-x.")}
        r = k.send("AlterPartitionReassignments", 1, {"TimeoutMillis": 5000, "Topics": [
            {"Topic": topic_name, "Partitions": [{"Partition": 0, "Replicas": None},
                                                 {"Partition": 1, "Replicas": []}]}]})
        assert results(r) == {
            (topic_name, 0): (85, None),
            (topic_name, 1): (39, "The manual partition assignment includes an empty replica list.")}
        r = k.send("AlterPartitionReassignments", 0, {"TimeoutMillis": 5000, "Topics": [
            {"Topic": topic_name, "Partitions": [{"Partition": 0, "Replicas": [me, me]}]}]})
        assert results(r) == {
            (topic_name, 0): (39, f"The manual partition assignment includes the broker {me} more than once.")}

        for topics in (None, [{"Topic": topic_name, "Partitions": [0, 9]}, {"Topic": "nope-x", "Partitions": [0]}]):
            r = k.send("ListPartitionReassignments", 0, {"TimeoutMillis": 5000, "Topics": topics})
            assert r["ErrorCode"] == 0 and r["Topics"] == [], r

    res = run_tool("kafka-leader-election", "--election-type", "preferred", "--topic", topic_name, "--partition", "0",
                   bootstrap=broker, env=TOOL_ENV, timeout=90).check()
    assert f"Valid replica already elected for partitions {topic_name}-0" in res.stdout, res.describe()
    plan = {"version": 1, "partitions": [{"topic": topic_name, "partition": 1, "replicas": [me]}]}
    res = run_tool("kafka-reassign-partitions", "--reassignment-json-file", "/dev/stdin", "--verify",
                   bootstrap=broker, env=TOOL_ENV, timeout=90, input=json.dumps(plan))
    assert f"Reassignment of partition {topic_name}-1 is completed." in res.stdout, res.describe()
