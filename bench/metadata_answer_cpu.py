"""Broker CPU per Metadata v1 answer of every topic: one connection asks N times back to back.

    .cache/venv/bin/python bench/metadata_answer_cpu.py --workdir DIR [--count 200] [--binary build/weir]

DIR is a broker data directory's parent as `bench/scale_bench.py --workdir W` leaves it
(W/weir-100000 for --partitions 100000): the broker starts on DIR/weir, answers three requests
first (warm), then `--count` more; prints the broker's CPU seconds (utime + stime of the process,
from /proc) per answer and the mean round trip (request written to response read, not parsed).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

from harness import wire  # noqa: E402
from harness.weir import WeirBroker  # noqa: E402


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--binary", type=Path, default=None, help="default: $WEIR_BIN, else build/weir")
    cfg = ap.parse_args(argv)
    b = WeirBroker(cfg.workdir / "weir", binary=cfg.binary)
    b.start_timeout = 1800
    b.start()
    try:
        with wire.Connection(b.host, b.port, timeout=300) as c:
            for _ in range(3):
                c.metadata_v1()
            cpu0, t0 = cpu_s(b.pid), time.perf_counter()
            size = 0
            for _ in range(cfg.count):
                cid = c.correlation_id()
                c.send_raw(wire.encode_metadata_v1_request(cid, None))
                size = len(c.recv_frame())
            cpu1, t1 = cpu_s(b.pid), time.perf_counter()
        print(f"{b.binary}: {cfg.count} answers of {size:,} bytes: broker CPU {1000 * (cpu1 - cpu0) / cfg.count:.2f} "
              f"ms an answer, round trip {1000 * (t1 - t0) / cfg.count:.2f} ms (load average {os.getloadavg()[0]:.1f})")
    finally:
        b.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
