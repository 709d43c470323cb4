"""The corpus cut into shards: consecutive documents, named by where they start and end.

A shard is the unit a Dask worker checks and the unit a resumed run skips or redoes.
Its id is its position in the corpus (0, 1, 2, ...), so the same corpus and
``--shard-size`` give the same shards on every run: that is what lets deltas merge in
shard order and a resumed run know which are missing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from harness.cases.corpus import CorpusOptions, Document, document_case, read_corpus

__all__ = ["DEFAULT_SHARD_SIZE", "Shard", "plan_shards"]

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
    #: the documents as cases (what ``--jobs`` runs); the worker needs the text, not the file
    cases: tuple[Any, ...] = ()

    @property
    def where(self) -> str:
        return f"shard {self.id} ({self.documents} documents, {self.first} to {self.last})"

    def without_cases(self) -> "Shard":
        return Shard(self.id, self.first, self.last, self.documents, self.bytes)


def plan_shards(paths: Iterable[str | os.PathLike[str]], options: CorpusOptions = CorpusOptions(), *,
                size: int = DEFAULT_SHARD_SIZE) -> Iterator[Shard]:
    """The corpus's documents ``size`` at a time, streamed (one shard in memory at a time).

    Cases are made exactly as :func:`harness.cases.corpus.corpus_case_batches` makes them,
    so a finding names the same file, document number and byte offset either way.
    """
    if size < 1:
        raise ValueError(f"--shard-size must be at least 1 document, got {size}")
    batch: list[Document] = []
    index = 0
    for document in read_corpus(paths, options):
        batch.append(document)
        if len(batch) >= size:
            yield _shard(index, batch)
            index += 1
            batch = []
    if batch:
        yield _shard(index, batch)


def _shard(index: int, documents: list[Document]) -> Shard:
    cases = tuple(document_case(d) for d in documents)
    size = sum(len(d.text.encode("utf-8", "surrogatepass")) for d in documents)
    return Shard(index, documents[0].where, documents[-1].where, len(documents), size, cases)
