"""The long-input tier: run-aware shrinking, generated case texts, bounded reports, tiktoken's limits."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.cases.loader import CaseFileError, load_cases
from harness.cases.model import GeneratedText
from harness.generate.long_inputs import LongOptions, long_text
from harness.generate.shrink import runs, shrink, shrink_text
from harness.registry import default_registry
from harness.report.bounds import MAX_ITEMS, as_generated, evidence_json, input_json, input_text
from harness.run.runner import Runner
from harness.run.selection import select
from harness.worker.setup import Isolation, WorkerSetup
from tests.wrong_adapters import ENCODING

REPO = Path(__file__).resolve().parent.parent


# -- shrinking long runs ----------------------------------------------------------------------


def counting(predicate):  # type: ignore[no-untyped-def]
    calls: list[int] = []

    def fails(text: str) -> bool:
        calls.append(len(text))
        return predicate(text)

    return fails, calls


def test_a_length_threshold_on_a_million_spaces_is_bisected_in_a_few_dozen_calls() -> None:
    fails, calls = counting(lambda s: s.count(" ") >= 777_777 and s.endswith("x"))
    assert shrink(" " * 1_000_000 + "x", fails) == " " * 777_777 + "x"
    assert len(calls) < 100


def test_a_uniform_run_that_nothing_shorter_reproduces_costs_few_calls() -> None:
    # before the runs pass, ddmin rebuilt the same complements of a uniform run again and
    # again: 20k characters took 10.8 s with a predicate that costs nothing
    for n in (5_000, 10_000, 20_000):
        fails, calls = counting(lambda s, n=n: len(s) >= n)
        assert shrink(" " * n, fails) == "a" * n  # nothing shorter fails; the simplest characters do
        assert len(calls) < 80, (n, len(calls))


def test_periodic_runs_are_found_and_bisected() -> None:
    assert runs("x" + "ab" * 10 + " " * 16) == [(1, "ab", 10), (21, " ", 16)]
    assert runs("abc" * 5) == []  # 15 characters: below a run's minimum
    assert shrink("ab" * 50_000, lambda s: s.count("ab") >= 3000) == "ab" * 3000


def test_the_time_bound_keeps_the_smallest_failing_text_found_and_says_so() -> None:
    def slow(text: str) -> bool:
        time.sleep(0.01)
        return "x" in text

    result = shrink_text("a" * 50 + "x" + "b" * 50, slow, max_seconds=0.05)
    assert result.timed_out
    assert "x" in result.text and len(result.text) < 101


# -- generated case texts ---------------------------------------------------------------------


def test_a_case_names_a_generator_and_a_long_one_must_be_tagged(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text('version: 1\ncases:\n  - id: run\n    text_generated: {before: "a", repeat: "\\t", '
                    'times: 20000, then: "z"}\n    tags: [long]\n', encoding="utf-8")
    [case] = load_cases([good])
    assert case.text == "a" + "\t" * 20000 + "z" and case.long
    assert case.generated == GeneratedText(repeat="\t", times=20000, before="a", then="z")
    bad = tmp_path / "bad.yaml"
    bad.write_text('version: 1\ncases:\n  - id: untagged\n    text_generated: {repeat: " ", times: 10000}\n'
                   '  - id: empty-unit\n    text_generated: {repeat: "", times: 3}\n', encoding="utf-8")
    with pytest.raises(CaseFileError) as info:
        load_cases([bad])
    message = str(info.value)
    assert f"{bad}:6: cases[1].text_generated.repeat" in message  # the schema, before anything else


def test_an_untagged_long_case_is_an_error_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text('version: 1\ncases:\n  - id: fine\n    text: "a"\n  - id: untagged\n'
                   '    text_generated: {repeat: " ", times: 10000}\n', encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"bad.yaml:5: cases\[1\].id \(case 'untagged'\): expected the tag "
                                            r"`long` on a case of 10000 characters"):
        load_cases([bad])


# -- reports stay small -----------------------------------------------------------------------


def test_a_long_run_is_written_as_its_rule_and_read_back_exactly() -> None:
    text = "x" + "\u3000" * 999_999 + "\ud800"
    data = input_json(text)
    assert "text" not in data and data["generated"] == {"before": "x", "repeat": "\u3000", "times": 999_999,
                                                          "then": "\ud800"}
    assert len(data["escaped"]) < 2000 and "…[999801 characters]…" in data["escaped"]
    assert input_text(json.loads(json.dumps(data))) == text
    mixed = "".join(chr(0x4E00 + i % 500) for i in range(20_000))  # long, but no run: kept whole
    assert as_generated(mixed) is None and input_json(mixed)["text"] == mixed
    assert input_json("short") == {"text": "short", "escaped": "short"}


def test_long_evidence_keeps_the_first_entries_and_says_so() -> None:
    ids = list(range(5000))
    shown, truncated = evidence_json({"a": {"kind": "ok", "ids": ids}}, {"a": ["x"] * 5000}, {"a": ["78"] * 5000},
                                     {"a": [{"pair": ["a", "b"]}]}, long_input=True)
    assert shown["outcomes"]["a"] == {"kind": "ok", "ids": ids[:MAX_ITEMS], "ids_total": 5000}
    assert len(shown["pieces"]["a"]) == len(shown["piece_bytes"]["a"]) == MAX_ITEMS
    assert shown["traces"] == {} and truncated is not None and truncated["items"] == MAX_ITEMS
    assert evidence_json({"a": {"kind": "ok", "ids": [1]}}, {}, {}, {}, long_input=False)[1] is None


# -- tiktoken's limits, found by the long tier ------------------------------------------------


@pytest.mark.parametrize("isolate", ["none", "all"])
def test_the_long_tier_reports_tiktokens_failure_on_a_million_spaces(isolate: str) -> None:
    registry = default_registry()
    selected = select(registry, impls=["tiktoken:o200k_base"],
                      isolation=Isolation(mode=isolate, setup=WorkerSetup.from_registry(registry)))  # type: ignore[arg-type]
    try:
        # no shrinking: what is reported here is the outcome on the generated input itself
        runner = Runner(selected, max_shrink_calls=0)
        runner.run_long(LongOptions(kinds=("spaces",), lengths=(1_000_000,)))
        result = runner.finish()
    finally:
        selected.close()
    assert runner.long_reach == {"tiktoken:o200k_base": {"spaces": 1_000_000}}
    [record] = [d for d in result.divergences if d.check == "error-category"]
    assert (record.adapter, record.kind, record.status) == ("tiktoken:o200k_base", "raised:internal-error", "unexpected")
    assert record.text == long_text("spaces", 1_000_000).text()
    outcome = record.evidence.outcomes["tiktoken:o200k_base"]
    assert (outcome.native_type, outcome.category) == ("builtins.ValueError", "internal-error")
    assert "Max stack size exceeded for backtracking" in (outcome.message or "")
    assert (selected.rows["tiktoken:o200k_base"].isolated is not None) == (isolate == "all")


def test_a_finished_run_lets_go_of_its_runner() -> None:
    # the --jobs module kept the last run's runner for the tasks it runs, so in a process
    # that runs more than one run (a pytest worker, the Python API) a finished run's
    # adapters and outcomes lived on: after one input of 10^6 spaces through o200k_base,
    # with the registry and tiktoken's own cache of encodings let go, 299 MB instead of 86
    import gc
    import weakref

    registry = default_registry()
    selected = select(registry, impls=["tiktoken:cl100k_base"],
                      isolation=Isolation(mode="none", setup=WorkerSetup.from_registry(registry)))
    try:
        runner = Runner(selected, max_shrink_calls=0)
        runner.run_long(LongOptions(kinds=("digits",), lengths=(10_000,)))
        runner.finish()
    finally:
        selected.close()
    assert runner.long_reach == {"tiktoken:cl100k_base": {"digits": 10_000}}
    gone = weakref.ref(runner)
    del runner
    gc.collect()
    assert gone() is None, [type(r).__name__ for r in gc.get_referrers(gone())]


def test_every_size_runs_on_every_adapter_a_hang_becomes_a_timeout_and_the_next_size_still_runs() -> None:
    # issue 22: a prediction from the 10^5 timing once skipped 10^6, where tiktoken 0.9.0's
    # o200k_base panics at once; here 10^5 hangs for ever and 10^6 fails fast
    registry = default_registry(plugins=["tests.long_adapters:slow"])
    isolation = Isolation(mode="auto", timeout_s=10.0, setup=WorkerSetup.from_registry(registry))
    selected = select(registry, impls=["tiktoken:cl100k_base", "slow:cl100k_base"], isolation=isolation)
    try:
        runner = Runner(selected, max_shrink_calls=0)
        runner.run_long(LongOptions(kinds=("digits",), lengths=(10_000, 100_000, 1_000_000)))
        # the in-process reference ran the tier in a worker too: under the same timeout
        assert selected.calls["tiktoken:cl100k_base"].batches
        result = runner.finish()
    finally:
        selected.close()
    assert runner.long_reach == {"tiktoken:cl100k_base": {"digits": 1_000_000}, "slow:cl100k_base": {"digits": 1_000_000}}
    assert not [n for n in runner.notes if n.startswith("long inputs:")]
    mine = [d for d in result.divergences if d.adapter == "slow:cl100k_base"]
    by_length = {}
    for record in mine:
        outcome = record.evidence.outcomes["slow:cl100k_base"]
        by_length.setdefault(len(record.text), set()).add((outcome.kind, outcome.native_type))
    assert by_length[100_000] == {("timeout", None)}, by_length
    assert by_length[1_000_000] == {("raised", "builtins.ValueError")}, by_length
    assert 10_000 not in by_length and all(d.status == "unexpected" for d in mine)


def test_an_adapter_that_declares_a_long_limit_skips_longer_sizes_and_the_run_says_so() -> None:
    # issue 20: which long inputs an adapter gets is declared (Capabilities.long_limit),
    # never timed; the planted hang at 10^5 is never reached, and the skip is on record
    from harness.engine.execute import limits_of

    registry = default_registry(plugins=["tests.long_adapters:declared"])
    isolation = Isolation(mode="auto", timeout_s=10.0, setup=WorkerSetup.from_registry(registry))
    selected = select(registry, impls=["tiktoken:cl100k_base", "declared:cl100k_base"], isolation=isolation)
    try:
        runner = Runner(selected, max_shrink_calls=0)
        runner.run_long(LongOptions(kinds=("digits", "cjk"), lengths=(10_000, 100_000)))
        result = runner.finish()
    finally:
        selected.close()
    assert runner.long_reach == {"tiktoken:cl100k_base": {"digits": 100_000, "cjk": 100_000},
                                 "declared:cl100k_base": {"digits": 10_000, "cjk": 10_000}}
    assert [d for d in result.divergences if d.adapter == "declared:cl100k_base"] == []  # no timeout: not asked
    assert [n for n in runner.notes if n.startswith("long inputs:")] == [
        "long inputs: declared:cl100k_base declares it takes at most 10000 characters (long_limit): "
        "tried up to digits 10^4, cjk 10^4"]
    limits = limits_of(result, runner, isolation, shrink_seconds=None)
    assert limits["long_declared"] == {"declared:cl100k_base": 10_000}
    assert limits["long_reach"]["declared:cl100k_base"] == {"digits": 10_000, "cjk": 10_000}


def _declared_as_reference(*others: str) -> tuple[Any, Any]:
    registry = default_registry(plugins=["tests.long_adapters:declared"])
    isolation = Isolation(mode="auto", timeout_s=10.0, setup=WorkerSetup.from_registry(registry))
    selected = select(registry, impls=["declared:cl100k_base", *others], isolation=isolation,
                      references={ENCODING: "declared:cl100k_base"})
    try:
        runner = Runner(selected, max_shrink_calls=0)
        runner.run_long(LongOptions(kinds=("digits",), lengths=(10_000, 100_000)))
        return runner, runner.finish()
    finally:
        selected.close()


def test_a_reference_that_declares_a_limit_stops_there_when_no_adapter_it_meets_takes_more() -> None:
    # the p50k_base group: an npm port is the reference (tiktoken has no vocabulary for
    # it) and every adapter declares at most 10^4; climbing further meets nobody. The
    # planted hang at 10^5 is not reached: no timeout outcome, no divergence
    runner, result = _declared_as_reference()
    assert runner.long_reach == {"declared:cl100k_base": {"digits": 10_000}}
    assert result.divergences == []
    assert [n for n in runner.notes if n.startswith("long inputs:")] == [
        "long inputs: declared:cl100k_base declares it takes at most 10000 characters (long_limit): "
        "tried up to digits 10^4"]
    assert runner.long_declared == {"declared:cl100k_base": 10_000}


def test_a_reference_that_declares_a_limit_still_meets_an_adapter_that_takes_more() -> None:
    # tiktoken takes every size, so the reference climbs past its own limit to meet it at
    # 10^5: the planted hang there becomes the reference's timeout, on record
    runner, result = _declared_as_reference("tiktoken:cl100k_base")
    assert runner.long_reach == {"declared:cl100k_base": {"digits": 100_000},
                                 "tiktoken:cl100k_base": {"digits": 100_000}}
    assert not [n for n in runner.notes if n.startswith("long inputs:")]
    timeouts = {len(d.text) for d in result.divergences
                if d.evidence.outcomes["declared:cl100k_base"].kind == "timeout"}
    assert timeouts == {100_000}


def test_without_isolation_the_long_tier_says_nothing_bounded_its_calls() -> None:
    selected = select(default_registry(), impls=["tiktoken:cl100k_base"], isolation=Isolation(mode="none"))
    try:
        runner = Runner(selected)
        runner.run_long(LongOptions(kinds=("digits",), lengths=(10_000,)))
    finally:
        selected.close()
    assert runner.long_reach == {"tiktoken:cl100k_base": {"digits": 10_000}}
    assert runner.notes == ["long inputs: --no-isolate, so the adapters of this process ran them with no per-call timeout"]


def _run(tmp_path: Path, name: str, cases: str, *flags: str) -> subprocess.Popen[str]:
    (tmp_path / f"{name}.yaml").write_text(cases, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "run", "--impl", "tiktoken:o200k_base", "--cases",
         str(tmp_path / f"{name}.yaml"), "--no-generated", "--out", str(tmp_path / name), "--quiet", *flags],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


DOCUMENTED = """\
version: 1
cases:
  - id: million-spaces
    text_generated: {repeat: " ", times: 999999}
    encodings: [o200k_base]
    tags: [long]
    documented:
      - adapters: [tiktoken:o200k_base]
        check: error-category
        kind: raised:internal-error
        reason: backtracking limit
        source: tests
"""


def test_tokconf_run_long_documents_the_case_in_process_and_isolated_and_writes_a_small_report(tmp_path: Path) -> None:
    undocumented = DOCUMENTED[:DOCUMENTED.index("    documented:")]
    procs = {
        "documented": _run(tmp_path, "documented", DOCUMENTED, "--long", "--isolate"),
        "undocumented": _run(tmp_path, "undocumented", undocumented, "--long", "--shrink-seconds", "1"),
        "not-long": _run(tmp_path, "not-long", DOCUMENTED),
    }
    results = {name: proc.communicate(timeout=600) for name, proc in procs.items()}
    codes = {name: proc.returncode for name, proc in procs.items()}
    assert codes == {"documented": 0, "undocumented": 1, "not-long": 0}, results
    report = tmp_path / "documented" / "latest" / "parity.json"
    data = json.loads(report.read_text(encoding="utf-8"))
    [documented] = [d for d in data["divergences"] if d["check"] == "error-category"]
    assert documented["status"] == "documented"
    assert documented["input"]["generated"] == {"before": "", "repeat": " ", "times": 999_999, "then": ""}
    assert data["adapters"][0]["isolated"].startswith("worker process")
    assert report.stat().st_size < 2_000_000
    out, _ = results["undocumented"]
    assert "raised:internal-error" in out
    # the reproduce command writes the input instead of spelling it out
    assert ("reproduce: python3 -c 'import sys; sys.stdout.buffer.write((\" \" * 999999).encode(\"utf-8\", "
            "\"surrogatepass\"))' | tokconf encode --escapes --impl tiktoken:o200k_base --file -") in out
    not_long = json.loads((tmp_path / "not-long" / "latest" / "parity.json").read_text(encoding="utf-8"))
    assert not_long["divergences"] == []  # the long case did not run without --long


def test_encode_reads_a_million_characters_from_a_file_or_stdin(tmp_path: Path) -> None:
    big = tmp_path / "spaces.txt"
    big.write_text(" " * 999_999, encoding="utf-8")
    from_file = subprocess.run([sys.executable, "-m", "harness", "encode", "--json", "--impl", "tiktoken:o200k_base",
                                "--file", str(big)], capture_output=True, text=True, timeout=300)
    [row] = json.loads(from_file.stdout)["results"]
    assert row["error"]["category"] == "internal-error" and row["error"]["type"] == "builtins.ValueError"
    from_stdin = subprocess.run([sys.executable, "-m", "harness", "encode", "--json", "--impl", "tiktoken:cl100k_base",
                                 "--file", "-"], input="hello\n", capture_output=True, text=True, timeout=300)
    assert json.loads(from_stdin.stdout)["results"][0]["ids"] == [15339, 198]
    ids = subprocess.run([sys.executable, "-m", "harness", "decode", "--json", "--impl", "tiktoken:cl100k_base",
                          "--file", "-"], input="[15339, 198]", capture_output=True, text=True, timeout=300)
    assert json.loads(ids.stdout)["results"][0]["text"] == "hello\n"
