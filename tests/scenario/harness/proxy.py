"""A TCP proxy for one link between two nodes (loopback only), in-process, with threads.

    link = LinkProxy("127.0.0.1", controller_port, name="broker 1 -> controller 3000")
    ... give the broker link.endpoint instead of the controller's address ...
    link.cut()       # drop every open connection and refuse new ones (connect: ECONNREFUSED)
    link.heal()      # accept again on the same port
    link.delay(200)  # hold every chunk 200 ms in each direction (order kept); delay(0) ends it
    link.close()     # the fixture's teardown: stop listening, drop everything

Every fault is undone by close(), which Cluster.finish() (and so the cluster_factory fixture)
calls. Counters (connections, bytes_up, bytes_down) let a test check traffic really went through.
"""
from __future__ import annotations

import collections
import socket
import struct
import threading
import time

from .ports import free_port

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _Pipe:
    """One direction of one proxied connection: reader thread -> (delay queue) -> writer."""

    def __init__(self, link: "LinkProxy", src: socket.socket, dst: socket.socket, up: bool) -> None:
        self.link, self.src, self.dst, self.up = link, src, dst, up
        self.queue: collections.deque[tuple[float, bytes]] = collections.deque()
        self.cv = threading.Condition()
        self.eof = False
        threading.Thread(target=self._read, daemon=True, name=f"{link.name} read").start()
        threading.Thread(target=self._write, daemon=True, name=f"{link.name} write").start()

    def _read(self) -> None:
        try:
            while True:
                data = self.src.recv(65536)
                if not data:
                    break
                with self.cv:
                    self.queue.append((time.monotonic() + self.link.delay_ms / 1000.0, data))
                    self.cv.notify()
        except OSError:
            pass
        with self.cv:
            self.eof = True
            self.cv.notify()

    def _write(self) -> None:
        try:
            while True:
                with self.cv:
                    while not self.queue and not self.eof:
                        self.cv.wait()
                    if not self.queue:
                        break
                    due, data = self.queue[0]
                    wait = due - time.monotonic()
                    if wait > 0:  # the injected delay itself, not a wait for state
                        self.cv.wait(wait)
                        continue
                    self.queue.popleft()
                # Counted before it is sent: a test that has read the bytes at the other end
                # sees them counted (counting after sendall raced with the reader).
                with self.link.lock:
                    if self.up:
                        self.link.bytes_up += len(data)
                    else:
                        self.link.bytes_down += len(data)
                self.dst.sendall(data)
        except OSError:
            pass
        try:
            self.dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class LinkProxy:
    """Listens on 127.0.0.1:<listen_port> and forwards each connection to target_host:target_port."""

    def __init__(self, target_host: str, target_port: int, *, listen_port: int | None = None,
                 name: str = "link") -> None:
        if target_host not in _LOOPBACK:
            raise ValueError(f"LinkProxy forwards to loopback only, not {target_host}")
        self.target = (target_host, target_port)
        self.port = listen_port or free_port()
        self.name = name
        self.delay_ms = 0
        self.lock = threading.Lock()
        self.conns: list[socket.socket] = []
        self.connections = 0
        self.bytes_up = 0
        self.bytes_down = 0
        self.is_cut = False
        self.closed = False
        self._listener: socket.socket | None = None
        self._listen()

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __repr__(self) -> str:
        state = "cut" if self.is_cut else f"delay {self.delay_ms} ms" if self.delay_ms else "open"
        return f"<LinkProxy {self.name} {self.endpoint} -> {self.target[0]}:{self.target[1]} {state}>"

    # ------------------------------------------------------------------ faults
    def cut(self) -> None:
        """Drop every open connection (RST) and refuse new ones until heal()."""
        with self.lock:
            self.is_cut = True
            listener, self._listener = self._listener, None
            conns, self.conns = self.conns, []
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept thread (Linux)
            except OSError:
                pass
            listener.close()
        for s in conns:
            _reset(s)

    def heal(self) -> None:
        with self.lock:
            if self.closed or not self.is_cut:
                return
            self.is_cut = False
        self._listen()

    def delay(self, ms: int) -> None:
        """Hold every chunk ms milliseconds (each direction); 0 ends the delay for new data."""
        if ms < 0 or ms > 60_000:
            raise ValueError("delay must be 0..60000 ms")
        self.delay_ms = ms

    def close(self) -> None:
        """Undo everything: no delay, stop listening, drop connections."""
        self.delay_ms = 0
        self.cut()
        with self.lock:
            self.closed = True

    # ------------------------------------------------------------------ plumbing
    def _listen(self) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(64)
        with self.lock:
            self._listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True, name=f"{self.name} accept").start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by cut()/close()
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5.0)
                upstream.settimeout(None)
            except OSError:
                _reset(client)
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                if self.is_cut:
                    _reset(client)
                    _reset(upstream)
                    return
                self.conns += [client, upstream]
                self.connections += 1
            _Pipe(self, client, upstream, up=True)
            _Pipe(self, upstream, client, up=False)


def _reset(s: socket.socket) -> None:
    """Abort a connection: RST to the peer, and wake the threads blocked on it."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
