"""Our encoders' fast paths give exactly the IDs of their plain definitions.

Each of tokconf's own encoders keeps its clear definition beside the fast path that
``encode`` uses (piece cache, whole-token shortcut, merge by list or buckets, a stack for
the left-to-right variant). Here both run on the shipped hostile corpus (every case
text) and on 10,000 generated strings, and must agree on every ID, or raise the same
exception type. Speed itself is the benchmark's business (``bench/run.py``), never a test's.
"""

from __future__ import annotations

import random
from typing import Callable

import pytest

from harness.cases.loader import load_cases
from harness.registry import default_registry
from harness.vocab import shared_tiktoken_ranks
from implementations.bpe_merge import merge_buckets, merge_ids, merge_lowest_first
from implementations.bytebpe.ltr import LeftToRightByteBPE
from implementations.bytebpe.ranks import merge_by_rank, merge_by_rank_plain
from implementations.minbpe.adapters import tables_for
from implementations.minbpe.tokenizer import ShuffledVocab, build_tables, merge_rounds
from tests.hostile_mix import hostile_mix

GENERATED = 10_000


def _texts(literals: tuple[str, ...]) -> list[str]:
    # not the long tier's million-character cases: the plain definitions are quadratic on them
    corpus = list(dict.fromkeys(case.text for case in load_cases() if not case.long))
    return corpus + hostile_mix(GENERATED, seed=14, literals=literals)


def _outcome(fn: Callable[[str], list[int]], text: str) -> object:
    try:
        return fn(text)
    except Exception as exc:  # noqa: BLE001 - the exception type is the outcome compared
        return type(exc).__name__


def _assert_same(fast: Callable[[str], list[int]], plain: Callable[[str], list[int]], texts: list[str]) -> None:
    differing = [t for t in texts if _outcome(fast, t) != _outcome(plain, t)]
    assert not differing, f"{len(differing)} texts differ, first {differing[0]!r}"


@pytest.mark.parametrize("name", ["bytebpe-ranks:gpt2", "bytebpe-ranks:cl100k_base", "bytebpe-ranks:o200k_base",
                                  "bytebpe:demo", "bytebpe-ltr:demo"])
def test_bytebpe_fast_encode_equals_the_plain_definition(name: str) -> None:
    model = default_registry().spec(name).factory().model  # a fresh model: empty piece cache
    texts = _texts(tuple(model.special_tokens))
    _assert_same(model.encode_ordinary, model.encode_ordinary_plain, texts)
    # the second pass answers from the piece cache
    _assert_same(model.encode_ordinary, model.encode_ordinary_plain, texts)


@pytest.mark.parametrize("name", ["minbpe:r50k_base", "minbpe:cl100k_base", "minbpe-fixed:o200k_base"])
def test_minbpe_fast_encode_equals_the_round_rule(name: str) -> None:
    native = default_registry().spec(name).factory().native
    texts = _texts(tuple(native.special_tokens))
    _assert_same(native.encode_ordinary, native.encode_ordinary_plain, texts)
    _assert_same(native.encode_ordinary, native.encode_ordinary_plain, texts)


def _random_chunks(merges: dict[tuple[int, int], int], seed: int) -> list[list[int]]:
    """Chunks built from merge parts, so that many pairs merge, short and long."""
    rng = random.Random(seed)
    parts = [p for pair in list(merges)[:2000] for p in pair] or [0]
    return [[rng.choice(parts) for _ in range(rng.choice((1, 2, 3, 5, 8, 13, 23, 24, 25, 60, 300)))]
            for _ in range(3000)]


@pytest.mark.parametrize("encoding", ["r50k_base", "cl100k_base"])
def test_list_merge_and_bucket_merge_equal_the_round_rule(encoding: str) -> None:
    merges = tables_for(encoding).merges
    for ids in _random_chunks(dict(merges), seed=3):
        expected = merge_rounds(list(ids), merges)
        assert merge_lowest_first(list(ids), merges) == expected, ids
        assert merge_buckets(list(ids), merges) == expected, ids
        assert merge_ids(list(ids), merges) == expected, ids


def test_left_to_right_stack_equals_its_scan() -> None:
    model = default_registry().spec("bytebpe-ltr:demo").factory().model
    assert isinstance(model, LeftToRightByteBPE)
    rng = random.Random(5)
    alphabet = sorted({b for pair in model.merges for b in pair if b < 256}) or [97]
    for _ in range(3000):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert model.encode_chunk(data) == model.encode_chunk_plain(data), data


@pytest.mark.parametrize("encoding", ["r50k_base", "cl100k_base", "o200k_base"])
def test_every_token_merges_back_to_itself(encoding: str) -> None:
    """The whole-token shortcut (bytebpe-ranks, minbpe) never changes an ID: merging a
    token's own bytes rebuilds exactly that token, for every token of the vocabulary."""
    ranks = shared_tiktoken_ranks(encoding)
    tables = tables_for(encoding)
    by_rank = [t for t in ranks if len(t) > 1 and merge_by_rank(t, ranks) != [ranks[t]]]
    assert not by_rank, f"{len(by_rank)} tokens do not merge back by rank, first {by_rank[0]!r}"
    by_merges = [t for t in ranks if len(t) > 1 and merge_ids(list(t.translate(tables.shuffle)), tables.merges) != [ranks[t]]]
    assert not by_merges, f"{len(by_merges)} tokens do not merge back by minbpe's merges, first {by_merges[0]!r}"


@pytest.mark.parametrize("encoding", ["r50k_base", "cl100k_base", "o200k_base"])
def test_minbpe_vocabulary_view_equals_the_expanded_merges(encoding: str) -> None:
    """minbpe reads its vocabulary from the shared rank table (no copy); expanding the
    recovered merges in rank order, as minbpe does, gives the same bytes for every ID."""
    shared = tables_for(encoding)
    expanded = build_tables(shared.ranks, shared.merges)
    assert isinstance(shared.vocab, ShuffledVocab) and not isinstance(expanded.vocab, ShuffledVocab)
    assert len(shared.vocab) == len(expanded.vocab)
    assert all(shared.vocab[i] == piece for i, piece in expanded.vocab.items())


def test_rank_merge_lets_a_lower_rank_made_by_a_merge_go_first() -> None:
    # merging b+c (rank 10) makes a+bc (rank 5) and then abc+b (rank 6), both lower than
    # the bc still waiting further right: those must merge before it, as the rule says
    toy = {b"a": 0, b"b": 1, b"c": 2, b"abc": 5, b"abcb": 6, b"bc": 10}
    assert merge_by_rank_plain(b"abcbc", toy) == [6, 2]
    assert merge_by_rank(b"abcbc", toy) == [6, 2]


def test_rank_merge_equals_the_rule_on_random_vocabularies() -> None:
    """Random ranks are seldom monotone (a merge often makes a lower-ranked pair)."""
    rng = random.Random(11)
    for _ in range(300):
        alphabet = b"abcd"[: rng.randint(2, 4)]
        tokens = {bytes([b]) for b in alphabet}
        while len(tokens) < rng.randint(4, 30):
            tokens.add(rng.choice(sorted(tokens)) + rng.choice(sorted(tokens)))
        order = sorted(tokens)
        rng.shuffle(order)
        toy = {token: rank for rank, token in enumerate(order)}
        for _ in range(20):
            piece = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
            assert merge_by_rank(piece, toy) == merge_by_rank_plain(piece, toy), (toy, piece)
