"""Admin requests forwarded to the KRaft controller in an Envelope (issue 15), as Kafka's brokers
forward them (ForwardingManager): the controller runs each as the client's request, with the
client's id, correlation id and principal. Kafka's own request log is the witness: with
`kafka.request.logger` at DEBUG (WEIR_KAFKA_REQUEST_LOG_LEVEL, tests/kafka/log4j2-tools.properties)
the controller logs every completed request as JSON, a forwarded one with "isForwarded":true and
the inner request's header.

Parametrized by broker kind: "weir" (in `make test`) and "kafka" (the oracle; `slow`).

  - test_admin_requests_reach_the_controller_as_the_clients: an AdminClient with client.id
    `forwarding-probe`, bootstrapped at broker 2 only, creates a topic, adds a partition, sets a
    topic config (IncrementalAlterConfigs) and deletes the topic. Each of the four requests shows
    up in the controller's request log as forwarded, with the probe's client id and principal
    User:ANONYMOUS.
"""
from __future__ import annotations

import json

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigEntry, NewPartitions, NewTopic
from confluent_kafka.admin import AlterConfigOpType

from harness.cluster import wait_for

pytestmark = [pytest.mark.kafka]

CLIENT_ID = "forwarding-probe"
FORWARDED_APIS = ("CREATE_TOPICS", "CREATE_PARTITIONS", "INCREMENTAL_ALTER_CONFIGS", "DELETE_TOPICS")


@pytest.fixture(params=[
    pytest.param("kafka", id="kafka", marks=pytest.mark.slow),
    pytest.param("weir", id="weir"),
])
def kind(request):
    return request.param


def forwarded_requests(log_path) -> list[dict]:
    """The controller's request-log entries of forwarded requests."""
    out = []
    for line in log_path.read_text(errors="replace").splitlines():
        at = line.find("Completed request:")
        if at < 0:
            continue
        text = line[at + len("Completed request:"):]
        end = text.rfind("}")
        try:
            entry = json.loads(text[:end + 1])
        except json.JSONDecodeError:
            continue
        if entry.get("isForwarded"):
            out.append(entry)
    return out


@pytest.mark.timeout(300)
def test_admin_requests_reach_the_controller_as_the_clients(cluster_factory, kind, topic_name, monkeypatch):
    monkeypatch.setenv("WEIR_KAFKA_REQUEST_LOG_LEVEL", "DEBUG")
    cluster = cluster_factory([kind] * 3, controllers=1,
                              broker_overrides={"auto.create.topics.enable": False})
    admin = AdminClient({"bootstrap.servers": cluster.broker(2).bootstrap, "client.id": CLIENT_ID})
    admin.create_topics([NewTopic(topic_name, 1, 3)], request_timeout=60)[topic_name].result(90)
    cluster.wait_topic(topic_name, partitions=1, replicas=3)
    admin.create_partitions([NewPartitions(topic_name, 2)], request_timeout=60)[topic_name].result(90)
    resource = ConfigResource("TOPIC", topic_name, incremental_configs=[
        ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET)])
    for f in admin.incremental_alter_configs([resource]).values():
        f.result(90)
    admin.delete_topics([topic_name], request_timeout=60)[topic_name].result(90)

    controller_log = next(iter(cluster.quorum.controllers.values())).log_path

    def seen():
        entries = [e for e in forwarded_requests(controller_log)
                   if e["requestHeader"].get("clientId") == CLIENT_ID]
        apis = {e["requestHeader"]["requestApiKeyName"] for e in entries}
        return entries if set(FORWARDED_APIS) <= apis else None
    entries = wait_for("the forwarded admin requests in the controller's request log", seen, 60,
                       describe=lambda: [e["requestHeader"] for e in forwarded_requests(controller_log)])
    for e in entries:
        assert e["principal"] == "User:ANONYMOUS", e
        assert e["requestHeader"]["correlationId"] >= 0, e
