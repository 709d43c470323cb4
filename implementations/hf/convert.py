"""tiktoken ranks -> a Hugging Face ``tokenizer.json`` that encodes exactly as tiktoken.

Three pieces, each checked against tiktoken by the tests: merges recovered from the ranks
(:func:`recover_merges`), tiktoken's split pattern translated for Oniguruma, the regex
engine inside ``tokenizers`` (:func:`oniguruma_pattern`), and GPT-2's byte-level alphabet
(``bytes_to_unicode``) so that every byte has a character. Special tokens become added
tokens with tiktoken's IDs. The result is cached on disk (:func:`cached_tiktoken_tokenizer`)
keyed by vocabulary SHA-256, ``tokenizers`` version and the recipe.

GPT-2 needs no conversion: :func:`gpt2_tokenizer` builds it the way HF users do, from its
own ``encoder.json``/``vocab.bpe``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping

from harness.atomic import write_atomic
from harness.vocab import VOCAB_FILES, bytes_to_unicode, cache_dir, load_tiktoken_ranks, vocab_path

__all__ = [
    "CONVERSIONS",
    "Conversion",
    "build_tiktoken_tokenizer",
    "cached_tiktoken_tokenizer",
    "gpt2_tokenizer",
    "oniguruma_pattern",
    "recover_merges",
]

#: Bumped when the conversion recipe changes, so stale cached tokenizer.json files are not reused.
CONVERSION_FORMAT = 1

#: tiktoken's published split patterns (the specification the conversion must honour).
CL100K_PATTERN = (
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"
    r" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"
)
O200K_PATTERN = "|".join(
    [
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)

@dataclass(frozen=True)
class Conversion:
    """How one tiktoken encoding becomes a ``tokenizer.json``."""

    vocab_file: str
    #: tiktoken's split pattern (translated for Oniguruma when building)
    pattern: str
    special_tokens: Mapping[str, int]
    #: how many ordinary (mergeable) tokens the vocabulary file holds
    ordinary_tokens: int


CONVERSIONS: dict[str, Conversion] = {
    "cl100k_base": Conversion(
        "cl100k_base.tiktoken",
        CL100K_PATTERN,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        100256,
    ),
    "o200k_base": Conversion(
        "o200k_base.tiktoken",
        O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        199998,
    ),
}

# -- the split pattern ------------------------------------------------------------------


def oniguruma_pattern(pattern: str) -> str:
    r"""Translate a tiktoken (Rust fancy-regex) pattern so that Oniguruma splits the same.

    Two constructs mean something else to Oniguruma (Ruby syntax):

    - ``X{n,m}+`` is possessive for fancy-regex, but Oniguruma reads it as ``(?:X{n,m})+``
      (greedy repetition of the interval), so ``\p{N}{1,3}+`` eats a whole digit run.
      The exact possessive meaning is an atomic group: ``(?>X{n,m})``.
    - ``$`` is the end of the text for fancy-regex, the end of a *line* for Oniguruma;
      ``\z`` is the end of the text for both.

    ``X++``, ``X?+`` and ``X*+`` are possessive for both engines and are kept.

    >>> print(oniguruma_pattern(r"\p{N}{1,3}+|\s++$|[$]{2}+"))
    (?>\p{N}{1,3})|\s++\z|(?>[$]{2})
    >>> print(oniguruma_pattern(r"(?i:a|b){1,3}+"))
    (?>(?i:a|b){1,3})
    >>> print(oniguruma_pattern(r"(?i)x{2}+(?<n>y)$"))
    (?i)(?>x{2})(?<n>y)\z
    """
    out: list[str] = []  # one entry per atom, quantifier or operator, in order
    last_atom = -1  # index in `out` of the most recent atom
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            end = _escape_end(pattern, i)
            out.append(pattern[i:end])
            last_atom, i = len(out) - 1, end
        elif ch == "[":
            end = _class_end(pattern, i)
            out.append(pattern[i:end])
            last_atom, i = len(out) - 1, end
        elif ch == "(":
            end = _group_end(pattern, i)
            head = _group_head(pattern, i)
            if head.endswith(")"):  # an inline flag group such as (?i) has no body
                out.append(head)
            else:
                out.append(head + oniguruma_pattern(pattern[i + len(head) : end - 1]) + ")")
            last_atom, i = len(out) - 1, end
        elif ch == "{" and last_atom >= 0 and (end := _interval_end(pattern, i)) is not None:
            if end < len(pattern) and pattern[end] == "+":
                out[last_atom:] = ["(?>" + "".join(out[last_atom:]) + pattern[i:end] + ")"]
                i = end + 1
            else:
                out.append(pattern[i:end])
                i = end
        elif ch == "$":
            out.append(r"\z")
            last_atom, i = len(out) - 1, i + 1
        elif ch in "+*?|":
            out.append(ch)
            i += 1
        else:
            out.append(ch)
            last_atom, i = len(out) - 1, i + 1
    return "".join(out)


def _escape_end(pattern: str, i: int) -> int:
    if pattern[i + 1 : i + 2] in ("p", "P") and pattern[i + 2 : i + 3] == "{":
        return pattern.index("}", i) + 1
    return i + 2


def _class_end(pattern: str, i: int) -> int:
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":  # a leading ']' is literal
        j += 1
    while pattern[j] != "]":
        if pattern[j] == "\\":
            j = _escape_end(pattern, j)
        elif pattern[j] == "[":  # a nested class
            j = _class_end(pattern, j)
        else:
            j += 1
    return j + 1


def _group_end(pattern: str, i: int) -> int:
    j = i + 1
    while pattern[j] != ")":
        if pattern[j] == "\\":
            j = _escape_end(pattern, j)
        elif pattern[j] == "[":
            j = _class_end(pattern, j)
        elif pattern[j] == "(":
            j = _group_end(pattern, j)
        else:
            j += 1
    return j + 1


def _group_head(pattern: str, i: int) -> str:
    """``(``, ``(?:``, ``(?i:``, ``(?!``, ``(?=``, ``(?>``, ... up to the group's body."""
    if pattern[i + 1 : i + 2] != "?":
        return "("
    j = i + 2
    while pattern[j] not in ":!=>)" and not (pattern[j] == "<" and pattern[j + 1] in "=!"):
        j += 1
    if pattern[j] == "<":
        j += 1
    return pattern[i : j + 1]


def _interval_end(pattern: str, i: int) -> int | None:
    j = i + 1
    while j < len(pattern) and (pattern[j].isdigit() or pattern[j] == ","):
        j += 1
    if j < len(pattern) and pattern[j] == "}" and pattern[i + 1 : j].strip(","):
        return j + 1
    return None


# -- merges from ranks ------------------------------------------------------------------


def recover_merges(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge that makes each multi-byte token, in rank order.

    For a token of rank ``r``, byte-pair merging over its bytes using only tokens of rank
    below ``r`` ends in exactly two parts: the pair whose merge (at priority ``r``) makes
    it. In a vocabulary not trained by merging (Llama 3, Qwen3.6) that merging may stall
    in three or more parts, and tiktoken's rule (merge the lowest-ranked adjacent pair,
    whatever its rank) still reaches the token through a *later* token: Llama 3's ".:.:"
    stalls at ".", ":.", ":", and tiktoken goes on through ".:." (a higher rank). The pair
    of that last merge is the merge: HF applies the later token's own merge first, as
    tiktoken does. A token that neither way builds gets no merge (HF, like tiktoken, still
    emits it when a whole pre-token chunk equals it and ``ignore_merges`` is on).

    >>> recover_merges({b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4, b"bc": 5})
    [(b'a', b'b'), (b'ab', b'c'), (b'b', b'c')]
    >>> recover_merges({b".": 0, b":": 1, b":.": 2, b".:.:": 3, b".:.": 4})
    [(b':', b'.'), (b'.:.', b':'), (b'.', b':.')]
    """
    merges: list[tuple[bytes, bytes]] = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) == 1:
            continue
        if len(token) == 2:
            merges.append((token[:1], token[1:]))
            continue
        parts = [token[k : k + 1] for k in range(len(token))]
        while len(parts) > 2:
            best, at = rank, -1
            for k in range(len(parts) - 1):
                found = ranks.get(parts[k] + parts[k + 1], rank)
                if found < best:
                    best, at = found, k
            if at < 0:
                break
            parts[at : at + 2] = [parts[at] + parts[at + 1]]
        if len(parts) > 2:
            parts = _through_later_tokens(parts, ranks)
        if len(parts) == 2:
            merges.append((parts[0], parts[1]))
    return merges


def _through_later_tokens(parts: list[bytes], ranks: Mapping[bytes, int]) -> list[bytes]:
    """Go on merging ``parts`` by tiktoken's rule with every rank; the last two parts if
    that ends in one token (the pair of its last merge), else ``parts`` as they were."""
    work = list(parts)
    while len(work) > 2:
        best, at = None, -1
        for k in range(len(work) - 1):
            found = ranks.get(work[k] + work[k + 1])
            if found is not None and (best is None or found < best):
                best, at = found, k
        if at < 0:
            return parts
        work[at : at + 2] = [work[at] + work[at + 1]]
    return work


def build_tiktoken_tokenizer(
    ranks: Mapping[bytes, int],
    *,
    pattern: str,
    special_tokens: Mapping[str, int],
    ignore_merges: bool = True,
    nfc: bool = False,
) -> Any:
    """A ``tokenizers.Tokenizer`` equivalent to tiktoken's BPE over ``ranks``.

    ``pattern`` is tiktoken's split pattern; it is translated with
    :func:`oniguruma_pattern`. ``ignore_merges=True`` mirrors tiktoken looking a whole
    pre-token chunk up in the ranks before merging; ``False`` gives the merges-only model
    some converted files ship with (issue 23 shows what that changes). ``nfc`` adds an NFC
    normalizer, for vocabularies whose own tokenizer normalizes first (Qwen).
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

    alias = bytes_to_unicode()

    def text(token: bytes) -> str:
        return "".join(alias[b] for b in token)

    vocab = {text(token): rank for token, rank in ranks.items()}
    vocab.update(special_tokens)  # so the added tokens keep tiktoken's IDs
    merges = [(text(left), text(right)) for left, right in recover_merges(ranks)]
    tokenizer = Tokenizer(models.BPE(vocab, merges, ignore_merges=ignore_merges))
    if nfc:
        tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(oniguruma_pattern(pattern)), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(
        [AddedToken(s, special=True, normalized=False) for s in sorted(special_tokens, key=special_tokens.get)]
    )
    return tokenizer


def cached_tiktoken_tokenizer(encoding: str) -> Any:
    """The converted tokenizer for ``encoding``, from the disk cache or built and cached.

    The cache key covers the vocabulary's SHA-256, the ``tokenizers`` version and the
    recipe (pattern, specials, :data:`CONVERSION_FORMAT`). A cached file that fails to
    load or to match the expected vocabulary is rebuilt.
    """
    import tokenizers

    conversion = CONVERSIONS[encoding]
    recipe = json.dumps(
        [
            VOCAB_FILES[conversion.vocab_file].sha256,
            tokenizers.__version__,
            oniguruma_pattern(conversion.pattern),
            dict(conversion.special_tokens),
            CONVERSION_FORMAT,
        ],
        sort_keys=True,
    )
    key = hashlib.sha256(recipe.encode()).hexdigest()[:20]
    path = cache_dir() / "hf" / f"{encoding}-tokenizers-{tokenizers.__version__}-{key}.json"
    if path.is_file():
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(path))
        except Exception:  # a damaged cache file is rebuilt, not trusted
            tokenizer = None
        if tokenizer is not None and _looks_right(tokenizer, conversion):
            return tokenizer
    tokenizer = build_tiktoken_tokenizer(
        load_tiktoken_ranks(conversion.vocab_file), pattern=conversion.pattern, special_tokens=conversion.special_tokens
    )
    write_atomic(path, tokenizer.to_str())
    return tokenizer


def _looks_right(tokenizer: Any, conversion: Conversion) -> bool:
    expected = conversion.ordinary_tokens + len(conversion.special_tokens)
    return tokenizer.get_vocab_size(with_added_tokens=True) == expected and all(
        tokenizer.token_to_id(s) == i for s, i in conversion.special_tokens.items()
    )




def gpt2_tokenizer() -> Any:
    """GPT-2 as HF users build it: its own files, HF's ByteLevel pre-tokenizer and decoder."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    model = models.BPE.from_file(str(vocab_path("encoder.json")), str(vocab_path("vocab.bpe")))
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    return tokenizer
