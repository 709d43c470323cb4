"""Byte-level BPE, layer 2 of 3: pre-split pattern, training, special-token policy.

Training (seed 002, §3.4): count adjacent pairs inside each chunk, summed over chunks
(no pair crosses a chunk boundary); merge the most frequent pair, ties to the
lexicographically smallest pair of integers; only pairs seen at least twice merge; the
vocabulary size is an upper bound, so training may stop early. Training on
``"低山 low low lower low\\n低山"`` with a budget of 274 makes 9 merges, 265 entries.

Special tokens (seed 003, §23.4), the native ``allowed_special`` argument:

- ``None`` (default): any registered literal in the text is an error;
- ``set()``: every literal is ordinary text;
- a set of literals, or ``"all"``: those become their special IDs, the rest is ordinary.

Overlapping literals are matched longest first. The adapters in
:mod:`implementations.bytebpe.adapters` map tiktoken's arguments onto this.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import AbstractSet, Iterable, Literal, Mapping, Sequence

from harness.interface import TraceRound
from implementations.bytebpe.base import (
    BASE_VOCAB_SIZE,
    ByteBPEBase,
    ModelFileError,
    SpecialTokenError,
    merge_pair,
    most_frequent_pair,
    pair_counts,
    split_on_literals,
)
from implementations.bytebpe.incremental import learn_merges
from implementations.bytebpe.patterns import PATTERNS, pattern_by_name, split_chunks
from implementations.piece_cache import PieceCache

__all__ = ["ByteBPE", "NativeAllowed", "TrainingError", "train", "train_reference"]

NativeAllowed = None | Literal["all"] | AbstractSet[str]


class TrainingError(ValueError):
    """Training arguments or text are unusable; the message says which and the fix."""


class ByteBPE(ByteBPEBase):
    """The regex layer: chunks by a pre-split pattern, specials by policy.

    >>> tok = ByteBPE(pattern_name="gpt4")
    >>> tok.register_special({"<|end|>": 1000})
    >>> tok.encode("x<|end|>", allowed_special="all")
    [120, 1000]
    >>> tok.encode("x<|end|>", allowed_special=set())
    [120, 60, 124, 101, 110, 100, 124, 62]
    """

    def __init__(
        self,
        merges: Sequence[tuple[int, int]] = (),
        *,
        pattern_name: str = "none",
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(merges, special_tokens=special_tokens)
        if pattern is None:
            pattern = pattern_by_name(pattern_name)
        elif PATTERNS.get(pattern_name) != pattern:
            pattern_name = "custom"  # a pattern of the caller's own, stored verbatim
        self.pattern_name = pattern_name
        self.pattern = pattern
        self._pieces = PieceCache(self._encode_piece)

    # -- encoding ----------------------------------------------------------------------

    def pretokenize(self, text: str) -> list[str]:
        return split_chunks(text, self.pattern)

    def encode_ordinary_plain(self, text: str) -> list[int]:
        """Every special literal is ordinary text: the plain definition, chunk by chunk."""
        ids: list[int] = []
        for chunk in self.pretokenize(text):
            # a lone surrogate cannot become UTF-8: UnicodeEncodeError, natively
            ids.extend(self.encode_chunk_plain(chunk.encode("utf-8")))
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """What :meth:`encode_ordinary_plain` gives, with each chunk's IDs remembered.

        The tests hold the two equal on the hostile corpus and on generated text.
        """
        return self._pieces.encode_pieces(self.pretokenize(text))

    def _encode_piece(self, chunk: str) -> list[int]:
        return self.encode_chunk(chunk.encode("utf-8"))

    def _allowed_literals(self, allowed_special: NativeAllowed) -> frozenset[str]:
        if allowed_special == "all":
            return frozenset(self.special_tokens)
        if isinstance(allowed_special, str):
            raise SpecialTokenError(
                f"allowed_special={allowed_special!r}: pass None, 'all', or a set of literals "
                f"such as {{{allowed_special!r}}}"
            )
        allowed = frozenset(allowed_special or ())
        unknown = sorted(allowed - set(self.special_tokens))
        if unknown:
            raise SpecialTokenError(
                f"allowed_special names {unknown[0]!r}, which is not a registered special token "
                f"(registered: {sorted(self.special_tokens)}); register it with register_special"
            )
        return allowed

    def encode(self, text: str, *, allowed_special: NativeAllowed = None) -> list[int]:
        """Encode with the native special-token policy (see the module docstring)."""
        if allowed_special is None:
            self.raise_if_present(text, self.special_tokens)
            return self.encode_ordinary(text)
        allowed = self._allowed_literals(allowed_special)
        ids: list[int] = []
        for segment, is_special in split_on_literals(text, allowed):
            if is_special:
                ids.append(self.special_tokens[segment])
            else:
                ids.extend(self.encode_ordinary(segment))
        return ids

    def trace(self, text: str) -> list[TraceRound]:
        """Merge rounds of every chunk, in text order (specials are not merged)."""
        rounds: list[TraceRound] = []
        for chunk in self.pretokenize(text):
            rounds.extend(self.trace_chunk(chunk.encode("utf-8")))
        return rounds

    # -- save / load -------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: object, *, where: str = "model") -> ByteBPE:
        parsed = cls.parse_model(data, where=where)
        try:
            model = cls(
                parsed["merges"],
                pattern_name=parsed["pattern_name"],
                pattern=parsed["pattern"],
                special_tokens=parsed["special_tokens"],
            )
        except (SpecialTokenError, ValueError) as exc:
            raise ModelFileError(f"{where}: {exc}") from exc
        model.check_vocab(parsed["vocab"], where=where)
        return model

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ByteBPE:
        target = Path(path)
        try:
            data = json.loads(target.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ModelFileError(
                f"model file {target} does not exist; train one with "
                f"`tokconf train --vocab-size N -o {target} FILE`"
            ) from exc
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ModelFileError(f"cannot read model file {target}: {exc}") from exc
        return cls.from_json(data, where=str(target))

    def same_model(self, other: ByteBPE) -> bool:
        return self.to_json() == other.to_json()


def train(
    texts: str | Iterable[str],
    *,
    vocab_size: int,
    pattern_name: str = "none",
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> ByteBPE:
    """Learn merges from ``texts`` (each text split on its own: no pair spans two texts).

    The merges are those of :func:`train_reference`, found with pair counts kept up to
    date (:mod:`implementations.bytebpe.incremental`) instead of recounted per merge.

    >>> model = train("低山 low low lower low\\n低山", vocab_size=274)
    >>> len(model.merges), model.ordinary_size
    (9, 265)
    """
    shell, chunks, weights = _chunks_to_learn(texts, vocab_size, pattern_name, pattern)
    merges = learn_merges(chunks, weights, num_merges=vocab_size - BASE_VOCAB_SIZE, first_id=BASE_VOCAB_SIZE)
    return _trained(shell, merges, special_tokens)


def train_reference(
    texts: str | Iterable[str],
    *,
    vocab_size: int,
    pattern_name: str = "none",
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> ByteBPE:
    """The training rule as written: recount every pair for every merge (seed 002, §3.4).

    >>> train_reference("低山 low low lower low\\n低山", vocab_size=274).same_model(
    ...     train("低山 low low lower low\\n低山", vocab_size=274))
    True
    """
    shell, chunks, counts_of = _chunks_to_learn(texts, vocab_size, pattern_name, pattern)
    words = [list(chunk) for chunk in chunks]
    merges: list[tuple[int, int]] = []
    for rank in range(vocab_size - BASE_VOCAB_SIZE):
        counts: dict[tuple[int, int], int] = {}
        for word, weight in zip(words, counts_of):
            if len(word) > 1:
                pair_counts(word, weight=weight, into=counts)
        pair = most_frequent_pair(counts, min_count=2)
        if pair is None:
            break  # no pair seen twice: the budget is an upper bound, not a target
        new_id = BASE_VOCAB_SIZE + rank
        words = [merge_pair(w, pair, new_id) if len(w) > 1 else w for w in words]
        merges.append(pair)
    return _trained(shell, merges, special_tokens)


def _chunks_to_learn(
    texts: str | Iterable[str], vocab_size: int, pattern_name: str, pattern: str | None
) -> tuple[ByteBPE, list[bytes], list[int]]:
    """The validated arguments as (an empty model, distinct chunks, their weights)."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < BASE_VOCAB_SIZE:
        raise TrainingError(
            f"vocab_size {vocab_size!r} is below the {BASE_VOCAB_SIZE} single-byte tokens; "
            f"choose {BASE_VOCAB_SIZE} or more"
        )
    shell = ByteBPE(pattern_name=pattern_name, pattern=pattern)
    if isinstance(texts, str):
        texts = [texts]
    # identical chunks merge identically: count each distinct chunk once, with its weight
    weights: Counter[bytes] = Counter()
    for text in texts:
        for chunk in shell.pretokenize(text):
            try:
                weights[chunk.encode("utf-8")] += 1
            except UnicodeEncodeError as exc:
                raise TrainingError(
                    f"training text holds a lone surrogate {chunk[exc.start]!r} that has no "
                    f"UTF-8 form; remove it or repair the text first"
                ) from exc
    return shell, list(weights), list(weights.values())


def _trained(shell: ByteBPE, merges: list[tuple[int, int]], special_tokens: Mapping[str, int] | None) -> ByteBPE:
    model = ByteBPE(merges, pattern_name=shell.pattern_name, pattern=shell.pattern)
    if special_tokens:
        model.register_special(special_tokens)
    return model
