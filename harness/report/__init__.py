"""Reports: what a run leaves behind for people and for the next run.

- :mod:`~harness.report.parity_json`: ``parity.json`` from a run (schema
  ``parity.schema.json`` beside it, validated by :mod:`~harness.report.schema`);
- :mod:`~harness.report.view`, :mod:`~harness.report.render`, :mod:`~harness.report.page`:
  the self-contained HTML page (templates in ``templates/``);
- :mod:`~harness.report.diff`, :mod:`~harness.report.diff_page`: what changed between runs.
"""
