"""The golden assignments of the server-side assignors are Kafka 4.3.1's.

tests/data/assignor_golden.txt is what Kafka's own UniformAssignor and RangeAssignor produce for
the case table tests/data/assignor_cases.txt (tests/java/AssignorVectors.java); the unit test
AssignorGoldenTest compares weir's assignors with it. Here the file is made again with Kafka's
classes and must equal the committed one, so it can be neither stale nor edited by hand.
"""
from __future__ import annotations

import subprocess

from harness.paths import ROOT, kafka_classpath_file


def test_golden_assignments_are_what_kafkas_assignors_produce(tmp_path):
    subprocess.run([str(ROOT / "tests" / "java" / "build.sh")], check=True)
    cp = kafka_classpath_file().read_text().strip() + ":" + str(ROOT / ".cache" / "java")
    out = tmp_path / "golden.txt"
    cases = ROOT / "tests" / "data" / "assignor_cases.txt"
    r = subprocess.run(["java", "-cp", cp, "AssignorVectors", str(cases), str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    committed = (ROOT / "tests" / "data" / "assignor_golden.txt").read_text()
    made = out.read_text()
    assert made.count("\nstep ") >= 60
    assert made == committed, "tests/data/assignor_golden.txt is stale: regenerate it with AssignorVectors"
