"""``--jobs N``: the inputs of a run spread over N processes, with the result of one.

The runner's per-input work (the vocabulary check of one adapter, a case over its
adapters, a generated text over the adapters whose budget reaches it) is cut into
**units**. Each unit runs on a *fresh* copy of the runner's state (an empty matrix, no
records, no pending findings, no documentation: :meth:`~harness.run.runner.Runner.fresh`)
and hands back what it added, a :class:`~harness.run.deltas.Delta`. The parent applies
the deltas **in unit order** (:meth:`~harness.run.runner.Runner.apply`), whichever
process finished first, so the matrix, the divergences and their order are those of
``--jobs 1``, which runs the very same units in process. Shrinks run as a flat list
(:meth:`Jobs.shrink_many`; which are needed is decided in the parent: :mod:`harness.run.settle`).

The processes are forked from the parent once its adapters are built (``fork`` start
method: the vocabularies are shared, not loaded again), through
:class:`concurrent.futures.ProcessPoolExecutor`, which notices a process that dies (an
in-process adapter that segfaults) instead of waiting for it forever. An isolated adapter's
executor sees it was forked and starts a worker of its own (:mod:`harness.worker.client`).
Where ``fork`` does not exist the run uses one job and says so.

Isolated adapters are also asked ahead (:mod:`harness.run.prefetch`): before a unit's
checks run, every input's usual calls go to each worker in one frame, and the stream
check's decodes in a second.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, Sequence

from harness.cases.model import Case
from harness.checks.base import ORDINARY, Finding
from harness.run.answers import remembered_answers
from harness.run.deltas import Delta, combined, delta_of, judge_delta, merge
from harness.run.handout import chunked, generated_weight, handout
from harness.run.prefetch import prefetch
from harness.run.screen import screened_only

__all__ = ["CASES_PER_TASK", "Delta", "GeneratedUnit", "Jobs", "JobsBroken", "TEXTS_PER_ENCODE_TASK", "TEXTS_PER_TASK",
           "chunked", "generated_weight", "judge_delta", "merge", "run_task"]

#: Units per task sent to a process: small enough to balance, big enough to batch.
CASES_PER_TASK = 24
TEXTS_PER_TASK = 48

#: a generated input: (text, the adapters whose budget reaches it, the reference, trace its merges)
GeneratedUnit = tuple[str, tuple[str, ...], str, bool]

_RUNNER: Any = None  # the runner a forked process works for (inherited, never pickled)


class JobsBroken(Exception):
    """A ``--jobs`` process died: an in-process adapter crashed it (isolate it)."""


# -- units, as run in a job process (or in process with --jobs 1) ---------------------------


def _case_task(task: tuple[Sequence[Case], dict[str, list[Finding]]]) -> Delta:
    cases, vocab_findings = task
    runner = _RUNNER
    sub = runner.fresh()
    # found after the processes forked: what the documented vocabulary cases judge
    sub.vocab_findings = {**runner.vocab_findings, **vocab_findings}
    before = len(sub.notes)
    pairs = {case.id: sub.case_pairs(case) for case in cases}
    prefetch(((adapter, reference, case.text, case.policy) for case in cases for adapter, reference in pairs[case.id]),
             screened=screened_only(cases))
    for case in cases:
        sub.run_case(case)
    return delta_of(sub, before)


def _generated_task(units: Sequence[GeneratedUnit]) -> Delta:
    runner = _RUNNER
    sub = runner.fresh()
    before = len(sub.notes)
    calls = sub.selected.calls
    prefetch((calls[name], calls[reference], text, ORDINARY)
             for text, names, reference, _ in units for name in {*names, reference})
    for text, names, reference, trace in units:
        ref = calls[reference]
        active = [calls[n] for n in names]
        for c in {ref, *active}:
            c.reset()
        for adapter in active:
            sub.run_generated_input(text, adapter, ref, trace=trace)
    return delta_of(sub, before)


def _vocab_task(names: Sequence[str]) -> Delta:
    from harness.checks import check_vocab

    runner = _RUNNER
    sub = runner.fresh()
    before = len(sub.notes)
    found: dict[str, list[Finding]] = {}
    for name in names:
        adapter = sub.selected.calls[name]
        report = check_vocab(adapter, sub.selected.reference_for(adapter.info.encoding))
        sub.cell(name, "vocab-consistency").inputs += report.inputs
        found[name] = report.sorted_findings()
    return delta_of(sub, before, vocab_findings=found)


def _long_task(units: Sequence[Any]) -> Delta:
    from harness.run.long_tier import run_unit

    sub = _RUNNER.fresh()
    before = len(sub.notes)
    reach: dict[str, dict[str, int]] = {}
    for unit in units:
        for adapter, length in run_unit(sub, unit).items():
            reach.setdefault(adapter, {})[unit.kind] = length
    delta = delta_of(sub, before)
    delta.long_reach = reach
    return delta


def _every_token_task(units: Sequence[Any]) -> Delta:
    from harness.run.every_token import run_slice

    sub = _RUNNER.fresh()
    before = len(sub.notes)
    for token_slice, names in units:
        run_slice(sub, token_slice, names)
    return delta_of(sub, before)


def _shrink_task(work: Sequence[tuple[Any, int, float | None]]) -> list[tuple[Finding, bool]]:
    from harness.generate.minimise import shrink_finding_bounded

    calls = _RUNNER.selected.calls
    out = []
    for candidate, max_calls, max_seconds in work:
        out.append(shrink_finding_bounded(candidate.finding, calls[candidate.finding.adapter],
                                          calls[candidate.reference], candidate.subject_policy,
                                          max_calls=max_calls, max_seconds=max_seconds))
    return out


def _encode_task(work: Sequence[tuple[str, Sequence[str], Any]]) -> list[list[Any]]:
    """Each (adapter, texts, policy): the adapter's encode outcomes, in order (an
    every-token plan's questions to its reference, :meth:`Jobs.encode_many`)."""
    from harness.generate.every_token import encode_all

    calls = _RUNNER.selected.calls
    # a success travels as its IDs alone, as encode_all answers: pickling 8,192 Outcome
    # objects cost the parent more than encoding the texts itself
    return [encode_all(calls[name], texts, policy) for name, texts, policy in work]


def _pool_task(specs: Sequence[dict[str, Any]]) -> list[Any]:
    from harness.generate.pools import closed_pool, open_pool

    return [closed_pool(**spec) if "alphabet" in spec else open_pool(**spec) for spec in specs]


TASKS: dict[str, Callable[[Sequence[Any]], Any]] = {
    "vocab": _vocab_task, "cases": _case_task, "generated": _generated_task, "long": _long_task,
    "every-token": _every_token_task, "shrink": _shrink_task, "pool": _pool_task, "encode": _encode_task,
}

#: texts per ``encode`` task: a plan's lists (100,000 to 200,000 texts) in tens of tasks
TEXTS_PER_ENCODE_TASK = 8192

#: slices per part of an every-token task under ``--jobs``: one adapter's task is every
#: slice of its encoding (cl100k_base: 49 slices of 2,048 IDs), and as one task it kept one
#: process busy while the other waited (the user's path has two such tasks, one cheap)
SLICES_PER_PART = 6
#: the tasks ``--jobs`` cuts into parts (each ``[(item, names), ...]``; a part is a run of
#: consecutive items), whose part deltas :func:`~harness.run.deltas.combined` makes one
SPLIT_KINDS: dict[str, int] = {"every-token": SLICES_PER_PART}


def _run_task(kind: str, units: Sequence[Any]) -> Any:
    with remembered_answers(_RUNNER, kind, units):  # where the unit cache cannot keep the unit whole
        return TASKS[kind](units)


def _run_in_child(kind: str, units: Sequence[Any], pack: Callable[[Any], bytes] | None) -> Any:
    """:func:`_run_task` in a ``--jobs`` process. With ``pack`` (:attr:`Jobs.pack`, while a
    corpus phase spools), a task of corpus documents hands its outcomes back packed as the
    log's records: pickled Outcome objects cost the parent more to convert than the child
    to check them."""
    from dataclasses import replace

    from harness.cases.corpus import is_document

    result = _run_task(kind, units)
    if pack is not None and kind == "cases" and result.inputs and any(is_document(case) for case in units[0]):
        result = replace(result, inputs={}, packed_inputs=pack(result.inputs))
    return result


def _run_group_in_child(kind: str, tasks: Sequence[Sequence[Any]], pack: Callable[[Any], bytes] | None) -> list[Any]:
    """Each task's result, with what the unit cache counted meanwhile (:mod:`harness.run.answers`)."""
    cache = getattr(_RUNNER, "unit_cache", None)
    return [(_run_in_child(kind, task, pack), None if cache is None else cache.take_counts()) for task in tasks]


def run_task(runner: Any, kind: str, units: Sequence[Any]) -> Any:
    """One task of ``kind`` (vocab, cases, generated, long, shrink, pool) for ``runner``,
    in this process: what a ``--jobs`` process and a Dask worker run. Returns its
    :class:`Delta` (a list of results for ``shrink`` and ``pool``)."""
    global _RUNNER
    _RUNNER = runner
    return _run_task(kind, units)


def _child_init(parent: int, tied: bool) -> None:
    # Ctrl-C and SIGTERM are the parent's to handle; it ends the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # a run killed outright (SIGKILL, a profiler detaching) cannot end its pool: without
    # this its processes and their workers stayed, orphaned and blocked, for as long as
    # nobody killed them (93 minutes, seen). Linux sends the signal when the *thread* that
    # forked exits, so only a pool forked by the main thread asks for it (under Dask a pool
    # may be forked by a worker thread that ends before the run does)
    if tied:
        from harness.worker.limits import die_with_parent

        die_with_parent()
        if os.getppid() != parent:  # the parent died before the request was in place
            os._exit(1)
    # a pool process ends with os._exit: its workers are ended and waited for here, so their
    # CPU counts in the run's (RUSAGE_CHILDREN; tests/test_jobs_workers_end.py says more)
    multiprocessing.util.Finalize(None, _close_own_workers, exitpriority=10)
    if getattr(_RUNNER, "unit_cache", None) is not None:  # the parent's counts, as forked: it reports them
        _RUNNER.unit_cache.take_counts()


def _close_own_workers() -> None:
    """End the workers this process started (those it inherited are the parent's: a
    worker executor leaves another process's worker alone, see ``WorkerExecutor.close``)."""
    if _RUNNER is None:
        return
    for calls in list(_RUNNER.selected.calls.values()):
        calls.close()


def _cache_key(cache: Any, runner: Any, kind: str, task: Sequence[Any]) -> Any:
    try:
        return cache.key(runner, kind, task)
    except TypeError:  # an input the cache cannot digest (a plugin's own objects): asked
        return None


class Jobs:
    """The processes of a run and the order results are merged in. They are forked at the
    first parallel phase and serve every phase until :meth:`close` (an isolated adapter's
    worker starts once per process). What a later phase needs of the parent's state
    travels with its tasks (the vocabulary findings the documented cases judge); an
    adapter added after the fork (a case's own reference) makes them fork again."""

    def __init__(self, runner: Any, jobs: int = 1) -> None:
        self.runner = runner
        self.requested = max(1, int(jobs))
        self.jobs = self.requested
        self.note: str | None = None
        if self.jobs > 1 and "fork" not in multiprocessing.get_all_start_methods():
            self.jobs = 1
            self.note = f"--jobs {self.requested} needs the fork start method, which this platform lacks; ran with 1"
        self._pool: ProcessPoolExecutor | None = None
        #: runs tasks elsewhere (a Dask cluster: ``backend(kind, tasks, expected=adapter names)``
        #: yields their results in task order); None: this process or the forked ones
        self.backend: Callable[..., Iterator[Any]] | None = None
        #: the adapters the processes were forked with: a new one means forking again
        self._forked_with: tuple[str, ...] = ()
        #: packs a corpus task's inputs in the job processes (``pack_inputs``; set by the
        #: corpus phase while its spool receives, which unpacks them)
        self.pack: Callable[[Any], bytes] | None = None

    @property
    def parallel(self) -> bool:
        return self.jobs > 1

    def run(self, kind: str, tasks: Sequence[Sequence[Any]], *, progress: Callable[[int], None] = lambda n: None,
            weights: Sequence[int] | None = None, affinity: Sequence[Any] | None = None) -> None:
        """Run every task and merge its delta into the runner, in task order. ``weights``:
        how much work each task is, roughly; the processes start the heaviest first.
        ``affinity``: a key per task; the tasks of one key run in one process, in order
        (:meth:`_pooled`). The merge order stays the tasks' own either way."""
        progress(0)  # the phase has started (a progress bar shows it before the first task ends)
        try:
            for done, delta in enumerate(self._results(kind, tasks, weights, affinity)):
                self.runner.apply(delta)
                progress(done + 1)
        except BaseException:
            self.close(terminate=True)  # interrupted: do not wait for the tasks running
            raise

    def shrink_many(self, work: list[tuple[Any, int, float | None]]) -> list[tuple[Finding, bool]]:
        """Shrink every candidate of ``work``, in parallel; results in ``work``'s order."""
        return self.map("shrink", work)

    def deltas(self, kind: str, tasks: Sequence[Any]) -> list[Delta]:
        """Each task's delta, in order, not merged (the pytest plugin judges them one by one)."""
        return list(self._results(kind, tasks))

    def map(self, kind: str, items: Sequence[Any]) -> list[Any]:
        """The task ``kind`` on each item, in parallel; results in ``items``' order.

        Unlike :meth:`run` nothing is merged into the runner.
        """
        results: list[Any] = []
        for part in self._results(kind, [[item] for item in items]):
            results.extend(part)
        return results

    def encode_many(self, name: str) -> Callable[[Sequence[str], Any], list[Any]] | None:
        """A function that asks adapter ``name`` to encode a list of texts spread over the
        processes (None with one job: the caller encodes in order itself). What it
        returns is in the order of the texts, as :func:`encode_all` in process gives it,
        but a success is its IDs alone (a tuple), as :data:`~harness.generate.every_token.EncodeMany` allows.

        The serial part of a ``--jobs`` run was mostly the every-token plans: the
        reference encodes every token alone and in context (cl100k_base: 300,000 texts)
        in the parent while the processes wait (issue 25)."""
        if not self.parallel:
            return None

        def encode(texts: Sequence[str], policy: Any) -> list[Any]:
            work = [(name, part, policy) for part in chunked(texts, TEXTS_PER_ENCODE_TASK)]
            return [answer for part in self.map("encode", work) for answer in part]

        return encode

    def map_here(self, kind: str, items: Sequence[Any]) -> list[Any]:
        """:meth:`map` in this process (through the unit cache, like every unit)."""
        backend, jobs = self.backend, self.jobs
        self.backend, self.jobs = None, 1
        try:
            return self.map(kind, items)
        finally:
            self.backend, self.jobs = backend, jobs

    def _results(self, kind: str, tasks: Sequence[Sequence[Any]], weights: Sequence[int] | None = None,
                 affinity: Sequence[Any] | None = None) -> Iterator[Any]:
        """Each task's result, in order: from the unit cache where it holds the task's key
        (:mod:`harness.run.unit_cache`), else run (and stored)."""
        cache = getattr(self.runner, "unit_cache", None)
        keys = [_cache_key(cache, self.runner, kind, task) for task in tasks] if cache is not None else []
        if not any(keys):
            yield from self._computed(kind, tasks, weights, affinity)
            return
        # which results the cache holds is decided up front (the rest go to the executor
        # together); each is read only when its turn to merge comes, so a run from the cache
        # holds one cached result at a time, not a phase's worth (every token's: ~0.1 GB)
        cached = {n for n, key in enumerate(keys) if key is not None and cache.holds(key[1])}

        def left(values: Sequence[Any] | None) -> list[Any] | None:
            return None if values is None else [v for n, v in enumerate(values) if n not in cached]

        computed = self._computed(kind, left(tasks) or [], left(weights), left(affinity))
        for n, key in enumerate(keys):
            if n in cached:
                delta = cache.load(key[1])
                if delta is not None:
                    cache.hit(key[0], kind)
                    yield delta
                    continue
                # unreadable after all (torn, another Python, pruned meanwhile): asked here
                delta = next(self._computed(kind, [tasks[n]]))
            else:
                delta = next(computed)
            if key is not None:
                cache.store(key[1], delta)
            yield delta

    def _computed(self, kind: str, tasks: Sequence[Sequence[Any]], weights: Sequence[int] | None = None,
                  affinity: Sequence[Any] | None = None) -> Iterator[Any]:
        global _RUNNER
        _RUNNER = self.runner
        if self.backend is not None:
            yield from self.backend(kind, tasks, expected=tuple(sorted(self.runner.selected.calls)))
            return
        if self.jobs > 1 and kind in SPLIT_KINDS:
            yield from self._split(kind, tasks, SPLIT_KINDS[kind])
            return
        if self.jobs == 1 or len(tasks) <= 1:
            for task in tasks:
                yield _run_task(kind, task)
            return
        yield from self._pooled(kind, tasks, weights, affinity)

    def _split(self, kind: str, tasks: Sequence[Sequence[Any]], size: int) -> Iterator[Any]:
        """Each task cut into parts of ``size`` items, the parts spread over the processes;
        yields one :func:`~harness.run.deltas.combined` delta per task, in task order."""
        cut = [chunked(task, size) for task in tasks]
        if sum(len(parts) for parts in cut) <= 1:
            yield from (_run_task(kind, task) for task in tasks)
            return
        results = self._pooled(kind, [part for parts in cut for part in parts])
        for parts in cut:
            mine = [next(results) for _ in parts]
            yield mine[0] if len(mine) == 1 else combined(self.runner, mine)

    def _pooled(self, kind: str, tasks: Sequence[Sequence[Any]], weights: Sequence[int] | None = None,
                affinity: Sequence[Any] | None = None) -> Iterator[Any]:
        """Each task's result, in task order, from the forked processes, handed out as
        ``weights`` and ``affinity`` say (:func:`~harness.run.handout.handout`)."""
        adapters = tuple(sorted(self.runner.selected.calls))
        if self._pool is not None and self._forked_with != adapters:
            self.close()
        if self._pool is None:
            context = multiprocessing.get_context("fork")
            # with fork, the pool starts every process at the first submit, in this thread
            forker_is_main = threading.current_thread() is threading.main_thread()
            self._pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=context, initializer=_child_init,
                                             initargs=(os.getpid(), forker_is_main))
            self._forked_with = adapters
        pool, pack = self._pool, self.pack
        try:
            for result, counts in handout(lambda group: pool.submit(_run_group_in_child, kind, group, pack), tasks,
                                          weights=weights, affinity=affinity, processes=self.jobs):
                if counts is not None:  # the child's copy of this runner's unit cache counted them
                    self.runner.unit_cache.add_counts(counts)
                yield result
        except BrokenProcessPool as exc:
            self.close()
            raise JobsBroken(
                "a --jobs process died while running adapters in process (a crash in an adapter "
                "that is not isolated); rerun with --isolate to make the crash an outcome, or --jobs 1"
            ) from exc

    def close(self, *, terminate: bool = False) -> None:
        """End the processes (and their workers); let go of the runner tasks here read (held,
        a finished run's state lived on in pytest or the Python API: after 10^6 spaces through
        tiktoken's o200k_base, with registry and tiktoken's cache let go, 299 MB, now 86)."""
        global _RUNNER
        _RUNNER = None if _RUNNER is self.runner else _RUNNER
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if not terminate:
            pool.shutdown(wait=True, cancel_futures=True)
            return
        # the executor keeps its processes private; terminating them is the only way not
        # to wait for a task that may run for minutes
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
