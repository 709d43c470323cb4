"""Validate parity.json (schema_version 2 or 3) and say exactly where and what is wrong.

Two layers: the shipped JSON Schema (`harness/report/parity.schema.json`) for shapes and
types, then the cross-references a schema cannot express (matrix cells name existing
adapters, checks and divergences; the summary counts the cells). Every error carries a
JSON path such as ``$.divergences[3].status`` so a broken file can be fixed by hand.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import jsonschema
from jsonschema.exceptions import best_match

__all__ = [
    "SCHEMA_PATH",
    "STATUSES",
    "ParityValidationError",
    "json_path",
    "load_parity",
    "parity_schema",
    "validate_parity",
]

SCHEMA_PATH = Path(__file__).with_name("parity.schema.json")

#: Matrix cell statuses, in display order (also the summary's keys; ``empty``, a check that
#: compared nothing, and ``not-run``, the cells an interrupted run never reached, from
#: schema_version 3).
STATUSES: tuple[str, ...] = ("agree", "documented", "unexpected", "stale", "unsupported", "empty", "unavailable",
                            "not-run")
#: the versions this tokconf reads; it writes the last
VERSIONS: tuple[int, ...] = (2, 3)


class ParityValidationError(ValueError):
    """parity.json does not match its schema; ``path`` is the JSON path of the fault."""

    def __init__(self, path: str | None, problem: str, *, source: str | None = None) -> None:
        self.path = path  # None: the file itself (missing, unreadable, not JSON)
        self.problem = problem
        self.source = source
        where = f"{source}: " if source else ""
        at = f"invalid parity.json at {path}: " if path is not None else ""
        super().__init__(f"{where}{at}{problem}")


def json_path(parts: Iterable[Any]) -> str:
    """A JSONPath-like string for a sequence of keys and indexes.

    >>> json_path(["divergences", 3, "input", "text"])
    '$.divergences[3].input.text'
    >>> json_path(["matrix", "hf:gpt2", "id-parity"])
    "$.matrix['hf:gpt2']['id-parity']"
    """
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}"
        else:
            out += f"[{_short(part)}]"
    return out


@lru_cache(maxsize=1)
def parity_schema() -> dict[str, Any]:
    """The shipped JSON Schema, parsed once."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate_parity(data: Any, *, source: str | None = None) -> None:
    """Raise :class:`ParityValidationError` unless ``data`` is a valid schema_version 2 or 3 run."""
    if isinstance(data, dict) and "schema_version" in data and data["schema_version"] not in VERSIONS:
        raise ParityValidationError(
            "$.schema_version",
            f"found {_short(data['schema_version'])}, expected 2 or 3; this tokconf reads schema_version 2 and 3 "
            "only (re-run `tokconf run` with this version, or use the tokconf that wrote the file)",
            source=source,
        )
    if isinstance(data, dict) and data.get("schema_version") == 3 and "verdict" not in data:
        raise ParityValidationError("$", "missing required key(s) 'verdict' (schema_version 3)", source=source)
    validator = jsonschema.Draft202012Validator(parity_schema())
    error = best_match(validator.iter_errors(data))
    if error is not None:
        raise ParityValidationError(json_path(error.absolute_path), _explain(error), source=source)
    _check_references(data, source=source)


def load_parity(path: str | Path) -> dict[str, Any]:
    """Read and validate a parity.json file; every failure is a :class:`ParityValidationError`."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ParityValidationError(None, "file not found; pass the parity.json that `tokconf run` wrote",
                                    source=file) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ParityValidationError(None, f"cannot read the file as UTF-8 text ({exc})", source=file) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParityValidationError(
            None, f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}; "
            "expected the parity.json that `tokconf run` wrote", source=file
        ) from exc
    validate_parity(data, source=file)
    return data


def _explain(error: jsonschema.ValidationError) -> str:
    """What was found and what was expected, short enough to read in a terminal."""
    keyword = error.validator
    instance = error.instance
    if keyword == "required":
        missing = [k for k in error.validator_value if k not in (instance or {})]
        return f"missing required key(s) {', '.join(map(repr, missing))}"
    if keyword == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = [k for k in instance if k not in allowed]
        return f"unknown key(s) {', '.join(_short(k) for k in extra)}; allowed: {', '.join(allowed)}"
    if keyword == "enum":
        text = f"found {_short(instance)}, expected one of {', '.join(map(repr, error.validator_value))}"
    elif keyword == "const":
        text = f"found {_short(instance)}, expected {error.validator_value!r}"
    elif keyword == "type":
        shown = "" if instance is None else f" {_short(instance)}"
        text = f"found {_json_type(instance)}{shown}, expected type {error.validator_value}"
    elif keyword == "pattern":
        text = f"found {_short(instance)}, which does not match {error.validator_value}"
    else:
        text = error.message if len(error.message) <= 300 else error.message[:300] + "..."
    # The root's description is a paragraph about the whole file: not an expectation.
    expected = error.schema.get("description") if isinstance(error.schema, dict) and error.path else None
    return text + (f" (expected: {expected})" if expected else "")


def _json_type(value: Any) -> str:
    """The JSON name of a Python value's type.

    >>> _json_type(None), _json_type([]), _json_type({}), _json_type(True), _json_type(1.5)
    ('null', 'array', 'object', 'boolean', 'number')
    """
    if value is None:
        return "null"
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                       (list, "array"), (dict, "object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _short(value: Any) -> str:
    """``repr`` cut to 80 characters, ASCII only, so hostile values print safely."""
    text = ascii(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_references(data: dict[str, Any], *, source: str | None) -> None:
    def fail(parts: list[Any], problem: str) -> None:
        raise ParityValidationError(json_path(parts), problem, source=source)

    names: set[str] = set()
    for i, adapter in enumerate(data["adapters"]):
        if adapter["name"] in names:
            fail(["adapters", i, "name"], f"adapter {_short(adapter['name'])} is listed twice; names are unique")
        names.add(adapter["name"])
    checks = set(data["checks"])
    by_id: dict[str, int] = {}
    for i, divergence in enumerate(data["divergences"]):
        if divergence["id"] in by_id:
            fail(["divergences", i, "id"], f"divergence id {divergence['id']!r} is used twice; ids are unique")
        by_id[divergence["id"]] = i
    counts: Counter[str] = Counter()
    listed: set[str] = set()
    for adapter, row in data["matrix"].items():
        if adapter not in names:
            fail(["matrix", adapter], "matrix row for an adapter missing from $.adapters; add it there")
        for check, cell in row.items():
            if check not in checks:
                fail(["matrix", adapter, check], "matrix column for a check missing from $.checks; add it there")
            counts[cell["status"]] += 1
            for k, ident in enumerate(cell["divergences"]):
                where = ["matrix", adapter, check, "divergences", k]
                if ident not in by_id:
                    fail(where, f"names divergence {ident!r}, which is not in $.divergences")
                divergence = data["divergences"][by_id[ident]]
                # a cell lists the divergences its check saw: as one of their symptoms, or a
                # documented one that absorbed findings of this check (judging's equivalences)
                seen_by = {s["check"] for s in divergence["symptoms"]}
                if divergence["adapter"] != adapter or (check not in seen_by and not divergence["absorbed"]):
                    fail(where, f"divergence {ident!r} belongs to adapter {_short(divergence['adapter'])} "
                                f"and check(s) {', '.join(map(_short, sorted(seen_by)))}, not to this cell")
                listed.add(ident)
    for i, divergence in enumerate(data["divergences"]):
        if divergence["id"] not in listed:
            fail(["divergences", i, "id"],
                 f"divergence {divergence['id']!r} is not listed by its matrix cell "
                 f"$.matrix[{_short(divergence['adapter'])}][{_short(divergence['check'])}].divergences")
    for status in STATUSES:
        if data["summary"].get(status, 0) != counts[status]:  # runs before "empty" have none
            fail(["summary", status], f"found {data['summary'].get(status, 0)}, but the matrix has "
                                      f"{counts[status]} cell(s) with status {status!r}")
    if "verdict" in data:
        from harness.report.verdict import verdict_of  # a leaf module: no cycle

        decided = verdict_of(data).to_json()
        if data["verdict"] != decided:
            fail(["verdict"], f"found {_short(data['verdict'])}, but the run's divergences, coverage minimums, "
                              f"lost shards and interruption decide {_short(decided)}; the verdict is computed, "
                              "not edited (rebuild it with `tokconf run`)")
