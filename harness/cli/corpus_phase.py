"""The corpus phase of ``tokconf run`` on the chosen executor: ``--executor local|dask``.

``local`` feeds the documents to the runner 256 at a time (its ``--jobs`` processes do
the work); ``dask`` cuts them into ``--shard-size`` shards run on a Dask cluster
(:mod:`harness.scale.executor`), recording finished shards in the run folder so
``--resume RUN`` completes only the missing ones. Either way the phase reports what
parity.json's ``run.executor`` says: kind, workers, shards, documents, seconds and
documents per second. The local executor never imports Dask.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from harness.cli import UsageError
from harness.cli.executor_args import add_cluster_options, check_cluster_options

__all__ = ["CorpusPhase", "add_executor_options", "check_executor_options"]


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    group = add_cluster_options(parser, what="where the --corpus documents are checked")
    group.add_argument("--shard-size", type=int, default=None, metavar="N",
                       help="with --executor dask: documents per shard (default 1000)")
    group.add_argument("--resume", metavar="RUN_FOLDER",
                       help="with --executor dask: complete the interrupted run in RUN_FOLDER (same flags): "
                            "only the shards not finished there are checked")


def check_executor_options(args: argparse.Namespace) -> None:
    """Usage errors (exit 2) before anything is built."""
    if not check_cluster_options(args, dask_only=("--scheduler", "--resume", "--shard-size")):
        return
    if not args.corpus:
        raise UsageError("--executor dask checks the documents of --corpus on a cluster; give --corpus PATH "
                         "(cases and generated inputs run on this machine)")
    if args.shard_size is not None and args.shard_size < 1:
        raise UsageError(f"--shard-size must be at least 1 document, got {args.shard_size}")
    if args.resume is not None and not (Path(args.resume) / "shards" / "progress.json").is_file():
        raise UsageError(f"--resume {args.resume}: not a run folder of `tokconf run --executor dask` "
                         f"(no shards/progress.json in it)")


class CorpusPhase:
    """Runs the corpus on the executor the flags chose; keeps it open for shrinking until :meth:`close`."""

    def __init__(self, args: argparse.Namespace, runner: Any, selection: Any, corpus: Any, *,
                 folder: Path | None) -> None:
        self.args = args
        self.runner = runner
        self.selection = selection
        self.corpus = corpus
        self.folder = folder
        self.executor: Any = None
        self.local = {"shards": 0, "documents": 0, "bytes": 0, "seconds": 0.0}

    def run(self) -> None:
        from harness.cases.corpus import CorpusError

        try:
            if self.args.executor == "dask":
                self._dask()
            else:
                self._local()
        except CorpusError as exc:
            raise UsageError(str(exc)) from exc

    def _local(self) -> None:
        from harness.cases.corpus import corpus_case_batches

        started = time.perf_counter()
        for batch in corpus_case_batches(self.args.corpus, self.corpus):
            self.runner.run_cases(batch)
            self.local["shards"] += 1
            self.local["documents"] += len(batch)
            self.local["bytes"] += sum(len(c.text.encode("utf-8", "surrogatepass")) for c in batch)
        self.local["seconds"] += time.perf_counter() - started

    def _dask(self) -> None:
        from harness.scale.executor import DaskExecutor, ExecutorError
        from harness.scale.progress_store import ProgressStore, ResumeError, fingerprint
        from harness.scale.shards import DEFAULT_SHARD_SIZE, plan_shards

        size = self.args.shard_size or DEFAULT_SHARD_SIZE
        store = ProgressStore(self.folder)
        try:
            store.start(fingerprint(corpus=self.args.corpus, options=self.corpus, shard_size=size,
                                    selection=self.selection), resume=self.args.resume is not None)
        except ResumeError as exc:
            raise UsageError(str(exc)) from exc
        self.executor = DaskExecutor(runner=self.runner, selection=self.selection, scheduler=self.args.scheduler,
                                     workers=self.args.jobs, store=store, progress=not self.args.quiet)
        try:
            self.executor.start()
            self.runner.shrink_many = self.executor.shrink_many
            self.executor.run_corpus(plan_shards(self.args.corpus, self.corpus, size=size))
        except ExecutorError as exc:
            self.close()
            raise UsageError(str(exc)) from exc

    @property
    def lost(self) -> list[str]:
        return list(self.executor.stats["lost_shards"]) if self.executor is not None else []

    def info(self) -> dict[str, Any] | None:
        """``run.executor`` of parity.json (None: no corpus, nothing to say)."""
        if self.executor is not None:
            return self.executor.info(scheduler_shown=self.args.scheduler)
        if not self.args.corpus:
            return None
        s = self.local
        return {"kind": "local", "workers": self.runner.jobs.jobs, "scheduler": None, "shards": s["shards"],
                "documents": s["documents"], "bytes": s["bytes"], "seconds": round(s["seconds"], 3),
                "documents_per_second": round(s["documents"] / s["seconds"], 1) if s["seconds"] else None}

    def close(self) -> None:
        if self.executor is not None:
            self.runner.shrink_many = None
            self.executor.close()
