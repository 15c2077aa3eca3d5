"""Multi-node KRaft clusters on one machine: Apache Kafka 4.3.1 controllers, Kafka brokers and weir
brokers (process.roles=broker) on 127.0.0.1, each on its own ports and data directory.

Quorum form. The default is the *static* quorum: every node (controller and broker) gets
`controller.quorum.voters=3000@127.0.0.1:p0,...` and the controllers are formatted without
--standalone/--initial-controllers (kraft.version=0). Chosen because:
  - every node learns the controllers' addresses from its own config, so a test can put a
    proxy.LinkProxy on one broker->controller link by giving that broker the proxy's address in
    its voters string (with the dynamic form the leader's endpoint comes from the VotersRecord in
    the log, the same for everyone, so only the bootstrap contact could be intercepted);
  - nothing has to be coordinated between the format commands (no directory ids).
`dynamic=True` gives the dynamic form instead (kraft.version=1): controllers and brokers get
`controller.quorum.bootstrap.servers`; a 1-controller quorum is formatted with --standalone and a
3-controller one with --initial-controllers id@127.0.0.1:port:directory-id (same string on all).
Both forms are exercised by test_cluster_harness.py's slow tests.

Formatting (facts from Kafka 4.3.1's `kafka-storage format`, checked on this machine):
  - the default release is 4.3-IV0, i.e. metadata.version level 30;
  - without --feature it writes FeatureLevelRecords eligible.leader.replicas.version=1,
    group.version=1, share.version=1, streams.version=1, transaction.version=2;
  - `--feature transaction.version=0 --feature group.version=0 --feature share.version=0
    --feature streams.version=0 --feature eligible.leader.replicas.version=0` is accepted
    together; a feature at level 0 gets no FeatureLevelRecord. DEFAULT_FEATURES below: the
    three weir does not serve in a cluster yet at 0, transaction.version and
    eligible.leader.replicas.version at their 4.3.1 defaults (2 and 1: KIP-966 is on, as in a
    cluster formatted with Kafka's defaults);
  - at metadata.version 4.3-IV0 none of these five depends on another: each of share.version=1,
    streams.version=1, transaction.version=1 or 2, eligible.leader.replicas.version=1 is accepted
    with the other four at 0 (their dependencies are on metadata.version only);
  - kraft.version is 1 with --standalone/--initial-controllers, 0 with controller.quorum.voters.
Brokers (Kafka and weir) are formatted with the quorum's cluster id and the same --feature flags;
a broker's format does not write bootstrap metadata that matters (the controllers' does).

Readiness: a controller is started when it answers ApiVersions on its CONTROLLER listener; the
quorum is ready when DescribeQuorum (v2, wire.Connection.describe_quorum) on a running controller
names a leader that every running controller agrees on. A broker is ready when Metadata from it
lists it (registered and unfenced).

Timing defaults (CONTROLLER_TIMING, BROKER_TIMING): broker.session.timeout.ms=9000 (Kafka's
default) on the controllers and broker.heartbeat.interval.ms=1000 (default 2000) on the brokers:
a killed broker is fenced (its partitions' leadership moved) within ~9 s. 6000 was tried and
fenced healthy brokers while this 2-core machine was loaded by three C++ builds.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from . import procs, wire
from .broker import BrokerProcess, BrokerStartError, run_format
from .kafka import KafkaBroker, new_cluster_id
from .paths import kafka_classpath_file, kafka_tool
from .ports import free_port
from .weir import WeirBroker, _value

HOST = "127.0.0.1"
CONTROLLER_ID_BASE = 3000
DEFAULT_FEATURES: dict[str, int] = {
    "transaction.version": 2,
    "group.version": 0,
    "share.version": 0,
    "streams.version": 0,
    "eligible.leader.replicas.version": 1,
}
CONTROLLER_TIMING = {"broker.session.timeout.ms": "9000"}
BROKER_TIMING = {"broker.heartbeat.interval.ms": "1000"}
POLL = 0.2

T = TypeVar("T")


def wait_for(what: str, fn: Callable[[], T], timeout: float, interval: float = POLL,
             describe: Callable[[], str] | None = None) -> T:
    """Poll fn until it returns something truthy (returned); on timeout fail with `what`.

    Exceptions raised by fn (a broker restarting, a refused connection) count as "not yet"; the
    last one is shown in the failure message, as is describe() (the state seen last).
    """
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    last_value = None
    while True:
        try:
            last_value = fn()
            if last_value:
                return last_value
        except (OSError, wire.ConnectionClosed, wire.ProtocolError, RuntimeError) as e:
            last_error = e
        if time.monotonic() >= deadline:
            extra = ""
            if describe is not None:
                try:
                    extra = f"\nstate: {describe()}"
                except Exception as e:  # diagnostics must not hide the timeout
                    extra = f"\nstate: (could not describe: {e!r})"
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} "
                                 f"(last value {last_value!r}, last error {last_error!r}){extra}")
        time.sleep(interval)


def _props_value(v) -> str:
    return _value(v)


def _write_properties(path: Path, props: Mapping[str, str], title: str) -> None:
    lines = [f"# written by the weir test harness for {title}"]
    lines += [f"{k}={v}" for k, v in props.items()]
    path.write_text("\n".join(lines) + "\n")


def _apply_overrides(props: dict[str, str], overrides: Mapping[str, object] | None) -> None:
    for k, v in (overrides or {}).items():
        if v is None:
            props.pop(k, None)
        else:
            props[k] = _props_value(v)


def _feature_args(features: Mapping[str, int]) -> list[str]:
    out: list[str] = []
    for name, level in features.items():
        out += ["--feature", f"{name}={level}"]
    return out


class _NodeControl:
    """launch() without waiting, pause/resume with SIGSTOP/SIGCONT. Mixed into BrokerProcess
    subclasses: start() = launch() + wait_ready()."""

    paused = False

    def launch(self) -> None:
        if self.running:
            raise RuntimeError(f"{self!r} is already running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._prepare()
        argv = self._argv()
        with open(self.log_path, "ab") as log:
            log.write(f"\n===== harness: start #{self.starts + 1}: {' '.join(argv)}\n".encode())
            log.flush()
            self.proc = procs.spawn(argv, stdout=log, stderr=subprocess.STDOUT, env=self._env(),
                                    cwd=self.workdir)
        self.paused = False
        self.starts += 1
        self.started_at = time.monotonic()

    def start(self):
        self.launch()
        self.wait_ready()
        self.ready_after = time.monotonic() - self.started_at
        return self

    def pause(self) -> None:
        """SIGSTOP: the process keeps its sockets but answers nothing (a hung node)."""
        if not self.running:
            raise RuntimeError(f"{self!r} is not running")
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def stop(self, check: bool = True, timeout: float | None = None) -> int:
        if self.paused:  # a stopped process would never see SIGTERM
            self.resume()
        return super().stop(check=check, timeout=timeout)

    def kill(self) -> int:
        rc = super().kill()  # SIGKILL also ends a stopped process
        self.paused = False
        return rc

    def close(self) -> None:
        if self.paused:
            self.resume()
        super().close()


# ------------------------------------------------------------------------------ controllers
class KafkaController(_NodeControl, BrokerProcess):
    """An Apache Kafka 4.3.1 controller-only node (process.roles=controller)."""

    kind = "controller"
    clean_exit_codes = (0, 143)
    start_timeout = float(os.environ.get("WEIR_KAFKA_START_TIMEOUT", "180"))
    stop_timeout = float(os.environ.get("WEIR_KAFKA_STOP_TIMEOUT", "90"))
    log_tail_lines = 60

    def __init__(self, workdir: Path, *, node_id: int, port: int, cluster_id: str,
                 quorum_props: Mapping[str, str], format_args: Sequence[str],
                 features: Mapping[str, int], overrides: Mapping[str, object] | None = None,
                 heap_opts: str = "-Xmx384M -Xms384M") -> None:
        super().__init__(workdir, HOST, port, node_id)
        self.cluster_id = cluster_id
        self.heap_opts = heap_opts
        self.format_args = list(format_args)
        self.features = dict(features)
        self.properties_path = self.workdir / "server.properties"
        self.properties: dict[str, str] = {
            "process.roles": "controller",
            "node.id": str(node_id),
            "listeners": f"CONTROLLER://{HOST}:{port}",
            "advertised.listeners": f"CONTROLLER://{HOST}:{port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.data_dir),
            **quorum_props,
            **CONTROLLER_TIMING,
        }
        _apply_overrides(self.properties, overrides)
        self.format_seconds: float | None = None

    @property
    def endpoint(self) -> str:
        return f"{HOST}:{self.port}"

    def add_listener(self, name: str, port: int, advertised: str) -> None:
        """One more controller listener (before start): `name` on port, advertised at `advertised`
        (host:port, e.g. a proxy's). The first controller.listener.names entry stays CONTROLLER,
        the one the controllers use among themselves."""
        p = self.properties
        p["listeners"] += f",{name}://{HOST}:{port}"
        p["advertised.listeners"] += f",{name}://{advertised}"
        p["controller.listener.names"] += f",{name}"
        p["listener.security.protocol.map"] += f",{name}:PLAINTEXT"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["KAFKA_HEAP_OPTS"] = self.heap_opts
        env.setdefault("WEIR_KAFKA_LOG_LEVEL", "INFO")
        env["WEIR_KAFKA_CP"] = str(kafka_classpath_file())
        return env

    def _prepare(self) -> None:
        if not kafka_classpath_file().is_file():
            raise BrokerStartError(
                f"no Kafka classpath at {kafka_classpath_file()}; run scripts/setup-kafka.sh")
        _write_properties(self.properties_path, self.properties, f"controller {self.node_id}")
        if (self.data_dir / "meta.properties").exists():
            return
        env = self._env()
        env["WEIR_KAFKA_LOG_LEVEL"] = "WARN"
        argv = [str(kafka_tool("kafka-storage")), "format", "-t", self.cluster_id,
                "-c", str(self.properties_path), *self.format_args, *_feature_args(self.features)]
        self.format_seconds = run_format(self, argv, env, "kafka-storage format (controller)")

    def _argv(self) -> list[str]:
        return [str(kafka_tool("kafka-server-start")), str(self.properties_path)]

    def describe_quorum(self, timeout: float = 3.0) -> wire.DescribeQuorumResponse:
        with wire.Connection(self.host, self.port, timeout=timeout) as conn:
            return conn.describe_quorum()


class KafkaQuorum:
    """1 or 3 (any n) Kafka controllers, formatted and started together.

    `voters` is the controller.quorum.voters string, `bootstrap_controllers` the
    host:port list (for --bootstrap-controller and controller.quorum.bootstrap.servers).
    """

    def __init__(self, base_dir: Path, *, n: int = 1, cluster_id: str | None = None,
                 dynamic: bool = False, features: Mapping[str, int] | None = None,
                 overrides: Mapping[str, object] | None = None,
                 heap_opts: str = "-Xmx384M -Xms384M") -> None:
        if n < 1:
            raise ValueError("a quorum needs at least one controller")
        self.base_dir = Path(base_dir)
        self.cluster_id = cluster_id or new_cluster_id()
        self.dynamic = dynamic
        self.features = dict(DEFAULT_FEATURES if features is None else features)
        self.ids = [CONTROLLER_ID_BASE + i for i in range(n)]
        self.ports = {cid: free_port() for cid in self.ids}
        self.voters = ",".join(f"{cid}@{HOST}:{self.ports[cid]}" for cid in self.ids)
        self.bootstrap_controllers = ",".join(f"{HOST}:{self.ports[cid]}" for cid in self.ids)
        if dynamic:
            quorum_props = {"controller.quorum.bootstrap.servers": self.bootstrap_controllers}
            dir_ids = {cid: new_cluster_id() for cid in self.ids}
            initial = ",".join(f"{cid}@{HOST}:{self.ports[cid]}:{dir_ids[cid]}" for cid in self.ids)
        else:
            quorum_props = {"controller.quorum.voters": self.voters}
        self.controllers: dict[int, KafkaController] = {}
        for cid in self.ids:
            if not dynamic:
                fmt: list[str] = []
            elif n == 1:
                fmt = ["--standalone"]
            else:
                # The directory id of this node is the one named for it in the list.
                fmt = ["--initial-controllers", initial]
            self.controllers[cid] = KafkaController(
                self.base_dir / f"controller-{cid}", node_id=cid, port=self.ports[cid],
                cluster_id=self.cluster_id, quorum_props=quorum_props, format_args=fmt,
                features=self.features, overrides=overrides, heap_opts=heap_opts)

    def quorum_props_for(self, endpoints: Mapping[int, str] | None = None) -> dict[str, str]:
        """The controller.quorum.* settings a broker gets. endpoints maps controller id to the
        host:port this broker should use for it (a proxy's), default the controllers' own."""
        ep = {cid: f"{HOST}:{self.ports[cid]}" for cid in self.ids}
        ep.update(endpoints or {})
        if self.dynamic:
            return {"controller.quorum.bootstrap.servers": ",".join(ep[c] for c in self.ids)}
        return {"controller.quorum.voters": ",".join(f"{c}@{ep[c]}" for c in self.ids)}

    # ------------------------------------------------------------------ lifecycle
    def start(self, timeout: float = 180.0) -> "KafkaQuorum":
        """Format and launch every controller, then wait for each to serve and for a leader."""
        for c in self.controllers.values():
            c.launch()
        for c in self.controllers.values():
            c.wait_ready(timeout)
            c.ready_after = time.monotonic() - c.started_at
        self.wait_leader(timeout)
        return self

    def controller(self, cid: int) -> KafkaController:
        return self.controllers[cid]

    def running(self) -> list[KafkaController]:
        return [c for c in self.controllers.values() if c.running and not c.paused]

    def _leaders(self) -> dict[int, tuple[int, int, int]]:
        """controller id -> (error code, leader id, leader epoch) of its DescribeQuorum answer.

        Only the leader answers DescribeQuorum; the others say NOT_LEADER_OR_FOLLOWER (6)."""
        out = {}
        for c in self.running():
            try:
                r = c.describe_quorum()
                out[c.node_id] = (r.error_code or r.partition_error_code, r.leader_id, r.leader_epoch)
            except (OSError, wire.ConnectionClosed, wire.ProtocolError) as e:
                out[c.node_id] = (-1, -1, -1)
        return out

    def leader_id(self) -> int:
        """The running controller that answers DescribeQuorum as leader (the highest epoch if
        two claim it during an election), or -1."""
        claims = [(epoch, lid) for cid, (err, lid, epoch) in self._leaders().items()
                  if err == 0 and lid == cid]
        if not claims:
            return -1
        return max(claims)[1]

    def wait_leader(self, timeout: float = 60.0, not_id: int | None = None) -> int:
        def ok():
            lid = self.leader_id()
            return lid if lid >= 0 and lid != not_id else None
        return wait_for("a KRaft quorum leader" + (f" other than {not_id}" if not_id else ""),
                        ok, timeout, describe=lambda: f"leaders seen {self._leaders()}")

    def describe(self) -> wire.DescribeQuorumResponse:
        """DescribeQuorum from the leader (voters, observers = brokers following the log)."""
        return self.controllers[self.wait_leader()].describe_quorum()

    def kill(self, cid: int) -> int:
        return self.controllers[cid].kill()

    def stop(self, cid: int) -> int:
        return self.controllers[cid].stop()

    def restart(self, cid: int) -> KafkaController:
        c = self.controllers[cid]
        if c.running:
            c.stop()
        c.start()
        return c

    def finish(self) -> list[str]:
        errors = []
        for c in self.controllers.values():
            if c.running:
                try:
                    c.stop(check=True)
                except AssertionError as e:
                    errors.append(str(e))
            c.close()
        return errors

    def close(self) -> None:
        for c in self.controllers.values():
            c.close()

    def log_sections(self) -> list[tuple[str, str]]:
        return [s for c in self.controllers.values() if c.starts for s in c.log_sections()]


# ---------------------------------------------------------------------------------- brokers
def _broker_props(node_id: int, port: int, data_dir: Path, quorum_props: Mapping[str, str],
                  replication: int) -> dict[str, str]:
    """The server.properties every broker of a cluster gets, Kafka or weir."""
    rf = str(replication)
    return {
        "process.roles": "broker",
        "node.id": str(node_id),
        **quorum_props,
        "controller.listener.names": "CONTROLLER",
        "listeners": f"PLAINTEXT://{HOST}:{port}",
        "advertised.listeners": f"PLAINTEXT://{HOST}:{port}",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(data_dir),
        "offsets.topic.replication.factor": rf,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": str(min(2, replication)),
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": str(min(2, replication)),
        "group.initial.rebalance.delay.ms": "0",
        **BROKER_TIMING,
    }


def _formatted(properties: Mapping[str, str]) -> bool:
    """Whether the first of log.dirs holds a meta.properties (formatted already)."""
    return (Path(properties["log.dirs"].split(",")[0]) / "meta.properties").exists()


def _lists_self(node: BrokerProcess, conn: wire.Connection) -> bool:
    md = conn.metadata_v1([])
    return any(b.node_id == node.node_id for b in md.brokers)


class ClusterKafkaBroker(_NodeControl, KafkaBroker):
    """A Kafka broker-only node (process.roles=broker) under a KafkaQuorum."""

    def __init__(self, workdir: Path, *, node_id: int, cluster_id: str,
                 quorum_props: Mapping[str, str], features: Mapping[str, int],
                 replication: int = 3, port: int | None = None,
                 overrides: Mapping[str, object] | None = None,
                 heap_opts: str = "-Xmx512M -Xms512M") -> None:
        port = port or free_port()
        super().__init__(workdir, port=port, node_id=node_id, heap_opts=heap_opts)
        self.host = HOST
        self.cluster_id = cluster_id
        self.features = dict(features)
        self.properties = _broker_props(node_id, port, self.data_dir, quorum_props, replication)
        _apply_overrides(self.properties, overrides)

    def _prepare(self) -> None:
        if not kafka_classpath_file().is_file():
            raise BrokerStartError(
                f"no Kafka classpath at {kafka_classpath_file()}; run scripts/setup-kafka.sh")
        self._write_properties()
        if _formatted(self.properties):
            return
        env = self._env()
        env["WEIR_KAFKA_LOG_LEVEL"] = "WARN"
        argv = [str(kafka_tool("kafka-storage")), "format", "-t", self.cluster_id,
                "-c", str(self.properties_path), *_feature_args(self.features)]
        self.format_seconds = run_format(self, argv, env, "kafka-storage format (broker)")

    def _probe(self, conn: wire.Connection) -> bool:
        return _lists_self(self, conn)


class ClusterWeirBroker(_NodeControl, WeirBroker):
    """A weir broker in broker mode (process.roles=broker) under a KafkaQuorum.

    The class writes the same server.properties a ClusterKafkaBroker gets, formats its log dir once
    with `weir format -t <cluster id> -c server.properties [--feature f=l ...]` (the flags of
    kafka-storage format) and starts `weir serve --config server.properties`. Ready when
    Metadata from it lists it (registered with the controller and unfenced).
    """

    # Registration and catching up with the metadata log come before readiness.
    start_timeout = float(os.environ.get("WEIR_CLUSTER_START_TIMEOUT", "60"))

    def __init__(self, workdir: Path, *, node_id: int, cluster_id: str,
                 quorum_props: Mapping[str, str], features: Mapping[str, int],
                 replication: int = 3, port: int | None = None,
                 overrides: Mapping[str, object] | None = None,
                 binary: str | Path | None = None, env: Mapping[str, str] | None = None) -> None:
        port = port or free_port()
        super().__init__(workdir, port=port, host=HOST, settings={"node.id": node_id},
                         binary=binary, env=env)
        self.cluster_id = cluster_id
        self.features = dict(features)
        self.properties_path = self.workdir / "server.properties"
        self.properties = _broker_props(node_id, port, self.data_dir, quorum_props, replication)
        _apply_overrides(self.properties, overrides)
        self.format_seconds: float | None = None

    def _prepare(self) -> None:
        super()._prepare()  # the binary exists
        _write_properties(self.properties_path, self.properties, f"weir broker {self.node_id}")
        if _formatted(self.properties):
            return
        self.format_seconds = run_format(self, self.format_argv(), self._env(), "weir format")

    def format_argv(self) -> list[str]:
        return [str(self.binary), "format", "-t", self.cluster_id, "-c", str(self.properties_path),
                *_feature_args(self.features)]

    def _argv(self) -> list[str]:
        return [str(self.binary), "serve", "--config", str(self.properties_path), *self.extra_args]

    def _probe(self, conn: wire.Connection) -> bool:
        return _lists_self(self, conn)


# ---------------------------------------------------------------------------------- cluster
class Cluster:
    """A KafkaQuorum plus brokers of the given kinds ("kafka" or "weir"), node ids 1..N.

    controller_proxies=True puts a proxy.LinkProxy on every broker->controller link (static
    quorum only): cluster.controller_link(broker_id, controller_id).cut() isolates that broker
    from that controller (heartbeats, AlterPartition and the metadata log alike). Each broker i
    then has a controller listener of its own, CONTROLLER_B<i> (its controller.listener.names),
    on every controller, advertised at the proxy (see add_listener).
    replication_proxies=True gives every broker a second listener, REPLICATION (the
    inter.broker.listener.name), advertised at a proxy's address: cluster.replication_link(id)
    carries every other broker's traffic to broker id (followers fetching from it), while clients
    keep reaching it directly on PLAINTEXT. Every fault is undone by finish().
    """

    def __init__(self, base_dir: Path, kinds: Sequence[str] = ("kafka",), *, controllers: int = 1,
                 dynamic: bool = False, features: Mapping[str, int] | None = None,
                 broker_overrides: Mapping[str, object] | None = None,
                 per_broker_overrides: Mapping[int, Mapping[str, object]] | None = None,
                 controller_overrides: Mapping[str, object] | None = None,
                 replication: int | None = None, controller_proxies: bool = False,
                 replication_proxies: bool = False) -> None:
        from .proxy import LinkProxy

        for k in kinds:
            if k not in ("kafka", "weir"):
                raise ValueError(f"unknown broker kind {k!r} (kafka or weir)")
        if controller_proxies and dynamic:
            raise ValueError("controller_proxies needs the static quorum (see the module docstring)")
        self.base_dir = Path(base_dir)
        self.kinds = list(kinds)
        self.quorum = KafkaQuorum(self.base_dir, n=controllers, dynamic=dynamic, features=features,
                                  overrides=controller_overrides)
        self.cluster_id = self.quorum.cluster_id
        rf = replication if replication is not None else min(3, len(kinds))
        self.links: dict[tuple[int, int], LinkProxy] = {}
        self.replication_links: dict[int, LinkProxy] = {}
        self.brokers: dict[int, ClusterKafkaBroker | ClusterWeirBroker] = {}
        for i, kind in enumerate(self.kinds, start=1):
            endpoints = None
            overrides: dict[str, object] = {}
            controller_listener = "CONTROLLER"
            if controller_proxies:
                # A controller listener of this broker's own on every controller, advertised at
                # the proxy: the KRaft leader names its endpoint for the listener a request came
                # in on (NodeEndpoints in Fetch/BeginQuorumEpoch answers), and a broker switches
                # its metadata fetches to that endpoint. Through the shared CONTROLLER listener
                # only the first contact and the heartbeat/AlterPartition channel would stay on
                # the proxy; the metadata log would bypass a cut.
                controller_listener = f"CONTROLLER_B{i}"
                endpoints = {}
                for cid in self.quorum.ids:
                    lport = free_port()
                    link = LinkProxy(HOST, lport, name=f"broker {i} -> controller {cid}")
                    self.links[(i, cid)] = link
                    endpoints[cid] = link.endpoint
                    self.quorum.controller(cid).add_listener(controller_listener, lport, link.endpoint)
                overrides["controller.listener.names"] = controller_listener
                overrides["listener.security.protocol.map"] = f"{controller_listener}:PLAINTEXT,PLAINTEXT:PLAINTEXT"
            port = free_port()
            if replication_proxies:
                rport = free_port()
                link = LinkProxy(HOST, rport, name=f"replication -> broker {i}")
                self.replication_links[i] = link
                overrides.update({
                    "listeners": f"PLAINTEXT://{HOST}:{port},REPLICATION://{HOST}:{rport}",
                    "advertised.listeners": f"PLAINTEXT://{HOST}:{port},REPLICATION://{link.endpoint}",
                    "listener.security.protocol.map":
                        f"{controller_listener}:PLAINTEXT,PLAINTEXT:PLAINTEXT,REPLICATION:PLAINTEXT",
                    "inter.broker.listener.name": "REPLICATION",
                })
            overrides.update({**(broker_overrides or {}), **((per_broker_overrides or {}).get(i, {}))})
            args = dict(node_id=i, cluster_id=self.cluster_id, port=port,
                        quorum_props=self.quorum.quorum_props_for(endpoints),
                        features=self.quorum.features, replication=rf, overrides=overrides)
            cls = ClusterKafkaBroker if kind == "kafka" else ClusterWeirBroker
            self.brokers[i] = cls(self.base_dir / f"{kind}-{i}", **args)

    # ------------------------------------------------------------------ lifecycle
    def start(self, timeout: float = 240.0) -> "Cluster":
        t0 = time.monotonic()
        self.quorum.start(timeout)
        for b in self.brokers.values():
            b.launch()
        for b in self.brokers.values():
            b.wait_ready(max(30.0, timeout - (time.monotonic() - t0)))
            b.ready_after = time.monotonic() - b.started_at
        self.wait_brokers(list(self.brokers), timeout=60)
        self.start_seconds = time.monotonic() - t0
        return self

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values())

    def broker(self, node_id: int):
        return self.brokers[node_id]

    def controller_link(self, broker_id: int, controller_id: int):
        return self.links[(broker_id, controller_id)]

    def replication_link(self, broker_id: int):
        """The proxy in front of broker_id's REPLICATION listener (replication_proxies=True)."""
        return self.replication_links[broker_id]

    def all_links(self) -> list:
        return [*self.links.values(), *self.replication_links.values()]

    def live_brokers(self) -> list:
        return [b for b in self.brokers.values() if b.running and not b.paused]

    def stop(self, node_id: int) -> int:
        return self.brokers[node_id].stop()

    def kill(self, node_id: int) -> int:
        return self.brokers[node_id].kill()

    def pause(self, node_id: int) -> None:
        self.brokers[node_id].pause()

    def resume(self, node_id: int) -> None:
        self.brokers[node_id].resume()

    def restart(self, node_id: int):
        """Stop (if running, exit code checked) and start on the same port and data dir; after a
        kill the controller may refuse the new registration until the old session expires
        (broker.session.timeout.ms), which start()'s readiness wait covers."""
        b = self.brokers[node_id]
        if b.running:
            b.stop()
        return b.start()

    def start_broker(self, node_id: int):
        return self.brokers[node_id].start()

    def finish(self) -> None:
        """Undo every fault, stop brokers then controllers (exit codes checked); raise if any
        did not exit cleanly."""
        errors: list[str] = []
        # Links first healed, not closed: a Kafka broker's controlled shutdown needs the controller.
        for link in self.all_links():
            link.delay(0)
            link.heal()
        for b in self.brokers.values():
            if b.paused:
                b.resume()
        for b in self.brokers.values():
            if b.running:
                try:
                    b.stop(check=True)
                except AssertionError as e:
                    errors.append(str(e))
            b.close()
        for link in self.all_links():
            link.close()
        errors += self.quorum.finish()
        if errors:
            raise AssertionError("\n\n".join(errors))

    def close(self) -> None:
        for link in self.all_links():
            link.close()
        for b in self.brokers.values():
            b.close()
        self.quorum.close()

    def log_sections(self) -> list[tuple[str, str]]:
        out = [s for b in self.brokers.values() if b.starts for s in b.log_sections()]
        return out + self.quorum.log_sections()

    # ------------------------------------------------------------------ metadata
    def metadata(self, topics: list[str] | None = None, via: int | None = None) -> wire.MetadataResponse:
        """Metadata v1 from broker `via`, else from the first live broker that answers."""
        candidates = [self.brokers[via]] if via is not None else self.live_brokers()
        last: Exception | None = None
        for b in candidates:
            try:
                with wire.Connection(b.host, b.port, timeout=3.0) as conn:
                    return conn.metadata_v1(topics)
            except (OSError, wire.ConnectionClosed, wire.ProtocolError) as e:
                last = e
        raise RuntimeError(f"no live broker answered Metadata (last error {last!r})")

    def partition(self, topic: str, partition: int, via: int | None = None) -> dict | None:
        md = self.metadata([topic], via=via)
        for t in md.topics:
            if t.name == topic and t.error_code == 0:
                for p in t.partitions:
                    if p["partition"] == partition:
                        return p
        return None

    def leader_of(self, topic: str, partition: int = 0, via: int | None = None) -> int:
        p = self.partition(topic, partition, via)
        return -1 if p is None else p["leader"]

    def isr_of(self, topic: str, partition: int = 0, via: int | None = None) -> list[int]:
        p = self.partition(topic, partition, via)
        return [] if p is None else sorted(p["isr"])

    def replicas_of(self, topic: str, partition: int = 0, via: int | None = None) -> list[int]:
        p = self.partition(topic, partition, via)
        return [] if p is None else list(p["replicas"])

    def wait_brokers(self, ids: Iterable[int], timeout: float = 60.0) -> None:
        """Until Metadata from every live broker lists (at least) the given broker ids."""
        want = set(ids)

        def ok():
            return all(want <= {x.node_id for x in self.metadata([], via=b.node_id).brokers}
                       for b in self.live_brokers())
        wait_for(f"brokers {sorted(want)} registered and unfenced", ok, timeout,
                 describe=lambda: {b.node_id: sorted(x.node_id for x in self.metadata([], via=b.node_id).brokers)
                                   for b in self.live_brokers()})

    def wait_isr(self, topic: str, partition: int, n: int | Sequence[int], timeout: float = 60.0,
                 via: int | None = None) -> list[int]:
        """Until the ISR has n members (an int) or is exactly those ids (a list); returns it."""
        def ok():
            isr = self.isr_of(topic, partition, via)
            if isinstance(n, int):
                return isr if len(isr) == n else None
            return isr if isr == sorted(n) else None
        return wait_for(f"ISR of {topic}-{partition} to be {n}", ok, timeout,
                        describe=lambda: self.partition(topic, partition, via))

    def wait_leader(self, topic: str, partition: int = 0, timeout: float = 60.0,
                    not_id: int | None = None, via: int | None = None) -> int:
        """Until the partition has a live leader (other than not_id); returns its id."""
        live = lambda: {b.node_id for b in self.live_brokers()}  # noqa: E731

        def ok():
            lid = self.leader_of(topic, partition, via)
            return lid if lid in live() and lid != not_id else None
        return wait_for(f"a leader of {topic}-{partition}" + (f" other than {not_id}" if not_id else ""),
                        ok, timeout, describe=lambda: self.partition(topic, partition, via))

    def wait_topic(self, topic: str, partitions: int, replicas: int, timeout: float = 60.0) -> None:
        """Until every live broker's Metadata shows the topic with its partitions led and the
        full ISR."""
        def ok():
            for b in self.live_brokers():
                md = self.metadata([topic], via=b.node_id)
                t = next((t for t in md.topics if t.name == topic and t.error_code == 0), None)
                if t is None or len(t.partitions) != partitions:
                    return False
                if any(p["leader"] < 0 or len(p["isr"]) != replicas for p in t.partitions):
                    return False
            return True
        wait_for(f"topic {topic} with {partitions} partitions, ISR {replicas}, on every broker", ok,
                 timeout, describe=lambda: self.metadata([topic]).topics)


class ClusterFactory:
    """cluster_factory(kinds=[...], controllers=1, ...) -> a started Cluster (see Cluster)."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = Path(base_dir)
        self.instances: list[Cluster] = []

    def create(self, kinds: Sequence[str] = ("kafka",), **kwargs) -> Cluster:
        n = len(self.instances) + 1
        cluster = Cluster(self.base_dir / f"cluster-{n}", kinds, **kwargs)
        self.instances.append(cluster)
        return cluster

    def __call__(self, kinds: Sequence[str] = ("kafka",), **kwargs) -> Cluster:
        return self.create(kinds, **kwargs).start()

    def finish(self) -> None:
        errors = []
        for c in self.instances:
            try:
                c.finish()
            except AssertionError as e:
                errors.append(str(e))
            finally:
                c.close()
        if errors:
            raise AssertionError("\n\n".join(errors))

    def log_sections(self) -> list[tuple[str, str]]:
        return [s for c in self.instances for s in c.log_sections()]
