"""The conformance suite of this repository: the shipped cases and the generated checks
over every available adapter, under the hypothesis ``ci`` profile unless
``HYPOTHESIS_PROFILE`` or ``--tokconf-profile`` says otherwise.

The items come from the tokconf pytest plugin (``harness/pytest/plugin.py``): one per
case (``cases/<file>.yaml::<case id>``), one hypothesis test per adapter and its reference
(``generated[...]``) and one vocabulary check per adapter (``vocab[...]``). Select with
``-k``, e.g. ``pytest tests/test_conformance.py -k 'hf or seed000'``.
"""

from harness.pytest.plugin import tokconf_suite

test_tokconf = tokconf_suite()
