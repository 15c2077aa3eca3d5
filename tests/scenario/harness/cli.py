"""Running Apache Kafka's CLI tools (tests/kafka/bin wrappers) as a user would."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass

from . import procs
from .paths import kafka_tool

DEFAULT_TIMEOUT = float(os.environ.get("WEIR_TOOL_TIMEOUT", "120"))


@dataclass
class ToolResult:
    argv: list[str]
    rc: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out

    @property
    def lines(self) -> list[str]:
        """Non-empty stdout lines, right-stripped."""
        return [ln.rstrip() for ln in self.stdout.splitlines() if ln.strip()]

    def describe(self) -> str:
        what = "timed out" if self.timed_out else f"exit code {self.rc}"
        return (f"$ {' '.join(self.argv)}\n({what} after {self.duration:.1f}s)\n"
                f"--- stdout ---\n{self.stdout[-8000:]}\n--- stderr ---\n{self.stderr[-8000:]}")

    def check(self, rc: int = 0) -> "ToolResult":
        """Assert the tool finished with rc (default 0); the message shows its output."""
        assert not self.timed_out and self.rc == rc, self.describe()
        return self


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_tool(name: str, *args, bootstrap=None, input: str | bytes | None = None,
             timeout: float = DEFAULT_TIMEOUT, env: dict | None = None, check: bool = False,
             cwd=None) -> ToolResult:
    """Run a Kafka CLI wrapper, e.g. run_tool("kafka-topics", "--list", bootstrap=broker).

    bootstrap (a broker object with .bootstrap, or a "host:port" string) becomes
    `--bootstrap-server X` in front of args. Returns stdout, stderr and the exit code; on timeout
    the tool's whole process group is killed and timed_out is set.
    """
    argv = [str(kafka_tool(name))]
    if bootstrap is not None:
        argv += ["--bootstrap-server", getattr(bootstrap, "bootstrap", bootstrap)]
    argv += [str(a) for a in args]
    full_env = {**os.environ, **(env or {})}
    data = input.encode() if isinstance(input, str) else input
    t0 = time.monotonic()
    proc = procs.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                       env=full_env, cwd=cwd)
    timed_out = False
    try:
        out, err = proc.communicate(input=data, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:  # interrupted (Ctrl-C, pytest-timeout): leave nothing running
            _kill_group(proc)
            proc.wait()
        procs.forget(proc)
    result = ToolResult(argv, proc.returncode, out.decode(errors="replace"),
                        err.decode(errors="replace"), time.monotonic() - t0, timed_out)
    if check:
        result.check()
    return result
