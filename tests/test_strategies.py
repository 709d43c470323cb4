"""Hostile-text strategies and the hypothesis profiles."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from harness.generate import strategies as S
LITERALS = ("<|endoftext|>", "<|fim_prefix|>")


def _pool(count: int = 400, seed: int = 0) -> list[str]:
    return S.generate(S.hostile_text(LITERALS), count=count, seed_value=seed)


def test_generate_is_deterministic_in_the_seed_and_drops_duplicates() -> None:
    first, again, other = _pool(), _pool(), _pool(seed=1)
    assert first == again
    assert first != other
    assert len(first) == len(set(first))
    assert all(isinstance(t, str) for t in first)


def test_the_mixture_covers_every_category() -> None:
    pool = _pool()
    joined = "".join(pool)

    def some(predicate) -> bool:  # type: ignore[no-untyped-def]
        return any(predicate(t) for t in pool)

    assert some(lambda t: "\r\n" in t)
    assert some(lambda t: any(ch in t for ch in "\u00a0\u3000\u2028\u0085\x1c"))
    assert some(lambda t: any(ch.isdigit() for ch in t))
    assert some(lambda t: "'" in t or "\u2019" in t)
    assert some(lambda t: any("\u4e00" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7a3" for ch in t))
    assert some(lambda t: any("\u0300" <= ch <= "\u036f" for ch in t))
    assert some(lambda t: "\u200d" in t or "\U0001F3FD" in t)
    assert some(lambda t: any(ord(ch) < 0x20 and ch not in "\t\n\r" for ch in t))
    assert some(lambda t: len(t) >= 100)
    assert some(lambda t: any(0xD800 <= ord(ch) <= 0xDFFF for ch in t))
    assert any(lit in joined for lit in LITERALS)
    assert some(lambda t: "<|endoftext" in t.replace("<|endoftext|>", ""))  # a partial literal


@pytest.mark.parametrize("strategy, check", [
    (S.whitespace_runs(), lambda t: t and all(ch.isspace() or ch in "\x1c\u200b\ufeff" for ch in t)),
    (S.digit_runs(), lambda t: 1 <= len(t) <= 20 and all(ch.isdigit() for ch in t)),
    (S.contractions(), lambda t: "'" in t or "\u2019" in t),
    (S.combining_marks(), lambda t: any("\u0300" <= ch <= "\u036f" for ch in t)),
    (S.long_runs(), lambda t: len(t) >= 100),
    (S.lone_surrogates(), lambda t: sum(0xD800 <= ord(ch) <= 0xDFFF for ch in t) == 1),
    (S.special_literals(LITERALS), lambda t: any(t.strip(" \n")[:3] in lit or lit in t for lit in LITERALS)),
    (S.alphabet_text("ab "), lambda t: set(t) <= set("ab ")),
])
def test_each_named_strategy_stays_in_its_category(strategy, check) -> None:  # type: ignore[no-untyped-def]
    @settings(max_examples=60, database=None, derandomize=True)
    @given(strategy)
    def run(text: str) -> None:
        assert check(text), repr(text)

    run()


def test_special_literals_shrink_toward_the_shortest_literal() -> None:
    # hypothesis' simplest example of sampled_from is its first element
    assert S.generate(S.special_literals(("<|longer_one|>", "<|a|>")), count=1, seed_value=0) == ["<|a|>"]


def test_profiles() -> None:
    assert set(S.PROFILES) == {"dev", "ci", "nightly"}
    ci = S.PROFILES["ci"]
    assert ci.derandomize is True and ci.deadline is None and ci.database is None
    assert S.PROFILES["nightly"].max_examples > ci.max_examples > S.PROFILES["dev"].max_examples / 2
    assert S.PROFILES["nightly"].derandomize is False


def test_resolve_profile_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(S.PROFILE_ENV, raising=False)
    assert S.resolve_profile(None) == "ci"
    monkeypatch.setenv(S.PROFILE_ENV, "nightly")
    assert S.resolve_profile(None) == "nightly"
    assert S.resolve_profile("dev") == "dev"
    monkeypatch.setenv(S.PROFILE_ENV, "someone-elses-profile")
    assert S.resolve_profile(None) == "ci"
    with pytest.raises(ValueError, match="unknown hypothesis profile 'fast'.*ci, dev, nightly"):
        S.resolve_profile("fast")


def test_register_profiles_makes_them_loadable() -> None:
    S.register_profiles()
    assert settings.get_profile("ci").derandomize is True


def test_empty_alphabet_gives_the_empty_string() -> None:
    assert S.generate(S.alphabet_text(""), count=3, seed_value=0) == [""]


def test_hostile_text_without_surrogates_has_none() -> None:
    pool = S.generate(S.hostile_text(LITERALS, surrogates=False), count=300, seed_value=3)
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for t in pool for ch in t)
