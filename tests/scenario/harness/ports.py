"""Free TCP ports for brokers started by the tests."""
from __future__ import annotations

import socket
import threading

_lock = threading.Lock()
_handed_out: set[int] = set()


def free_port() -> int:
    """A TCP port nothing listens on now, never handed out before in this process.

    The port is found by binding port 0 on all interfaces (Kafka's listeners bind there) and
    closing the socket again; the kernel does not hand the same ephemeral port out again soon.
    """
    with _lock:
        for _ in range(100):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("0.0.0.0", 0))
                port = s.getsockname()[1]
            if port not in _handed_out:
                _handed_out.add(port)
                return port
    raise RuntimeError("could not find a free TCP port")


def wait_port_closed(host: str, port: int, timeout: float = 10.0) -> bool:
    """True once nothing accepts connections on host:port (within timeout)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                pass
        except OSError:
            return True
        time.sleep(0.1)
    return False
