"""A transactional consume-process-produce worker for the exactly-once checker (test_eos_checker.py).

    eos_worker.py BOOTSTRAP NAME IN_TOPIC OUT_TOPIC GROUP LOG_PATH SEED

Reads IN_TOPIC as a member of GROUP (read_committed), and for each batch it polls runs one
transaction (transactional.id eos-NAME): every input record is copied to the same partition of
OUT_TOPIC, its value tagged `TXN|SIZE|INDEX|INPUT`, key `PARTITION:OFFSET`, then the batch's
offsets are added with send_offsets_to_transaction and the transaction committed. LOG_PATH gets
one line per step, written before (`begin`) or after (`commit`, `abort`) it happens, so a checker
knows which transactions this worker saw commit or abort (a kill -9 may leave one unresolved).
After an abort the worker seeks back to its partitions' committed offsets.
"""
import os
import random
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition


def main() -> int:
    bootstrap, name, in_topic, out_topic, group, log_path, seed = sys.argv[1:8]
    rng = random.Random(int(seed))
    log = open(log_path, "a", buffering=1)
    producer = Producer({
        "bootstrap.servers": bootstrap,
        "transactional.id": f"eos-{name}",
        "transaction.timeout.ms": 10000,
        "linger.ms": 5,
    })
    producer.init_transactions(120)
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 3000,
        "heartbeat.interval.ms": 300,
    })
    consumer.subscribe([in_topic])
    seq = 0
    while True:
        msgs = [m for m in consumer.consume(num_messages=rng.randint(1, 12), timeout=0.5) if not m.error()]
        if not msgs:
            continue
        seq += 1
        txn = f"{name}.{os.getpid()}.{seq}"
        log.write(f"begin {txn} {len(msgs)}\n")
        try:
            producer.begin_transaction()
            for i, m in enumerate(msgs):
                producer.produce(out_topic, partition=m.partition(), key=f"{m.partition()}:{m.offset()}",
                                 value=f"{txn}|{len(msgs)}|{i}|{m.value().decode()}")
            next_offsets = {}
            for m in msgs:
                next_offsets[m.partition()] = max(next_offsets.get(m.partition(), 0), m.offset() + 1)
            time.sleep(rng.uniform(0, 0.03))  # the "processing"
            producer.send_offsets_to_transaction(
                [TopicPartition(in_topic, p, o) for p, o in sorted(next_offsets.items())],
                consumer.consumer_group_metadata(), 30)
            commit(producer)
            log.write(f"commit {txn}\n")
        except KafkaException as e:
            err = e.args[0]
            if not err.txn_requires_abort():
                log.write(f"fatal {txn} {err}\n")
                return 3
            producer.abort_transaction(30)
            log.write(f"abort {txn} {err.code()}\n")
            rewind(consumer)


def commit(producer) -> None:
    for _ in range(20):
        try:
            producer.commit_transaction(30)
            return
        except KafkaException as e:
            if not e.args[0].retriable():
                raise
    raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "commit kept failing"))


def rewind(consumer) -> None:
    """Back to the committed offsets of the assigned partitions (the aborted batch is redone)."""
    parts = consumer.assignment()
    if not parts:
        return
    for tp in consumer.committed(parts, timeout=30):
        consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))


if __name__ == "__main__":
    sys.exit(main())
