"""Connections and request memory are bounded (issue 12): max.connections (weir's default derived
from RLIMIT_NOFILE), accept back-off on EMFILE, max.connections.per.ip, connections.max.idle.ms,
weir.partial.request.timeout.ms and the queued.max.request.bytes budget.

Differential where Kafka has the behaviour and it is cheap to configure (per-IP limit and idle
close: one Kafka of the test's own). The file-descriptor scenarios are weir only (a JVM does not
start under a 256-descriptor limit), as are the partial-frame deadline (Kafka has none; a stalled
frame lasts until connections.max.idle.ms) and the memory budget (Kafka's default is unbounded: it
would allocate the 20 declared 100 MB frames at once, beyond its 1 GiB heap).
"""
from __future__ import annotations

import os
import socket
import stat
import struct
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from harness import wire
from harness.kreq import Kreq, b64
from harness.paths import weir_bin
from harness.ports import free_port
from test_fetch_sessions import produce, record_batch  # noqa: F401 (record_batch: used by produce)
from test_kreq import create_topic, wait_for_leaders
from test_metrics import scrape

WAIT_S = 30.0


def wait_for(what: str, check, timeout: float = WAIT_S):
    """Polls check() until it returns a true value (returned); fails after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def limited_weir(weir_factory, tmp_path: Path, nofile: int, settings: dict | None = None):
    """weir under `prlimit --nofile=N:N` (soft and hard), with its metrics endpoint."""
    wrapper = tmp_path / f"weir-nofile-{nofile}"
    wrapper.write_text(f'#!/bin/sh\nexec prlimit --nofile={nofile}:{nofile} "{weir_bin()}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    port = free_port()
    b = weir_factory(binary=wrapper, settings={"metrics.listener": f"127.0.0.1:{port}", **(settings or {})})
    b.metrics_port = port
    return b


def metrics_weir(weir_factory, settings: dict):
    port = free_port()
    b = weir_factory(settings={"metrics.listener": f"127.0.0.1:{port}", **settings})
    b.metrics_port = port
    return b


def api_versions_frame(correlation_id: int) -> bytes:
    return wire.encode_api_versions_request(0, correlation_id, "flood")


def produce_and_fetch(k: Kreq, topic: str, value: bytes) -> None:
    produce(k, topic, 0, value)
    resp = k.send("Fetch", 12, {"MaxWaitMillis": 0, "MinBytes": 1, "MaxBytes": 1 << 20, "Topics": [{
        "Topic": topic, "Partitions": [{"Partition": 0, "FetchOffset": 0, "PartitionMaxBytes": 1 << 20}]}]})
    [t] = resp["Topics"]
    [p] = t["Partitions"]
    assert p["ErrorCode"] == 0, resp
    assert value in b64(p["RecordBatches"]), "the produced value is not in the fetched batches"


def api_versions_ok(broker) -> bool:
    try:
        return wire.api_versions(broker.host, broker.port).error_code == 0
    except (OSError, wire.ConnectionClosed):
        return False


# Lines weir may write for a flood: start-up, then rate-limited events (connection_closed: a
# burst of 100 and 20 a second per shard; accept lines: 5 and 1 a second).
LOG_LINES_MAX = 500


def log_lines(broker) -> list[str]:
    return broker.log_path.read_text(errors="replace").splitlines()


def answered(sock: socket.socket) -> bool:
    """True once a whole ApiVersions response has arrived on a non-blocking socket."""
    try:
        data = sock.recv(65536, socket.MSG_PEEK)
    except BlockingIOError:
        return False
    return len(data) >= 4 and len(data) >= 4 + struct.unpack(">i", data[:4])[0]


def test_default_connection_cap_comes_from_the_fd_limit_and_excess_clients_wait(weir_factory, tmp_path, topic_name):
    """Under a 256-descriptor limit weir caps connections at 128 (half); 300 more clients: the
    broker keeps serving its existing client, the excess waits in the listen backlog (as Kafka's
    max.connections), each closed connection lets one waiting client in, and the log stays small."""
    b = limited_weir(weir_factory, tmp_path, 256)
    assert any("event=limits" in line and "open_files=256" in line and "max.connections=128" in line
               for line in log_lines(b)), "the start-up line names the descriptor limit and the cap"
    with Kreq(b) as k:
        create_topic(k, topic_name)
        wait_for_leaders(k, topic_name, 1)
        produce_and_fetch(k, topic_name, b"before the flood")
        # DescribeConfigs shows the limits in force (weir's defaults, not Kafka's unlimited ones).
        described = k.send("DescribeConfigs", 4, {"Resources": [{
            "ResourceType": "BROKER", "ResourceName": str(b.node_id),
            "ConfigNames": ["max.connections", "queued.max.request.bytes"]}]})["Resources"][0]
        assert described["ErrorCode"] == 0, described
        assert {c["Name"]: (c["Value"], c["Source"]) for c in described["Configs"]} == {
            "max.connections": ("128", "DEFAULT_CONFIG"),
            "queued.max.request.bytes": (str(256 << 20), "DEFAULT_CONFIG")}, described

        flood = []
        try:
            for i in range(300):
                s = socket.create_connection((b.host, b.port), timeout=10)
                s.sendall(api_versions_frame(i + 1))
                s.setblocking(False)
                flood.append(s)
            cap = 128
            # The kreq connection holds one slot: 127 flood clients are served, 173 wait.
            served = wait_for("127 flood clients answered", lambda: [s for s in flood if answered(s)]
                              if sum(answered(s) for s in flood) >= cap - 1 else None)
            m = wait_for("the cap to be hit", lambda: (lambda m: m if m.value(
                "weir_limit_hits_total", limit="max.connections") >= 1 else None)(scrape(b)))
            assert m.value("weir_connections_max") == cap
            assert m.value("weir_connections_active") == cap
            assert len(served) == cap - 1

            produce_and_fetch(k, topic_name, b"during the flood")

            for s in served[:20]:
                s.close()
                flood.remove(s)
            # Each closed connection gave its slot to a waiting client, in accept order.
            wait_for("20 more flood clients answered", lambda: sum(answered(s) for s in flood) >= cap - 1)
            m = scrape(b)
            assert m.value("weir_connections_active") == cap
            assert m.value("weir_accept_errors_total") == 0  # the cap keeps accept(2) clear of EMFILE
        finally:
            for s in flood:
                s.close()
        produce_and_fetch(k, topic_name, b"after the flood")
    lines = log_lines(b)
    assert len(lines) < LOG_LINES_MAX, f"{len(lines)} log lines"


def test_accept_backs_off_when_descriptors_run_out(weir_factory, tmp_path, topic_name):
    """max.connections set above what the descriptors allow: accept(2) fails with EMFILE; weir
    backs off (10 ms doubling to 1 s) instead of spinning, logs at a bounded rate and serves on."""
    b = limited_weir(weir_factory, tmp_path, 256, {"max.connections": 100000})
    with Kreq(b) as k:
        create_topic(k, topic_name)
        wait_for_leaders(k, topic_name, 1)
        flood = []
        started = time.monotonic()
        try:
            for _ in range(300):
                s = socket.create_connection((b.host, b.port), timeout=10)
                s.setblocking(False)
                flood.append(s)
            # (No scrape while the descriptors are gone: the metrics endpoint could not accept.)
            wait_for("accept failures in the log",
                     lambda: sum("event=accept_failed" in line for line in log_lines(b)) >= 3)
            # The connected client is still answered (a produce would need descriptors for the
            # storage layer's checkpoints: what weir's default cap leaves room for).
            assert k.send("ApiVersions", 3, {"ClientSoftwareName": "kreq", "ClientSoftwareVersion": "1"})[
                "ErrorCode"] == 0
        finally:
            for s in flood:
                s.close()
        # Descriptors are free again: a new client is accepted.
        wait_for("a new client served", lambda: api_versions_ok(b))
        produce_and_fetch(k, topic_name, b"with descriptors back")
        elapsed = time.monotonic() - started
        errors = scrape(b).value("weir_accept_errors_total")
        assert errors >= 3
        # Spinning would fail accept(2) hundreds of thousands of times a second.
        assert errors <= 20 + 2 * elapsed, f"{errors} accept failures in {elapsed:.1f}s"
    failed = [line for line in log_lines(b) if "event=accept_failed" in line]
    assert "Too many open files" in failed[0]
    assert len(failed) <= 20, f"{len(failed)} accept_failed lines"
    assert len(log_lines(b)) < LOG_LINES_MAX


@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential)),
])
def limited(request):
    """weir or Kafka with a 2-connection limit for 127.0.0.2 and a 1.5 s idle timeout."""
    settings = {"max.connections.per.ip.overrides": "127.0.0.2:2", "connections.max.idle.ms": 1500}
    if request.param == "weir":
        return request.getfixturevalue("weir_factory")(settings=settings)
    return request.getfixturevalue("kafka_factory")(overrides=settings)


def connect_from(source: str, broker) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10)
    s.bind((source, 0))
    s.connect(("127.0.0.1", broker.port))
    return s


def closed_by_peer(s: socket.socket, timeout: float = WAIT_S) -> bool:
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def roundtrip_api_versions(s: socket.socket, correlation_id: int) -> int:
    s.sendall(api_versions_frame(correlation_id))
    size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
    body = s.recv(size, socket.MSG_WAITALL)
    return struct.unpack(">ih", body[:6])[1]  # correlation id, then the error code


def test_per_ip_limit_closes_at_accept_and_idle_connections_are_closed(limited):
    """One broker of each kind (a Kafka start is the expensive part) for both behaviours."""
    # max.connections.per.ip.overrides: the third connection from 127.0.0.2 is closed at once.
    a = connect_from("127.0.0.2", limited)
    c = connect_from("127.0.0.2", limited)
    try:
        assert roundtrip_api_versions(a, 1) == 0
        assert roundtrip_api_versions(c, 2) == 0
        third = connect_from("127.0.0.2", limited)
        assert closed_by_peer(third), "the third connection from 127.0.0.2 stays open"
        third.close()
        # The default (unlimited) applies to 127.0.0.1.
        with wire.Connection("127.0.0.1", limited.port) as other:
            assert other.api_versions().error_code == 0
    finally:
        a.close()
        c.close()
    # A closed connection gives its slot back.
    fresh = wait_for("a slot for 127.0.0.2", lambda: _served_from("127.0.0.2", limited))
    fresh.close()

    # connections.max.idle.ms: a connection with nothing to do is closed.
    with wire.Connection("127.0.0.1", limited.port) as idle:
        assert idle.api_versions().error_code == 0
        assert idle.wait_closed(WAIT_S), "the idle connection was not closed"


def _served_from(source: str, broker):
    s = connect_from(source, broker)
    try:
        roundtrip_api_versions(s, 9)
        return s
    except (OSError, struct.error):
        s.close()
        return None


def test_slow_partial_request_is_closed_after_the_deadline(weir_factory):
    b = metrics_weir(weir_factory, {"weir.partial.request.timeout.ms": 1000})
    with wire.Connection(b.host, b.port) as stalled, wire.Connection(b.host, b.port) as healthy:
        frame = api_versions_frame(1)
        stalled.send_raw(frame[:7])  # the size and part of the header, then nothing
        assert stalled.wait_closed(WAIT_S), "the stalled partial request was not closed"
        # A connection between requests is not subject to it (only connections.max.idle.ms).
        assert healthy.api_versions().error_code == 0
        assert healthy.api_versions().error_code == 0
    m = scrape(b)
    assert m.value("weir_connections_closed_by_timeout_total", timeout="partial") == 1
    arrived = f"{7 - 4} of {len(frame) - 4} bytes arrived"
    assert any("weir.partial.request.timeout.ms" in line and arrived in line for line in log_lines(b))


def rss_bytes(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


@pytest.mark.timeout(240)
def test_memory_budget_bounds_partial_frames_and_a_large_produce_completes(weir_factory, topic_name):
    """20 connections declare 100 MB frames and send half: weir's request memory stays within
    queued.max.request.bytes (RSS within it plus a fixed overhead), the budget metric fires, and a
    64 MiB produce completes: the stalled frames that hold the memory it waits for are closed
    (the partial-request deadline is 10 minutes here, so only that reclaim can let it through)."""
    budget = 128 << 20
    b = metrics_weir(weir_factory, {"queued.max.request.bytes": budget, "message.max.bytes": 70 << 20,
                                    "weir.partial.request.timeout.ms": 600000})
    pid = b.pid
    baseline = rss_bytes(pid)
    with Kreq(b) as k:
        create_topic(k, topic_name)
        wait_for_leaders(k, topic_name, 1)

    declared = 100_000_000
    half = declared // 2
    chunk = b"\x00" * (1 << 20)
    stop = threading.Event()

    def attacker():
        try:
            s = socket.create_connection((b.host, b.port), timeout=30)
            s.sendall(struct.pack(">i", declared))
            sent = 0
            while sent < half and not stop.is_set():
                sent += s.send(chunk[: min(len(chunk), half - sent)])
            stop.wait(60)
            s.close()
        except OSError:
            pass  # closed by the broker (the deadline)

    threads = [threading.Thread(target=attacker, daemon=True) for _ in range(20)]
    for t in threads:
        t.start()
    try:
        m = wait_for("the budget to bind", lambda: (lambda m: m if m.value(
            "weir_limit_hits_total", limit="queued.max.request.bytes") >= 1 else None)(scrape(b)))
        assert m.value("weir_request_memory_limit_bytes") == budget
        assert m.value("weir_request_memory_bytes") <= budget
        held = rss_bytes(pid)
        # 20 x 50 MB arrived or waiting: without the budget (or with the buffer sized from the
        # prefix) this would be 1-2 GB. Overhead: baseline, plus buffers being regrown.
        assert held <= baseline + budget + (64 << 20), f"RSS {held >> 20} MiB (baseline {baseline >> 20} MiB)"

        p = Producer({"bootstrap.servers": b.bootstrap, "message.max.bytes": 70 << 20,
                      "batch.size": 70 << 20, "receive.message.max.bytes": 100 << 20,
                      "linger.ms": 0, "acks": "all", "compression.type": "none"})
        delivered = []
        value = os.urandom(64 << 20)
        p.produce(topic_name, value, on_delivery=lambda err, msg: delivered.append(err))
        assert p.flush(120) == 0, "the 64 MiB produce is still queued"
        assert delivered == [None], delivered
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    m = scrape(b)
    assert m.value("weir_connections_closed_by_timeout_total", timeout="stalled") >= 1
    assert m.value("weir_connections_closed_by_timeout_total", timeout="partial") == 0
    assert any("queued.max.request.bytes) needed by other requests" in line for line in log_lines(b))
    assert m.value("weir_request_memory_peak_bytes") <= budget
    assert rss_bytes(pid, "VmHWM") <= baseline + budget + (64 << 20) + (3 * (64 << 20)), \
        "peak RSS beyond the budget, the 64 MiB produce's copies and the overhead"
    budget_lines = [line for line in log_lines(b) if "event=request_memory_budget_full" in line]
    assert 1 <= len(budget_lines) <= 30, f"{len(budget_lines)} budget lines"
