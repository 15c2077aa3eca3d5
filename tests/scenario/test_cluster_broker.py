"""weir brokers (process.roles=broker) under an Apache Kafka 4.3.1 KRaft controller, beside a
Kafka broker: the first increment of issue 15 (metadata, not yet data replication).

One controller, three brokers with replication factor 1 everywhere (topics, __consumer_offsets):
  - every broker registers and is unfenced; the controller's DescribeQuorum lists them as
    observers of __cluster_metadata; Metadata from any broker lists all three;
  - `kafka-topics --create` through a weir broker is carried to the controller, which spreads
    the partitions over all three brokers; every broker describes the same leaders;
  - records produced through one broker reach every partition's leader (the client routes by
    the metadata) and a consumer group bootstrapped on another weir broker reads them all and
    commits; `kafka-consumer-groups --describe` through the Kafka broker shows the offsets;
  - a topic config set with `kafka-configs --alter` through a weir broker is seen by the Kafka
    broker;
  - SIGTERM of a weir broker is a controlled shutdown: its partitions lose their leader
    (RF=1), and after its restart it leads them again with the records intact.

The same body runs with three Kafka brokers (the oracle, `slow`) and with two weir brokers and
one Kafka broker (in `make test`).
"""
from __future__ import annotations

import re
import secrets

import pytest
from confluent_kafka import Consumer, Producer

from harness import run_tool
from harness.cluster import wait_for

TOOL_ENV = {"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true"}
PARTITIONS = 6
RECORDS = 60


@pytest.fixture(params=[
    pytest.param(("weir", "weir", "kafka"), id="weir-weir-kafka"),
    pytest.param(("kafka", "kafka", "kafka"), id="kafka", marks=pytest.mark.slow),
])
def kinds(request):
    return list(request.param)


def leaders(cluster, topic: str, via: int) -> dict[int, int]:
    md = cluster.metadata([topic], via=via)
    (t,) = [t for t in md.topics if t.name == topic]
    assert t.error_code == 0, t
    return {p["partition"]: p["leader"] for p in t.partitions}


@pytest.mark.timeout(420)
def test_brokers_under_a_kafka_controller(cluster_factory, kinds):
    cluster = cluster_factory(kinds, controllers=1, replication=1,
                              broker_overrides={"auto.create.topics.enable": False})
    ids = sorted(cluster.brokers)
    weir_ids = [i for i in ids if kinds[i - 1] == "weir"] or ids[:2]
    first, second = weir_ids[0], weir_ids[1]

    # Registered, unfenced, following the metadata log.
    dq = cluster.quorum.describe()
    assert set(ids) <= {o.replica_id for o in dq.observers}, dq.observers
    for via in ids:
        md = cluster.metadata(via=via)
        assert sorted(b.node_id for b in md.brokers) == ids, (via, md.brokers)

    # CreateTopics through a weir broker goes to the controller.
    topic = "orders-" + secrets.token_hex(3)
    run_tool("kafka-topics", "--create", "--topic", topic, "--partitions", str(PARTITIONS),
             "--replication-factor", "1", bootstrap=cluster.broker(first), env=TOOL_ENV, timeout=90, check=True)
    cluster.wait_topic(topic, PARTITIONS, 1)
    placed = wait_for("every broker to describe the same leaders",
                      lambda: (lambda ls: ls[0] if all(x == ls[0] for x in ls) and -1 not in ls[0].values() else None)(
                          [leaders(cluster, topic, via) for via in ids]), timeout=30)
    assert set(placed.values()) == set(ids), placed  # spread over all three brokers

    # Produce through one broker; the client routes each partition to its leader.
    p = Producer({"bootstrap.servers": cluster.broker(first).bootstrap, "acks": "all", "enable.idempotence": True})
    acked = []

    def delivered(err, msg):
        assert err is None, err
        acked.append((msg.partition(), msg.offset(), msg.value()))

    for i in range(RECORDS):
        p.produce(topic, key=str(i).encode(), value=f"v{i}".encode(), partition=i % PARTITIONS, on_delivery=delivered)
    assert p.flush(60) == 0
    assert len(acked) == RECORDS

    # A group bootstrapped on another broker reads everything and commits.
    group = "g-" + secrets.token_hex(3)
    c = Consumer({"bootstrap.servers": cluster.broker(second).bootstrap, "group.id": group,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    got = []
    for _ in range(300):
        if len(got) >= RECORDS:
            break
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        got.append((m.partition(), m.offset(), m.value()))
    assert sorted(got) == sorted(acked)
    c.commit(asynchronous=False)
    c.close()
    other = [i for i in ids if i not in (first, second)][0]
    out = run_tool("kafka-consumer-groups", "--describe", "--group", group, bootstrap=cluster.broker(other),
                   env=TOOL_ENV, timeout=90, check=True).stdout
    lags = re.findall(rf"^{group}\s+{topic}\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", out, re.M)
    assert len(lags) == PARTITIONS, out
    assert all(cur == end and lag == "0" for _, cur, end, lag in lags), out
    assert sum(int(cur) for _, cur, _, _ in lags) == RECORDS

    # Topic configs are the controller's: altered through a weir broker, seen through another.
    run_tool("kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", topic,
             "--add-config", "retention.ms=3600000", bootstrap=cluster.broker(first), env=TOOL_ENV, timeout=90,
             check=True)
    wait_for("the config on the other broker", lambda: "retention.ms=3600000" in run_tool(
        "kafka-configs", "--describe", "--entity-type", "topics", "--entity-name", topic,
        bootstrap=cluster.broker(other), env=TOOL_ENV, timeout=90).stdout, timeout=60)

    # Controlled shutdown of a broker: its partitions have no leader while it is away (RF=1) ...
    mine = sorted(pi for pi, leader in placed.items() if leader == second)
    cluster.stop(second)
    wait_for("the stopped broker's partitions to lose their leader",
             lambda: all(leaders(cluster, topic, first)[pi] == -1 for pi in mine), timeout=60)
    # ... and it leads them again after a restart, with every record.
    cluster.restart(second)
    wait_for("the restarted broker to lead its partitions again",
             lambda: all(leaders(cluster, topic, first)[pi] == second for pi in mine), timeout=60)
    c = Consumer({"bootstrap.servers": cluster.broker(first).bootstrap, "group.id": group + "-again",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([topic])
    again = []
    for _ in range(300):
        if len(again) >= RECORDS:
            break
        m = c.poll(0.5)
        if m is None or m.error():
            continue
        again.append((m.partition(), m.offset(), m.value()))
    c.close()
    assert sorted(again) == sorted(acked)


def _serve(tmp_path, name: str, props: dict[str, str], cluster_id: str | None, timeout: float = 60):
    """Formats (unless cluster_id is None) and runs `weir serve` for a broker-only node that must
    fail to start; returns (exit code, output)."""
    import subprocess

    from harness.paths import weir_bin
    from harness.ports import free_port

    work = tmp_path / name
    work.mkdir()
    port = free_port()
    lines = {**props, "log.dirs": str(work / "data"), "listeners": f"PLAINTEXT://127.0.0.1:{port}",
             "initial.broker.registration.timeout.ms": "20000"}
    cfg = work / "server.properties"
    cfg.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
    if cluster_id is not None:
        subprocess.run([str(weir_bin()), "format", "-t", cluster_id, "-c", str(cfg)], check=True,
                       capture_output=True, timeout=30)
    p = subprocess.run([str(weir_bin()), "serve", "--config", str(cfg)], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout + p.stderr


@pytest.mark.timeout(300)
def test_a_broker_that_does_not_belong_to_the_quorum_does_not_start(cluster_factory, tmp_path):
    """Bad input at start-up, as Kafka refuses it: an unformatted log dir, and a log dir formatted
    for another cluster (the controller answers INCONSISTENT_CLUSTER_ID). Exit 1, with the reason."""
    cluster = cluster_factory(["weir"], controllers=1, replication=1)
    props = {
        "process.roles": "broker", "node.id": "7", "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        **cluster.quorum.quorum_props_for(),
    }
    rc, out = _serve(tmp_path, "unformatted", props, None)
    assert rc == 1, out
    assert "No readable meta.properties files found" in out, out

    rc, out = _serve(tmp_path, "stranger", props, "AAAAAAAAAAAAAAAAAAAAAA")
    assert rc == 1, out
    assert "INCONSISTENT_CLUSTER_ID" in out, out
    assert "did not register with the controller quorum" in out, out
    # The cluster's own broker is untouched.
    assert [b.node_id for b in cluster.metadata(via=1).brokers] == [1]
