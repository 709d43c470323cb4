"""The conformance suite of this repository: the shipped cases and the generated checks
over every available adapter, under the hypothesis ``ci`` profile unless
``HYPOTHESIS_PROFILE`` or ``--tokconf-profile`` says otherwise.

The items are the units of the plan ``tokconf run`` runs (``harness/pytest/suite.py``):
one vocabulary check per adapter (``vocab[...]``), one per case (``<file>.yaml::<case
id>``), one per slice of the run's generated inputs (``generated[<encoding>]::NNN``) and
the coverage-steered inputs (``steered``). Select with ``-k``, e.g.
``pytest tests/test_conformance.py -k 'hf or seed000'``.
"""

from harness.pytest.plugin import tokconf_suite

test_tokconf = tokconf_suite()
