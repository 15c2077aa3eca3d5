"""Starting `weir serve` for a scenario."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

from .broker import BrokerProcess, BrokerStartError
from .paths import weir_bin
from .ports import free_port


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(map(str, v))
    return str(v)


class WeirBroker(BrokerProcess):
    """`$WEIR_BIN serve` on a free port with its own data directory.

    settings become `--set key=value`; listeners, advertised.listeners and log.dirs are set by the
    harness unless given. The node id is read from node.id (or broker.id), default 1.
    """

    kind = "weir"
    clean_exit_codes = (0,)
    start_timeout = float(os.environ.get("WEIR_START_TIMEOUT", "20"))
    stop_timeout = float(os.environ.get("WEIR_STOP_TIMEOUT", "30"))

    def __init__(self, workdir: Path, *, port: int | None = None, host: str = "127.0.0.1",
                 settings: Mapping[str, object] | None = None, config_file: str | Path | None = None,
                 extra_args: Sequence[str] = (), binary: str | Path | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.settings = {k: _value(v) for k, v in (settings or {}).items()}
        node_id = int(self.settings.get("node.id", self.settings.get("broker.id", "1")))
        super().__init__(workdir, host, port or free_port(), node_id)
        self.binary = Path(binary) if binary else weir_bin()
        self.config_file = Path(config_file) if config_file else None
        self.extra_args = list(extra_args)
        self.extra_env = dict(env or {})

    def _prepare(self) -> None:
        if not (self.binary.is_file() and os.access(self.binary, os.X_OK)):
            raise BrokerStartError(
                f"weir binary {self.binary} does not exist or is not executable "
                f"(build it with `make build` or point WEIR_BIN at it)")

    def _argv(self) -> list[str]:
        listener = f"PLAINTEXT://{self.host}:{self.port}"
        # As the harness's Kafka (and Kafka's own config/server.properties): no initial rebalance
        # delay, so group tests do not wait 3 s per new group. Tests may override it.
        base = {"listeners": listener, "advertised.listeners": listener, "log.dirs": str(self.data_dir),
                "group.initial.rebalance.delay.ms": "0"}
        merged = {**base, **self.settings}
        argv = [str(self.binary), "serve"]
        for k, v in merged.items():
            argv += ["--set", f"{k}={v}"]
        if self.config_file is not None:
            argv += ["--config", str(self.config_file)]
        return argv + self.extra_args

    def _env(self) -> dict[str, str]:
        return {**os.environ, **self.extra_env}


class WeirFactory:
    """Makes WeirBrokers in the test's temp dir; stops (checking exit codes) what is still running."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = Path(base_dir)
        self.instances: list[WeirBroker] = []

    def create(self, **kwargs) -> WeirBroker:
        n = len(self.instances) + 1
        broker = WeirBroker(self.base_dir / f"weir-{n}", **kwargs)
        self.instances.append(broker)
        return broker

    def __call__(self, **kwargs) -> WeirBroker:
        """Create and start a weir broker; see WeirBroker for the arguments."""
        return self.create(**kwargs).start()

    def finish(self) -> None:
        """Graceful stop of every running instance; raises if one did not exit cleanly."""
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
