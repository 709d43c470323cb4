"""Every worked example in a docstring of the engine and the adapters is a test too."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import harness
import implementations


def _modules() -> list[str]:
    names = []
    for package in (harness, implementations):
        for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
            if not info.name.endswith("__main__"):  # importing it runs the CLI
                names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0, f"{failures} worked example(s) in {name} failed; run python -m doctest on it"


def test_the_examples_are_not_vacuous() -> None:
    tried = sum(doctest.testmod(importlib.import_module(n), optionflags=doctest.ELLIPSIS).attempted
                for n in _modules())
    assert tried >= 100, tried
