"""Group configs (KIP-848, the GROUP config resource) against weir and Apache Kafka 4.3.1 with the
same assertions:
  - `kafka-configs --entity-type groups` sets, describes (the group's values, then `--all` with
    the broker's values behind them) and deletes a group's configs;
  - bad values and unknown keys are refused with Kafka's INVALID_CONFIG and message (through the
    tool for two of them, as raw IncrementalAlterConfigs for the rest), an empty group name with
    INVALID_REQUEST, and nothing is stored;
  - `kafka-configs --describe --entity-type groups` without a name describes the groups with
    configs (found through ListConfigResources, API 74), and one with neither members nor configs
    is reported missing; the raw ListConfigResources v0/v1 answers;
  - a raw ConsumerGroupHeartbeat answers the group's own consumer.heartbeat.interval.ms, and the
    broker's for another group;
  - (weir) the configs are kept in the metadata log across a restart;
  - in a cluster (one broker under a Kafka 4.3.1 controller, weir or Kafka), the broker forwards
    the change to the controller, which validates it (the same errors) and writes the
    ConfigRecord; the broker applies it from the metadata log and describes it, and its
    coordinator answers the group's heartbeat interval.
Group names are unique per test, so the shared Kafka is not disturbed.
"""
from __future__ import annotations

import time
import uuid

import pytest

from harness import run_tool
from harness.cluster import DEFAULT_FEATURES, wait_for
from harness.kreq import Kreq

GROUP = "GROUP_CONFIG"  # franz-go's name of ConfigResource.Type GROUP (32)
INVALID_CONFIG, INVALID_REQUEST = 40, 42
# ConsumerGroupHeartbeat errors while the coordinator loads or moves.
RETRIABLE = (14, 15, 16)


def group_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def configs_tool(broker, group: str, *args: str):
    return run_tool("kafka-configs", "--bootstrap-server", broker.bootstrap, "--entity-type", "groups",
                    "--entity-name", group, *args)


def alter(broker, group: str, changes: dict[str, str | None]) -> tuple[int, str | None]:
    """IncrementalAlterConfigs (v1) of one GROUP resource (None deletes a key): (code, message)."""
    configs = [{"Name": k, "Op": "DELETE" if v is None else "SET", "Value": v} for k, v in changes.items()]
    with Kreq(broker) as k:
        resp = k.send("IncrementalAlterConfigs", 1, {
            "Resources": [{"ResourceType": GROUP, "ResourceName": group, "Configs": configs}]})
    r = resp["Resources"][0]
    return r["ErrorCode"], r["ErrorMessage"]


def describe(broker, group: str) -> tuple[int, str | None, dict[str, dict]]:
    """DescribeConfigs (v4, synonyms and documentation) of a GROUP resource."""
    with Kreq(broker) as k:
        resp = k.send("DescribeConfigs", 4, {
            "Resources": [{"ResourceType": GROUP, "ResourceName": group, "ConfigNames": None}],
            "IncludeSynonyms": True, "IncludeDocumentation": True})
    r = resp["Resources"][0]
    return r["ErrorCode"], r["ErrorMessage"], {c["Name"]: c for c in r["Configs"]}


def dynamic_lines(broker, group: str) -> list[str]:
    return configs_tool(broker, group, "--describe").check().lines


def test_kafka_configs_sets_describes_and_deletes_group_configs(broker):
    group = group_name("gconf")
    set_ = configs_tool(broker, group, "--alter", "--add-config",
                        "consumer.session.timeout.ms=50000,consumer.heartbeat.interval.ms=6000").check()
    assert set_.lines == [f"Completed updating config for group {group}."]
    assert dynamic_lines(broker, group) == [
        f"Dynamic configs for group {group} are:",
        "  consumer.heartbeat.interval.ms=6000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:"
        "consumer.heartbeat.interval.ms=6000, DEFAULT_CONFIG:group.consumer.heartbeat.interval.ms=5000}",
        "  consumer.session.timeout.ms=50000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:"
        "consumer.session.timeout.ms=50000, DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}",
    ]
    every = configs_tool(broker, group, "--describe", "--all").check().lines
    assert every[0] == f"All configs for group {group} are:"
    assert len(every) == 1 + 17, every
    assert ("  consumer.assignment.interval.ms=1000 sensitive=false synonyms={DEFAULT_CONFIG:"
            "group.consumer.assignment.interval.ms=1000}") in every
    assert ("  share.isolation.level=read_uncommitted sensitive=false synonyms={DEFAULT_CONFIG:"
            "share.isolation.level=read_uncommitted}") in every

    # The raw answer: types, sources, documentation.
    code, message, entries = describe(broker, group)
    assert (code, message) == (0, None) or (code, message) == (0, ""), (code, message)
    session = entries["consumer.session.timeout.ms"]
    assert (session["Value"], session["Source"], session["ConfigType"], session["ReadOnly"]) == \
        ("50000", "GROUP_CONFIG", "INT", False)
    assert session["Documentation"]
    assert entries["share.renew.acknowledge.enable"]["ConfigType"] == "BOOLEAN"
    assert entries["consumer.assignment.interval.ms"]["Source"] == "DEFAULT_CONFIG"

    # Deleting a key reverts it to the broker's value.
    configs_tool(broker, group, "--alter", "--delete-config", "consumer.session.timeout.ms").check()
    assert dynamic_lines(broker, group) == [
        f"Dynamic configs for group {group} are:",
        "  consumer.heartbeat.interval.ms=6000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:"
        "consumer.heartbeat.interval.ms=6000, DEFAULT_CONFIG:group.consumer.heartbeat.interval.ms=5000}",
    ]
    _, _, entries = describe(broker, group)
    assert (entries["consumer.session.timeout.ms"]["Value"], entries["consumer.session.timeout.ms"]["Source"]) == \
        ("45000", "DEFAULT_CONFIG")


def test_kafka_configs_refuses_a_bound_violation_and_an_unknown_key(broker):
    group = group_name("gconf-bad")
    for config, message in (
            ("consumer.session.timeout.ms=1000",
             "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"),
            ("no.such.key=1", "Unknown group config name: no.such.key")):
        r = configs_tool(broker, group, "--alter", "--add-config", config)
        assert r.rc == 1, r.describe()
        assert f"org.apache.kafka.common.errors.InvalidConfigurationException: {message}" in r.stderr, r.describe()
    # Nothing was stored.
    _, _, entries = describe(broker, group)
    assert [k for k, v in entries.items() if v["Source"] == "GROUP_CONFIG"] == []


REFUSED = [
    ({"consumer.session.timeout.ms": "70000"},
     "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"),
    ({"consumer.heartbeat.interval.ms": "4000"},
     "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"),
    ({"consumer.heartbeat.interval.ms": "16000"},
     "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"),
    ({"consumer.assignment.interval.ms": "20000"},
     "consumer.assignment.interval.ms must be less than or equal to group.consumer.max.assignment.interval.ms"),
    ({"consumer.session.timeout.ms": "abc"},
     "Invalid value abc for configuration consumer.session.timeout.ms: Not a number of type INT"),
    ({"consumer.heartbeat.interval.ms": "0"},
     "Invalid value 0 for configuration consumer.heartbeat.interval.ms: Value must be at least 1"),
    ({"share.delivery.count.limit": "11"},
     "share.delivery.count.limit must be less than or equal to group.share.max.delivery.count.limit"),
    ({"share.isolation.level": "none"},
     "Invalid value none for configuration share.isolation.level: String must be one of: read_committed, "
     "read_uncommitted"),
    ({"share.auto.offset.reset": "by_duration:-PT1H"},
     "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: Invalid value "
     "`by_duration:-PT1H` for configuration share.auto.offset.reset. The value must be either 'earliest', "
     "'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."),
    ({"streams.num.standby.replicas": "3"},
     "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"),
]


def test_bad_group_configs_get_kafkas_errors(broker):
    group = group_name("gconf-raw")
    for changes, message in REFUSED:
        assert alter(broker, group, changes) == (INVALID_CONFIG, message), changes
    assert alter(broker, "", {"consumer.session.timeout.ms": "50000"}) == \
        (INVALID_REQUEST, "Default group resources are not allowed.")
    code, message, _ = describe(broker, "")
    assert (code, message) == (INVALID_REQUEST, "Group name must not be empty")
    # Accepted: share and streams keys too (Kafka takes them whatever group types are enabled).
    assert alter(broker, group, {"share.auto.offset.reset": "by_duration:P1DT2H", "streams.num.standby.replicas": "2",
                                 "consumer.assignment.interval.ms": "0"})[0] == 0
    _, _, entries = describe(broker, group)
    assert {k: v["Value"] for k, v in entries.items() if v["Source"] == "GROUP_CONFIG"} == {
        "share.auto.offset.reset": "by_duration:P1DT2H", "streams.num.standby.replicas": "2",
        "consumer.assignment.interval.ms": "0"}


def heartbeat_join(k: Kreq, group: str, topic: str) -> dict:
    """A ConsumerGroupHeartbeat (v1) join once FindCoordinator has found the coordinator (which
    creates __consumer_offsets), retried while the coordinator loads (bounded)."""
    wait_for("a group coordinator", lambda: k.send("FindCoordinator", 4, {
        "CoordinatorType": 0, "CoordinatorKeys": [group]})["Coordinators"][0]["ErrorCode"] == 0, 60)
    body = {"Group": group, "MemberID": str(uuid.uuid4()), "MemberEpoch": 0, "RebalanceTimeoutMillis": 30000,
            "SubscribedTopicNames": [topic], "Topics": []}
    deadline = time.monotonic() + 60
    while True:
        r = k.send("ConsumerGroupHeartbeat", 1, body)
        if r["ErrorCode"] not in RETRIABLE:
            return r
        assert time.monotonic() < deadline, r
        time.sleep(0.2)


def test_heartbeat_interval_comes_from_the_group_config(broker, topic_name):
    tuned, plain = group_name("gconf-hb"), group_name("gconf-plain")
    assert alter(broker, tuned, {"consumer.heartbeat.interval.ms": "7000"}) == (0, None)
    with Kreq(broker) as k:
        r = heartbeat_join(k, tuned, topic_name)
        assert (r["ErrorCode"], r["HeartbeatIntervalMillis"]) == (0, 7000), r
        other = heartbeat_join(k, plain, topic_name)
        assert (other["ErrorCode"], other["HeartbeatIntervalMillis"]) == (0, 5000), other
        # A change reaches the next heartbeat of a member already in the group.
        assert alter(broker, tuned, {"consumer.heartbeat.interval.ms": None}) == (0, None)
        again = {"Group": tuned, "MemberID": r["MemberID"], "MemberEpoch": r["MemberEpoch"]}
        deadline = time.monotonic() + 30
        while (beat := k.send("ConsumerGroupHeartbeat", 1, again))["HeartbeatIntervalMillis"] != 5000:
            assert beat["ErrorCode"] == 0 and time.monotonic() < deadline, beat
            time.sleep(0.2)
        for g, member in ((tuned, r), (plain, other)):
            k.send("ConsumerGroupHeartbeat", 1, {"Group": g, "MemberID": member["MemberID"], "MemberEpoch": -1})


def test_group_configs_survive_a_restart(weir):
    group = group_name("gconf-restart")
    assert alter(weir, group, {"consumer.session.timeout.ms": "55000", "share.isolation.level": "read_committed"}) \
        == (0, None)
    weir.restart()
    _, _, entries = describe(weir, group)
    assert {k: v["Value"] for k, v in entries.items() if v["Source"] == "GROUP_CONFIG"} == {
        "consumer.session.timeout.ms": "55000", "share.isolation.level": "read_committed"}


@pytest.mark.kafka
@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", [pytest.param("kafka", marks=pytest.mark.slow), "weir"])
def test_group_configs_in_a_cluster_go_through_the_controller(cluster_factory, kind, topic_name):
    cluster = cluster_factory([kind], controllers=1, features={**DEFAULT_FEATURES, "group.version": 1})
    broker = cluster.broker(1)
    group = group_name("gconf-cluster")
    assert alter(broker, group, {"consumer.session.timeout.ms": "1000"}) == (
        INVALID_CONFIG, "consumer.session.timeout.ms must be greater than or equal to "
                        "group.consumer.min.session.timeout.ms")
    assert alter(broker, group, {"consumer.heartbeat.interval.ms": "8000"}) == (0, None)
    wait_for("the group config in the broker's metadata",
             lambda: describe(broker, group)[2]["consumer.heartbeat.interval.ms"]["Value"] == "8000", 30)
    with Kreq(broker) as k:
        r = heartbeat_join(k, group, topic_name)
        assert (r["ErrorCode"], r["HeartbeatIntervalMillis"]) == (0, 8000), r
        k.send("ConsumerGroupHeartbeat", 1, {"Group": group, "MemberID": r["MemberID"], "MemberEpoch": -1})



def test_kafka_configs_describes_every_group_and_a_group_without_members_or_configs(broker):
    """ListConfigResources (API 74, KIP-1142): `kafka-configs --describe --entity-type groups`
    without a name describes the groups it lists (with configs: ListConfigResources; with
    members: ListGroups), and names a group with neither as missing."""
    configured, unknown = group_name("gconf-list"), group_name("gconf-none")
    configs_tool(broker, configured, "--alter", "--add-config", "consumer.heartbeat.interval.ms=7000").check()
    every = run_tool("kafka-configs", "--bootstrap-server", broker.bootstrap, "--entity-type", "groups",
                     "--describe").check().lines
    block = [f"Dynamic configs for group {configured} are:",
             "  consumer.heartbeat.interval.ms=7000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:"
             "consumer.heartbeat.interval.ms=7000, DEFAULT_CONFIG:group.consumer.heartbeat.interval.ms=5000}"]
    assert block[0] in every, every
    at = every.index(block[0])
    assert every[at:at + 2] == block, every
    assert configs_tool(broker, unknown, "--describe").check().lines == [
        f"The group '{unknown}' doesn't exist and doesn't have dynamic config."]

    # The raw answers: v1 lists groups with configs, then each broker as BROKER_LOGGER and as
    # BROKER (then topics); v0 knows client metrics only (none here); an unknown type is refused.
    node = str(broker.node_id)
    with Kreq(broker) as k:
        groups_only = k.send("ListConfigResources", 1, {"ResourceTypes": [32]})
        everything = k.send("ListConfigResources", 1, {})
        v0 = k.send("ListConfigResources", 0, {})
        bad = k.send("ListConfigResources", 1, {"ResourceTypes": [32, 0]})
    assert groups_only["ErrorCode"] == 0
    assert {"Name": configured, "Type": 32} in [{"Name": r["Name"], "Type": r["Type"]}
                                                 for r in groups_only["ConfigResources"]]
    assert {r["Type"] for r in groups_only["ConfigResources"]} == {32}
    listed = [(r["Name"], r["Type"]) for r in everything["ConfigResources"]]
    assert (configured, 32) in listed and (node, 8) in listed and (node, 4) in listed, listed
    assert listed.index((configured, 32)) < listed.index((node, 8)) < listed.index((node, 4))
    assert (v0["ErrorCode"], v0["ConfigResources"]) == (0, [])
    assert (bad["ErrorCode"], bad["ConfigResources"]) == (35, [])  # UNSUPPORTED_VERSION
