"""Any Kafka request, at any version, to any broker: a wrapper around the Go tool `kreq`
(tests/go/kreq, built into .cache/bin/kreq by scripts/setup-go.sh).

kreq encodes requests and decodes responses with franz-go's kmsg package, so bodies and responses
are dicts keyed by kmsg's Go field names (e.g. {"Topics": [{"Topic": "t", "NumPartitions": 1}]});
omitted fields keep kmsg's defaults. One Kreq keeps one kreq process and so one TCP connection
(requests in sequence on the same connection, e.g. JoinGroup then SyncGroup); kreq reconnects by
itself after the broker closed the connection, and every answer says which connection it used.

    with Kreq(broker) as k:
        md = k.send("Metadata", 12, {"Topics": [{"Topic": topic_name}]})
        assert md["Topics"][0]["ErrorCode"] == 0

Requests that block (JoinGroup waits for the other members) can be outstanding on several Kreq
objects at once: use send_async() and then wait(), or call send() from several threads (each Kreq
has its own process and connection; one Kreq may also be shared by threads, its requests are
answered in the order they were submitted).

Values in bodies: bytes become base64 and uuid.UUID a 16-byte array (what encoding/json expects);
in responses, byte fields are base64 strings (see b64()) and UUIDs 16-int lists (see as_uuid());
empty arrays are [] and None means a null on the wire (nullable fields only).
"""
from __future__ import annotations

import base64
import collections
import json
import os
import subprocess
import threading
import time
import uuid
from concurrent.futures import Future, TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from . import procs
from .apikeys import API_NAMES
from .paths import ROOT

DEFAULT_TIMEOUT = 30.0
# How much longer than kreq's own per-request timeout Python waits for an answer line.
_ANSWER_GRACE = 15.0
_API_KEYS = {name.lower(): key for key, name in API_NAMES.items()}

NULL = object()
"""Pass as client_id to send a null client id in the request header."""


class KreqError(Exception):
    """kreq answered {"ok": false, ...} (see .answer), or the kreq process itself failed."""

    def __init__(self, message: str, answer: dict | None = None) -> None:
        super().__init__(message)
        self.answer = answer


class KreqConnectionClosed(KreqError):
    """The broker closed the connection instead of answering."""


def kreq_bin() -> Path:
    """The kreq binary: $KREQ_BIN, else .cache/bin/kreq (built by scripts/setup-go.sh)."""
    path = Path(os.environ.get("KREQ_BIN", ROOT / ".cache" / "bin" / "kreq"))
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise FileNotFoundError(
            f"kreq binary {path} does not exist or is not executable: build the Go test helpers "
            f"with `scripts/setup-go.sh` (or point KREQ_BIN at it)")
    return path


def api_key(api: int | str) -> int:
    """An API key from its number or its name ("JoinGroup", case-insensitive)."""
    if isinstance(api, int):
        return api
    try:
        return _API_KEYS[api.lower()]
    except KeyError:
        raise ValueError(f"unknown API name {api!r}") from None


def address(broker) -> str:
    """host:port of a broker object (.host/.port or .bootstrap) or of a "host:port" string."""
    if isinstance(broker, str):
        return broker
    if hasattr(broker, "host") and hasattr(broker, "port"):
        return f"{broker.host}:{broker.port}"
    return broker.bootstrap


def b64(value: str | None) -> bytes | None:
    """Bytes of a base64 field of a response (None stays None)."""
    return None if value is None else base64.b64decode(value)


def as_uuid(value) -> uuid.UUID:
    """A UUID field of a response (a list of 16 ints) as uuid.UUID."""
    return uuid.UUID(bytes=bytes(value))


def _json_default(obj):
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(obj)).decode()
    if isinstance(obj, uuid.UUID):
        return list(obj.bytes)
    raise TypeError(f"cannot send {type(obj).__name__} in a kreq body: {obj!r}")


def _describe(answer: dict) -> str:
    extra = {k: v for k, v in answer.items() if k not in ("ok", "error")}
    return f"{answer.get('error')} {json.dumps(extra)}" if extra else str(answer.get("error"))


class KreqCall:
    """One submitted command; result() gives kreq's whole answer, response() what send() returns."""

    def __init__(self, kreq: "Kreq", command: dict, deadline: float, allow_closed: bool) -> None:
        self.kreq = kreq
        self.command = command
        self.deadline = deadline  # time.monotonic() by which kreq must have answered
        self.allow_closed = allow_closed
        self._future: Future = Future()

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: float | None = None) -> dict:
        """kreq's answer line as a dict ({"ok": ..., "response": ..., "connection": ...}).

        With an explicit timeout, TimeoutError if there is no answer yet (the call stays
        outstanding). Without one, kreq's own per-request timeout (after the commands submitted
        before this one) plus a grace period applies, after which this Kreq is given up
        (KreqError).
        """
        if timeout is not None:
            try:
                return self._future.result(timeout)
            except FutureTimeout:
                raise TimeoutError(f"no answer yet to {self._brief()} after {timeout}s") from None
        timeout = max(0.0, self.deadline - time.monotonic())
        try:
            return self._future.result(timeout)
        except FutureTimeout:
            # The answers of this process are now out of step with its callers: give it up.
            self.kreq._fail(f"kreq gave no answer within {timeout:.1f}s to {self._brief()}",
                            stop=True)
            raise KreqError(f"kreq gave no answer within {timeout:.1f}s to {self._brief()}") from None

    def response(self, timeout: float | None = None) -> dict | None:
        """The decoded response; raises KreqError on {"ok": false} (unless allow_closed and the
        broker closed the connection: then kreq's answer is returned)."""
        answer = self.result(timeout)
        if answer.get("ok"):
            return answer.get("response")
        if answer.get("error") == "connection closed":
            if self.allow_closed:
                return answer
            raise KreqConnectionClosed(
                f"{self.kreq.address} closed the connection instead of answering {self._brief()}",
                answer)
        raise KreqError(f"{self._brief()} to {self.kreq.address}: {_describe(answer)}", answer)

    def _brief(self) -> str:
        c = self.command
        if "api" in c:
            return f"{API_NAMES.get(c['api'], c['api'])} v{c.get('version')}"
        return json.dumps(c)[:200]


class Kreq:
    """One kreq process (one broker connection at a time); a context manager."""

    def __init__(self, broker, *, timeout: float = DEFAULT_TIMEOUT, client_id: str | None = None,
                 connect_timeout: float = 10.0) -> None:
        self.address = address(broker)
        self.timeout = timeout
        argv = [str(kreq_bin()), "--broker", self.address, "--timeout", f"{timeout}s",
                "--connect-timeout", f"{connect_timeout}s"]
        if client_id is not None:
            argv += ["--client-id", client_id]
        self._lock = threading.Lock()
        self._pending: collections.deque[KreqCall] = collections.deque()
        self._stderr: collections.deque[str] = collections.deque(maxlen=100)
        self._failure: str | None = None
        self.last_answer: dict | None = None
        self._queue_end = 0.0  # when kreq must be done with everything submitted so far
        self.proc = procs.spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        self._reader = threading.Thread(target=self._read_answers, daemon=True,
                                        name=f"kreq-{self.address}-out")
        self._errreader = threading.Thread(target=self._read_stderr, daemon=True,
                                           name=f"kreq-{self.address}-err")
        self._reader.start()
        self._errreader.start()

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> "Kreq":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Kreq {self.address} pid {self.proc.pid}>"

    def close(self) -> None:
        """End kreq (closing its connection). kreq still answers what was submitted before, but
        if that takes longer than a few seconds (a blocked JoinGroup) it is stopped."""
        with self._lock:
            if self._failure is None:
                self._failure = "kreq was closed"
            try:
                if self.proc.stdin and not self.proc.stdin.closed:
                    self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            procs.terminate(self.proc, 2.0)
        procs.forget(self.proc)
        self._reader.join(timeout=5.0)
        self._errreader.join(timeout=5.0)
        self._fail("kreq was closed")

    def _fail(self, why: str, stop: bool = False) -> None:
        with self._lock:
            if self._failure is None:
                self._failure = why
            pending = list(self._pending)
            self._pending.clear()
        if stop and self.proc.poll() is None:
            procs.terminate(self.proc, 2.0)
        for call in pending:
            if not call._future.done():
                call._future.set_exception(KreqError(f"{why}{self._stderr_tail()}"))

    def _stderr_tail(self) -> str:
        text = "".join(self._stderr).strip()
        return f"\n--- kreq stderr ---\n{text}" if text else ""

    def _read_answers(self) -> None:
        for raw in self.proc.stdout:
            try:
                answer = json.loads(raw)
            except ValueError:
                answer = {"ok": False, "error": f"kreq printed a non-JSON line: {raw[:300]!r}"}
            with self._lock:
                call = self._pending.popleft() if self._pending else None
                self.last_answer = answer
            if call is not None and not call._future.done():
                call._future.set_result(answer)
        rc = self.proc.wait()
        self._fail(f"kreq exited with code {rc}")

    def _read_stderr(self) -> None:
        for raw in self.proc.stderr:
            self._stderr.append(raw.decode(errors="replace"))

    # ------------------------------------------------------------------ commands
    def submit(self, command: dict, *, allow_closed: bool = False) -> KreqCall:
        """Send one kreq command line (see tests/go/kreq/main.go) without waiting for the answer."""
        # kreq answers in order: this command's time starts when the one before it is done.
        own = float(command.get("timeout", self.timeout)) + float(command.get("wait_closed", 0))
        line = (json.dumps(command, default=_json_default) + "\n").encode()
        with self._lock:
            if self._failure is not None:
                raise KreqError(f"{self!r} is unusable: {self._failure}{self._stderr_tail()}")
            self._queue_end = max(time.monotonic(), self._queue_end) + own
            call = KreqCall(self, command, self._queue_end + _ANSWER_GRACE, allow_closed)
            self._pending.append(call)
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (OSError, ValueError) as e:
                self._pending.remove(call)
                raise KreqError(f"cannot talk to {self!r}: {e!r}{self._stderr_tail()}") from e
        return call

    def send_async(self, api: int | str, version: int, body: dict | None = None, *,
                   client_id: Any = None, timeout: float | None = None, allow_closed: bool = False,
                   **options) -> KreqCall:
        """Submit a request; wait(call) (or call.response()) gives what send() would return.

        options are passed to kreq as they are: body_hex (bytes or hex str), flexible, no_response,
        hex (also return the response bytes: use request()/result() to see them).
        """
        command: dict[str, Any] = {"api": api_key(api), "version": version}
        if body is not None:
            command["body"] = body
        if client_id is NULL:
            command["client_id"] = None
        elif client_id is not None:
            command["client_id"] = client_id
        if timeout is not None:
            command["timeout"] = timeout
        if isinstance(options.get("body_hex"), (bytes, bytearray)):
            options["body_hex"] = bytes(options["body_hex"]).hex()
        command.update(options)
        return self.submit(command, allow_closed=allow_closed)

    def wait(self, call: KreqCall, timeout: float | None = None) -> dict | None:
        return call.response(timeout)

    def send(self, api: int | str, version: int, body: dict | None = None, *, client_id: Any = None,
             timeout: float | None = None, allow_closed: bool = False, **options) -> dict | None:
        """Send a request and return the decoded response (a dict of kmsg field names).

        Raises KreqConnectionClosed if the broker closed the connection instead (with
        allow_closed=True kreq's answer {"ok": False, "error": "connection closed", ...} is
        returned instead), KreqError on any other failure (timeout, undecodable response, ...).
        """
        return self.send_async(api, version, body, client_id=client_id, timeout=timeout,
                               allow_closed=allow_closed, **options).response()

    def request(self, api: int | str, version: int, body: dict | None = None, **kw) -> dict:
        """Like send(), but returns kreq's whole answer (ok, error, response, connection,
        correlation_id, response_hex, ...) and never raises for {"ok": false}."""
        return self.send_async(api, version, body, **kw).result()

    def send_raw(self, payload: bytes, *, framed: bool = True, timeout: float | None = None,
                 no_response: bool = False) -> bytes | None:
        """Write payload (size-prefixed by kreq unless framed=False) and return the response frame
        (after its size: correlation id, header, body), or None if the broker closed the
        connection."""
        command: dict[str, Any] = {("raw_hex" if framed else "raw_unframed_hex"): bytes(payload).hex()}
        if timeout is not None:
            command["timeout"] = timeout
        if no_response:
            command["no_response"] = True
        answer = self.submit(command).result()
        if answer.get("ok"):
            return bytes.fromhex(answer["response_hex"]) if "response_hex" in answer else b""
        if answer.get("error") == "connection closed":
            return None
        raise KreqError(f"raw request to {self.address}: {_describe(answer)}", answer)

    def wait_closed(self, seconds: float) -> bool:
        """True if the broker closes the connection within seconds (bytes it sends are dropped)."""
        answer = self.submit({"wait_closed": seconds}).result()
        if not answer.get("ok"):
            raise KreqError(f"wait_closed on {self.address}: {_describe(answer)}", answer)
        return bool(answer["closed"])

    def reconnect(self) -> int:
        """Drop the connection and open a new one; returns its number."""
        answer = self.submit({"reconnect": True}).result()
        if not answer.get("ok"):
            raise KreqError(f"reconnect to {self.address}: {_describe(answer)}", answer)
        return answer["connection"]


def kreq_once(broker, api: int | str, version: int, body: dict | None = None, **kw) -> dict | None:
    """One request on a connection of its own; see Kreq.send for the keyword arguments."""
    with Kreq(broker, timeout=kw.pop("kreq_timeout", DEFAULT_TIMEOUT)) as k:
        return k.send(api, version, body, **kw)
