"""Cases: the fixed inputs of a run, read from YAML.

- :mod:`~harness.cases.model`: the :class:`Case` value (input, policy, expectations,
  documented divergences) shared by the loader, the checks and the runner;
- :mod:`~harness.cases.yaml_source`: YAML with the line of every node, so errors say
  file, line and field;
- :mod:`~harness.cases.loader`: the schema (``cases.schema.json`` beside it) and the loader;
- :mod:`~harness.cases.match`: which adapters a case applies to;
- :mod:`~harness.cases.writer`: new findings written back as ready-to-commit cases.
"""
