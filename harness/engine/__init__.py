"""The engine's front: a run as a :class:`~harness.engine.plan.Plan`, its input phases
(:mod:`harness.engine.phases`), and :func:`~harness.engine.execute.execute`, which runs a
plan on its executor and writes its reports.

Layers: the front doors (:mod:`harness.cli`, :mod:`harness.pytest`, the Python API)
build plans and call in here; this package drives :mod:`harness.run` (units, deltas,
judging) and :mod:`harness.scale` (Dask) and is imported by neither.
"""
