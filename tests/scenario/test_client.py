"""src/client, weir's own Kafka client library, against weir and against Apache Kafka.

Each scenario runs `weir_client_probe` (src/client/probe.cpp, built next to the weir binary),
which makes one client call and prints what the client observed as JSON. Differential: the same
body runs against both brokers (the `broker` fixture). The dead-broker scenarios need no broker.
"""
from __future__ import annotations

import json
import socket
import subprocess

import pytest

from harness import wire
from harness.paths import weir_bin

UNKNOWN_TOPIC_OR_PARTITION = 3
# Only a guard against a hung probe; the client's own deadline is what the tests check.
PROBE_GUARD_S = 120


def probe(bootstrap: str, *args: str, timeout_ms: int = 60_000) -> tuple[int, dict]:
    exe = weir_bin().parent / "weir_client_probe"
    assert exe.is_file(), f"{exe} is not built (cmake target weir_client_probe)"
    res = subprocess.run([str(exe), "--bootstrap", bootstrap, "--timeout-ms", str(timeout_ms), *args],
                         capture_output=True, text=True, timeout=PROBE_GUARD_S)
    lines = [l for l in res.stdout.splitlines() if l.startswith("{")]
    assert lines, f"probe printed no JSON (rc {res.returncode}):\n{res.stdout}\n{res.stderr}"
    return res.returncode, json.loads(lines[-1])


def ok(bootstrap: str, *args: str, **kw) -> dict:
    rc, out = probe(bootstrap, *args, **kw)
    assert rc == 0 and out["ok"], out
    return out


def create_topic(broker, name: str, partitions: int) -> None:
    out = ok(broker.bootstrap, "create-topic", name, str(partitions))
    assert out["error_code"] == 0, out
    assert out["name"] == name


# ---------------------------------------------------------------------------------- metadata
def test_metadata_names_the_broker_and_the_leader_of_every_partition(broker, topic_name):
    create_topic(broker, topic_name, 3)
    md = ok(broker.bootstrap, "metadata", topic_name)
    assert [(b["node_id"], b["port"]) for b in md["brokers"]] == [(broker.node_id, broker.port)]
    assert md["cluster_id"]
    [topic] = md["topics"]
    assert topic["name"] == topic_name and topic["error_code"] == 0
    assert sorted(p["partition"] for p in topic["partitions"]) == [0, 1, 2]
    assert {p["leader"] for p in topic["partitions"]} == {broker.node_id}


def test_each_api_uses_the_highest_version_both_sides_support(broker):
    md = ok(broker.bootstrap, "metadata")
    advertised = wire.api_versions(broker.host, broker.port, 3).api_keys
    used = {v["key"]: v for v in md["versions"]}
    assert {0, 1, 2, 3, 10, 18, 19} <= used.keys(), used
    for key, v in used.items():
        codec_max = v["codec_max"] - (1 if v["unstable"] else 0)
        assert v["used"] == min(codec_max, advertised[key][1]), (key, v, advertised[key])


def test_metadata_of_a_missing_topic_reports_unknown_topic(broker, topic_name):
    md = ok(broker.bootstrap, "metadata", topic_name)
    [topic] = md["topics"]
    assert topic["error_code"] == UNKNOWN_TOPIC_OR_PARTITION


def test_many_requests_share_one_pipelined_connection(broker):
    out = ok(broker.bootstrap, "pipeline", "50")
    assert out["answered"] == 50
    # All 50 are queued before the first response can be read; more than one in flight at once
    # is what pipelining means.
    assert out["in_flight_at_once"] > 1
    assert out["connections_opened"] == 0  # all went over the connection the warm-up opened


# ------------------------------------------------------------------------ produce and fetch
def test_produce_to_the_leader_then_fetch_it_back(broker, topic_name):
    create_topic(broker, topic_name, 2)
    first = ok(broker.bootstrap, "produce", topic_name, "1", "a", "b", "c")
    assert first["base_offset"] == 0
    assert first["leader"] == broker.node_id
    second = ok(broker.bootstrap, "produce", topic_name, "1", "d")
    assert second["base_offset"] == 3
    fetched = ok(broker.bootstrap, "fetch", topic_name, "1", "0")
    assert fetched["high_watermark"] == 4
    assert [(r["offset"], r["value"]) for r in fetched["records"]] == [(0, "a"), (1, "b"), (2, "c"), (3, "d")]
    assert ok(broker.bootstrap, "fetch", topic_name, "0", "0")["records"] == []
    assert ok(broker.bootstrap, "list-offsets", topic_name, "1", "latest")["offset"] == 4
    assert ok(broker.bootstrap, "list-offsets", topic_name, "1", "earliest")["offset"] == 0


def test_fetch_past_the_end_is_offset_out_of_range(broker, topic_name):
    create_topic(broker, topic_name, 1)
    ok(broker.bootstrap, "produce", topic_name, "0", "x")
    rc, out = probe(broker.bootstrap, "fetch", topic_name, "0", "5")
    assert rc == 2
    assert out["error"]["kind"] == "kafka"
    assert out["error"]["name"] == "OFFSET_OUT_OF_RANGE"


def test_produce_to_a_partition_the_topic_does_not_have_is_refused(broker, topic_name):
    create_topic(broker, topic_name, 1)
    rc, out = probe(broker.bootstrap, "produce", topic_name, "4", "x")
    assert rc == 2
    assert out["error"]["kind"] == "invalid_argument", out
    assert "partition 4" in out["error"]["message"]


# --------------------------------------------------------------------------- coordinators
def test_group_coordinator_lookup_finds_the_broker(broker):
    out = ok(broker.bootstrap, "find-coordinator", "group", "client-probe-group")
    assert out["node_id"] == broker.node_id
    assert out["port"] == broker.port


def test_transaction_coordinator_lookup_retries_while_the_coordinator_is_not_available(broker):
    # The first lookup creates __transaction_state; until its partition is loaded the broker may
    # answer COORDINATOR_NOT_AVAILABLE, which the client retries until it gets the coordinator.
    rc, out = probe(broker.bootstrap, "find-coordinator", "transaction", "client-probe-txn", timeout_ms=60_000)
    assert rc == 0, out
    assert out["node_id"] == broker.node_id
    assert out["port"] == broker.port


# ------------------------------------------------------------------------------- retries
def test_produce_to_a_topic_created_after_the_first_request_is_retried_until_it_exists(broker, topic_name):
    out = ok(broker.bootstrap, "produce-to-late-topic", topic_name, "late")
    assert out["base_offset"] == 0
    assert "UNKNOWN_TOPIC_OR_PARTITION" in out["retried_on"], out
    fetched = ok(broker.bootstrap, "fetch", topic_name, "0", "0")
    assert [r["value"] for r in fetched["records"]] == ["late"]


# ---------------------------------------------------------------------------- dead brokers
def test_a_broker_that_never_answers_gives_a_timeout_at_the_deadline():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections complete in the backlog; nothing is ever read or written
        port = silent.getsockname()[1]
        rc, out = probe(f"127.0.0.1:{port}", "metadata", timeout_ms=1500)
    assert rc == 2
    assert out["error"]["kind"] == "timeout", out
    assert f"127.0.0.1:{port}" in out["error"]["message"]


def test_a_closed_port_gives_a_timeout_naming_the_connection_failure():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # the port is free again: connecting to it is refused
    rc, out = probe(f"127.0.0.1:{port}", "metadata", timeout_ms=1500)
    assert rc == 2
    assert out["error"]["kind"] == "timeout", out
    assert "refused" in out["error"]["message"].lower(), out


def test_a_bad_bootstrap_list_is_an_error_before_any_connection():
    rc, out = probe("localhost", "metadata")
    assert rc == 2
    assert out["error"] == {"kind": "invalid_argument", "code": 0, "name": "",
                            "message": "Invalid url in bootstrap.servers: localhost"}
