"""The open-weight encodings through the families tokconf already has (issue 23).

For every encoding file that is not a GPT one (built in or ``--encoding-file``), over the
same verified ranks, pattern and special IDs the file declares:

- ``tiktoken:E``: a ``tiktoken.Encoding`` built from them, as users build one;
- ``hf:E``: tokconf's converter (:mod:`implementations.hf.convert`), ``ignore_merges`` on;
- ``hf-merges:E``: the same conversion with ``ignore_merges`` off, the form some
  published ``tokenizer.json`` files have; the difference is shown, not assumed;
- ``hf-transformers:E``: transformers' own converter (``TikTokenConverter``, or
  ``MistralConverter`` for Tekken), when transformers is installed;
- ``bytebpe-ranks:E``: tokconf's own rank-mode BPE.

Converted tokenizers are cached on disk, keyed by the rank file's SHA-256, the recipe and
the converting library's version.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from typing import Any, Callable, Mapping

from harness.encodings import EncodingSpec, encoding_spec
from harness.encodings.ranks import encoding_ranks, rank_file_path, ranks_unavailable_reason
from harness.interface import Capabilities
from harness.registry import AdapterSpec, library_version
from harness.vocab import cache_dir
from harness.atomic import write_atomic
from implementations.tiktoken import TiktokenAdapter

__all__ = ["PORT_KINDS", "TiktokenRanksAdapter", "build_port", "converted_tokenizer", "port_specs"]

#: bumped when a recipe changes, so stale cached files are not reused
RECIPE = 2  # 2: merges of tokens tiktoken reaches through a later token (Llama 3's .:.:)


class TiktokenRanksAdapter(TiktokenAdapter):
    """``tiktoken.Encoding(name, pat_str, mergeable_ranks, special_tokens)`` from an encoding file."""

    def __init__(self, spec: EncodingSpec) -> None:  # noqa: D107 - replaces get_encoding
        import regex
        import tiktoken

        self._enc = tiktoken.Encoding(spec.name, pat_str=spec.pattern, mergeable_ranks=encoding_ranks(spec),
                                      special_tokens=dict(spec.special_tokens))
        self._pattern = regex.compile(spec.pattern)
        self._release = library_version("tiktoken") or "?"
        self.name = f"tiktoken:{spec.name}"
        self.encoding = spec.name
        notes = ["tiktoken.Encoding built from the encoding file's ranks, pattern and special IDs"]
        if spec.normalization != "none":
            notes.append(f"no {spec.normalization} normalization: tiktoken encodes the text as given, "
                         f"while the vendor's tokenizer normalizes first")
        self.capabilities = Capabilities(batch=True, pretokenize=True, api_surface="tiktoken", notes=tuple(notes))


def _cached(key_parts: list[Any], label: str, build: Callable[[], Any]) -> Any:
    import tokenizers

    key = hashlib.sha256(json.dumps(key_parts, sort_keys=True).encode()).hexdigest()[:20]
    path = cache_dir() / "hf" / f"{label}-{key}.json"
    if path.is_file():
        try:
            return tokenizers.Tokenizer.from_file(str(path))
        except Exception:  # noqa: BLE001 - a damaged cache file is rebuilt, not trusted
            pass
    tokenizer = build()
    write_atomic(path, tokenizer.to_str())
    return tokenizer


def converted_tokenizer(spec: EncodingSpec, *, converter: str, ignore_merges: bool = True,
                        pattern: str | None = None) -> Any:
    """A ``tokenizers.Tokenizer`` for ``spec``: ``converter`` is ``tokconf`` or ``transformers``.

    ``pattern`` replaces the encoding's split pattern (to build a deliberately wrong file).
    """
    import tokenizers

    split = spec.pattern if pattern is None else pattern
    if converter == "tokconf":
        from implementations.hf.convert import build_tiktoken_tokenizer, oniguruma_pattern

        parts = [spec.vocabulary.sha256, spec.vocabulary.id_offset, spec.vocabulary.ordinary_tokens,
                 oniguruma_pattern(split), dict(spec.special_tokens), ignore_merges, spec.normalization,
                 tokenizers.__version__, RECIPE]
        return _cached(parts, f"{spec.name}-tokconf", lambda: build_tiktoken_tokenizer(
            encoding_ranks(spec), pattern=split, special_tokens=spec.special_tokens,
            ignore_merges=ignore_merges, nfc=spec.normalization == "NFC"))
    if converter == "transformers":
        parts = [spec.vocabulary.sha256, split, dict(spec.special_tokens), library_version("transformers"),
                 tokenizers.__version__, RECIPE]
        return _cached(parts, f"{spec.name}-transformers", lambda: _transformers_convert(spec, split))
    raise ValueError(f"unknown converter {converter!r}; use tokconf or transformers")


def _transformers_convert(spec: EncodingSpec, pattern: str) -> Any:
    from harness.encodings.ranks import rank_file_bytes

    rank_file_bytes(spec)  # the file transformers reads must be the pinned one
    path = str(rank_file_path(spec.vocabulary))
    if spec.vocabulary.format == "tekken-json":
        from transformers.integrations.mistral.tokenizer import MistralConverter

        converter = MistralConverter(vocab_file=path)
        converter.pattern = pattern
        return converter.converted()
    from transformers.convert_slow_tokenizer import TikTokenConverter

    # TikTokenConverter appends the special tokens after the ranks in the order given
    specials = sorted(spec.special_tokens, key=spec.special_tokens.get)
    return TikTokenConverter(vocab_file=path, pattern=pattern, extra_special_tokens=specials).converted()


def _hf(spec: EncodingSpec, *, kind: str) -> Any:
    from implementations.hf.adapters import HFAdapter

    if kind == "hf":
        tokenizer = converted_tokenizer(spec, converter="tokconf")
        notes = ("converted by tokconf from the encoding file's ranks (merges recovered, ignore_merges on)",)
    elif kind == "hf-merges":
        tokenizer = converted_tokenizer(spec, converter="tokconf", ignore_merges=False)
        notes = ("converted by tokconf WITHOUT ignore_merges: a vocabulary token its merge list cannot "
                 "build is never produced, as in tokenizer.json files converted that way",)
    else:
        tokenizer = converted_tokenizer(spec, converter="transformers")
        notes = (f"converted by transformers {library_version('transformers')}'s own converter "
                 f"({'MistralConverter' if spec.vocabulary.format == 'tekken-json' else 'TikTokenConverter'})",)
    # no declares_like: cases name hf-merges:/hf-transformers: themselves, since what they
    # do differs from hf:ENC (merges only; no NFC normalizer in transformers' conversion)
    return HFAdapter(tokenizer, name=f"{kind}:{spec.name}", encoding=spec.name, notes=notes)


def _bytebpe(spec: EncodingSpec) -> Any:
    from implementations.bytebpe.adapters import RANK_NOTES, ByteBPEAdapter
    from implementations.bytebpe.ranks import RankByteBPE

    ranks = encoding_ranks(spec)
    model = RankByteBPE(ranks, pattern=spec.pattern, special_tokens=dict(spec.special_tokens))
    return ByteBPEAdapter(model, name=f"bytebpe-ranks:{spec.name}", encoding=spec.name,
                          capabilities=Capabilities(batch=True, trace=True, pretokenize=True, notes=RANK_NOTES))


def _minbpe(spec: EncodingSpec, *, fixed: bool) -> Any:
    """minbpe's approach (merges recovered from the ranks, then GPT4Tokenizer's encoding):
    upstream's behaviour (``minbpe:``, its KeyError/AssertionError on special tokens kept)
    or with special handling repaired (``minbpe-fixed:``), as for the GPT encodings.
    Recovery refuses a vocabulary whose tokens are not all built by merging (Llama 3,
    Qwen3.6: tiktoken issue 60): the adapter is then unavailable, with that reason in the
    report."""
    from implementations.minbpe.adapters import _NOTES, _NOTES_FIXED, _NOTES_UPSTREAM, MinBPEAdapter
    from implementations.minbpe.recovery import load_or_recover_merges
    from implementations.minbpe.tokenizer import MinBPETokenizer, build_tables

    class MinBPEPort(MinBPEAdapter):
        def __init__(self) -> None:  # MinBPEAdapter's own reads the GPT tables only
            ranks = encoding_ranks(spec)
            source = spec.vocabulary
            merges = load_or_recover_merges(
                ranks, vocab_sha256=f"{source.sha256}-{source.id_offset}-{source.ordinary_tokens}")
            self.name, self.encoding = f"{'minbpe-fixed' if fixed else 'minbpe'}:{spec.name}", spec.name
            self.native = MinBPETokenizer(build_tables(ranks, merges), pattern=spec.pattern,
                                          special_tokens=dict(spec.special_tokens), fixed=fixed)
            self.capabilities = Capabilities(special_policy="ordinary-unless-allowed", trace=True, pretokenize=True,
                                             notes=_NOTES + (_NOTES_FIXED if fixed else _NOTES_UPSTREAM))

        @property
        def split_pattern(self) -> str:
            return spec.pattern

    return MinBPEPort()


PORT_KINDS: dict[str, tuple[str, Callable[[EncodingSpec], Any]]] = {
    "tiktoken": ("tiktoken", TiktokenRanksAdapter),
    "hf": ("tokenizers", lambda s: _hf(s, kind="hf")),
    "hf-merges": ("tokenizers", lambda s: _hf(s, kind="hf-merges")),
    "hf-transformers": ("transformers", lambda s: _hf(s, kind="hf-transformers")),
    "bytebpe-ranks": ("tokconf", _bytebpe),
    "minbpe": ("tokconf", lambda s: _minbpe(s, fixed=False)),
    "minbpe-fixed": ("tokconf", lambda s: _minbpe(s, fixed=True)),
}


def build_port(kind: str, encoding: str) -> Any:
    spec = encoding_spec(encoding)
    if spec is None:
        raise RuntimeError(f"no encoding {encoding!r} is known")
    return PORT_KINDS[kind][1](spec)


def _check(kind: str, encoding: str) -> str | None:
    module = {"tiktoken": "tiktoken", "tokenizers": "tokenizers", "transformers": "transformers",
              "tokconf": "regex"}[PORT_KINDS[kind][0]]
    if importlib.util.find_spec(module) is None:
        extra = " (or `pip install 'tokconf[convert]'`)" if module == "transformers" else ""
        return f"the {module} package is not installed: `pip install {module}`{extra}"
    spec = encoding_spec(encoding)
    return ranks_unavailable_reason(spec) if spec is not None else f"no encoding {encoding!r} is known"


def port_specs(specs: Mapping[str, EncodingSpec]) -> list[AdapterSpec]:
    """One spec per port kind for each encoding that is not one of the GPT encodings (which
    have their own families, with their own tiktoken, hf and bytebpe-ranks adapters). A
    user's encoding over a pinned GPT file (``pinned: cl100k_base.tiktoken`` with its own
    pattern) gets its ports like any other: it once got none, and no word why."""
    from implementations.tiktoken import ENCODINGS as GPT_ENCODINGS

    out = []
    for name, spec in specs.items():
        if spec.vocabulary.pinned is not None and name in GPT_ENCODINGS:
            continue
        for kind, (library, _) in PORT_KINDS.items():
            out.append(AdapterSpec(
                name=f"{kind}:{name}", encoding=name, factory=lambda k=kind, e=name: build_port(k, e),
                library=library, description=f"{kind} over the {name} encoding file's ranks",
                check=lambda k=kind, e=name: _check(k, e)))
    return out
