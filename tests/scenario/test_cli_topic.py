"""The weir CLI's topic and cluster commands (issue 17), against weir and against Apache Kafka 4.3.1:
the same commands give the same answers on both brokers, and agree with Kafka's own tools.

  - test_topic_lifecycle: `weir topic create` (partitions, replication factor, a config),
    creating it again (refused, TOPIC_ALREADY_EXISTS; --if-not-exists succeeds), `topic list`,
    `topic describe` against records produced by confluent-kafka (log start/end offsets per
    partition) and against `kafka-topics --describe` (leader, replicas, ISR, non-default configs),
    `alter-config --set/--delete`, `add-partitions` (and a shrink refused), `delete` and the
    "does not exist; did you mean" answer for a misspelt name.
  - test_cluster_info_and_api_versions: `weir cluster info` names the broker (id, host, port) and
    `cluster api-versions` lists the broker's ranges and the versions the weir client uses.
  - test_cluster_config_get_and_set: `weir cluster config set --broker N` sets and deletes a dynamic
    broker config (DYNAMIC_BROKER_CONFIG in `config get`, defaults with --all), a read-only key is
    refused with the broker's message, `config get --topic` shows a topic's override, and naming
    no resource or two is bad usage.
  - test_bad_usage_and_unreachable_broker: bad flags exit 2 with usage; no broker listening gives
    a clear error within --timeout and exit 1; `--output json` failures are JSON.
"""
from __future__ import annotations

import json
import re
import subprocess
import time

import pytest
from confluent_kafka import Producer

from harness import free_port, run_tool
from harness.paths import weir_bin


def weir_cli(*args, bootstrap=None, timeout: float = 60) -> subprocess.CompletedProcess:
    argv = [str(weir_bin()), *[str(a) for a in args]]
    if bootstrap is not None:
        argv += ["--bootstrap", getattr(bootstrap, "bootstrap", bootstrap)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def ok(res: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert res.returncode == 0, (res.args, res.returncode, res.stdout[-4000:], res.stderr[-4000:])
    return res


def as_json(res: subprocess.CompletedProcess):
    return json.loads(ok(res).stdout)


def kafka_topics_describe(broker, topic: str) -> tuple[set[str], dict[int, tuple[int, list[int], list[int]]]]:
    """kafka-topics --describe: the topic's config names and, per partition, leader, replicas, ISR."""
    res = run_tool("kafka-topics", "--describe", "--topic", topic, bootstrap=broker).check()
    configs: set[str] = set()
    parts = {}
    for line in res.lines:
        m = re.search(r"\bConfigs:\s*(.*)$", line)
        if m and "Partition:" not in line:
            configs = {kv.split("=", 1)[0] for kv in m.group(1).split(",") if "=" in kv}
            continue
        m = re.search(r"Partition:\s*(\d+)\s+Leader:\s*(-?\d+)\s+Replicas:\s*([\d,]*)\s+Isr:\s*([\d,]*)", line)
        if m:
            ints = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
            parts[int(m.group(1))] = (int(m.group(2)), ints(m.group(3)), ints(m.group(4)))
    return configs, parts


def wait_described(broker, topic: str, predicate, timeout: float = 30):
    """`weir topic describe --output json` until predicate(topic_json) holds (metadata of a change
    reaches every broker shortly after the controller answered)."""
    deadline = time.monotonic() + timeout
    while True:
        got = as_json(weir_cli("topic", "describe", topic, "--output", "json", bootstrap=broker))["topics"][0]
        if predicate(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


@pytest.mark.timeout(240)
def test_topic_lifecycle(broker, topic_name):
    res = ok(weir_cli("topic", "create", topic_name, "-p", 3, "-r", 1, "--config", "retention.ms=3600000",
                      bootstrap=broker))
    assert res.stdout == f"Created topic {topic_name}.\n"

    again = weir_cli("topic", "create", topic_name, "-p", 3, bootstrap=broker)
    assert again.returncode == 1, again
    assert "TOPIC_ALREADY_EXISTS" in again.stderr and topic_name in again.stderr, again.stderr
    assert ok(weir_cli("topic", "create", topic_name, "--if-not-exists", bootstrap=broker)).stdout == \
        f"Topic {topic_name} already exists.\n"

    listed = as_json(weir_cli("topic", "list", "--output", "json", bootstrap=broker))["topics"]
    mine = [t for t in listed if t["name"] == topic_name]
    assert mine == [{"name": topic_name, "partitions": 3, "replication_factor": 1, "internal": False}], mine
    assert topic_name in ok(weir_cli("topic", "list", bootstrap=broker)).stdout.splitlines()

    p = Producer({"bootstrap.servers": broker.bootstrap})
    for partition, count in ((0, 5), (1, 2)):
        for i in range(count):
            p.produce(topic_name, value=f"v{i}".encode(), partition=partition)
    assert p.flush(30) == 0

    d = wait_described(broker, topic_name, lambda t: [x["log_end_offset"] for x in t["partitions"]] == [5, 2, 0])
    assert d["name"] == topic_name and len(d["topic_id"]) == 22 and d["internal"] is False
    assert d["replication_factor"] == 1
    assert [x["partition"] for x in d["partitions"]] == [0, 1, 2]
    assert [x["log_start_offset"] for x in d["partitions"]] == [0, 0, 0]
    assert [x["log_end_offset"] for x in d["partitions"]] == [5, 2, 0]
    for x in d["partitions"]:
        assert x["leader"] == broker.node_id and x["replicas"] == [broker.node_id] and x["isr"] == [broker.node_id]
    configs = {c["name"]: c for c in d["configs"]}
    assert configs["retention.ms"]["value"] == "3600000"
    assert configs["retention.ms"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    assert all(c["source"] != "DEFAULT_CONFIG" for c in d["configs"])

    # The same answers as Kafka's own tool on the same broker.
    kafka_configs, kafka_parts = kafka_topics_describe(broker, topic_name)
    assert kafka_parts == {x["partition"]: (x["leader"], x["replicas"], x["isr"]) for x in d["partitions"]}
    assert kafka_configs == set(configs), (kafka_configs, set(configs))

    text = ok(weir_cli("topic", "describe", topic_name, bootstrap=broker)).stdout.splitlines()
    assert text[0].startswith(f"Topic: {topic_name}  TopicId: {d['topic_id']}  PartitionCount: 3  ReplicationFactor: 1")
    assert "retention.ms=3600000 (DYNAMIC_TOPIC_CONFIG)" in text[1]
    assert text[2].split() == ["PARTITION", "LEADER", "REPLICAS", "ISR", "LOG-START-OFFSET", "LOG-END-OFFSET"]
    n = str(broker.node_id)
    assert [row.split() for row in text[3:]] == [["0", n, n, n, "0", "5"], ["1", n, n, n, "0", "2"],
                                                  ["2", n, n, n, "0", "0"]]

    ok(weir_cli("topic", "alter-config", topic_name, "--set", "retention.ms=7200000", "--set",
                "cleanup.policy=compact", bootstrap=broker))
    d = wait_described(broker, topic_name, lambda t: {c["name"]: c["value"] for c in t["configs"]}
                       .get("cleanup.policy") == "compact")
    values = {c["name"]: c["value"] for c in d["configs"]}
    assert values["retention.ms"] == "7200000" and values["cleanup.policy"] == "compact", values
    ok(weir_cli("topic", "alter-config", topic_name, "--delete", "cleanup.policy", bootstrap=broker))
    d = wait_described(broker, topic_name, lambda t: all(c["name"] != "cleanup.policy" for c in t["configs"]))
    assert "cleanup.policy" not in {c["name"] for c in d["configs"]}
    bad = weir_cli("topic", "alter-config", topic_name, "--set", "retention.ms=abc", bootstrap=broker)
    assert bad.returncode == 1 and "INVALID_CONFIG" in bad.stderr, bad

    ok(weir_cli("topic", "add-partitions", topic_name, "-p", 5, bootstrap=broker))
    d = wait_described(broker, topic_name, lambda t: len(t["partitions"]) == 5)
    assert [x["partition"] for x in d["partitions"]] == [0, 1, 2, 3, 4]
    shrink = weir_cli("topic", "add-partitions", topic_name, "-p", 2, bootstrap=broker)
    assert shrink.returncode == 1 and "INVALID_PARTITIONS" in shrink.stderr, shrink

    typo = topic_name[:-1]  # the last character left out
    missing = weir_cli("topic", "describe", typo, bootstrap=broker)
    assert missing.returncode == 1, missing
    assert missing.stderr.strip() == f"error: topic '{typo}' does not exist; did you mean '{topic_name}'?"

    assert ok(weir_cli("topic", "delete", topic_name, bootstrap=broker)).stdout == f"Deleted topic {topic_name}.\n"
    gone = weir_cli("topic", "delete", topic_name, bootstrap=broker)
    assert gone.returncode == 1 and f"topic '{topic_name}' does not exist" in gone.stderr, gone
    ok(weir_cli("topic", "delete", topic_name, "--if-exists", bootstrap=broker))


def test_cluster_info_and_api_versions(broker):
    info = as_json(weir_cli("cluster", "info", "--output", "json", bootstrap=broker))
    assert info["cluster_id"] and info["controller"] >= 0
    assert [(b["id"], b["port"]) for b in info["brokers"]] == [(broker.node_id, broker.port)]
    text = ok(weir_cli("cluster", "info", bootstrap=broker)).stdout
    assert f"Cluster: {info['cluster_id']}" in text and "BROKER  HOST" in text

    versions = as_json(weir_cli("cluster", "api-versions", "--output", "json", bootstrap=broker))
    [b] = versions["brokers"]
    apis = {a["name"]: a for a in b["apis"]}
    assert apis["Produce"]["key"] == 0 and apis["Produce"]["max"] >= 9
    assert apis["Metadata"]["used"] is not None and apis["Metadata"]["min"] <= apis["Metadata"]["used"] <= \
        apis["Metadata"]["max"]
    assert apis["ApiVersions"]["used"] >= 3
    missing = weir_cli("cluster", "api-versions", "--broker", 4242, bootstrap=broker)
    assert missing.returncode == 1 and "broker 4242 is not in the cluster" in missing.stderr, missing


def test_bad_usage_and_unreachable_broker():
    for argv in (["topic"], ["topic", "create"], ["topic", "list", "--no-such-flag"],
                 ["topic", "create", "x", "-p", "0"], ["topic", "list", "--output", "yaml"]):
        res = weir_cli(*argv)
        assert res.returncode == 2, (argv, res)
        assert res.stderr.strip(), (argv, res)

    closed = f"127.0.0.1:{free_port()}"
    t0 = time.monotonic()
    res = weir_cli("topic", "list", "--timeout", 2000, bootstrap=closed)
    assert res.returncode == 1, res
    assert time.monotonic() - t0 < 20
    assert res.stderr.startswith("error: cannot list topics: "), res.stderr
    assert closed in res.stderr, res.stderr

    res = weir_cli("cluster", "info", "--timeout", 1000, "--output", "json", bootstrap=closed)
    assert res.returncode == 1, res
    err = json.loads(res.stdout)["error"]
    assert err["kind"] in ("timeout", "transport") and "cannot reach the cluster" in err["message"], err

    bad = weir_cli("topic", "list", bootstrap="no-port-here")
    assert bad.returncode == 2 and "--bootstrap" in bad.stderr, bad


@pytest.mark.timeout(120)
def test_cluster_config_get_and_set(broker, topic_name):
    node = str(broker.node_id)
    key = "producer.id.expiration.ms"  # dynamic, an INT; a day and a millisecond changes nothing here

    def current():
        got = as_json(weir_cli("cluster", "config", "get", "--broker", node, "--output", "json", bootstrap=broker))
        return {c["name"]: c for c in got["configs"]}.get(key)
    try:
        ok(weir_cli("cluster", "config", "set", "--broker", node, "--set", f"{key}=86400001", bootstrap=broker))
        deadline = time.monotonic() + 30
        while (entry := current()) is None or entry["value"] != "86400001":
            assert time.monotonic() < deadline, entry
            time.sleep(0.2)
        assert entry["source"] == "DYNAMIC_BROKER_CONFIG", entry
        table = ok(weir_cli("cluster", "config", "get", "--broker", node, bootstrap=broker)).stdout.splitlines()
        assert table[0].split() == ["NAME", "VALUE", "SOURCE"]
        assert [key, "86400001", "DYNAMIC_BROKER_CONFIG"] in [row.split() for row in table[1:]]
        every = as_json(weir_cli("cluster", "config", "get", "--broker", node, "--all", "--output", "json",
                                 bootstrap=broker))["configs"]
        assert any(c["source"] == "DEFAULT_CONFIG" for c in every) and len(every) > len(table) - 1
    finally:
        ok(weir_cli("cluster", "config", "set", "--broker", node, "--delete", key, bootstrap=broker))
    deadline = time.monotonic() + 30
    while (entry := current()) is not None and entry["source"] == "DYNAMIC_BROKER_CONFIG":
        assert time.monotonic() < deadline, entry
        time.sleep(0.2)

    refused = weir_cli("cluster", "config", "set", "--broker", node, "--set", "log.dirs=/elsewhere", bootstrap=broker)
    assert refused.returncode == 1, refused
    assert "Cannot update these configs dynamically" in refused.stderr and "log.dirs" in refused.stderr, refused

    ok(weir_cli("topic", "create", topic_name, "-p", 1, "--config", "retention.ms=3600000", bootstrap=broker))
    got = as_json(weir_cli("cluster", "config", "get", "--topic", topic_name, "--output", "json", bootstrap=broker))
    assert {c["name"]: (c["value"], c["source"]) for c in got["configs"]}["retention.ms"] == \
        ("3600000", "DYNAMIC_TOPIC_CONFIG")

    for argv in (["cluster", "config", "get"], ["cluster", "config", "get", "--broker", node, "--topic", topic_name]):
        res = weir_cli(*argv, bootstrap=broker)
        assert res.returncode == 2, (argv, res)
