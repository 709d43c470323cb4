"""The converted tokenizer.json cache: keyed, atomic, reused, rebuilt when damaged."""

from __future__ import annotations

from pathlib import Path

import pytest
import tokenizers

from implementations.hf import convert as hf_convert
@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path))
    return tmp_path / "hf"


def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every conversion (so a test can tell a cache hit from a rebuild)."""
    calls: list[str] = []
    real = hf_convert.build_tiktoken_tokenizer

    def spy(*args, **kwargs):
        calls.append("built")
        return real(*args, **kwargs)

    monkeypatch.setattr(hf_convert, "build_tiktoken_tokenizer", spy)
    return calls


def test_cold_then_warm(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = built(monkeypatch)
    first = hf_convert.cached_tiktoken_tokenizer("cl100k_base")
    files = sorted(p.name for p in cache.iterdir())
    assert len(files) == 1 and files[0].startswith(f"cl100k_base-tokenizers-{tokenizers.__version__}-")
    assert files[0].endswith(".json")  # no temporary file left behind
    second = hf_convert.cached_tiktoken_tokenizer("cl100k_base")
    assert calls == ["built"]
    text = "Year 2024 and 1000000 dollars <|endoftext|>"
    assert second.encode(text).ids == first.encode(text).ids == [
        9679, 220, 2366, 19, 323, 220, 1041, 931, 15, 11441, 220, 100257
    ]


def test_key_changes_with_tokenizers_version_and_vocabulary_hash(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import vocab
    calls = built(monkeypatch)
    # the key is computed from the pinned hash, not from the ranks: a tiny vocabulary will do
    monkeypatch.setattr(hf_convert, "load_tiktoken_ranks", lambda name: {bytes([b]): b for b in range(256)})
    hf_convert.cached_tiktoken_tokenizer("cl100k_base")
    monkeypatch.setattr(tokenizers, "__version__", "0.0.0-test")
    hf_convert.cached_tiktoken_tokenizer("cl100k_base")
    pinned = vocab.VOCAB_FILES["cl100k_base.tiktoken"]
    other = vocab.VocabFile(pinned.name, "0" * 64, pinned.tiktoken_url, pinned.package_source, pinned.distribution)
    monkeypatch.setitem(hf_convert.VOCAB_FILES, "cl100k_base.tiktoken", other)
    hf_convert.cached_tiktoken_tokenizer("cl100k_base")
    assert calls == ["built"] * 3
    names = sorted(p.name for p in cache.iterdir())
    assert len(names) == 3 and len({n.rsplit("-", 1)[1] for n in names}) == 3
    assert sum("tokenizers-0.0.0-test-" in n for n in names) == 2


@pytest.mark.parametrize("damage", ["garbage", "other-vocabulary"])
def test_damaged_cache_is_rebuilt(cache: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    hf_convert.cached_tiktoken_tokenizer("cl100k_base")
    (path,) = cache.iterdir()
    if damage == "garbage":
        path.write_text("{truncated")
    else:
        small = tokenizers.Tokenizer(tokenizers.models.BPE({"a": 0}, []))
        small.save(str(path))
    calls = built(monkeypatch)
    rebuilt = hf_convert.cached_tiktoken_tokenizer("cl100k_base")
    assert calls == ["built"]
    assert rebuilt.encode("hello world").ids == [15339, 1917]
    assert tokenizers.Tokenizer.from_file(str(path)).encode("hello world").ids == [15339, 1917]
