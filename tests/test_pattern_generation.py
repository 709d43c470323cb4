"""Pattern-aware generation: reading split regexes, and the inputs built from them."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings

from harness.generate.long_pieces import KINDS, LENGTHS, long_pieces
from harness.generate.pattern_cache import cached_pattern_inputs
from harness.generate.pattern_inputs import PatternModel, pattern_inputs, pattern_model, pattern_text
from harness.generate.pattern_parse import (
    CharSet,
    Literal,
    PatternSyntaxError,
    Repeat,
    branches,
    labelled_source,
    parse,
)
from harness.generate.pools import open_pool
from harness.generate.unicode_edges import case_partners, class_profile, new_code_points
from implementations.bytebpe.patterns import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, R50K_PATTERN
from implementations.hf.adapters import BYTE_LEVEL_PATTERN
from implementations.hf.convert import oniguruma_pattern

PATTERNS = [R50K_PATTERN, CL100K_PATTERN, O200K_PATTERN, GPT2_PATTERN, BYTE_LEVEL_PATTERN,
            oniguruma_pattern(CL100K_PATTERN), oniguruma_pattern(R50K_PATTERN)]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_shipped_pattern_reads_back_to_its_own_branches(pattern: str) -> None:
    found = branches(pattern)
    assert "|".join(b.source for b in found) == pattern
    labelled = regex.compile(labelled_source(pattern))
    plain = regex.compile(pattern)
    text = "Hello, world! It's 12345 \u4e2d\u6587 \r\n\t  x's'LL \U0001F600\u00a0z"
    assert [m.group() for m in labelled.finditer(text)] == plain.findall(text)


def test_the_tree_of_cl100k() -> None:
    found = branches(CL100K_PATTERN)
    assert [b.source for b in found] == [
        "'(?i:[sdmt]|ll|ve|re)", r"[^\r\n\p{L}\p{N}]?+\p{L}++", r"\p{N}{1,3}+",
        r" ?[^\s\p{L}\p{N}]++[\r\n]*+", r"\s++$", r"\s*[\r\n]", r"\s+(?!\S)", r"\s"]
    assert found[2].node == Repeat(CharSet(r"\p{N}"), 1, 3, "possessive")
    contraction = found[0].node
    assert contraction.items[0] == Literal("'")
    assert contraction.items[1].body.branches[1].items == (Literal("l", True), Literal("l", True))


def test_oniguruma_and_inline_flags() -> None:
    assert parse(r"(?>\p{N}{1,3})|\s++\z").branches[1].items[1].kind == r"\z"
    assert labelled_source(r"(?i)ab|c") == "(?i)(?P<b0>ab)|(?P<b1>c)"
    assert parse(r"(?i)a") == Literal("a", True)


@pytest.mark.parametrize("pattern, where", [(r"(a)\1", "position 5"), (r"(?x)a b", "position 4"), (r"[ab", "position 0"),
                                            (r"a)", "position 1")])
def test_unreadable_syntax_says_where(pattern: str, where: str) -> None:
    with pytest.raises(PatternSyntaxError, match=where):
        branches(pattern)
    assert pattern_model(pattern) is None
    assert pattern_inputs(pattern) == ()


def test_class_profiles_come_from_the_regex_modules_tables() -> None:
    letters = class_profile(r"\p{L}")
    assert (letters.typical, letters.first, letters.wide[0]) == ("a", "A", "\u00aa")
    assert all(ch in new_code_points() for ch in letters.version_edges)
    assert class_profile("[sdmt]", True).options() == ["s", "D", "M", "S", "T", "d", "m", "t", "\u017f"]
    assert len(class_profile(r"\s").options()) == 25  # every White_Space character: a small class
    assert case_partners("s") == {"S", "\u017f"} and case_partners("k") == {"K", "\u212a"}


def test_cl100k_inputs_reach_every_alternative_bound_and_boundary() -> None:
    inputs = pattern_inputs(CL100K_PATTERN)
    texts = {i.text for i in inputs}
    targets = {t for i in inputs for t in i.targets}
    assert {f"alt:{b}" for b in range(8)} <= targets
    assert len({t for t in targets if t.startswith("pair:")}) == 44
    # one past the digit bound, a long s after an apostrophe, a newline before a space
    for wanted in ("b2 quantifier {1,3}+=4", "b0 class [sdmt]=U+017F", r"b4 run \s=U+000A+U+0020"):
        assert wanted in targets, wanted
    assert any("0000" in t for t in texts) and any("'\u017f" in t for t in texts) and any("\n " in t for t in texts)
    # inputs with characters newer than Python's Unicode are never packed with plain ones
    new = set(new_code_points())
    for item in inputs:
        assert item.volatile == any(ch in new for ch in item.text)


def test_pattern_inputs_are_deterministic_and_cached_identically(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path))
    cached_pattern_inputs.cache_clear()
    first = cached_pattern_inputs(R50K_PATTERN)
    assert list(tmp_path.glob("pattern-inputs/*.json"))
    cached_pattern_inputs.cache_clear()
    assert cached_pattern_inputs(R50K_PATTERN) == first == pattern_inputs(R50K_PATTERN)
    for path in tmp_path.glob("pattern-inputs/*.json"):
        path.write_text("not json", encoding="ascii")  # a broken cache file is rebuilt, not trusted
    cached_pattern_inputs.cache_clear()
    assert cached_pattern_inputs(R50K_PATTERN) == first
    cached_pattern_inputs.cache_clear()


@settings(max_examples=40, derandomize=True, database=None)
@given(pattern_text([CL100K_PATTERN, GPT2_PATTERN]))
def test_the_strategy_builds_text_from_the_patterns_own_pieces(text: str) -> None:
    assert "".join(regex.findall(GPT2_PATTERN, text)) == text  # GPT-2's pattern covers any text


def test_long_pieces_sweep_the_lengths_for_every_kind() -> None:
    pieces = long_pieces()
    sizes = sorted(len(p.encode("utf-8")) for p in pieces)
    assert sizes[0] == 1 and sizes[-1] == 4096 and len(pieces) == 51
    for size in (1024, 1023, 1025, 2048, 2047, 2049, 1000, 3000):
        assert any(abs(len(p.encode("utf-8")) - size) <= 3 for p in pieces), size
    for kind, units in KINDS.items():
        at_most = [p for p in pieces if set(p) <= set(units)]
        assert max(len(p.encode("utf-8")) for p in at_most) >= 4093, kind  # every kind at the longest
    assert set(LENGTHS) >= {1 << k for k in range(13)}
    for piece in pieces:  # each is one pre-token of cl100k (digits split in threes by design)
        chunks = regex.findall(CL100K_PATTERN, piece)
        assert len(chunks) == 1 or set(piece) <= set(KINDS["digits"]), piece[:10]


def test_the_pool_keeps_max_examples_for_atoms_and_mixtures_and_adds_the_fixed_sets() -> None:
    pool = open_pool(literals=["<|endoftext|>"], patterns=[CL100K_PATTERN], profile="ci", max_examples=200, seed=0)
    long = set(long_pieces())
    fixed = {i.text for i in cached_pattern_inputs(CL100K_PATTERN)}
    # mixtures that repeat a fixed input are dropped, so at most max_examples of them
    assert 190 <= len(pool.texts) - pool.fixed <= 200
    assert set(pool.texts[pool.short_count:]) <= long  # long pieces last, shortest first
    assert pool.texts[:3] == [" ", "  ", "a "]  # the hostile atoms still come first
    assert fixed <= set(pool.texts[: pool.short_count])
    dev = open_pool(literals=[], patterns=[CL100K_PATTERN], profile="dev", max_examples=20, seed=0)
    assert not set(dev.texts) & long and dev.short_count == len(dev.texts)


def test_every_code_point_is_built_without_a_transient_of_a_million_strings() -> None:
    # issue 25: joining 1.1 million one-character strings held ~100 MB for a moment, and
    # under --jobs it came at the end of a run (the coverage summary): the run's peak
    import tracemalloc

    from harness.generate.unicode_edges import all_code_points

    tracemalloc.start()
    try:
        text = all_code_points.__wrapped__()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(text) == 0x110000 - 0x800 and text[0xD7FF] == "\ud7ff" and text[0xD800] == "\ue000"
    assert peak < 24 * 2**20, f"building it held {peak / 2**20:.0f} MiB at its peak"


def _fresh_model(pattern: str) -> PatternModel:
    cached = pattern_model(pattern)  # lru-cached: another test may have asked its slots or splits
    return PatternModel(pattern=cached.pattern, branch_sources=cached.branch_sources, nodes=cached.nodes,
                        matcher=cached.matcher)


def test_what_a_model_keeps_of_the_texts_it_split_is_bounded_by_characters_not_texts() -> None:
    # a corpus run reads documents back through the pattern; the model kept the chunks of
    # the last 4,096 texts: 290 MB of the 380 MB a run of 2 KB documents peaked at
    import random
    import tracemalloc

    words = ["def", "return", "the", "quick", "brown", "fox's", "naïve", "12", "3456", "x=1;", "(a,", "b)", "\n", "!!"]
    rng = random.Random(25)
    texts = [f"{n} " + " ".join(rng.choice(words) for _ in range(400)) for n in range(300)]
    model = _fresh_model(CL100K_PATTERN)
    tracemalloc.start()
    try:
        for text in texts:
            assert len(model.split(text)) == len(model.branches(text)) > 400
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 8 * 2**20, f"the model holds {held / 2**20:.1f} MiB after splitting 300 texts of 2 KB"
    assert model.split(texts[-1]) is model.split(texts[-1])  # the newest are still kept


def test_a_patterns_model_finds_class_members_only_when_its_slots_are_asked() -> None:
    # the coverage measure builds a model on every run and needs only branches(): finding
    # the members of o200k_base's classes scans every code point (0.85 s on a slow core)
    from harness.generate.pattern_inputs import _slots

    model = _fresh_model(r"\p{L}+|\p{N}{1,3}|\s+")
    assert model.split("ab 12345") == [(0, "ab"), (2, " "), (1, "123"), (1, "45")]
    assert model.branches("ab 12345") == (0, 2, 1, 1)
    assert "slots" not in vars(model)
    assert model.slots == tuple(tuple(_slots(n)) for n in model.nodes) and "slots" in vars(model)
    (repeat, digit) = model.slots[1]
    assert (repeat.kind, 3 in repeat.options, digit.kind, digit.options[0]) == ("quantifier", True, "class", "0")
