"""The benchmark harness (bench/run.py) still works: a --smoke run against weir and a real Kafka.

Asserts only correctness: both brokers answered every client (the run exits 0, every produce and
consume completed with the expected record counts) and the JSON carries every metric. Timings are
never asserted here; they belong to `make bench`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness.paths import ROOT, weir_bin

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

PRODUCE = [f"produce_{tool}_p{p}_acks{a}_{unit}" for tool in ("perf", "rdkafka") for p in (1, 16)
           for a in ("1", "all") for unit in ("mbps", "rps")]
METRICS = PRODUCE + [
    "durable_perf_p1_acksall_mbps", "durable_perf_p1_acksall_rps",
    "durable_perf_p16_acksall_mbps", "durable_perf_p16_acksall_rps",
    "consume_rdkafka_p16_mbps", "consume_rdkafka_p16_rps",
    "latency_p50_ms", "latency_p99_ms", "latency_p999_ms", "latency_rate_rps",
    "latency_steady_p50_ms", "latency_steady_p99_ms", "latency_steady_p999_ms",
    "latency_rdkafka_p50_ms", "latency_rdkafka_p99_ms", "latency_rdkafka_p999_ms",
    "e2e_latency_p50_ms", "e2e_latency_p99_ms", "e2e_latency_p999_ms",
    "latency_l0_p50_ms", "latency_l0_p99_ms", "latency_l0_p999_ms", "e2e_l0_p99_ms", "e2e_l0_p999_ms",
    "consume_cpu_s_per_gb", "consume_client_cpu_s_per_gb",
    "consume_rdkafka_group_p16_mbps", "consume_rdkafka_group_client_cpu_s_per_gb",
    "consume_perf_p16_mbps", "consume_perf_client_cpu_s_per_gb",
    "restart_clean_s", "restart_kill9_s", "restart_data_gib",
    "cpu_s_per_gb", "rss_idle_mib", "rss_peak_mib", "startup_to_first_produce_s",
]
LIMITS = ["disk_seq_write_1m_mbps", "disk_fdatasync_16k_mbps", "disk_fdatasync_16k_iops",
          "loopback_tcp_mbps"]


@pytest.mark.slow  # 100 s of make test; `make bench` runs the real thing
def test_bench_smoke_run_measures_both_brokers(tmp_path):
    out = tmp_path / "results"
    argv = [sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--out", str(out),
            "--workdir", str(tmp_path / "work"), "--weir-bin", str(weir_bin())]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=540, cwd=ROOT,
                          env=dict(os.environ))
    assert proc.returncode == 0, f"bench/run.py --smoke failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"

    data = json.loads((out / "latest.json").read_text())
    assert data["smoke"] is True
    assert data["repetitions"] == 1
    assert data["both_answered"] is True
    for kind in ("weir", "kafka"):
        run = data["runs"][0][kind]
        assert run["answered"] is True
        assert all(rc in (0, 143) for rc in run["exit_codes"]), run["exit_codes"]
        missing = [k for k in METRICS if data["median"][kind].get(k) is None]
        assert not missing, f"{kind} lacks {missing}"
    # both brokers were driven at the same fixed rate in the latency run
    assert data["median"]["weir"]["latency_rate_rps"] == data["median"]["kafka"]["latency_rate_rps"]
    assert all(k in data["ratio"] for k in METRICS)
    assert not [k for k in LIMITS if data["limits"].get(k) is None]
    table = (out / "latest.md").read_text()
    assert "| metric |" in table and "weir/Kafka" in table


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_cluster_bench_smoke_run_measures_both_clusters(tmp_path):
    """bench/cluster_bench.py --smoke: three 3-broker clusters (weir, weir without syncs, Kafka)
    each answered every client, nothing failed during the leader kill, every metric is there.
    `slow`: three cluster start-ups take minutes on 2 cores."""
    out = tmp_path / "results"
    argv = [sys.executable, str(ROOT / "bench" / "cluster_bench.py"), "--smoke", "--out", str(out),
            "--workdir", str(tmp_path / "work")]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=840, cwd=ROOT,
                          env={**os.environ, "WEIR_BIN": str(weir_bin())})
    assert proc.returncode == 0, f"bench/cluster_bench.py --smoke failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    data = json.loads((out / "cluster.json").read_text())
    assert data["smoke"] is True and data["both_answered"] is True
    sys.path.insert(0, str(ROOT / "bench"))
    import cluster_bench  # noqa: E402  (its metric list)
    for kind in ("weir", "kafka"):
        missing = [k for k in cluster_bench.METRIC_KEYS if data["median"][kind].get(k) is None]
        assert not missing, f"{kind} lacks {missing}"
        assert data["median"][kind]["failover_errors"] == 0, "an idempotent producer lost records in the failover"
    table = (out / "cluster.md").read_text()
    assert "| metric |" in table and "weir/Kafka" in table
