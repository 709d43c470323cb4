"""Under pytest-xdist one worker builds the suite to collect it; the others read its list.

Every xdist worker collects every test file, and collecting the conformance suite builds
its adapters and generates its inputs (30 s and 1.1 GB for this repository's suite, per
worker). :mod:`harness.pytest.listing` lets the first worker collect and the others read
what it found. The adapter (``tests.test_jobs_workers_end:marked``) writes ``built-PID-N``
each time a process builds it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.pytest.listing import Listed, Listing
from harness.pytest.plugin import UnitItem
from tests.test_jobs_workers_end import MARKS, _Marked

REPO = Path(__file__).resolve().parent.parent


def _pytest(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """pytest on a module that asks for the suite (the marked adapter, in process, and the
    shipped decode probes): (the run, the build marks)."""
    marks = tmp_path / f"marks-{len(list(tmp_path.glob('marks-*')))}"
    marks.mkdir()
    (tmp_path / "test_suite_here.py").write_text(
        "from harness.pytest.plugin import tokconf_suite\ntest_tokconf = tokconf_suite()\n", encoding="utf-8")
    (tmp_path / "tmp").mkdir(exist_ok=True)  # where the workers' list is written (TMPDIR)
    env = {**os.environ, MARKS: str(marks), "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path / "tmp")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path),
         "--tokconf-plugin", "tests.test_jobs_workers_end:marked", "--tokconf-impl", _Marked.name,
         "--tokconf-no-isolate", "--tokconf-no-generated", "--tokconf-cases", str(REPO / "cases" / "decode-probes.yaml"),
         *args, "test_suite_here.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    return done, sorted(p.name for p in marks.glob("built-*"))


def test_two_workers_collect_the_same_items_and_only_one_builds_the_suite(tmp_path: Path) -> None:
    # every item deselected, so no item builds the suite: what builds it is the collection
    # (--collect-only would not start the workers)
    nothing = ("-k", "no_item_has_this_name")
    alone, alone_builds = _pytest(tmp_path, "-n", "0", *nothing)
    assert alone.returncode == 5, alone.stdout[-2000:] + alone.stderr[-2000:]
    assert len(alone_builds) == 1
    together, builds = _pytest(tmp_path, "-n", "2", *nothing)
    assert together.returncode == 5, together.stdout[-2000:] + together.stderr[-2000:]
    # two workers collected the same items (pytest-xdist checks it: "Different tests were
    # collected" fails the run) and one of them built the suite
    assert len(builds) == 1, builds
    # the list is gone with the session
    assert not list((tmp_path / "tmp").glob("tokconf-pytest-*")), list((tmp_path / "tmp").iterdir())


def test_the_items_run_on_a_worker_that_did_not_collect_them(tmp_path: Path) -> None:
    alone, _ = _pytest(tmp_path, "-n", "0")
    together, builds = _pytest(tmp_path, "-n", "2", "--dist", "loadfile")
    assert alone.returncode == together.returncode == 0, together.stdout[-3000:] + together.stderr[-2000:]
    passed = re.findall(r"(\d+) passed", alone.stdout)
    assert passed and int(passed[-1]) > 3 and re.findall(r"(\d+) passed", together.stdout) == passed
    # the collecting worker, and the running one if it is the other
    assert 1 <= len({name.split("-")[1] for name in builds}) <= 2 and len(builds) <= 2, builds


def test_an_item_whose_plan_changed_since_collection_fails_instead_of_running_another_unit() -> None:
    units = [SimpleNamespace(name="vocab[marked:cl100k_base]"), SimpleNamespace(name="vocab[tiktoken:cl100k_base]")]
    suite = SimpleNamespace(units=lambda: units)
    same = SimpleNamespace(suite=suite, listed=Listed("vocab[tiktoken:cl100k_base]", 1))
    assert UnitItem.unit.fget(same) is units[1]  # type: ignore[attr-defined]
    moved = SimpleNamespace(suite=suite, listed=Listed("vocab[tiktoken:cl100k_base]", 0))
    with pytest.raises(RuntimeError, match="the plan changed after collection"):
        UnitItem.unit.fget(moved)  # type: ignore[attr-defined]


def test_a_listing_reads_back_as_written() -> None:
    listing = Listing(missing=(("gone:x", "not installed"),), unavailable=(("gone:x", "not installed"),),
                      items=(Listed("vocab[a]", 0), Listed("case-1", 1, label="sub/f.yaml", path="/c/sub/f.yaml",
                                                          line=7, tags=("long", "surrogates"))))
    assert Listing.from_json(listing.to_json()) == listing
