"""Fixtures for scenario tests.

  weir            a started `weir serve` (function scope); stopped at the end with its exit code checked
  weir_factory    weir_factory(settings={...}, config_file=..., port=...) -> another started weir
  kafka           a real single-node KRaft Apache Kafka 4.3.1, shared by the session, started lazily
  kafka_factory   kafka_factory(overrides={...}) -> a Kafka of the test's own (to kill or restart)
  broker          parametrized: weir, then kafka (ids "weir"/"kafka"); the kafka one is marked
                  `kafka` and `differential`, so `-m "not kafka"` runs weir only
  topic_name      a topic name unique to the test
  cluster_factory cluster_factory(kinds=["kafka", "kafka", "kafka"], controllers=1, ...) -> a started
                  harness.cluster.Cluster (Kafka controllers + Kafka/weir brokers on 127.0.0.1);
                  every node is stopped at the end (exit codes checked), every fault undone

Every broker exposes .bootstrap, .host, .port, .node_id, .data_dir, .stop(), .kill(), .restart()
and its log file (.log_path); logs of the brokers a failed test used are attached to the report.
Helpers: harness.run_tool (Kafka's CLI), harness.wire (raw protocol), harness.normalise.
"""
from __future__ import annotations

import re
import secrets
import signal
import subprocess
import sys

import pytest

from harness import procs
from harness.cluster import ClusterFactory
from harness.kafka import KafkaFactory
from harness.weir import WeirFactory

_MARKERS = {
    "slow": "long-running scenario; excluded by `make scenario`",
    "kafka": "needs a real Apache Kafka broker (JVM)",
    "differential": "compares weir's behaviour with Apache Kafka's",
    "pristine": "needs the shared Kafka before any other test changed it",
    "oracle_slow": "the test's Kafka variant (a parameter id 'kafka') is `slow` (make test time); "
                   "its weir variant stays in `make scenario`",
}

# Whether the shared Kafka has been (or is about to be) used by a test that may change it.
_shared_kafka_state = {"dirty": False}


def pytest_configure(config):
    for name, doc in _MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    # A CI runner cancelling the job sends SIGTERM: turn it into the same orderly unwinding as
    # Ctrl-C, so fixtures stop their brokers (PR_SET_PDEATHSIG covers a harder kill).
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        def _on_sigterm(signum, frame):
            raise KeyboardInterrupt("SIGTERM")
        signal.signal(signal.SIGTERM, _on_sigterm)


def pytest_unconfigure(config):
    left = procs.kill_all(grace=10.0)
    if left:
        sys.stderr.write(f"weir harness: stopped {len(left)} leftover process(es): {left}\n")


def pytest_collection_modifyitems(config, items):
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & {"kafka", "kafka_factory", "cluster_factory"}:
            item.add_marker(pytest.mark.kafka)
        callspec = getattr(item, "callspec", None)
        if item.get_closest_marker("oracle_slow") and callspec is not None and "kafka" in callspec.id.split("-"):
            item.add_marker(pytest.mark.slow)
    # Tests that need a pristine shared Kafka run before anything else can touch it.
    items.sort(key=lambda it: 0 if it.get_closest_marker("pristine") else 1)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    seen: set[str] = set()
    for value in list(getattr(item, "funcargs", {}).values()):
        if not hasattr(value, "log_sections"):
            continue
        try:
            for title, text in value.log_sections():
                if title not in seen:  # a broker and its factory report the same log
                    seen.add(title)
                    report.sections.append((title, text))
        except Exception as e:  # diagnostics must never hide the real failure
            report.sections.append(("harness", f"could not read broker log: {e!r}"))


# ---------------------------------------------------------------------------------------- weir
@pytest.fixture
def weir_factory(tmp_path):
    factory = WeirFactory(tmp_path / "weir")
    yield factory
    factory.finish()


@pytest.fixture
def weir(weir_factory):
    return weir_factory()


# ---------------------------------------------------------------------------------------- kafka
@pytest.fixture(scope="session")
def _shared_kafka_factory(tmp_path_factory):
    factory = KafkaFactory(tmp_path_factory.mktemp("kafka-shared"))
    yield factory
    factory.finish()


@pytest.fixture(scope="session")
def kafka(_shared_kafka_factory):
    """The session's shared Kafka. Do not stop or kill it; use kafka_factory for that."""
    return _shared_kafka_factory()


@pytest.fixture(autouse=True)
def _track_shared_kafka(request):
    if "kafka" in request.fixturenames and request.node.get_closest_marker("pristine") is None:
        _shared_kafka_state["dirty"] = True


@pytest.fixture
def kafka_factory(tmp_path):
    factory = KafkaFactory(tmp_path / "kafka")
    yield factory
    factory.finish()


# ------------------------------------------------------------------------------------ clusters
@pytest.fixture
def cluster_factory(tmp_path):
    """Multi-node KRaft clusters; at most one should run at a time on a small machine."""
    factory = ClusterFactory(tmp_path / "cluster")
    yield factory
    factory.finish()


# ----------------------------------------------------------------------------------- disks
@pytest.fixture
def small_disk(tmp_path):
    """A 24 MiB tmpfs (a disk that fills); skips if this machine cannot mount one. Request it
    before the broker fixtures, so that it is unmounted after their brokers stopped."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip()}): a full-disk scenario needs one")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


# ------------------------------------------------------------------------------- differential
@pytest.fixture(params=[
    pytest.param("weir", id="weir"),
    pytest.param("kafka", id="kafka", marks=(pytest.mark.kafka, pytest.mark.differential)),
])
def broker(request):
    """weir or the real Kafka, so one scenario body runs against both."""
    if request.param == "weir":
        return request.getfixturevalue("weir")
    if request.node.get_closest_marker("pristine") is not None:
        if _shared_kafka_state["dirty"]:
            return request.getfixturevalue("kafka_factory")()
        return request.getfixturevalue("kafka")
    _shared_kafka_state["dirty"] = True
    return request.getfixturevalue("kafka")


# -------------------------------------------------------------------------------------- names
@pytest.fixture
def topic_name(request):
    """A legal topic name unique to this test (append a suffix for more than one)."""
    base = re.sub(r"[^a-zA-Z0-9-]+", "-", request.node.name).strip("-")[:180]
    return f"t-{base}-{secrets.token_hex(3)}"
