"""The everyday-text corpus: what users actually encode, as documents with provenance.

A green run must mean conformance on ordinary text too (issue 20, item 2): prose in many
scripts, source code, Markdown, JSON, chat transcripts, URLs, numbers, dates, currency,
emoji sequences. :func:`build` assembles it, with no network and nothing downloaded,
from three kinds of source:

- ``prose``: the repository's own sentences in more than 20 scripts
  (``harness/data/everyday/prose.yaml``, written for tokconf; one document per paragraph);
- ``chat``, ``urls``, ``numbers``, ``emoji``, ``json``, ``markdown``, ``code``: documents
  composed from tokconf's own templates and word lists (:mod:`harness.generate.everyday_templates`),
  picked by a hash of their number, never by ``random`` (whose streams may change between
  Python versions);
- ``pydoc-topics@<python>``, ``stdlib@<python>``: the documentation topics of ``pydoc``
  (``pydoc_data.topics``: real English prose with code) and the sources of a fixed list of
  standard-library modules, as the running Python ships them. They change with the Python
  version, so their source name carries it: the corpus is the same for the same tokconf
  version *and* Python version, and parity.json records both, with the hash.

Long texts are cut into documents of at most :data:`MAX_CHARS` characters, at a blank
line, else a line end, else a space, else between two characters that are not one
user-perceived character (never before a combining mark, a joiner, a variation selector
or an emoji modifier, never after a joiner): a document is always valid text, never a
UTF-8 fragment. Every document knows where it came from: :attr:`Document.where` is the
``everyday:<source>#<n>`` that findings show (``n`` counts from 0 within the source).
"""

from __future__ import annotations

import hashlib
import platform
import sysconfig
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterator

__all__ = ["MAX_CHARS", "STDLIB_MODULES", "Corpus", "Document", "build", "cut", "everyday_cases"]

#: the longest document, in characters (a long source becomes several documents)
MAX_CHARS = 3000
#: the dev profile's share: every n-th document of each source (``ci`` and ``nightly``: all)
DEV_EVERY = 8
#: standard-library modules whose source (code, comments, docstrings) is part of the
#: corpus; each present in CPython 3.10 and later, chosen for variety (parsers, numbers,
#: text, dates, e-mail, URLs), each cut to its first :data:`STDLIB_CHARS` characters
STDLIB_MODULES: tuple[str, ...] = (
    "textwrap.py", "string.py", "colorsys.py", "fractions.py", "statistics.py", "calendar.py", "shlex.py",
    "difflib.py", "heapq.py", "bisect.py", "csv.py", "gettext.py", "json/encoder.py", "json/decoder.py",
    "html/parser.py", "email/utils.py", "urllib/parse.py", "ipaddress.py", "datetime.py", "decimal.py",
)
STDLIB_CHARS = 2500
#: pydoc topics: each topic's first characters (the whole set would be half a megabyte)
TOPIC_CHARS = 1200


@dataclass(frozen=True)
class Document:
    source: str
    number: int
    text: str

    @property
    def where(self) -> str:
        """``everyday:<source>#<n>``: what a finding on this document names."""
        return f"everyday:{self.source}#{self.number}"


@dataclass(frozen=True)
class Corpus:
    documents: tuple[Document, ...]
    profile: str
    python: str
    #: sources that could not be read on this machine, with the reason
    missing: tuple[tuple[str, str], ...] = ()

    @property
    def sha256(self) -> str:
        return _digest(self.documents)

    def summary(self) -> dict[str, Any]:
        """What parity.json records (``run.everyday``): counts, sizes, hashes, provenance."""
        sources: dict[str, dict[str, Any]] = {}
        for source in dict.fromkeys(d.source for d in self.documents):
            docs = tuple(d for d in self.documents if d.source == source)
            sources[source] = {"documents": len(docs), "bytes": _size(docs), "sha256": _digest(docs)}
        return {"profile": self.profile, "python": self.python, "documents": len(self.documents),
                "bytes": _size(self.documents), "sha256": self.sha256, "sources": sources,
                "missing": [f"{name}: {why}" for name, why in self.missing]}


def build(*, profile: str = "ci") -> Corpus:
    """The corpus of ``profile`` (``dev``: every :data:`DEV_EVERY`-th document of each source)."""
    return _build(profile, platform.python_version())


@lru_cache(maxsize=4)
def _build(profile: str, python: str) -> Corpus:
    from harness.generate.everyday_templates import TEMPLATE_SOURCES

    documents: list[Document] = []
    missing: list[tuple[str, str]] = []
    sources: list[tuple[str, Any]] = [("prose", _prose), *TEMPLATE_SOURCES,
                                      (f"pydoc-topics@{python}", _topics), (f"stdlib@{python}", _stdlib)]
    for source, texts in sources:
        try:
            pieces = [piece for text in texts() for piece in cut(text)]
        except (ImportError, OSError) as exc:  # a Python without pydoc_data, a stripped stdlib
            missing.append((source, f"{type(exc).__name__}: {exc}"))
            continue
        documents += [Document(source, n, text) for n, text in enumerate(pieces)
                      if profile != "dev" or n % DEV_EVERY == 0]
    return Corpus(tuple(documents), profile, python, tuple(missing))


def everyday_cases(corpus: Corpus) -> list[Any]:
    """The documents as cases (id ``everyday:<source>#<n>``, tagged ``everyday``): they run
    through every text check on every adapter, like any case, and findings shrink and judge."""
    from harness.cases.model import Case

    return [Case(id=d.where, text=d.text, file=f"everyday:{d.source}", line=d.number + 1, tags=("everyday",))
            for d in corpus.documents]


# -- cutting ------------------------------------------------------------------------------

def cut(text: str, *, limit: int = MAX_CHARS) -> Iterator[str]:
    """``text`` in pieces of at most ``limit`` characters, cut where a reader would (see
    the module docstring); empty pieces are dropped, nothing else is (the pieces join to ``text``)."""
    if limit < 8:
        raise ValueError(f"limit must be at least 8 characters, got {limit}")
    start = 0
    while len(text) - start > limit:
        end = _cut_point(text, start, start + limit)
        yield text[start:end]
        start = end
    if start < len(text):
        yield text[start:]


def _cut_point(text: str, start: int, end: int) -> int:
    window = text[start:end]
    for mark in ("\n\n", "\n", " "):
        at = window.rfind(mark)
        if at > len(window) // 2:  # not so early that the document becomes a crumb
            return start + at + len(mark)
    at = end
    while at > start + 1 and not boundary(text, at):
        at -= 1
    return at


def boundary(text: str, at: int) -> bool:
    """Whether ``text`` may be cut before index ``at`` without splitting a character a
    reader sees as one (a simplification of UAX #29 that errs on the side of not cutting)."""
    if at <= 0 or at >= len(text):
        return True
    before, after = text[at - 1], text[at]
    if before == "\u200d" or 0xD800 <= ord(before) <= 0xDBFF:  # after a joiner, inside a surrogate pair
        return False
    return not _continues(after)


def _continues(ch: str) -> bool:
    code = ord(ch)
    return (unicodedata.category(ch) in ("Mn", "Mc", "Me") or code == 0x200D or 0xFE00 <= code <= 0xFE0F
            or 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F or 0xE0100 <= code <= 0xE01EF
            or 0xDC00 <= code <= 0xDFFF)


# -- sources ------------------------------------------------------------------------------

def _prose() -> list[str]:
    from harness.cases.yaml_source import safe_load

    raw = resources.files("harness").joinpath("data/everyday/prose.yaml").read_text(encoding="utf-8")
    data = safe_load(raw)
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("languages"), list):
        raise ValueError("harness/data/everyday/prose.yaml: expected `version: 1` and a `languages` list; "
                         "restore the file from the tokconf release")
    # a paragraph's final line end is YAML's block scalar, not the author's: keep the text
    return [paragraph.rstrip("\n") for entry in data["languages"] for paragraph in entry["paragraphs"]]


def _topics() -> list[str]:
    from pydoc_data.topics import topics

    return [_head(topics[name], TOPIC_CHARS) for name in sorted(topics)]


def _stdlib() -> list[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return [_head((root / name).read_text(encoding="utf-8"), STDLIB_CHARS) for name in STDLIB_MODULES]


def _head(text: str, limit: int) -> str:
    """The first lines of ``text`` that fit in ``limit`` characters (whole lines: never a
    character cut from its marks)."""
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, limit)
    return text[:end + 1] if end > 0 else next(cut(text, limit=limit))


def _size(documents: tuple[Document, ...]) -> int:
    return sum(len(d.text.encode("utf-8")) for d in documents)


def _digest(documents: tuple[Document, ...]) -> str:
    sha = hashlib.sha256()
    for d in documents:
        sha.update(d.where.encode("utf-8") + b"\0" + d.text.encode("utf-8") + b"\0")
    return sha.hexdigest()
