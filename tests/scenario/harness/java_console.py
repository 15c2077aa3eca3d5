"""Kafka's own Java console consumer as a group member, for the scenarios of the consumer group
protocol (KIP-848) and of the migration between classic and consumer groups: records produced
round-robin over the partitions as "v<i>", members that print partition, offset and value, and
ConsumerGroupDescribe on the wire."""
from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from confluent_kafka import Producer

from . import procs
from .kreq import Kreq
from .paths import kafka_tool

PARTITIONS = 4
BATCH = 40
LINE = re.compile(r"^Partition:(\d+)\tOffset:(\d+)\t(v\d+)$")


def produce(broker, topic: str, start: int, count: int) -> None:
    p = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(start, start + count):
        p.produce(topic, value=f"v{i}".encode(), partition=i % PARTITIONS)
    assert p.flush(30) == 0


class ConsoleMember:
    """One kafka-console-consumer in the group, printing partition, offset and value per line."""

    def __init__(self, broker, group: str, topic: str, name: str, out_dir: Path, protocol: str = "consumer"):
        self.name = name
        self.out = out_dir / f"{name}.out"
        self.err = out_dir / f"{name}.err"
        argv = [str(kafka_tool("kafka-console-consumer")), "--bootstrap-server", broker.bootstrap,
                "--topic", topic, "--group", group, "--from-beginning",
                "--consumer-property", f"group.protocol={protocol}",
                "--consumer-property", f"client.id={name}",
                "--property", "print.partition=true", "--property", "print.offset=true"]
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = procs.spawn(argv, stdout=out, stderr=err)

    def records(self) -> list[tuple[int, int, str]]:
        rows = []
        for line in self.out.read_text().splitlines():
            m = LINE.match(line)
            if m:
                rows.append((int(m[1]), int(m[2]), m[3]))
        return rows

    def stop(self) -> None:
        """SIGTERM, as Ctrl-C would: the consumer closes, committing what it consumed."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=60)
        procs.forget(self.proc)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        procs.forget(self.proc)


def describe(broker, group: str, version: int = 0) -> dict:
    with Kreq(broker) as k:
        return k.send("ConsumerGroupDescribe", version, {"Groups": [group]})["Groups"][0]


def owned(group_description: dict) -> dict[str, list[int]]:
    """client id -> partitions it owns, when every member is reconciled (at the group's epoch,
    owning exactly its target); {} otherwise."""
    g = group_description
    if g["ErrorCode"] != 0:
        return {}
    out = {}
    for m in g["Members"]:
        assigned = sorted(p for t in m["Assignment"]["TopicPartitions"] for p in t["Partitions"])
        target = sorted(p for t in m["TargetAssignment"]["TopicPartitions"] for p in t["Partitions"])
        if m["MemberEpoch"] != g["Epoch"] or assigned != target:
            return {}
        out[m["ClientID"]] = assigned
    return out
