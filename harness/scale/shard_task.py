"""What a Dask worker runs: a shard of the corpus through the run's checks.

A worker process builds the run's adapters once (:func:`_runner_for`, cached per
process and keyed by the :class:`~harness.run.choice.AdapterChoice`, which are
everything that chooses them), from the same registry, plugins and hash-checked
vocabularies the client used. If the adapters it ends up with are not the client's (a
library missing on that machine, a vocabulary folder it cannot see), the task fails
with :class:`WorkerSetupError` naming the adapter and the reason: a shard silently
checked on fewer adapters would make the report lie.

A shard then runs exactly as a ``--jobs`` task does (:func:`harness.run.parallel.run_task`,
on a fresh copy of the worker's runner), as does a task of any other phase (:func:`run_units`), and the task returns the
:class:`~harness.run.parallel.Delta`: counts per cell, pending findings with their inputs,
and each input's encode outcome per adapter (what the outcome log and ``tokconf diff``
need: IDs, the size of the tokenized text; never the checks' other outputs), packed as
the outcome log's records (:func:`~harness.report.outcome_spool.pack_inputs`).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, replace
from typing import Any, Sequence

from harness.report.outcome_spool import pack_inputs
from harness.run.choice import AdapterChoice, selected_for
from harness.run import parallel
from harness.run.parallel import Delta
from harness.scale.shards import Shard

__all__ = ["ShardResult", "WorkerSetupError", "run_shard", "run_units", "shrink_on_worker", "worker_name", "worker_pid"]

#: AdapterChoice -> the runner a worker process built for them
_RUNNERS: dict[AdapterChoice, Any] = {}


class WorkerSetupError(Exception):
    """A Dask worker could not build the run's adapters as the client did."""


@dataclass(frozen=True)
class ShardResult:
    shard: Shard  # without its cases: the client has them, or the progress file names them
    delta: Delta
    seconds: float
    worker: str


def _runner_for(spec: AdapterChoice, expected: Sequence[str]) -> Any:
    runner = _RUNNERS.get(spec)
    if runner is None:
        from harness.run.runner import Runner

        try:
            selected = selected_for(spec)
        except Exception as exc:  # noqa: BLE001 - whatever stops the build is the worker's error
            raise WorkerSetupError(f"Dask worker {worker_name()}: cannot build the run's adapters: "
                                   f"{type(exc).__name__}: {exc}; install tokconf and the adapters' "
                                   f"libraries on every worker") from exc
        runner = Runner(selected, jobs=1, shrink_seconds=None)
        _RUNNERS[spec] = runner
    for name in sorted(set(expected) - set(runner.selected.calls)):
        # a case's own reference the client added during its cases phase: corpus
        # documents run on it there, so they do here
        try:
            runner.selected.add(name)
        except Exception:  # noqa: BLE001 - reported below with the row's reason
            pass
    missing = sorted(set(expected) - set(runner.selected.calls))
    if missing:
        rows = runner.selected.rows
        why = "; ".join(f"{n}: {rows[n].reason if n in rows else 'not selected'}" for n in missing)
        raise WorkerSetupError(f"Dask worker {worker_name()}: adapter(s) unavailable here: {why}; install the same "
                               f"libraries and vocabularies on every worker (tokconf list shows why)")
    return runner


def worker_name() -> str:
    return f"{socket.gethostname()} pid {os.getpid()}"


def run_shard(spec: AdapterChoice, expected: Sequence[str], shard: Shard) -> ShardResult:
    """Check ``shard``'s documents on the run's adapters; the delta a ``--jobs`` task returns."""
    from harness.cases.corpus import CorpusError
    from harness.scale.shards import SourceChanged

    runner = _runner_for(spec, expected)
    started = time.perf_counter()
    try:
        cases = shard.read_cases()
    except (OSError, SourceChanged, CorpusError) as exc:
        raise WorkerSetupError(f"Dask worker {worker_name()}: cannot read {shard.where}: {exc}") from exc
    delta = parallel.run_task(runner, "cases", (list(cases), {}))
    # the documents' outcomes as the log's records: the client spools them as they are
    # (pickled Outcome objects cost it more to convert than the worker to check them)
    delta = replace(delta, inputs={}, packed_inputs=pack_inputs(delta.inputs))
    return ShardResult(shard.without_cases(), delta, time.perf_counter() - started, worker_name())


def run_units(spec: AdapterChoice, expected: Sequence[str], kind: str, task: Sequence[Any]) -> Any:
    """One task of any phase (:func:`harness.run.parallel.run_task`) on the worker's adapters."""
    return parallel.run_task(_runner_for(spec, expected), kind, task)


def shrink_on_worker(spec: AdapterChoice, expected: Sequence[str], work: tuple[Any, int, float | None]) -> Any:
    """One finding shrunk on the worker's adapters (:func:`harness.run.parallel.run_task`)."""
    return parallel.run_task(_runner_for(spec, expected), "shrink", [work])[0]


def worker_pid() -> int:
    return os.getpid()
