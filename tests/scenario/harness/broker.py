"""What weir and Kafka brokers started by the harness have in common: a child process with a
log file, a readiness probe over the wire, graceful stop with its exit code checked, kill -9,
restart on the same port and data directory."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import deque
from pathlib import Path

from . import procs, wire


class BrokerStartError(Exception):
    pass


class BrokerProcess:
    kind = "broker"
    clean_exit_codes: tuple[int, ...] = (0,)
    start_timeout = 30.0
    stop_timeout = 30.0
    log_tail_lines = 200

    def __init__(self, workdir: Path, host: str, port: int, node_id: int) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.host = host
        self.port = port
        self.node_id = node_id
        self.data_dir = self.workdir / "data"
        self.log_path = self.workdir / f"{self.kind}.log"
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.exit_codes: list[int] = []

    # ------------------------------------------------------------------ to be provided
    def _argv(self) -> list[str]:
        raise NotImplementedError

    def _env(self) -> dict[str, str]:
        return dict(os.environ)

    def _prepare(self) -> None:
        """Runs before every start (e.g. format storage on the first)."""

    def _probe(self, conn: wire.Connection) -> bool:
        """Extra readiness check after a successful ApiVersions round trip."""
        return True

    # ------------------------------------------------------------------ properties
    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<{self.kind} {self.bootstrap} node {self.node_id} {state} dir={self.workdir}>"

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "BrokerProcess":
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
        self.starts += 1
        self.started_at = time.monotonic()
        self.wait_ready()
        self.ready_after = time.monotonic() - self.started_at
        return self

    def wait_ready(self, timeout: float | None = None) -> None:
        """Until the broker accepts a TCP connection and answers ApiVersions (and the probe)."""
        timeout = self.start_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                rc = self.proc.returncode
                procs.forget(self.proc)
                self.exit_codes.append(rc)
                raise BrokerStartError(
                    f"{self.kind} exited with code {rc} before serving on {self.bootstrap}\n"
                    f"--- {self.log_path} (tail) ---\n{self.log_tail()}")
            try:
                with wire.Connection(self.host, self.port, timeout=2.0) as conn:
                    resp = conn.api_versions(0)
                    if resp.error_code == 0 and self._probe(conn):
                        return
                    last_error = RuntimeError(f"ApiVersions error {resp.error_code} / probe not ready")
            except (OSError, wire.ConnectionClosed, wire.ProtocolError) as e:
                last_error = e
            # weir serves within milliseconds; a JVM takes seconds: poll often only at first.
            time.sleep(0.02 if time.monotonic() - self.started_at < 2.0 else 0.1)
        self._abort()
        raise BrokerStartError(
            f"{self.kind} did not serve on {self.bootstrap} within {timeout:.0f}s "
            f"(last error: {last_error!r})\n--- {self.log_path} (tail) ---\n{self.log_tail()}")

    def _abort(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc is not None:
            procs.forget(self.proc)

    def stop(self, check: bool = True, timeout: float | None = None) -> int:
        """Graceful stop: SIGTERM, wait for the orderly shutdown, return the exit code.

        With check, anything but a clean exit code (or having to SIGKILL) fails the test.
        """
        if self.proc is None:
            raise RuntimeError(f"{self!r} was never started")
        timeout = self.stop_timeout if timeout is None else timeout
        already_exited = self.proc.poll() is not None
        killed = False
        if not already_exited:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                killed = True
                self.proc.kill()
                self.proc.wait()
        procs.forget(self.proc)
        rc = self.proc.returncode
        self.exit_codes.append(rc)
        if check:
            if killed:
                raise AssertionError(
                    f"{self.kind} on {self.bootstrap} did not exit within {timeout:.0f}s of SIGTERM "
                    f"(killed)\n--- {self.log_path} (tail) ---\n{self.log_tail()}")
            if already_exited:
                raise AssertionError(
                    f"{self.kind} on {self.bootstrap} had already exited (code {rc}) before stop()\n"
                    f"--- {self.log_path} (tail) ---\n{self.log_tail()}")
            if rc not in self.clean_exit_codes:
                raise AssertionError(
                    f"{self.kind} on {self.bootstrap} exited with code {rc} after SIGTERM, expected "
                    f"{' or '.join(map(str, self.clean_exit_codes))}\n"
                    f"--- {self.log_path} (tail) ---\n{self.log_tail()}")
        return rc

    def kill(self) -> int:
        """kill -9: no chance to flush or checkpoint."""
        if self.proc is None or self.proc.poll() is not None:
            raise RuntimeError(f"{self!r} is not running")
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        procs.forget(self.proc)
        self.exit_codes.append(self.proc.returncode)
        return self.proc.returncode

    def restart(self) -> "BrokerProcess":
        """Stop gracefully if running (exit code checked), then start on the same port and data."""
        if self.running:
            self.stop()
        return self.start()

    def close(self) -> None:
        """Best-effort stop without checks (for cleanup after a failure)."""
        if self.proc is not None and self.proc.poll() is None:
            procs.terminate(self.proc, self.stop_timeout)

    # ------------------------------------------------------------------ diagnostics
    def log_tail(self, lines: int | None = None) -> str:
        lines = self.log_tail_lines if lines is None else lines
        try:
            with open(self.log_path, "rb") as f:
                tail = deque(f, maxlen=lines)
        except FileNotFoundError:
            return "(no log)"
        return b"".join(tail).decode(errors="replace")

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_sections(self) -> list[tuple[str, str]]:
        return [(f"{self.kind} log {self.log_path} (last {self.log_tail_lines} lines)", self.log_tail())]


def run_format(node: "BrokerProcess", argv: list[str], env: dict[str, str], what: str) -> float:
    """Runs a storage-format command for node (kafka-storage format, weir format) with its
    output in the node's log; returns the seconds it took, raises BrokerStartError on failure."""
    t0 = time.monotonic()
    with open(node.log_path, "ab") as log:
        log.write(f"===== harness: {' '.join(argv)}\n".encode())
        log.flush()
        proc = procs.spawn(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=node.workdir)
    try:
        rc = proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        rc = procs.terminate(proc, 5)
    procs.forget(proc)
    if rc != 0:
        raise BrokerStartError(f"{what} failed ({rc})\n{node.log_tail()}")
    return time.monotonic() - t0
