"""The metadata hash of consumer groups (KIP-1101) is Kafka 4.3.1's.

tests/data/metadata_hash_golden.txt is what Kafka's own Utils.computeTopicHash and
ModernGroup.computeMetadataHash give for the table tests/data/metadata_hash_cases.txt
(tests/java/HashVectors.java); the unit test MetadataHashGolden compares weir's hashes with it.
Here the file is made again with Kafka's classes and must equal the committed one.

Then, on weir and on Kafka: a consumer-protocol member joins a group on a new topic of 3
partitions, the topic grows to 5, the member leaves. The MetadataHash of the group's
ConsumerGroupMetadata records in `__consumer_offsets`, as `kafka-dump-log --offsets-decoder`
prints them, is what Kafka's formula gives for that broker's own topic id (the ids differ between
the brokers, so the hashes do too): the join's epoch with 3 partitions, one bump with 5, and 0 at
the departure (no topic is subscribed any more).
"""
from __future__ import annotations

import json
import re
import subprocess

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from harness import run_tool
from harness.cluster import wait_for
from harness.consumer_protocol import Member
from harness.kafka_hash import partition_for
from harness.paths import ROOT, kafka_classpath_file

PARTITIONS = 3
GROWN = 5


def java(*args: str) -> subprocess.CompletedProcess:
    subprocess.run([str(ROOT / "tests" / "java" / "build.sh")], check=True)
    cp = kafka_classpath_file().read_text().strip() + ":" + str(ROOT / ".cache" / "java")
    return subprocess.run(["java", "-cp", cp, "HashVectors", *args], capture_output=True, text=True, timeout=120)


def test_golden_metadata_hashes_are_what_kafka_computes(tmp_path):
    out = tmp_path / "golden.txt"
    r = java(str(ROOT / "tests" / "data" / "metadata_hash_cases.txt"), str(out))
    assert r.returncode == 0, r.stderr
    made = out.read_text(encoding="utf-8")
    assert made.count("\ntopic ") >= 10 and made.count("\ngroup ") >= 10
    committed = (ROOT / "tests" / "data" / "metadata_hash_golden.txt").read_text(encoding="utf-8")
    assert made == committed, "tests/data/metadata_hash_golden.txt is stale: regenerate it with HashVectors"


def topic_id(broker, topic: str) -> str:
    res = run_tool("kafka-topics", "--describe", "--topic", topic, bootstrap=broker).check()
    m = re.search(r"TopicId:\s*(\S+)", res.stdout)
    assert m, res.stdout
    return m.group(1)


def recorded_hashes(broker, group: str) -> list[int]:
    """MetadataHash of every ConsumerGroupMetadata (type 3) record of `group`, in log order."""
    dirs = sorted(broker.data_dir.glob("__consumer_offsets-*"))
    assert dirs, f"no __consumer_offsets in {broker.data_dir}"
    partition = partition_for(group, len(dirs))
    segments = sorted(str(p) for p in (broker.data_dir / f"__consumer_offsets-{partition}").glob("*.log"))
    res = run_tool("kafka-dump-log", "--offsets-decoder", "--print-data-log", "--files", ",".join(segments),
                   timeout=60).check()
    hashes = []
    for line in res.lines:
        m = re.search(r"key: (\{.*\}) payload: (\{.*\}|null)\s*$", line)
        if not m:
            continue
        key = json.loads(m.group(1))
        if str(key.get("type")) != "3" or key["data"].get("groupId") != group or m.group(2) == "null":
            continue
        hashes.append(int(json.loads(m.group(2))["data"].get("metadataHash", 0)))  # a tagged field: absent when 0
    return hashes


@pytest.mark.timeout(180)
def test_the_recorded_metadata_hash_is_kafkas_and_follows_the_topics_partitions(broker, topic_name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic_name, num_partitions=PARTITIONS, replication_factor=1)])[topic_name].result(30)
    group = f"g-{topic_name}"
    member = Member(broker, group, topic_name, "member-1")
    try:
        def owns(n: int):
            def check():
                member.poll()
                return member.owned == set(range(n))
            return check
        wait_for("the member to own every partition", owns(PARTITIONS), 60)
        run_tool("kafka-topics", "--alter", "--topic", topic_name, "--partitions", str(GROWN),
                 bootstrap=broker).check()
        wait_for("the member to own the new partitions too", owns(GROWN), 60)
    finally:
        member.close(commit=False)

    tid = topic_id(broker, topic_name)
    want = []
    for n in (PARTITIONS, GROWN):
        r = java("group", f"{topic_name}:{tid}:{n}")
        assert r.returncode == 0, r.stderr
        want.append(int(r.stdout.strip()))
    assert 0 not in want and want[0] != want[1]
    hashes = []

    def recorded():
        hashes[:] = recorded_hashes(broker, group)
        # A join the coordinator saw before the new topic reached its metadata image records an
        # epoch with no subscribed topic (hash 0), then bumps it once the topic arrives: Kafka's
        # coordinator learns of a new topic on its own schedule (seen once in `make test`).
        while len(hashes) > 1 and hashes[0] == 0:
            hashes.pop(0)
        return len(hashes) >= 3  # the join's epoch, the new partitions', the departure's
    wait_for("the group's epoch records in __consumer_offsets", recorded, 30)
    # The join's epoch carries the topic's hash, the new partitions bump it with the new hash,
    # and the departure's carries none: no member subscribes.
    assert hashes == [want[0], want[1], 0]
