"""A corpus run's client keeps no per-document state: its outcomes are spooled to disk.

The spool (harness/report/outcome_spool.py) is checked on its own, with a buffer and a
fan-in small enough that a few inputs go through every merge level, and end to end: a
10^5-document corpus run's client may not peak more than 10 % above a 10^4-document
run's (issue 25). Memory is the client's own high-water mark as its harness-profile.json
gives it (:func:`harness.run.profile.peak_rss_mb`). Not ``wait4``'s ``ru_maxrss``: the
kernel carries a parent's peak into the child it starts, so in a pytest worker that had
run other tests both runs "peaked" at the worker's own peak, and the ratio was 1.0
whatever the client held. No time is asserted.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from harness.cases.model import Policy
from harness.outcomes import Outcome
from harness.report.outcome_log import write_outcome_log
from harness.report.outcome_spool import OutcomeSpool, record_of
from tests.dask_corpus import write_corpus

REPO = Path(__file__).resolve().parent.parent


def _entry(origin: str, case: str, **outcomes: list[int]) -> dict:
    return {"origin": origin, "case": case, "outcomes": {a: Outcome.ok(ids) for a, ids in outcomes.items()}}


def _log(path: Path) -> list[dict]:
    with gzip.open(path, "rb") as handle:
        return [json.loads(line) for line in handle]


def test_a_spooled_log_equals_the_in_memory_log(tmp_path: Path) -> None:
    policy = Policy()
    # 200 documents, 37 distinct; each answered by one adapter, so a document's outcomes
    # are the union of records that reach every level of the merge
    corpus = [((f"doc {n % 37}\ud800", policy), _entry("corpus", f"c#{n}", **{"th"[n % 2]: [n % 37]}))
              for n in range(200)]
    # phases after the corpus: one input the corpus also had, one of their own
    later = [(("doc 5\ud800", policy), _entry("generated", "g", x=[5])),
             (("zz", policy), _entry("generated", "g", x=[9]))]
    spool = OutcomeSpool(tmp_path / "spool", buffer=3, fan_in=2)  # every level of the merge is used
    for key, entry in corpus:
        spool.add(record_of(*key, entry))
    assert max(run.level for run in spool.runs) >= 3
    assert len(spool.runs) <= 2 * (max(run.level for run in spool.runs) + 1), "at most fan_in runs per level"
    write_outcome_log(tmp_path / "spooled.gz", dict(later), spooled=spool)
    expected: dict = {}  # what Runner.apply keeps in memory, in the same order
    for key, entry in [*corpus, *later]:
        expected.setdefault(key, {**entry, "outcomes": {}})["outcomes"].update(entry["outcomes"])
    write_outcome_log(tmp_path / "memory.gz", expected)
    spooled = _log(tmp_path / "spooled.gz")
    assert spooled == _log(tmp_path / "memory.gz")
    assert len(spooled) == 38
    five = next(r for r in spooled if r["text"] == "doc 5\ud800")
    assert (five["origin"], five["case"]) == ("corpus", "c#5")
    assert five["outcomes"] == {"h": {"ok": [5]}, "t": {"ok": [5]}, "x": {"ok": [5]}}
    assert not (tmp_path / "spool").exists()


def test_an_input_met_twice_in_one_buffer_is_one_line_with_its_adapters_in_order(tmp_path: Path) -> None:
    # lines are copied into the log as they are: one combined in the buffer is made again,
    # with the first record's origin and the adapters sorted as every other line has them
    from harness.report.outcome_spool import line_key, pack_inputs, unpack_inputs

    policy = Policy()
    spool = OutcomeSpool(tmp_path / "spool")
    spool.add(record_of("x", policy, _entry("corpus", "c#0", z=[1])))
    packed = pack_inputs({("x", policy): _entry("corpus", "c#9", a=[2])})
    for (text, _), described, line in unpack_inputs(packed):  # as a Dask worker's record arrives
        spool.add_line((text, described), line)
    write_outcome_log(tmp_path / "log.gz", {}, spooled=spool)
    with gzip.open(tmp_path / "log.gz", "rb") as handle:
        lines = handle.read().split(b"\n")
    assert lines[0] == (b'{"text":"x","policy":"allowed={} disallowed=all","origin":"corpus","case":"c#0",'
                        b'"outcomes":{"a":{"ok":[2]},"z":{"ok":[1]}}}')
    assert line_key(lines[0]) == ("x", "allowed={} disallowed=all") and lines[1:] == [b""]


def test_a_long_input_is_written_one_outcome_at_a_time(tmp_path: Path) -> None:
    """The log line of an input with ~10^5 IDs per adapter is the one-shot JSON line, byte
    for byte, without holding that line and every adapter's IDs as lists at once (issue 25:
    90 MB of a default run's report phase)."""
    import tracemalloc

    from harness.report.outcome_spool import record_line

    text = "token " * 50_000
    # six adapters with IDs of their own, four sharing the reference's object (agreement)
    shared = Outcome.ok(tuple(range(1000, 101_000)))
    outcomes = {f"own{n}": Outcome.ok(tuple(range(n, n + 100_000))) for n in range(6)}
    outcomes.update({f"same{n}": shared for n in range(4)})
    outcomes["raised"] = Outcome(kind="raised", category="value-error", native_type="ValueError")
    inputs = {(text, Policy()): {"origin": "long", "case": None, "outcomes": outcomes}}
    tracemalloc.start()
    try:
        write_outcome_log(tmp_path / "log.gz", inputs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (line,) = gzip.open(tmp_path / "log.gz", "rb").read().split(b"\n")[:-1]
    assert line + b"\n" == record_line(record_of(text, Policy(), inputs[(text, Policy())]))
    assert json.loads(line)["outcomes"]["same3"] == {"ok": list(range(1000, 101_000))}
    # the one-shot line is 6.2 MB; with it and every outcome as a list at once, 20.7 MB is traced (5.2 MB here)
    assert len(line) > 6_000_000
    assert peak < 10_000_000, f"writing the log traced {peak / 1e6:.1f} MB"


def _client_run(tmp_path: Path, documents: int) -> tuple[dict, Path]:
    """A corpus run of ``documents``: its harness-profile.json and its run folder."""
    corpus = write_corpus(tmp_path / f"corpus-{documents}.jsonl", documents)
    out = tmp_path / f"out-{documents}"
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--plugin", "tests.bytes_adapters:adapters",
         "--impl", "test:utf8-bytes",
         "--no-isolate", "--no-cases", "--no-generated", "--no-every-token", "--executor", "local",
         "--corpus", str(corpus), "--out", str(out), "--quiet", "--profile-harness"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    folder = next(p for p in out.iterdir() if p.name != "latest")
    return json.loads((folder / "harness-profile.json").read_text(encoding="utf-8")), folder


def test_the_client_peak_does_not_grow_with_the_corpus(tmp_path: Path) -> None:
    small_run, _ = _client_run(tmp_path, 10**4)
    profile, folder = _client_run(tmp_path, 10**5)
    small, large = small_run["peak_rss_mb"], profile["peak_rss_mb"]
    assert large <= 1.10 * small, f"10^5 documents peaked at {large} MB, 10^4 at {small} MB"
    data = json.loads((folder / "parity.json").read_text(encoding="utf-8"))
    assert data["run"]["executor"]["documents"] == 10**5
    texts = {json.loads(line)["text"] for line in (tmp_path / f"corpus-{10**5}.jsonl").open(encoding="utf-8")}
    assert data["outcomes"]["inputs"] == len(texts)  # every distinct document, once
    assert not (folder / "outcomes.spool").exists()
    assert list(profile["phases_s"]) == ["select", "vocab", "cases", "corpus", "generated", "finish", "report"]


def test_packed_inputs_the_runner_holds_come_back_as_entries_and_the_rest_is_spooled(tmp_path: Path) -> None:
    # a document whose text a case already ran stays in memory, combined by Runner.apply
    from harness.report.outcome_spool import pack_inputs

    policy = Policy()
    spool = OutcomeSpool(tmp_path / "spool")
    packed = pack_inputs({("case text", policy): _entry("corpus", "c#0", t=[1, 2]),
                          ("new text", policy): _entry("corpus", "c#1", t=[3])})
    rest = spool.add_packed(packed, {("case text", policy): _entry("case", "k", h=[1, 2])})
    assert rest == {("case text", policy): {"origin": "corpus", "case": "c#0", "outcomes": {"t": Outcome.ok((1, 2))}}}
    assert [(r["text"], r["case"], r["outcomes"]) for r in spool.records()] == [("new text", "c#1", {"t": {"ok": [3]}})]
