"""Where things live: the repository, Kafka's wrappers and classpath, the weir binary."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TESTS = ROOT / "tests"
DATA = TESTS / "data"
KAFKA_DIR = TESTS / "kafka"
KAFKA_BIN = KAFKA_DIR / "bin"


def kafka_classpath_file() -> Path:
    """The resolved classpath of Apache Kafka (scripts/setup-kafka.sh writes it)."""
    return Path(os.environ.get("WEIR_KAFKA_CP", ROOT / ".cache" / "kafka" / "cp.txt"))


def kafka_tool(name: str) -> Path:
    """Path of one of the tests/kafka/bin wrappers, e.g. kafka_tool("kafka-topics")."""
    path = KAFKA_BIN / name
    if not path.is_file():
        raise FileNotFoundError(f"no Kafka tool wrapper {path}")
    return path


def weir_bin() -> Path:
    """The weir binary: $WEIR_BIN, else build/weir (what the Makefile builds)."""
    return Path(os.environ.get("WEIR_BIN", ROOT / "build" / "weir"))
