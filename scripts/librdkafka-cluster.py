#!/usr/bin/env python3
"""A 3-broker KRaft cluster for librdkafka's integration tests (scripts/run-librdkafka-tests.sh --cluster).

One Apache Kafka 4.3.1 controller and three brokers of one kind (Apache Kafka 4.3.1 or weir),
node ids 1-3, on 127.0.0.1, started through the scenario harness (tests/scenario/harness/cluster.py),
with the settings the upstream suite's trivup clusters have (tests/cluster_testing.py and
scenarios/*.json of librdkafka): num.partitions=4, default.replication.factor=3, offsets and
transaction state replicated 3 times, broker.rack=RACK<node id> with Kafka's
RackAwareReplicaSelector (0101's fetch-from-follower), Kafka's default 3 s
group.initial.rebalance.delay.ms and min.insync.replicas=1. The scenario "noautocreate" turns
auto.create.topics.enable off, "nodelay" sets the rebalance delay to 0 (as the single-broker run).

    .cache/venv/bin/python scripts/librdkafka-cluster.py --kind weir --dir DIR --ready-file FILE

Once every broker is registered and unfenced it writes the bootstrap servers (comma-separated) to
--ready-file, then watches the brokers until SIGTERM/SIGINT (or stdin's end with --stdin), and
stops the brokers, then the controller (graceful, bounded by the harness's stop timeouts). If a
broker exits by itself it says so on stderr, stops the rest and exits 3: the caller reports the
running test as CRASH. Every process it starts dies with it (PR_SET_PDEATHSIG via harness.procs).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

from harness.cluster import Cluster  # noqa: E402


class Stop(Exception):
    pass


def _raise_stop(signum, frame):
    raise Stop(signal.Signals(signum).name)


def broker_overrides(kind: str, scenario: str) -> dict[str, object]:
    o: dict[str, object] = {
        "num.partitions": 4,
        "default.replication.factor": 3,
        "min.insync.replicas": 1,
        # Kafka's default, as trivup's brokers (the harness's own clusters use 0).
        "group.initial.rebalance.delay.ms": 3000,
        "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector",
        "auto.create.topics.enable": "false" if scenario == "noautocreate" else "true",
    }
    if scenario == "nodelay":
        o["group.initial.rebalance.delay.ms"] = 0
    if kind == "weir":
        # As the single-broker run's `weir serve --dev`: no fsync before acknowledging acks=all
        # (Kafka does not fsync either).
        o["flush.on.acks.all"] = "false"
    return o


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=("weir", "kafka"), required=True)
    ap.add_argument("--dir", required=True, type=Path, help="data and log directory (created)")
    ap.add_argument("--scenario", default="default", choices=("default", "noautocreate", "nodelay"))
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--ready-file", required=True, type=Path)
    ap.add_argument("--start-timeout", type=float, default=240.0)
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGINT, _raise_stop)
    signal.signal(signal.SIGHUP, _raise_stop)

    args.dir = args.dir.resolve()  # the harness runs its tools from each node's directory
    args.ready_file = args.ready_file.resolve()
    args.dir.mkdir(parents=True, exist_ok=True)
    n = args.brokers
    cluster = Cluster(args.dir, [args.kind] * n, controllers=1, replication=min(3, n),
                      broker_overrides=broker_overrides(args.kind, args.scenario),
                      per_broker_overrides={i: {"broker.rack": f"RACK{i}"} for i in range(1, n + 1)})
    rc = 0
    t0 = time.monotonic()
    try:
        cluster.start(timeout=args.start_timeout)
        tmp = args.ready_file.with_suffix(".tmp")
        tmp.write_text(cluster.bootstrap + "\n")
        os.replace(tmp, args.ready_file)
        print(f"cluster ready in {time.monotonic() - t0:.1f}s: {n} {args.kind} brokers "
              f"{cluster.bootstrap} under controller {cluster.quorum.bootstrap_controllers} "
              f"(scenario {args.scenario}, logs under {args.dir})", flush=True)
        for b in cluster.brokers.values():
            print(f"  broker {b.node_id}: {b.bootstrap} pid {b.pid} log {b.log_path}", flush=True)
        while True:
            dead = [b for b in cluster.brokers.values() if not b.running]
            dead_c = [c for c in cluster.quorum.controllers.values() if not c.running]
            if dead or dead_c:
                for b in [*dead, *dead_c]:
                    code = b.proc.poll() if b.proc else None
                    print(f"CRASH: {b.kind} {b.node_id} ({b.bootstrap}) exited with code {code}; "
                          f"log {b.log_path}; last lines:\n{b.log_tail(30)}", file=sys.stderr, flush=True)
                rc = 3
                break
            time.sleep(0.5)
    except Stop as e:
        print(f"{e}: stopping the cluster", flush=True)
    except Exception as e:  # start-up failure: say why, clean up below
        print(f"cluster failed: {e}", file=sys.stderr, flush=True)
        rc = 2
    finally:
        # Further signals must not interrupt the orderly stop (the caller kills us if it hangs;
        # the children then die with us).
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        t1 = time.monotonic()
        try:
            cluster.finish()
        except AssertionError as e:
            print(f"unclean stop: {e}", file=sys.stderr, flush=True)
            rc = rc or 4
        finally:
            cluster.close()
        print(f"cluster stopped in {time.monotonic() - t1:.1f}s", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
