"""A real single-node KRaft Apache Kafka 4.3.1 broker, started the way TESTING.md describes."""
from __future__ import annotations

import base64
import os
import uuid
from pathlib import Path
from typing import Mapping

from . import wire
from .broker import BrokerProcess, BrokerStartError, run_format
from .paths import kafka_classpath_file, kafka_tool
from .ports import free_port

KAFKA_VERSION = "4.3.1"


def new_cluster_id() -> str:
    """A Kafka Uuid in its text form (URL-safe base64 of 16 random bytes, no padding).

    Like Kafka's Uuid.randomUuid(), never one starting with '-': command lines would read it as
    an option (kafka-storage format -t -abc... fails).
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


class KafkaBroker(BrokerProcess):
    kind = "kafka"
    # kafka.Kafka runs its shutdown hook on SIGTERM; the JVM then exits with 143 (128 + SIGTERM).
    clean_exit_codes = (0, 143)
    start_timeout = float(os.environ.get("WEIR_KAFKA_START_TIMEOUT", "180"))
    stop_timeout = float(os.environ.get("WEIR_KAFKA_STOP_TIMEOUT", "90"))
    log_tail_lines = 80

    def __init__(self, workdir: Path, *, port: int | None = None, controller_port: int | None = None,
                 node_id: int = 1, overrides: Mapping[str, object] | None = None,
                 heap_opts: str = "-Xmx1G -Xms1G") -> None:
        super().__init__(workdir, "localhost", port or free_port(), node_id)
        self.controller_port = controller_port or free_port()
        self.cluster_id = new_cluster_id()
        self.heap_opts = heap_opts
        self.properties_path = self.workdir / "server.properties"
        self.properties: dict[str, str] = {
            "process.roles": "broker,controller",
            "node.id": str(node_id),
            "controller.quorum.voters": f"{node_id}@localhost:{self.controller_port}",
            "listeners": f"PLAINTEXT://:{self.port},CONTROLLER://:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://localhost:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.data_dir),
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
        }
        for k, v in (overrides or {}).items():
            if v is None:
                self.properties.pop(k, None)
            else:
                self.properties[k] = "true" if v is True else "false" if v is False else str(v)
        self.format_seconds: float | None = None

    def _write_properties(self) -> None:
        lines = [f"# written by the weir test harness for {self.bootstrap}"]
        lines += [f"{k}={v}" for k, v in self.properties.items()]
        self.properties_path.write_text("\n".join(lines) + "\n")

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
        self._write_properties()
        if (self.data_dir / "meta.properties").exists():
            return
        argv = [str(kafka_tool("kafka-storage")), "format", "-t", self.cluster_id,
                "-c", str(self.properties_path)]
        env = self._env()
        env["WEIR_KAFKA_LOG_LEVEL"] = "WARN"
        self.format_seconds = run_format(self, argv, env, "kafka-storage format")

    def _argv(self) -> list[str]:
        return [str(kafka_tool("kafka-server-start")), str(self.properties_path)]

    def _probe(self, conn: wire.Connection) -> bool:
        # The broker is usable once Metadata lists it (registered with and unfenced by the controller).
        md = conn.metadata_v1()
        return any(b.node_id == self.node_id for b in md.brokers)


class KafkaFactory:
    """Own Kafka instances for scenarios that restart or kill the broker."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = Path(base_dir)
        self.instances: list[KafkaBroker] = []

    def create(self, **kwargs) -> KafkaBroker:
        n = len(self.instances) + 1
        broker = KafkaBroker(self.base_dir / f"kafka-{n}", **kwargs)
        self.instances.append(broker)
        return broker

    def __call__(self, **kwargs) -> KafkaBroker:
        return self.create(**kwargs).start()

    def finish(self) -> None:
        errors = []
        for b in self.instances:
            if b.running:
                try:
                    b.stop(check=True)
                except AssertionError as e:
                    errors.append(str(e))
            b.close()
        if errors:
            raise AssertionError("\n\n".join(errors))

    def log_sections(self) -> list[tuple[str, str]]:
        return [s for b in self.instances if b.starts for s in b.log_sections()]
