"""A run: adapters selected, inputs fed through the checks, divergences judged.

- :mod:`~harness.run.selection`: which adapters run and which is each encoding's reference;
- :mod:`~harness.run.runner`: cases and generated inputs through every check;
- :mod:`~harness.run.judging`: unexpected, documented or stale;
- :mod:`~harness.run.evidence`: what a person needs to see and reproduce a divergence;
- :mod:`~harness.run.result`: the values a run produces.
"""
