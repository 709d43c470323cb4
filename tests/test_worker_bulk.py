"""A worker answers a list of encodes or API-surface walks in one call, and every item
still gets its own outcome: the one its own call would have had.

``WorkerExecutor.encode_many`` and ``api_surfaces`` ask the worker once for all items
(:func:`harness.outcomes.together`); when one item raises, hangs or kills the worker, each
item is asked again in a call of its own. These tests plant each failure on the middle
item of three (the adapters of :mod:`tests.faulty_adapters` fail on U+2603) and compare
with the single calls, outcome for outcome.
"""

from __future__ import annotations

import time

import pytest

from harness.calls import Calls, InProcess
from harness.checks.base import ORDINARY
from harness.outcomes import ASK_APART, Outcome, together
from harness.registry import AdapterSpec, default_registry
from harness.worker.client import WorkerExecutor
from harness.worker.setup import Isolation, WorkerSetup
from tests.faulty_adapters import TRIGGER
from tests.surface_adapters import _Planted

TEXTS = ("hello world", f"snow {TRIGGER} man", "  trailing   spaces  ")


class _SurfaceFault(_Planted):
    """tiktoken's cl100k_base whose API-surface walk of the trigger raises or hangs."""

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        if TRIGGER in text:
            if self.fault == "walk-hangs":
                time.sleep(3600)
            raise RuntimeError("planted: this walk fails")
        return super().api_surface(text)


class _WalkRaises(_SurfaceFault):
    fault = "walk-raises"


class _WalkHangs(_SurfaceFault):
    fault = "walk-hangs"


def surface_faults() -> list[AdapterSpec]:
    return [AdapterSpec(name=f"planted:{cls.fault}", encoding="cl100k_base", factory=cls, library="tiktoken")
            for cls in (_WalkRaises, _WalkHangs)]


def _worker(name: str, *, timeout_s: float = 60.0) -> WorkerExecutor:
    registry = default_registry(plugins=["tests.faulty_adapters:all", "tests.test_worker_bulk:surface_faults"])
    setup = WorkerSetup.from_registry(registry)
    return WorkerExecutor(name, Isolation(mode="all", setup=setup, timeout_s=timeout_s))


def _singles(worker: WorkerExecutor, op: str, *rest: object) -> list[Outcome]:
    return [outcome for _, outcome in worker.call_many([(op, (text, *rest), False) for text in TEXTS])]


def counted(worker: WorkerExecutor) -> list[str]:
    """Make ``worker``'s call_many record the operations it is asked (``del
    worker.call_many`` undoes it); returns that record."""
    asked: list[str] = []
    original = worker.call_many

    def counting(requests):  # type: ignore[no-untyped-def]
        requests = list(requests)
        asked.extend(op for op, _, _ in requests)
        return original(requests)

    worker.call_many = counting  # type: ignore[method-assign]
    return asked


def test_a_clean_list_is_one_call_and_the_same_answers_as_one_call_each() -> None:
    worker = _worker("tiktoken:cl100k_base")
    try:
        asked = counted(worker)
        many = worker.encode_many(TEXTS, ORDINARY)
        walks = worker.api_surfaces(TEXTS)
        pieces = worker.token_bytes_many([15339, 1917])
        assert asked == ["encode_many", "api_surfaces", "token_bytes_many"]
        del worker.call_many
        assert many == _singles(worker, "encode", ORDINARY)
        assert many[0] == Outcome.ok((15339, 1917))
        assert walks == _singles(worker, "api_surface")
        assert all(w.is_ok and len(w.value) > 20 for w in walks)
        assert pieces == [Outcome.ok(b"hello"), Outcome.ok(b" world")]
        # 100256 is a hole of cl100k_base: its own outcome, the IDs beside it theirs
        hole = worker.token_bytes_many([15339, 100256, 1917])
        assert hole[0] == pieces[0] and hole[2] == pieces[1]
        assert hole[1].kind == "raised" and hole[1].category == "unknown-id", hole[1].describe()
    finally:
        worker.close()


@pytest.mark.parametrize(("name", "middle"), [
    ("faulty:panic", "raised:internal-error"),
    ("faulty:not-integers", "raised:internal-error"),
    ("faulty:segfault", "crashed:SIGSEGV"),
    ("faulty:hang", "timeout"),
])
def test_one_failing_item_gets_its_own_outcome_and_the_others_theirs(name: str, middle: str) -> None:
    worker = _worker(name, timeout_s=2.0)
    here = Calls(InProcess(default_registry().get("tiktoken:cl100k_base")))
    try:
        first, failed, last = worker.encode_many(TEXTS, ORDINARY)
        assert first == here.encode(TEXTS[0], ORDINARY)
        assert last == here.encode(TEXTS[2], ORDINARY)
        kind, _, category = middle.partition(":")
        assert failed.kind == kind and (failed.category or "") == category, failed.describe()
        # the failure is the item's own, not the bulk call's
        assert ASK_APART not in failed.describe()
        if name == "faulty:not-integers":
            assert failed.native_type == "tokconf.BadReturnValue"
    finally:
        worker.close()


@pytest.mark.parametrize(("name", "middle"), [("planted:walk-raises", "raised"), ("planted:walk-hangs", "timeout")])
def test_one_failing_walk_gets_its_own_outcome_and_the_others_theirs(name: str, middle: str) -> None:
    worker = _worker(name, timeout_s=2.0)
    try:
        first, failed, last = worker.api_surfaces(TEXTS)
        assert failed.kind == middle and ASK_APART not in failed.describe(), failed.describe()
        if middle == "raised":
            assert failed.native_type == "builtins.RuntimeError"
        alone = Calls(InProcess(default_registry().get("tiktoken:cl100k_base")))
        assert first == alone.api_surface(TEXTS[0]) and last == alone.api_surface(TEXTS[2])
    finally:
        worker.close()


def test_together_is_every_value_or_the_first_failure() -> None:
    assert together([Outcome.ok((1,)), Outcome.ok(())]) == Outcome.ok(((1,), ()))
    apart = together([Outcome.ok((1,)), Outcome.timeout(2.0), Outcome.raised("unknown-id", "KeyError", "7")])
    assert apart.native_type == ASK_APART and "item 1" in (apart.message or "")


#: texts whose cl100k_base tokens cut characters (the stream check decodes cut sequences)
STREAM_TEXTS = ("\x85", "你好 \U0001F9D1\U0001F3FF\u200d\U0001F4BB", "plain ascii", "é\u0301 ðŸ")


@pytest.mark.parametrize(("name", "kinds"), [
    ("tiktoken:cl100k_base", ["agree", "agree", "agree", "agree"]),
    ("selftest:decode-bytes-drops-incomplete-tail", ["prefix-bytes", "prefix-bytes", "agree", "prefix-bytes"]),
])
def test_the_stream_checks_decodes_are_asked_ahead_and_judge_the_same(name: str, kinds: list[str]) -> None:
    """A task's prefetch (:func:`harness.run.prefetch.prefetch`) asks a worker the stream
    check's decodes of the reference's cut sequences in one round trip: the check then
    makes no call of its own and finds what it finds without the prefetch."""
    from harness.checks import run_text_check
    from harness.checks.base import Finding, Subject
    from harness.run.prefetch import prefetch

    registry = default_registry(plugins=["harness.selftest.score:family"])
    reference = Calls(InProcess(registry.get("tiktoken:cl100k_base")))
    worker = WorkerExecutor(name, Isolation(mode="all", setup=WorkerSetup.from_registry(registry)))
    singles: list[str] = []
    original = worker.call

    def counting(op, *args):  # type: ignore[no-untyped-def]
        singles.append(op)
        return original(op, *args)

    def judged(adapter: Calls) -> list[object]:
        out = []
        for text in STREAM_TEXTS:
            adapter.reset()
            reference.reset()
            result = run_text_check("stream-decode", Subject(text, ORDINARY, adapter, reference))
            out.append(result.kind if isinstance(result, Finding) else str(result))
        return out

    try:
        alone = judged(Calls(worker))
        worker.call = counting  # type: ignore[method-assign]
        ahead = Calls(worker)
        prefetch((ahead, reference, text, ORDINARY) for text in STREAM_TEXTS)
        asked_ahead = len(singles)
        assert judged(ahead) == alone
        assert singles[asked_ahead:] == [], singles[asked_ahead:]
        assert alone == kinds
    finally:
        worker.close()


class _NumpyInts(_Planted):
    """tiktoken's cl100k_base answering numpy integers, which are IDs too (``checked``)."""

    fault = "numpy-ints"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        import numpy

        ids = super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return [numpy.int64(i) for i in ids]


class _Classified(_Planted):
    """tiktoken's cl100k_base that refuses the trigger with an error its own
    ``classify_error`` names (a closed vocabulary's ``unknown-token``)."""

    fault = "classified"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        if TRIGGER in text:
            raise LookupError(f"no token for {TRIGGER!r}")
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def classify_error(self, op, exc):  # type: ignore[no-untyped-def]
        return "unknown-token" if op == "encode" and isinstance(exc, LookupError) else None


@pytest.mark.parametrize("name", ["faulty:panic", "faulty:not-integers", "planted:numpy-ints", "planted:classified"])
def test_in_process_a_list_is_one_loop_whose_answers_are_each_texts_own_call(name: str) -> None:
    """``Calls.encode_many`` in process (``InProcess.encode_ids_many``): each success is its
    IDs (plain ints), each failure the outcome the text's own ``encode`` call has."""
    registry = default_registry(plugins=["tests.faulty_adapters:all"])
    planted = {"planted:numpy-ints": _NumpyInts, "planted:classified": _Classified}
    adapter = planted[name]() if name in planted else registry.get(name)
    alone = [InProcess(adapter).call("encode", text, ORDINARY) for text in TEXTS]
    listed = Calls(InProcess(adapter)).encode_many(TEXTS, ORDINARY)
    for answer, own in zip(listed, alone):
        if own.is_ok:
            assert type(answer) is tuple and answer == own.value and {type(i) for i in answer} == {int}
        else:
            category = "unknown-token" if name == "planted:classified" else "internal-error"
            assert answer == own and answer.kind == "raised" and answer.category == category
    assert [o.describe() if isinstance(o, Outcome) else "ok" for o in listed].count("ok") == (3 if "numpy" in name else 2)
    # what a worker answers for the same list: every item an Outcome, the same ones
    assert InProcess(adapter).encode_many(TEXTS, ORDINARY) == alone
