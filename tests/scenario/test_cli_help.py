"""`weir help`, `weir <command> --help` and `weir completion` (issue 17), with the real binary and
no broker: help agrees with --help, unknown commands are bad usage with a hint, and the bash
completion script, sourced as the README says, completes commands, subcommands and flags.
`weir help --man topic create` is a page groff renders (groff-base, scripts/install-test-deps.sh)
without warnings, with its sections and flags."""
from __future__ import annotations

import shutil
import subprocess


from harness.paths import weir_bin


def weir(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(weir_bin()), *args], capture_output=True, text=True, timeout=30)


def test_help_prints_what_the_help_flag_prints():
    for path in ([], ["topic"], ["topic", "create"], ["group", "seek"], ["cluster", "config", "set"],
                 ["completion"]):
        ours = weir("help", *path)
        assert ours.returncode == 0, ours.stderr
        flag = weir(*path, "--help")
        assert flag.returncode == 0, flag.stderr
        assert ours.stdout == flag.stdout, path
        assert f"Usage: {' '.join(['weir', *path])}" in ours.stdout
    listed = weir("help").stdout
    for command in ("serve", "topic", "cluster", "produce", "consume", "group", "txn", "help", "completion"):
        assert f"\n  {command} " in listed, command

    unknown = weir("help", "group", "seeek")
    assert unknown.returncode == 2
    assert unknown.stderr == "error: 'seeek' is not a command of 'weir group'; did you mean 'seek'?\n"
    assert weir("completion", "fish").returncode == 2


def test_bash_completion_from_the_binary_completes_commands_and_flags():
    script = f"""source <({weir_bin()} completion bash)
complete -p weir
for words in "weir gr" "weir group se" "weir group seek g1 --all-g" "weir topic ''"; do
  eval "COMP_WORDS=($words)"; COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMPREPLY=()
  _weir; echo "${{COMPREPLY[*]}}"
done
"""
    res = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        "complete -F _weir weir",
        "group",
        "seek",
        "--all-groups",
        "list create delete describe add-partitions alter-config --help -h",
    ], res.stdout


def test_man_page_renders_with_groff():
    page = weir("help", "--man", "topic", "create")
    assert page.returncode == 0, page.stderr
    assert page.stdout.startswith('.TH "WEIR-TOPIC-CREATE" 1')
    assert weir("help", "--man", "topic", "create").stdout == page.stdout  # the same every time
    groff = shutil.which("groff")
    # groff-base is one of the test dependencies (scripts/install-test-deps.sh): never skipped.
    assert groff is not None, "groff is missing: run scripts/install-test-deps.sh (it installs groff-base)"
    shown = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-P-c", "-P-b", "-P-u"], input=page.stdout,
                           capture_output=True, text=True, timeout=30)
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    text = shown.stdout
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SEE ALSO"):
        assert f"\n{heading}\n" in text, heading
    assert "weir-topic-create - " in text
    assert "weir topic create [OPTIONS] topic" in " ".join(text.split())
    for flag in ("--partitions", "--replication-factor", "--bootstrap", "--output"):
        assert flag in text, flag
    unknown = weir("help", "--man", "topik")
    assert unknown.returncode == 2 and "did you mean 'topic'?" in unknown.stderr
