"""The checks that judge the JavaScript packages, on real adapters with planted faults.

The JavaScript adapters run in Node (tests/test_node_env.py runs them); what they report
is judged by Python code, tested here with real tiktoken underneath:

- vocab-consistency: a bundled rank table whose hash is not the pinned one is reported as
  ``rank-table:<file>`` first, before any ID is compared;
- api-surface, gpt-tokenizer's family: a count that disagrees with ``len(encode(text))``,
  a decoder that disagrees with UTF-8 over the token bytes, and a chat template whose
  count is not the reference's count of the same chat (OpenAI's cookbook formula);
- api-surface across languages: the same path compared without native exception types.
"""

from __future__ import annotations

from harness.calls import Calls, InProcess
from harness.checks.api_surface import check_api_surface
from harness.checks.base import DEFAULT, Subject
from harness.checks.vocab import check_vocab
from harness.interface import Capabilities
from harness.outcomes import Outcome
from harness.vocab import VOCAB_FILES
from implementations.tiktoken import TiktokenAdapter

PINNED = VOCAB_FILES["cl100k_base.tiktoken"].sha256


def calls(adapter) -> Calls:
    return Calls(InProcess(adapter))


class Bundling(TiktokenAdapter):
    """tiktoken, declaring a bundled table with a given hash."""

    def __init__(self, digest: str) -> None:
        super().__init__("cl100k_base")
        self.name = "bundling:cl100k_base"
        self.vocabulary = (("cl100k_base.tiktoken", digest),)


def test_a_bundled_table_with_the_pinned_hash_passes():
    report = check_vocab(calls(Bundling(PINNED)), calls(TiktokenAdapter("cl100k_base")), max_findings=1)
    assert not [f for f in report.findings if f.kind.startswith("rank-table")]


def test_another_bundled_table_is_reported_as_such_first():
    report = check_vocab(calls(Bundling("0" * 64)), calls(TiktokenAdapter("cl100k_base")), max_findings=1)
    first = report.findings[0]
    assert first.kind == "rank-table:cl100k_base.tiktoken"
    assert PINNED in first.detail and "0" * 64 in first.detail


class Helpers(TiktokenAdapter):
    """tiktoken behind gpt-tokenizer's surface paths, with faults planted on request."""

    capabilities = Capabilities(api_surface="gpt-tokenizer")

    def __init__(self, *, count_off: int = 0, chat_extra: int = 0, drop_decoded: bool = False) -> None:
        super().__init__("cl100k_base")
        self.name = "helpers:cl100k_base"
        self.language = "JavaScript"
        self.count_off, self.chat_extra, self.drop_decoded = count_off, chat_extra, drop_decoded

    def api_surface(self, text):
        enc = self.native
        ids = tuple(enc.encode(text, disallowed_special=()))
        rows = [("encode[default]", Outcome.ok(tuple(enc.encode(text)))), ("encode[ordinary]", Outcome.ok(ids)),
                ("countTokens[ordinary]", Outcome.ok(len(ids) + self.count_off)),
                ("isWithinTokenLimit[ordinary](n)", Outcome.ok(len(ids))),
                ("isWithinTokenLimit[ordinary](n-1)", Outcome.ok(False)),
                ("encodeChat[user]", Outcome.ok((1,) * (len(enc.encode(text)) + 7 + self.chat_extra))),
                ("decode_bytes", Outcome.ok(enc.decode_bytes(list(ids)))),
                ("decodeGenerator", Outcome.ok(enc.decode(list(ids))[1 if self.drop_decoded else 0:]))]
        return rows


def judge(adapter, text: str):
    reference = calls(TiktokenAdapter("cl100k_base"))
    return check_api_surface(Subject(text, DEFAULT, calls(adapter), reference))


def test_consistent_helpers_agree():
    assert judge(Helpers(), "hello world") == "agree"


def test_a_count_that_is_not_the_length_of_encode_is_a_divergence():
    finding = judge(Helpers(count_off=1), "hello world")
    assert finding.kind == "inconsistent:countTokens[ordinary]~encode[ordinary]:ok|ok"


def test_a_decoder_that_is_not_utf8_over_the_bytes_is_a_divergence():
    finding = judge(Helpers(drop_decoded=True), "\ufeffhello")
    assert finding.kind == "inconsistent:decodeGenerator~decode_bytes:ok|ok"


def test_a_chat_count_is_compared_with_the_reference_cookbook_count():
    finding = judge(Helpers(chat_extra=1), "hello world")
    assert finding.kind == "count:encodeChat[user]:ok|ok"
    # 3 per message + "user" (1 token) + content (2) + 3 to prime the reply = 9
    assert dict(finding.outcomes)["num_tokens_from_messages(tiktoken:cl100k_base)"] == Outcome.ok(9)


def test_across_languages_only_categories_of_failures_are_compared():
    class WasmLike(TiktokenAdapter):
        capabilities = Capabilities(api_surface="tiktoken")
        language = "JavaScript (WASM)"

        def api_surface(self, text):
            rows = super().api_surface(text)
            return [(p, Outcome.raised(o.category, "js.Error", "x") if o.kind == "raised" else o) for p, o in rows]

    adapter = WasmLike("cl100k_base")
    adapter.name = "wasm-like:cl100k_base"
    assert judge(adapter, "a<|endoftext|>") == "agree"
    adapter.language = "Python"  # the same native-type change within one language is a change
    assert judge(adapter, "a<|endoftext|>").kind.startswith("changed:")
