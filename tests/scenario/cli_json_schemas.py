"""The shape of what each `weir <command> --output json` prints: the keys and the type of each
value, one schema per command. test_cli_json.py runs every command against weir and against Kafka
and checks its output with `problems()`. Change a schema only together with the command's output
(and say so in the commit: scripts read these keys).

Schema language (small on purpose):
- a Python type (str, int, bool): a value of that type (an int is not a bool, a bool not an int);
- Nullable(s): null or s;
- {"key": s, "key?": s}: an object with exactly these keys (a trailing ? marks an optional one);
- [s]: an array whose every element is s;
- MapOf(s): an object with any keys whose values are all s.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Nullable:
    schema: Any


@dataclass(frozen=True)
class MapOf:
    schema: Any


def problems(value: Any, schema: Any, where: str = "$") -> list[str]:
    """Every way `value` departs from `schema`, as "path: what" strings (empty: it conforms)."""
    if isinstance(schema, Nullable):
        return [] if value is None else problems(value, schema.schema, where)
    if schema is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected an integer, got {value!r}"]
    if schema in (str, bool):
        return [] if isinstance(value, schema) else [f"{where}: expected {schema.__name__}, got {value!r}"]
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [f"{where}: expected an array, got {value!r}"]
        return [p for i, v in enumerate(value) for p in problems(v, schema[0], f"{where}[{i}]")]
    if isinstance(schema, MapOf):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {value!r}"]
        return [p for k, v in value.items() for p in problems(v, schema.schema, f"{where}.{k}")]
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {value!r}"]
        out = []
        known = {k.rstrip("?") for k in schema}
        for key, sub in schema.items():
            name = key.rstrip("?")
            if name in value:
                out += problems(value[name], sub, f"{where}.{name}")
            elif not key.endswith("?"):
                out.append(f"{where}: missing key {name!r}")
        out += [f"{where}: unexpected key {k!r}" for k in value if k not in known]
        return out
    raise TypeError(f"not a schema: {schema!r}")


CONFIG = {"name": str, "value": Nullable(str), "source": str, "sensitive": bool}

# A failed command (exit 1) prints this instead of its own output.
ERROR = {"error": {"message": str, "kind?": str, "code?": int, "name?": str}}

SCHEMAS: dict[str, Any] = {
    "topic list": {"topics": [{"name": str, "partitions": int, "replication_factor": int, "internal": bool}]},
    "topic create": {"topic": str, "created": bool, "partitions?": int, "replication_factor?": int},
    "topic describe": {"topics": [{
        "name": str, "topic_id": str, "internal": bool, "replication_factor": int,
        "partitions": [{"partition": int, "leader": int, "leader_epoch": int, "replicas": [int], "isr": [int],
                        "offline_replicas": [int], "log_start_offset": int, "log_end_offset": int}],
        "configs": [CONFIG]}]},
    "topic add-partitions": {"topic": str, "partitions": int},
    "topic alter-config": {"topic": str, "set": [str], "deleted": [str]},
    "topic delete": {"topics": [{"name": str, "deleted": bool}]},
    "produce": {"topic": str, "records": int,
                "partitions": [{"partition": int, "records": int, "first_offset": int, "last_offset": int}]},
    # One object per line, per record.
    "consume": {"topic": str, "partition": int, "offset": int, "timestamp": int, "key": Nullable(str),
                "value": Nullable(str), "headers": MapOf(Nullable(str))},
    "cluster info": {"cluster_id": Nullable(str), "controller": int,
                     "brokers": [{"id": int, "host": str, "port": int, "rack": Nullable(str)}]},
    "cluster api-versions": {"brokers": [{"id": int, "apis": [
        {"name": str, "key": int, "min": int, "max": int, "used": Nullable(int)}]}]},
    "cluster config get": {"resource": str, "name": str, "configs": [CONFIG]},
    "cluster config set": {"resource": str, "name": str, "changed": bool},
    "group list": {"groups": [str]},
    "group describe": {"group": str, "type": str, "state": str, "protocol": str, "members": int, "total_lag": int,
                       "partitions": [{"topic": str, "partition": int, "current_offset": Nullable(int),
                                       "log_end_offset": Nullable(int), "lag": Nullable(int),
                                       "consumer_id": Nullable(str), "host": Nullable(str),
                                       "client_id": Nullable(str)}]},
    "group describe --members": {"group": str, "type": str, "state": str, "members": [{
        "consumer_id": str, "group_instance_id": Nullable(str), "host": str, "client_id": str,
        "partitions": [{"topic": str, "partition": int}], "member_epoch": Nullable(int),
        "target_partitions": Nullable([{"topic": str, "partition": int}])}]},
    "group describe --state": {"group": str, "type": str, "coordinator": {"id": int, "host": str, "port": int},
                               "assignment_strategy": str, "state": str, "group_epoch": Nullable(int),
                               "target_assignment_epoch": Nullable(int), "members": int},
    "group seek": {"executed": bool, "groups": [{
        "group": str, "offsets": [{"topic": str, "partition": int, "new_offset": int}], "error": Nullable(str)}]},
    "group delete-offsets": {"group": str, "partitions": [{"topic": str, "partition": Nullable(int),
                                                           "error": Nullable(str)}]},
    "group delete": {"deleted": [str], "failed": [{"group": str, "error": str}]},
    "txn list": {"transactions": [{"transactional_id": str, "coordinator": int, "producer_id": int, "state": str}]},
    "txn describe": {"coordinator": int, "transactional_id": str, "producer_id": int, "producer_epoch": int,
                     "state": str, "timeout_ms": int, "start_time_ms": Nullable(int), "partitions": [str]},
    "txn producers": {"producers": [{"producer_id": int, "producer_epoch": int, "coordinator_epoch": int,
                                     "last_sequence": int, "last_timestamp": int,
                                     "current_transaction_start_offset": Nullable(int)}]},
    "txn find-hanging": {"hanging": [{"topic": str, "partition": int, "producer_id": int, "producer_epoch": int,
                                      "coordinator_epoch": int, "start_offset": int, "last_timestamp": int}]},
    "txn abort": {"aborted": {"topic": str, "partition": int, "producer_id": int, "producer_epoch": int,
                              "coordinator_epoch": int}},
}
