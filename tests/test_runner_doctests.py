"""The worked examples in the runner modules' docstrings are tests too."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "harness.shrink", "harness.strategies", "harness.calls", "harness.check_base", "harness.checks_special",
    "harness.checks_structure", "harness.judging", "harness.evidence", "harness.run_result", "harness.budget",
    "harness.selection", "harness.parity_json", "harness.new_cases", "harness.pytest_plugin",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0
    assert tried > 0
