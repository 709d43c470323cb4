"""Adapters in worker processes: isolation, time and memory limits, crashes as outcomes.

- :mod:`harness.worker.protocol`: the framed protocol (the contract other workers speak);
- :mod:`harness.worker.server`: the Python worker, ``python -m harness.worker``;
- :mod:`harness.worker.client`: the parent's side, an :class:`~harness.calls.Executor`
  that starts, times, and restarts a worker;
- :mod:`harness.worker.differing`: a list of calls with the answers expected of it, of
  which only the positions that differ come back (the every-token phase);
- :mod:`harness.worker.limits`: memory limit, network namespace, naming a worker's death;
- :mod:`harness.worker.setup`: how a worker rebuilds the adapter, and which adapters a
  run isolates.

Nothing here is imported by the checks: they see :class:`harness.calls.Calls` only.
"""
