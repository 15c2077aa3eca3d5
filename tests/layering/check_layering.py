#!/usr/bin/env python3
"""Checks that src/ folders include only the layers below them (DESIGN.md "Layers").

Reads every `#include "folder/..."` in src/<folder>/ and fails, naming file, line and rule, on:
  - an include of a folder that is not in the including folder's allowed list;
  - in the coordinators (src/group, src/txn): headers that do I/O or read a clock.
A folder not in the table is an error too, so a new folder has to declare its place.

  check_layering.py [SRC_DIR]     check a tree (default: the src/ next to this file's tests/)
  check_layering.py --self-test   plant wrong includes in a copy of a tiny tree; each must fail
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

# folder -> the folders it may include (besides itself). main.cpp lives in src/ itself.
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "config": {"base"},
    "protocol": {"base"},
    "storage": {"base", "protocol"},
    "metadata": {"base", "protocol", "config"},
    "group": {"base", "protocol"},
    "txn": {"base", "protocol"},
    "replication": {"base", "config", "protocol", "storage", "metadata"},
    "metrics": {"base"},
    "net": {"base", "metrics"},
    "broker": {"base", "config", "protocol", "storage", "metadata", "group", "txn", "replication", "metrics", "net"},
    "client": {"base", "protocol"},
    # The broker side of a KRaft cluster (metadata follower, lifecycle, controller channel): a
    # client of the controllers, reading metadata records; never the broker it serves.
    "cluster": {"base", "protocol", "client", "metadata"},
    "server": {"base", "config", "protocol", "storage", "metadata", "group", "txn", "replication", "metrics", "net", "broker",
               "client", "cluster"},
    "cli": {"base", "config", "protocol", "client", "server"},
}

# Coordinators are pure state machines: no files, sockets, threads, executors or clocks.
PURE = {"group", "txn"}
IO_HEADERS = re.compile(
    r'#include\s*[<"](fstream|iostream|cstdio|filesystem|thread|mutex|unistd\.h|fcntl\.h|sys/[^>"]+|'
    r'boost/asio[^>"]*|spdlog/[^>"]+|base/clock\.h|base/log\.h)[>"]')
PROJECT_INCLUDE = re.compile(r'^\s*#\s*include\s*"([a-z_]+)/')


def check(src: Path) -> list[str]:
    problems: list[str] = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in {".h", ".cpp", ".hpp", ".cc"} or not path.is_file():
            continue
        rel = path.relative_to(src)
        if len(rel.parts) == 1:
            continue  # src/main.cpp: the executable, may use anything
        folder = rel.parts[0]
        if folder not in ALLOWED:
            problems.append(f"{rel}: folder src/{folder} is not in the layering table (tests/layering)")
            continue
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = PROJECT_INCLUDE.match(line)
            if m and m.group(1) != folder and m.group(1) not in ALLOWED[folder]:
                problems.append(f"{rel}:{lineno}: src/{folder} may not include src/{m.group(1)}: {line.strip()}")
            if folder in PURE and IO_HEADERS.search(line):
                problems.append(f"{rel}:{lineno}: src/{folder} is a pure coordinator; no I/O or clock: {line.strip()}")
    return problems


def self_test() -> int:
    cases = {
        "cli/cmd.cpp": '#include "broker/broker.h"\n',
        "cli/other.cpp": '#include "storage/segment.h"\n',
        "client/conn.cpp": '#include "net/server.h"\n',
        "txn/coordinator.cpp": '#include "storage/partition_log.h"\n',
        "group/coordinator.cpp": "#include <fstream>\n",
        "storage/log.cpp": '#include "broker/partition.h"\n',
        "mystery/x.cpp": '#include "base/bytes.h"\n',
    }
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        good = root / "good"
        (good / "cli").mkdir(parents=True)
        (good / "cli" / "ok.cpp").write_text('#include "client/client.h"\n#include "server/server.h"\n')
        (good / "group").mkdir()
        (good / "group" / "ok.cpp").write_text('#include "protocol/codec.h"\n#include <vector>\n')
        if check(good):
            print(f"self-test: a valid tree was rejected: {check(good)}")
            failures += 1
        for i, (rel, text) in enumerate(cases.items()):
            tree = root / f"bad{i}"
            f = tree / rel
            f.parent.mkdir(parents=True)
            f.write_text(text)
            found = check(tree)
            if not found:
                print(f"self-test: {rel} with {text.strip()!r} was not caught")
                failures += 1
            else:
                print(f"self-test: caught {found[0]}")
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    src = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2] / "src"
    problems = check(src)
    for p in problems:
        print(p)
    print(f"layering: {len(problems)} problem(s) in {src}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
