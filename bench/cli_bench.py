"""Wall time of common admin commands: `weir` (a native client) against Kafka's CLI scripts (a
JVM per command) doing the same thing on the same broker (issue 17, "Measure").

For each broker kind (weir, then Kafka; each started here in a temporary directory), each
command runs --runs times, alternating weir and Kafka's tool; the median and the min of each are
printed with the ratio Kafka/weir, as JSON. Not part of `make test` or `make bench`; timings on a
shared machine are noise, so quote medians.

    .cache/venv/bin/python bench/cli_bench.py [--runs 5] [--kinds weir,kafka] [--records 200000]

Throughput (the issue's "at least the throughput of kafka-console-producer on the same input"):
--records lines of 100 bytes from one file, produced with `weir produce --file` and with
`kafka-console-producer` reading the same file on stdin (both with their defaults: acks=all,
idempotent) and with kcat (`-P -l`, librdkafka's defaults: acks=all, not idempotent) where it is
installed, each into a fresh topic of 3 partitions; then read back from the beginning with
`weir consume -n`, `kafka-console-consumer --max-messages` and `kcat -C -c`. Records/s over the whole command
(JVM start included for Kafka's tools).
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

from harness import procs, run_tool  # noqa: E402
from harness.kafka import KafkaBroker  # noqa: E402
from harness.paths import weir_bin  # noqa: E402
from harness.weir import WeirBroker  # noqa: E402


def timed(fn) -> float:
    t0 = time.monotonic()
    fn()
    return time.monotonic() - t0


def weir(*args, bootstrap: str) -> None:
    subprocess.run([str(weir_bin()), *map(str, args), "--bootstrap", bootstrap], check=True,
                   capture_output=True, text=True)


def kafka(tool: str, *args, bootstrap: str) -> None:
    run_tool(tool, *args, bootstrap=bootstrap).check()


def measure(bootstrap: str, runs: int) -> dict:
    # (name, weir command, Kafka command), each given a fresh topic name per run where it creates one.
    def cases(i: int):
        t_w, t_k = f"bench-w-{i}", f"bench-k-{i}"
        return [
            ("topic create",
             lambda: weir("topic", "create", t_w, "-p", 3, "-r", 1, bootstrap=bootstrap),
             lambda: kafka("kafka-topics", "--create", "--topic", t_k, "--partitions", 3, "--replication-factor", 1,
                           bootstrap=bootstrap)),
            ("topic describe",
             lambda: weir("topic", "describe", t_w, bootstrap=bootstrap),
             lambda: kafka("kafka-topics", "--describe", "--topic", t_k, bootstrap=bootstrap)),
            ("topic list",
             lambda: weir("topic", "list", bootstrap=bootstrap),
             lambda: kafka("kafka-topics", "--list", bootstrap=bootstrap)),
            ("api versions",
             lambda: weir("cluster", "api-versions", bootstrap=bootstrap),
             lambda: kafka("kafka-broker-api-versions", bootstrap=bootstrap)),
            ("topic delete",
             lambda: weir("topic", "delete", t_w, bootstrap=bootstrap),
             lambda: kafka("kafka-topics", "--delete", "--topic", t_k, bootstrap=bootstrap)),
        ]
    samples: dict[str, dict[str, list[float]]] = {}
    for i in range(runs):
        for name, w, k in cases(i):
            s = samples.setdefault(name, {"weir": [], "kafka_tool": []})
            s["weir"].append(timed(w))
            s["kafka_tool"].append(timed(k))
    out = {}
    for name, s in samples.items():
        mw, mk = statistics.median(s["weir"]), statistics.median(s["kafka_tool"])
        out[name] = {"weir_median_s": round(mw, 4), "weir_min_s": round(min(s["weir"]), 4),
                     "kafka_tool_median_s": round(mk, 4), "kafka_tool_min_s": round(min(s["kafka_tool"]), 4),
                     "kafka_tool_over_weir": round(mk / mw, 1)}
    return out


def throughput(bootstrap: str, runs: int, records: int, tmp: Path) -> dict:
    data = tmp / "records.txt"
    with open(data, "w") as f:
        for i in range(records):
            f.write(f"{i:010d} " + "x" * 89 + "\n")
    payload = data.read_bytes()
    samples: dict[str, dict[str, list[float]]] = {"produce": {"weir": [], "kafka_tool": [], "kcat": []},
                                                  "consume": {"weir": [], "kafka_tool": [], "kcat": []}}
    kcat = shutil.which("kcat")
    for i in range(runs):
        t_w, t_k, t_c = f"tput-w-{i}", f"tput-k-{i}", f"tput-c-{i}"
        for t in (t_w, t_k, t_c):
            weir("topic", "create", t, "-p", 3, "-r", 1, bootstrap=bootstrap)
        if kcat:  # librdkafka's defaults: acks=all, not idempotent
            samples["produce"]["kcat"].append(timed(lambda: subprocess.run(
                [kcat, "-P", "-b", bootstrap, "-t", t_c, "-l", str(data)], check=True, capture_output=True)))
            samples["consume"]["kcat"].append(timed(lambda: subprocess.run(
                [kcat, "-C", "-b", bootstrap, "-t", t_c, "-o", "beginning", "-c", str(records), "-e", "-q"],
                check=True, capture_output=True)))
        samples["produce"]["weir"].append(timed(lambda: weir("produce", t_w, "--file", data, bootstrap=bootstrap)))
        samples["produce"]["kafka_tool"].append(timed(lambda: run_tool(
            "kafka-console-producer", "--topic", t_k, bootstrap=bootstrap, input=payload, timeout=600).check()))
        samples["consume"]["weir"].append(timed(lambda: weir(
            "consume", t_k, "--from", "beginning", "-n", records, bootstrap=bootstrap)))
        samples["consume"]["kafka_tool"].append(timed(lambda: run_tool(
            "kafka-console-consumer", "--topic", t_w, "--from-beginning", "--max-messages", str(records),
            bootstrap=bootstrap, timeout=600).check()))
    out = {}
    for name, s in samples.items():
        mw, mk = statistics.median(s["weir"]), statistics.median(s["kafka_tool"])
        out[f"{name} {records} lines"] = {
            "weir_median_s": round(mw, 3), "kafka_tool_median_s": round(mk, 3),
            "weir_records_per_s": round(records / mw), "kafka_tool_records_per_s": round(records / mk),
            "weir_over_kafka_tool_rate": round(mk / mw, 2)}
        if s["kcat"]:
            mc = statistics.median(s["kcat"])
            out[f"{name} {records} lines"].update({"kcat_median_s": round(mc, 3), "kcat_records_per_s": round(records / mc),
                                                   "weir_over_kcat_rate": round(mc / mw, 2)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kinds", default="weir,kafka")
    ap.add_argument("--records", type=int, default=200000, help="lines for the throughput rows (0 skips them)")
    args = ap.parse_args()
    results = {}
    try:
        for kind in args.kinds.split(","):
            with tempfile.TemporaryDirectory(prefix=f"cli-bench-{kind}-") as tmp:
                b = WeirBroker(Path(tmp)) if kind == "weir" else KafkaBroker(Path(tmp))
                b.start()
                try:
                    results[f"broker={kind}"] = measure(b.bootstrap, args.runs)
                    if args.records:
                        results[f"broker={kind}"].update(throughput(b.bootstrap, args.runs, args.records, Path(tmp)))
                finally:
                    b.stop(check=False)
    finally:
        procs.kill_all(grace=10.0)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
