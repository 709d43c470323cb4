"""The corpus screen: every document runs id-parity, error-category and round-trip; 1 in
``--full-checks-every`` (by a hash of its text) and every document the screen flags run
every check, and each cell counts the documents it compared.

The candidates (:mod:`tests.screen_adapters`) hide a fault from the screen: a streamed
prefix that ends inside ``é`` decodes to nothing instead of U+FFFD. Every document here
holds an ``é``, so every document would show it under every check.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from harness.cases.corpus import DEFAULT_FULL_CHECKS_EVERY, CorpusOptions, Document, document_case, fully_checked

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [f"café n°{i}" for i in range(400)]
#: the first text the default rate picks, and five it does not
SAMPLED = next(t for t in TEXTS if zlib.crc32(t.encode()) % DEFAULT_FULL_CHECKS_EVERY == 0)
SCREENED = [t for t in TEXTS if zlib.crc32(t.encode()) % DEFAULT_FULL_CHECKS_EVERY != 0][:5]


def corpus(tmp_path: Path, texts: list[str]) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    return path


def run(tmp_path: Path, plugin: str, candidate: str, documents: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--plugin", f"tests.screen_adapters:{plugin}", "--impl", candidate,
         "--impl", "test:utf8-bytes", "--reference", "utf8-bytes=test:utf8-bytes", "--no-cases", "--no-generated",
         "--no-everyday", "--no-every-token", "--corpus", str(documents), "--out", str(out), "--quiet", *extra],
        capture_output=True, text=True, cwd=ROOT)
    if done.returncode == 2:
        raise AssertionError(done.stderr)
    return done.returncode, json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))


def inputs(report: dict[str, Any], adapter: str) -> dict[str, int]:
    return {check: cell["inputs"] for check, cell in report["matrix"][adapter].items()}


def cases_of(report: dict[str, Any], adapter: str, check: str) -> set[str]:
    return {d["case"] for d in report["divergences"] if d["adapter"] == adapter and d["check"] == check}


def test_the_rate_picks_documents_by_their_text_alone() -> None:
    assert fully_checked(SAMPLED, 64) and not any(fully_checked(t, 64) for t in SCREENED)
    assert all(fully_checked(t, 1) for t in SCREENED)
    where = [Document(SAMPLED, "a.jsonl", 0, 0), Document(SAMPLED, "b.txt", 7, 900), Document(SCREENED[0], "a", 1, 5)]
    assert [document_case(d).tags for d in where] == [("corpus",), ("corpus",), ("corpus", "screened")]
    assert document_case(where[2], CorpusOptions(full_checks_every=1)).tags == ("corpus",)


def test_a_screened_document_runs_three_checks_and_the_sampled_one_finds_what_they_miss(tmp_path: Path) -> None:
    documents = corpus(tmp_path, [*SCREENED[:2], SAMPLED, *SCREENED[2:]])
    code, report = run(tmp_path, "drops", "test:drops-held-back", documents)
    assert code == 1
    counts = inputs(report, "test:drops-held-back")
    assert (counts["id-parity"], counts["error-category"], counts["round-trip"]) == (6, 6, 6)
    # stream-decode found it on the one document that ran every check, and only there
    assert counts["stream-decode"] == 1 and counts["per-token-decode"] == 1
    assert cases_of(report, "test:drops-held-back", "stream-decode") == {f"corpus:{documents}#2@62"}
    assert report["run"]["executor"]["full_checks_every"] == DEFAULT_FULL_CHECKS_EVERY
    assert any(n.startswith("corpus: every document ran the screen") for n in report["run"]["notes"])


def test_without_the_sample_the_fault_is_missed_and_full_checks_every_1_finds_it(tmp_path: Path) -> None:
    documents = corpus(tmp_path, SCREENED)
    code, report = run(tmp_path, "drops", "test:drops-held-back", documents)
    assert code == 0  # the screen cannot see a streaming fault: that is what the sample is for
    assert inputs(report, "test:drops-held-back")["stream-decode"] == 0
    code, report = run(tmp_path, "drops", "test:drops-held-back", documents, "--full-checks-every", "1")
    assert code == 1
    counts = inputs(report, "test:drops-held-back")
    assert counts["stream-decode"] == 5 and counts["per-token-decode"] == 5 and counts["id-parity"] == 5
    assert report["run"]["executor"]["full_checks_every"] == 1
    assert not any(n.startswith("corpus: every document ran the screen") for n in report["run"]["notes"])


def test_a_document_the_screen_flags_runs_every_check_so_its_second_symptom_shows(tmp_path: Path) -> None:
    flagged = next(t for t in (f"Ωmega {s}" for s in SCREENED) if not fully_checked(t, DEFAULT_FULL_CHECKS_EVERY))
    documents = corpus(tmp_path, [SCREENED[0], flagged, SCREENED[1]])
    code, report = run(tmp_path, "omega", "test:omega-swapped", documents)
    assert code == 1
    where = f"corpus:{documents}#1@{len(json.dumps({'text': SCREENED[0]})) + 1}"
    assert cases_of(report, "test:omega-swapped", "id-parity") == {where}
    assert cases_of(report, "test:omega-swapped", "stream-decode") == {where}
    counts = inputs(report, "test:omega-swapped")
    assert counts["id-parity"] == 3 and counts["stream-decode"] == 1


def test_a_rate_below_one_is_refused_before_anything_runs(tmp_path: Path) -> None:
    documents = corpus(tmp_path, SCREENED)
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--plugin", "tests.screen_adapters:drops",
                           "--impl", "test:drops-held-back", "--corpus", str(documents), "--full-checks-every", "0",
                           "--out", str(tmp_path / "out"), "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert "--full-checks-every 0: give a whole number of at least 1" in done.stderr
    assert not (tmp_path / "out").exists()


def test_jobs_processes_hand_documents_back_packed_and_the_report_is_that_of_one_process(tmp_path: Path) -> None:
    # 100 documents: five tasks of 24, so --jobs 2 runs them in its processes, which pack
    # the outcomes (harness.run.parallel._run_in_child); --jobs 1 merges Outcome objects
    import gzip

    documents = corpus(tmp_path, [f"{t} Ωmega" if n % 7 == 0 else t for n, t in enumerate(TEXTS[:100])])
    seen = []
    for jobs in ("1", "2"):
        code, report = run(tmp_path / jobs, "omega", "test:omega-swapped", documents, "--jobs", jobs)
        folder = tmp_path / jobs / "out" / "latest"
        log = gzip.decompress((folder / report["outcomes"]["file"]).read_bytes())
        seen.append((code, report["matrix"], sorted(d["id"] for d in report["divergences"]), log))
    assert seen[0] == seen[1]
    assert seen[0][0] == 1 and log.count(b'"test:omega-swapped"') == 100


@pytest.mark.parametrize("isolation", ["--no-isolate", "--isolate"])
def test_a_screened_document_is_not_walked_ahead_but_a_flagged_one_runs_api_surface(tmp_path: Path,
                                                                                    isolation: str) -> None:
    # tiktoken walks its API surface (~20 paths, a thread pool per batch path); asked ahead
    # for every document, the walk was 80 % of a --corpus run, though the screen's three
    # checks never read it. A document the screen flags still runs api-surface: its walk
    # is asked when the check asks it (hf encodes a lone surrogate that tiktoken refuses).
    # In process and in workers (which are asked a task's calls ahead in one round trip).
    runs = {"plain": (SCREENED, "1000000"), "all": (SCREENED, "1"),
            "flagged": ([*SCREENED[:2], f"{SCREENED[2]} \ud800"], "1000000")}
    seen = {}
    for name, (texts, rate) in runs.items():
        (tmp_path / name).mkdir()
        out = tmp_path / name / "out"
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run", "--impl", "tiktoken:cl100k_base", "--impl", "hf:cl100k_base",
             "--no-cases", "--no-generated", "--no-everyday", "--no-every-token", isolation, "--jobs", "1",
             "--full-checks-every", rate, "--profile-harness", "--corpus", str(corpus(tmp_path / name, texts)),
             "--out", str(out), "--quiet"],
            capture_output=True, text=True, cwd=ROOT)
        assert done.returncode in (0, 1), done.stderr
        profile = json.loads((out / "latest" / "harness-profile.json").read_text(encoding="utf-8"))
        report = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
        cells, coverage = report["matrix"]["hf:cl100k_base"], report["coverage"]["hf:cl100k_base"]
        # coverage reads back through the pattern only what ran every check (harness.run.screen)
        seen[name] = ("api_surface" in profile["adapter_calls_by_op_s"], cells["api-surface"]["inputs"],
                      cells["error-category"]["status"], coverage["pattern"]["inputs"], coverage["inputs"])
        page = (out / "latest" / "parity.html").read_text(encoding="utf-8")
        assert ("read back on 0 of its 5 inputs" in page) == (name == "plain"), name
    assert seen == {"plain": (False, 0, "agree", 0, 5), "all": (True, 5, "agree", 5, 5),
                    "flagged": (True, 1, "unexpected", 1, 3)}
