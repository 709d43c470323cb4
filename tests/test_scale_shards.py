"""Shards of a corpus and the progress file of a resumable run (no Dask needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases.corpus import CorpusOptions, corpus_case_batches
from harness.cli.selection_args import SelectionArgs
from harness.scale.progress_store import ProgressStore, ResumeError, fingerprint
from harness.scale.shards import SourceChanged, plan_shards


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


def test_a_shard_by_reference_reads_the_documents_a_shard_of_text_carries(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = Path("corpus")  # relative, as a user names it: the cases keep that name
    folder.mkdir()
    (folder / "a.txt").write_text("α\n\nb\r\n \t\r\nc\u2028d\n\ne\n\n\n\nf\n", encoding="utf-8")
    (folder / "b.jsonl").write_text('{"text": "x\\ud800"}\n\n{"text": "y"}\n{"text": "z\\n"}\n', encoding="utf-8")
    options = CorpusOptions(split="blank-line")
    sent = list(plan_shards([folder], options, size=2))
    named = list(plan_shards([folder], options, size=2, by_reference=True))
    monkeypatch.chdir(folder)  # a worker's working folder is not the client's
    assert [s.without_cases() for s in named] == [s.without_cases() for s in sent]
    assert [c for s in named for c in s.read_cases()] == [c for s in sent for c in s.cases]
    assert len([c for s in named for c in s.read_cases()]) == 8
    # the shard of a.txt#4 and b.jsonl#0 spans two files: it carries its text
    assert [(s.source is None, len(s.cases)) for s in named] == [(False, 0), (False, 0), (True, 2), (False, 0)]
    assert named[3].source.offset == len('{"text": "x\\ud800"}\n\n'.encode()) and named[3].source.number == 1
    (tmp_path / folder / "b.jsonl").write_text('{"text": "changed"}\n', encoding="utf-8")
    with pytest.raises(SourceChanged, match="not the file the client read"):
        named[3].read_cases()


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
