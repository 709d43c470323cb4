"""Issue 21 item 6: ``tokconf diff`` compares implementations by content hash, so an
editable install (this checkout: files under git, with a commit) and a regular one (a
wheel's layout in site-packages: no git) of the same commit are the same implementation."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from implementations import gpt2_encoder

REPO = Path(__file__).resolve().parent.parent

PROGRAM = ("import sys; sys.path.insert(0, sys.argv[1]); import harness; "
           "assert harness.__file__.startswith(sys.argv[1]), harness.__file__; "
           "from harness.cli import main; sys.exit(main(sys.argv[2:]))")


def _tokconf(root: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROGRAM, str(root), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_an_editable_and_a_regular_install_of_one_commit_are_one_implementation(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"  # as a wheel lays it out: the cases as package data, no checkout
    for package in ("harness", "implementations"):
        shutil.copytree(REPO / package, site / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    folder = REPO / "cases" / "data" / "gpt2-merges-no-trailing-newline"
    encoding = gpt2_encoder.files_encoding((folder / "encoder.json").read_bytes(),
                                           (folder / "vocab.bpe").read_bytes())
    runs = {}
    for label, root in (("editable", REPO), ("regular", site)):
        out = tmp_path / label
        done = _tokconf(root, "run", "--quiet", "--no-generated", "--encoding", encoding, "--out", str(out),
                        cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        runs[label] = out / "latest" / "parity.json"
    data = {label: json.loads(path.read_text(encoding="ascii")) for label, path in runs.items()}
    files = {label: [f for a in d["adapters"] for f in ((a.get("provenance") or {}).get("files") or [])]
             for label, d in data.items()}
    # what the test stands on: the same bytes, read from a checkout in one run and not in the other
    assert [f["sha256"] for f in files["editable"]] == [f["sha256"] for f in files["regular"]] != []
    assert any(f["git"] for f in files["editable"]) and not any(f["git"] for f in files["regular"])
    done = _tokconf(REPO, "diff", "--json", str(runs["editable"]), str(runs["regular"]), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    diff = json.loads(done.stdout)
    assert [c for c in diff["adapters"] if c["change"] == "implementation"] == []
