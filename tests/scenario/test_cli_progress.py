"""The progress line of `weir produce` and `weir consume -n N` (issue 17): count and rate on stderr,
only when stderr is a terminal. Here stderr is a pseudo-terminal (python `pty`) while stdout is a
pipe: the line shows up on the terminal, cleared at the end, and stdout holds only the records.
With stderr a pipe (and with --output json) nothing but the usual messages reaches stderr.
"""
from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time

import pytest

from harness.paths import weir_bin

CLEAR = "\r\x1b[K"  # what clears the line (a drawing is "\r<text>\x1b[K")


def weir_cli(*args, bootstrap, input: str | None = None) -> subprocess.CompletedProcess:
    argv = [str(weir_bin()), *[str(a) for a in args], "--bootstrap", bootstrap]
    return subprocess.run(argv, capture_output=True, text=True, input=input, timeout=60)


class OnTerminal:
    """The command with stderr on a pseudo-terminal, stdin and stdout pipes."""

    def __init__(self, *args, bootstrap):
        self.master, slave = pty.openpty()
        argv = [str(weir_bin()), *[str(a) for a in args], "--bootstrap", bootstrap]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        self.terminal = b""

    def read_terminal(self, timeout: float) -> bool:
        """Reads what reached the terminal within `timeout`; False once it is closed."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 4096)
        except OSError:  # EIO: every writer closed the terminal
            return False
        self.terminal += chunk
        return bool(chunk)

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        deadline = time.monotonic() + timeout
        while self.read_terminal(0.2) and time.monotonic() < deadline:
            if self.proc.poll() is not None and not select.select([self.master], [], [], 0)[0]:
                break
        out = self.proc.stdout.read().decode()
        rc = self.proc.wait(max(1.0, deadline - time.monotonic()))
        os.close(self.master)
        return rc, out, self.terminal.decode(errors="replace")


@pytest.mark.timeout(120)
def test_progress_on_a_terminal_only(broker, topic_name):
    assert weir_cli("topic", "create", topic_name, "-p", 2, "-r", 1, bootstrap=broker.bootstrap).returncode == 0

    # produce: lines arrive on stdin while the terminal is watched for the progress line.
    producer = OnTerminal("produce", topic_name, "--batch-bytes", 16, bootstrap=broker.bootstrap)
    sent = 0
    deadline = time.monotonic() + 30
    while "records produced, " not in producer.terminal.decode(errors="replace"):
        assert time.monotonic() < deadline, producer.terminal
        producer.proc.stdin.write(f"v{sent}\n".encode())
        producer.proc.stdin.flush()
        sent += 1
        producer.read_terminal(0.05)
    producer.proc.stdin.close()
    rc, out, terminal = producer.finish()
    assert rc == 0, terminal
    assert out == ""
    assert terminal.startswith("\r") and terminal.endswith(CLEAR), repr(terminal)  # drawn, then cleared
    assert re.search(r"\r\d+ records produced, [\d.]+/s\x1b\[K", terminal), repr(terminal)

    # consume -n N: "count of N records consumed, rate/s"; the records go to stdout, unmarked.
    consumer = OnTerminal("consume", topic_name, "--from", "beginning", "-n", sent + 100, "--idle-timeout-ms", 1500,
                          "--format", "{value}", bootstrap=broker.bootstrap)
    consumer.proc.stdin.close()
    rc, out, terminal = consumer.finish()
    assert rc == 0, terminal
    assert sorted(out.splitlines()) == sorted(f"v{i}" for i in range(sent))
    assert "\x1b" not in out
    assert f"{sent} of {sent + 100} records consumed, " in terminal, repr(terminal)
    assert terminal.endswith(f"{CLEAR}Processed a total of {sent} messages\r\n"), repr(terminal)

    # Not a terminal: no progress line, no escape sequences.
    piped = weir_cli("consume", topic_name, "--from", "beginning", "-n", sent + 100, "--idle-timeout-ms", 1500,
                     bootstrap=broker.bootstrap)
    assert piped.returncode == 0
    assert piped.stderr == f"Processed a total of {sent} messages\n"
    produced = weir_cli("produce", topic_name, bootstrap=broker.bootstrap, input="a\nb\n")
    assert produced.returncode == 0 and produced.stderr == ""
