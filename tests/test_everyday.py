"""The everyday-text corpus (harness/generate/everyday.py): deterministic, cut at
character boundaries, with the content issue 20 asks for, and recorded in parity.json."""

from __future__ import annotations

import json
import unicodedata

import jsonschema
import pytest

from harness.generate import everyday
from harness.generate.everyday import MAX_CHARS, boundary, build, cut, everyday_cases

#: the SHA-256 of each source tokconf writes itself (its own prose and templates): the same
#: documents for the same tokconf version. A change to them is a change of the corpus:
#: update these with the version, on purpose.
OWN_SOURCES = {
    "prose": (73, "a85e8236b3454ea524da0ccf19c4859bf69820fa29e9b8756800cef8a17ec247"),
    "chat": (32, "747d52aaaba54a5435f8b2f363c8111af4427e11a88216bb30cf7d1407ca3f2e"),
    "urls": (32, "dcdf5fec2932f5b08cd7066516edadd85b8123e11473ec3149b88cf181f10ebf"),
    "numbers": (32, "c33a7abf457b7cf88db17a9718a52e831a9ca5fdb666686e96d41c97e393d8c4"),
    "emoji": (32, "ba375cd8f1e13d1a8c6b8e1a60cdd4cb9671492448df6bcbe3e4d231359ce55a"),
    "json": (32, "3aecf30c5695eadcffb34e1bf7ebf9fd13d77733f9f057c5c646d3ac6e0d0c65"),
    "markdown": (32, "6a69dbcd3fedcae8b80e1e79c8e369850d5c582c418e8a7fe0e486f0652220cb"),
    "code": (32, "6a6f8e44099de3122e066e280de4fa3d623b175a44ce85d4aeb5e8718b08a7ac"),
}


def _fresh(profile: str = "ci") -> everyday.Corpus:
    everyday._build.cache_clear()  # a real second build, not the cached first one
    return build(profile=profile)


def test_two_builds_give_the_same_documents_and_hashes() -> None:
    first, second = _fresh(), _fresh()
    assert first is not second
    assert [(d.where, d.text) for d in first.documents] == [(d.where, d.text) for d in second.documents]
    assert first.summary() == second.summary()
    assert len(first.sha256) == 64


def test_the_own_sources_are_pinned() -> None:
    sources = _fresh().summary()["sources"]
    for name, (count, sha) in OWN_SOURCES.items():
        assert (sources[name]["documents"], sources[name]["sha256"]) == (count, sha), name


def test_size_and_count_in_ci_and_the_python_sources_name_their_version() -> None:
    corpus = _fresh()
    summary = corpus.summary()
    assert 200 <= summary["documents"] <= 1000
    assert summary["bytes"] < 2_000_000
    python = summary["python"]
    assert f"pydoc-topics@{python}" in summary["sources"] and f"stdlib@{python}" in summary["sources"]
    assert summary["missing"] == []  # a plain CPython has both


def test_every_document_is_whole_text_never_cut_inside_a_character() -> None:
    for doc in _fresh().documents:
        assert doc.text, doc.where
        assert len(doc.text) <= MAX_CHARS, doc.where
        doc.text.encode("utf-8")  # strict: no lone surrogate, nothing half a character
        assert boundary(doc.text, 0) and not _continues_at(doc.text, 0), doc.where
        assert not doc.text.endswith("\u200d"), doc.where


def _continues_at(text: str, at: int) -> bool:
    return unicodedata.category(text[at]) in ("Mn", "Mc", "Me") or text[at] in "\u200d\ufe0f"


@pytest.mark.parametrize("text, limit", [
    ("a" * 9 + "e\u0301" + "b" * 20, 10),          # a combining accent right at the limit
    ("x" * 9 + "👍\U0001F3FD" + "y" * 20, 10),     # a skin-tone modifier
    ("z" * 8 + "👩\u200d💻" + "w" * 20, 10),       # a ZWJ sequence across the limit
    ("q" * 9 + "1\ufe0f\u20e3" + "r" * 20, 10),    # a keycap: digit, VS16, enclosing keycap
    ("\u0915\u094d\u0937" * 12, 10),               # Devanagari conjuncts (virama: Mn)
])
def test_cut_never_splits_a_user_perceived_character(text: str, limit: int) -> None:
    pieces = list(cut(text, limit=limit))
    assert "".join(pieces) == text
    at = 0
    for piece in pieces[:-1]:
        at += len(piece)
        assert boundary(text, at), (pieces, at)
        assert not _continues_at(text, at), (pieces, at)
        assert text[at - 1] != "\u200d"


def test_a_naive_cut_would_fail_the_boundary_check() -> None:
    # the fault the test above guards against: slicing at the limit splits 👍 from its tone
    text = "x" * 9 + "👍\U0001F3FD" + "y" * 20
    assert not boundary(text, 10) and boundary(text, 9) and boundary(text, 11)
    assert next(cut(text, limit=10)) == "x" * 9  # backs off to before the emoji


def test_the_content_issue_20_asks_for() -> None:
    corpus = _fresh()
    by = {}
    for doc in corpus.documents:
        by.setdefault(doc.source, []).append(doc.text)
    scripts = {unicodedata.name(ch).split()[0] for text in by["prose"] for ch in text if ch.isalpha()}
    assert len(scripts - {"KATAKANA-HIRAGANA"}) >= 20, sorted(scripts)
    emoji = "".join(by["emoji"])
    assert "\u200d" in emoji and any(chr(c) in emoji for c in range(0x1F3FB, 0x1F400))
    assert "\U0001F1EF\U0001F1F5" in emoji or any("\U0001F1E6" <= ch <= "\U0001F1FF" for ch in emoji)
    assert any("User: " in t or "### Human:" in t or "[INST]" in t for t in by["chat"])
    assert any("https://" in t for t in by["urls"])
    assert all(json.loads(t) is not None for t in by["json"])
    assert any(t.startswith("# ") for t in by["markdown"])
    assert any("def " in t for t in by["code"])
    assert any(sym in "".join(by["numbers"]) for sym in ("€", "₹", "¥"))
    english = " ".join(by["prose"][:10])
    assert english.count(" the ") >= 20 and english.startswith("The ")
    assert not any("<|" in doc.text and "|>" in doc.text for doc in corpus.documents
                   if not doc.source.startswith(("pydoc", "stdlib")))


def test_dev_is_a_subset_that_keeps_the_numbers() -> None:
    ci = {d.where: d.text for d in _fresh().documents}
    dev = _fresh("dev").documents
    assert 0 < len(dev) < len(ci) / 4
    assert all(ci[d.where] == d.text for d in dev)


def test_cases_name_their_provenance() -> None:
    cases = everyday_cases(_fresh())
    assert cases[0].id == "everyday:prose#0" and cases[0].text.startswith("The train to the coast")
    assert len({c.id for c in cases}) == len(cases)
    assert all(c.tags == ("everyday",) and c.encodings is None for c in cases)


def test_the_summary_is_what_the_schema_accepts() -> None:
    from importlib import resources

    schema = json.loads(resources.files("harness").joinpath("report/parity.schema.json").read_text(encoding="utf-8"))
    everyday_schema = schema["properties"]["run"]["properties"]["everyday"]
    jsonschema.validate(_fresh().summary(), everyday_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**_fresh().summary(), "sha256": "not-a-hash"}, everyday_schema)
