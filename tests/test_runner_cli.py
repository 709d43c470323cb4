"""``tokconf run`` end to end (subprocess), parity.json against its schema, new cases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from harness.cases.loader import load_case_file
from harness.cases.model import CHECKS

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "harness" / "report" / "parity.schema.json"


def tokconf(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def validate(data: dict) -> None:  # type: ignore[type-arg]
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(data)


CASES = """\
version: 1
cases:
  - id: crlf-word
    text_escaped: 'line\\r\\nnext'
    encodings: [cl100k_base]
  - id: surrogate
    text_escaped: 'a\\ud83d'
    encodings: [cl100k_base]
    expect:
      roundtrip: false
  - id: hello
    text: "hello world"
    encodings: [cl100k_base]
    expect:
      ids: {cl100k_base: [15339, 1917]}
"""


@pytest.fixture(scope="module")
def wrong_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("reports")
    new = tmp_path_factory.mktemp("new-cases")
    proc = tokconf("run", "--plugin", "tests.wrong_adapters:crlf", "--impl", "wrong:crlf", "--out", str(out),
                   "--save-new-cases", str(new))
    return proc, out


def test_the_default_run_fails_a_wrong_plugin_adapter_with_exit_1(wrong_run) -> None:  # type: ignore[no-untyped-def]
    proc, out = wrong_run
    assert proc.returncode == 1, proc.stderr
    assert "UNEXPECTED wrong:crlf (" in proc.stdout
    assert "  id-parity: tokens that decode to other bytes\n" in proc.stdout  # the kind in words
    assert "  minimal input: '\\r\\n'" in proc.stdout
    assert "reproduce: tokconf encode --escapes --plugin tests.wrong_adapters:crlf --impl wrong:crlf " \
           "--impl tiktoken:cl100k_base -- '\\r\\n'" in proc.stdout
    assert "cases      [" in proc.stderr and "generated  [" in proc.stderr  # the progress bar


def test_parity_json_is_valid_and_latest_is_a_copy(wrong_run) -> None:  # type: ignore[no-untyped-def]
    _, out = wrong_run
    runs = sorted(p for p in out.iterdir() if p.name != "latest")
    assert len(runs) == 1
    data = json.loads((runs[0] / "parity.json").read_text(encoding="ascii"))
    validate(data)
    from harness.report.schema import validate_parity

    validate_parity(data)
    assert (out / "latest" / "parity.json").read_bytes() == (runs[0] / "parity.json").read_bytes()
    assert (runs[0] / "parity.html").is_file()
    assert data["run"]["references"] == {"cl100k_base": "tiktoken:cl100k_base"}
    assert data["run"]["generated"] is True
    assert data["environment"]["hypothesis"] == {"profile": "ci", "seed": 0, "max_examples": 300}
    assert data["matrix"]["wrong:crlf"]["id-parity"]["status"] == "unexpected"
    assert data["summary"]["unexpected"] >= 3
    (crlf,) = [d for d in data["divergences"] if d["adapter"] == "wrong:crlf" and d["check"] == "id-parity"]
    assert crlf["input"] == {"text": "\r\n", "escaped": "\\r\\n"}
    assert crlf["outcomes"]["wrong:crlf"] == {"kind": "ok", "ids": [198]}
    assert crlf["pieces"] == {"wrong:crlf": ["␤"], "tiktoken:cl100k_base": ["␍␤"]}
    assert crlf["first_difference"] == 0 and crlf["first_differing_chunk"] == "\r\n"


def test_new_cases_are_valid_case_files(wrong_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proc, _ = wrong_run
    line = next(line for line in proc.stdout.splitlines() if line.startswith("new cases: "))
    path = Path(line[len("new cases: "):])
    cases = load_case_file(path)
    texts = {c.text for c in cases}
    assert "\r\n" in texts
    assert all(c.adapters == ("wrong:crlf", "tiktoken:cl100k_base") for c in cases)
    assert all(c.reference == "tiktoken:cl100k_base" for c in cases)
    assert "# documented:" in path.read_text(encoding="utf-8")


def test_a_clean_run_exits_0_and_keeps_lone_surrogates(tmp_path: Path) -> None:
    cases = tmp_path / "cases.yaml"
    cases.write_text(CASES, encoding="utf-8")
    proc = tokconf("run", "--impl", "tiktoken:cl100k_base", "--cases", str(cases), "--no-generated",
                   "--out", str(tmp_path / "r"), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    data = json.loads((tmp_path / "r" / "latest" / "parity.json").read_text(encoding="ascii"))
    validate(data)
    # every check that compared something agrees; the reference alone compares nothing for
    # id-parity (itself), decode (no probes) or special-policy (no literal in the texts):
    # those cells are empty, never "agree"
    row = data["matrix"]["tiktoken:cl100k_base"]
    assert set(row) == set(CHECKS)
    empty = {"id-parity", "decode", "special-policy"}
    assert {c for c, cell in row.items() if cell["status"] == "empty"} == empty
    assert {cell["status"] for c, cell in row.items() if c not in empty} == {"agree"}
    assert all(cell["inputs"] > 0 for cell in row.values() if cell["status"] == "agree")
    agree = len(CHECKS) - len(empty)
    assert "tiktoken:cl100k_base" in proc.stdout and f"cells: agree {agree}," in proc.stdout
    assert data["run"]["generated"] is False
    assert data["matrix"]["tiktoken:cl100k_base"]["expected"] == {"status": "agree", "inputs": 2, "divergences": []}


@pytest.mark.parametrize("args, message", [
    (["--impl", "nosuch:thing"], "no adapter named 'nosuch:thing'"),
    (["--plugin", "nomodule:x"], "no module named 'nomodule'"),
    (["--reference", "cl100k_base"], "ENCODING=ADAPTER"),
    (["--profile", "fast"], "invalid choice"),
    (["--max-examples", "0"], "--max-examples must be at least 1"),
    (["--cases", "does/not/exist.yaml"], "does/not/exist.yaml:1: (path): expected an existing case file"),
])
def test_usage_and_input_errors_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    proc = tokconf("run", "--no-generated", "--quiet", "--out", str(tmp_path), *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr


def test_a_malformed_case_file_exits_2_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ncases:\n  - id: x\n    text: a\n    colour: red\n", encoding="utf-8")
    proc = tokconf("run", "--cases", str(bad), "--impl", "tiktoken:cl100k_base", "--out", str(tmp_path))
    assert proc.returncode == 2
    assert "bad.yaml:5" in proc.stderr and "'colour' is unknown" in proc.stderr
