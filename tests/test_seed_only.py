"""Generated inputs are a function of the seed: importing a module full of literals does not
change them (Hypothesis would otherwise draw some of its values from those literals)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st

from harness.generate.seed_only import seed_only
from harness.generate.strategies import alphabet_text, generate, hostile_text


def _pools() -> tuple[list[str], list[str], list[str]]:
    return (generate(hostile_text(["<|endoftext|>"]), count=300, seed_value=11),
            generate(alphabet_text("abc \n"), count=300, seed_value=11),
            generate(st.text(st.sampled_from("xyz")), count=200, seed_value=11))


def test_a_new_local_module_full_of_literals_changes_no_generated_input(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    before = _pools()
    # a module outside site-packages and the standard library is "local" to Hypothesis: a
    # user's plugin, or a test module, full of literals its draws would otherwise mix in
    literals = [f"plugin_literal_{n}" for n in range(300)] + ["xyz" * n for n in range(1, 40)]
    (tmp_path / "literal_rich_plugin.py").write_text(
        "WORDS = [" + ", ".join(repr(w) for w in literals) + "]\nNUMBERS = [" +
        ", ".join(str(7919 * n) for n in range(300)) + "]\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("literal_rich_plugin")
    try:
        after = _pools()
    finally:
        sys.modules.pop(module.__name__, None)
    assert after == before
    assert not any("plugin_literal" in text for pool in after for text in pool)


def test_hypothesis_is_left_as_it_was() -> None:
    from hypothesis.internal.conjecture import providers

    original = providers._get_local_constants
    with seed_only():
        assert providers._get_local_constants is not original
        assert len(providers._get_local_constants()) == 0
    assert providers._get_local_constants is original


def test_threads_that_draw_at_once_each_draw_from_the_seed_alone() -> None:
    """Pools drawn in threads that overlap (a Dask worker's) are the pools drawn alone, and
    Hypothesis has its own function back when the last thread is done."""
    from concurrent.futures import ThreadPoolExecutor

    from hypothesis.internal.conjecture import providers

    original = providers._get_local_constants
    alone = [generate(hostile_text(["<|endoftext|>"]), count=150, seed_value=seed) for seed in range(6)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        together = list(pool.map(lambda seed: generate(hostile_text(["<|endoftext|>"]), count=150, seed_value=seed),
                                 range(6)))
    assert together == alone
    assert providers._get_local_constants is original
