"""A small, independent Kafka wire codec for the harness: just enough to ask a broker
ApiVersions (v0 and v3+) and Metadata (v1), and a KRaft controller DescribeQuorum (v2), over a raw
socket, and to send arbitrary bytes.

It deliberately shares no code with weir's codec, so that it can check it.
Framing: int32 size, then the request header and body. Request header v1 = int16 api_key,
int16 api_version, int32 correlation_id, int16-length nullable client_id; v2 adds tagged fields.
Response header v0 = int32 correlation_id; v1 adds tagged fields (ApiVersions always uses v0).
"""
from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field

API_VERSIONS = 18
METADATA = 3
DESCRIBE_QUORUM = 55


class ProtocolError(Exception):
    """The peer sent bytes that do not decode as the expected response."""


class ConnectionClosed(Exception):
    """The peer closed the connection (EOF or reset) before a whole response arrived."""


# ----------------------------------------------------------------------------- encoding
class Writer:
    def __init__(self) -> None:
        self.buf = bytearray()

    def int8(self, v: int) -> "Writer":
        self.buf += struct.pack(">b", v)
        return self

    def int16(self, v: int) -> "Writer":
        self.buf += struct.pack(">h", v)
        return self

    def int32(self, v: int) -> "Writer":
        self.buf += struct.pack(">i", v)
        return self

    def int64(self, v: int) -> "Writer":
        self.buf += struct.pack(">q", v)
        return self

    def uvarint(self, v: int) -> "Writer":
        while True:
            b = v & 0x7F
            v >>= 7
            if v:
                self.buf.append(b | 0x80)
            else:
                self.buf.append(b)
                return self

    def string(self, s: str | None) -> "Writer":
        if s is None:
            return self.int16(-1)
        data = s.encode()
        return self.int16(len(data)).raw(data)

    def compact_string(self, s: str | None) -> "Writer":
        if s is None:
            return self.uvarint(0)
        data = s.encode()
        return self.uvarint(len(data) + 1).raw(data)

    def empty_tagged_fields(self) -> "Writer":
        return self.uvarint(0)

    def raw(self, data: bytes) -> "Writer":
        self.buf += data
        return self

    def bytes(self) -> bytes:
        return bytes(self.buf)


def frame(payload: bytes) -> bytes:
    """Size-prefix a request (header + body)."""
    return struct.pack(">i", len(payload)) + payload


def request_header(api_key: int, api_version: int, correlation_id: int,
                   client_id: str | None = "weir-harness", flexible: bool = False) -> bytes:
    w = Writer().int16(api_key).int16(api_version).int32(correlation_id).string(client_id)
    if flexible:
        w.empty_tagged_fields()
    return w.bytes()


def encode_api_versions_request(version: int, correlation_id: int,
                                client_id: str | None = "weir-harness",
                                software_name: str = "weir-harness",
                                software_version: str = "1.0") -> bytes:
    flexible = version >= 3
    payload = request_header(API_VERSIONS, version, correlation_id, client_id, flexible)
    if flexible:
        payload += (Writer().compact_string(software_name).compact_string(software_version)
                    .empty_tagged_fields().bytes())
    return frame(payload)


def encode_metadata_v1_request(correlation_id: int, topics: list[str] | None = None,
                               client_id: str | None = "weir-harness") -> bytes:
    w = Writer()
    if topics is None:
        w.int32(-1)  # null array: all topics (v1+)
    else:
        w.int32(len(topics))
        for t in topics:
            w.string(t)
    return frame(request_header(METADATA, 1, correlation_id, client_id) + w.bytes())


# ----------------------------------------------------------------------------- decoding
class Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ProtocolError(f"need {n} bytes at offset {self.pos}, have {self.remaining()}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def int8(self) -> int:
        return struct.unpack(">b", self._take(1))[0]

    def boolean(self) -> bool:
        return self.int8() != 0

    def int16(self) -> int:
        return struct.unpack(">h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def int64(self) -> int:
        return struct.unpack(">q", self._take(8))[0]

    def uvarint(self) -> int:
        shift = 0
        value = 0
        while True:
            if shift > 28:
                raise ProtocolError("unsigned varint longer than 5 bytes")
            b = self._take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def string(self) -> str | None:
        n = self.int16()
        if n < 0:
            return None
        return self._take(n).decode()

    def compact_string(self) -> str | None:
        n = self.uvarint()
        if n == 0:
            return None
        return self._take(n - 1).decode()

    def array_len(self) -> int:
        n = self.int32()
        if n > self.remaining():
            raise ProtocolError(f"array length {n} exceeds the {self.remaining()} bytes left")
        return n

    def compact_array_len(self) -> int:
        n = self.uvarint() - 1
        if n > self.remaining():
            raise ProtocolError(f"array length {n} exceeds the {self.remaining()} bytes left")
        return n

    def tagged_fields(self) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            size = self.uvarint()
            out[tag] = self._take(size)
        return out


@dataclass
class ApiVersionsResponse:
    version: int
    error_code: int
    api_keys: dict[int, tuple[int, int]]
    throttle_time_ms: int = 0
    supported_features: dict[str, tuple[int, int]] = field(default_factory=dict)
    finalized_features_epoch: int = -1
    finalized_features: dict[str, tuple[int, int]] = field(default_factory=dict)  # name: (min, max)
    zk_migration_ready: bool = False
    unknown_tags: dict[int, bytes] = field(default_factory=dict)


def decode_api_versions_response(version: int, body: bytes) -> ApiVersionsResponse:
    """Decode an ApiVersions response body (after the v0 response header).

    A broker answering a version it does not support replies in the v0 layout with error 35;
    that case is detected and decoded as v0.
    """
    r = Reader(body)
    error_code = r.int16()
    if version >= 3 and error_code == 35:
        version = 0
        r = Reader(body)
        r.int16()
    flexible = version >= 3
    keys: dict[int, tuple[int, int]] = {}
    n = r.compact_array_len() if flexible else r.array_len()
    for _ in range(n):
        key, lo, hi = r.int16(), r.int16(), r.int16()
        if flexible:
            r.tagged_fields()
        keys[key] = (lo, hi)
    resp = ApiVersionsResponse(version=version, error_code=error_code, api_keys=keys)
    if version >= 1 and r.remaining() >= 4:
        resp.throttle_time_ms = r.int32()
    if flexible:
        for tag, data in r.tagged_fields().items():
            t = Reader(data)
            if tag == 0:
                for _ in range(t.compact_array_len()):
                    name, lo, hi = t.compact_string(), t.int16(), t.int16()
                    t.tagged_fields()
                    resp.supported_features[name] = (lo, hi)
            elif tag == 1:
                resp.finalized_features_epoch = t.int64()
            elif tag == 2:
                for _ in range(t.compact_array_len()):
                    name, max_level, min_level = t.compact_string(), t.int16(), t.int16()
                    t.tagged_fields()
                    resp.finalized_features[name] = (min_level, max_level)
            elif tag == 3:
                resp.zk_migration_ready = t.boolean()
            else:
                resp.unknown_tags[tag] = data
    if r.remaining():
        raise ProtocolError(f"{r.remaining()} trailing bytes after ApiVersions v{version} response")
    return resp


@dataclass
class MetadataBroker:
    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass
class MetadataTopic:
    error_code: int
    name: str
    is_internal: bool
    partitions: list[dict]


@dataclass
class MetadataResponse:
    brokers: list[MetadataBroker]
    controller_id: int
    topics: list[MetadataTopic]


def decode_metadata_v1_response(body: bytes) -> MetadataResponse:
    r = Reader(body)
    brokers = []
    for _ in range(r.array_len()):
        brokers.append(MetadataBroker(r.int32(), r.string(), r.int32(), r.string()))
    controller_id = r.int32()
    topics = []
    for _ in range(r.array_len()):
        err, name, internal = r.int16(), r.string(), r.boolean()
        parts = []
        for _ in range(r.array_len()):
            p = {"error_code": r.int16(), "partition": r.int32(), "leader": r.int32()}
            p["replicas"] = [r.int32() for _ in range(r.array_len())]
            p["isr"] = [r.int32() for _ in range(r.array_len())]
            parts.append(p)
        topics.append(MetadataTopic(err, name, internal, parts))
    if r.remaining():
        raise ProtocolError(f"{r.remaining()} trailing bytes after Metadata v1 response")
    return MetadataResponse(brokers, controller_id, topics)


def encode_describe_quorum_v2_request(correlation_id: int, topic: str = "__cluster_metadata",
                                      partition: int = 0,
                                      client_id: str | None = "weir-harness") -> bytes:
    """DescribeQuorum v2 (flexible from v0: request header v2, compact arrays, tagged fields)."""
    w = Writer().uvarint(1 + 1).compact_string(topic)
    w.uvarint(1 + 1).int32(partition).empty_tagged_fields()  # Partitions[0]
    w.empty_tagged_fields()  # TopicData
    w.empty_tagged_fields()  # request body
    return frame(request_header(DESCRIBE_QUORUM, 2, correlation_id, client_id, flexible=True)
                 + w.bytes())


@dataclass
class QuorumReplica:
    replica_id: int
    directory_id: bytes
    log_end_offset: int
    last_fetch_timestamp: int
    last_caught_up_timestamp: int


@dataclass
class DescribeQuorumResponse:
    error_code: int
    error_message: str | None
    partition_error_code: int = -1
    leader_id: int = -1
    leader_epoch: int = -1
    high_watermark: int = -1
    voters: list[QuorumReplica] = field(default_factory=list)
    observers: list[QuorumReplica] = field(default_factory=list)
    # node id -> {listener name: (host, port)}
    nodes: dict[int, dict[str, tuple[str, int]]] = field(default_factory=dict)


def _replica_states(r: Reader) -> list[QuorumReplica]:
    out = []
    for _ in range(r.compact_array_len()):
        rid = r.int32()
        directory = r._take(16)
        leo, last_fetch, caught_up = r.int64(), r.int64(), r.int64()
        r.tagged_fields()
        out.append(QuorumReplica(rid, directory, leo, last_fetch, caught_up))
    return out


def decode_describe_quorum_v2_response(body: bytes) -> DescribeQuorumResponse:
    """The body after response header v1; only the first topic's first partition is kept."""
    r = Reader(body)
    resp = DescribeQuorumResponse(r.int16(), r.compact_string())
    for ti in range(r.compact_array_len()):
        r.compact_string()
        for pi in range(r.compact_array_len()):
            r.int32()
            err, _msg = r.int16(), r.compact_string()
            leader, epoch, hw = r.int32(), r.int32(), r.int64()
            voters, observers = _replica_states(r), _replica_states(r)
            r.tagged_fields()
            if ti == 0 and pi == 0:
                resp.partition_error_code, resp.leader_id, resp.leader_epoch = err, leader, epoch
                resp.high_watermark, resp.voters, resp.observers = hw, voters, observers
        r.tagged_fields()
    for _ in range(r.compact_array_len()):
        node_id = r.int32()
        listeners = {}
        for _ in range(r.compact_array_len()):
            name, host = r.compact_string(), r.compact_string()
            port = struct.unpack(">H", r._take(2))[0]
            r.tagged_fields()
            listeners[name] = (host, port)
        r.tagged_fields()
        resp.nodes[node_id] = listeners
    r.tagged_fields()
    if r.remaining():
        raise ProtocolError(f"{r.remaining()} trailing bytes after DescribeQuorum v2 response")
    return resp


# ----------------------------------------------------------------------------- connection
class Connection:
    """A blocking TCP connection to a broker, speaking size-prefixed frames."""

    def __init__(self, host: str, port: int, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._next_correlation_id = 1

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def correlation_id(self) -> int:
        cid = self._next_correlation_id
        self._next_correlation_id += 1
        return cid

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _recv_exact(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            try:
                chunk = self.sock.recv(n - len(out))
            except ConnectionResetError as e:
                raise ConnectionClosed(str(e)) from e
            if not chunk:
                raise ConnectionClosed(f"EOF after {len(out)} of {n} bytes")
            out += chunk
        return bytes(out)

    def recv_frame(self) -> bytes:
        size = struct.unpack(">i", self._recv_exact(4))[0]
        if size < 4 or size > 512 * 1024 * 1024:
            raise ProtocolError(f"response frame size {size}")
        return self._recv_exact(size)

    def wait_closed(self, timeout: float) -> bool:
        """True if the peer closes the connection within timeout; any bytes it sends are discarded."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(left)
            try:
                if not self.sock.recv(65536):
                    return True
            except (ConnectionResetError, BrokenPipeError):
                return True
            except socket.timeout:
                return False

    def roundtrip(self, request: bytes, correlation_id: int, flexible_response_header: bool) -> bytes:
        """Send one framed request and return the response body (after the response header)."""
        self.send_raw(request)
        data = self.recv_frame()
        r = Reader(data)
        cid = r.int32()
        if cid != correlation_id:
            raise ProtocolError(f"correlation id {cid}, expected {correlation_id}")
        if flexible_response_header:
            r.tagged_fields()
        return data[r.pos:]

    def api_versions(self, version: int = 0, client_id: str | None = "weir-harness") -> ApiVersionsResponse:
        cid = self.correlation_id()
        body = self.roundtrip(encode_api_versions_request(version, cid, client_id), cid, False)
        return decode_api_versions_response(version, body)

    def metadata_v1(self, topics: list[str] | None = None) -> MetadataResponse:
        cid = self.correlation_id()
        body = self.roundtrip(encode_metadata_v1_request(cid, topics), cid, False)
        return decode_metadata_v1_response(body)

    def describe_quorum(self) -> DescribeQuorumResponse:
        """DescribeQuorum v2 for __cluster_metadata-0 (ask a controller)."""
        cid = self.correlation_id()
        body = self.roundtrip(encode_describe_quorum_v2_request(cid), cid, True)
        return decode_describe_quorum_v2_response(body)


def api_versions(host: str, port: int, version: int = 0, timeout: float = 5.0) -> ApiVersionsResponse:
    with Connection(host, port, timeout) as c:
        return c.api_versions(version)


def metadata_v1(host: str, port: int, timeout: float = 5.0) -> MetadataResponse:
    with Connection(host, port, timeout) as c:
        return c.metadata_v1()
