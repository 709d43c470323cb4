"""batch, pretokenize-coverage, and vocab-consistency."""

from __future__ import annotations

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
