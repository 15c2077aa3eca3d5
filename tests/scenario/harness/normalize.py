"""Turning tool output into something comparable between weir and Kafka.

What legitimately differs between two brokers (addresses, ids, timestamps, column widths) is
replaced by placeholders; everything else must match.
"""
from __future__ import annotations

import re
from typing import Iterable

_UUID36 = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
# Kafka Uuids (topic ids, cluster ids) in text form, where the tools print them.
_KAFKA_ID_FIELDS = re.compile(r"\b(TopicId|topicId|ClusterId|clusterId|Cluster ID|cluster id)(:\s*|=|\s+)"
                              r"[A-Za-z0-9_-]{22}\b")
_CONSOLE_GROUP = re.compile(r"\bconsole-consumer-\d+\b")
# A consumer's member id: <client id>-<uuid>; with the uuid already normalised.
_MEMBER_ID = re.compile(r"\b[\w.-]+-<uuid>")
_EPOCH_MS = re.compile(r"\b1[5-9]\d{11}\b")  # epoch milliseconds 2017..2033
_ISO_TS = re.compile(r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,:]\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_LOG_PREFIX = re.compile(r"^\[[^\]]*\] (?:TRACE|DEBUG|INFO|WARN|ERROR) .*$", re.M)
_SLF4J = re.compile(r"^SLF4J: .*$\n?", re.M)


def broker_addresses(broker) -> list[str]:
    """The spellings of a broker's address that tools may print."""
    host, port = broker.host, broker.port
    names = {host, "localhost", "127.0.0.1"}
    return sorted({f"{h}:{port}" for h in names}, key=len, reverse=True)


def normalise(text: str, brokers: Iterable = (), *, collapse_ws: bool = True,
              drop_logs: bool = True, extra: Iterable[tuple[str, str]] = ()) -> str:
    """Normalise tool output for differential comparison.

    brokers: broker objects (weir or Kafka) whose host:port become <broker>.
    extra: further (regex, replacement) pairs applied last.
    """
    for b in brokers:
        for addr in broker_addresses(b):
            text = text.replace(addr, "<broker>")
    if drop_logs:
        text = _LOG_PREFIX.sub("", text)
        text = _SLF4J.sub("", text)
    text = _UUID36.sub("<uuid>", text)
    text = _KAFKA_ID_FIELDS.sub(lambda m: f"{m.group(1)}{m.group(2)}<id>", text)
    text = _MEMBER_ID.sub("<member-id>", text)
    text = _CONSOLE_GROUP.sub("console-consumer-<n>", text)
    text = _ISO_TS.sub("<time>", text)
    text = _EPOCH_MS.sub("<ts>", text)
    for pattern, repl in extra:
        text = re.sub(pattern, repl, text)
    lines = text.splitlines()
    if collapse_ws:
        lines = [" ".join(ln.split()) for ln in lines]
    return "\n".join(ln for ln in lines if ln.strip())


def _cells(line: str, tabbed: bool) -> list[str]:
    if not tabbed:
        return line.split()
    cells = [c.strip() for c in line.split("\t")]
    if line.rstrip(" ").endswith("\t"):
        cells.pop()  # the tools end every row with a tab
    return cells


def parse_table(text: str, header_first: str | None = None) -> list[dict[str, str]]:
    """Rows of an aligned table (kafka-consumer-groups, kafka-transactions, ...).

    The header is the first line whose first cell is header_first (or the first non-empty line).
    Tab-separated tables (kafka-transactions) are split on tabs, so empty cells are kept as "";
    space-aligned ones (kafka-consumer-groups) on runs of whitespace.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    start = 0
    if header_first is not None:
        for i, ln in enumerate(lines):
            if ln.split() and ln.split()[0] == header_first:
                start = i
                break
        else:
            return []
    if not lines:
        return []
    tabbed = "\t" in lines[start]
    header = _cells(lines[start], tabbed)
    rows = []
    for ln in lines[start + 1:]:
        cells = _cells(ln, tabbed)
        if cells and cells[0] == header[0]:  # a repeated header (several groups)
            continue
        if tabbed and len(cells) < len(header):
            cells += [""] * (len(header) - len(cells))
        if len(cells) != len(header):
            continue
        rows.append(dict(zip(header, cells)))
    return rows


_API_LINE = re.compile(
    r"^\s*(?P<name>\w+)\((?P<key>\d+)\):\s*(?:(?P<unsupported>UNSUPPORTED)|"
    r"(?P<min>\d+)(?: to (?P<max>\d+))?(?: \[(?:usable: (?P<usable>\d+)|(?P<nousable>[^\]]+))\])?)")
_NODE_LINE = re.compile(r"^(?P<addr>\S+) \(id: (?P<id>-?\d+) rack: (?P<rack>\S+)(?P<rest>[^)]*)\) -> \($")


def parse_broker_api_versions(text: str) -> dict[int, dict]:
    """Parse `kafka-broker-api-versions` output.

    Returns {node id: {"address": "host:port", "rack": ..., "apis": {key: {"name", "min", "max",
    "usable"}}}}, where usable is the version the tool would use, or None when the API is
    UNSUPPORTED or no version is usable.
    """
    nodes: dict[int, dict] = {}
    current = None
    for ln in text.splitlines():
        m = _NODE_LINE.match(ln.strip())
        if m:
            current = {"address": m["addr"], "rack": m["rack"], "apis": {}}
            nodes[int(m["id"])] = current
            continue
        m = _API_LINE.match(ln)
        if m and current is not None:
            key = int(m["key"])
            if m["unsupported"]:
                current["apis"][key] = {"name": m["name"], "min": None, "max": None, "usable": None}
            else:
                lo = int(m["min"])
                hi = int(m["max"]) if m["max"] else lo
                usable = int(m["usable"]) if m["usable"] is not None else None
                current["apis"][key] = {"name": m["name"], "min": lo, "max": hi, "usable": usable}
    return nodes
