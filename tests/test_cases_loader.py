"""The case loader: schema enforcement, error messages with file/line/field, matching rules."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from harness.cases import fixtures as fixtures_mod
from harness.cases import loader as cases_mod
from harness.cases.model import CHECKS, DecodeProbe, ExpectedError, ExpectedRound, Policy
from harness.cases.loader import (
    SCHEMA_PATH,
    CaseFileError,
    adapter_matches,
    case_applies_to,
    documented_for,
    expectation_for,
    load_case_file,
    load_cases,
    lookup,
)
from harness.outcomes import CATEGORIES


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def fails(path: Path | list[Path]) -> CaseFileError:
    with pytest.raises(CaseFileError) as info:
        load_cases(path if isinstance(path, list) else [path])
    return info.value


HEAD = "version: 1\ncases:\n"


# ------------------------------------------------------------------ the schema file


def test_schema_is_valid_draft_2020_12() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_schema_enums_match_the_case_model_and_outcomes() -> None:
    defs = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))["$defs"]
    assert tuple(defs["documented"]["properties"]["check"]["enum"]) == CHECKS
    assert set(defs["error"]["properties"]["category"]["enum"]) == CATEGORIES


# ------------------------------------------------------------------ good files


def test_full_case_is_built(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.yaml", HEAD + r"""
  - id: full
    text_escaped: 'a\tb\ud83d\x00\u2028 '
    encodings: [cl100k_base]
    adapters: ["tiktoken:*", "gpt2-encoder:{here}/data/x"]
    reference: "tiktoken:cl100k_base"
    policy: {allowed_special: ["<|endoftext|>"], disallowed_special: none}
    expect:
      ids: {cl100k_base: [1, 2]}
      errors: {"minbpe:*": {category: internal-error, type: builtins.AssertionError}}
      roundtrip: false
      pretokens_escaped: {cl100k_base: ['a', '\tb', '\ud83d\x00\u2028 ']}
      trace: {"minbpe:*": [{rank: 301, merged: 1}, {pair: [1, "x"]}]}
    decode:
      - {ids: [19526], text_escaped: '\ufffd'}
      - {ids: [19526], errors: strict, error: {category: invalid-utf8}}
      - {ids: [], bytes_hex: ""}
    tags: [figure, issue2]
    documented:
      - adapters: ["hf:*"]
        check: decode
        kind: "ok|raised:unknown-id"
        reason: "a reason long enough"
        source: "seeds/000"
""")
    (case,) = load_cases([path])
    assert case.id == "full"
    assert case.text == "a\tb\ud83d\x00\u2028 "
    assert case.file.endswith("ok.yaml") and case.line == 4
    assert case.encodings == ("cl100k_base",)
    assert case.adapters == ("tiktoken:*", f"gpt2-encoder:{tmp_path.resolve().as_posix()}/data/x")
    assert case.reference == "tiktoken:cl100k_base"
    assert case.policy == Policy(allowed_special=frozenset({"<|endoftext|>"}), disallowed_special=frozenset())
    assert case.expect_ids == {"cl100k_base": (1, 2)}
    assert case.expect_errors == {"minbpe:*": ExpectedError("internal-error", "builtins.AssertionError")}
    assert case.expect_roundtrip is False
    assert case.expect_pretokens == {"cl100k_base": ("a", "\tb", "\ud83d\x00\u2028 ")}
    assert case.expect_trace == {"minbpe:*": (ExpectedRound(rank=301, merged=1), ExpectedRound(pair=(1, "x")))}
    assert case.decode == (
        DecodeProbe(ids=(19526,), text="\ufffd"),
        DecodeProbe(ids=(19526,), errors="strict", error=ExpectedError("invalid-utf8")),
        DecodeProbe(ids=(), bytes_hex=""),
    )
    assert case.tags == ("figure", "issue2")
    assert case.documented[0].adapters == ("hf:*",) and case.documented[0].check == "decode"


def test_defaults_and_policy_words(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.yaml", HEAD + """
  - id: plain
    text: "x"
  - id: all
    text: "x"
    policy: {allowed_special: all, disallowed_special: all}
""")
    plain, every = load_cases([path])
    assert plain.policy == Policy(allowed_special=frozenset(), disallowed_special="all")
    assert (plain.encodings, plain.adapters, plain.expect_roundtrip, plain.decode) == (None, None, None, ())
    assert every.policy == Policy(allowed_special="all", disallowed_special="all")


def test_text_is_data_nothing_split_or_stripped(tmp_path: Path) -> None:
    # YAML's own double-quoted escapes are honoured; nothing is normalised afterwards
    path = write(tmp_path, "ok.yaml", HEAD + r"""
  - id: yaml-escapes
    text: "  a\r\nb\t  "
  - id: our-escapes
    text_escaped: '\x85\x1c\u3000\r\n  '
""")
    first, second = load_cases([path])
    assert first.text == "  a\r\nb\t  "
    assert second.text == "\x85\x1c\u3000\r\n  "


def test_anchors_and_aliases_work(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.yaml", HEAD + """
  - id: a
    text: "x"
    expect:
      trace:
        "minbpe:*": &rounds [{rank: 1}, {rank: 2}]
        "minbpe-fixed:*": *rounds
""")
    (case,) = load_cases([path])
    assert case.expect_trace["minbpe:*"] == case.expect_trace["minbpe-fixed:*"]


def test_folder_loads_yaml_files_in_name_order(tmp_path: Path) -> None:
    write(tmp_path, "b.yaml", HEAD + "  - {id: second, text: y}\n")
    write(tmp_path, "a.yml", HEAD + "  - {id: first, text: x}\n")
    write(tmp_path, "notes.txt", "not a case file")
    assert [c.id for c in load_cases([tmp_path])] == ["first", "second"]


# ------------------------------------------------------------------ malformed files


def test_bad_type_names_file_line_field_and_expectation(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    expect:
      ids:
        cl100k_base: [1, "2"]
""")
    error = fails(path)
    assert error.file.endswith("bad.yaml")
    assert error.line == 8
    assert error.field == "cases[0].expect.ids.cl100k_base[1]"
    assert error.expected == "an integer, found string '2'"
    assert str(error).endswith("bad.yaml:8: cases[0].expect.ids.cl100k_base[1] (case 'one'): expected an integer, found string '2'")


def test_unknown_key_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    expcet: {ids: {cl100k_base: [1]}}
""")
    error = fails(path)
    assert (error.line, error.field) == (6, "cases[0].expcet")
    assert "'expcet' is unknown" in error.expected and "expect" in error.expected


def test_a_file_that_passed_the_schema_is_not_checked_again_and_an_edit_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # harness/cases/schema_memo.py: a pass is kept by the hash of the text, so the second
    # load of the same text skips the schema; a changed text (here made invalid) is checked
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path / "cache"))
    checked: list[str] = []
    problems = cases_mod._schema_problems
    monkeypatch.setattr(cases_mod, "_schema_problems", lambda doc, file: checked.append(file) or problems(doc, file))
    good = HEAD + '  - id: one\n    text: "x"\n'
    path = write(tmp_path, "c.yaml", good)
    assert [c.id for c in load_cases([path])] == ["one"]
    assert [c.id for c in load_cases([path])] == ["one"]
    assert len(checked) == 1
    write(tmp_path, "c.yaml", good + "    expcet: {ids: {cl100k_base: [1]}}\n")
    error = fails(path)
    assert (error.line, error.field) == (5, "cases[0].expcet") and len(checked) == 2
    error = fails(path)  # a failure is never kept: checked, and reported, every time
    assert (error.line, error.field) == (5, "cases[0].expcet") and len(checked) == 3
    write(tmp_path, "c.yaml", good)
    assert [c.id for c in load_cases([path])] == ["one"] and len(checked) == 3


def test_loading_valid_cases_does_not_import_the_schema_library() -> None:
    """jsonschema is 80 ms of a process's start, and the reproduce commands (tokconf call,
    encode, decode) import the case loader but validate nothing."""
    import subprocess
    import sys

    probe = "import sys, harness.run.selection, harness.cases.loader; print('jsonschema' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_unknown_key_deep_inside(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    decode:
      - {ids: [1], text: "a", colour: red}
""")
    error = fails(path)
    assert (error.line, error.field) == (7, "cases[0].decode[0].colour")


def test_unknown_top_level_key_and_wrong_version(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "version: 2\ncase: []\ncases: []\n")
    error = fails(path)
    fields = {(p.line, p.field) for p in error.problems}
    assert fields == {(1, "version"), (2, "case")}
    assert any(p.expected == "1, found integer 2" for p in error.problems)


def test_missing_required_key(tmp_path: Path) -> None:
    error = fails(write(tmp_path, "bad.yaml", "cases: []\n"))
    assert (error.line, error.field) == (1, "version")
    assert "required" in error.expected


def test_duplicate_id_across_files_names_both_locations(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", HEAD + "  - id: same\n    text: x\n")
    second = write(tmp_path, "b.yaml", HEAD + "  - id: other\n    text: y\n  - id: same\n    text: z\n")
    error = fails([first, second])
    assert error.file.endswith("b.yaml") and error.line == 5
    assert error.expected.startswith("a unique id; 'same' is already used at ")
    assert error.expected.endswith("a.yaml:3")


def test_duplicate_id_within_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, "a.yaml", HEAD + "  - id: same\n    text: x\n  - id: same\n    text: z\n")
    with pytest.raises(CaseFileError) as info:
        load_case_file(path)
    assert (info.value.line, info.value.field) == (5, "cases[1].id")
    assert "already used at line 3" in info.value.expected


def test_duplicate_yaml_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "dup.yaml", HEAD + """
  - id: one
    text: "first"
    tags: [a]
    text: "second"
""")
    error = fails(path)
    assert (error.line, error.field) == (7, "cases[0].text")
    assert "'text' is repeated (first at line 5)" in error.expected


def test_duplicate_key_in_a_nested_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "dup.yaml", HEAD + """
  - id: one
    text: "x"
    expect:
      ids:
        cl100k_base: [1]
        cl100k_base: [2]
""")
    error = fails(path)
    assert (error.line, error.field) == (9, "cases[0].expect.ids.cl100k_base")


def test_both_text_and_text_escaped(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    text_escaped: 'x'
""")
    error = fails(path)
    assert (error.line, error.field) == (6, "cases[0].text_escaped")
    assert error.expected.startswith("exactly one of `text`")
    assert "found both 'text' and 'text_escaped'" in error.expected


def test_neither_text_nor_text_escaped(tmp_path: Path) -> None:
    error = fails(write(tmp_path, "bad.yaml", HEAD + "  - id: one\n    tags: [a]\n"))
    assert (error.line, error.field) == (3, "cases[0]")
    assert error.expected.endswith("found none of them")


def test_bad_escape(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + r"""
  - id: one
    text: "x"
  - id: two
    text_escaped: 'ok \q'
""")
    error = fails(path)
    assert (error.line, error.field) == (7, "cases[1].text_escaped")
    assert error.expected.startswith("valid backslash escapes: unknown escape \\q at position 3")
    assert "(case 'two')" in str(error)


def test_bad_escape_in_a_decode_probe(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + r"""
  - id: one
    text: ""
    encodings: [cl100k_base]
    decode:
      - {ids: [1], text_escaped: '\u12'}
""")
    error = fails(path)
    assert (error.line, error.field) == (8, "cases[0].decode[0].text_escaped")
    assert "needs exactly 4 hex digits" in error.expected


def test_unknown_check_name(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    documented:
      - adapters: ["hf:*"]
        check: idparity
        kind: "segmentation"
        reason: "a reason long enough"
        source: "seeds/000"
""")
    error = fails(path)
    assert (error.line, error.field) == (8, "cases[0].documented[0].check")
    assert error.expected.startswith("one of 'id-parity', 'expected',")
    assert error.expected.endswith("found string 'idparity'")


def test_unknown_error_category(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    expect:
      errors: {"hf:*": {category: boom}}
""")
    error = fails(path)
    assert (error.line, error.field) == (7, 'cases[0].expect.errors["hf:*"].category')


def test_bad_adapter_name_points_at_the_key(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    expect:
      ids:
        "has space": [1]
""")
    error = fails(path)
    assert (error.line, error.field) == (8, 'cases[0].expect.ids["has space"]')
    assert error.expected.startswith("an adapter or encoding name without whitespace")


def test_policy_value(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    policy: {allowed_special: some}
""")
    error = fails(path)
    assert error.field == "cases[0].policy.allowed_special"
    assert error.expected == "\"all\", \"none\" or a list of special-token literals, found string 'some'"


def test_decode_probe_needs_exactly_one_result(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: ""
    encodings: [cl100k_base]
    decode:
      - {ids: [1], text: "a", bytes_hex: "61"}
""")
    error = fails(path)
    assert error.field == "cases[0].decode[0].bytes_hex"
    assert "found both 'text' and 'bytes_hex'" in error.expected


def test_decode_probe_needs_an_encoding_or_adapters(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: ""
    decode:
      - {ids: [1], text: "a"}
""")
    error = fails(path)
    assert (error.line, error.field) == (6, "cases[0].decode")
    assert "IDs mean nothing without an encoding" in error.expected


def test_gpt2_is_not_an_encoding_name(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    encodings: [gpt2]
""")
    error = fails(path)
    assert (error.line, error.field) == (6, "cases[0].encodings[0]")
    assert error.expected.startswith("'r50k_base'")


def test_ids_and_error_for_the_same_key(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "x"
    expect:
      ids: {cl100k_base: [1]}
      errors: {cl100k_base: {category: unknown-token}}
""")
    error = fails(path)
    assert (error.line, error.field) == (8, "cases[0].expect.errors.cl100k_base")


def test_pretokens_must_concatenate_to_the_text(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + """
  - id: one
    text: "hello world"
    expect:
      pretokens_escaped: {cl100k_base: ["hello", "world"]}
""")
    error = fails(path)
    assert error.field == "cases[0].expect.pretokens_escaped.cl100k_base"
    assert "'helloworld'" in error.expected


def test_yaml_syntax_error_has_a_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + "  - id: one\n    text: [unclosed\n")
    error = fails(path)
    assert error.field == "(YAML syntax)" and error.line >= 4
    assert error.expected.startswith("valid YAML")


@pytest.mark.parametrize("char", ["\u2028", "\x85", "\u2029"])
def test_raw_yaml_line_breaks_are_refused(tmp_path: Path, char: str) -> None:
    path = write(tmp_path, "bad.yaml", HEAD + f'  - id: one\n    text: "a{char}b"\n')
    error = fails(path)
    assert error.line == 4
    assert f"\\u{ord(char):04x}" in error.expected and "text_escaped" in error.expected


def test_invalid_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(HEAD.encode() + b"  - id: one\n    text: \"\xff\"\n")
    error = fails(path)
    assert error.line == 4 and error.expected.startswith("UTF-8 text")


def test_missing_path(tmp_path: Path) -> None:
    error = fails(tmp_path / "nope.yaml")
    assert error.field == "(path)"


def test_every_problem_of_every_file_is_reported(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", HEAD + "  - id: one\n    text: 1\n")
    second = write(tmp_path, "b.yaml", HEAD + "  - id: two\n    text: x\n    oops: 1\n")
    error = fails([first, second])
    assert len(error.problems) == 2
    assert str(error).startswith("2 problems in case files:")


def test_default_folder_falls_back_to_the_installed_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing, installed, foreign = tmp_path / "checkout" / "cases", tmp_path / "data" / "cases", tmp_path / "other"
    installed.mkdir(parents=True)
    foreign.mkdir()
    (installed / "README.md").write_text("# tokconf case files\n", encoding="utf-8")
    (foreign / "README.md").write_text("# somebody else's cases\n", encoding="utf-8")
    write(installed, "x.yaml", HEAD + "  - {id: shipped, text: x}\n")
    monkeypatch.setattr(fixtures_mod, "_candidate_dirs", lambda: (missing, foreign, installed))
    assert cases_mod.default_cases_dir() == installed
    assert [c.id for c in load_cases()] == ["shipped"]
    monkeypatch.setattr(fixtures_mod, "_candidate_dirs", lambda: (missing, foreign))
    with pytest.raises(FileNotFoundError, match="pass case files or folders explicitly"):
        cases_mod.default_cases_dir()


# ------------------------------------------------------------------ matching rules


def test_adapter_patterns() -> None:
    assert adapter_matches("hf:*", "hf:cl100k_base")
    assert adapter_matches("simple-v1:*", "simple-v1")
    assert not adapter_matches("hf:*", "hf-json:x")
    assert not adapter_matches("minbpe:*", "minbpe-fixed:cl100k_base")
    assert adapter_matches("source:*:GPT4Tokenizer", "source:/x/minbpe/gpt4.py:GPT4Tokenizer")
    assert not adapter_matches("tiktoken:gpt2", "tiktoken:gpt2x")


def test_most_specific_expectation_wins(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.yaml", HEAD + """
  - id: one
    text: "<|endoftext|>"
    encodings: [cl100k_base]
    adapters: ["tiktoken:*", "hf:*", "minbpe:*", "minbpe-fixed:cl100k_base"]
    expect:
      errors:
        cl100k_base: {category: disallowed-special}
        "minbpe:*": {category: internal-error, type: builtins.AssertionError}
      ids:
        "hf:cl100k_base": [100257]
    documented:
      - {adapters: ["minbpe:*"], check: error-category, kind: "raised:internal-error|raised:disallowed-special", reason: "assert in upstream", source: "seeds/001"}
""")
    (case,) = load_cases([path])
    assert expectation_for(case, "tiktoken:cl100k_base", "cl100k_base") == ExpectedError("disallowed-special")
    assert expectation_for(case, "hf:cl100k_base", "cl100k_base") == (100257,)
    assert expectation_for(case, "minbpe:cl100k_base", "cl100k_base") == ExpectedError("internal-error", "builtins.AssertionError")
    assert expectation_for(case, "tiktoken:o200k_base", "o200k_base") is None
    assert case_applies_to(case, "minbpe-fixed:cl100k_base", "cl100k_base")
    assert not case_applies_to(case, "minbpe-fixed:o200k_base", "o200k_base")
    assert not case_applies_to(case, "bytebpe-ranks:cl100k_base", "cl100k_base")
    assert documented_for(case, "minbpe:cl100k_base", "error-category") is case.documented[0]
    assert documented_for(case, "minbpe:cl100k_base", "id-parity") is None
    assert documented_for(case, "minbpe-fixed:cl100k_base", "error-category") is None


def test_lookup_prefers_longer_patterns() -> None:
    table = {"source:*": 1, "source:*:GPT4Tokenizer": 2}
    assert lookup(table, "source:/x/gpt4.py:GPT4Tokenizer", "cl100k_base") == 2
    assert lookup(table, "source:/x/enc.py:get_encoder", "r50k_base") == 1
    assert lookup({}, "a:b", "c") is None


def test_empty_file_and_non_mapping_case(tmp_path: Path) -> None:
    assert fails(write(tmp_path, "empty.yaml", "")).expected == "a mapping, found nothing (null or an empty document)"
    error = fails(write(tmp_path, "bad.yaml", HEAD + "  - just a string\n"))
    assert (error.line, error.field, error.expected) == (3, "cases[0]", "a mapping, found string 'just a string'")
