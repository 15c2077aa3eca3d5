"""Seed 003's reader: prints every record of partition 0 of a topic from offset 0 at an isolation
level, as `offset N: VALUE` lines, stopping at the end of the partition.

    seed003_read.py BOOTSTRAP TOPIC read_committed|read_uncommitted
"""
import sys

from confluent_kafka import Consumer, KafkaError, TopicPartition


def main() -> int:
    bootstrap, topic, isolation = sys.argv[1:4]
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "seed003-reader",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": isolation,
    })
    consumer.assign([TopicPartition(topic, 0, 0)])
    print(f"[{isolation}]")
    while True:
        msg = consumer.poll(30.0)
        if msg is None:
            raise RuntimeError("no record and no end of partition within 30 s")
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                break
            raise RuntimeError(str(msg.error()))
        print(f"  offset {msg.offset()}: {msg.value().decode()}")
    consumer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
