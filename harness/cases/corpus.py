r"""User corpora: documents from text files, JSON Lines and folders of them, streamed.

``--corpus PATH`` (repeatable) for ``tokconf run``, ``snapshot`` and ``gate``. A path is

- a **text file**: by default one document per file (``--split file``); or documents
  separated by blank lines (``--split blank-line``: a line holding nothing but spaces
  or tabs, ``\n`` or ``\r\n`` line ends), or by an exact separator
  (``--split separator --separator '\x1e'``; escapes as in ``tokconf encode --escapes``);
- a **JSON Lines** file (``.jsonl``, ``.ndjson``): one JSON object per ``\n``-ended line,
  the document in its ``--text-field`` (default ``text``). JSON's ``\ud800`` escapes give
  lone surrogates, kept exactly, since hostile text is what a corpus may be for;
- a **folder**: every file below it, in sorted order (hidden ones skipped).

Files are read as bytes in chunks and cut at the separators' bytes, so a corpus is never
read whole into memory (a single document still is). Text is never split with
``str.splitlines()``, which would also cut at U+2028, U+0085 or ``\x1c``: a line ends at
``\n`` only. A document that is not UTF-8 is an error naming file and byte offset.

Each :class:`Document` knows where it came from: file, document number (0-based) and
the byte offset where it starts; :attr:`Document.where` says it in one string, which is
what findings and goldens show.

**Screened documents.** A corpus is for scale: every document is compared on what
differs between drop-ins at scale (id-parity, error-category, round-trip), but the other
checks (stream and per-token decode, batch and API-surface calls, ...) cost many adapter
calls per document and probe the adapter's code more than the text, which the cases,
generated and everyday phases already do with every check. So 1 document in
``CorpusOptions.full_checks_every`` (chosen by a hash of its text: the same documents on
every run, executor and shard size; see :func:`fully_checked`) runs every check, and the
others are tagged ``screened``: the runner runs every check on such a document too as soon
as the screen finds anything (:mod:`harness.run.screen`).
"""

from __future__ import annotations

import codecs
import itertools
import json
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Literal

__all__ = ["DEFAULT_FULL_CHECKS_EVERY", "CorpusError", "CorpusOptions", "Document", "corpus_case_batches",
           "corpus_files", "document_case", "fully_checked", "is_document", "read_corpus", "read_documents_at"]

Split = Literal["file", "blank-line", "separator"]
_CHUNK = 1 << 20
_BLANK = re.compile(rb"\r?\n(?:[ \t]*\r?\n)+")
_JSONL = (".jsonl", ".ndjson")
#: 1 corpus document in this many runs every check (``--full-checks-every``)
DEFAULT_FULL_CHECKS_EVERY = 64


class CorpusError(Exception):
    """A corpus that cannot be read as asked; names the file, where, and the fix."""


@dataclass(frozen=True)
class CorpusOptions:
    split: Split = "file"
    separator: str | None = None
    text_field: str = "text"
    #: files left out of a folder (``--skip-non-utf8``: checked before the run, each one
    #: named in a note); a file given by name is never skipped. A sorted tuple, so the
    #: options stay JSON as they are (plans, goldens and Dask progress files record them)
    skip: tuple[str, ...] = ()
    #: 1 document in this many runs every check, the others the screen (1: every document
    #: runs every check); see :func:`fully_checked`
    full_checks_every: int = DEFAULT_FULL_CHECKS_EVERY

    def __post_init__(self) -> None:
        if not isinstance(self.full_checks_every, int) or self.full_checks_every < 1:
            raise CorpusError(f"--full-checks-every must be a whole number of at least 1, got "
                              f"{self.full_checks_every!r}; 1 runs every check on every document")

    def to_json(self) -> dict[str, Any]:
        """As goldens record it; ``skip`` only when a file was left out, ``full_checks_every``
        only when it is not the default (older goldens and progress files unchanged)."""
        data: dict[str, Any] = {"split": self.split, "separator": self.separator, "text_field": self.text_field}
        if self.skip:
            data["skip"] = list(self.skip)
        if self.full_checks_every != DEFAULT_FULL_CHECKS_EVERY:
            data["full_checks_every"] = self.full_checks_every
        return data


@dataclass(frozen=True)
class Document:
    text: str
    file: str
    number: int
    offset: int  # byte offset of the document's first byte in its file

    @property
    def where(self) -> str:
        """``corpus/a.txt#3@120``: file, document number, byte offset."""
        return f"{self.file}#{self.number}@{self.offset}"


def read_corpus(paths: Iterable[str | os.PathLike[str]], options: CorpusOptions = CorpusOptions()) -> Iterator[Document]:
    """Every document of every path, lazily, in order."""
    if options.split == "separator" and not options.separator:
        raise CorpusError("--split separator needs --separator TEXT (e.g. --separator '\\x1e')")
    for file, _in_folder in corpus_files(paths):
        if str(file) not in options.skip:
            yield from _read_file(file, options)


def corpus_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[tuple[Path, bool]]:
    """Every file the corpus paths name, in reading order, and whether a folder held it."""
    for path in paths:
        root = Path(path)
        if root.is_dir():
            for file in sorted(p for p in root.rglob("*") if p.is_file() and not any(
                    part.startswith(".") for part in p.relative_to(root).parts)):
                yield file, True
        elif root.exists():  # a file, or a pipe (--corpus /dev/stdin)
            yield root, False
        else:
            raise CorpusError(f"--corpus {path}: no such file or folder")


def corpus_case_batches(paths: Iterable[str | os.PathLike[str]], options: CorpusOptions = CorpusOptions(), *,
                        size: int = 256) -> Iterator[list[Any]]:
    """The documents as cases for ``tokconf run``, ``size`` at a time (a run keeps what it
    found, not the corpus). A case's id is ``corpus:`` + :attr:`Document.where`, so every
    finding names file, document number and byte offset; its ``line`` is the document
    number plus one."""
    batch: list[Any] = []
    for document in read_corpus(paths, options):
        batch.append(document_case(document, options))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def document_case(document: Document, options: CorpusOptions = CorpusOptions()) -> Any:
    """``document`` as a case (``corpus:`` + :attr:`Document.where`, tagged ``corpus``, and
    ``screened`` unless :func:`fully_checked` picks it)."""
    from harness.cases.model import Case

    screened = not fully_checked(document.text, options.full_checks_every)
    return Case(id=f"corpus:{document.where}", text=document.text, file=document.file,
                line=document.number + 1, tags=("corpus", "screened") if screened else ("corpus",))


def is_document(case: Any) -> bool:
    """Whether ``case`` is a ``--corpus`` document (:func:`document_case`), not a case file's
    case: a case file's ids cannot hold ``:``, and shipped cases are tagged ``corpus`` too."""
    return case.id.startswith("corpus:")


def fully_checked(text: str, every: int) -> bool:
    """Whether a corpus document runs every check rather than the screen: 1 in ``every``,
    by the CRC-32 of its UTF-8 bytes, so the choice depends on the text alone.

    >>> fully_checked("any text", 1)
    True
    >>> [fully_checked(t, 4) for t in ("a", "b", "c", "d", "e")]
    [False, False, False, True, False]
    """
    return every <= 1 or zlib.crc32(text.encode("utf-8", "surrogatepass")) % every == 0


def read_documents_at(file: str | os.PathLike[str], options: CorpusOptions, *, offset: int, number: int,
                      count: int) -> list[Document]:
    """``count`` documents of ``file`` from document ``number``, which starts at byte
    ``offset``: what a Dask worker that sees the corpus reads of its shard
    (:mod:`harness.scale.shards`), the same documents :func:`read_corpus` gives."""
    return list(itertools.islice(_read_file(Path(file), options, offset=offset, number=number), count))


def _read_file(file: Path, options: CorpusOptions, *, offset: int = 0, number: int = 0) -> Iterator[Document]:
    try:
        with open(file, "rb") as handle:
            if offset:
                handle.seek(offset)
            if file.suffix.lower() in _JSONL:
                yield from _jsonl(handle, str(file), options.text_field, offset=offset, number=number)
            elif options.split == "file":
                data = handle.read()
                yield Document(_decode(data, str(file), 0), str(file), 0, 0)
            elif options.split == "blank-line":
                yield from _split(handle, str(file), _BLANK, strip_end=True, start=offset, number=number)
            else:
                sep = re.compile(re.escape((options.separator or "").encode("utf-8", "surrogatepass")))
                yield from _split(handle, str(file), sep, strip_end=False, start=offset, number=number)
    except OSError as exc:
        raise CorpusError(f"--corpus: cannot read {file}: {exc}") from exc


def _decode(data: bytes, file: str, offset: int) -> str:
    try:
        return codecs.decode(data, "utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{file}: the document at byte {offset} is not UTF-8 (byte {offset + exc.start}: "
                          f"{data[exc.start:exc.start + 4]!r}); convert the file to UTF-8") from exc


def _split(handle: BinaryIO, file: str, separator: re.Pattern[bytes], *, strip_end: bool, start: int = 0,
           number: int = 0) -> Iterator[Document]:
    """Cut the byte stream at ``separator`` (a match is taken only once more bytes, or the
    end, show it cannot grow); empty documents are skipped. ``start`` and ``number``: the
    file offset the handle is at, a document's start, and that document's number."""
    buffer = b""
    done = False
    while not done:
        chunk = handle.read(_CHUNK)
        done = not chunk
        buffer += chunk
        cut = 0
        for match in separator.finditer(buffer):
            if not done and match.end() >= len(buffer):
                break  # may continue in the next chunk
            piece = buffer[cut:match.start()]
            if piece:
                yield Document(_decode(piece, file, start + cut), file, number, start + cut)
                number += 1
            cut = match.end()
        buffer = buffer[cut:]
        start += cut
    if strip_end and buffer.endswith(b"\n"):
        buffer = buffer[:-2] if buffer.endswith(b"\r\n") else buffer[:-1]
    if buffer:
        yield Document(_decode(buffer, file, start), file, number, start)


def _jsonl(handle: BinaryIO, file: str, field: str, *, offset: int = 0, number: int = 0) -> Iterator[Document]:
    # from a later offset (a worker reading its shard), line numbers count from there
    for line_number, raw in enumerate(_lines(handle), start=1):
        line = raw.strip()
        here = offset
        offset += len(raw)
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise CorpusError(f"{file}:{line_number}: not JSON ({exc}); JSON Lines holds one object per line") from exc
        if not isinstance(record, dict) or not isinstance(record.get(field), str):
            keys = sorted(record) if isinstance(record, dict) else type(record).__name__
            raise CorpusError(f"{file}:{line_number}: no string field {field!r} (found {keys}); "
                              f"name the field with --text-field")
        yield Document(record[field], file, number, here)
        number += 1


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    """Lines ending at ``\\n`` only (bytes, with their end), streamed."""
    rest = b""
    while True:
        chunk = handle.read(_CHUNK)
        if not chunk:
            break
        rest += chunk
        *lines, rest = rest.split(b"\n")
        for line in lines:
            yield line + b"\n"
    if rest:
        yield rest
