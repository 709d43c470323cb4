"""Generated pools kept on disk: the same pool back, exactly, and only when repeatable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.generate import pool_cache as pools, strategies  # noqa: the tests name it pools
from harness.generate.strategies import alphabet_text, hostile_text


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_a_keyed_pool_is_drawn_once_and_read_back_exactly(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = pools.pooled(hostile_text(["<|endoftext|>"]), count=60, seed_value=7, key=["hostile_text", "<|endoftext|>"])
    assert first == strategies.generate(hostile_text(["<|endoftext|>"]), count=60, seed_value=7)
    assert any("\ud800" <= ch <= "\udfff" for text in first for ch in text)  # surrogates travel too
    (written,) = (cache / "pools").iterdir()

    def refuse(*args: object, **kwargs: object) -> list[str]:
        raise AssertionError("the pool was drawn again instead of read from the cache")

    monkeypatch.setattr(strategies, "generate", refuse)
    assert pools.pooled(hostile_text(["<|endoftext|>"]), count=60, seed_value=7,
                        key=["hostile_text", "<|endoftext|>"]) == first
    assert json.loads(written.read_text(encoding="ascii")) == first


def test_count_seed_and_key_each_name_another_pool(cache: Path) -> None:
    base = pools.pool_path(["alphabet_text", "a", "b"], count=10, seed_value=1)
    assert base is not None and base.parent == cache / "pools"
    others = {pools.pool_path(["alphabet_text", "a", "b"], count=11, seed_value=1),
              pools.pool_path(["alphabet_text", "a", "b"], count=10, seed_value=2),
              pools.pool_path(["alphabet_text", "a", "c"], count=10, seed_value=1)}
    assert base not in others and len(others) == 3


def test_no_key_no_file(cache: Path) -> None:
    pools.pooled(alphabet_text("ab "), count=20, seed_value=3, key=None)
    assert not (cache / "pools").exists()


def test_a_damaged_file_is_drawn_again_and_rewritten(cache: Path) -> None:
    key = ["alphabet_text", " ", "a", "b"]
    path = pools.pool_path(key, count=20, seed_value=3)
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_text('["not", 3]', encoding="ascii")
    pool = pools.pooled(alphabet_text("ab "), count=20, seed_value=3, key=key)
    assert pool == strategies.generate(alphabet_text("ab "), count=20, seed_value=3)
    assert json.loads(path.read_text(encoding="ascii")) == pool
