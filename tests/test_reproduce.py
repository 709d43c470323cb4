"""Every reproduce command a report prints shows the same divergence again (issue 10).

One run over the deliberately wrong adapters (tests/wrong_adapters.py) and the shipped
cases; then each printed command, for divergences of several kinds, is run as a user
would copy it (each verb's first as a process, the rest through the same ``main`` in this
process: tests/printed_commands.py), and must exit 1 (adapters disagree) and print the
difference. The symptoms below come from the vocabulary, cases and generated phases, so
the run leaves out the phases that would only add more of the same kinds at a cost: every
token and everyday text (146 of its 213 s, measured with --profile-harness), and the
default long inputs (each wrong adapter fails them, and shrinking a 10^5-character finding
proves nothing here; a long input's command is checked below, tests/test_long_inputs.py
runs the phase).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.printed_commands import PrintedCommands

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("reports")
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--plugin", "tests.wrong_adapters:everything",
         "--impl", "minbpe:cl100k_base", "--max-examples", "60", "--no-default-long", "--no-every-token",
         "--no-everyday", "--quiet", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return json.loads((out / "latest" / "parity.json").read_text(encoding="ascii"))


@pytest.fixture(scope="module")
def commands() -> PrintedCommands:
    """The module's printed commands: each verb's first as a process, the rest in process."""
    return PrintedCommands(REPO)


@pytest.mark.parametrize(("adapter", "symptom"), [
    ("wrong:crlf", ("id-parity", "content")),
    ("wrong:rstrip", ("id-parity", "content")),
    ("wrong:always-special", ("special-policy", "violation:default:ok|raised:disallowed-special")),
    ("wrong:per-token", ("round-trip", "text")),
    ("wrong:drop-last", ("vocab-consistency", "segmentation")),
    ("wrong:ltr-merge", ("id-parity", "segmentation")),
])
def test_the_printed_command_reproduces_it(report: dict, commands: PrintedCommands, adapter: str,
                                          symptom: tuple[str, str]) -> None:
    records = [d for d in report["divergences"] if d["adapter"] == adapter and d["status"] == "unexpected"
               and symptom in {(s["check"], s["kind"]) for s in d["symptoms"]}]
    assert records, f"no {symptom} divergence of {adapter}"
    for record in records[:3]:
        proc = commands.run(record["reproduce"])
        assert proc.code == 1, (record["reproduce"], proc.stdout, proc.stderr)
        assert adapter in proc.stdout


def test_a_documented_decode_gap_reproduces_too(report: dict, commands: PrintedCommands) -> None:
    documented = [d for d in report["divergences"] if d["adapter"] == "minbpe:cl100k_base"
                  and d["status"] == "documented" and d["check"] == "decode"]
    assert documented
    for record in documented:
        proc = commands.run(record["reproduce"])
        assert proc.code == 1, (record["reproduce"], proc.stdout, proc.stderr)
        assert "raised unknown-id" in proc.stdout


def test_long_inputs_have_short_commands(report: dict, commands: PrintedCommands) -> None:
    from harness.calls import Calls, InProcess
    from harness.checks.base import ORDINARY, Finding
    from harness.run.evidence import reproduce_command
    from implementations.tiktoken import TiktokenAdapter

    text = " " * 500 + "x"
    calls = Calls(InProcess(TiktokenAdapter("cl100k_base")))
    command = reproduce_command(Finding("tiktoken:cl100k_base", "id-parity", "content", "", text, policy=ORDINARY),
                                calls, calls)
    assert command.endswith("-- '\\{500* }x'") and len(command) < 120, command
    proc = commands.run(command.replace(" -- ", " --json -- ", 1))
    ids = json.loads(proc.stdout)["results"][0]["ids"]
    assert tuple(ids) == tuple(calls.encode(text, ORDINARY).value)  # the short form is the same input
    assert all(len(d["reproduce"]) < 400 for d in report["divergences"])
