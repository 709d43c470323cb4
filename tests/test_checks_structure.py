"""batch, pretokenize-coverage, and vocab-consistency."""

from __future__ import annotations

from typing import Any

import pytest

from harness.checks.base import AGREE, UNSUPPORTED, Finding
from harness.checks import ADAPTER_CHECKS, CHECK_FUNCTIONS, TEXT_CHECKS
from harness.checks.structure import batch_texts
from harness.checks.vocab import check_vocab, ordinary_end, probe_ids
from harness.cases.model import CHECKS
from tests.wrong_adapters import DropLastMerge, ToyClosed, toy
from tests.check_helpers import REF, calls, run



def test_every_check_name_has_code() -> None:
    assert set(CHECK_FUNCTIONS) | set(ADAPTER_CHECKS) == set(CHECKS)
    assert TEXT_CHECKS == tuple(c for c in CHECKS if c != "vocab-consistency")


def test_batch() -> None:
    assert batch_texts("abcd") == ("abcd", "ab", "")
    assert run("batch", REF, "héllo<|x|>") == AGREE
    finding = run("batch", calls(toy("bad-batch")), "abcd")
    assert isinstance(finding, Finding) and finding.kind == "ids"
    assert "encode_batch gives [97, 98, 99], encode gives [97, 98, 99, 100]" in finding.detail
    assert run("batch", calls(ToyClosed()), "ab") == UNSUPPORTED


def test_pretokenize_coverage() -> None:
    assert run("pretokenize-coverage", REF, "a  b\r\n\ud800") == AGREE
    finding = run("pretokenize-coverage", calls(toy("lossy-pretokenize")), "a  b")
    assert isinstance(finding, Finding) and finding.kind == "coverage"
    assert "2 chunks join to 'ab'" in finding.detail
    assert run("pretokenize-coverage", calls(ToyClosed()), "ab") == UNSUPPORTED


def test_ordinary_end_and_probes_of_the_toy() -> None:
    assert ordinary_end(REF) == 258
    ids = probe_ids(REF)
    assert ids[:256] == list(range(256)) and ids[-2:] == [256, 257]


def test_vocab_of_a_sound_adapter_has_no_findings() -> None:
    report = check_vocab(calls(toy(name="toy:twin")), REF)
    assert report.findings == []
    assert report.inputs == 2 + 258


def test_vocab_special_findings() -> None:
    dup = check_vocab(calls(toy("dup-special")), REF).sorted_findings()
    assert [f.kind for f in dup][:1] == ["special-duplicate"]
    assert "'<|x|>' and '<|yy|>' share ID 256" in dup[0].detail
    bad = check_vocab(calls(toy("bad-special-decode")), REF).sorted_findings()
    assert {f.kind for f in bad} == {"special-decode"}
    raising = check_vocab(calls(toy("decode-raises")), REF).sorted_findings()
    assert {f.kind for f in raising} == {"special-decode:raised:unknown-id"}
    eager = check_vocab(calls(toy("always-special")), REF).sorted_findings()
    assert [f.kind for f in eager] == ["special-ordinary", "special-ordinary"]


def test_vocab_finds_a_lost_last_merge_by_the_token_it_no_longer_makes() -> None:
    from implementations.tiktoken import TiktokenAdapter

    report = check_vocab(calls(DropLastMerge()), calls(TiktokenAdapter("cl100k_base")))
    kinds = {(f.kind, f.text) for f in report.findings}
    assert kinds == {("segmentation", " Conveyor")}
    assert report.inputs > 800


def test_pretokenize_chunks_as_utf16_holds_them_agree_and_lost_surrogates_do_not() -> None:
    """A JavaScript adapter gives its chunks back as UTF-16 strings: the code points
    U+D800 U+DDDA of a Python str are one character there. That is the same text; a chunk
    that loses the lone surrogate is not."""
    from tests.wrong_adapters import _Wrapped

    class Utf16(_Wrapped):
        name = "test:utf16-chunks"

        def pretokenize(self, text: str) -> list[str]:
            return [text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")]

    class Dropping(Utf16):
        name = "test:drops-lone-surrogate"

        def pretokenize(self, text: str) -> list[str]:
            return [chunk.replace("\ud8dd", "") for chunk in super().pretokenize(text)]

    text = "\ud8dd\ud800\uddda"
    assert run("pretokenize-coverage", calls(Utf16()), text) == AGREE
    finding = run("pretokenize-coverage", calls(Dropping()), text)
    assert isinstance(finding, Finding) and finding.kind == "coverage"


#: a few inputs of one task; tiktoken's default policy refuses the last one
TASK_TEXTS = ("hello world", "  trailing   spaces  ", "数字 12345 678", "ab<|endoftext|>")


def _judged(calls_: Any, reference: Any, texts: tuple[str, ...], *, ahead: bool) -> list[tuple[str, ...]]:
    from harness.checks import run_text_check
    from harness.checks.base import DEFAULT, ORDINARY, Subject
    from harness.run.prefetch import prefetch

    # each text under both policies, as a task of cases would hold them
    inputs = [(text, policy) for policy in (ORDINARY, DEFAULT) for text in texts]
    if ahead:
        prefetch((calls_, reference, text, policy) for text, policy in inputs)
    out = []
    for text, policy in inputs:
        calls_.reset()
        result = run_text_check("batch", Subject(text, policy, calls_, reference))
        out.append((result.kind, result.detail, repr(result.outcomes)) if isinstance(result, Finding) else (str(result),))
    return out


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "worker"])
@pytest.mark.parametrize("name", ["tiktoken:cl100k_base", "selftest:batch-reversed", "selftest:batch-drops-empty-texts"])
def test_a_tasks_batches_are_asked_in_one_call_and_each_finding_is_its_own_batchs(name: str, isolated: bool) -> None:
    """tiktoken starts a thread pool per ``encode_batch``: a task's batches are asked in one
    call (harness.run.prefetch.prefetch_batches). That call only screens: a batch whose
    share disagrees is asked alone, so each finding is the one its own batch gives (a
    reversed merged call would show another text's IDs), and the verdicts are those of
    asking each batch alone."""
    from harness.calls import Calls, InProcess
    from harness.registry import default_registry
    from harness.worker.client import WorkerExecutor
    from harness.worker.setup import Isolation, WorkerSetup

    registry = default_registry(plugins=["harness.selftest.score:family"])
    reference = Calls(InProcess(registry.get("tiktoken:cl100k_base")))
    executor: Any = (WorkerExecutor(name, Isolation(mode="all", setup=WorkerSetup.from_registry(registry)))
                     if isolated else InProcess(registry.get(name)))
    batches: list[int] = []
    call = executor.call

    def counting(op: str, *args: Any) -> Any:
        if op == "encode_batch":
            batches.append(len(args[0]))
        return call(op, *args)

    try:
        alone = _judged(Calls(executor), reference, TASK_TEXTS, ahead=False)
        executor.call = counting
        assert _judged(Calls(executor), reference, TASK_TEXTS, ahead=True) == alone
    finally:
        getattr(executor, "close", lambda: None)()
    if name == "tiktoken:cl100k_base":
        assert [k for k, *_ in alone] == ["agree"] * 8
        # one call per policy; under the default one the refused text fails the call, and
        # each batch is asked alone (from a worker, in the prefetch's one round trip)
        assert batches == [12, 12] + ([] if isolated else [3] * 4)
    elif name == "selftest:batch-reversed":
        assert [k for k, *_ in alone[:3]] == ["ids"] * 3
        assert "text 0 of the batch: encode_batch gives []" in alone[0][1]  # its own batch, reversed
    else:
        assert [k for k, *_ in alone[:3]] == ["length"] * 3
