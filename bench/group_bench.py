#!/usr/bin/env python3
"""Consumer groups (issue 16): how fast a group reaches a stable assignment after a member joins
and after one dies, and what heartbeats cost the broker, on weir and Apache Kafka 4.3.1.

    .cache/venv/bin/python bench/group_bench.py                 # N = 10, 50, 200
    .cache/venv/bin/python bench/group_bench.py --members 10 --reps 5
    .cache/venv/bin/python bench/group_bench.py --smoke         # N = 4, one repetition, short windows

Protocols, all with confluent-kafka 2.15.1 (bundled librdkafka), one Consumer instance a member:
  - consumer: group.protocol=consumer (KIP-848; the broker's default assignor, `uniform`);
  - classic-range: group.protocol=classic, partition.assignment.strategy=range (eager);
  - classic-coop: group.protocol=classic, partition.assignment.strategy=cooperative-sticky.
For each broker (weir with its defaults, then the harness's single-node KRaft Kafka, never both
at once), protocol and N, on a topic of 2N partitions and a fresh group:
  - idle: broker CPU (utime+stime of /proc/PID/stat; Kafka's JVM) over --window seconds with no
    member anywhere;
  - form: N-1 members start together (worker processes of up to --per-worker members, a thread
    each polling its Consumer); the time until the group is stable (below);
  - heartbeat CPU: broker CPU over --window seconds with those N-1 stable members, minus idle, per
    member per second. Every member pauses the partitions it is given, so no Fetch runs: the
    window is the group protocol alone (heartbeats; metadata refreshes are minutes apart). Also
    the same for Kafka's request and group-coordinator threads only (KAFKA_REQUEST_THREADS; the
    JVM's idle background is noisier than the heartbeats) against weir's whole process;
  - join (--reps times): a process holding one more member starts; from its subscribe() until
    stable with N members;
  - death: kill -9 of that process; from the kill until stable again with N-1 members. This
    includes the session timeout, reported raw and beyond the timeout.
Stable: every live member's own assignment, as its on_assign/on_revoke/on_lost callbacks left it,
taken together covers every partition exactly once and the counts differ by at most one (so the
newcomer has its share and nothing is still being revoked or assigned). The stable time is the
callback that made it so (CLOCK_MONOTONIC is the same in every process).

Same settings on both brokers: session timeout --session-ms (6000) and heartbeat interval
--heartbeat-ms (2000) — for the consumer protocol the broker's group.consumer.session.timeout.ms
and group.consumer.heartbeat.interval.ms (their minimums lowered to match), for the classic
protocols the client's session.timeout.ms / heartbeat.interval.ms (group.min.session.timeout.ms
6000 is both brokers' default). group.consumer.assignment.interval.ms stays at its default, 1 s
on both: the consumer protocol recomputes a target assignment at most once a second, which the
classic protocols do not wait for. group.initial.rebalance.delay.ms=0 on both (the harness's).

Writes bench/results/groups.json and bench/results/groups.md (medians; weir / Kafka ratios).
Not part of `make bench`: `make bench-groups`.
"""
from __future__ import annotations

import argparse
import json
import os
import selectors
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scenario"))

from scale_bench import cpu_seconds, fmt  # noqa: E402

# Kafka's threads that serve requests and run the group coordinator (names cut to 15 characters
# by the kernel): data-plane-kafka-network-thread-*, data-plane-kafka-request-handler-*,
# group-coordinator-event-processor-*, ExpirationReaper-* (purgatories). Their CPU leaves out the
# JVM's background (GC, JIT, log cleaner, KRaft), whose noise exceeds what heartbeats cost.
KAFKA_REQUEST_THREADS = ("data-plane-kafk", "group-coordinat", "ExpirationReape")


def threads_cpu_seconds(pid: int, prefixes: tuple[str, ...]) -> float:
    """utime+stime of the process's threads whose name starts with one of prefixes."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            if not Path(f"/proc/{pid}/task/{tid}/comm").read_text().startswith(prefixes):
                continue
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue  # the thread ended
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def request_cpu_seconds(b) -> float:
    """weir: the whole process; Kafka: its request and group-coordinator threads."""
    return cpu_seconds(b.pid) if b.kind == "weir" else threads_cpu_seconds(b.pid, KAFKA_REQUEST_THREADS)


PROTOCOLS = ("consumer", "classic-range", "classic-coop")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------- worker side

def consumer_config(a, name: str) -> dict:
    conf = {"bootstrap.servers": a.bootstrap, "group.id": a.group, "client.id": name,
            "enable.auto.commit": False, "auto.offset.reset": "latest"}
    if a.protocol == "consumer":
        # librdkafka refuses the session/heartbeat settings with this protocol: the broker's.
        conf["group.protocol"] = "consumer"
    else:
        conf.update({"group.protocol": "classic", "session.timeout.ms": a.session_ms,
                     "heartbeat.interval.ms": a.heartbeat_ms,
                     "partition.assignment.strategy":
                         "range" if a.protocol == "classic-range" else "cooperative-sticky"})
    return conf


def worker(a) -> int:
    """Holds the members named in --names; prints one JSON line per subscribe and per change of a
    member's assignment; runs until stdin closes or it is killed."""
    from confluent_kafka import Consumer

    out_lock = threading.Lock()
    stop = threading.Event()

    def emit(obj: dict) -> None:
        line = json.dumps(obj)
        with out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    eager = a.protocol == "classic-range"

    def member(name: str) -> None:
        owned: set[int] = set()
        try:
            c = Consumer(consumer_config(a, name))
        except Exception as e:  # noqa: BLE001 - reported to the bench
            emit({"err": f"{name}: {e}"})
            return

        def on_assign(consumer, parts):
            # Take the partitions and pause them: no Fetch, so the broker sees the group only.
            if eager:
                consumer.assign(parts)
            else:
                consumer.incremental_assign(parts)
            if parts:
                consumer.pause(parts)
            owned.update(tp.partition for tp in parts)
            emit({"m": name, "t": time.monotonic(), "own": sorted(owned)})

        def on_revoke(consumer, parts):
            owned.difference_update(tp.partition for tp in parts)
            emit({"m": name, "t": time.monotonic(), "own": sorted(owned)})

        c.subscribe([a.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
        emit({"sub": name, "t": time.monotonic()})
        errors = 0
        while not stop.is_set():
            m = c.poll(0.5)
            if m is not None and m.error() is not None and errors < 3:
                errors += 1
                emit({"err": f"{name}: {m.error()}"})
        c.close()

    threads = [threading.Thread(target=member, args=(n,), daemon=True) for n in a.names.split(",")]
    for t in threads:
        t.start()
    sys.stdin.read()  # the bench closes stdin to end the worker
    stop.set()
    for t in threads:
        t.join(30)
    return 0


# ---------------------------------------------------------------------------- bench side

class Group:
    """The worker processes of one group and every member's assignment as they reported it."""

    def __init__(self, b, cfg, protocol: str, topic: str, group: str, partitions: int) -> None:
        self.b, self.cfg, self.protocol = b, cfg, protocol
        self.topic, self.group, self.partitions = topic, group, partitions
        self.sel = selectors.DefaultSelector()
        self.procs: list[subprocess.Popen] = []
        self.owned: dict[str, set[int]] = {}
        self.live: set[str] = set()
        self.subscribed: dict[str, float] = {}
        self.events = 0
        self.errors: list[str] = []

    def spawn(self, names: list[str]) -> subprocess.Popen:
        argv = [sys.executable, __file__, "--worker", "--bootstrap", self.b.bootstrap, "--group", self.group,
                "--topic", self.topic, "--protocol", self.protocol, "--names", ",".join(names),
                "--session-ms", str(self.cfg.session_ms), "--heartbeat-ms", str(self.cfg.heartbeat_ms)]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        os.set_blocking(p.stdout.fileno(), False)
        self.sel.register(p.stdout, selectors.EVENT_READ, [p, ""])
        self.procs.append(p)
        for n in names:
            self.owned[n] = set()
            self.live.add(n)
        return p

    def pump(self, timeout: float) -> list[dict]:
        """Reads what the workers printed within timeout seconds; returns the events in order."""
        got = []
        for key, _ in self.sel.select(timeout):
            data = key.data
            chunk = key.fileobj.read()
            if not chunk:
                self.sel.unregister(key.fileobj)
                continue
            data[1] += chunk
            *lines, data[1] = data[1].split("\n")
            for line in lines:
                if line.strip():
                    got.append(json.loads(line))
        for ev in got:
            if "own" in ev:
                self.events += 1
                if ev["m"] in self.live:
                    self.owned[ev["m"]] = set(ev["own"])
            elif "sub" in ev:
                self.subscribed[ev["sub"]] = ev["t"]
            elif "err" in ev and len(self.errors) < 20:
                self.errors.append(ev["err"])
        return got

    def stable(self) -> bool:
        sizes = [len(self.owned[n]) for n in self.live]
        if not sizes or max(sizes) - min(sizes) > 1 or sum(sizes) != self.partitions:
            return False
        return set().union(*(self.owned[n] for n in self.live)) == set(range(self.partitions))

    def wait_stable(self, timeout: float) -> float:
        """The monotonic time of the callback after which the group was stable."""
        deadline = time.monotonic() + timeout
        last = time.monotonic()
        while True:
            for ev in self.pump(0.2):
                if "own" in ev:
                    last = ev["t"]
                    if self.stable():
                        return last
            if self.stable():
                return last
            if time.monotonic() > deadline:
                sizes = sorted(len(self.owned[n]) for n in self.live)
                raise TimeoutError(f"not stable within {timeout:.0f} s: {len(self.live)} live members, "
                                   f"owned counts {sizes[:5]}..{sizes[-5:]} (sum {sum(sizes)} of "
                                   f"{self.partitions}); errors {self.errors[:3]}")

    def wait_subscribed(self, name: str, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        while name not in self.subscribed:
            self.pump(0.2)
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} did not subscribe within {timeout:.0f} s; errors {self.errors[:3]}")
        return self.subscribed[name]

    def kill(self, p: subprocess.Popen, names: list[str]) -> float:
        t = time.monotonic()
        p.send_signal(signal.SIGKILL)
        for n in names:
            self.live.discard(n)
        p.wait()
        return t

    def watch(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self.pump(min(left, 0.5))

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
            p.wait()
            p.stdin.close()
            p.stdout.close()
        self.sel.close()


def wait_empty(b, group: str, timeout: float) -> None:
    """Until the broker describes the group with no members (the killed ones expired)."""
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    deadline = time.monotonic() + timeout
    while True:
        try:
            d = admin.describe_consumer_groups([group], request_timeout=10)[group].result(15)
            if not d.members:
                return
        except Exception:  # noqa: BLE001 - a group not known any more is empty too
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"group {group} still has members after {timeout:.0f} s")
        time.sleep(0.5)


def cell(b, cfg, protocol: str, n: int, reps: int) -> dict:
    from confluent_kafka.admin import AdminClient, NewTopic
    out: dict = {"partitions": 2 * n, "join_s": [], "death_s": [], "death_beyond_session_s": []}
    tag = f"gb-{protocol}-{n}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": b.bootstrap})
    admin.create_topics([NewTopic(tag, 2 * n, 1)])[tag].result(60)
    g = Group(b, cfg, protocol, tag, tag, 2 * n)
    try:
        c0, r0 = cpu_seconds(b.pid), request_cpu_seconds(b)
        time.sleep(cfg.window)  # no member exists: nothing to wait for but the clock
        out["idle_cpu_s"] = cpu_seconds(b.pid) - c0
        out["idle_request_cpu_s"] = request_cpu_seconds(b) - r0

        names = [f"m{i}" for i in range(n - 1)]
        t0 = time.monotonic()
        for i in range(0, len(names), cfg.per_worker):
            g.spawn(names[i:i + cfg.per_worker])
        out["form_s"] = g.wait_stable(cfg.form_timeout) - t0

        ev0, c0, r0 = g.events, cpu_seconds(b.pid), request_cpu_seconds(b)
        g.watch(cfg.window)
        out["members_cpu_s"] = cpu_seconds(b.pid) - c0
        out["members_request_cpu_s"] = request_cpu_seconds(b) - r0
        out["window_events"] = g.events - ev0
        # Not clipped at 0: a negative value says the idle noise exceeded the heartbeats' cost.
        out["hb_cpu_us_per_member_s"] = (out["members_cpu_s"] - out["idle_cpu_s"]) / (n - 1) / cfg.window * 1e6
        out["hb_request_cpu_us_per_member_s"] = (out["members_request_cpu_s"] - out["idle_request_cpu_s"]) \
            / (n - 1) / cfg.window * 1e6

        for r in range(reps):
            name = f"j{r}"
            p = g.spawn([name])
            t_sub = g.wait_subscribed(name, 60)
            out["join_s"].append(g.wait_stable(cfg.timeout) - t_sub)
            t_kill = g.kill(p, [name])
            t = g.wait_stable(cfg.timeout + cfg.session_ms / 1000) - t_kill
            out["death_s"].append(t)
            out["death_beyond_session_s"].append(t - cfg.session_ms / 1000)
            log(f"    rep {r + 1}: join {out['join_s'][-1]:.2f} s, death {t:.2f} s")
    except Exception as e:  # noqa: BLE001 - the bench records what did not work
        out["error"] = f"{type(e).__name__}: {e}"[:600]
        log(f"    error: {out['error']}")
    finally:
        out["client_errors"] = g.errors[:5]
        g.close()
    try:
        wait_empty(b, tag, 3 * cfg.session_ms / 1000 + 30)
    except Exception as e:  # noqa: BLE001
        out.setdefault("error", f"{type(e).__name__}: {e}"[:600])
    for k, median in (("join_s", "join_median_s"), ("death_s", "death_median_s"),
                      ("death_beyond_session_s", "death_beyond_median_s")):
        if out[k]:
            out[median] = statistics.median(out[k])
    return out


def merge(outs: list[dict]) -> dict:
    """One cell run several times (--cycles): the samples together, medians of the rest."""
    if len(outs) == 1:
        return outs[0]
    m: dict = {"partitions": outs[0]["partitions"], "cycles": outs}
    for k, median in (("join_s", "join_median_s"), ("death_s", "death_median_s"),
                      ("death_beyond_session_s", "death_beyond_median_s")):
        m[k] = [x for o in outs for x in o[k]]
        if m[k]:
            m[median] = statistics.median(m[k])
    for k in ("form_s", "idle_cpu_s", "members_cpu_s", "window_events", "hb_cpu_us_per_member_s",
              "idle_request_cpu_s", "members_request_cpu_s", "hb_request_cpu_us_per_member_s"):
        values = [o[k] for o in outs if k in o]
        if values:
            m[k] = statistics.median(values)
    errors = [o["error"] for o in outs if "error" in o]
    if errors:
        m["error"] = errors[0]
    return m


def make_broker(kind: str, workdir: Path, cfg):
    from harness.kafka import KafkaBroker
    from harness.weir import WeirBroker
    s, h = cfg.session_ms, cfg.heartbeat_ms
    settings = {"group.consumer.min.session.timeout.ms": s, "group.consumer.session.timeout.ms": s,
                "group.consumer.min.heartbeat.interval.ms": h, "group.consumer.heartbeat.interval.ms": h}
    if kind == "weir":
        return WeirBroker(workdir / "weir", settings=settings)
    return KafkaBroker(workdir / "kafka", overrides=settings)


ROWS = [
    ("join_median_s", "join: subscribe() of member N to stable", "s", "lower"),
    ("death_median_s", "death: kill -9 of one member to stable (raw)", "s", "lower"),
    ("death_beyond_median_s", "death: beyond the session timeout", "s", "lower"),
    ("form_s", "form: N-1 members started together to stable", "s", "lower"),
    ("hb_cpu_us_per_member_s", "heartbeat CPU per member per second (N-1 stable members)", "CPU µs", "lower"),
    ("idle_cpu_s", "broker CPU over the idle window (no members)", "CPU s", "lower"),
    ("members_cpu_s", "broker CPU over the same window with N-1 stable members", "CPU s", "lower"),
    ("hb_request_cpu_us_per_member_s", "heartbeat CPU per member per second, request threads (Kafka: "
     "network, request handler, group coordinator, purgatory reaper; weir: the process)", "CPU µs", "lower"),
    ("idle_request_cpu_s", "request threads' CPU over the idle window", "CPU s", "lower"),
    ("members_request_cpu_s", "request threads' CPU with N-1 stable members", "CPU s", "lower"),
]


def markdown(res: dict) -> str:
    c = res["config"]
    lines = [f"Consumer-group run {res['started']} (`{' '.join(res['argv'])}`); load average at the start "
             f"{res['load_start']:.1f}, at the end {res['load_end']:.1f} (2 shared CPUs: noisy, medians).", "",
             f"Session timeout {c['session_ms']} ms and heartbeat interval {c['heartbeat_ms']} ms on both brokers "
             f"(consumer protocol: broker configs; classic: client configs). "
             f"group.consumer.assignment.interval.ms = 1000 (default) on both: the consumer protocol computes a new "
             f"target at most once a second. Topic of 2N partitions; heartbeat window {c['window']:.0f} s; "
             f"confluent-kafka {res['client']}.", ""]
    for proto, by_n in res["results"].items():
        for n, r in by_n.items():
            w, k = r.get("weir", {}), r.get("kafka", {})
            reps = max(len(w.get("join_s", [])), len(k.get("join_s", [])))
            cycles = max(len(w.get("cycles", [w])), len(k.get("cycles", [k])))
            lines += [f"### {proto}, N = {n} ({reps} join/death sample(s), {cycles} heartbeat window(s))", "",
                      "| metric | unit | weir | Kafka | weir/Kafka |", "|---|---|---:|---:|---:|"]
            for key, what, unit, _ in ROWS:
                wv, kv = w.get(key), k.get(key)
                ratio = wv / kv if isinstance(wv, (int, float)) and isinstance(kv, (int, float)) and kv > 0 \
                    and wv >= 0 else None
                lines.append(f"| {what} | {unit} | {fmt(wv)} | {fmt(kv)} | {fmt(ratio)} |")
            for kind, v in (("weir", w), ("kafka", k)):
                if "error" in v:
                    lines.append(f"\n{kind}: {v['error']}")
            lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=lambda s: [int(x) for x in s.split(",")], default=None,
                    help="comma-separated group sizes N (default 10,50,200)")
    ap.add_argument("--reps", type=lambda s: [int(x) for x in s.split(",")], default=None,
                    help="join/death repetitions, one number or one per N (default 3,3,1)")
    ap.add_argument("--protocols", default=",".join(PROTOCOLS))
    ap.add_argument("--kinds", default="weir,kafka")
    ap.add_argument("--window", type=float, default=None, help="idle and heartbeat windows, s (default 20)")
    ap.add_argument("--session-ms", type=int, default=6000)
    ap.add_argument("--heartbeat-ms", type=int, default=2000)
    ap.add_argument("--cycles", type=int, default=1,
                    help="run each cell this many times (fresh group each time); medians over them")
    ap.add_argument("--per-worker", type=int, default=50, help="members per worker process")
    ap.add_argument("--timeout", type=float, default=120, help="longest wait for a stable group, s")
    ap.add_argument("--form-timeout", type=float, default=600)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--name", default="groups", help="result files OUT/NAME.json and OUT/NAME.md")
    # worker mode (the bench starts itself)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for flag in ("--bootstrap", "--group", "--topic", "--protocol", "--names"):
        ap.add_argument(flag, help=argparse.SUPPRESS)
    cfg = ap.parse_args(argv)
    if cfg.worker:
        return worker(cfg)
    members = cfg.members or ([4] if cfg.smoke else [10, 50, 200])
    reps = cfg.reps or ([1] if cfg.smoke else [3, 3, 1])
    reps = (reps * len(members))[:len(members)] if len(reps) == 1 else reps
    if len(reps) != len(members):
        ap.error("--reps: one number or one per --members")
    cfg.window = cfg.window or (3 if cfg.smoke else 20)
    protocols = cfg.protocols.split(",")
    import confluent_kafka
    res = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "argv": ["bench/group_bench.py", *argv],
           "load_start": os.getloadavg()[0], "client": f"{confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})",
           "config": {"session_ms": cfg.session_ms, "heartbeat_ms": cfg.heartbeat_ms, "window": cfg.window,
                      "per_worker": cfg.per_worker, "cycles": cfg.cycles, "assignment_interval_ms": 1000, "partitions": "2N",
                      "members": members, "reps": reps},
           "results": {p: {str(n): {} for n in members} for p in protocols}}
    with tempfile.TemporaryDirectory(prefix="weir-groups-") as tmp:
        for kind in cfg.kinds.split(","):
            b = make_broker(kind, Path(tmp), cfg)
            b.start()
            comm = Path(f"/proc/{b.pid}/comm").read_text().strip()
            log(f"{kind}: pid {b.pid} ({comm})")
            try:
                for proto in protocols:
                    for n, r in zip(members, reps):
                        log(f"{kind} {proto} N={n}")
                        outs = []
                        for cycle in range(cfg.cycles):
                            outs.append(cell(b, cfg, proto, n, r))
                            if cfg.cycles > 1:
                                log(f"    cycle {cycle + 1}: hb {fmt(outs[-1].get('hb_cpu_us_per_member_s'))} us")
                        out = merge(outs)
                        log("    " + ", ".join(f"{k}={fmt(v)}" for k, v in out.items()
                                               if not isinstance(v, (list, dict))))
                        res["results"][proto][str(n)][kind] = out
            finally:
                b.stop()
    res["load_end"] = os.getloadavg()[0]
    cfg.out.mkdir(parents=True, exist_ok=True)
    (cfg.out / f"{cfg.name}.json").write_text(json.dumps(res, indent=2) + "\n")
    (cfg.out / f"{cfg.name}.md").write_text(markdown(res))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
