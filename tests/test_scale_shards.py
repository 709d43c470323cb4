"""Shards of a corpus and the progress file of a resumable run (no Dask needed)."""

from __future__ import annotations

import gzip
import json
import pickle
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.cases.corpus import CorpusOptions, corpus_case_batches
from harness.cases.model import Policy
from harness.cli.selection_args import SelectionArgs
from harness.outcomes import Outcome
from harness.run.deltas import Delta
from harness.scale.progress_store import ProgressStore, ResumeError, fingerprint
from harness.scale.shard_task import ShardResult
from harness.scale.shards import SourceChanged, plan_shards


def _comparable(result: ShardResult) -> ShardResult:
    return replace(result, delta=replace(result.delta, out_of_domain=None))  # DomainTally has no ==


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


def _started_store(tmp_path: Path) -> tuple[Path, dict, ProgressStore, Any]:
    """A corpus, its run's fingerprint, a fresh progress store and the corpus's first shard."""
    corpus = _corpus(tmp_path)
    key = fingerprint(corpus=[str(corpus)], options=CorpusOptions(), shard_size=2,
                      selection=SelectionArgs(impl=("tiktoken:cl100k_base",)))
    store = ProgressStore(tmp_path / "run")
    store.start(key, resume=False)
    return corpus, key, store, next(iter(plan_shards([corpus], CorpusOptions(), size=2))).without_cases()


def test_progress_resumes_only_its_own_run(tmp_path: Path) -> None:
    corpus, key, store, shard = _started_store(tmp_path)
    result = ShardResult(shard, Delta(notes=["one"]), 1.5, "w")
    store.record(1, result)
    store.record_lost(2, "shard 2: lost")
    again = ProgressStore(tmp_path / "run")
    again.start(key, resume=True)
    assert again.done == {1: "00000001.pickle"} and _comparable(again.load(1)) == _comparable(result)
    other = fingerprint(corpus=[str(corpus)], options=CorpusOptions(), shard_size=3,
                        selection=SelectionArgs(impl=("tiktoken:cl100k_base",)))
    with pytest.raises(ResumeError, match="differs in: shard_size"):
        ProgressStore(tmp_path / "run").start(other, resume=True)
    corpus.write_text("changed", encoding="utf-8")
    changed = fingerprint(corpus=[str(corpus)], options=CorpusOptions(), shard_size=2,
                          selection=SelectionArgs(impl=("tiktoken:cl100k_base",)))
    with pytest.raises(ResumeError, match="differs in: corpus"):
        ProgressStore(tmp_path / "run").start(changed, resume=True)


def test_a_shards_outcomes_are_stored_as_outcome_records_not_pickled(tmp_path: Path) -> None:
    # issue 25: a shard's bulk, its documents' outcomes, is compact JSON lines (the
    # outcome log's records); the pickle beside it holds only the counts and findings
    _, _, store, shard = _started_store(tmp_path)
    special = Policy(allowed_special=frozenset({"<|endoftext|>"}), disallowed_special=frozenset())
    inputs = {
        ("α\ud800", Policy()): {"origin": "corpus", "case": "c#0",
                                 "outcomes": {"t": Outcome.ok([34369, 5809]), "h": Outcome.ok([34369, 5809])}},
        ("<|endoftext|>", special): {"origin": "corpus", "case": "c#1",
                                     "outcomes": {"t": Outcome.ok([100257]),
                                                  "h": Outcome.raised("disallowed-special", "builtins.ValueError",
                                                                      "a message the log never shows")}},
    }
    store.record(0, ShardResult(shard, Delta(inputs=inputs, notes=["n"]), 2.0, "w"))
    with open(tmp_path / "run" / "shards" / "00000000.pickle", "rb") as handle:
        assert pickle.load(handle).delta.inputs == {}
    with gzip.open(tmp_path / "run" / "shards" / "00000000.outcomes.jsonl.gz", "rb") as handle:
        lines = [json.loads(line) for line in handle]
    assert lines[0] == {"policies": {"allowed={} disallowed=all": {"policy": [[], "all"]},
                                     "allowed={<|endoftext|>} disallowed={}": {"policy": [["<|endoftext|>"], []]}}}
    assert lines[2] == {"text": "<|endoftext|>", "policy": "allowed={<|endoftext|>} disallowed={}", "origin": "corpus",
                        "case": "c#1", "outcomes": {"h": {"raised": ["disallowed-special", "builtins.ValueError"]},
                                                   "t": {"ok": [100257]}}}
    loaded = store.load(0)
    assert list(loaded.delta.inputs) == list(inputs)  # the same keys (Policy objects), in order
    assert loaded.delta.inputs[("α\ud800", Policy())] == inputs[("α\ud800", Policy())]
    assert loaded.delta.inputs[("<|endoftext|>", special)]["outcomes"]["h"] == Outcome(
        kind="raised", category="disallowed-special", native_type="builtins.ValueError")
    assert loaded.delta.notes == ["n"] and loaded.seconds == 2.0
