"""The every-token phase (harness/run/every_token.py) against planted single-token faults.

Each planted adapter is tiktoken with one token split in two (tests/token_faults.py). The
20 IDs per encoding are drawn with a fixed seed. In process, each planted adapter runs the
phase's slice that holds its ID (the very unit the whole phase runs for that ID; the
phase's slices cover every ID, asserted below); through ``tokconf run``, one planted ID
per encoding runs the whole phase, end to end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from harness.generate.every_token import EveryTokenPlan, build_plan, encode_all, pieces_of
from harness.registry import AdapterSpec, Registry, default_registry
from harness.report.bounds import input_text
from harness.run.every_token import run_slice
from harness.run.runner import Runner
from harness.run.selection import select
from tests.bytes_adapters import Utf8Bytes
from tests.token_faults import FAMILY, SplitToken, planted_ids

ROOT = Path(__file__).resolve().parent.parent
ENCODINGS = ("cl100k_base", "o200k_base")


@lru_cache(maxsize=None)
def _plan(encoding: str) -> EveryTokenPlan:
    reg = Registry()
    reg.add(default_registry().spec(f"tiktoken:{encoding}"), provider="test")
    return build_plan(select(reg).reference_for(encoding))


def _planted_run(encoding: str, ids: list[int]):  # type: ignore[no-untyped-def]
    reg = Registry()
    reg.add(default_registry().spec(f"tiktoken:{encoding}"), provider="test")
    for token_id in ids:
        reg.add(SplitToken(encoding, token_id), provider="test")
    runner = Runner(select(reg))
    plan = _plan(encoding)
    for token_id in ids:
        (token_slice,) = [s for s in plan.slices if token_id in s.ids]
        run_slice(runner, token_slice, [f"split-token:{encoding}-{token_id}"])
    return runner.finish()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_twenty_planted_token_faults_each_fail_on_that_token(encoding: str) -> None:
    ids = planted_ids(encoding)
    assert len(set(ids)) == 20
    result = _planted_run(encoding, ids)
    pieces = _plan(encoding).pieces
    for token_id in ids:
        name = f"split-token:{encoding}-{token_id}"
        token_text = pieces[token_id].decode("utf-8")  # type: ignore[union-attr]
        found = [d for d in result.divergences if d.adapter == name and d.status == "unexpected"]
        assert found, f"{name}: the split token {token_text!r} was not found"
        minimal = found[0].text
        assert minimal == token_text or (token_text in minimal and len(minimal) <= 12), (name, minimal, token_text)
        assert result.failed


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_slices_hold_every_id_once(encoding: str) -> None:
    plan = _plan(encoding)
    ids = [i for s in plan.slices for i in s.ids]
    assert len(ids) == len(set(ids)) == len(plan.ids)
    assert len(ids) == {"cl100k_base": 100256 + 5, "o200k_base": 199998 + 2}[encoding]


def test_tiktoken_itself_agrees_on_every_token() -> None:
    """No fault planted: the reference through the whole o200k_base phase has no finding
    (its unreachable token are facts of the vocabulary, not findings)."""
    reg = Registry()
    reg.add(default_registry().spec("tiktoken:o200k_base"), provider="test")
    runner = Runner(select(reg))
    plan = _plan("o200k_base")
    for token_slice in plan.slices:
        run_slice(runner, token_slice, ["tiktoken:o200k_base"])
    result = runner.finish()
    assert result.divergences == []
    vocab = result.coverage["tiktoken:o200k_base"]["vocab"]
    assert vocab["fraction"] == 1.0


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_tokconf_run_fails_on_a_planted_token_and_lists_the_unreachable(encoding: str, tmp_path: Path) -> None:
    token_id = planted_ids(encoding)[0]
    name = f"split-token:{encoding}-{token_id}"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--quiet", "--no-isolate", "--plugin", "tests.token_faults:FAMILY",
         "--impl", name, "--no-cases", "--max-examples", "1", "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "latest" / "parity.json").read_text(encoding="utf-8"))
    token_text = _plan(encoding).pieces[token_id].decode("utf-8")  # type: ignore[union-attr]
    texts = [input_text(d["input"])
             for d in data["divergences"] if d["adapter"] == name and d["status"] == "unexpected"]
    assert any(t == token_text or (t and token_text in t and len(t) <= 12) for t in texts), texts
    reference = f"tiktoken:{encoding}"
    for adapter in (name, reference):
        assert data["coverage"][adapter]["vocab"]["fraction"] == 1.0, adapter
    listed = {entry["text"] for entry in data["coverage"][reference]["reachability"]["unreachable"]}
    assert listed == ({" I'"} if encoding == "o200k_base" else set())
    page = (tmp_path / "latest" / "parity.html").read_text(encoding="utf-8")
    assert "reachability of its vocabulary" in page
    assert ("␠I&#39;" in page) == (encoding == "o200k_base")  # the unreachable token, listed
    assert FAMILY.kind == "split-token"


def test_pytest_plugin_fails_the_planted_token_with_the_same_minimal_input(pytester: pytest.Pytester,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    (pytester.path / "none.yaml").write_text("version: 1\ncases: []\n", encoding="utf-8")
    token_id = planted_ids("cl100k_base")[1]
    name = f"split-token:cl100k_base-{token_id}"
    result = pytester.runpytest_subprocess(
        "--tokconf-plugin", "tests.token_faults:FAMILY", "--tokconf-impl", name, "--tokconf-no-isolate",
        "--tokconf-cases", "none.yaml", "-p", "no:cacheprovider", "-k", "every-token", timeout=1800)
    outcomes = result.parseoutcomes()  # every-token[reference] passes; 2 vocab, generated slices deselected
    assert (outcomes.get("passed"), outcomes.get("failed")) == (1, 1) and outcomes.get("deselected", 0) >= 3, outcomes
    text = result.stdout.str()
    token_text = _plan("cl100k_base").pieces[token_id].decode("utf-8")  # type: ignore[union-attr]
    assert f"FAILED tokconf::every-token[{name}]" in text
    assert f"minimal input: {token_text!r}" in text, text[-3000:]


def test_an_encodings_plan_is_made_after_the_one_before_it_ran_and_let_go(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 25: the slices of every encoding held at once set a default run's peak (380 MB
    # of its 1.25 GB); the phase makes one encoding's plan, runs its units, drops them
    import gc
    import weakref

    from harness.engine.phases import PHASES, RunContext, UnitGroups, run_units
    from harness.run import every_token

    selected = select(default_registry(), impls=["bytebpe:demo", "bytebpe-ltr:demo", "simple-v1:lighthouse",
                                                 "char-demo:lowest"])
    runner = Runner(selected)
    events: list[str] = []
    made: list[weakref.ref] = []  # a weak reference to each plan's first slice
    real_plan_for, real_run = every_token.plan_for, runner.jobs.run

    def plan_for(selected, reference, cache=None, **how):  # type: ignore[no-untyped-def]
        gc.collect()
        alive = sum(ref() is not None for ref in made)
        events.append(f"plan {reference.name} ({alive} earlier held)")
        plan = real_plan_for(selected, reference, cache, **how)
        made.append(weakref.ref(plan.slices[0]))
        return plan

    def run(kind, tasks, **kwargs):  # type: ignore[no-untyped-def]
        events.append(f"run {kind} x{len(tasks)} on {tasks[0][0][0].reference}")
        return real_run(kind, tasks, **kwargs)

    monkeypatch.setattr(every_token, "plan_for", plan_for)
    monkeypatch.setattr(runner.jobs, "run", run)
    phase = PHASES["every-token"]
    units = phase.units(RunContext(plan=None, runner=runner, cases=[]))
    assert isinstance(units, UnitGroups) and len(units) == 4 and events == []  # counted, nothing made yet
    run_units(RunContext(plan=None, runner=runner, cases=[]), phase)
    assert events == ["plan char-demo:lowest (0 earlier held)", "run every-token x1 on char-demo:lowest",
                      "plan simple-v1:lighthouse (0 earlier held)", "run every-token x1 on simple-v1:lighthouse",
                      "plan bytebpe-ltr:demo (0 earlier held)", "run every-token x2 on bytebpe-ltr:demo"]
    demo = real_plan_for(selected, selected.calls["bytebpe-ltr:demo"])
    selected.close()
    # every ID of the demo reference was checked on the other demo adapter
    assert runner.cell("bytebpe:demo", "vocab-consistency").inputs == \
        sum(piece is not None for token_slice in demo.slices for piece in token_slice.pieces)
    # and the coverage keeps them as one run of IDs, not an int object per ID
    assert runner.coverage.observations()["bytebpe:demo"].checked.runs() == [(0, len(demo.ids))]
    assert runner.coverage.summary()["bytebpe:demo"]["every_token"]["checked"] == len(demo.ids)


def test_the_pytest_suite_makes_an_encodings_plan_when_its_items_run_and_lets_it_go(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # session 30: collecting the suite made every encoding's plan, and its items held them
    # all to the end of the session (the default adapters on a fresh cache: 14 s and 520 MB
    # in each pytest-xdist worker that collected); now as the run above, one at a time
    import gc
    import weakref

    from harness.pytest.suite import Suite, SuiteOptions
    from harness.run import every_token

    made: list[weakref.ref] = []
    events: list[str] = []
    real_plan_for = every_token.plan_for

    def plan_for(selected, reference, cache=None, **how):  # type: ignore[no-untyped-def]
        gc.collect()
        events.append(f"plan {reference.name} ({sum(ref() is not None for ref in made)} earlier held)")
        plan = real_plan_for(selected, reference, cache, **how)
        made.append(weakref.ref(plan.slices[0]))
        return plan

    monkeypatch.setattr(every_token, "plan_for", plan_for)
    (tmp_path / "none.yaml").write_text("version: 1\ncases: []\n", encoding="utf-8")
    suite = Suite(SuiteOptions(impls=("bytebpe:demo", "bytebpe-ltr:demo", "simple-v1:lighthouse", "char-demo:lowest"),
                               cases=(str(tmp_path / "none.yaml"),), everyday=False, default_long=False, cache=False,
                               isolate="none", profile="ci"))
    try:
        units = suite.units()
        assert [u.name for u in units if u.phase == "every-token"] == [
            "every-token[char-demo:lowest]", "every-token[simple-v1:lighthouse]", "every-token[bytebpe-ltr:demo]",
            "every-token[bytebpe:demo]"]
        assert events == []  # collected: named, nothing made
        for unit in units:  # the two demo adapters differ (a case documents it): records, not asserted here
            suite.run(unit)
        assert events == ["plan char-demo:lowest (0 earlier held)", "plan simple-v1:lighthouse (0 earlier held)",
                          "plan bytebpe-ltr:demo (0 earlier held)"]
        gc.collect()
        assert [ref() for ref in made] == [None, None, None]
        assert suite.collector.coverage.summary()["bytebpe:demo"]["every_token"]["checked"] > 0
        # the judge reads records, not the outcome log: it holds no second copy of it
        assert suite.collector.inputs and suite.judge.inputs == {}
    finally:
        suite.close()


def test_a_run_from_the_unit_cache_reads_no_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 25: loading o200k_base's cached plan (145 MB) to key units that all come
    # from the cache set a second default run's peak; a small summary keys them now
    from harness.engine.phases import PHASES, RunContext, run_units
    from harness.run import every_token
    from harness.run.unit_cache import UnitCache

    class Logged(UnitCache):
        def store(self, key: str, delta: object) -> None:
            super().store(key, delta)
            stored.append(key)

    stored: list[str] = []
    loaded: list[str] = []
    real_plan_for = every_token.plan_for
    monkeypatch.setattr(every_token, "plan_for",
                        lambda selected, reference, cache=None, **how: loaded.append(reference.name)
                        or real_plan_for(selected, reference, cache, **how))

    def phase() -> tuple[dict, dict]:
        selected = select(default_registry(), impls=["bytebpe:demo", "bytebpe-ltr:demo", "simple-v1:lighthouse",
                                                     "char-demo:lowest"])
        runner = Runner(selected)
        runner.unit_cache = Logged(tmp_path)
        run_units(RunContext(plan=None, runner=runner, cases=[]), PHASES["every-token"])
        selected.close()
        cells = {(a, c): (cell.inputs, cell.status) for a, row in runner.matrix.items() for c, cell in row.items()}
        return cells, runner.coverage.summary()

    first = phase()
    assert loaded == ["char-demo:lowest", "simple-v1:lighthouse", "bytebpe-ltr:demo"]
    assert first[0][("bytebpe:demo", "vocab-consistency")][0] > 0
    loaded.clear()
    assert phase() == first and loaded == []
    # a unit the cache lost (the last one stored: the demo group's) reads that plan alone
    (tmp_path / f"{stored[-1]}.pickle").unlink()
    loaded.clear()
    assert phase() == first and loaded == ["bytebpe-ltr:demo"]


def test_a_plan_read_from_the_unit_cache_brings_its_slices_digests(tmp_path: Path) -> None:
    # session 40: a cached plan came back without its slices' digests (the unit keys: a
    # cached property, so kept in each slice's __dict__ once computed), and every run that
    # read it (one adapter of the encoding asked again: an edited drop-in) hashed every
    # slice again: 0.5 s of CPU per o200k plan, 0.26 s for cl100k_base
    from harness.generate.every_token import TokenSlice
    from harness.run import every_token
    from harness.run.unit_cache import UnitCache

    selected = select(default_registry(), impls=["bytebpe-ltr:demo"])
    reference = selected.calls["bytebpe-ltr:demo"]
    cache = UnitCache(tmp_path)
    made = every_token.plan_for(selected, reference, cache)
    read = every_token.plan_for(selected, reference, cache)
    selected.close()
    assert cache.stored == 1 and cache.hits == {"bytebpe-ltr:demo": {"every-token"}} and read is not made
    assert [s.__dict__.get("digest") for s in read.slices] == [
        TokenSlice.digest.func(s) for s in made.slices]  # type: ignore[attr-defined]


class _HoleyBytes(Utf8Bytes):
    """One byte per ID, except: 3 raises KeyError, 4 answers a bytearray, 5 answers None."""

    name = "test:holey-bytes"

    def token_bytes(self, token_id: int) -> bytes:
        if token_id == 3:
            raise KeyError(token_id)
        if token_id == 4:
            return bytearray(b"\x04")  # type: ignore[return-value]
        if token_id == 5:
            return None  # type: ignore[return-value]
        return super().token_bytes(token_id)


def holey_bytes() -> list[AdapterSpec]:
    return [AdapterSpec(_HoleyBytes.name, "utf8-bytes", _HoleyBytes, library="tokconf")]


def test_the_plans_bulk_pieces_are_what_token_bytes_says_of_each_id_in_process_and_in_a_worker() -> None:
    # session 40: the plan asks its reference every ID's bytes in one loop without an Outcome
    # per ID (cl100k_base: 0.05 s, not 0.31 s); a hole stays a hole, bytes stay bytes
    from harness.calls import Calls, InProcess
    from harness.worker.client import WorkerExecutor
    from harness.worker.setup import Isolation, WorkerSetup

    def typed(pieces: list) -> list:  # a bytearray equals its bytes: the type is compared too
        return [(type(p).__name__, p) for p in pieces]

    ids = list(range(8))
    one_by_one = Calls(InProcess(_HoleyBytes()))
    expected = typed([o.value if o.is_ok else None for o in (one_by_one.token_bytes(i) for i in ids)])
    assert expected == typed([b"\x00", b"\x01", b"\x02", None, b"\x04", None, b"\x06", b"\x07"])
    assert typed(pieces_of(Calls(InProcess(_HoleyBytes())), ids)) == expected
    registry = default_registry(plugins=["tests.test_every_token:holey_bytes"])
    worker = WorkerExecutor(_HoleyBytes.name, Isolation(mode="all", setup=WorkerSetup.from_registry(registry)))
    try:
        assert typed(pieces_of(Calls(worker), ids)) == expected
    finally:
        worker.close()


def test_the_reference_is_judged_on_its_plan_answers_without_asking_them_again() -> None:
    # issue 25: the plan holds the reference's own IDs for every text of a slice and its bytes
    # for every ordinary ID; asking it again encoded each text twice on one path, and read
    # each ID's bytes twice. A wrong answer of the reference must still show: its encode of
    # one token's text gives the next ID, whose bytes do not join to that text.
    from dataclasses import replace

    base = default_registry().spec("bytebpe-ltr:demo")
    real = base.factory()
    healthy_plan = build_plan(select(_one(base)).reference_for(base.encoding))
    broken_id, broken_text = next((i, p.decode()) for s in healthy_plan.slices for i, p in zip(s.ids, s.pieces)
                                  if p and len(p) >= 2 and p.isascii())
    encoded: list[str] = []
    asked: list[int] = []

    class Watched(type(real)):  # type: ignore[misc]
        def __init__(self, *, wrong: bool) -> None:
            self.__dict__.update(real.__dict__)
            self.wrong = wrong

        def encode(self, text, **kwargs):  # type: ignore[no-untyped-def]
            encoded.append(text)
            return [broken_id + 1] if self.wrong and text == broken_text else super().encode(text, **kwargs)

        def token_bytes(self, token_id: int) -> bytes:
            asked.append(token_id)
            return super().token_bytes(token_id)

    def slice_run(*, wrong: bool):  # type: ignore[no-untyped-def]
        spec = replace(base, factory=lambda: Watched(wrong=wrong))
        plan = build_plan(select(_one(spec)).reference_for(base.encoding))  # as a run makes it: same adapter
        runner = Runner(select(_one(spec)))
        encoded.clear()
        asked.clear()
        for token_slice in plan.slices:
            run_slice(runner, token_slice, [base.name])
        return plan, runner.finish()

    plan, healthy = slice_run(wrong=False)
    assert healthy.divergences == [] and encoded == []
    # the plan's bytes are not asked again: what is asked is the probe for the vocabulary's
    # end (a binary search, ~log2 of its size), not each of its 400 IDs
    assert 0 < len(asked) < len(plan.pieces) // 10, sorted(asked)
    assert healthy.matrix[base.name]["id-parity"].inputs == sum(len(s.texts) for s in plan.slices)
    _, broken = slice_run(wrong=True)
    unexpected = [d for d in broken.divergences if d.status == "unexpected"]
    assert unexpected and {d.text for d in unexpected} == {broken_text}, "the wrong answer went unseen"
    assert encoded, "only the texts that failed go through the full checks, which encode"


def test_the_bytes_of_every_id_are_asked_in_one_loop_and_a_wrong_one_is_still_found() -> None:
    """In process, a slice's token bytes are asked in one loop (``token_bytes_many``), not
    one call each through the executor; a wrong piece for one ID is a finding on it."""
    from dataclasses import replace

    from harness.calls import Calls, InProcess

    base = default_registry().spec("bytebpe-ltr:demo")
    real = base.factory()
    wrong_id = 300

    class WrongPiece(type(real)):  # type: ignore[misc]
        def __init__(self) -> None:
            self.__dict__.update(real.__dict__)
            self.name = "wrong:piece"

        def token_bytes(self, token_id: int) -> bytes:
            right = super().token_bytes(token_id)
            return right + b"!" if token_id == wrong_id else right

    class Counted(InProcess):
        calls: list[str] = []

        def call(self, op, *args):  # type: ignore[no-untyped-def]
            Counted.calls.append(op)
            return super().call(op, *args)

    calls = Calls(Counted(real))
    calls.prefetch_pieces(list(range(400)))
    assert [calls.token_bytes(i) for i in range(400)] == [InProcess(real).call("token_bytes", i) for i in range(400)]
    assert "token_bytes" not in Counted.calls
    spec = replace(base, name="wrong:piece", factory=WrongPiece)
    reg = _one(base)
    reg.add(spec, provider="test")
    runner = Runner(select(reg))
    plan = build_plan(runner.selected.reference_for(base.encoding))
    for token_slice in plan.slices:
        run_slice(runner, token_slice, [base.name, spec.name])
    found = [d for d in runner.finish().divergences if d.adapter == spec.name]
    assert found and all(d.check == "vocab-consistency" for d in found)
    assert {d.kind for d in found} == {"token-bytes"}


def _one(spec):  # type: ignore[no-untyped-def]
    reg = Registry()
    reg.add(spec, provider="test")
    return reg


def _logged(task, log: Path, size):  # type: ignore[no-untyped-def]
    """``task`` that first writes "PID SIZE" to ``log``: a forked process's own memory is
    not the test's, a file is."""
    import os

    def logged(work):  # type: ignore[no-untyped-def]
        with log.open("a", encoding="ascii") as out:
            out.write(f"{os.getpid()} {size(work)}\n")
        return task(work)

    return logged


def test_under_jobs_the_plan_is_asked_in_the_job_processes_and_is_the_same_plan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 25: building each reference's plan (cl100k_base: 300,000 texts encoded) was the
    # serial part of a --jobs run; its lists are spread over the processes now
    import os

    from harness.run import parallel

    selected = select(default_registry(), impls=["bytebpe-ltr:demo"])
    reference = selected.calls["bytebpe-ltr:demo"]
    in_order: list[int] = []
    serial = build_plan(reference, encode_many=lambda texts, policy: in_order.append(len(texts))
                        or encode_all(reference, texts, policy))
    runner = Runner(selected, jobs=2)
    log = tmp_path / "asked-in"
    encode_task = _logged(parallel.TASKS["encode"], log, lambda work: sum(len(texts) for _, texts, _ in work))
    monkeypatch.setitem(parallel.TASKS, "encode", encode_task)  # forked processes inherit the table
    monkeypatch.setattr(parallel, "TEXTS_PER_ENCODE_TASK", 100)  # the demo vocabulary is small
    try:
        spread = build_plan(reference, encode_many=runner.jobs.encode_many(reference.name))
    finally:
        runner.jobs.close()
    asked = [line.split() for line in log.read_text(encoding="ascii").split("\n") if line]
    here = sum(int(n) for pid, n in asked if pid == str(os.getpid()))  # a list of one task stays here
    # asked in the job processes; not "in both": the processes take tasks as they come free,
    # and on a loaded machine one of them took every task before the other started (seen
    # in a full-suite run, session 30)
    assert {pid for pid, _ in asked} - {str(os.getpid())} and here <= 100
    assert sum(int(n) for _, n in asked) == sum(in_order)  # each text asked once
    assert len(in_order) == 2  # the ordinary texts in one list (spread at once), the literals in another
    assert [s.digest for s in spread.slices] == [s.digest for s in serial.slices]
    assert spread.reachability_json() == serial.reachability_json()
    assert Runner(selected).jobs.encode_many(reference.name) is None  # one job: asked in order, here
    selected.close()


class _SplitTwo(SplitToken):
    """Two planted tokens in one adapter, so its findings come from two slices."""

    def __init__(self, encoding: str, first: int, second: int) -> None:
        super().__init__(encoding, first)
        self.other = SplitToken(encoding, second)
        self.name = f"split-two:{encoding}-{first}-{second}"

    def encode(self, text, **kwargs):  # type: ignore[no-untyped-def]
        out: list[int] = []
        for i in super().encode(text, **kwargs):
            out += self.other.replacement if i == self.other.token_id else [i]
        return out


def test_under_jobs_an_adapters_every_token_task_is_shared_by_the_processes_and_gives_the_same_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 25: one adapter's every-token task (every slice of its encoding) was one task,
    # so --jobs 2 ran the user's path's candidate in one process while the other waited;
    # its parts now spread over both and their deltas become the task's one delta
    import os

    from harness.run import parallel

    plan = _plan("cl100k_base")
    first, second = sorted(planted_ids("cl100k_base")[:2])
    faulty = _SplitTwo("cl100k_base", first, second)
    at = [n for n, s in enumerate(plan.slices) if first in s.ids or second in s.ids]
    assert len(at) == 2  # the two faults are in different slices, so in different parts
    slices = [plan.slices[n] for n in sorted({at[0], at[0] + 1, at[1]})]

    def result(jobs: int):  # type: ignore[no-untyped-def]
        reg = Registry()
        reg.add(default_registry().spec("tiktoken:cl100k_base"), provider="test")
        reg.add(faulty, provider="test")
        runner = Runner(select(reg), jobs=jobs)
        tasks = [[(s, (name,)) for s in slices] for name in ("tiktoken:cl100k_base", faulty.name)]
        try:
            runner.jobs.run("every-token", tasks)
        finally:
            runner.jobs.close()
        return runner.finish()

    log = tmp_path / "parts"
    alone = result(1)
    monkeypatch.setitem(parallel.TASKS, "every-token", _logged(parallel.TASKS["every-token"], log, len))
    monkeypatch.setitem(parallel.SPLIT_KINDS, "every-token", 1)  # a part per slice
    spread = result(2)
    parts = [line.split() for line in log.read_text(encoding="ascii").split("\n") if line]
    assert len(parts) == 2 * len(slices) and {n for _, n in parts} == {"1"}  # each task cut into one-slice parts
    assert len({pid for pid, _ in parts} - {str(os.getpid())}) == 2  # run in both processes

    def seen(res):  # type: ignore[no-untyped-def]
        return ([(d.adapter, d.check, d.kind, d.status, d.text) for d in res.divergences],
                {a: {c: (cell.inputs, cell.unsupported) for c, cell in row.items()} for a, row in res.matrix.items()},
                res.coverage)

    assert seen(spread) == seen(alone)
    found = {d.text for d in alone.divergences if d.adapter == faulty.name and d.status == "unexpected"}
    assert {plan.pieces[first].decode(), plan.pieces[second].decode()} <= found  # both faults, both ways
