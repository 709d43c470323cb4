"""Scale out: the corpus phase of a run on a Dask cluster (``--executor dask``).

- :mod:`~harness.scale.shards`: the corpus cut into shards of documents, each knowing
  the file, document number and byte offset it starts and ends at;
- :mod:`~harness.scale.shard_task`: what a Dask worker runs: the run's adapters built
  once per process, a shard through the same per-case work as ``--jobs``
  (:func:`harness.run.parallel._case_task`), a compact :class:`~harness.run.parallel.Delta` back;
- :mod:`~harness.scale.progress_store`: finished shards and their deltas in the run
  folder, so ``--resume RUN`` completes only the missing ones;
- :mod:`~harness.scale.executor`: the client: a cluster (embedded or ``--scheduler``),
  shards submitted in a bounded window, deltas merged in shard order.

Nothing here imports Dask at module level except the executor, and the local executor
never imports the executor: ``tokconf[dask]`` is optional.
"""
