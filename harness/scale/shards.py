"""The corpus cut into shards: consecutive documents, named by where they start and end.

A shard is the unit a Dask worker checks and the unit a resumed run skips or redoes.
Its id is its position in the corpus (0, 1, 2, ...), so the same corpus and
``--shard-size`` give the same shards on every run: that is what lets deltas merge in
shard order and a resumed run know which are missing.
"""

from __future__ import annotations

import dataclasses
import os
from stat import S_ISREG
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from harness.cases.corpus import CorpusOptions, Document, document_case, read_corpus, read_documents_at

__all__ = ["DEFAULT_SHARD_SIZE", "Shard", "Source", "SourceChanged", "file_identity", "plan_shards"]

#: documents per shard: a few seconds of work on one worker for short documents, so the
#: scheduler's round trip (milliseconds) is small beside it, and a lost shard costs little
DEFAULT_SHARD_SIZE = 1000


@dataclass(frozen=True)
class Shard:
    """Documents ``first`` to ``last`` (each ``file#number@offset``) of the corpus."""

    id: int
    first: str
    last: str
    documents: int
    bytes: int
    #: the documents as cases (what ``--jobs`` runs), when the worker gets the text
    cases: tuple[Any, ...] = ()
    #: where the worker reads the documents itself, when it sees the corpus files
    source: "Source | None" = None

    @property
    def where(self) -> str:
        return f"shard {self.id} ({self.documents} documents, {self.first} to {self.last})"

    def without_cases(self) -> "Shard":
        return Shard(self.id, self.first, self.last, self.documents, self.bytes)

    def read_cases(self) -> tuple[Any, ...]:
        """The documents as cases: sent with the shard, or read from its :class:`Source`."""
        return self.cases if self.source is None else self.source.read()


@dataclass(frozen=True)
class Source:
    """A shard's documents in one corpus file: from document ``number`` at byte ``offset``,
    ``count`` of them, in the file the client saw (``size`` and ``mtime_ns``). ``file`` is
    absolute (a worker's working folder is not the client's); ``name`` is the file as the
    corpus named it, which the documents' cases keep."""

    file: str
    name: str
    offset: int
    number: int
    count: int
    options: CorpusOptions
    size: int
    mtime_ns: int

    def read(self) -> tuple[Any, ...]:
        seen = file_identity(self.file)
        if seen != (self.size, self.mtime_ns):
            here = "missing or not a regular file" if seen is None else f"{seen[0]} bytes, modified {seen[1]} ns"
            raise SourceChanged(f"{self.file} is not the file the client read ({here}; the client saw "
                                f"{self.size} bytes, {self.mtime_ns} ns): give every worker the same corpus "
                                f"files, or run without them in reach")
        documents = read_documents_at(self.file, self.options, offset=self.offset, number=self.number,
                                      count=self.count)
        return tuple(document_case(dataclasses.replace(d, file=self.name), self.options) for d in documents)


class SourceChanged(Exception):
    """A worker's copy of a corpus file differs from the client's."""


def file_identity(path: str) -> tuple[int, int] | None:
    """``(size, mtime_ns)`` of a regular file, what client and workers compare to know they
    see the same corpus; None for a missing file or one that is not regular (a pipe such
    as ``/dev/stdin``, which only the client can read)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns) if S_ISREG(stat.st_mode) else None


def plan_shards(paths: Iterable[str | os.PathLike[str]], options: CorpusOptions = CorpusOptions(), *,
                size: int = DEFAULT_SHARD_SIZE, by_reference: bool = False) -> Iterator[Shard]:
    """The corpus's documents ``size`` at a time, streamed (one shard in memory at a time).

    Cases are made exactly as :func:`harness.cases.corpus.corpus_case_batches` makes them,
    so a finding names the same file, document number and byte offset either way.
    ``by_reference``: a shard whose documents are all in one regular file carries where
    they are (:class:`Source`) instead of their text, for workers that see the files.
    """
    if size < 1:
        raise ValueError(f"--shard-size must be at least 1 document, got {size}")
    batch: list[Document] = []
    index = 0
    for document in read_corpus(paths, options):
        batch.append(document)
        if len(batch) >= size:
            yield _shard(index, batch, options, by_reference=by_reference)
            index += 1
            batch = []
    if batch:
        yield _shard(index, batch, options, by_reference=by_reference)


def _shard(index: int, documents: list[Document], options: CorpusOptions, *, by_reference: bool) -> Shard:
    size = sum(len(d.text.encode("utf-8", "surrogatepass")) for d in documents)
    first = documents[0]
    identity = file_identity(first.file) if by_reference else None
    if identity is not None and all(d.file == first.file for d in documents):
        source = Source(os.path.abspath(first.file), first.file, first.offset, first.number, len(documents), options,
                        *identity)
        return Shard(index, first.where, documents[-1].where, len(documents), size, source=source)
    cases = tuple(document_case(d, options) for d in documents)
    return Shard(index, first.where, documents[-1].where, len(documents), size, cases)
