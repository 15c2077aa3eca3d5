"""A confluent-kafka consumer using the consumer group protocol (KIP-848, `group.protocol=consumer`)
that records what it reads and owns, for the scenarios of issue 16 (single broker and cluster)."""
from __future__ import annotations

from confluent_kafka import Consumer, TopicPartition


class Member:
    """A consumer-protocol consumer that records what it reads and what it owns, and commits the
    partitions it processed when they are revoked (so the next owner starts where it stopped)."""

    def __init__(self, broker, group: str, topic: str, name: str):
        self.name = name
        self.topic = topic
        self.owned: set[int] = set()
        self.processed: dict[int, int] = {}  # partition -> next offset to read
        self.commit_on_revoke = True
        self.read: list[tuple[int, int, bytes]] = []  # (partition, offset, value)
        self.consumer = Consumer({
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": name,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        })
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_lost)

    def _on_assign(self, consumer, partitions):
        self.owned |= {tp.partition for tp in partitions}

    def _on_revoke(self, consumer, partitions):
        done = [TopicPartition(self.topic, tp.partition, self.processed[tp.partition])
                for tp in partitions if tp.partition in self.processed]
        if done and self.commit_on_revoke:
            consumer.commit(offsets=done, asynchronous=False)
        self.owned -= {tp.partition for tp in partitions}

    def _on_lost(self, consumer, partitions):
        self.owned -= {tp.partition for tp in partitions}

    def poll(self, timeout: float = 0.5) -> None:
        m = self.consumer.poll(timeout)
        if m is None or m.error():
            return
        self.read.append((m.partition(), m.offset(), m.value()))
        self.processed[m.partition()] = m.offset() + 1

    def close(self, commit: bool = True) -> None:
        """Leave the group. commit=False: a test's cleanup that checks no offsets afterwards. (While
        closing, librdkafka may revoke after it has left: Kafka then answers the revocation's commit
        UNKNOWN_MEMBER_ID, which close() raises.)"""
        self.commit_on_revoke = commit
        self.consumer.close()


def values(*members: Member) -> list[bytes]:
    """Every value the members read, sorted (duplicates kept)."""
    return sorted(v for m in members for (_, _, v) in m.read)


def expected(count: int) -> list[bytes]:
    """The values v0 .. v<count-1>, sorted as values() sorts."""
    return sorted(f"v{i}".encode() for i in range(count))
