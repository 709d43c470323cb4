"""Goldens: the file format, snapshot and gate from the command line, a SIGKILL mid-write,
and the pytest options. Real tiktoken, real subprocesses."""

from __future__ import annotations

import gzip
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.golden.format import GoldenAdapter, GoldenError, GoldenHeader, GoldenWriter, read_golden
from harness.outcomes import Outcome
from tests.signal_state import when_signalled

REPO = Path(__file__).resolve().parents[1]


def tokconf(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=REPO,
                          **kwargs)


def header(*names: str) -> GoldenHeader:
    return GoldenHeader(adapters=tuple(GoldenAdapter(n, "r50k_base", "tiktoken", "0.14.0", "",
                                                     {"n_vocab": Outcome.ok(50257)}) for n in names),
                        vocabularies={"vocab.bpe": "1ce1"}, inputs={"cases": "shipped"}, created="now")


def test_the_format_round_trips_exactly_and_stores_equal_outcomes_once(tmp_path: Path) -> None:
    path = tmp_path / "g.tokconf"
    text = "a\ud800b"  # a lone surrogate survives
    raw = text.encode("utf-8", "surrogatepass")
    outcomes = {"x:gpt2": {"encode[default]": Outcome.ok((64, 4210, 65)), "encode[all]": Outcome.ok((64, 4210, 65)),
                           "decode_bytes": Outcome.ok(raw), "decode[replace]": Outcome.ok("a\ufffdb"),
                           "decode_with_offsets": Outcome.ok((text, (0, 1, 2))),
                           "decode[strict]": Outcome.raised("invalid-utf8", "builtins.UnicodeDecodeError", "at 1")}}
    with GoldenWriter(path, header("x:gpt2")) as writer:
        writer.add("case:one", text, outcomes)
        writer.add("case:two", "", {"x:gpt2": {"encode[default]": Outcome.ok(())}})
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    first = json.loads(lines[1])
    assert len(first["values"]) == 5  # encode[default] and encode[all] share one
    assert {"ok": {"=": "bytes"}} in first["values"]  # the input's own bytes are not stored again
    assert json.loads(lines[-2]) == {"end": 2}
    head, inputs = read_golden(path)
    assert [a.name for a in head.adapters] == ["x:gpt2"] and head.adapters[0].attributes["n_vocab"].value == 50257
    got = list(inputs)
    assert [(g.source, g.text) for g in got] == [("case:one", text), ("case:two", "")]
    restored = got[0].outcomes["x:gpt2"]
    assert restored["decode_with_offsets"].value == (text, (0, 1, 2))
    assert restored["decode_bytes"].value == raw
    # messages are not kept: they vary; kind, category and native type are
    assert restored["decode[strict]"] == Outcome(kind="raised", category="invalid-utf8",
                                                 native_type="builtins.UnicodeDecodeError")
    assert {p: o.value for p, o in restored.items() if o.is_ok} == {
        p: o.value for p, o in outcomes["x:gpt2"].items() if o.is_ok}


def test_values_made_from_earlier_ones_are_stored_as_references(tmp_path: Path) -> None:
    path = tmp_path / "g.tokconf"
    outcomes = {"x:gpt2": {"encode[all]": Outcome.ok((7, 8, 7)), "encode_batch[all]": Outcome.ok(((7, 8, 7),)),
                           "encode_single_token[pieces]": Outcome.ok((7, 8))}}
    with GoldenWriter(path, header("x:gpt2")) as writer:
        writer.add("case:one", "aba", outcomes)
    stored = json.loads(gzip.decompress(path.read_bytes()).split(b"\n")[1])["values"]
    assert stored == [{"ok": [7, 8, 7]}, {"wrap": 0}, {"distinct": 0}]
    (item,) = list(read_golden(path)[1])
    assert {p: o.value for p, o in item.outcomes["x:gpt2"].items()} == {p: o.value for p, o in outcomes["x:gpt2"].items()}


def test_a_golden_without_its_trailer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.tokconf"
    with GoldenWriter(path, header("x:gpt2")) as writer:
        writer.add("case:one", "hi", {"x:gpt2": {"encode[default]": Outcome.ok((5303,))}})
    lines = gzip.decompress(path.read_bytes()).split(b"\n")
    path.write_bytes(gzip.compress(b"\n".join(lines[:2]) + b"\n"))
    _, inputs = read_golden(path)
    with pytest.raises(GoldenError, match="ends without its trailer after 1 inputs: it was cut short"):
        list(inputs)
    path.write_bytes(gzip.compress(b'{"format": "something else"}\n'))
    with pytest.raises(GoldenError, match="is not a tokconf golden"):
        read_golden(path)


def test_an_exception_while_writing_keeps_the_previous_golden(tmp_path: Path) -> None:
    path = tmp_path / "g.tokconf"
    path.write_bytes(b"previous")
    with pytest.raises(RuntimeError):
        with GoldenWriter(path, header("x:gpt2")) as writer:
            writer.add("case:one", "hi", {"x:gpt2": {}})
            raise RuntimeError("stop")
    assert path.read_bytes() == b"previous"
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("golden") / "g.tokconf"
    done = tokconf("snapshot", "--impl", "tiktoken:gpt2", "--no-cases", "--max-examples", "20", "-o", str(path),
                   "--quiet")
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and "tiktoken:gpt2" in done.stdout
    return path


def test_gate_passes_on_the_same_release(golden: Path) -> None:
    done = tokconf("gate", str(golden), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "result: no change against the golden" in done.stdout


def _tampered(golden: Path, target: Path) -> str:
    """A copy of ``golden`` whose first generated input's encode[default] IDs were changed."""
    head, inputs = read_golden(golden)
    changed = ""
    with GoldenWriter(target, head) as writer:
        for item in inputs:
            outcomes = {a: dict(p) for a, p in item.outcomes.items()}
            if not changed and outcomes["tiktoken:gpt2"]["encode[default]"].is_ok and item.text:
                outcomes["tiktoken:gpt2"]["encode[default]"] = Outcome.ok((1, 2, 3))
                changed = item.source
            writer.add(item.source, item.text, outcomes)
    return changed


def test_gate_lists_a_changed_path_in_text_json_and_page(golden: Path, tmp_path: Path) -> None:
    target = tmp_path / "t.tokconf"
    source = _tampered(golden, target)
    page = tmp_path / "gate.html"
    done = tokconf("gate", str(target), "--quiet", "-o", str(page))
    assert done.returncode == 1
    assert "changes by kind: IDs changed 1" in done.stdout
    assert f"[IDs changed] tiktoken:gpt2 encode[default]  {source}" in done.stdout
    assert "      before: [1, 2, 3]" in done.stdout
    as_json = json.loads(tokconf("gate", str(target), "--json").stdout)
    assert as_json["exit"] == 1 and as_json["by_kind"] == {"IDs changed": 1}
    (change,) = as_json["changes"]
    assert (change["path"], change["source"], change["before"]) == ("encode[default]", source, {"ok": [1, 2, 3]})
    html = page.read_text(encoding="utf-8")
    assert "<h1>tokconf gate: 1 change(s)</h1>" in html and "<script" not in html


def test_gate_without_a_golden_says_how_to_make_one(tmp_path: Path) -> None:
    done = tokconf("gate", str(tmp_path / "none.tokconf"))
    assert done.returncode == 2
    assert f"make it with `tokconf snapshot -o {tmp_path / 'none.tokconf'}`" in done.stderr


def test_a_sigkill_mid_write_leaves_the_previous_golden_intact(golden: Path, tmp_path: Path) -> None:
    import random

    target = tmp_path / "g.tokconf"
    target.write_bytes(golden.read_bytes())
    before = target.read_bytes()
    pipe = tmp_path / "corpus.fifo"
    os.mkfifo(pipe)  # the corpus is fed by this test: the snapshot is mid-write while we hold it open
    proc = subprocess.Popen([sys.executable, "-m", "harness", "snapshot", "--impl", "tiktoken:gpt2", "--no-cases",
                             "--no-generated", "--corpus", str(pipe), "--split", "blank-line", "-o", str(target),
                             "--quiet"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    words = random.Random(1).choices(["alpha", "beta", "gamma", "delta", "über", "数据", " ", "42", "\t"], k=400_000)

    def written() -> bool:
        return any(p.name.endswith(".tmp") and p.stat().st_size > 0 for p in tmp_path.iterdir())

    try:
        with open(pipe, "w", encoding="utf-8") as feed:  # opens once the snapshot reads the corpus
            deadline = time.monotonic() + 300
            for n in range(0, len(words), 40):  # documents that compress poorly, until bytes reach the disk
                feed.write(" ".join(words[n:n + 40]) + "\n\n")
                if n % 4000 == 0:
                    feed.flush()
                    if written() or proc.poll() is not None or time.monotonic() > deadline:
                        break
            assert written(), "the snapshot never started writing its golden"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    except BrokenPipeError:
        pass
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert target.read_bytes() == before
    head, inputs = read_golden(target)
    assert [a.name for a in head.adapters] == ["tiktoken:gpt2"]
    assert len(list(inputs)) > 20  # valid to its trailer
    assert tokconf("gate", str(target), "--quiet").returncode == 0


def test_pytest_gates_on_a_golden_and_rewrites_it(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                  golden: Path) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pytester.makepyfile(test_theirs="def test_theirs():\n    assert True\n")
    missing = pytester.path / "new.tokconf"
    result = pytester.runpytest_subprocess("--tokconf-golden", str(missing))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*no golden at {missing}: make it with `tokconf snapshot -o {missing}`*"])
    tampered = pytester.path / "t.tokconf"
    _tampered(golden, tampered)
    result = pytester.runpytest_subprocess("--tokconf-golden", str(tampered))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*[[]IDs changed[]] tiktoken:gpt2 encode[[]default[]]*", "*before: [[]1, 2, 3[]]*"])
    pytester.runpytest_subprocess("--tokconf-golden", str(tampered), "--tokconf-update-golden").assert_outcomes(passed=2)
    pytester.runpytest_subprocess("--tokconf-golden", str(tampered)).assert_outcomes(passed=2)
    assert read_golden(tampered)[0].adapters[0].name == "tiktoken:gpt2"


def test_long_cases_join_a_snapshot_only_with_long_inputs_that_reach_their_length() -> None:
    from harness.cases.loader import load_cases
    from harness.golden.inputs import case_inputs

    long_cases = {f"case:{c.id}": len(c.text) for c in load_cases() if c.long}
    assert long_cases and max(long_cases.values()) >= 1_000_000
    plain = {i.source for i in case_inputs()}
    assert plain and not plain & set(long_cases)
    up_to = {i.source for i in case_inputs(max_long=10_000)} & set(long_cases)
    assert up_to == {name for name, n in long_cases.items() if n <= 10_000}
    assert {i.source for i in case_inputs(max_long=1_000_000)} >= set(long_cases)


def _noisy(golden: Path, target: Path) -> tuple[str, str, int]:
    """A copy of ``golden`` as an old release without numpy would have made it: every
    encode_to_numpy[all] unsupported; one early input whose encode_single_token[text] failed
    otherwise; one late input whose encode[default] gave other IDs."""
    head, stream = read_golden(golden)
    inputs = list(stream)
    items = [item for item in inputs if item.text]
    early = next(i.source for i in items if i.outcomes["tiktoken:gpt2"]["encode_single_token[text]"].kind == "raised")
    late = items[-1].source
    missing = Outcome.raised("unsupported", "builtins.ModuleNotFoundError", "No module named 'numpy'")
    numpy_paths = 0
    with GoldenWriter(target, head) as writer:
        for item in inputs:
            outcomes = {a: dict(p) for a, p in item.outcomes.items()}
            paths = outcomes["tiktoken:gpt2"]
            for path in [p for p in paths if p.startswith("encode_to_numpy[all]")]:
                paths[path] = missing
                numpy_paths += 1
            if item.source == early:  # it raised, as it should: now another kind of failure
                paths["encode_single_token[text]"] = Outcome.raised("internal-error", "builtins.RuntimeError", "planted")
            if item.source == late:
                paths["encode[default]"] = Outcome.ok((1, 2, 3))
            writer.add(item.source, item.text, outcomes)
    return early, late, numpy_paths


def test_gate_lists_changed_answers_first_and_a_path_that_appeared_as_one_line(golden: Path, tmp_path: Path) -> None:
    # issue 22: 200 rows of "now supported encode_to_numpy" came first and the real
    # changes only under "... and 2857 more"
    target = tmp_path / "noisy.tokconf"
    early, late, numpy_paths = _noisy(golden, target)
    assert numpy_paths > 10
    data = json.loads(tokconf("gate", str(target), "--json").stdout)
    assert data["exit"] == 1
    rows = [(c["kind"], c["source"], c["path"]) for c in data["changes"]]
    # the late input's changed IDs before the early input's changed failure; nothing else
    assert rows == [("IDs changed", late, "encode[default]"), ("category changed", early, "encode_single_token[text]")]
    assert [c["severity"] for c in data["changes"]] == [0, 1]
    (summary,) = data["summaries"]
    assert (summary["kind"], summary["path"], summary["inputs"]) == ("now supported", "encode_to_numpy[all]", numpy_paths)
    assert summary["why"] == "builtins.ModuleNotFoundError"  # a golden keeps the type, not the message
    assert data["changes_total"] == 2 + numpy_paths
    text = tokconf("gate", str(target), "--quiet").stdout
    assert text.index("[IDs changed]") < text.index("[category changed]") < text.index("[now supported]")
    assert text.count("[now supported]") == 1 and "not documented by a shipped case" in text
    # each change's command re-runs that input and path alone, and exits 1 while it differs
    for change in data["changes"]:
        command = shlex.split(change["command"])
        assert command[:3] == ["tokconf", "gate", str(target)]
        again = tokconf(*command[1:], "--json")
        assert again.returncode == 1, again.stderr
        assert [(c["source"], c["path"]) for c in json.loads(again.stdout)["changes"]] == [
            (change["source"], change["path"])]
    assert tokconf("gate", str(golden), "--input", late, "--path", "encode[default]", "--quiet").returncode == 0


def test_a_change_a_shipped_case_documents_says_so() -> None:
    from harness.cases.loader import load_cases
    from harness.golden.known import known_change

    cases = load_cases()
    fix = known_change(cases, "tiktoken@0.9.0:cl100k_base", "tiktoken:cl100k_base", "_encode_bytes", "\ud83d",
                       "cl100k_base")
    assert fix == {"case": "tiktoken-0.9.0-encode-bytes-invalid-start-cl100k", "as": "known fix"}
    numpy = known_change(cases, "tiktoken@0.10.0:o200k_base", "tiktoken:o200k_base", "encode_to_numpy[ordinary]",
                         "a<|endoftext|>", "o200k_base")
    assert numpy == {"case": "tiktoken-0.9-0.10-encode-to-numpy-special-literal-o200k", "as": "known fix"}
    # 0.11.0 never had that bug; and an input outside the documented domain is not known
    assert known_change(cases, "tiktoken@0.11.0:o200k_base", "tiktoken:o200k_base", "encode_to_numpy[ordinary]",
                        "a<|endoftext|>", "o200k_base") is None
    assert known_change(cases, "tiktoken@0.9.0:cl100k_base", "tiktoken:cl100k_base", "_encode_bytes", "a\ud83d",
                        "cl100k_base") is None


def _contents(path: Path) -> tuple[list, list]:
    head, inputs = read_golden(path)
    adapters = [(a.name, a.version, a.attributes) for a in head.adapters]
    return adapters, [(i.source, i.text, i.outcomes) for i in inputs]


def test_a_snapshot_stopped_by_sigterm_keeps_a_partial_golden_that_resume_completes(tmp_path: Path) -> None:
    # issue 22: Ctrl-C printed a traceback and kept nothing
    flags = ["snapshot", "--impl", "tiktoken:gpt2", "--max-examples", "200"]
    whole = tmp_path / "whole.tokconf"
    assert tokconf(*flags, "-o", str(whole), "--quiet").returncode == 0
    golden = tmp_path / "g.tokconf"
    process = subprocess.Popen([sys.executable, "-m", "harness", *flags, "-o", str(golden)], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = ""
    while "snapshot: 20 inputs" not in seen:  # progress comes input by input
        char = process.stderr.read(1)
        assert char, seen
        seen += char
    state = when_signalled(process.pid)
    process.send_signal(signal.SIGTERM)
    _, rest = process.communicate(timeout=600)
    assert process.returncode == 128 + signal.SIGTERM, f"{state}\n{seen}{rest}"
    assert "--resume" in rest and not golden.exists()
    partial = Path(f"{golden}.partial")
    _, kept = _contents(partial)
    _, expected = _contents(whole)
    assert 20 <= len(kept) < len(expected) and kept == expected[:len(kept)]
    # another command cannot resume it
    other = tokconf("snapshot", "--impl", "tiktoken:gpt2", "--max-examples", "50", "-o", str(golden), "--resume")
    assert other.returncode == 2 and "input options" in other.stderr
    done = tokconf(*flags, "-o", str(golden), "--resume", "--quiet")
    assert done.returncode == 0, done.stderr
    assert _contents(golden) == _contents(whole) and not partial.exists()
    assert tokconf("gate", str(golden), "--quiet").returncode == 0


def test_snapshot_and_gate_name_the_long_input_under_way(tmp_path: Path) -> None:
    # issue 22: a snapshot sat at "600 inputs" for 19 minutes; the line now says which
    # input holds it (from 10^4 characters on), before its paths are called
    path = tmp_path / "long.tokconf"
    done = tokconf("snapshot", "--impl", "tiktoken:gpt2", "--no-cases", "--no-generated", "--long",
                   "--long-sizes", "10000", "-o", str(path))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.split("\n")  # text mode reads each "\r" redraw as a line of its own
    assert any(line.startswith("snapshot: 0 inputs; now long:spaces*10000 (10,000 characters)") for line in lines)
    assert any(line.startswith("snapshot: 7 inputs; now long:mixed*10000 (10,000 characters)") for line in lines)
    assert lines[-2].rstrip() == "snapshot: 8 inputs"  # the last input done, nothing under way
    gated = tokconf("gate", str(path))
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert "gate: 7 inputs; now long:mixed*10000 (10,000 characters)" in gated.stderr
    # the gate redraws every 100 inputs, but a name on the line is cleared when its input is done
    assert gated.stderr.split("\n")[-2].rstrip() == "gate: 8 inputs"


def test_a_walk_that_timed_out_in_the_golden_is_one_answer_that_changed(golden: Path, tmp_path: Path) -> None:
    # issue 22: tiktoken 0.9.0's whole API surface on a million characters times out; its
    # golden holds one "api_surface: timeout" path, which the gate read as "path removed"
    # plus twenty "path added" rows, below every other kind, where it is timeout→ok
    head, stream = read_golden(golden)
    inputs = list(stream)
    slow = next(item for item in inputs if item.text).source
    target = tmp_path / "timed-out.tokconf"
    with GoldenWriter(target, head) as writer:
        for item in inputs:
            outcomes = item.outcomes
            if item.source == slow:
                outcomes = {"tiktoken:gpt2": {"api_surface": Outcome.timeout(60.0)}}
            writer.add(item.source, item.text, outcomes)
    data = json.loads(tokconf("gate", str(target), "--json").stdout)
    assert data["exit"] == 1
    (change,) = data["changes"]
    assert (change["kind"], change["source"], change["path"], change["severity"]) == ("timeout→ok", slow, "api_surface", 0)
    again = tokconf(*shlex.split(change["command"])[1:], "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["changes"][0]["kind"] == "timeout→ok"


def test_inputs_recorded_in_chunks_get_their_own_records_in_order() -> None:
    """``record_here`` walks 64 inputs' API surfaces at once (tiktoken starts a thread pool
    per batch call: a corpus snapshot of 3,000 short documents took 21 s of CPU one input
    at a time, 7 s so): each input's record is still the one ``record`` makes of it alone,
    in order, across chunks, a ``None`` input and a long one that ends its chunk, and a
    drop-in's batch fault shows in the same records."""
    from harness.calls import Calls, InProcess
    from harness.golden.snapshot import RECORD_CHUNK, record, record_here
    from harness.registry import default_registry
    from harness.selftest.faults_dropin import DROPIN_FAULTS

    [fault] = [f for f in DROPIN_FAULTS if f.fault == "dropin-decode-batch-drops-last-char"]
    calls = {"tiktoken": Calls(InProcess(default_registry().get("tiktoken:cl100k_base"))),
             "faulty": Calls(InProcess(fault()))}
    texts: list[str | None] = [f"document {i}: a<|endoftext|>b \ud800 {'é' * (i % 5)}" for i in range(2 * RECORD_CHUNK + 9)]
    texts[5], texts[RECORD_CHUNK + 3] = None, "long " * 2_000
    items = [(i, t) for i, t in enumerate(texts)]
    together = list(record_here(calls, iter(items)))
    alone = [(i, record(calls, t) if t is not None else None) for i, t in items]
    assert [i for i, _ in together] == list(range(len(texts)))
    assert together == alone
    assert any(r is not None and r["faulty"] != r["tiktoken"] for _, r in together)
