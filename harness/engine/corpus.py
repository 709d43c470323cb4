"""The corpus phase on the plan's executor: ``local`` or ``dask``.

``local`` feeds the documents to the runner 256 at a time (its ``jobs`` processes do the
work); ``dask`` cuts them into ``shard_size`` shards run on a Dask cluster
(:mod:`harness.scale.executor`), recording finished shards in the run folder so a
resumed run completes only the missing ones. Either way the phase reports what
parity.json's ``run.executor`` says: kind, workers, shards, documents, seconds and
documents per second. The local executor never imports Dask.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from harness.engine.plan import Plan, PlanError

__all__ = ["CorpusPhase"]


class CorpusPhase:
    """Runs the corpus on the plan's executor; keeps a Dask cluster open for the other
    phases and for shrinking until :meth:`close`."""

    def __init__(self, plan: Plan, runner: Any, choice: Any, *, folder: Path | None, progress: bool = False) -> None:
        self.plan = plan
        self.runner = runner
        self.choice = choice
        self.folder = folder
        self.show = progress
        self.executor: Any = None
        #: what the executor raises when it cannot run units (a Dask worker that cannot
        #: build the run's adapters): a usage error of the run, exit 2
        self.errors: tuple[type[BaseException], ...] = ()
        self.local = {"shards": 0, "documents": 0, "bytes": 0, "seconds": 0.0}

    def start(self) -> None:
        """Start the Dask cluster (``dask`` executor): every phase's units run on it."""
        if self.plan.executor.kind != "dask":
            return
        from harness.scale.executor import DaskExecutor, ExecutorError
        from harness.scale.progress_store import ProgressStore, ResumeError, fingerprint
        from harness.scale.shards import DEFAULT_SHARD_SIZE

        size = self.plan.executor.shard_size or DEFAULT_SHARD_SIZE
        store = ProgressStore(self.folder)
        try:
            store.start(fingerprint(corpus=list(self.plan.corpus), options=self.plan.corpus_options, shard_size=size,
                                    selection=self.choice), resume=self.plan.executor.resume is not None)
        except ResumeError as exc:
            raise PlanError(str(exc)) from exc
        self.executor = DaskExecutor(runner=self.runner, selection=self.choice, scheduler=self.plan.executor.scheduler,
                                     workers=self.plan.executor.jobs, store=store, progress=self.show)
        self.errors = (ExecutorError,)
        try:
            self.executor.start()
        except ExecutorError as exc:
            self.close()
            raise PlanError(str(exc)) from exc
        self.runner.use_executor(self.executor)

    def run(self) -> None:
        from harness.cases.corpus import CorpusError
        from harness.report.outcome_spool import SPOOL_FOLDER, OutcomeSpool, pack_inputs
        from harness.run.screen import SCREEN_CHECKS

        every = self.plan.corpus_options.full_checks_every
        if self.plan.corpus and every > 1:
            self.runner.notes.append(
                f"corpus: every document ran the screen ({', '.join(SCREEN_CHECKS)}); 1 in {every} (by a hash "
                f"of its text) and every document the screen flagged ran every check (--full-checks-every 1: all)")

        if self.plan.corpus and self.folder is not None:
            # the documents' outcomes go to the run folder, not into memory; --jobs
            # processes hand them back packed, as the spool keeps them
            self.runner.spool = OutcomeSpool(self.folder / SPOOL_FOLDER)
            self.runner.spool.receiving = True
            self.runner.jobs.pack = pack_inputs
        try:
            if self.executor is not None:
                self._dask()
            elif self.plan.corpus:
                self._local()
        except CorpusError as exc:
            raise PlanError(str(exc)) from exc
        finally:
            self.runner.jobs.pack = None
            if self.runner.spool is not None:
                self.runner.spool.receiving = False

    def _local(self) -> None:
        from harness.cases.corpus import corpus_case_batches

        started = time.perf_counter()
        for batch in corpus_case_batches(list(self.plan.corpus), self.plan.corpus_options):
            self.runner.run_cases(batch)
            self.local["shards"] += 1
            self.local["documents"] += len(batch)
            self.local["bytes"] += sum(len(c.text.encode("utf-8", "surrogatepass")) for c in batch)
        self.local["seconds"] += time.perf_counter() - started

    def _dask(self) -> None:
        from harness.cases.corpus import corpus_files
        from harness.scale.executor import ExecutorError
        from harness.scale.shards import DEFAULT_SHARD_SIZE, plan_shards

        if not self.plan.corpus:
            return
        size = self.plan.executor.shard_size or DEFAULT_SHARD_SIZE
        try:
            # workers that see the corpus files read their shards themselves: the client
            # then sends a byte range per shard, not its text
            files = [os.path.abspath(f) for f, _ in corpus_files(self.plan.corpus)]
            by_reference = self.executor.workers_see(files)
            self.executor.run_corpus(plan_shards(list(self.plan.corpus), self.plan.corpus_options, size=size,
                                                 by_reference=by_reference))
        except ExecutorError as exc:
            self.close()
            raise PlanError(str(exc)) from exc

    @property
    def lost(self) -> list[str]:
        return list(self.executor.stats["lost_shards"]) if self.executor is not None else []

    def info(self) -> dict[str, Any] | None:
        """``run.executor`` of parity.json (None: no corpus, nothing to say)."""
        if not self.plan.corpus:
            return None
        every = {"full_checks_every": self.plan.corpus_options.full_checks_every}
        if self.executor is not None:
            return {**self.executor.info(scheduler_shown=self.plan.executor.scheduler), **every}
        s = self.local
        return {"kind": "local", "workers": self.runner.jobs.jobs, "scheduler": None, "shards": s["shards"],
                "documents": s["documents"], "bytes": s["bytes"], "seconds": round(s["seconds"], 3),
                "documents_per_second": round(s["documents"] / s["seconds"], 1) if s["seconds"] else None, **every}

    def close(self) -> None:
        if self.executor is not None:
            self.runner.use_executor(None)
            self.executor.close()
