"""Dynamic broker configs on one node (issue 12): `kafka-configs --entity-type brokers --alter`
for this broker (`--entity-name 1`) and for the cluster default (`--entity-default`), checked
as Kafka's broker checks them, stored in the metadata log, reported by DescribeConfigs with
their source, kept across a restart, and applied: the topic configs' broker synonyms
(log.retention.ms, ...) and the connection limits take effect without a restart.

Each scenario runs against weir and against a Kafka 4.3.1 of its own (dynamic configs would
leak into the session's shared Kafka).
"""
from __future__ import annotations

import struct
import time

import pytest
from confluent_kafka import Producer
from harness.cli import run_tool
from harness.kreq import Kreq
from test_connection_limits import closed_by_peer, connect_from, roundtrip_api_versions

WAIT_S = 30.0


@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    # The oracle variant is slow (make test time); the weir variant runs in make test.
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential, pytest.mark.slow)),
])
def own_broker(request):
    """A broker of the test's own (node id 1), weir or Kafka."""
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")()
    return request.getfixturevalue("kafka_factory")()


SET, DELETE = "SET", "DELETE"
BROKER = "BROKER"
INVALID_REQUEST = 42


def alter(broker, name: str, changes: dict[str, str | None], validate_only: bool = False):
    """IncrementalAlterConfigs (v1) of one BROKER resource (None deletes a key): (error code,
    message)."""
    configs = [{"Name": k, "Op": DELETE if v is None else SET, "Value": v} for k, v in changes.items()]
    with Kreq(broker) as k:
        resp = k.send("IncrementalAlterConfigs", 1, {
            "Resources": [{"ResourceType": BROKER, "ResourceName": name, "Configs": configs}],
            "ValidateOnly": validate_only})
    r = resp["Resources"][0]
    return r["ErrorCode"], r["ErrorMessage"]


def describe(broker, name: str, keys: list[str] | None = None) -> dict[str, dict]:
    """DescribeConfigs (v4, with synonyms) of a BROKER resource: {key: entry}."""
    with Kreq(broker) as k:
        resp = k.send("DescribeConfigs", 4, {
            "Resources": [{"ResourceType": BROKER, "ResourceName": name, "ConfigNames": keys}],
            "IncludeSynonyms": True})
    r = resp["Resources"][0]
    assert r["ErrorCode"] == 0, r
    return {c["Name"]: c for c in r["Configs"]}


def wait_for(what: str, check, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


WRAPPED = ("Invalid value org.apache.kafka.common.config.ConfigException: {} for configuration "
           "Invalid dynamic configuration")

# (resource name, changes, Kafka 4.3.1's answer): INVALID_REQUEST and its message. The odd ones
# ("/ by zero", the substring text, the wrapped ConfigException) are what Kafka's broker says.
REFUSED = [
    ("1", {"log.retention.ms": "abc"},
     "Invalid value abc for configuration log.retention.ms: Not a number of type LONG"),
    ("1", {"log.dirs": "/tmp/elsewhere"}, "Cannot update these configs dynamically: [log.dirs]"),
    ("2", {"log.retention.ms": "1000"}, "Unexpected broker id, expected 1, but received 2"),
    ("x", {"log.retention.ms": "1000"}, "Node id must be an integer, but it is: x"),
    ("", {"listeners": "PLAINTEXT://:19092"},
     "Cannot update these configs at default cluster level, broker id must be specified: [listeners]"),
    ("1", {"num.io.threads": "100"}, WRAPPED.format(
        "Dynamic thread count update validation failed for num.io.threads=100, value should not be greater "
        "than double the current value 8")),
    ("1", {"num.io.threads": "3"}, WRAPPED.format(
        "Dynamic thread count update validation failed for num.io.threads=3, value should be at least half "
        "the current value 8")),
    ("1", {"num.io.threads": "0"}, "Invalid value 0 for configuration num.io.threads: Value must be at least 1"),
    ("1", {"log.cleaner.threads": "0"}, "/ by zero"),
    ("1", {"log.cleaner.threads": "5"}, WRAPPED.format(
        "Log cleaner threads cannot be increased to more than double the current value 1")),
    ("1", {"max.connections.per.ip.overrides": "nocolon"},
     "Error parsing configuration property 'max.connections.per.ip.overrides': begin 0, end -1, length 7"),
    ("1", {"max.connections.per.ip": "0"},
     "requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides "
     "property is set."),
    ("1", {"max.connections": "-1"}, "Invalid value -1 for configuration max.connections: Value must be at least 0"),
]


def test_broker_config_changes_are_checked_as_kafka_checks_them(own_broker):
    for name, changes, message in REFUSED:
        assert alter(own_broker, name, changes) == (INVALID_REQUEST, message), (name, changes)
    # Nothing refused was stored: the named broker and the default report no dynamic value.
    dynamic = {k: c for k, c in describe(own_broker, "1").items() if c["Source"] == "DYNAMIC_BROKER_CONFIG"}
    assert dynamic == {}
    # (A new cluster's metadata holds one cluster default, written at format time by both.)
    assert set(describe(own_broker, "")) == {"min.insync.replicas"}
    # validate_only checks and stores nothing.
    assert alter(own_broker, "1", {"num.io.threads": "10"}, validate_only=True) == (0, None)
    assert describe(own_broker, "1", ["num.io.threads"])["num.io.threads"]["Source"] == "DEFAULT_CONFIG"


def tool_lines(broker, *args) -> list[str]:
    return run_tool("kafka-configs", *args, bootstrap=broker).check().lines


def test_kafka_configs_alters_describes_and_deletes_broker_configs(own_broker, topic_name):
    b = own_broker
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", "1", bootstrap=b).check()
    tool_lines(b, "--alter", "--entity-type", "brokers", "--entity-name", "1",
               "--add-config", "num.io.threads=12,log.cleaner.threads=2,log.retention.ms=7200000")
    tool_lines(b, "--alter", "--entity-type", "brokers", "--entity-default",
               "--add-config", "log.retention.ms=3600000,log.segment.bytes=10485760")

    def dynamic_of_broker():
        lines = tool_lines(b, "--describe", "--entity-type", "brokers", "--entity-name", "1")
        assert lines[0] == "Dynamic configs for broker 1 are:", lines
        return sorted(ln.strip().split(" ")[0] for ln in lines[1:])

    assert dynamic_of_broker() == ["log.cleaner.threads=2", "log.retention.ms=7200000", "num.io.threads=12"]
    lines = tool_lines(b, "--describe", "--entity-type", "brokers", "--entity-default")
    assert lines[0] == "Default configs for brokers in the cluster are:", lines
    assert sorted(ln.strip().split(" ")[0] for ln in lines[1:]) == [
        "log.retention.ms=3600000", "log.segment.bytes=10485760", "min.insync.replicas=1"]
    # The synonyms, in Kafka's order: this broker, the cluster default, the default.
    entry = describe(b, "1", ["log.retention.ms"])["log.retention.ms"]
    assert (entry["Value"], entry["Source"]) == ("7200000", "DYNAMIC_BROKER_CONFIG")
    assert [(s["Value"], s["Source"]) for s in entry["ConfigSynonyms"]][:2] == [
        ("7200000", "DYNAMIC_BROKER_CONFIG"), ("3600000", "DYNAMIC_DEFAULT_BROKER_CONFIG")]
    # A topic without its own value takes them: the broker's retention, the default's segment size.
    lines = tool_lines(b, "--describe", "--all", "--entity-type", "topics", "--entity-name", topic_name)
    shown = {ln.strip().split(" ")[0].split("=")[0]: ln.strip() for ln in lines[1:]}
    assert shown["retention.ms"].startswith("retention.ms=7200000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
                                            "log.retention.ms=7200000, DYNAMIC_DEFAULT_BROKER_CONFIG:"
                                            "log.retention.ms=3600000"), shown["retention.ms"]
    assert shown["segment.bytes"].startswith("segment.bytes=10485760 sensitive=false "
                                             "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=10485760"), \
        shown["segment.bytes"]

    # They survive a restart.
    b.restart()
    assert dynamic_of_broker() == ["log.cleaner.threads=2", "log.retention.ms=7200000", "num.io.threads=12"]

    # Deleting brings back the next layer.
    tool_lines(b, "--alter", "--entity-type", "brokers", "--entity-name", "1",
               "--delete-config", "log.retention.ms,num.io.threads")
    assert dynamic_of_broker() == ["log.cleaner.threads=2"]
    entry = describe(b, "1", ["log.retention.ms", "num.io.threads"])
    assert (entry["log.retention.ms"]["Value"], entry["log.retention.ms"]["Source"]) == (
        "3600000", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    assert entry["num.io.threads"]["Source"] == "DEFAULT_CONFIG"
    tool_lines(b, "--alter", "--entity-type", "brokers", "--entity-default",
               "--delete-config", "log.retention.ms,log.segment.bytes")
    tool_lines(b, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--delete-config", "log.cleaner.threads")
    assert tool_lines(b, "--describe", "--entity-type", "brokers", "--entity-name", "1") == [
        "Dynamic configs for broker 1 are:"]
    entry = describe(b, "1", ["log.retention.ms"])["log.retention.ms"]
    assert entry["Source"] == "STATIC_BROKER_CONFIG" or entry["Source"] == "DEFAULT_CONFIG"


def test_connection_limits_change_without_a_restart(own_broker):
    """max.connections.per.ip.overrides set dynamically closes the next connection over it at
    accept; deleting it lets connections in again."""
    b = own_broker
    assert alter(b, "1", {"max.connections.per.ip.overrides": "127.0.0.2:1"}) == (0, None)

    def over_the_limit_is_closed():
        first = connect_from("127.0.0.2", b)
        try:
            roundtrip_api_versions(first, 1)
            second = connect_from("127.0.0.2", b)
            try:
                return closed_by_peer(second, timeout=5)
            finally:
                second.close()
        except (OSError, struct.error):
            return False  # the first one was refused while an earlier connection still counted
        finally:
            first.close()

    # The broker applies a committed change asynchronously (Kafka: when its metadata arrives).
    wait_for("the new per-address limit", over_the_limit_is_closed)
    assert alter(b, "1", {"max.connections.per.ip.overrides": None}) == (0, None)

    def two_are_served():
        socks = []
        try:
            for n in range(2):
                s = connect_from("127.0.0.2", b)
                socks.append(s)
                roundtrip_api_versions(s, n)
            return True
        except (OSError, struct.error):
            return False
        finally:
            for s in socks:
                s.close()

    wait_for("the limit to be gone", two_are_served)


@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential)),
])
def quick_expiry_checks(request):
    """A broker of the test's own that looks for expired producers every 500 ms."""
    settings = {"producer.id.expiration.check.interval.ms": 500}
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")(settings=settings)
    return request.getfixturevalue("kafka_factory")(overrides=settings)


def test_producer_id_expiration_changes_without_a_restart(quick_expiry_checks, topic_name):
    """An idle idempotent producer's state is kept for producer.id.expiration.ms (a day by
    default); a cluster-wide dynamic value of one second expires it at the next check."""
    b = quick_expiry_checks
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", "1", bootstrap=b).check()
    p = Producer({"bootstrap.servers": b.bootstrap, "enable.idempotence": True})
    p.produce(topic_name, b"v")
    assert p.flush(WAIT_S) == 0

    def producers():
        with Kreq(b) as k:
            resp = k.send("DescribeProducers", 0, {"Topics": [{"Topic": topic_name, "Partitions": [0]}]})
        return resp["Topics"][0]["Partitions"][0]["ActiveProducers"]

    assert len(producers()) == 1
    time.sleep(1.5)  # several expiry checks pass with the default expiration: the state stays
    assert len(producers()) == 1
    assert alter(b, "", {"producer.id.expiration.ms": "1000"}) == (0, None)
    wait_for("the idle producer to expire", lambda: producers() == [])
    assert describe(b, "", ["producer.id.expiration.ms"])["producer.id.expiration.ms"]["Value"] == "1000"
