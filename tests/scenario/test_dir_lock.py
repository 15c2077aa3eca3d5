"""One broker per data directory: the `<log.dir>/.lock` fcntl lock, as Kafka's LogManager takes it."""
from __future__ import annotations

import subprocess

from confluent_kafka import Consumer, Producer, TopicPartition

from harness.paths import weir_bin
from harness.ports import free_port


def _second_weir_on(data_dir) -> subprocess.CompletedProcess:
    listener = f"PLAINTEXT://127.0.0.1:{free_port()}"
    return subprocess.run(
        [str(weir_bin()), "serve", "--set", f"listeners={listener}", "--set", f"advertised.listeners={listener}",
         "--set", f"log.dirs={data_dir}"],
        capture_output=True, text=True, timeout=60)


def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for v in values:
        p.produce(topic, value=v, partition=0)
    assert p.flush(30) == 0


def _read(bootstrap: str, topic: str, count: int) -> list[bytes]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "lock-reader", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    out: list[bytes] = []
    while len(out) < count:
        m = c.poll(10)
        assert m is not None, f"read {len(out)} of {count}"
        assert m.error() is None, m.error()
        out.append(m.value())
    c.close()
    return out


def test_second_weir_on_a_locked_dir_exits_1_and_the_first_loses_nothing(weir, topic_name):
    before = [f"before-{i}".encode() for i in range(50)]
    _produce(weir.bootstrap, topic_name, before)

    second = _second_weir_on(weir.data_dir)
    output = second.stdout + second.stderr
    assert second.returncode == 1, output
    assert str(weir.data_dir / ".lock") in output, output
    assert "in use by another process" in output, output

    after = [f"after-{i}".encode() for i in range(50)]
    _produce(weir.bootstrap, topic_name, after)
    weir.restart()
    assert _read(weir.bootstrap, topic_name, 100) == before + after


def test_weir_refuses_a_dir_a_running_kafka_holds(kafka):
    second = _second_weir_on(kafka.data_dir)
    output = second.stdout + second.stderr
    assert second.returncode == 1, output
    assert str(kafka.data_dir / ".lock") in output, output
