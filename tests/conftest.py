"""What every test of this suite shares."""

from __future__ import annotations

from typing import Iterator

import pytest


@pytest.fixture(autouse=True)
def _plugins_stay_in_their_test() -> Iterator[None]:
    """A test that runs ``tokconf run --plugin`` in this process loads the plugin into the
    process-wide registry, and a plugin's adapters join every run of that registry: a later
    test's ``--impl tiktoken:cl100k_base`` then ran a leaked ``slow:`` adapter too (it failed
    a coverage minimum in CI, only in suite order). Forget such a registry after the test."""
    yield
    from harness.registry import default_registry, reset_default_registry

    if default_registry().plugin_names():
        reset_default_registry()
