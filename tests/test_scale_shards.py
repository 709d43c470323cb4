"""Shards of a corpus and the progress file of a resumable run (no Dask needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases.corpus import CorpusOptions, corpus_case_batches
from harness.cli.selection_args import SelectionArgs
from harness.scale.progress_store import ProgressStore, ResumeError, fingerprint
from harness.scale.shards import plan_shards


def _corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "c.txt"
    corpus.write_text("α\n\nb\n\nc\u2028d\n\ne\n\nf", encoding="utf-8")
    return corpus


def test_shards_name_their_first_and_last_document_and_carry_the_corpus_cases(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    options = CorpusOptions(split="blank-line")
    shards = list(plan_shards([corpus], options, size=2))
    assert [(s.id, s.first, s.last, s.documents, s.bytes) for s in shards] == [
        (0, f"{corpus}#0@0", f"{corpus}#1@4", 2, 3),
        (1, f"{corpus}#2@7", f"{corpus}#3@14", 2, 6),  # U+2028 is not a line end
        (2, f"{corpus}#4@17", f"{corpus}#4@17", 1, 1),
    ]
    assert [c for s in shards for c in s.cases] == [c for b in corpus_case_batches([corpus], options) for c in b]
    assert shards[1].without_cases().cases == () and shards[1].where == \
        f"shard 1 (2 documents, {corpus}#2@7 to {corpus}#3@14)"
    with pytest.raises(ValueError, match="at least 1"):
        list(plan_shards([corpus], options, size=0))


def test_progress_resumes_only_its_own_run(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    key = fingerprint(corpus=[str(corpus)], options=CorpusOptions(), shard_size=2,
                      selection=SelectionArgs(impl=("tiktoken:cl100k_base",)))
    store = ProgressStore(tmp_path / "run")
    store.start(key, resume=False)
    store.record(1, {"delta": "one"})
    store.record_lost(2, "shard 2: lost")
    again = ProgressStore(tmp_path / "run")
    again.start(key, resume=True)
    assert again.done == {1: "00000001.pickle"} and again.load(1) == {"delta": "one"}
    other = fingerprint(corpus=[str(corpus)], options=CorpusOptions(), shard_size=3,
                        selection=SelectionArgs(impl=("tiktoken:cl100k_base",)))
    with pytest.raises(ResumeError, match="differs in: shard_size"):
        ProgressStore(tmp_path / "run").start(other, resume=True)
    corpus.write_text("changed", encoding="utf-8")
    changed = fingerprint(corpus=[str(corpus)], options=CorpusOptions(), shard_size=2,
                          selection=SelectionArgs(impl=("tiktoken:cl100k_base",)))
    with pytest.raises(ResumeError, match="differs in: corpus"):
        ProgressStore(tmp_path / "run").start(changed, resume=True)
