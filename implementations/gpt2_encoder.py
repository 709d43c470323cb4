"""The algorithm of OpenAI's GPT-2 ``src/encoder.py`` (seed 000), rewritten from the seed.

Each regex chunk is turned into its UTF-8 bytes, each byte into a printable *alias*
character (``bytes_to_unicode``), and BPE runs on the alias string: the outer loop picks
the adjacent pair with the lowest merge rank, the inner loop replaces *all* its
non-overlapping occurrences left to right, then the pairs are listed again. The final
symbols are looked up in ``encoder.json``.

Quirks reproduced on purpose, because they are what the original does:

- merges are read as ``text.split('\\n')[1:-1]``, which silently drops the last rule of a
  file without a trailing newline (``gpt2-encoder-strict`` keeps it);
- there is no special-token handling: ``"<|endoftext|>"`` is seven ordinary tokens, yet
  ``decode([50256])`` gives the literal back;
- text is made bytes with ``str.encode('utf-8')``, so a lone surrogate raises
  ``UnicodeEncodeError`` (tiktoken replaces it with U+FFFD instead);
- decode joins every token's bytes first and decodes UTF-8 once, with ``errors``.

Adapters: ``gpt2-encoder:gpt2`` and ``gpt2-encoder-strict:gpt2`` on the pinned GPT-2
files, and ``gpt2-encoder:DIR`` / ``gpt2-encoder-strict:DIR`` on any folder holding an
``encoder.json`` and a ``vocab.bpe``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Callable, Mapping, Sequence

from harness.cases.fixtures import portable_argument, resolve_argument
from harness.interface import Adapter, AllowedSpecial, Capabilities, DisallowedSpecial, TraceRound
from harness.outcomes import Operation
from harness.provenance import file_record
from harness.registry import AdapterSpec, Family, RegistryError
from harness.vocab import bytes_to_unicode, vocab_bytes, vocab_unavailable_reason

__all__ = [
    "GPT2_PATTERN",
    "Encoder",
    "GPT2EncoderAdapter",
    "family",
    "merge_all",
    "parse_merges",
    "read_text",
    "registered_specials",
]

#: The pre-tokenizer pattern of GPT-2's encoder.py, run with the ``regex`` module.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

KIND = "gpt2-encoder"
STRICT_KIND = "gpt2-encoder-strict"

_NOTES_COMMON = (
    "no special-token handling at all: '<|endoftext|>' always encodes as ordinary text "
    "(7 tokens) whatever allowed_special says, while decode([50256]) gives the literal back",
    "a lone surrogate raises UnicodeEncodeError (str.encode('utf-8')); tiktoken replaces it "
    "with U+FFFD",
    "GPT-2's original pattern '\\s+(?!\\S)|\\s+', not tiktoken's r50k_base rewrite with "
    "possessive quantifiers and '\\s++$'",
    "keeps encoder.py's merge loop on purpose (it is a reference for behaviour): every round "
    "lists all pairs of the piece again, about O(n^2) in its length: 10^4 random letters (one "
    "piece) take seconds, 10^6 would take hours; tokconf's own encoders are linear. Long "
    "inputs are bounded by the run's per-call time limit (--timeout, for adapters in a "
    "worker process), not by a faster algorithm",
)
_NOTE_SLICE = (
    "merges read as split('\\n')[1:-1]: a merges file without a trailing newline loses its "
    "last rule (seed 000)"
)
_NOTE_STRICT = "strict loader: keeps the last merge rule even without a trailing newline"


def read_text(data: bytes) -> str:
    """What ``open(path, encoding="utf-8").read()`` returns: universal newlines.

    >>> read_text(b"#version: 0.2\\r\\na b\\r\\n")
    '#version: 0.2\\na b\\n'
    """
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def parse_merges(text: str, *, strict: bool) -> list[tuple[str, ...]]:
    """The merge rules of a ``vocab.bpe`` text, in rank order.

    The original slices ``split('\\n')[1:-1]``: it skips the version line and *assumes* the
    file ends with a newline, so without one the last rule is lost. ``strict`` keeps it
    and insists on ``"left right"`` lines.

    >>> parse_merges("#version: 0.2\\na b\\nab c", strict=False)
    [('a', 'b')]
    >>> parse_merges("#version: 0.2\\na b\\nab c", strict=True)
    [('a', 'b'), ('ab', 'c')]
    >>> parse_merges("#version: 0.2\\na b\\nab c\\n", strict=False)
    [('a', 'b'), ('ab', 'c')]
    """
    lines = text.split("\n")
    if not strict:
        # str.split() on whitespace, as the original: no alias character is whitespace
        return [tuple(line.split()) for line in lines[1:-1]]
    body = lines[1:]
    if body and body[-1] == "":
        body = body[:-1]
    rules: list[tuple[str, ...]] = []
    for number, line in enumerate(body, start=2):
        parts = tuple(line.split(" "))
        if len(parts) != 2 or not all(parts):
            raise ValueError(
                f"vocab.bpe line {number} is {line!r}; a merge rule must be two symbols "
                f"separated by one space, e.g. 'Ġ t'. Fix or remove that line."
            )
        rules.append(parts)
    return rules


def merge_all(word: tuple[str, ...], first: str, second: str) -> tuple[tuple[str, ...], int]:
    """Replace every non-overlapping ``first second`` in ``word``, scanning left to right.

    Returns the new word and how many places merged. A merged symbol is only written to
    the output, so it cannot take part again in the same scan.

    >>> merge_all(("a", "a", "a"), "a", "a")
    (('aa', 'a'), 1)
    >>> merge_all(("a", "b", "a", "b"), "a", "b")
    (('ab', 'ab'), 2)
    """
    out: list[str] = []
    merged = 0
    i = 0
    last = len(word) - 1
    while i <= last:
        if i < last and word[i] == first and word[i + 1] == second:
            out.append(first + second)
            merged += 1
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out), merged


def bpe_rounds(
    word: tuple[str, ...],
    ranks: Mapping[tuple[str, ...], int],
    on_round: Callable[[TraceRound], None] | None = None,
) -> tuple[str, ...]:
    """Merge ``word`` by rank until no known pair remains or one symbol is left.

    >>> bpe_rounds(tuple("aaab"), {("a", "a"): 0, ("a", "b"): 1, ("aa", "a"): 2})
    ('aa', 'ab')
    """
    while len(word) > 1:
        pairs = set(zip(word, word[1:]))
        best = min(pairs, key=lambda pair: ranks.get(pair, float("inf")))
        rank = ranks.get(best)
        if rank is None:
            break
        word, merged = merge_all(word, *best)
        if on_round is not None:
            on_round(TraceRound(pair=best, rank=rank, merged=merged, result=list(word)))
    return word


class Encoder:
    """GPT-2's encoder: alias-string BPE, a per-instance cache, decode through bytes."""

    def __init__(
        self,
        encoder: Mapping[str, int],
        merges: Sequence[tuple[str, ...]],
        *,
        errors: str = "replace",
        shared: tuple[dict[int, str], Mapping[tuple[str, ...], int]] | None = None,
    ) -> None:
        import regex

        if shared is None:
            self.encoder = dict(encoder)
            self.decoder = {v: k for k, v in self.encoder.items()}
            self.bpe_ranks = {rule: rank for rank, rule in enumerate(merges)}
        else:
            # tables built once for these files and shared read-only (see _shared_tables)
            self.encoder = encoder
            self.decoder, self.bpe_ranks = shared
        self.errors = errors
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {alias: b for b, alias in self.byte_encoder.items()}
        #: alias chunk -> space-joined symbols; single-symbol chunks are never stored
        self.cache: dict[str, str] = {}
        self.pattern = regex.compile(GPT2_PATTERN)

    def aliases(self, chunk: str) -> str:
        """The alias string of one chunk (``str.encode`` raises on a lone surrogate)."""
        return "".join(self.byte_encoder[b] for b in chunk.encode("utf-8"))

    def bpe(self, token: str) -> str:
        """The final symbols of an alias chunk, joined by spaces (a separator, not data)."""
        cached = self.cache.get(token)
        if cached is not None:
            return cached
        word = tuple(token)
        if len(word) < 2:
            return token  # nothing to merge: returned early and, as in the original, not cached
        result = " ".join(bpe_rounds(word, self.bpe_ranks))
        self.cache[token] = result
        return result

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for chunk in self.pattern.findall(text):
            ids.extend(self.encoder[symbol] for symbol in self.bpe(self.aliases(chunk)).split(" "))
        return ids

    def trace(self, text: str) -> list[TraceRound]:
        """Every merge round of every chunk, in order (computed afresh, cache untouched)."""
        rounds: list[TraceRound] = []
        for chunk in self.pattern.findall(text):
            bpe_rounds(tuple(self.aliases(chunk)), self.bpe_ranks, rounds.append)
        return rounds

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        text = "".join(self.decoder[token] for token in tokens)
        return bytes(self.byte_decoder[alias] for alias in text)

    def decode(self, tokens: Sequence[int], *, errors: str | None = None) -> str:
        # all bytes first, one UTF-8 decode: a character split across tokens survives
        return self.decode_bytes(tokens).decode("utf-8", errors=errors or self.errors)


# Adapters of the same files (gpt2-encoder:gpt2 and gpt2-encoder-strict:gpt2) share one
# parse of them: the pinned vocab.bpe ends with a newline, so both loaders keep the same
# 50,000 rules and one set of tables serves both (about 25 MB less).


@lru_cache(maxsize=4)
def _shared_encoder(encoder_json: bytes) -> tuple[dict[str, int], dict[int, str]]:
    encoder = json.loads(read_text(encoder_json))
    return encoder, {v: k for k, v in encoder.items()}


@lru_cache(maxsize=8)
def _shared_rules(merges_text: bytes, strict: bool) -> tuple[tuple[str, ...], ...]:
    return _one_copy(tuple(parse_merges(read_text(merges_text), strict=strict)))


@lru_cache(maxsize=4)
def _one_copy(rules: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    return rules  # equal rule lists come back as the first one seen


@lru_cache(maxsize=4)
def _shared_ranks(rules: tuple[tuple[str, ...], ...]) -> dict[tuple[str, ...], int]:
    return {rule: rank for rank, rule in enumerate(rules)}


def registered_specials(encoder: Mapping[str, int], merges_text: str) -> dict[str, int]:
    """Entries the vocabulary holds but neither a byte alias nor any rule line builds.

    Every rule line counts, kept by the loader or not, so a rule the slicing loader drops
    is not mistaken for a special. For GPT-2 the result is ``{"<|endoftext|>": 50256}``.

    >>> registered_specials({"a": 0, "b": 1, "ab": 2, "<x>": 3}, "#version: 0.2\\na b")
    {'<x>': 3}
    """
    rules = [line.split() for line in merges_text.split("\n")[1:]]
    built = set(bytes_to_unicode().values()) | {"".join(rule) for rule in rules}
    return {alias: token_id for alias, token_id in encoder.items() if alias not in built}


class GPT2EncoderAdapter(Adapter):
    library = "tokconf"

    def __init__(
        self, *, name: str, encoding: str, encoder_json: bytes, merges_text: bytes, strict: bool
    ) -> None:
        encoder, decoder = _shared_encoder(encoder_json)
        text = read_text(merges_text)
        rules = _shared_rules(merges_text, strict)
        self.name = name
        self.encoding = encoding
        self.strict = strict
        self.native = Encoder(encoder, rules, shared=(decoder, _shared_ranks(rules)))
        self._specials = registered_specials(encoder, text)
        self.capabilities = Capabilities(
            special_policy="none",
            trace=True,
            pretokenize=True,
            notes=(*_NOTES_COMMON, _NOTE_STRICT if strict else _NOTE_SLICE),
        )

    @property
    def special_tokens(self) -> Mapping[str, int]:
        # registered in encoder.json, never produced by encode (special_policy "none")
        return dict(self._specials)

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        # encoder.py has no policy arguments; the literal is always ordinary text
        return self.native.encode(text)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self.native.decode_bytes(ids)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self.native.decode(ids, errors=errors)

    def trace(self, text: str) -> list[TraceRound]:
        return self.native.trace(text)

    @property
    def split_pattern(self) -> str:
        return GPT2_PATTERN

    def pretokenize(self, text: str) -> list[str]:
        return self.native.pattern.findall(text)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        if isinstance(exc, UnicodeEncodeError):
            return "unencodable-text"
        if isinstance(exc, UnicodeDecodeError):
            return "invalid-utf8"
        if op == "decode" and isinstance(exc, KeyError):
            return "unknown-id"
        return None


# -- registration --------------------------------------------------------------------------


def _check_official() -> str | None:
    if importlib.util.find_spec("regex") is None:
        return "the regex package is not installed: `pip install regex`"
    for name in ("encoder.json", "vocab.bpe"):
        reason = vocab_unavailable_reason(name)
        if reason is not None:
            return reason
    return None


def _official_spec(kind: str) -> AdapterSpec:
    strict = kind == STRICT_KIND
    name = f"{kind}:gpt2"
    return AdapterSpec(
        name=name,
        encoding="r50k_base",
        factory=lambda: GPT2EncoderAdapter(
            name=name,
            encoding="r50k_base",
            encoder_json=vocab_bytes("encoder.json"),
            merges_text=vocab_bytes("vocab.bpe"),
            strict=strict,
        ),
        library="tokconf",
        description="GPT-2 encoder.py algorithm"
        + (" with a strict merges loader" if strict else " (merges read as split('\\n')[1:-1])"),
        check=_check_official,
    )


def files_encoding(encoder_json: bytes, merges_text: bytes) -> str:
    """The ID space of a folder's files: same bytes, same encoding, whichever loader.

    >>> files_encoding(b"{}", b"#version: 0.2\\n")
    'gpt2-files:e03607265f8e'
    """
    return "gpt2-files:" + hashlib.sha256(encoder_json + merges_text).hexdigest()[:12]


_DIR_FILES = ("encoder.json", "vocab.bpe")


def _read_dir(folder: Path) -> tuple[bytes, bytes]:
    missing = [n for n in _DIR_FILES if not (folder / n).is_file()]
    if missing:
        raise RegistryError(
            f"{folder} must hold encoder.json and vocab.bpe (GPT-2's two files), but "
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing; "
            f"pass a folder with both, or use '{KIND}:gpt2' for the pinned GPT-2 files"
        )
    return (folder / "encoder.json").read_bytes(), (folder / "vocab.bpe").read_bytes()


def _resolver(kind: str) -> Callable[[str], AdapterSpec]:
    strict = kind == STRICT_KIND

    def resolve(argument: str) -> AdapterSpec:
        folder = resolve_argument(argument)
        encoder_json, merges_text = _read_dir(folder)
        encoding = files_encoding(encoder_json, merges_text)
        name = f"{kind}:{portable_argument(argument)}"  # never an install's absolute path

        def factory() -> GPT2EncoderAdapter:
            now_json, now_merges = _read_dir(folder)
            if files_encoding(now_json, now_merges) != encoding:
                raise RegistryError(
                    f"the files in {folder} changed after {name} was resolved as {encoding}; "
                    f"run again so that the encoding is computed from the current files"
                )
            adapter = GPT2EncoderAdapter(
                name=name, encoding=encoding, encoder_json=now_json, merges_text=now_merges, strict=strict
            )
            shown = portable_argument(argument)
            adapter.files_read = (file_record(f"{shown}/encoder.json", folder / "encoder.json", now_json),
                                  file_record(f"{shown}/vocab.bpe", folder / "vocab.bpe", now_merges))
            return adapter

        return AdapterSpec(
            name=name,
            encoding=encoding,
            factory=factory,
            library="tokconf",
            description=f"GPT-2 encoder.py algorithm on {folder}/encoder.json and vocab.bpe (unverified)",
            check=lambda: None if importlib.util.find_spec("regex") else "`pip install regex`",
        )

    return resolve


def family() -> list[Family]:
    # two families: ``resolve`` only sees the argument, so each kind needs its own
    return [
        Family(kind=kind, specs=lambda kind=kind: [_official_spec(kind)], resolve=_resolver(kind))
        for kind in (KIND, STRICT_KIND)
    ]
