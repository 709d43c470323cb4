"""``tokconf diff`` input by input: two real runs, their outcome logs, planted changes."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CASES = """\
version: 1
cases:
  - id: hello
    text: "hello world"
  - id: literal
    text: "<|endoftext|>!"
"""


def tokconf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=REPO)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    (root / "cases.yaml").write_text(CASES, encoding="utf-8")
    done = tokconf("run", "--impl", "tiktoken:cl100k_base", "--cases", str(root / "cases.yaml"), "--no-generated",
                   "--out", str(root / "out"), "--quiet")
    assert done.returncode == 0, done.stderr
    return root / "out" / "latest"


def test_a_run_keeps_every_inputs_outcomes_beside_its_report(run_folder: Path) -> None:
    data = json.loads((run_folder / "parity.json").read_text(encoding="utf-8"))
    assert data["outcomes"] == {"file": "outcomes.jsonl.gz", "inputs": 2}
    lines = [json.loads(x) for x in gzip.decompress((run_folder / "outcomes.jsonl.gz").read_bytes()).splitlines()]
    by_text = {x["text"]: x for x in lines}
    assert by_text["hello world"]["outcomes"] == {"tiktoken:cl100k_base": {"ok": [15339, 1917]}}
    assert by_text["<|endoftext|>!"]["outcomes"] == {
        "tiktoken:cl100k_base": {"raised": ["disallowed-special", "builtins.ValueError"]}}
    assert by_text["hello world"]["case"] == "hello" and by_text["hello world"]["origin"] == "case"


def _planted(run_folder: Path, target: Path, change) -> Path:
    """A copy of the run whose log has ``change`` applied to each record."""
    target.mkdir()
    (target / "parity.json").write_bytes((run_folder / "parity.json").read_bytes())
    records = [json.loads(x) for x in gzip.decompress((run_folder / "outcomes.jsonl.gz").read_bytes()).splitlines()]
    for record in records:
        change(record)
    (target / "outcomes.jsonl.gz").write_bytes(gzip.compress(b"".join(json.dumps(r).encode() + b"\n" for r in records)))
    return target / "parity.json"


def test_diff_lists_each_input_whose_outcome_changed(run_folder: Path, tmp_path: Path) -> None:
    def older(record: dict) -> None:
        outcome = record["outcomes"]["tiktoken:cl100k_base"]
        if record["text"] == "hello world":
            outcome["ok"] = [15339, 220, 14957]  # other IDs before
        else:
            record["outcomes"]["tiktoken:cl100k_base"] = {"ok": [100257, 0]}  # ok before, raised now

    old = _planted(run_folder, tmp_path / "old", older)
    done = tokconf("diff", str(old), str(run_folder / "parity.json"))
    assert done.returncode == 0  # no new divergence: the diff lists, the gate is `tokconf gate`
    assert "inputs whose outcome changed: 2 (IDs changed 1, ok→raised 1)" in done.stdout
    assert '  [IDs changed] tiktoken:cl100k_base  "hello␠world"' in done.stdout
    assert "      [15339, 220, 14957] -> [15339, 1917]" in done.stdout
    as_json = json.loads(tokconf("diff", "--json", str(old), str(run_folder / "parity.json")).stdout)
    kinds = {(c["kind"], c["input"]) for c in as_json["changed_inputs"]}
    assert kinds == {("IDs changed", "hello world"), ("ok→raised", "<|endoftext|>!")}
    page = tmp_path / "diff.html"
    assert tokconf("diff", str(old), str(run_folder / "parity.json"), "-o", str(page)).returncode == 0
    html = page.read_text(encoding="utf-8")
    assert "Inputs whose outcome changed" in html and "ok→raised" in html
    back = json.loads(tokconf("diff", "--json", str(run_folder / "parity.json"), str(old)).stdout)
    assert {c["kind"] for c in back["changed_inputs"]} == {"IDs changed", "raised→ok"}


def test_a_changed_error_type_is_its_own_kind(run_folder: Path, tmp_path: Path) -> None:
    def other_type(record: dict) -> None:
        outcome = record["outcomes"]["tiktoken:cl100k_base"]
        if "raised" in outcome:
            outcome["raised"] = ["disallowed-special", "builtins.KeyError"]

    old = _planted(run_folder, tmp_path / "old", other_type)
    as_json = json.loads(tokconf("diff", "--json", str(old), str(run_folder / "parity.json")).stdout)
    assert [(c["kind"], c["before"], c["after"]) for c in as_json["changed_inputs"]] == [
        ("error type changed", {"raised": ["disallowed-special", "builtins.KeyError"]},
         {"raised": ["disallowed-special", "builtins.ValueError"]})]
