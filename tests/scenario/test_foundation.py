"""Foundation scenarios: the broker is reachable, describes itself like Kafka does, survives bad
input, stops cleanly and comes back after kill -9. Differential where the same body runs
against weir and the real Apache Kafka (the `broker` fixture)."""
from __future__ import annotations

import json
import os
import re
import socket
import struct
import subprocess
import time

import pytest
from confluent_kafka.admin import AdminClient

from harness import parse_broker_api_versions, run_tool, wire
from harness.apikeys import api_name
from harness.kafka import KAFKA_VERSION
from harness.paths import DATA

API_VERSIONS = 18
METADATA = 3
RECORDING = DATA / f"kafka-{KAFKA_VERSION}-api-versions.json"


def list_topics(broker, timeout=15.0):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    return admin.list_topics(timeout=timeout)


def api_versions_tool(broker) -> dict[int, dict]:
    res = run_tool("kafka-broker-api-versions", bootstrap=broker, timeout=90).check()
    nodes = parse_broker_api_versions(res.stdout)
    assert nodes, f"no broker in kafka-broker-api-versions output:\n{res.describe()}"
    return nodes


# ---------------------------------------------------------------------------------- discovery
def test_broker_api_versions_tool_lists_the_broker(broker):
    nodes = api_versions_tool(broker)

    assert list(nodes) == [broker.node_id]
    node = nodes[broker.node_id]
    assert node["address"] == broker.bootstrap
    for key in (API_VERSIONS, METADATA):
        api = node["apis"].get(key)
        assert api is not None, f"{api_name(key)}({key}) missing from {sorted(node['apis'])}"
        assert api["usable"] is not None, f"{api_name(key)}({key}) not usable: {api}"
        assert api["min"] <= api["usable"] <= api["max"]


@pytest.mark.pristine
def test_list_topics_shows_one_broker_and_no_topics(broker):
    md = list_topics(broker)

    assert list(md.brokers) == [broker.node_id]
    b = md.brokers[broker.node_id]
    assert (b.id, b.host, b.port) == (broker.node_id, broker.host, broker.port)
    assert [t for t in md.topics if not t.startswith("__")] == []


@pytest.mark.differential
def test_cluster_shape_matches_kafka(weir, kafka):
    shapes = {}
    for b in (weir, kafka):
        nodes = api_versions_tool(b)
        md = list_topics(b)
        usable = {key: nodes[b.node_id]["apis"][key]["usable"] is not None
                  for key in (API_VERSIONS, METADATA)}
        shapes[b.kind] = {
            "tool_brokers": len(nodes),
            "metadata_brokers": len(md.brokers),
            "controller_is_the_broker": md.controller_id == b.node_id,
            "usable": usable,
        }
    assert shapes["weir"] == shapes["kafka"]


# --------------------------------------------------------------------------------- ApiVersions
def test_api_versions_v0_over_raw_socket(broker):
    resp = wire.api_versions(broker.host, broker.port, 0)

    assert resp.error_code == 0
    assert resp.api_keys[API_VERSIONS][0] == 0 and resp.api_keys[API_VERSIONS][1] >= 3
    assert resp.api_keys[METADATA][0] <= 1 <= resp.api_keys[METADATA][1]


def test_api_versions_unknown_version_answers_unsupported_version_in_v0_layout(broker):
    with wire.Connection(broker.host, broker.port) as conn:
        cid = conn.correlation_id()
        request = wire.frame(
            wire.request_header(API_VERSIONS, 127, cid, flexible=True)
            + wire.Writer().compact_string("weir-harness").compact_string("1.0").empty_tagged_fields().bytes())
        body = conn.roundtrip(request, cid, flexible_response_header=False)

        # v0 layout: error_code, api_keys (int32 count, 6 bytes each); no throttle, no tags (KIP-511)
        error_code, count = struct.unpack(">hi", body[:6])
        assert error_code == 35  # UNSUPPORTED_VERSION
        assert len(body) == 6 + 6 * count
        keys = {k: (lo, hi) for k, lo, hi in struct.iter_unpack(">hhh", body[6:])}
        assert keys[API_VERSIONS][0] == 0 and keys[API_VERSIONS][1] >= 3

        # the connection stays usable: the client retries with a version it now knows
        assert conn.api_versions(0).error_code == 0


# ------------------------------------------------------------------------------- bad input
def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


MALFORMED = {
    "negative-size": struct.pack(">i", -1) + b"garbage!",
    "oversized-size": struct.pack(">i", 0x7FFFFFFF) + b"x" * 16,
    "zero-size": struct.pack(">i", 0),
    "truncated-header": _frame(b"\x00\x12\x00"),
    "client-id-overruns-frame": _frame(struct.pack(">hhih", API_VERSIONS, 0, 1, 1000) + b"ab"),
    "unknown-api-key": _frame(struct.pack(">hhih", 0x7FFF, 0, 1, -1)),
    "metadata-unsupported-version": _frame(struct.pack(">hhih", METADATA, 999, 1, -1)),
    "metadata-array-overruns-frame": _frame(struct.pack(">hhih", METADATA, 1, 1, -1)
                                            + struct.pack(">i", 1_000_000)),
    "random-bytes": _frame(bytes(range(256)) * 4),
}


@pytest.mark.parametrize("garbage", list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_frame_closes_only_that_connection(broker, garbage):
    with wire.Connection(broker.host, broker.port) as bystander:
        assert bystander.api_versions(0).error_code == 0

        with wire.Connection(broker.host, broker.port) as bad:
            try:
                bad.send_raw(garbage)
            except (BrokenPipeError, ConnectionResetError):
                pass  # already closed on us: that is the expected outcome
            assert bad.wait_closed(timeout=10.0), "broker kept the connection open after a malformed frame"

        # everyone else is still served: the connection that was open, and a fresh client
        assert bystander.api_versions(0).error_code == 0
    assert wire.api_versions(broker.host, broker.port, 0).error_code == 0
    assert list(list_topics(broker).brokers) == [broker.node_id]


# ----------------------------------------------------------------------------- lifecycle
def _refused(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return False
    except OSError:
        return True


def test_graceful_stop_exits_zero_and_restart_serves_again(weir):
    assert weir.stop() == 0  # stop() also asserts the exit code
    assert _refused(weir.host, weir.port)

    weir.restart()
    assert list(list_topics(weir).brokers) == [weir.node_id]


def test_kill_9_then_restart_on_same_data_dir_serves_again(weir):
    data_dir = weir.data_dir
    assert weir.kill() == -9
    assert _refused(weir.host, weir.port)

    weir.restart()
    assert weir.data_dir == data_dir
    assert wire.api_versions(weir.host, weir.port, 0).error_code == 0
    md = list_topics(weir)
    assert list(md.brokers) == [weir.node_id]
    assert (md.brokers[weir.node_id].host, md.brokers[weir.node_id].port) == (weir.host, weir.port)


def test_node_id_and_advertised_address_come_from_config(weir_factory):
    w = weir_factory(settings={"node.id": 7})
    md = list_topics(w)
    assert list(md.brokers) == [7]
    assert (md.brokers[7].host, md.brokers[7].port) == (w.host, w.port)


# ------------------------------------------------------------------ Kafka's ApiVersions record
def _api_versions_record(kafka) -> dict:
    v3 = wire.api_versions(kafka.host, kafka.port, 3)
    v4 = wire.api_versions(kafka.host, kafka.port, 4)
    assert v3.error_code == 0 and v4.error_code == 0
    assert v3.api_keys == v4.api_keys

    def features(resp):
        return {
            "supported_features": {n: {"min": lo, "max": hi}
                                   for n, (lo, hi) in sorted(resp.supported_features.items())},
            "finalized_features": {n: {"min_version_level": lo, "max_version_level": hi}
                                   for n, (lo, hi) in sorted(resp.finalized_features.items())},
        }

    return {
        "kafka_version": KAFKA_VERSION,
        "source": "ApiVersions v3 and v4 requests to a single-node KRaft broker (process.roles="
                  "broker,controller) started by tests/scenario; regenerate with WEIR_RECORD=1",
        "api_keys": [{"key": k, "name": api_name(k), "min": lo, "max": hi}
                     for k, (lo, hi) in sorted(v3.api_keys.items())],
        "features": {"api_versions_v3": features(v3), "api_versions_v4": features(v4)},
        # The epoch is the metadata offset at which features were finalized: informational only.
        "finalized_features_epoch": v4.finalized_features_epoch,
    }


def test_kafka_advertises_recorded_api_versions_and_features(kafka):
    record = _api_versions_record(kafka)
    if os.environ.get("WEIR_RECORD") == "1":
        RECORDING.parent.mkdir(parents=True, exist_ok=True)
        RECORDING.write_text(json.dumps(record, indent=2) + "\n")
        return
    assert RECORDING.is_file(), f"{RECORDING} missing; run this test once with WEIR_RECORD=1"
    expected = json.loads(RECORDING.read_text())
    assert expected["kafka_version"] == KAFKA_VERSION
    got_keys = {a["key"]: (a["min"], a["max"]) for a in record["api_keys"]}
    want_keys = {a["key"]: (a["min"], a["max"]) for a in expected["api_keys"]}
    assert got_keys == want_keys
    assert record["features"] == expected["features"]


def test_socket_buffer_sizes_apply_to_client_connections(weir_factory):
    """socket.send.buffer.bytes / socket.receive.buffer.bytes set SO_SNDBUF / SO_RCVBUF of the
    connections weir accepts (Linux reports twice the value set, in `ss -m`'s tb and rb)."""
    w = weir_factory(settings={"socket.send.buffer.bytes": 65536, "socket.receive.buffer.bytes": 32768})
    with socket.create_connection((w.host, w.port)) as s:
        s.sendall(wire.encode_api_versions_request(0, 1))
        s.recv(4)  # answered: the broker has set up the connection
        out = subprocess.run(["ss", "-tmnH", "state", "established", f"( sport = :{w.port} )"],
                             capture_output=True, text=True, check=True).stdout
    skmem = re.search(r"skmem:\(([^)]*)\)", out)
    assert skmem, out
    fields = dict(re.findall(r"([a-z]+)(\d+)", skmem.group(1)))
    assert (fields["tb"], fields["rb"]) == (str(2 * 65536), str(2 * 32768)), out


def _server_side_send_buffer(w, host: str) -> int:
    """SO_SNDBUF (as `ss -m` reports it: twice the value set) of the connection weir accepted from
    a client connecting to `host`."""
    with socket.create_connection((host, w.port)) as s:
        s.sendall(wire.encode_api_versions_request(0, 1))
        s.recv(4)  # answered: the broker has set up the connection
        client_port = s.getsockname()[1]
        out = subprocess.run(["ss", "-tmnH", "state", "established", f"( dport = :{client_port} )"],
                             capture_output=True, text=True, check=True).stdout
    skmem = re.search(r"skmem:\(([^)]*)\)", out)
    assert skmem, out
    return int(dict(re.findall(r"([a-z]+)(\d+)", skmem.group(1)))["tb"])


def test_a_connection_from_this_host_gets_a_fixed_send_buffer(weir_factory):
    """At socket.send.buffer.bytes -1 (the default) weir leaves the OS's autotuned send buffer to
    remote clients but gives a connection from this host a 262144-byte one
    (net::kSameHostSendBufferBytes: over loopback the client's acknowledgements would otherwise
    run weir's queued transmits on the client's own CPU). A configured size applies to every
    connection."""
    w = weir_factory()
    assert _server_side_send_buffer(w, w.host) == 2 * 262144
    w2 = weir_factory(settings={"socket.send.buffer.bytes": 65536})
    assert _server_side_send_buffer(w2, w2.host) == 2 * 65536
