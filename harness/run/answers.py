"""An unchanged adapter's answers, kept across runs where its unit cannot be kept whole (issue 25).

The unit cache (:mod:`harness.run.unit_cache`) keeps a unit's result only when it can
hash every adapter the unit asks. On the user's own path that is never so: a unit of
``tokconf run --impl tiktoken-compatible:mytokenizer:cl100k_base --impl
tiktoken:cl100k_base`` asks the user's module, whose code is work in progress, and
tiktoken, whose answers are as pure a function of its fingerprint as in any other run.
Before this module the second such run asked tiktoken every case, generated text and
everyday document again: 4.7 s of its 22 s (``--profile-harness``, ``--jobs 1``).

So a unit that cannot be kept whole keeps the answers of the adapters it *can* hash, in
this process, one file per unit (:meth:`~harness.run.unit_cache.UnitCache.answers_key`:
those adapters' fingerprints, tokconf's code, the runtime and the unit's inputs). The
next run's same unit finds its answers there, call by call: ``(op, *args)`` is looked up
exactly, and a call not found is asked (and kept), so a stored answer can only ever stand
for the very same call on the very same adapter. An adapter whose answers a unit read is
named in the report's ``run.cache`` for that phase, as for a unit read whole (calls the
answers lacked were asked: under ``--jobs`` a process may ask a piece that another
process's memo answered in the run that kept them); ``--no-cache`` asks everything.

Only adapters called in this process are remembered: a worker's calls go in frames of
many requests with follow-ups computed from their answers (:mod:`harness.run.prefetch`).
The long inputs are the exception: they ask one call at a time, and their per-call
timeout moves an adapter of this process into a worker, in the middle of the first long
unit (:func:`harness.run.long_tier.bounded_calls`) and for the rest of the run, so there
a worker's answers are remembered too. An outcome that depends on the machine (a timeout,
a crash) is never kept.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from typing import Any, Iterator, Sequence

from harness.outcomes import Outcome

__all__ = ["RememberingExecutor", "remembered_answers"]

#: an adapter's remembered answers: (op, *args) -> outcome
Answers = dict[tuple[Any, ...], Outcome]


def _keeps(outcome: Outcome) -> bool:
    """Whether ``outcome`` is the adapter's answer and not the machine's.

    >>> _keeps(Outcome.ok((1, 2))), _keeps(Outcome.timeout(5.0))
    (True, False)
    """
    return outcome.kind in ("ok", "raised")


class RememberingExecutor:
    """An executor that answers a call from ``known`` when it holds it, else asks ``inner``
    and keeps the answer in ``new``. Its bulk calls (``encode_ids_many``, ``api_surfaces``,
    ...) ask ``inner`` once for the items not known, as ``inner`` would have for all.

    >>> class Counting:
    ...     info = None
    ...     asked = 0
    ...     def call(self, op, *args):
    ...         Counting.asked += 1
    ...         return Outcome.ok(len(args[0]))
    >>> known = {("encode", "ab", None): Outcome.ok((7,))}
    >>> remembering = RememberingExecutor(Counting(), known)
    >>> remembering.call("encode", "ab", None).value, remembering.call("encode", "abc", None).value
    ((7,), 3)
    >>> Counting.asked, remembering.missed, list(remembering.new)
    (1, 1, [('encode', 'abc', None)])
    >>> hasattr(remembering, "encode_many")  # Counting has no bulk calls
    False
    """

    def __init__(self, inner: Any, known: Answers, new: Answers | None = None) -> None:
        self.inner = inner
        self.info = inner.info
        self.known = known
        self.new: Answers = {} if new is None else new
        #: the other Calls of this adapter it remembers for, until the unit ends (:meth:`extend_to`)
        self.extended = ExitStack()
        #: calls not found in ``known``
        self.missed = 0
        # the bulk calls exist where the inner executor has them: callers look for them
        # (``Calls.encode_many``, ``Calls.prefetch_surfaces``)
        for bulk in ("encode_many", "encode_ids_many", "token_bytes_many", "api_surfaces"):
            if hasattr(inner, bulk):
                setattr(self, bulk, getattr(self, f"_{bulk}"))

    def extend_to(self, calls: Any) -> None:
        """Remember the answers of ``calls`` with this executor's, until the unit ends: the
        same adapter, moved into a worker in the middle of the unit (the long inputs' per-call
        timeout, :func:`harness.run.long_tier.bounded_calls`)."""
        self.extended.enter_context(_replaced(calls, RememberingExecutor(calls.executor, self.known, self.new)))

    def call(self, op: str, *args: Any) -> Outcome:
        key = (op, *args)
        found = self.known.get(key)
        if found is None:
            found = self.new.get(key)
        if found is None:
            self.missed += 1
            found = self.inner.call(op, *args)
            if _keeps(found):
                self.new[key] = found
        return found

    def _many(self, keys: Sequence[tuple[Any, ...]], ask: Any) -> list[Outcome]:
        """The outcomes of ``keys``; those not known asked in one ``ask(positions)``, which
        answers an outcome per position."""
        known, new = self.known, self.new
        got: list[Outcome | None] = [known.get(k) or new.get(k) for k in keys]
        missing = [n for n, outcome in enumerate(got) if outcome is None]
        if missing:
            self.missed += len(missing)
            for n, outcome in zip(missing, ask(missing)):
                got[n] = outcome
                if _keeps(outcome):
                    new[keys[n]] = outcome
        return got  # type: ignore[return-value]

    def _encode_many(self, texts: Sequence[str], policy: Any) -> list[Outcome]:
        return self._many([("encode", t, policy) for t in texts],
                          lambda at: self.inner.encode_many([texts[n] for n in at], policy))

    def _encode_ids_many(self, texts: Sequence[str], policy: Any) -> list[Any]:
        """``encode_many`` with a success as its IDs alone, as the inner executor's."""
        def ask(at: list[int]) -> list[Outcome]:
            answers = self.inner.encode_ids_many([texts[n] for n in at], policy)
            return [Outcome.ok(a) if type(a) is tuple else a for a in answers]

        return [o.value if o.is_ok else o for o in self._many([("encode", t, policy) for t in texts], ask)]

    def _token_bytes_many(self, ids: Sequence[int]) -> list[Outcome]:
        return self._many([("token_bytes", i) for i in ids],
                          lambda at: self.inner.token_bytes_many([ids[n] for n in at]))

    def _api_surfaces(self, texts: Sequence[str]) -> list[Outcome]:
        return self._many([("api_surface", t) for t in texts],
                          lambda at: self.inner.api_surfaces([texts[n] for n in at]))

    def __getattr__(self, name: str) -> Any:
        # what else the inner executor has (``close``, ``provenance``, a stopwatch's ``around``)
        return getattr(self.inner, name)


@contextmanager
def _replaced(calls: Any, executor: Any) -> Iterator[None]:
    """``calls`` asks ``executor`` instead, for a while; its memos are kept, as the
    answers are the same."""
    before = calls.executor
    calls.wrap_executor(lambda _: executor)
    try:
        yield
    finally:
        calls.wrap_executor(lambda _: before)


@contextmanager
def remembered_answers(runner: Any, kind: str, task: Sequence[Any]) -> Iterator[None]:
    """Run the unit ``task`` of ``kind`` with the answers its hashable in-process adapters
    gave the last run that ran it (when it cannot be cached whole), and keep theirs after
    it for the next. Nothing happens without the unit cache (``--no-cache``)."""
    cache = getattr(runner, "unit_cache", None)
    found = None if cache is None else cache.answers_key(runner, kind, task)
    if found is None:
        yield
        return
    names, key = found
    stored: dict[str, Answers] = cache.load(key) or {}
    wrapped: dict[str, RememberingExecutor] = {}
    with ExitStack() as stack:
        for name in names:
            calls = runner.selected.calls.get(name)
            if calls is None or (calls.batches and kind != "long"):  # a worker's: see the module's text
                continue
            executor = RememberingExecutor(calls.executor, stored.get(name, {}))
            stack.enter_context(_replaced(calls, executor))
            stack.enter_context(executor.extended)
            wrapped[name] = executor
        yield
    for name, executor in wrapped.items():
        if executor.known:  # read from the cache (what it lacked was asked)
            cache.hit([name], kind)
    if any(executor.new for executor in wrapped.values()):
        cache.store(key, {name: {**executor.known, **executor.new} for name, executor in wrapped.items()})
