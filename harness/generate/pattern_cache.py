"""Pattern inputs kept on disk: derived once per pattern and Unicode tables, then read.

Building the inputs of a pattern (:func:`harness.generate.pattern_inputs.pattern_inputs`)
scans every code point for class edges and tries thousands of texts side by side for
the ordered pairs: a second or two per run. The result is a pure function of the
pattern, the ``regex`` module's and ``unicodedata``'s Unicode tables and tokconf's own
generation code, so it is cached under ``TOKCONF_CACHE_DIR`` keyed by all of them,
like the converted Hugging Face tokenizers. A cache file that cannot be read is
rebuilt, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import sys
import unicodedata
from functools import lru_cache
from pathlib import Path

import regex

from harness.atomic import write_atomic
from harness.generate import pattern_inputs as _inputs, pattern_parse, unicode_edges
from harness.generate.pattern_inputs import PatternInput

__all__ = ["cached_pattern_inputs"]

FORMAT = 1


@lru_cache(maxsize=1)
def _code_hash() -> str:
    digest = hashlib.sha256()
    for module in (_inputs, pattern_parse, unicode_edges):
        digest.update(Path(module.__file__ or "").read_bytes())
    return digest.hexdigest()


def _key(pattern: str) -> str:
    parts = [str(FORMAT), pattern, regex.__version__, unicodedata.unidata_version,
             ".".join(map(str, sys.version_info[:2])), _code_hash()]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


@lru_cache(maxsize=32)
def cached_pattern_inputs(pattern: str) -> tuple[PatternInput, ...]:
    """:func:`~harness.generate.pattern_inputs.pattern_inputs`, read from disk when it can be."""
    from harness.vocab import cache_dir

    try:
        path = cache_dir() / "pattern-inputs" / f"{_key(pattern)}.json"
    except OSError:
        return _inputs.pattern_inputs(pattern)
    try:
        data = json.loads(path.read_text(encoding="ascii"))
        return tuple(PatternInput(text, tuple(targets), bool(volatile)) for text, targets, volatile in data)
    except (OSError, ValueError, TypeError):
        pass  # missing or unreadable: build it
    built = _inputs.pattern_inputs(pattern)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps([[i.text, list(i.targets), i.volatile] for i in built], ensure_ascii=True),
                     encoding="ascii")
    except OSError:
        pass  # a read-only cache costs time, not correctness
    return built
