"""``snapshot`` and ``gate`` with ``--executor dask``: a golden's inputs recorded on a Dask cluster.

The work unit is a chunk of consecutive inputs (:data:`CHUNK`). A worker process builds
the command's adapters once (:func:`_selected_for`, cached per process and keyed by the
:class:`~harness.run.choice.AdapterChoice`, as :mod:`harness.scale.shard_task`
does for ``run``), computes :func:`harness.golden.snapshot.record` for each text of the
chunk and returns those records: plain data (:class:`~harness.outcomes.Outcome` values by
adapter and path). The client keeps a bounded window of chunks submitted and hands the
records back **in input order**, whichever chunk finished first, so a golden written
this way holds the local one's records and a gate lists the local gate's changes in the
local order. :class:`DaskRecords` is a :data:`harness.golden.snapshot.Recorder`.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterable, Iterator, Sequence

from harness.run.choice import AdapterChoice
from harness.scale.cluster import ExecutorError, connect, disconnect, require_dask, worker_count
from harness.scale.shard_task import WorkerSetupError, worker_name

__all__ = ["CHUNK", "DaskRecords", "record_chunk"]

#: inputs per task: short documents take about a second of a worker's time at this size,
#: well above the scheduler's few milliseconds a task
CHUNK = 500

#: AdapterChoice -> the adapters a worker process built for them
_SELECTED: dict[AdapterChoice, Any] = {}


def _selected_for(spec: AdapterChoice, wanted: Sequence[str]) -> Any:
    selected = _SELECTED.get(spec)
    if selected is None:
        from harness.golden.snapshot import build_adapters
        from harness.run.choice import build_registry
        from harness.worker.setup import Isolation

        try:
            registry = build_registry(plugin=spec.plugin, vocab_dir=spec.vocab_dir, source_root=spec.source_root,
                                      impl=spec.impl, encoding_file=spec.encoding_file)
            selected = build_adapters(registry, list(spec.impl), isolation=Isolation(timeout_s=spec.timeout))
        except Exception as exc:  # noqa: BLE001 - whatever stops the build is the worker's error
            raise WorkerSetupError(f"Dask worker {worker_name()}: cannot build the adapters: "
                                   f"{type(exc).__name__}: {exc}; install tokconf and the adapters' "
                                   f"libraries on every worker") from exc
        _SELECTED[spec] = selected
    missing = sorted(set(wanted) - set(selected.calls))
    if missing:
        raise WorkerSetupError(f"Dask worker {worker_name()}: adapter(s) unavailable here: {', '.join(missing)}; "
                               f"install the same libraries and vocabularies on every worker")
    return selected


def record_chunk(spec: AdapterChoice, pairs: dict[str, str], texts: Sequence[str | None]) -> list[Any]:
    """What a worker runs: ``record`` of each text (None: nothing to record) on the adapters
    ``pairs`` names (the golden's name -> the adapter recording it)."""
    from harness.golden.snapshot import record_many

    selected = _selected_for(spec, list(pairs.values()))
    calls = {golden: selected.calls[now] for golden, now in pairs.items()}
    return record_many(calls, texts)


class DaskRecords:
    """The client: chunks submitted in a bounded window, records yielded in input order."""

    def __init__(self, *, spec: AdapterChoice, scheduler: str | None, workers: int, chunk: int = CHUNK,
                 window: int | None = None) -> None:
        require_dask()
        if chunk < 1:
            raise ValueError(f"a chunk is at least 1 input, got {chunk}")
        self.spec = spec
        self.scheduler = scheduler
        self.requested = max(1, workers)
        self.chunk = chunk
        self.window = window
        self.client: Any = None
        self.cluster: Any = None
        self.chunks = 0

    def __enter__(self) -> "DaskRecords":
        self.client, self.cluster = connect(scheduler=self.scheduler, workers=self.requested)
        return self

    def __exit__(self, *exc: Any) -> None:
        client, cluster, self.client, self.cluster = self.client, self.cluster, None, None
        disconnect(client, cluster)

    @property
    def workers(self) -> int:
        return worker_count(self.client, self.requested)

    def __call__(self, calls: dict[str, Any], items: Iterable[tuple[Any, str | None]]) -> Iterator[tuple[Any, Any]]:
        from harness.golden.snapshot import input_chunks

        pairs = {golden: c.name for golden, c in calls.items()}
        window = self.window or max(2, 3 * self.workers)
        pending: deque[tuple[list[tuple[Any, str | None]], Any]] = deque()
        try:
            for chunk in input_chunks(items, self.chunk):
                texts = [text for _, text in chunk]
                future = None if all(t is None for t in texts) else self.client.submit(
                    record_chunk, self.spec, pairs, texts, pure=False)
                pending.append((chunk, future))
                while len(pending) >= window:
                    yield from self._take(*pending.popleft())
            while pending:
                yield from self._take(*pending.popleft())
        finally:  # an error, or the consumer stopped: nothing left running for nobody
            for _, future in pending:
                if future is not None:
                    future.cancel()

    def _take(self, chunk: list[tuple[Any, str | None]], future: Any) -> Iterator[tuple[Any, Any]]:
        from distributed.scheduler import KilledWorker

        if future is None:
            records: list[Any] = [None] * len(chunk)
        else:
            try:
                records = future.result()
            except WorkerSetupError as exc:
                raise ExecutorError(str(exc)) from exc
            except KilledWorker as exc:
                first, last = (getattr(item, "source", "?") for item, _ in (chunk[0], chunk[-1]))
                raise ExecutorError(f"inputs {first} to {last} ({len(chunk)}): the Dask workers that recorded "
                                    f"them died ({exc}); record them alone, or isolate the adapter that "
                                    f"crashes") from exc
        self.chunks += 1
        for (item, _), outcomes in zip(chunk, records):
            yield item, outcomes
