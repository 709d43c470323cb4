"""API-surface walks of many texts at once (``walk_many``): each text's answer is exactly its
own walk's, the batch paths are asked once per policy instead of once per text, and a batch
that answers anything but each text's own single-item answer is asked one text at a time,
so a planted batch fault shows on the text that has it and a shrink of that text
reproduces it."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from harness.calls import InProcess, surface_to_data
from harness.cases.loader import load_cases
from harness.interface import Adapter, Capabilities
from harness.outcomes import Outcome
from harness.registry import default_registry
from harness.selftest.faults_dropin import DROPIN_FAULTS
from implementations.tiktoken_surface import walk, walk_many

HOSTILE = ["", "hello world", "a<|endoftext|>b", "<|endoftext|><|fim_prefix|>", "x<|fim_middle|>",
           "\ud800 lone", "\ud83d\ude00 pair apart", "1234567 digits", "   \n\n\t spaces", "é" * 40]


def _no_category(op: str, exc: BaseException) -> None:
    return None


@pytest.fixture(scope="module")
def tiktoken_adapter() -> Adapter:
    return default_registry().get("tiktoken:cl100k_base")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """The shipped cases' texts up to 2,000 characters, and a few hostile ones."""
    shipped = list(dict.fromkeys(c.text for c in load_cases() if len(c.text) <= 2000))
    assert len(shipped) > 200  # the walk is compared on the real inputs, not a handful
    return shipped + HOSTILE


class Counting:
    """An Encoding that counts the calls of each method and may replace one of them."""

    def __init__(self, enc: Any, method: str = "", wrong: Callable[..., Any] | None = None) -> None:
        self._enc, self._method, self._wrong = enc, method, wrong
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        right = getattr(self._enc, name)
        if not callable(right):
            return right

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            if name == self._method and self._wrong is not None:
                return self._wrong(right, *args, **kwargs)
            return right(*args, **kwargs)
        return counted


def _both(enc: Any, texts: list[str]) -> tuple[list, list]:
    many = walk_many(enc, texts, classify=_no_category, release="test")
    alone = [walk(enc, t, classify=_no_category, release="test") for t in texts]
    return many, alone


def test_each_text_gets_its_own_walk_and_the_batch_paths_are_asked_once_per_policy(
        tiktoken_adapter: Adapter, texts: list[str]) -> None:
    enc = Counting(tiktoken_adapter.native)  # type: ignore[attr-defined]
    many = walk_many(enc, texts, classify=tiktoken_adapter.classify_error, release="test")
    asked = dict(enc.calls)
    assert many == [walk(tiktoken_adapter.native, t, classify=tiktoken_adapter.classify_error,  # type: ignore[attr-defined]
                         release="test") for t in texts]
    assert asked["encode"] >= 3 * len(texts)  # every single-item path is still asked per text
    # once per group; the texts whose encode raised (a literal under the default policy) alone
    raised = sum(1 for t in texts if any(s in t for s in tiktoken_adapter.native.special_tokens_set))  # type: ignore[attr-defined]
    assert asked["encode_ordinary_batch"] == 1
    assert asked["decode_bytes_batch"] == 1
    assert asked["encode_batch"] < 3 * len(texts) / 4
    assert raised > 10 and asked["encode_batch"] >= raised
    # and through the adapter and its executor, as a run asks: the same outcomes as one by one
    executor = InProcess(tiktoken_adapter)
    assert executor.api_surfaces(texts[:60]) == [executor.call("api_surface", t) for t in texts[:60]]


def _reversed(right: Callable[..., Any], batch: list, **kwargs: Any) -> Any:
    return list(reversed(right(batch, **kwargs)))


def _drops_last(right: Callable[..., Any], batch: list, **kwargs: Any) -> Any:
    return right(batch, **kwargs)[:-1]


def _refuses_many(right: Callable[..., Any], batch: list, **kwargs: Any) -> Any:
    if len(batch) > 1:
        raise RuntimeError("planted: more than one text")
    return right(batch, **kwargs)


def _no_num_threads(right: Callable[..., Any], batch: list, *, allowed_special: Any = frozenset(),
                    disallowed_special: Any = "all") -> Any:
    # a drop-in's batch without tiktoken's num_threads keyword
    return right(batch, allowed_special=allowed_special, disallowed_special=disallowed_special)


@pytest.mark.parametrize("method", ["encode_batch", "encode_ordinary_batch", "decode_batch", "decode_bytes_batch"])
@pytest.mark.parametrize("wrong", [_reversed, _drops_last, _refuses_many])
def test_a_batch_that_answers_otherwise_is_asked_one_text_at_a_time(
        tiktoken_adapter: Adapter, method: str, wrong: Callable[..., Any]) -> None:
    """Reversed answers are invisible one text at a time (and a shrink could not reproduce
    them), a dropped answer is visible on every text, a refusal of many texts on none: in
    each case each text's walk is the one it has alone."""
    texts = HOSTILE[1:] + [f"text {i}" for i in range(12)]
    enc = Counting(tiktoken_adapter.native, method, wrong)  # type: ignore[attr-defined]
    many, alone = _both(enc, texts)
    assert many == alone
    if wrong is _drops_last:  # the fault is seen, on each text, as its own walk shows it
        seen = [dict(w).get(method, dict(w).get(f"{method}[all]")) for w in alone if dict(w)["encode[all]"].is_ok]
        assert seen and all(outcome == Outcome.ok(()) for outcome in seen)


def test_a_drop_ins_batch_without_num_threads_is_asked_together(tiktoken_adapter: Adapter) -> None:
    texts = [f"text {i} ok" for i in range(10)]
    enc = Counting(tiktoken_adapter.native, "encode_batch", _no_num_threads)  # type: ignore[attr-defined]
    many, alone = _both(enc, texts)
    assert many == alone
    assert not any(o.kind == "raised" for w in many for path, o in w if path.startswith("encode_batch"))


@pytest.mark.parametrize("fault", [f for f in DROPIN_FAULTS if "batch" in f.fault], ids=lambda f: f.fault)
def test_the_drop_in_batch_faults_show_on_the_same_texts_walked_together(fault: Any, texts: list[str]) -> None:
    """The selftest's batch faults: walked together, each text's surface is its own walk's,
    and the fault differs from tiktoken's own walk somewhere (it is not hidden)."""
    mutant = fault()
    clean = default_registry().get("tiktoken:cl100k_base")
    sample = texts[::7]
    many = mutant.api_surfaces(sample)
    assert many == [mutant.api_surface(t) for t in sample]
    assert many != clean.api_surfaces(sample)


class _Walks(Adapter):
    """Walks a one-path surface (the text's length), one text or many."""

    name, encoding, library = "planted:walks", "cl100k_base", "tiktoken"

    def encode(self, text: str, *, allowed_special: Any = frozenset(), disallowed_special: Any = "all") -> list[int]:
        return [len(text)]

    def decode_bytes(self, ids: Any) -> bytes:
        return b""

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        return [("length", Outcome.ok(len(text)))]

    def api_surfaces(self, texts: Any) -> list[list[tuple[str, Outcome]]]:
        return [[("length", Outcome.ok(len(text)))] for text in texts]


class _SharedWalkBreaks(_Walks):
    name = "planted:shared-walk-breaks"

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        return [("length", Outcome.ok(len(text)))]

    def api_surfaces(self, texts: Any) -> list[list[tuple[str, Outcome]]]:
        raise RuntimeError("planted: the shared walk breaks")


class _OneWalkChanged(_Walks):
    """Changes ``api_surface`` alone (as a planted fault does): its inherited batch walk
    would not see the change, so it must not be used."""

    name = "planted:one-walk-changed"

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        return [("length", Outcome.ok(-len(text)))]


def _lengths(*lengths: int) -> list[Outcome]:
    return [Outcome.ok(surface_to_data([("length", Outcome.ok(n))])) for n in lengths]


def test_a_shared_walk_that_raises_or_would_bypass_a_changed_walk_gives_each_texts_own_walk() -> None:
    texts = ["a", "bb", "ccc"]
    assert InProcess(_Walks()).api_surfaces(texts) == _lengths(1, 2, 3)
    assert InProcess(_SharedWalkBreaks()).api_surfaces(texts) == _lengths(1, 2, 3)
    assert InProcess(_OneWalkChanged()).api_surfaces(texts) == _lengths(-1, -2, -3)


class _CountedWalks(_Walks):
    name = "planted:counted-walks"

    def __init__(self) -> None:
        self.walked: list[str] = []

    def api_surface(self, text: str) -> list[tuple[str, Outcome]]:
        self.walked.append(text)
        return super().api_surface(text)

    def api_surfaces(self, texts: Any) -> list[list[tuple[str, Outcome]]]:
        self.walked += [f"together:{t}" for t in texts]
        return super().api_surfaces(texts)


def test_walks_made_ahead_are_used_once_and_dropped_at_the_next_prefetch() -> None:
    from harness.calls import PREFETCH_SURFACE_LIMIT, Calls

    adapter = _CountedWalks()
    adapter.capabilities = Capabilities(api_surface="tiktoken")
    calls = Calls(InProcess(adapter))
    long_text = "x" * (PREFETCH_SURFACE_LIMIT + 1)
    calls.prefetch_surfaces(["a", "b" * 100, long_text, "a"])
    assert adapter.walked == ["together:a", f"together:{'b' * 100}"]  # the long one is walked when asked
    assert calls.api_surface("a") == _lengths(1)[0] and calls.api_surface("b" * 100) == _lengths(100)[0]
    assert calls.api_surface(long_text) == _lengths(len(long_text))[0]
    assert adapter.walked[2:] == [long_text]
    calls.prefetch_surfaces(["c", "d"])
    calls.prefetch_surfaces(["e", "f"])  # "c" and "d" were never asked for: dropped
    calls.reset()
    assert calls.api_surface("c") == _lengths(1)[0]
    assert adapter.walked[-1] == "c"  # walked again, alone
