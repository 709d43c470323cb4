"""``--executor dask``: a run's units on a Dask cluster, the corpus's in shards.

Every phase's tasks run on the cluster (:meth:`DaskExecutor.units`, the backend of the
runner's :class:`~harness.run.parallel.Jobs`); the corpus, which may not fit in memory,
runs as described below.

The client (``tokconf run``) streams the corpus into shards (:mod:`harness.scale.shards`),
keeps a bounded window of them submitted (so the corpus is never all in memory), and
merges each shard's :class:`~harness.run.parallel.Delta` into its runner **in shard
order**, whichever worker finished first: the very merge ``--jobs`` uses, so the report
is the local executor's. Findings are shrunk by Dask tasks too (:meth:`DaskExecutor.shrink_many`).

A worker that dies is Dask's to handle: the scheduler gives its shards to another
worker. A shard whose task was on more than ``allowed-failures`` (Dask's setting, 3 by
default) workers that died gets ``KilledWorker``. Dask also blames the tasks merely
queued on a dying worker, so such a shard is a *suspect*: once the other shards are
done it runs again alone, and only if it kills workers then too is it given up: the run
records its document range in a note and in ``run.executor.lost_shards``, merges the
others, and fails (exit 1) rather than retrying it forever. Results that wait behind a
suspect are kept in the progress file, not in memory.

The cluster, embedded or ``--scheduler``, is :mod:`harness.scale.cluster`'s. Dask is
imported only when the run asks for it.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Iterable, Iterator, Sequence, TextIO

from harness.run.parallel import merge
from harness.scale.cluster import DaskMissing, ExecutorError, connect, disconnect, require_dask, worker_count
from harness.scale.shards import Shard, file_identity

__all__ = ["DaskExecutor", "DaskMissing", "ExecutorError", "require_dask"]

#: a result kept in the progress file only, read back when its turn to merge comes
_STORED = object()
#: seconds without any finished shard after which the client asks the scheduler whether
#: anything still runs: a shard whose worker was killed mid-task has been seen to stay
#: pending with every worker idle (distributed 2026.8), and would hang the run for good
STALL_CHECK_S = 15.0
STALL_HARD_MIN_S = 120.0


class DaskExecutor:
    """A Dask client (and, without ``scheduler``, the LocalCluster it started) for one run."""

    def __init__(self, *, runner: Any, selection: Any, scheduler: str | None, workers: int,
                 store: Any = None, stream: TextIO = sys.stderr, progress: bool = True,
                 window: int | None = None) -> None:
        require_dask()
        self.runner = runner
        self.selection = selection
        self.scheduler = scheduler
        self.requested = max(1, workers)
        self.store = store
        self.stream = stream
        self.show = progress
        self.window = window
        self.client: Any = None
        self.cluster: Any = None
        self.stats = {"shards": 0, "documents": 0, "bytes": 0, "seconds": 0.0, "merge_seconds": 0.0,
                      "resumed_shards": 0, "resubmitted_shards": 0, "lost_shards": [], "read_by": "client"}
        self._last_shown = 0.0

    # -- the cluster -------------------------------------------------------------------

    def start(self) -> "DaskExecutor":
        self.client, self.cluster = connect(scheduler=self.scheduler, workers=self.requested)
        return self

    @property
    def workers(self) -> int:
        return worker_count(self.client, self.requested)

    def close(self) -> None:
        client, cluster, self.client, self.cluster = self.client, self.cluster, None, None
        disconnect(client, cluster)

    def __enter__(self) -> "DaskExecutor":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the corpus ----------------------------------------------------------------------

    def _expected(self) -> list[str]:
        return sorted(self.runner.selected.calls)

    def workers_see(self, files: list[str]) -> bool:
        """Whether every worker sees ``files`` as the client does (same size, same
        modification time): then shards name their byte ranges and workers read the
        documents themselves (:class:`harness.scale.shards.Source`), instead of the client
        sending the text. Said in ``run.executor.documents_read_by``."""
        wanted = [(file, file_identity(file)) for file in files]
        if any(identity is None for _, identity in wanted):
            return False  # e.g. a pipe (--corpus /dev/stdin): only the client can read it
        try:
            seen = self.client.run(same_files, wanted) if wanted else {}
        except Exception:  # noqa: BLE001 - a worker that cannot answer gets the text, as before
            seen = {}
        self.stats["read_by"] = "workers" if seen and all(seen.values()) else "client"
        return self.stats["read_by"] == "workers"

    def run_corpus(self, shards: Iterable[Shard]) -> None:
        """Every shard checked (or loaded from the progress file) and merged in shard order."""
        from distributed import wait

        from harness.scale.shard_task import run_shard

        started = time.perf_counter()
        expected = self._expected()
        window = self.window or max(2, 3 * self.workers)
        running: dict[Any, Shard] = {}
        ready: dict[int, Any] = {}
        order: list[int] = []  # shard ids in corpus order, not merged yet
        suspects: dict[int, Shard] = {}
        attempts: dict[int, int] = {}

        def submit(shard: Shard, attempt: str = "") -> Any:
            future = self.client.submit(run_shard, self.selection, expected, shard, pure=False,
                                        key=f"tokconf-shard-{shard.id}{attempt}-{id(self):x}")
            running[future] = shard
            return future

        gaps = {"last": time.monotonic(), "longest": 0.0}

        def next_finished() -> Any:
            """One finished future of ``running``; stalled ones are submitted again: when
            every worker is idle, or when nothing finished for ten times the longest wait
            so far (at least two minutes), whatever the scheduler says it is doing."""
            while True:
                try:
                    done = wait(list(running), timeout=STALL_CHECK_S, return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    waited = time.monotonic() - gaps["last"]
                    hard = waited > max(STALL_HARD_MIN_S, 10 * gaps["longest"])
                    if not hard and any(self.client.processing().values()):
                        continue  # a worker is on it: a long shard, not a stall
                    gaps["last"] = time.monotonic()
                    for future in [f for f in running if not f.done()]:
                        shard = running.pop(future)
                        future.cancel()
                        attempts[shard.id] = attempts.get(shard.id, 0) + 1
                        self.stats["resubmitted_shards"] += 1
                        submit(shard, f"-again{attempts[shard.id]}")
                    continue
                if done:
                    now = time.monotonic()
                    gaps["longest"] = max(gaps["longest"], now - gaps["last"])
                    gaps["last"] = now
                    return min(done, key=lambda f: running[f].id)

        try:
            for shard in shards:
                order.append(shard.id)
                if self.store is not None and shard.id in self.store.done:
                    ready[shard.id] = _STORED
                    self.stats["resumed_shards"] += 1
                else:
                    submit(shard)
                while len(running) >= window:
                    self._collect(next_finished(), running, ready, suspects)
                self._merge_ready(order, ready, started)
            while running:
                self._collect(next_finished(), running, ready, suspects)
                self._merge_ready(order, ready, started)
            for shard in list(suspects.values()):  # alone now: a crash is its own
                submit(shard, "-alone")
                self._collect(next_finished(), running, ready, None)
                self._merge_ready(order, ready, started)
        except BaseException:
            for future in running:
                future.cancel()
            raise
        finally:
            self.stats["seconds"] += time.perf_counter() - started
        self._show(started, final=True)

    def _collect(self, future: Any, running: dict[Any, Shard], ready: dict[int, Any],
                 suspects: dict[int, Shard] | None) -> None:
        """A finished task's result into ``ready``; a KilledWorker into ``suspects`` (or,
        when ``suspects`` is None, the shard ran alone: lost)."""
        from distributed.scheduler import KilledWorker

        from harness.scale.shard_task import WorkerSetupError

        shard = running.pop(future)
        try:
            result = future.result()
        except KilledWorker as exc:
            if suspects is not None:
                suspects[shard.id] = shard
                return
            why = (f"{shard.without_cases().where}: not checked: the Dask workers that ran it died, "
                   f"also when it ran alone ({exc}); check the range by itself, or --isolate the "
                   f"adapter that crashes")
            ready[shard.id] = why
            if self.store is not None:
                self.store.record_lost(shard.id, why)
            return
        except WorkerSetupError as exc:
            raise ExecutorError(str(exc)) from exc
        if self.store is not None:
            self.store.record(shard.id, result)
        # behind a suspect a result may wait long: the progress file holds it meanwhile
        ready[shard.id] = _STORED if (self.store is not None and suspects) else result

    def _merge_ready(self, order: list[int], ready: dict[int, Any], started: float) -> None:
        while order and order[0] in ready:
            shard_id = order.pop(0)
            result = ready.pop(shard_id)
            if result is _STORED:
                result = self.store.load(shard_id)
            if isinstance(result, str):  # a lost shard: what was not checked, said in the report
                self.stats["lost_shards"].append(result)
                if result not in self.runner.notes:
                    self.runner.notes.append(result)
                continue
            began = time.perf_counter()
            merge(self.runner, result.delta)
            self.stats["merge_seconds"] += time.perf_counter() - began
            self.stats["shards"] += 1
            self.stats["documents"] += result.shard.documents
            self.stats["bytes"] += result.shard.bytes
            self._show(started)

    def _show(self, started: float, *, final: bool = False) -> None:
        if not self.show:
            return
        now = time.perf_counter()
        tty = self.stream.isatty()
        if not final and now - self._last_shown < (0.2 if tty else 5.0):
            return
        self._last_shown = now
        seconds = max(1e-9, now - started)
        s = self.stats
        line = (f"corpus     dask: {s['shards']} shards ({s['resumed_shards']} resumed, {len(s['lost_shards'])} lost), "
                f"{s['documents']} documents, {s['documents'] / seconds:.0f} docs/s, "
                f"{s['bytes'] / seconds / 1024:.1f} KiB/s, {self.workers} workers")
        self.stream.write(("\r" + line + ("\n" if final else "")) if tty else line + "\n")
        self.stream.flush()

    # -- every other phase ---------------------------------------------------------------

    def units(self, kind: str, tasks: Sequence[Any], *, expected: Sequence[str]) -> Iterator[Any]:
        """Each task of a phase (vocabulary, cases, pools, generated, long) run by a Dask task,
        results yielded in task order whoever finished first: the runner merges them
        exactly as it merges its own (:attr:`harness.run.parallel.Jobs.backend`)."""
        from harness.scale.shard_task import WorkerSetupError, run_units

        futures = [self.client.submit(run_units, self.selection, list(expected), kind, task, pure=False)
                   for task in tasks]
        try:
            for future in futures:
                try:
                    yield future.result()
                except WorkerSetupError as exc:
                    raise ExecutorError(str(exc)) from exc
        finally:
            for future in futures:
                if not future.done():
                    future.cancel()

    # -- shrinking -----------------------------------------------------------------------

    def shrink_many(self, work: list[tuple[Any, int, float | None]]) -> list[Any]:
        """Each finding of ``work`` shrunk by a Dask task; results in ``work``'s order. A
        shrink whose workers kept dying leaves its finding as found."""
        from distributed.scheduler import KilledWorker

        from harness.scale.shard_task import shrink_on_worker

        expected = self._expected()
        futures = [self.client.submit(shrink_on_worker, self.selection, expected, item, pure=False)
                   for item in work]
        results = []
        for (candidate, _, _), future in zip(work, futures):
            try:
                results.append(future.result())
            except KilledWorker:
                results.append((candidate.finding, False))
        return results

    def info(self, *, scheduler_shown: str | None) -> dict[str, Any]:
        """``run.executor`` of parity.json."""
        s = self.stats
        seconds = round(s["seconds"], 3)
        return {"kind": "dask", "workers": self.workers if self.client else self.requested,
                "scheduler": scheduler_shown, "shards": s["shards"], "documents": s["documents"],
                "bytes": s["bytes"], "seconds": seconds,
                "documents_per_second": round(s["documents"] / s["seconds"], 1) if s["seconds"] else None,
                "merge_seconds": round(s["merge_seconds"], 3), "resumed_shards": s["resumed_shards"],
                "resubmitted_shards": s["resubmitted_shards"], "lost_shards": list(s["lost_shards"]),
                "documents_read_by": s["read_by"]}


def same_files(wanted: list[tuple[str, tuple[int, int]]]) -> bool:
    """On a worker: whether it sees each file with the client's (size, mtime_ns)."""
    return all(file_identity(file) == identity for file, identity in wanted)
