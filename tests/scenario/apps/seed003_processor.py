"""Seed 003's order processor: reads `orders` partition 0, writes each order's total to an output
topic, and commits the order's offset, either plainly (group totals-plain) or inside a transaction
with send_offsets_to_transaction (group totals-tx, transactional.id order-totals-app).

    seed003_processor.py BOOTSTRAP plain|tx OUTPUT_TOPIC [CRASH_AT_ORDER]

With CRASH_AT_ORDER, after writing that order's result (and, in tx mode, adding its offset to the
transaction) the consumer is closed and the process exits at once, before the offset commit or
commit_transaction: the producer is never closed, as if the process had died. Without it, the
processor stops once it has processed every order the topic holds.
"""
import os
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition


RETRIABLE = {KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
             KafkaError.COORDINATOR_NOT_AVAILABLE}


def committed_offset(consumer, tp) -> int:
    # The group coordinator of a fresh broker may still be loading: retry what the client calls
    # retriable, as an application would.
    deadline = time.monotonic() + 60
    while True:
        try:
            return consumer.committed([tp], timeout=30)[0].offset
        except KafkaException as e:
            if e.args[0].code() not in RETRIABLE or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main() -> int:
    bootstrap, mode, out_topic = sys.argv[1:4]
    crash_at = sys.argv[4] if len(sys.argv) > 4 else None
    tx = mode == "tx"
    group = "totals-tx" if tx else "totals-plain"
    producer_conf = {"bootstrap.servers": bootstrap, "linger.ms": 0}
    if tx:
        producer_conf["transactional.id"] = "order-totals-app"
    producer = Producer(producer_conf)
    if tx:
        producer.init_transactions(120)
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed",
    })
    tp = TopicPartition("orders", 0)
    # The committed offset first (retried while the coordinator loads), then the assignment at
    # it: an assignment without an offset makes the client fetch it itself, and on a fresh
    # broker whose coordinator is still loading that fetch fails (NOT_COORDINATOR).
    committed = committed_offset(consumer, tp)
    next_offset = max(committed, 0)
    consumer.assign([TopicPartition("orders", 0, committed if committed >= 0 else OFFSET_BEGINNING)])
    while True:
        _, high = consumer.get_watermark_offsets(tp, timeout=30, cached=False)
        if next_offset >= high:
            break
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            raise RuntimeError(str(msg.error()))
        order_id, qty_price = msg.value().decode().split(" ")
        qty, price = (int(x) for x in qty_price.split("x"))
        result = f"{order_id} total={qty * price}"
        if tx:
            producer.begin_transaction()
        producer.produce(out_topic, value=result.encode())
        assert producer.flush(30) == 0
        print(f"offset {msg.offset()} {order_id} processed, wrote '{result}' to {out_topic}", flush=True)
        next_offset = msg.offset() + 1
        offsets = [TopicPartition("orders", 0, next_offset)]
        if tx:
            producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 30)
        if order_id == crash_at:
            print(f"{order_id}: exiting before the offset commit", flush=True)
            consumer.close()
            os._exit(0)
        if tx:
            producer.commit_transaction(30)
        else:
            consumer.commit(offsets=offsets, asynchronous=False)
    consumer.close()
    assert producer.flush(30) == 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
