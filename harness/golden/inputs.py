"""The inputs of a golden, each with a *source* that says where it came from.

- ``case:ID``: the texts of the YAML cases (the shipped ones unless ``--cases`` says);
- ``generated:N``: hostile text from :func:`harness.generate.strategies.hostile_text`
  (derandomized, seeded) and the fixed hostile atoms, for the special literals of the
  adapters recorded;
- ``long:KIND*N``: the long tier of ``tokconf run --long``
  (:mod:`harness.generate.long_inputs`: spaces, tabs, ideographic spaces, newlines,
  letters, digits, CJK and mixed runs of 10^4 to 10^6 characters), where releases have
  panicked, overflowed their stack or slowed down quadratically;
- ``corpus:FILE#DOC@BYTE``: documents of user corpora (:mod:`harness.cases.corpus`).

Inputs are produced lazily; the same text from two sources is recorded once (its first
source).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from harness.cases.corpus import CorpusOptions, read_corpus

__all__ = ["Input", "case_inputs", "corpus_inputs", "generated_inputs", "long_inputs", "unique"]


@dataclass(frozen=True)
class Input:
    source: str
    text: str


def case_inputs(paths: Sequence[str] | None = None, *, max_long: int = 0) -> Iterator[Input]:
    """Every case's text; a case of the long tier only when ``--long`` asked for long inputs
    and it is no longer than the longest of them (``max_long``), as ``tokconf run`` leaves
    them out without ``--long``: a million-character case costs an old, quadratic release
    minutes per API path."""
    from harness.cases.loader import default_cases_dir, load_cases

    for case in load_cases(list(paths) if paths else [default_cases_dir()]):
        if case.long and len(case.text) > max_long:
            continue
        yield Input(f"case:{case.id}", case.text)


def generated_inputs(literals: Sequence[str], *, count: int, seed: int = 0) -> Iterator[Input]:
    from harness.generate.strategies import generate, hostile_atoms, hostile_text

    pool = list(dict.fromkeys([*hostile_atoms(sorted(literals)),
                               *generate(hostile_text(sorted(literals)), count=count, seed_value=seed)]))
    for n, text in enumerate(pool):
        yield Input(f"generated:{n}", text)


def long_inputs(sizes: Iterable[int] | None = None) -> Iterator[Input]:
    from harness.generate.long_inputs import LONG_KINDS, LONG_LENGTHS, long_text

    for size in sizes or LONG_LENGTHS:
        for kind in LONG_KINDS:
            yield Input(f"long:{kind}*{size}", long_text(kind, size).text())


def corpus_inputs(paths: Sequence[str], options: CorpusOptions = CorpusOptions()) -> Iterator[Input]:
    for document in read_corpus(paths, options):
        yield Input(f"corpus:{document.where}", document.text)


def unique(inputs: Iterable[Input]) -> Iterator[Input]:
    """Each text once (by hash, so a corpus is not held in memory)."""
    import hashlib

    seen: set[bytes] = set()
    for item in inputs:
        key = hashlib.blake2b(item.text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        if key in seen:
            continue
        seen.add(key)
        yield item
