"""Child processes started by the harness, and making sure none outlives pytest.

Three layers of cleanup:
  1. fixtures stop what they started (graceful, with the exit code checked);
  2. an atexit hook (also run by pytest_unconfigure and after Ctrl-C) terminates, then kills,
     every registered process that is still alive;
  3. every child is started with PR_SET_PDEATHSIG=SIGKILL, so even if pytest itself is killed
     (SIGKILL, pytest-timeout's thread method calling os._exit) the kernel kills the children.
Children get their own session, so a Ctrl-C in the terminal reaches only pytest, which then
shuts them down in order.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import subprocess
import threading
import time
from typing import IO, Sequence

_PR_SET_PDEATHSIG = 1
_SETPRIV = shutil.which("setpriv")  # util-linux, essential on Debian
_libc = None
if _SETPRIV is None:
    try:
        _libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:  # not glibc Linux: rely on the atexit hook only
        _libc = None

_lock = threading.Lock()
_live: dict[int, subprocess.Popen] = {}


def _child_setup(parent: int) -> None:
    # Fallback without setpriv. Runs in the child between fork and exec; the death signal
    # survives exec (but not setuid).
    _libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl ran
        os._exit(1)


def spawn(argv: Sequence[str], *, stdout: IO | int | None = None, stderr: IO | int | None = None,
          stdin: IO | int | None = subprocess.DEVNULL, env: dict | None = None,
          cwd: str | os.PathLike | None = None) -> subprocess.Popen:
    """Start a child process that is tracked and dies with pytest.

    The death signal is set by `setpriv --pdeathsig KILL`, which then execs the command (same
    pid). A preexec_fn is the fallback only: it is unsafe with threads, and librdkafka clients
    run threads inside pytest.
    """
    argv = [str(a) for a in argv]
    preexec = None
    if _SETPRIV is not None:
        argv = [_SETPRIV, "--pdeathsig", "KILL", *argv]
    elif _libc is not None:
        parent = os.getpid()
        preexec = lambda: _child_setup(parent)  # noqa: E731
    proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, stdin=stdin, env=env, cwd=cwd,
                            preexec_fn=preexec, start_new_session=True)
    with _lock:
        _live[proc.pid] = proc
    return proc


def forget(proc: subprocess.Popen) -> None:
    with _lock:
        _live.pop(proc.pid, None)


def terminate(proc: subprocess.Popen, grace: float) -> int:
    """SIGTERM, wait up to grace seconds, then SIGKILL. Returns the exit code."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    forget(proc)
    return proc.returncode


def kill_all(grace: float = 10.0) -> list[int]:
    """Stop every tracked process still alive (SIGTERM, then SIGKILL after grace). Returns pids."""
    with _lock:
        procs = [p for p in _live.values() if p.poll() is None]
        _live.clear()
    for p in procs:
        try:
            p.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return [p.pid for p in procs]


def live_pids() -> list[int]:
    with _lock:
        return [pid for pid, p in _live.items() if p.poll() is None]


atexit.register(kill_all)
