#!/usr/bin/env python3
"""Records what Apache Kafka 4.3.1 writes to __cluster_metadata, for metadata_snapshot_test.

Runs a single-node Kafka 4.3.1 (tests/scenario/harness/kafka.py, with StandardAuthorizer and a
snapshot after every few bytes of metadata), does things that write every record type the CLI can
trigger (topics, partitions, topic/broker configs, client quotas, SCRAM users, ACLs, producer ids,
a controlled shutdown and a restart), stops Kafka and copies into kafka-4.3.1-cluster-metadata/:

  00000000000000000000.log   the __cluster_metadata-0 segment
  <offset>-<epoch>.checkpoint the newest snapshot
  expected-image.txt          the state the Admin API reports at the end (canonical lines, see
                              image_lines() in metadata_snapshot_test.cpp)
  dump-log.txt                kafka-dump-log --cluster-metadata-decoder of the segment

Usage (from the repository root, after scripts/setup-kafka.sh):
  .cache/venv/bin/python tests/unit/metadata/data/record_kafka_cluster_metadata.py
"""
from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

from harness.cli import run_tool  # noqa: E402
from harness.kafka import KafkaBroker  # noqa: E402

OUT = Path(__file__).resolve().parent / "kafka-4.3.1-cluster-metadata"

# Kafka's enum ids (org.apache.kafka.common.resource / acl).
RESOURCE_TYPES = {"TOPIC": 2, "GROUP": 3, "CLUSTER": 4, "TRANSACTIONAL_ID": 5, "DELEGATION_TOKEN": 6, "USER": 7}
PATTERN_TYPES = {"LITERAL": 3, "PREFIXED": 4}
OPERATIONS = {"ALL": 2, "READ": 3, "WRITE": 4, "CREATE": 5, "DELETE": 6, "ALTER": 7, "DESCRIBE": 8,
              "CLUSTER_ACTION": 9, "DESCRIBE_CONFIGS": 10, "ALTER_CONFIGS": 11, "IDEMPOTENT_WRITE": 12}
PERMISSIONS = {"DENY": 2, "ALLOW": 3}
SCRAM = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}


def tool(name: str, *args, broker=None, input=None):
    r = run_tool(name, *args, bootstrap=broker, input=input, timeout=120)
    if r.rc != 0:
        raise SystemExit(f"{name} {' '.join(map(str, args))} failed ({r.rc}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def acl(broker, *args):
    return tool("kafka-run-class", "org.apache.kafka.tools.AclCommand", "--bootstrap-server", broker.bootstrap, *args)


def configs(broker, *args):
    return tool("kafka-configs", *args, broker=broker)


def act(k: KafkaBroker) -> None:
    tool("kafka-topics", "--create", "--topic", "orders", "--partitions", "3", broker=k)
    tool("kafka-topics", "--create", "--topic", "short.lived", "--partitions", "1", broker=k)
    tool("kafka-topics", "--create", "--topic", "payments", "--partitions", "1",
         "--config", "cleanup.policy=compact", "--config", "retention.ms=3600000", broker=k)
    tool("kafka-topics", "--alter", "--topic", "orders", "--partitions", "5", broker=k)
    tool("kafka-topics", "--delete", "--topic", "short.lived", broker=k)
    configs(k, "--alter", "--entity-type", "topics", "--entity-name", "orders",
            "--add-config", "retention.ms=1000,segment.bytes=1048576")
    configs(k, "--alter", "--entity-type", "topics", "--entity-name", "orders", "--delete-config", "segment.bytes")
    configs(k, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "log.cleaner.threads=2")
    configs(k, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "log.retention.ms=7200000")
    configs(k, "--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config",
            "producer_byte_rate=1024,consumer_byte_rate=4096")
    configs(k, "--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "consumer_byte_rate")
    configs(k, "--alter", "--entity-type", "clients", "--entity-default", "--add-config", "request_percentage=50")
    configs(k, "--alter", "--entity-type", "users", "--entity-name", "bob", "--entity-type", "clients",
            "--entity-name", "app-1", "--add-config", "producer_byte_rate=2048")
    configs(k, "--alter", "--entity-type", "ips", "--entity-name", "127.0.0.1", "--add-config",
            "connection_creation_rate=10")
    configs(k, "--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config",
            "SCRAM-SHA-256=[iterations=8192,password=alice-secret]")
    for mechanism in ("SCRAM-SHA-512", "SCRAM-SHA-256"):  # one credential of a user per request
        configs(k, "--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config",
                f"{mechanism}=[password=bob-secret]")
    configs(k, "--alter", "--entity-type", "users", "--entity-name", "bob", "--delete-config", "SCRAM-SHA-512")
    acl(k, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe",
        "--topic", "orders")
    acl(k, "--add", "--deny-principal", "User:mallory", "--operation", "All", "--topic", "pay",
        "--resource-pattern-type", "prefixed")
    acl(k, "--add", "--allow-principal", "User:bob", "--operation", "Read", "--group", "g1")
    acl(k, "--remove", "--force", "--allow-principal", "User:bob", "--operation", "Read", "--group", "g1")
    # An idempotent producer: AllocateProducerIds -> ProducerIdsRecord.
    tool("kafka-console-producer", "--topic", "orders", broker=k, input="one\ntwo\n")


def expected_lines(k: KafkaBroker) -> list[str]:
    lines: list[str] = []
    out = tool("kafka-topics", "--describe", "--exclude-internal", broker=k)
    for line in out.splitlines():
        m = re.match(r"Topic: (\S+)\s+TopicId: (\S+)\s+PartitionCount: (\d+)", line)
        if m:
            lines.append(f"topic {m[1]} {m[2]} partitions={m[3]}")
            continue
        m = re.match(r"\s*Topic: (\S+)\s+Partition: (\d+)\s+Leader: (\S+)\s+Replicas: (\S*)\s+Isr: (\S*)", line.strip())
        if m:
            leader = "-1" if m[3] == "none" else m[3]
            lines.append(f"partition {m[1]} {m[2]} leader={leader} replicas={m[4]} isr={m[5]}")
    for topic in sorted({line.split()[1] for line in lines if line.startswith("topic ")}):
        out = configs(k, "--describe", "--entity-type", "topics", "--entity-name", topic)
        for m in re.finditer(r"^\s+(\S+)=(\S*) sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG", out, re.M):
            lines.append(f"config 2 {topic} {m[1]}={m[2]}")
    for name, label in (("1", "1"), (None, "")):
        args = ["--entity-name", name] if name else ["--entity-default"]
        out = configs(k, "--describe", "--entity-type", "brokers", *args)
        source = "DYNAMIC_BROKER_CONFIG" if name else "DYNAMIC_DEFAULT_BROKER_CONFIG"
        for m in re.finditer(rf"^\s+(\S+)=(\S*) sensitive=false synonyms=\{{{source}", out, re.M):
            lines.append(f"config 4 {label} {m[1]}={m[2]}")
    # Quotas: "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0"
    quota_queries = [
        (["--entity-type", "users", "--entity-name", "alice"], "user=alice"),
        (["--entity-type", "clients", "--entity-default"], "client-id=<default>"),
        (["--entity-type", "users", "--entity-name", "bob", "--entity-type", "clients", "--entity-name", "app-1"],
         "client-id=app-1,user=bob"),
        (["--entity-type", "ips", "--entity-name", "127.0.0.1"], "ip=127.0.0.1"),
    ]
    for args, entity in quota_queries:
        out = configs(k, "--describe", *args)
        m = re.search(r"are (.+)$", out.strip(), re.M)
        if m:
            for kv in m[1].split(","):
                key, value = kv.strip().split("=")
                lines.append(f"quota {entity} {key}={float(value):g}")
    # SCRAM: "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192"
    out = configs(k, "--describe", "--entity-type", "users")
    for m in re.finditer(r"SCRAM credential configs for user-principal '([^']+)' are (.+)$", out, re.M):
        for part in m[2].split(", "):
            mech, _, iterations = part.partition("=iterations=")
            lines.append(f"scram {m[1]} {SCRAM[mech.strip()]} iterations={iterations.strip()}")
    out = acl(k, "--list")
    resource = None
    for line in out.splitlines():
        m = re.search(r"ResourcePattern\(resourceType=(\w+), name=([^,]+), patternType=(\w+)\)", line)
        if m:
            resource = (RESOURCE_TYPES[m[1]], m[2], PATTERN_TYPES[m[3]])
            continue
        m = re.search(r"\(principal=([^,]+), host=([^,]+), operation=(\w+), permissionType=(\w+)\)", line)
        if m and resource:
            lines.append(f"acl {resource[0]} {resource[1]} {resource[2]} {m[1]} {m[2]} "
                         f"{OPERATIONS[m[3]]} {PERMISSIONS[m[4]]}")
    return sorted(lines)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="weir-kafka-md-") as tmp:
        overrides = {
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:ANONYMOUS",
            "allow.everyone.if.no.acl.found": "true",
            "metadata.log.max.record.bytes.between.snapshots": "2000",
        }
        k = KafkaBroker(Path(tmp) / "kafka", overrides=overrides)
        k.start()
        try:
            act(k)
            k.stop(check=True)  # a controlled shutdown
            k.start()  # re-registers with a new epoch; the controller unfences it
            tool("kafka-topics", "--create", "--topic", "after.restart", "--partitions", "2", broker=k)
            configs(k, "--alter", "--entity-type", "topics", "--entity-name", "after.restart",
                    "--add-config", "max.message.bytes=2000000")
            expected = expected_lines(k)
        finally:
            if k.running:
                k.stop(check=True)
        md = k.data_dir / "__cluster_metadata-0"
        if OUT.exists():
            shutil.rmtree(OUT)
        OUT.mkdir()
        shutil.copy(md / "00000000000000000000.log", OUT)
        checkpoints = sorted(md.glob("*.checkpoint"))
        if not checkpoints:
            raise SystemExit("Kafka wrote no snapshot")
        shutil.copy(checkpoints[-1], OUT)
        (OUT / "expected-image.txt").write_text("\n".join(expected) + "\n")
        dump = tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(OUT / "00000000000000000000.log"))
        (OUT / "dump-log.txt").write_text(dump.replace(str(OUT) + "/", ""))
        print(f"wrote {OUT}: {sorted(p.name for p in OUT.iterdir())}")


if __name__ == "__main__":
    main()
