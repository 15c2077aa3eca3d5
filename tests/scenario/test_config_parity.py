"""Broker config parity with Apache Kafka 4.3.1, checked against Kafka's own code.

tests/java/ConfigParity.java loads Kafka's broker config definition (KafkaConfig.configDef()) in
one JVM and
  (a) dumps name, type, default, validator and dynamic-update mode of every key: compared with
      `weir config defs` for every key both know; a difference fails unless DIFFERENCES lists it
      with its reason (weir-only keys are listed in WEIR_ONLY);
  (b) constructs KafkaConfig for a table of values per numeric and boolean key (abc, empty,
      negative, zero, boundaries, overflow, `maybe`): weir's start-up validation
      (`weir config check --rows`, the code `weir serve` runs) must accept and refuse the same
      rows, with Kafka's message (word for word; for a rule relating keys weir adds the keys it
      read) and naming the key;
  (c) loads a corpus of tricky .properties files with java.util.Properties: weir's reader must
      produce the same entries.
A few rows also go through a real `weir serve` start (exit status 1 and the message).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from harness.paths import ROOT, kafka_classpath_file, weir_bin

# (key, field) -> why weir differs from Kafka on purpose. field: type, default, validator,
# importance, mode.
DIFFERENCES = {
    ("node.id", "default"): "weir runs without a config file: node.id defaults to 1 (Kafka requires it)",
    ("process.roles", "default"): "weir is always broker and controller; Kafka requires the key",
    ("controller.listener.names", "default"): "weir has no separate controller listener; Kafka requires the key",
    ("socket.send.buffer.bytes", "default"):
        "-1 (the OS's autotuned size; 262144 for a connection from this host) moved more bytes per "
        "second on loopback (BENCHMARKS.md)",
    ("socket.receive.buffer.bytes", "default"): "as socket.send.buffer.bytes",
    ("replica.selector.class", "validator"):
        "weir cannot load Java classes: Kafka's RackAwareReplicaSelector is the one value it accepts",
}

# weir's own keys (Kafka has no such key).
WEIR_ONLY = {
    "weir.cores": "executor threads, one per core",
    "max.inflight.requests.per.connection": "requests read from one connection before its responses are written",
    "flush.on.acks.all": "fdatasync before acknowledging acks=all",
    "metrics.listener": "the Prometheus endpoint",
    "weir.fetch.session.cache.max.partitions": "a bound on the memory of incremental fetch sessions",
    "weir.partial.request.timeout.ms": "a deadline for a request whose first bytes have arrived",
    "weir.produce.max.decompressed.batch.bytes": "a bound on what one compressed producer batch decompresses to",
    "weir.produce.max.compression.ratio": "a bound on a compressed producer batch's compression ratio",
    "weir.decompression.threads": "threads validating compressed producer batches off the executors",
}

# Keys whose value rows are not compared, and why.
ROW_EXCLUSIONS = {
    "node.id": "Kafka's verdict depends on controller.quorum.voters, which weir does not use",
    "broker.id": "Kafka requires node.id == broker.id; the row sets only one of them",
}

FIELDS = ("type", "default", "validator", "importance", "mode")


def _java(*args: str) -> str:
    cp_file = kafka_classpath_file()
    if not cp_file.is_file():
        pytest.fail(f"no Kafka classpath at {cp_file}; run scripts/setup-kafka.sh")
    subprocess.run([str(ROOT / "tests" / "java" / "build.sh")], check=True)
    cp = cp_file.read_text().strip() + ":" + str(ROOT / ".cache" / "java")
    r = subprocess.run(["java", "-cp", cp, "ConfigParity", *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    return r.stdout


def _weir(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([str(weir_bin()), *args], capture_output=True, text=True, timeout=120)
    if check:
        assert r.returncode == 0, r.stderr[-4000:]
    return r


def _defs(text: str) -> dict[str, dict[str, str]]:
    out = {}
    for line in text.splitlines():
        name, *values = line.split("\t")
        out[name] = dict(zip(FIELDS, values))
    return out


@pytest.fixture(scope="module")
def kafka_defs() -> dict[str, dict[str, str]]:
    return _defs(_java("defs"))


@pytest.fixture(scope="module")
def weir_defs() -> dict[str, dict[str, str]]:
    return _defs(_weir("config", "defs").stdout)


def test_definitions_match_kafka_for_every_shared_key(kafka_defs, weir_defs):
    problems = []
    for name, ours in weir_defs.items():
        if name not in kafka_defs:
            if name not in WEIR_ONLY:
                problems.append(f"{name}: not a Kafka key and not listed in WEIR_ONLY")
            continue
        for field in FIELDS:
            differs = ours[field] != kafka_defs[name][field]
            listed = (name, field) in DIFFERENCES
            if differs and not listed:
                problems.append(f"{name} {field}: weir {ours[field]!r}, Kafka {kafka_defs[name][field]!r}")
            if listed and not differs:
                problems.append(f"{name} {field}: listed in DIFFERENCES but equal to Kafka's")
    assert not problems, "\n".join(problems)
    assert not set(WEIR_ONLY) - set(weir_defs), "WEIR_ONLY lists keys weir does not define"


def _range(validator: str) -> tuple[int | None, int | None]:
    """Bounds of a Range validator text: "[1,...]", "[0,...,10]", "[...,5]"; else (None, None)."""
    m = re.fullmatch(r"\[(-?\d+)?,?\.\.\.,?(-?\d+)?\]", validator)
    if not m:
        return None, None
    return tuple(int(g) if g is not None else None for g in m.groups())


def _rows_for(name: str, d: dict[str, str]) -> list[str]:
    t = d["type"]
    if t == "BOOLEAN":
        return ["true", "FALSE", " true ", "maybe", "", "1", "yes"]
    common = ["abc", "", "-1", "0", "1", " 7 ", "+5", "1.5", "0x10"]
    if t == "DOUBLE":
        return ["abc", "", "-1", "0", "0.5", "1", "2", "NaN", "1e400", "1f", "-Infinity"]
    bounds = {"SHORT": 2**15, "INT": 2**31, "LONG": 2**63}[t]
    values = common + [str(bounds - 1), str(bounds), str(-bounds), str(-bounds - 1), "99999999999"]
    lo, hi = _range(d["validator"])
    for b in (lo, hi):
        if b is not None:
            values += [str(b - 1), str(b), str(b + 1)]
    if name == "log.cleaner.dedupe.buffer.size":
        values += ["1048575", "1048576"]
    return list(dict.fromkeys(values))


def test_weir_accepts_and_refuses_what_kafka_does(kafka_defs, weir_defs, tmp_path):
    rows = []
    for name, d in weir_defs.items():
        if name in kafka_defs and name not in ROW_EXCLUSIONS and d["type"] in ("BOOLEAN", "SHORT", "INT", "LONG",
                                                                                  "DOUBLE"):
            rows += [(name, v) for v in _rows_for(name, kafka_defs[name])]
    assert len(rows) > 500
    rows_file = tmp_path / "rows.tsv"
    rows_file.write_text("".join(f"{k}\t{v}\n" for k, v in rows))

    def verdicts(text: str) -> dict[tuple[str, str], tuple[str, str]]:
        out = {}
        for line in text.splitlines():
            if line.count("\t") < 2:
                continue  # a log line of Kafka's (e.g. its broker.heartbeat.interval.ms check), not a verdict
            key, value, verdict, *message = line.split("\t")
            out[(key, value)] = (verdict, message[0] if message else "")
        return out

    kafka = verdicts(_java("check", str(rows_file)))
    weir = verdicts(_weir("config", "check", "--rows", str(rows_file)).stdout)
    assert set(kafka) == set(weir) == set(rows)
    problems = []
    for row in rows:
        (kv, km), (wv, wm) = kafka[row], weir[row]
        if kv != wv:
            problems.append(f"{row}: Kafka {kv} {km!r}, weir {wv} {wm!r}")
        elif kv == "error":
            if row[0] not in wm:
                problems.append(f"{row}: weir's message does not name the key: {wm!r}")
            # Kafka's message, word for word; weir may add which keys a rule relating keys read.
            if km not in wm:
                problems.append(f"{row}: messages differ: Kafka {km!r}, weir {wm!r}")
    assert not problems, f"{len(problems)} of {len(rows)} rows differ:\n" + "\n".join(problems)


# Each entry: file name -> bytes. Chosen for java.util.Properties' corners.
CORPUS = {
    "separators.properties": b"a=1\nb:2\nc 3\nd\t4\ne = 5\nf  :  6\ng\nh=\ni:\nj==x\nk = =y\nl 3=4\n\x0cm\x0c7\n",
    "comments.properties": b"# c\n! c\n   # indented\na=1 # not a comment\nb=2\\\n# continued value\n# c \\\nc=3\n",
    "continuations.properties": b"a=x,\\\n    y,\\\r\n\tz\nb=1\\\\\nc=2\\\n\nd=3\\\\\\\ne\n",
    "line-endings.properties": b"a=1\rb=2\r\nc=3\n\rd=4",
    "escapes.properties": b"k\\=ey\\ x=v\\tw\\n\\u0041\\q\n\\#notcomment=1\nsp\\ ace = \\ lead\ne=\\u00e9\\uD83D\\uDE00\n",
    "latin1.properties": b"l=\xe9\xff\nutf8=\xc3\xa9\n",
    "duplicates.properties": b"a=1\na=2\nb=x\nb\n",
    "trailing.properties": b"a=1\\",
    "empty-continued.properties": b"\\\n#x=1\ny=2\n",
    "bad-escape.properties": b"a=\\u00g1\n",
    "short-escape.properties": b"a=\\u00",
    "blank.properties": b"\n\n   \n\t\n",
    "keyonly.properties": b"key\nkey2   \n  key3\\\n  more\n",
}


def _props(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        kind, *rest = line.split("\t")
        if kind == "file":
            current = Path(rest[0]).name
            out[current] = []
        elif kind == "entry":
            out[current].append(f"{bytes.fromhex(rest[0])!r}={bytes.fromhex(rest[1])!r}")
        else:
            out[current].append("error")
    return out


def test_properties_reader_agrees_with_java_util_properties(tmp_path):
    files = []
    for name, content in CORPUS.items():
        (tmp_path / name).write_bytes(content)
        files.append(str(tmp_path / name))
    java = _props(_java("props", *files))
    weir = _props(_weir("config", "read-properties", *files).stdout)
    assert set(java) == set(CORPUS)
    mismatches = {name: (java[name], weir.get(name)) for name in java if java[name] != weir.get(name)}
    assert not mismatches, "\n".join(f"{n}: Java {j}, weir {w}" for n, (j, w) in mismatches.items())
    assert java["bad-escape.properties"] == ["error"]


# ------------------------------------------------------------------ through `weir serve` itself
def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    argv = [str(weir_bin()), "serve", "--set", f"log.dirs={tmp_path / 'data'}", "--set",
            "listeners=PLAINTEXT://127.0.0.1:0", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("setting,message", [
    ("group.max.size=abc", "Invalid value abc for configuration group.max.size: Not a number of type INT"),
    ("num.partitions=0", "Invalid value 0 for configuration num.partitions: Value must be at least 1"),
    ("auto.create.topics.enable=maybe",
     "Invalid value maybe for configuration auto.create.topics.enable: Expected value to be either true or false"),
    ("group.min.session.timeout.ms=99999999999",
     "Invalid value 99999999999 for configuration group.min.session.timeout.ms: Not a number of type INT"),
    ("log.retention.ms=abc", "Invalid value abc for configuration log.retention.ms: Not a number of type LONG"),
    ("group.consumer.migration.policy=sideways",
     "Invalid value sideways for configuration group.consumer.migration.policy: String must be one of (case "
     "insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL"),
    ("log.dirs=", "Configuration 'log.dirs' must not be empty. Valid values include: any non-empty value"),
    # weir only: Kafka spreads partitions over both (JBOD); weir refuses rather than use one alone.
    ("log.dirs=/tmp/weir-a,/tmp/weir-b",
     "Invalid value /tmp/weir-a,/tmp/weir-b for configuration log.dirs: weir serves one log directory"),
    # weir only: Kafka keeps the metadata log there; weir keeps it in the log directory.
    ("metadata.log.dir=/tmp/weir-meta",
     "Invalid value /tmp/weir-meta for configuration metadata.log.dir: weir keeps the metadata log in the log"),
    ("listeners=SSL://127.0.0.1:0", "listener SSL://127.0.0.1:0 uses security protocol SSL"),
    ("listeners=SASL_SSL://127.0.0.1:0", "listener SASL_SSL://127.0.0.1:0 uses security protocol SASL_SSL"),
])
def test_serve_refuses_an_invalid_value_with_exit_1(tmp_path, setting, message):
    r = _serve(tmp_path, "--set", setting)
    assert r.returncode == 1, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert message in r.stdout + r.stderr
    assert not (tmp_path / "data").exists()  # nothing was started


def test_serve_refuses_a_config_path_that_is_a_directory_or_missing(tmp_path):
    for path in (tmp_path, tmp_path / "missing.properties"):
        r = _serve(tmp_path, "--config", str(path))
        assert r.returncode == 1, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
        assert f"cannot read config file {path}" in r.stdout + r.stderr


def test_a_listener_mapped_to_ssl_is_refused_naming_it(tmp_path):
    r = _serve(tmp_path, "--set", "listeners=INTERNAL://127.0.0.1:0", "--set",
               "listener.security.protocol.map=INTERNAL:SASL_PLAINTEXT")
    assert r.returncode == 1
    assert "listener INTERNAL://127.0.0.1:0 uses security protocol SASL_PLAINTEXT" in r.stdout + r.stderr


def test_broker_describe_configs_reports_normalised_typed_values(weir_factory, tmp_path):
    from harness.kreq import Kreq

    props = tmp_path / "server.properties"
    props.write_bytes(b"log.retention.ms =  1000 \nnum.partitions\t3\nlog.cleanup.policy = compact , delete\n")
    b = weir_factory(config_file=props)
    with Kreq(b) as k:
        r = k.send("DescribeConfigs", 4, {"IncludeSynonyms": False, "Resources": [
            {"ResourceType": "BROKER", "ResourceName": str(b.node_id),
             "ConfigNames": ["log.retention.ms", "num.partitions", "log.cleanup.policy", "log.retention.minutes",
                             "log.cleaner.io.max.bytes.per.second"]}]})
    [res] = r["Resources"]
    got = {c["Name"]: (c["Value"], c["Source"], c["ConfigType"], c["ReadOnly"]) for c in res["Configs"]}
    assert got == {
        "log.retention.ms": ("1000", "STATIC_BROKER_CONFIG", "LONG", False),
        "num.partitions": ("3", "STATIC_BROKER_CONFIG", "INT", True),
        "log.cleanup.policy": ("compact,delete", "STATIC_BROKER_CONFIG", "LIST", False),
        "log.retention.minutes": (None, "DEFAULT_CONFIG", "INT", True),
        "log.cleaner.io.max.bytes.per.second": ("1.7976931348623157E308", "DEFAULT_CONFIG", "DOUBLE", False),
    }, got
