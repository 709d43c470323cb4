"""parity.json schema_version 2: the shipped JSON Schema, cross-references, clear errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import jsonschema
import pytest

from harness.outcomes import CATEGORIES
from harness.report.schema import (
    STATUSES,
    ParityValidationError,
    load_parity,
    parity_schema,
    validate_parity,
)

FIXTURES = Path(__file__).parent / "data" / "parity"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="ascii"))


def test_schema_is_a_valid_2020_12_schema() -> None:
    schema = parity_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"]["enum"] == [2, 3]


def test_schema_enums_match_the_code() -> None:
    defs = parity_schema()["$defs"]
    raised = next(s for s in defs["outcome"]["oneOf"] if s["properties"]["kind"] == {"const": "raised"})
    assert set(raised["properties"]["category"]["enum"]) == set(CATEGORIES)
    assert defs["cell"]["properties"]["status"]["enum"] == list(STATUSES)
    # not-run came with schema_version 3: a version 2 summary has no such key
    assert parity_schema()["properties"]["summary"]["required"] == [s for s in STATUSES if s != "not-run"]
    assert list(parity_schema()["properties"]["summary"]["properties"]) == list(STATUSES)
    assert defs["divergence"]["properties"]["status"]["enum"] == ["documented", "unexpected", "stale"]


@pytest.mark.parametrize("name", ["basic", "upgraded", "hostile"])
def test_fixtures_validate(name: str) -> None:
    validate_parity(fixture(name))
    assert load_parity(FIXTURES / f"{name}.json") == fixture(name)


def test_hostile_fixture_is_ascii_json_holding_a_lone_surrogate() -> None:
    raw = (FIXTURES / "hostile.json").read_bytes()
    raw.decode("ascii")  # written with ensure_ascii=True
    assert b'"text": "x\\ud800y"' in raw
    data = load_parity(FIXTURES / "hostile.json")
    texts = [d["input"]["text"] for d in data["divergences"]]
    assert "x\ud800y" in texts
    assert "abc\u202edef\u2066gh" in texts
    [surrogate] = [d for d in data["divergences"] if d["input"]["text"] == "x\ud800y"]
    assert surrogate["input"]["escaped"] == "x\\ud800y"
    # a round trip through json keeps the lone surrogate exactly
    assert json.loads(json.dumps(data, ensure_ascii=True)) == data


Mutation = Callable[[dict[str, Any]], None]

SHAPE_ERRORS: list[tuple[str, Mutation, str, str]] = [
    ("missing key", lambda d: d["environment"]["hypothesis"].pop("seed"),
     "$.environment.hypothesis", "missing required key(s) 'seed'"),
    ("unknown top-level key", lambda d: d.__setitem__("extra", 1),
     "$", "unknown key(s) 'extra'; allowed: adapters, checks, coverage, divergences, environment"),
    ("bad divergence status", lambda d: d["divergences"][0].__setitem__("status", "weird"),
     "$.divergences[0].status", "found 'weird', expected one of 'documented', 'unexpected', 'stale'"),
    ("bad cell status", lambda d: d["matrix"]["tiktoken:r50k_base"]["id-parity"].__setitem__("status", "meh"),
     "$.matrix['tiktoken:r50k_base']['id-parity'].status", "found 'meh', expected one of 'agree', "),
    ("bad hash", lambda d: d["environment"]["vocabularies"].__setitem__("cl100k_base.tiktoken", "XYZ"),
     "$.environment.vocabularies['cl100k_base.tiktoken']",
     "found 'XYZ', which does not match ^[0-9a-f]{64}$ (expected: a SHA-256 digest: 64 lowercase hex digits)"),
    ("bad timestamp", lambda d: d["run"].__setitem__("started", "yesterday"),
     "$.run.started", "(expected: ISO 8601 date and time with a zone, e.g. 2026-11-30T07:15:00Z)"),
    ("unavailable without reason", lambda d: d["adapters"][0].__setitem__("status", "unavailable"),
     "$.adapters[0].reason", "found null, expected type string (expected: an unavailable adapter needs a reason)"),
    ("unknown error category", lambda d: d["divergences"][0]["outcomes"].__setitem__(
        "tiktoken:r50k_base", {"kind": "raised", "category": "boom"}),
     "$.divergences[0].outcomes['tiktoken:r50k_base'].category", "found 'boom', expected one of 'disallowed-special'"),
    ("outcome of no known shape", lambda d: d["divergences"][0]["outcomes"].__setitem__(
        "tiktoken:r50k_base", {"kind": "ok"}),
     "$.divergences[0].outcomes['tiktoken:r50k_base']", "(expected: Outcome.to_json(): ok with ids, bytes"),
    ("id that is not an anchor", lambda d: d["divergences"][0].__setitem__("id", "d 1"),
     "$.divergences[0].id", "letters, digits, '-' and '_' only"),
    ("wrong seed type", lambda d: d["environment"]["hypothesis"].__setitem__("seed", "abc"),
     "$.environment.hypothesis.seed", "found string 'abc', expected type ['integer', 'null']"),
    ("negative first difference", lambda d: d["divergences"][0].__setitem__("first_difference", -1),
     "$.divergences[0].first_difference", "-1 is less than the minimum of 0"),
    ("older schema", lambda d: d.__setitem__("schema_version", 1),
     "$.schema_version", "found 1, expected 2 or 3; this tokconf reads schema_version 2 and 3 only"),
]


@pytest.mark.parametrize("mutate,path,fragment", [e[1:] for e in SHAPE_ERRORS], ids=[e[0] for e in SHAPE_ERRORS])
def test_shape_errors_name_the_json_path_and_what_was_expected(mutate: Mutation, path: str, fragment: str) -> None:
    data = fixture("basic")
    mutate(data)
    with pytest.raises(ParityValidationError) as caught:
        validate_parity(data, source="run.json")
    assert caught.value.path == path
    assert fragment in caught.value.problem
    assert str(caught.value).startswith(f"run.json: invalid parity.json at {path}: ")


def _unlist(d: dict[str, Any]) -> None:
    d["matrix"]["wrong:ltr"]["id-parity"]["divergences"].remove("d0003")


def _dangling(d: dict[str, Any]) -> None:
    d["matrix"]["wrong:ltr"]["id-parity"]["divergences"].append("d9999")


REFERENCE_ERRORS: list[tuple[str, Mutation, str, str]] = [
    ("summary disagrees with matrix", lambda d: d["summary"].__setitem__("agree", 3),
     "$.summary.agree", "found 3, but the matrix has 55 cell(s) with status 'agree'"),
    ("cell names a missing divergence", _dangling,
     "$.matrix['wrong:ltr']['id-parity'].divergences[2]", "names divergence 'd9999', which is not in $.divergences"),
    ("divergence not listed by its cell", _unlist,
     "$.divergences[4].id", "divergence 'd0003' is not listed by its matrix cell"),
    ("duplicate divergence id", lambda d: d["divergences"][1].__setitem__("id", "d0001"),
     "$.divergences[1].id", "divergence id 'd0001' is used twice"),
    ("duplicate adapter", lambda d: d["adapters"][1].__setitem__("name", "tiktoken:r50k_base"),
     "$.adapters[1].name", "adapter 'tiktoken:r50k_base' is listed twice"),
    ("matrix row for unknown adapter", lambda d: d["matrix"].__setitem__("ghost:x", {}),
     "$.matrix['ghost:x']", "matrix row for an adapter missing from $.adapters"),
    ("matrix column for unknown check", lambda d: d["checks"].remove("vocab-consistency"),
     "$.matrix['tiktoken:r50k_base']['vocab-consistency']", "matrix column for a check missing from $.checks"),
    ("divergence in the wrong cell", lambda d: (d["divergences"][0].__setitem__("check", "batch"),
                                                d["divergences"][0]["symptoms"][0].__setitem__("check", "batch")),
     "$.matrix['gpt2-encoder:gpt2']['special-policy'].divergences[0]",
     "divergence 'd0001' belongs to adapter 'gpt2-encoder:gpt2' and check(s) 'batch', not to this cell"),
]


@pytest.mark.parametrize("mutate,path,fragment", [e[1:] for e in REFERENCE_ERRORS],
                         ids=[e[0] for e in REFERENCE_ERRORS])
def test_cross_reference_errors(mutate: Mutation, path: str, fragment: str) -> None:
    data = fixture("basic")
    mutate(data)
    with pytest.raises(ParityValidationError) as caught:
        validate_parity(data)
    assert (caught.value.path, fragment in caught.value.problem) == (path, True), caught.value.problem


def test_hostile_values_print_as_ascii_in_errors() -> None:
    data = fixture("hostile")
    data["divergences"][0]["status"] = "<script>\u202e\x1b"
    with pytest.raises(ParityValidationError) as caught:
        validate_parity(data)
    assert caught.value.problem.startswith("found '<script>\\u202e\\x1b', expected one of")
    assert str(caught.value).isascii()


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(ParityValidationError) as caught:
        load_parity(missing)
    assert str(caught.value) == f"{missing}: file not found; pass the parity.json that `tokconf run` wrote"
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 2,\n  oops}', encoding="utf-8")
    with pytest.raises(ParityValidationError) as caught:
        load_parity(broken)
    assert str(caught.value).startswith(f"{broken}: not JSON: Expecting property name enclosed in double quotes "
                                        "at line 2, column 3")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"x": "\xe9"}')
    with pytest.raises(ParityValidationError, match="cannot read the file as UTF-8 text"):
        load_parity(latin)
    not_object = tmp_path / "list.json"
    not_object.write_text("[]", encoding="utf-8")
    with pytest.raises(ParityValidationError) as caught:
        load_parity(not_object)
    assert (caught.value.path, caught.value.problem) == ("$", "found array [], expected type object")


def test_copy_is_not_mutated_by_validation() -> None:
    data = fixture("hostile")
    before = copy.deepcopy(data)
    validate_parity(data)
    assert data == before
