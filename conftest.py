"""This repository's own pytest set-up.

Hypothesis profiles ``dev``, ``ci`` and ``nightly`` are defined once, in
``harness.generate.strategies``; they are registered here for this repository's tests, and the one
named by ``HYPOTHESIS_PROFILE`` is loaded (``ci`` when unset: CI runs plain ``pytest``).
``pytest --hypothesis-profile NAME`` still overrides it. The conformance suite itself is
requested by ``tests/test_conformance.py`` through the tokconf pytest plugin.
"""

from hypothesis import settings

from harness.generate.strategies import register_profiles, resolve_profile

register_profiles()
settings.load_profile(resolve_profile(None))

# pytester drives the tokconf pytest plugin in a subprocess (tests/test_plugin.py)
pytest_plugins = ["pytester"]
