"""Scale out: a run's units on a Dask cluster (``--executor dask``), the corpus in shards.

- :mod:`~harness.scale.shards`: the corpus cut into shards of documents, each knowing
  the file, document number and byte offset it starts and ends at;
- :mod:`~harness.scale.shard_task`: what a Dask worker runs: the run's adapters built
  once per process, a shard through the same per-case work as ``--jobs``
  (:func:`harness.run.parallel.run_task`), a compact :class:`~harness.run.parallel.Delta` back;
- :mod:`~harness.scale.progress_store`: finished shards and their deltas in the run
  folder, so ``--resume RUN`` completes only the missing ones;
- :mod:`~harness.scale.executor`: the client: shards submitted in a bounded window,
  deltas merged in shard order;
- :mod:`~harness.scale.cluster`: the cluster every ``--executor dask`` command runs on
  (embedded, of ``--jobs`` workers, or ``--scheduler``);
- :mod:`~harness.scale.golden_chunks`: ``snapshot`` and ``gate`` on a cluster: a golden's
  inputs recorded in chunks, handed back in input order.

Nothing here imports Dask at module level, and the local executor never imports these
modules: ``tokconf[dask]`` is optional.
"""
