"""The api-surface check: tiktoken's and tokenizers' whole public API on one input, exact;
paths that disagree within a release, and paths that change between releases (planted
in tests/surface_adapters.py over real tiktoken)."""

from __future__ import annotations


from harness.calls import Calls, InProcess, surface_from_data
from harness.checks.api_surface import check_api_surface, surface_of
from harness.checks.base import AGREE, ORDINARY, UNSUPPORTED, Finding, Subject
from harness.registry import default_registry
from harness.worker.client import WorkerExecutor
from harness.worker.setup import Isolation
from tests import surface_adapters

TEXT = "hi <|endoftext|>\u00e9\ud800"


def calls(name: str) -> Calls:
    return Calls(InProcess(default_registry().get(name)))


def planted(cls) -> Calls:
    return Calls(InProcess(cls()))


def test_tiktoken_surface_is_every_path_exactly() -> None:
    s = surface_of(calls("tiktoken:cl100k_base"), TEXT)
    assert s is not None
    ids = (6151, 220, 100257, 978, 5809)
    assert (s["encode[default]"].category, s["encode[default]"].native_type) == ("disallowed-special", "builtins.ValueError")
    assert s["encode[all]"].value == s["encode[one]"].value == ids
    assert s["encode_batch[all]"].value == (ids,)
    assert s["encode_ordinary"].value == s["encode[ordinary]"].value == (6151, 83739, 8862, 728, 428, 91, 29, 978, 5809)
    # the raw byte path sees the surrogate's own three bytes, not U+FFFD
    assert s["_encode_bytes"].value == (6151, 83739, 8862, 728, 428, 91, 29, 978, 169, 64319)
    assert s["encode_single_token[text]"].category == "unencodable-text"
    assert s["decode_bytes"].value == b"hi <|endoftext|>\xc3\xa9\xef\xbf\xbd"
    assert s["decode_tokens_bytes"].value == (b"hi <|endoftext|>\xc3\xa9\xef\xbf\xbd", (2, 1, 13, 2, 3))
    assert s["decode_with_offsets"].value == ("hi <|endoftext|>\u00e9\ufffd", (0, 2, 3, 16, 17))
    assert s["encode_single_token[pieces]"].value == ids
    # numpy is a dependency (issue 22): encode_to_numpy is walked, and it does not repair a
    # lone surrogate as encode does (cases/tiktoken-numpy.yaml); each policy's path is a
    # symptom of its own, every one kept, the first naming the finding
    assert (s["encode_to_numpy[all]"].category, s["encode_to_numpy[all]"].native_type) == (
        "unencodable-text", "builtins.UnicodeEncodeError")
    found = check_api_surface(Subject(TEXT, ORDINARY, calls("tiktoken:cl100k_base"), calls("tiktoken:cl100k_base")))
    assert isinstance(found, Finding)
    assert found.kinds == tuple(f"inconsistent:encode_to_numpy[{p}]~encode[{p}]:raised:unencodable-text|ok"
                                for p in ("all", "ordinary", "one"))
    assert found.kind == found.kinds[0] and [f.kind for f in found.each_kind()] == list(found.kinds)
    assert check_api_surface(Subject("hi", ORDINARY, calls("tiktoken:cl100k_base"), calls("tiktoken:cl100k_base"))) == AGREE


def test_tokenizers_surface_has_offsets_tokens_and_both_special_switches() -> None:
    s = surface_of(calls("hf:gpt2"), "hi <|endoftext|> x")
    assert s is not None
    assert s["encode[plain]"].value == (5303, 220, 50256, 2124)
    assert s["offsets[plain]"].value == ((0, 2), (2, 3), (3, 16), (16, 18))
    assert s["tokens[plain]"].value == ("hi", "Ġ", "<|endoftext|>", "Ġx")
    assert s["encode[ordinary]"].value == (5303, 1279, 91, 437, 1659, 5239, 91, 29, 2124)
    assert s["decode[skip]"].value == "hi  x"
    hf = calls("hf:gpt2")
    assert check_api_surface(Subject("hi <|endoftext|> x", ORDINARY, hf, calls("tiktoken:gpt2"))) == AGREE


def test_adapters_without_a_surface_are_unsupported() -> None:
    minbpe = calls("minbpe:cl100k_base")
    assert check_api_surface(Subject("abc", ORDINARY, minbpe, calls("tiktoken:cl100k_base"))) == UNSUPPORTED


def test_a_release_whose_paths_disagree_is_a_divergence_of_that_release() -> None:
    bad = planted(surface_adapters.BatchDrift)
    result = check_api_surface(Subject("hello world", ORDINARY, bad, calls("tiktoken:cl100k_base")))
    assert isinstance(result, Finding)
    assert result.kind == "inconsistent:encode_batch[all]~encode[all]:ok|ok"
    # the same fault is also a change against the reference release
    assert "encode_batch[all]: [(15339,)] where tiktoken:cl100k_base gives [(15339, 1917)]" in result.detail


def test_a_changed_native_type_is_a_change_between_releases() -> None:
    bad = planted(surface_adapters.ErrorTypeChanged)
    reference = calls("tiktoken:cl100k_base")
    assert check_api_surface(Subject("hello", ORDINARY, bad, reference)) == AGREE  # one token: no error at all
    result = check_api_surface(Subject("hello world", ORDINARY, bad, reference))
    assert isinstance(result, Finding)
    assert result.kind == ("changed:encode_single_token[text]:raised:unknown-token(builtins.ValueError)|"
                           "raised:unknown-token(builtins.KeyError)")


def test_a_surface_crosses_the_worker_boundary_unchanged() -> None:
    here = calls("tiktoken:cl100k_base").api_surface(TEXT)
    worker = WorkerExecutor("tiktoken:cl100k_base", Isolation(mode="all"))
    try:
        there = Calls(worker).api_surface(TEXT)
    finally:
        worker.close()
    assert surface_from_data(there.value) == surface_from_data(here.value)


class _CountedWalks(surface_adapters.BatchDrift):
    """BatchDrift, counting the texts its surface is walked on."""

    def __init__(self) -> None:
        super().__init__()
        self.walked: list[str] = []

    def api_surface(self, text: str) -> list:
        self.walked.append(text)
        return super().api_surface(text)


def test_short_texts_are_walked_once_across_inputs_and_a_shrink_still_finds_the_smallest() -> None:
    from harness.calls import LASTING_TEXT_LIMIT
    from harness.generate.minimise import shrink_finding

    adapter = _CountedWalks()
    bad, reference = Calls(InProcess(adapter)), calls("tiktoken:cl100k_base")
    long_text = "x" * (LASTING_TEXT_LIMIT + 1)
    for _ in range(2):
        bad.api_surface("hello world")
        bad.api_surface(long_text)
        bad.reset()
    # a walk is thirty library calls: a short text is kept across inputs, a long one is not
    assert adapter.walked == ["hello world", long_text, long_text]

    adapter.walked.clear()
    for text in ("say hello world", "hello world, twice"):
        finding = check_api_surface(Subject(text, ORDINARY, bad, reference))
        assert isinstance(finding, Finding) and finding.kind == "inconsistent:encode_batch[all]~encode[all]:ok|ok"
        shrunk = shrink_finding(finding, bad, reference, ORDINARY)
        # the fault drops the last ID of a non-empty list: one letter shows it
        assert (shrunk.text, shrunk.kind) == ("a", finding.kind)
    # both shrinks asked "", "a", "d"...: each short text was walked once
    assert len(adapter.walked) == len(set(adapter.walked))
