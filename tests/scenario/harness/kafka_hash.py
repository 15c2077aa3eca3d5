"""Where Kafka places a key among an internal topic's partitions: a group in __consumer_offsets,
a transactional id in __transaction_state (Kafka's partitionFor: Utils.abs(key.hashCode()) %
partitions, String.hashCode over UTF-16 code units, Utils.abs(Integer.MIN_VALUE) = 0)."""
from __future__ import annotations


def java_string_hash(s: str) -> int:
    units = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(key: str, partitions: int) -> int:
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions
