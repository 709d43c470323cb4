"""Teaching tokenizers (issue 3, section 4): closed vocabularies and what they lose."""

from __future__ import annotations

import doctest

import pytest

from harness.outcomes import capture
from harness.registry import Registry
from implementations import teaching
from implementations.teaching import CharDemo, SimpleV1, SimpleV2, SimpleV3, TEXTS, layout_pieces

TEXT = TEXTS["lighthouse"].read_bytes().decode("utf-8")


@pytest.fixture(scope="module")
def registry() -> Registry:
    reg = Registry()
    reg.add(teaching.family(), provider="test")
    return reg


def _adapter(registry: Registry, name: str):
    return registry.get(name)


def test_docstring_examples() -> None:
    result = doctest.testmod(teaching)
    assert result.failed == 0 and result.attempted > 0


def test_family_names_and_closed_encodings(registry: Registry) -> None:
    assert registry.names() == [
        "char-demo:lowest", "simple-v1:lighthouse", "simple-v2:lighthouse", "simple-v3:lighthouse",
    ]
    for name in registry.names():
        adapter = registry.get(name)
        assert adapter.encoding == f"closed:{name}"
        assert adapter.capabilities.alphabet is not None
        assert adapter.capabilities.to_json()["closed_vocabulary"] is True


def test_training_text_has_what_the_figures_need() -> None:
    pieces = set(layout_pieces(TEXT))
    assert {"a", "b", " "} <= pieces
    assert "\t" not in TEXT and "青山" not in TEXT and "远海" not in TEXT


# -- simple-v1 -----------------------------------------------------------------------


def test_v1_vocabulary_is_the_sorted_pieces() -> None:
    v1 = SimpleV1(TEXT)
    vocab = sorted(v1.str_to_int, key=v1.str_to_int.get)
    assert vocab == sorted(vocab)
    assert "--" in vocab and "," in vocab and " " not in vocab


def test_v1_unseen_word_is_a_key_error(registry: Registry) -> None:
    v1 = _adapter(registry, "simple-v1:lighthouse")
    with pytest.raises(KeyError) as raised:
        v1.encode("the 青山")
    assert raised.value.args == ("青山",)
    outcome = capture("encode", v1.encode, "the 青山", classify=v1.classify_error)
    assert (outcome.category, outcome.native_type) == ("unknown-token", "builtins.KeyError")
    assert not v1.in_domain("the 青山")


def test_v1_decode_relays_text_and_loses_whitespace(registry: Registry) -> None:
    v1 = _adapter(registry, "simple-v1:lighthouse")
    assert v1.decode(v1.encode("Mara kept the lamp, and the light.")) == "Mara kept the lamp, and the light."
    assert v1.decode(v1.encode("the   lamp\nshone")) == "the lamp shone"
    assert v1.in_domain("Mara kept the lamp, and the light.")
    # known words: in the domain, though decode cannot give this layout back (round-trip says so)
    assert v1.in_domain("the   lamp")
    assert v1.decode_bytes(v1.encode("the lamp")) == b"the lamp"
    outcome = capture("decode", v1.decode, [9999], classify=v1.classify_error)
    assert outcome.category == "unknown-id"


# -- simple-v2 -----------------------------------------------------------------------


def test_v2_unseen_words_share_one_unk(registry: Registry) -> None:
    v2 = _adapter(registry, "simple-v2:lighthouse")
    unk = v2.special_tokens["<|unk|>"]
    ids = v2.encode("青山 远海")
    assert ids == [unk, unk]
    assert v2.encode("青山") == v2.encode("远海")
    assert v2.decode(ids) == "<|unk|> <|unk|>"  # neither word can be recovered
    assert not v2.in_domain("青山")


def test_v2_specials_follow_the_vocabulary(registry: Registry) -> None:
    v2 = _adapter(registry, "simple-v2:lighthouse")
    size = len(SimpleV1(TEXT).str_to_int)
    assert dict(v2.special_tokens) == {"<|endoftext|>": size, "<|unk|>": size + 1}
    ids = v2.encode("the lamp <|endoftext|> the rain")
    assert ids[2] == size
    assert v2.decode(ids) == "the lamp <|endoftext|> the rain"
    assert v2.capabilities.special_policy == "always-special"


# -- simple-v3 -----------------------------------------------------------------------


def test_v3_round_trips_layout_exactly_over_known_pieces(registry: Registry) -> None:
    v3 = _adapter(registry, "simple-v3:lighthouse")
    ids = v3.encode("a  b")
    assert [v3.tokenizer.int_to_str[i] for i in ids] == ["a", " ", " ", "b"]
    assert v3.decode(ids) == "a  b"
    assert v3.decode(v3.encode(TEXT)) == TEXT
    assert v3.in_domain("a  b") and v3.pretokenize("a  b") == ["a", " ", " ", "b"]


def test_v3_unseen_tab_fails(registry: Registry) -> None:
    v3 = _adapter(registry, "simple-v3:lighthouse")
    outcome = capture("encode", v3.encode, "a\tb", classify=v3.classify_error)
    assert (outcome.category, outcome.native_type, outcome.message) == (
        "unknown-token", "builtins.KeyError", "'\\t'",
    )
    assert not v3.in_domain("a\tb")
    assert isinstance(v3.tokenizer, SimpleV3) and not isinstance(v3.tokenizer, SimpleV2)


# -- char-demo -----------------------------------------------------------------------


def test_char_demo_alphabet_and_rule_ids() -> None:
    demo = CharDemo()
    assert [demo.str_to_int[c] for c in "az .,!?"] == [0, 25, 26, 27, 28, 29, 30]
    assert [demo.int_to_str[i] for i in range(31, 38)] == ["lo", "low", "er", "lower", "st", "est", "lowest"]


def test_char_demo_figure(registry: Registry) -> None:
    demo = _adapter(registry, "char-demo:lowest")
    text = "lower lowest lower"
    assert len(text) == 18
    assert demo.encode(text) == [34, 26, 37, 26, 34]
    rounds = demo.trace(text)
    assert (rounds[0].pair, rounds[0].rank, rounds[0].merged, rounds[0].result) == (("l", "o"), 0, 3, 31)
    assert [(r.result, r.merged) for r in rounds] == [(31, 3), (32, 3), (33, 2), (34, 2), (35, 1), (36, 1), (37, 1)]
    assert demo.decode([34, 26, 37, 26, 34]) == text


def test_char_demo_rules_in_table_order_only() -> None:
    demo = CharDemo()
    # 'lowest' needs e+st after s+t: table order gives low+est, never low+e+st leftovers
    assert demo.encode("lowest") == [37]
    assert demo.encode("slow") == [18, 32]
    assert demo.encode("erst") == [33, 35]  # e+r wins 'e' before e+st is tried


def test_char_demo_unknown_character_is_named(registry: Registry) -> None:
    demo = _adapter(registry, "char-demo:lowest")
    outcome = capture("encode", demo.encode, "low Lower", classify=demo.classify_error)
    assert (outcome.category, outcome.native_type) == ("unknown-token", "implementations.teaching.UnknownCharacter")
    assert "'L' (U+004C) at position 4" in outcome.message and "no case folding" in outcome.message
    assert not demo.in_domain("Lower") and demo.in_domain("lower, lowest!")
    assert capture("decode", demo.decode, [38], classify=demo.classify_error).category == "unknown-id"
