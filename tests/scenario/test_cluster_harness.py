"""The cluster harness itself (harness/cluster.py, harness/proxy.py): a KRaft quorum of Kafka
controllers with brokers under it, and the link proxy.

The short test (in `make scenario`) keeps the harness from rotting: one controller, one Kafka
broker, checked over the wire. The slow ones cover 3 controllers, the dynamic quorum form and a
cut broker->controller link.
"""
from __future__ import annotations

import re
import socket
import threading

import pytest

from harness import wire
from harness.cluster import CONTROLLER_ID_BASE
from harness.proxy import LinkProxy


@pytest.mark.timeout(300)
def test_one_controller_one_kafka_broker(cluster_factory):
    cluster = cluster_factory(["kafka"], controllers=1)
    quorum = cluster.quorum
    assert quorum.leader_id() == CONTROLLER_ID_BASE
    dq = quorum.describe()
    assert dq.error_code == 0 and dq.partition_error_code == 0, dq
    assert [v.replica_id for v in dq.voters] == [CONTROLLER_ID_BASE]
    # The broker follows __cluster_metadata as an observer of the quorum.
    assert 1 in [o.replica_id for o in dq.observers], dq.observers
    assert dq.high_watermark > 0
    md = cluster.metadata()
    assert [(b.node_id, b.host, b.port) for b in md.brokers] == [(1, "127.0.0.1", cluster.broker(1).port)]
    assert md.controller_id >= 0  # Kafka reports a broker id here (KRaft hides the controllers)
    # Formatted with the features weir serves in a cluster today: metadata.version,
    # transaction.version and eligible.leader.replicas.version at Kafka 4.3.1's defaults.
    with wire.Connection("127.0.0.1", cluster.broker(1).port) as conn:
        av = conn.api_versions(3)
    assert av.error_code == 0
    finalized = {k: v for k, v in av.finalized_features.items() if v[1] > 0}
    assert set(finalized) == {"metadata.version", "transaction.version", "eligible.leader.replicas.version"}, \
        av.finalized_features
    assert finalized["eligible.leader.replicas.version"][1] == 1
    assert finalized["metadata.version"][1] == 30  # 4.3-IV0
    assert finalized["transaction.version"][1] == 2


def _echo_server():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=_echo, args=(c,), daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    return srv


def _echo(c):
    with c:
        while True:
            try:
                data = c.recv(4096)
            except OSError:
                return
            if not data:
                return
            c.sendall(data)


def test_link_proxy_forwards_cuts_heals_and_delays():
    srv = _echo_server()
    link = LinkProxy("127.0.0.1", srv.getsockname()[1], name="echo")
    try:
        with socket.create_connection(("127.0.0.1", link.port), timeout=5) as c:
            c.sendall(b"ping")
            assert c.recv(16) == b"ping"
            link.cut()
            assert c.recv(16) == b""  # dropped
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", link.port), timeout=5)
        link.heal()
        link.delay(150)
        import time
        with socket.create_connection(("127.0.0.1", link.port), timeout=5) as c:
            t0 = time.monotonic()
            c.sendall(b"slow")
            assert c.recv(16) == b"slow"
            assert time.monotonic() - t0 >= 0.3  # 150 ms each way
        assert link.connections == 2 and link.bytes_up == 8 and link.bytes_down == 8
    finally:
        link.close()
        srv.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", link.port), timeout=5)


@pytest.mark.slow
@pytest.mark.timeout(420)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static-voters", "dynamic-quorum"])
def test_three_controllers_survive_losing_the_leader(cluster_factory, dynamic):
    cluster = cluster_factory(["kafka"], controllers=3, dynamic=dynamic)
    quorum = cluster.quorum
    first = quorum.leader_id()
    assert first in quorum.ids
    dq = quorum.describe()
    assert sorted(v.replica_id for v in dq.voters) == quorum.ids
    # Kafka's own tool agrees with the harness's DescribeQuorum decoding.
    from harness import run_tool
    out = run_tool("kafka-run-class", "org.apache.kafka.tools.MetadataQuorumCommand",
                   "--bootstrap-controller", quorum.bootstrap_controllers, "describe", "--status",
                   timeout=90, check=True).stdout
    status = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    assert int(status["LeaderId"]) == first, out
    assert sorted(int(x) for x in re.findall(r'"id":\s*(\d+)', status["CurrentVoters"])) == quorum.ids, out
    assert 1 in [int(x) for x in re.findall(r'"id":\s*(\d+)', status["CurrentObservers"])], out
    quorum.kill(first)
    second = quorum.wait_leader(timeout=60, not_id=first)
    assert second != first
    # The broker still has a working controller: a topic can be created.
    run_tool("kafka-topics", "--create", "--topic", "after-failover", "--partitions", "1",
             "--replication-factor", "1", bootstrap=cluster.bootstrap, check=True)
    cluster.wait_topic("after-failover", 1, 1)
    quorum.restart(first)
    quorum.wait_leader(timeout=60)
    assert sorted(v.replica_id for v in quorum.describe().voters) == quorum.ids


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_cut_controller_link_fences_the_broker(cluster_factory):
    cluster = cluster_factory(["kafka", "kafka"], controllers=1, controller_proxies=True)
    link = cluster.controller_link(2, CONTROLLER_ID_BASE)
    assert link.connections >= 1 and link.bytes_up > 0
    link.cut()
    # Broker 2 can no longer heartbeat: the controller fences it (broker.session.timeout.ms) and
    # the other broker's Metadata stops listing it.
    from harness.cluster import wait_for
    wait_for("broker 2 fenced (absent from broker 1's Metadata)",
             lambda: 2 not in [b.node_id for b in cluster.metadata([], via=1).brokers], 60)
    link.heal()
    cluster.wait_brokers([1, 2], timeout=60)


def test_weir_broker_gets_the_kafka_broker_properties(tmp_path):
    """The contract with weir's broker mode (not runnable yet): a weir broker of a cluster gets
    the server.properties a Kafka broker gets, is formatted with `weir format -t <cluster id> -c
    <file> --feature ...` and served with `weir serve --config <file>`."""
    from harness.cluster import DEFAULT_FEATURES, Cluster

    cluster = Cluster(tmp_path, ["kafka", "weir"], controllers=3)
    try:
        kafka, weir = cluster.broker(1), cluster.broker(2)
        own = {"node.id", "listeners", "advertised.listeners", "log.dirs"}
        assert set(kafka.properties) == set(weir.properties)
        assert {k: v for k, v in kafka.properties.items() if k not in own} == \
            {k: v for k, v in weir.properties.items() if k not in own}
        assert weir.properties["process.roles"] == "broker"
        assert weir.properties["node.id"] == "2"
        assert weir.properties["controller.quorum.voters"] == cluster.quorum.voters
        assert weir.properties["listeners"] == f"PLAINTEXT://127.0.0.1:{weir.port}"
        assert weir.properties["log.dirs"] == str(weir.data_dir)
        features = [a for name, level in DEFAULT_FEATURES.items() for a in ("--feature", f"{name}={level}")]
        assert weir.format_argv() == [str(weir.binary), "format", "-t", cluster.cluster_id, "-c",
                                      str(weir.properties_path), *features]
        assert weir._argv() == [str(weir.binary), "serve", "--config", str(weir.properties_path)]
    finally:
        cluster.close()

    dynamic = Cluster(tmp_path / "dynamic", ["weir"], controllers=1, dynamic=True)
    props = dynamic.broker(1).properties
    assert "controller.quorum.voters" not in props
    assert props["controller.quorum.bootstrap.servers"] == dynamic.quorum.bootstrap_controllers
    dynamic.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_cut_replication_link_shrinks_the_isr(cluster_factory, topic_name):
    from confluent_kafka import Producer

    from harness import run_tool
    cluster = cluster_factory(["kafka", "kafka"], controllers=1, replication_proxies=True,
                              broker_overrides={"replica.lag.time.max.ms": 3000})
    run_tool("kafka-topics", "--create", "--topic", topic_name, "--partitions", "1",
             "--replication-factor", "2", bootstrap=cluster.bootstrap, check=True, timeout=90)
    cluster.wait_topic(topic_name, 1, 2)
    leader = cluster.leader_of(topic_name, 0)
    follower = next(b for b in (1, 2) if b != leader)
    link = cluster.replication_link(leader)
    from harness.cluster import wait_for
    wait_for(f"broker {follower} fetching through {link}",
             lambda: link.connections >= 1 and link.bytes_down > 0, 30)
    link.cut()
    p = Producer({"bootstrap.servers": cluster.broker(leader).bootstrap, "acks": 1})
    for i in range(10):
        p.produce(topic_name, value=f"cut-{i}".encode(), partition=0)
    assert p.flush(60) == 0
    # Clients still reach the leader directly; only the follower's fetches are cut, so it falls
    # behind and the leader drops it after replica.lag.time.max.ms.
    assert cluster.wait_isr(topic_name, 0, [leader], timeout=60) == [leader]
    assert follower in [b.node_id for b in cluster.metadata([]).brokers]  # not fenced
    link.heal()
    assert cluster.wait_isr(topic_name, 0, [1, 2], timeout=60) == [1, 2]
