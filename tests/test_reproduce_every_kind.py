"""Issue 21 item 6: every printed reproduce command exits 1 while its divergence is there.

Run as a user copies them: one command per kind of divergence (check, kind, adapter
family) of a run of every shipped case over every default adapter. Before ``tokconf
call`` the api-surface commands and the one for minbpe's ``AssertionError`` (tiktoken
raises ``ValueError``) exited 0. The command of every fault the selftest catches is
checked in tests/test_selftest.py, on the one selftest run the suite makes.

Measured here: the cases run takes minutes on shared cores; a command as a process 1.2 to
3.3 s of CPU, most of it the process's start, so the first command of each verb runs as a
process and the rest in this one (tests/printed_commands.py). The other phases of a default
run (generated inputs, every token, everyday text, the default long inputs) add no
divergence of their own: every finding there is absorbed by a documented divergence of a
case (all 104 of the README's default run have a case as origin), so they are left out;
the kinds and commands are the same (compared on a default run).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.printed_commands import PrintedCommands

REPO = Path(__file__).resolve().parent.parent


def _tokconf(*args: str, timeout: float = 3600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)




@pytest.fixture(scope="module")
def cases_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("reports")
    done = _tokconf("run", "--no-generated", "--no-every-token", "--no-everyday", "--no-default-long", "--quiet",
                    "--out", str(out))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((out / "latest" / "parity.json").read_text(encoding="ascii"))


def _one_per_kind(divergences: list[dict]) -> dict[tuple[str, str, str], dict]:
    chosen: dict[tuple[str, str, str], dict] = {}
    for d in divergences:
        if d["status"] == "stale":  # not reproduced by definition: its command exits 0
            continue
        family = d["adapter"].split(":")[0]
        kind = d["kind"].split(":")[0] if d["check"] == "api-surface" else d["kind"]
        chosen.setdefault((d["check"], kind, family), d)
    return chosen


def test_every_kind_of_a_runs_divergences_reproduces(cases_run: dict) -> None:
    chosen = _one_per_kind(cases_run["divergences"])
    checks = {check for check, _, _ in chosen}
    # what the test stands on: kinds whose commands used to exit 0 are among them (api-surface
    # ones come from the JavaScript environments where installed; tests/test_call_cmd.py
    # plants its own)
    assert {"error-category", "expected", "special-policy", "round-trip", "id-parity"} <= checks, checks
    # the first command of each verb as a process, the rest in this one (tests/printed_commands.py)
    commands = PrintedCommands(REPO)
    ran = [(key, commands.run(d["reproduce"])) for key, d in sorted(chosen.items())]
    assert {"call", "encode"} <= commands.verbs_run_as_a_process, commands.verbs_run_as_a_process
    failed = [f"{key}: exit {r.code}: {r.command}\n{r.said}" for key, r in ran if r.code != 1]
    assert not failed, "\n".join(failed)


def test_minbpes_assertion_error_is_reproduced_by_its_native_type(cases_run: dict) -> None:
    [d] = [d for d in cases_run["divergences"] if d["adapter"] == "minbpe:cl100k_base" and d["check"] == "expected"
           and d["kind"] == "error:raised:disallowed-special" and d["input"]["text"] == "<|endoftext|>"]
    done = PrintedCommands(REPO).run(d["reproduce"])
    assert done.code == 1
    assert "builtins.AssertionError" in done.stdout and "builtins.ValueError" in done.stdout
