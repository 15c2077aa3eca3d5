"""The scenario harness: brokers (weir and a real Apache Kafka) on free ports, Kafka's CLI tools,
a raw wire client, and output normalisation for differential tests. Fixtures live in
tests/scenario/conftest.py; this package holds the machinery so tests can import helpers."""
from .broker import BrokerProcess, BrokerStartError
from .cli import ToolResult, run_tool
from .kafka import KafkaBroker, KafkaFactory, new_cluster_id
from .normalize import normalise, parse_broker_api_versions, parse_table
from .ports import free_port
from .weir import WeirBroker, WeirFactory

__all__ = [
    "BrokerProcess", "BrokerStartError", "KafkaBroker", "KafkaFactory", "ToolResult", "WeirBroker",
    "WeirFactory", "free_port", "new_cluster_id", "normalise", "parse_broker_api_versions",
    "parse_table", "run_tool",
]
