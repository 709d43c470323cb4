"""``tokconf report`` and ``tokconf diff`` as a user runs them: subprocesses, files, exit codes."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.report.page import render_report
from harness.report.diff_page import render_diff

FIXTURES = Path(__file__).parent / "data" / "parity"


def tokconf(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True,
                          text=True, encoding="utf-8", timeout=120, cwd=cwd)


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="ascii"))


def write_json(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=True, indent=1), encoding="ascii")
    return path


def test_report_rebuilds_the_identical_page(tmp_path: Path) -> None:
    for name in ("basic", "hostile"):
        page = tmp_path / f"{name}.html"
        result = tokconf("report", FIXTURES / f"{name}.json", "-o", page)
        assert result.returncode == 0, result.stderr
        expected = render_report(fixture(name)).encode("utf-8")
        assert result.stdout == f"wrote {page} ({len(expected)} bytes)\n"
        assert page.read_bytes() == expected
        again = tokconf("report", FIXTURES / f"{name}.json", "-o", page)
        assert again.returncode == 0 and page.read_bytes() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["basic.html", "hostile.html"]  # no temp files left


def test_report_defaults_to_html_next_to_the_json(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "basic.json", tmp_path / "parity.json")
    result = tokconf("report", "parity.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "parity.html").read_bytes() == render_report(fixture("basic")).encode("utf-8")


def test_report_refuses_invalid_input_with_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{\n", encoding="utf-8")
    result = tokconf("report", broken, "-o", tmp_path / "x.html")
    assert result.returncode == 2
    assert result.stderr == (f"tokconf report: error: {broken}: not JSON: Expecting property name enclosed in "
                             "double quotes at line 2, column 1; expected the parity.json that `tokconf run` wrote\n")
    data = fixture("basic")
    data["divergences"][2]["status"] = "fine"
    invalid = write_json(tmp_path / "invalid.json", data)
    result = tokconf("report", invalid, "-o", tmp_path / "x.html")
    assert result.returncode == 2
    assert result.stderr == (f"tokconf report: error: {invalid}: invalid parity.json at $.divergences[2].status: "
                             "found 'fine', expected one of 'documented', 'unexpected', 'stale'\n")
    assert not (tmp_path / "x.html").exists()
    missing = tokconf("report", tmp_path / "nope.json")
    assert missing.returncode == 2 and "nope.json: file not found" in missing.stderr
    same = tokconf("report", invalid, "-o", invalid)
    assert same.returncode == 2


def test_diff_text_and_exit_1_on_new_unexpected(tmp_path: Path) -> None:
    result = tokconf("diff", FIXTURES / "basic.json", FIXTURES / "upgraded.json")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.split("\n")[:-1]
    assert lines[0] == "tokconf diff: run 20261130T071500Z -> run 20261201T071500Z"
    assert "  library tiktoken: 0.14.0 -> 0.15.0" in lines
    assert "  adapter teaching:simple: now unavailable (teaching texts missing: implementations/data/verdict.txt " \
           "not found; reinstall tokconf)" in lines
    assert " ! unexpected bytebpe:cl100k_base x id-parity  \"x\\u3000\\u3000y\"  (d0009)" in lines
    assert "      tiktoken:cl100k_base: [220, 28848, 256] -> [256, 28848, 220]" in lines
    assert lines[-1] == "result: 1 new unexpected or stale divergence(s)"


def test_diff_json_and_html(tmp_path: Path) -> None:
    page = tmp_path / "diff.html"
    result = tokconf("diff", FIXTURES / "basic.json", FIXTURES / "upgraded.json", "--json", "-o", page)
    assert result.returncode == 1, result.stderr
    payload = json.loads(result.stdout)
    assert (payload["exit"], payload["gating"], payload["html"]) == (1, 1, str(page))
    assert {k: len(v) for k, v in payload["divergences"].items()} == {
        "new": 1, "changed": 3, "fixed": 1, "unchecked": 1}
    assert payload["libraries"] == [{"name": "tiktoken", "old": "0.14.0", "new": "0.15.0"}]
    assert payload["summary"]["unexpected"] == {"old": 2, "new": 3}
    assert page.read_text(encoding="utf-8") == render_diff(fixture("basic"), fixture("upgraded"))


def test_diff_exit_0_when_nothing_new_fails(tmp_path: Path) -> None:
    same = tokconf("diff", FIXTURES / "basic.json", FIXTURES / "basic.json")
    assert same.returncode == 0, same.stderr
    assert same.stdout.endswith("unchanged divergences: 8\nresult: no new unexpected or stale divergences\n")
    data = fixture("upgraded")
    fixed = copy.deepcopy(data)
    fixed["divergences"] = [d for d in fixed["divergences"] if d["id"] != "d0009"]
    cell = fixed["matrix"]["bytebpe:cl100k_base"]["id-parity"]
    cell.update(status="agree", divergences=[])
    fixed["summary"]["unexpected"] -= 1
    fixed["summary"]["agree"] += 1
    result = tokconf("diff", write_json(tmp_path / "old.json", data), write_json(tmp_path / "new.json", fixed))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fixed divergences: 1\n" in result.stdout


def test_diff_usage_errors_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 2}', encoding="utf-8")
    result = tokconf("diff", FIXTURES / "basic.json", bad)
    assert result.returncode == 2
    assert result.stderr.startswith(f"tokconf diff: error: {bad}: invalid parity.json at $: missing required key(s) "
                                    "'tool', 'run'")
    assert tokconf("diff", FIXTURES / "basic.json").returncode == 2  # argparse: NEW.json missing
