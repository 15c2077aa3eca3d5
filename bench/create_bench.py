#!/usr/bin/env python3
"""Creating many partitions at once: one CreateTopics of one N-partition topic (RF=1) until
Metadata lists every partition with a leader, weir against Apache Kafka in one run.

    .cache/venv/bin/python bench/create_bench.py                      # 1,000 x3 and 10,000 x1
    .cache/venv/bin/python bench/create_bench.py --counts 1000 --repeats 5 --kinds weir

A fresh broker per creation (its own data directory), weir then Kafka, alternating per
repetition; prints each time, then the median per count and kind and the ratio weir/Kafka.
The steps are bench/scale_bench.py's create_partitions and wait_led (its "create N partitions
until all led" row). Set WEIR_BIN to time another weir binary.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_bench import create_partitions, make_broker, wait_led  # noqa: E402


def one(kind: str, n: int, workdir: Path) -> float:
    b = make_broker(kind, workdir)
    b.start_timeout = 1800
    b.stop_timeout = 1800
    b.start()
    try:
        prefix = f"create-{n}-"
        t0 = time.monotonic()
        create_partitions(b, prefix, n)
        wait_led(b, prefix, n, timeout=1800)
        return time.monotonic() - t0
    finally:
        b.stop()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--counts", default="1000,10000", help="comma-separated partition counts")
    ap.add_argument("--repeats", default="3,1", help="repetitions per count (comma-separated, one per count)")
    ap.add_argument("--kinds", default="weir,kafka")
    ap.add_argument("--json", type=Path, default=None, help="write the results here too")
    cfg = ap.parse_args(argv)
    counts = [int(x) for x in cfg.counts.split(",")]
    repeats = [int(x) for x in cfg.repeats.split(",")]
    repeats += [repeats[-1]] * (len(counts) - len(repeats))
    kinds = cfg.kinds.split(",")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    res = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "load_start": os.getloadavg(), "times": {}}
    with tempfile.TemporaryDirectory(prefix="weir-create-") as tmp:
        for n, reps in zip(counts, repeats):
            res["times"][str(n)] = {k: [] for k in kinds}
            for r in range(reps):
                for kind in kinds:
                    s = one(kind, n, Path(tmp) / f"{kind}-{n}-{r}")
                    res["times"][str(n)][kind].append(s)
                    print(f"{kind} {n}: {s:.3f} s", flush=True)
    res["load_end"] = os.getloadavg()
    for n, by_kind in res["times"].items():
        med = {k: statistics.median(v) for k, v in by_kind.items() if v}
        line = ", ".join(f"{k} median {v:.3f} s of {len(by_kind[k])}" for k, v in med.items())
        if "weir" in med and "kafka" in med:
            line += f", ratio {med['weir'] / med['kafka']:.2f}"
        print(f"{n}: {line}")
    print(f"load {res['load_start']} -> {res['load_end']}")
    if cfg.json:
        cfg.json.write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
