"""Generation: the inputs no case file holds, and making findings small.

- :mod:`~harness.generate.strategies`: named hypothesis strategies and the
  ``dev``/``ci``/``nightly`` profiles;
- :mod:`~harness.generate.budget`: how many generated inputs each adapter gets;
- :mod:`~harness.generate.shrink`: the deterministic shrinking algorithm;
- :mod:`~harness.generate.minimise`: what "still fails" means for a finding.
"""
