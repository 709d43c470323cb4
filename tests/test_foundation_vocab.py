"""Offline vocabularies: pinned hashes, tamper refusal, tiktoken cache seeding."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from harness import vocab
@pytest.fixture
def vocab_dir(tmp_path: Path):
    vocab.set_vocab_dir(tmp_path)
    yield tmp_path
    vocab.set_vocab_dir(None)


def test_every_packaged_file_matches_its_pin() -> None:
    for name in ("encoder.json", "vocab.bpe", "cl100k_base.tiktoken", "o200k_base.tiktoken"):
        data = vocab.vocab_bytes(name)
        assert hashlib.sha256(data).hexdigest() == vocab.VOCAB_FILES[name].sha256
    assert len(vocab.vocab_bytes("cl100k_base.tiktoken")) == 1_681_126


def test_r50k_base_is_derived_byte_identical_from_gpt2_files() -> None:
    data = vocab.vocab_bytes("r50k_base.tiktoken")
    assert hashlib.sha256(data).hexdigest() == (
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
    )
    ranks = vocab.load_tiktoken_ranks("r50k_base")
    assert len(ranks) == 50_256
    assert ranks[b"!"] == 0 and ranks[b" the"] == 262


def test_tampered_file_in_vocab_dir_is_refused_with_both_hashes(vocab_dir: Path) -> None:
    packaged = Path(vocab._package_file(vocab.VOCAB_FILES["cl100k_base.tiktoken"]))
    data = gzip.decompress(packaged.read_bytes())
    tampered = data.replace(b"IQ== 0", b"IQ== 9", 1)
    (vocab_dir / "cl100k_base.tiktoken").write_bytes(tampered)
    with pytest.raises(vocab.VocabHashMismatch) as info:
        vocab.vocab_bytes("cl100k_base.tiktoken")
    message = str(info.value)
    assert str(vocab_dir / "cl100k_base.tiktoken") in message
    assert vocab.VOCAB_FILES["cl100k_base.tiktoken"].sha256 in message
    assert hashlib.sha256(tampered).hexdigest() in message


def test_truncated_file_is_refused(vocab_dir: Path) -> None:
    full = vocab.vocab_bytes.__wrapped__("vocab.bpe")
    (vocab_dir / "vocab.bpe").write_bytes(full[: len(full) // 2])
    with pytest.raises(vocab.VocabHashMismatch, match="tampered with or truncated"):
        vocab.vocab_bytes("vocab.bpe")


def test_file_without_source_is_unavailable_with_the_fix() -> None:
    reason = vocab.vocab_unavailable_reason("p50k_base.tiktoken")
    assert reason is not None
    assert "--vocab-dir" in reason and "TOKCONF_VOCAB_DIR" in reason
    with pytest.raises(vocab.VocabUnavailable, match="not available offline"):
        vocab.vocab_bytes("p50k_base.tiktoken")


def test_vocab_dir_supplies_a_missing_encoding_and_is_verified(vocab_dir: Path) -> None:
    (vocab_dir / "p50k_base.tiktoken").write_bytes(b"not really p50k\n")
    assert vocab.vocab_unavailable_reason("p50k_base.tiktoken") is None  # the probe reads nothing
    with pytest.raises(vocab.VocabHashMismatch):
        vocab.vocab_bytes("p50k_base.tiktoken")


def test_seeding_tiktoken_cache_writes_sha1_named_files_and_keeps_valid_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    paths = vocab.seed_tiktoken_cache("gpt2")
    url = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe"
    assert paths[0] == tmp_path / hashlib.sha1(url.encode()).hexdigest()
    stamp = paths[0].stat().st_mtime_ns
    vocab.seed_tiktoken_cache("gpt2")
    assert paths[0].stat().st_mtime_ns == stamp  # valid file left alone


def test_a_valid_cached_file_is_not_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """r50k_base.tiktoken is derived from GPT-2's files (0.25 s) for the first process only;
    the next ones find tiktoken's copy verified."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    [path] = vocab.seed_tiktoken_cache("r50k_base")
    made = []
    monkeypatch.setattr(vocab, "vocab_bytes", lambda name: made.append(name) or b"")
    assert vocab.seed_tiktoken_cache("r50k_base") == [path] and made == []
    path.write_bytes(b"garbage")
    vocab.seed_tiktoken_cache("r50k_base")  # a wrong copy is made again (here by the stand-in)
    assert made == ["r50k_base.tiktoken"] and path.read_bytes() == b""


def test_r50k_base_is_read_from_tiktokens_verified_copy_instead_of_derived(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading r50k_base's ranks derived them from GPT-2's files in every process (0.25 s);
    the copy seeded for tiktoken is the same bytes, and is read when its hash says so."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    [path] = vocab.seed_tiktoken_cache("r50k_base")
    pinned = vocab.VOCAB_FILES["r50k_base.tiktoken"].sha256
    derived = []
    real = vocab._derive_r50k_base
    monkeypatch.setattr(vocab, "_derive_r50k_base", lambda: derived.append(1) or real())
    vocab.vocab_bytes.cache_clear()  # as a new process finds it
    assert hashlib.sha256(vocab.vocab_bytes("r50k_base.tiktoken")).hexdigest() == pinned and derived == []
    path.write_bytes(path.read_bytes().replace(b" 50000\n", b" 49999\n"))  # not the pinned file
    vocab.vocab_bytes.cache_clear()
    assert hashlib.sha256(vocab.vocab_bytes("r50k_base.tiktoken")).hexdigest() == pinned and derived == [1]


def test_seeding_replaces_a_corrupt_cached_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    bad = tmp_path / hashlib.sha1(url.encode()).hexdigest()
    bad.write_bytes(b"garbage")
    vocab.seed_tiktoken_cache("cl100k_base")
    assert hashlib.sha256(bad.read_bytes()).hexdigest() == vocab.VOCAB_FILES["cl100k_base.tiktoken"].sha256


def test_empty_tiktoken_cache_dir_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    with pytest.raises(vocab.VocabUnavailable, match="turns tiktoken's cache off"):
        vocab.seed_tiktoken_cache("cl100k_base")


def test_bytes_to_unicode_is_a_bijection_keeping_188_bytes() -> None:
    table = vocab.bytes_to_unicode()
    assert len(set(table.values())) == 256
    kept = [b for b, ch in table.items() if ord(ch) == b]
    assert len(kept) == 188
    shifted = [b for b in range(256) if b not in kept]
    assert [ord(table[b]) for b in shifted] == list(range(256, 256 + 68))
