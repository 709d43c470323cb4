"""Load YAML case files (``cases/*.yaml``) into :class:`harness.cases.model.Case` values.

A file is validated against ``harness/cases/cases.schema.json`` (JSON Schema 2020-12)
and then checked for what a schema cannot say: escapes that parse, ids unique across
all files, no key expected to give both IDs and an error. Every defect becomes a
:class:`CaseProblem` with file, line, field and what was expected; all problems of a
load are raised together as one :class:`CaseFileError`, never skipped.

The rules for reading a loaded case (which adapters it applies to, which expectation
applies to one adapter) are in :mod:`harness.cases.match`, re-exported here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from harness.cases.model import (
    CHECKS,
    Case,
    DecodeProbe,
    DocumentedDivergence,
    ExpectedError,
    ExpectedRound,
    GeneratedText,
    LONG_TEXT_CHARS,
    Policy,
)
from harness.cases.domain import Domain, DomainError, parse_range
from harness.cases.fixtures import default_cases_dir, portable_argument
from harness.cases.match import (adapter_matches, case_applies_to, documented_for, expectation_for, lookup,
                                 unknown_adapter_kinds)
from harness.escapes import EscapeError, parse_escapes
from harness.outcomes import CATEGORIES
from harness.cases.schema_memo import known_valid, remember_valid
from harness.cases.yaml_source import YamlDocument, YamlProblem, format_path, parse_yaml

if TYPE_CHECKING:  # imported where a file is validated: 80 ms of every tokconf process else,
    import jsonschema  # and a file that passed before is not validated again (schema_memo)

__all__ = [
    "CaseFileError",
    "CaseProblem",
    "SCHEMA_PATH",
    "adapter_matches",
    "case_applies_to",
    "case_files",
    "check_adapter_kinds",
    "default_cases_dir",
    "documented_for",
    "expectation_for",
    "is_long",
    "load_case_file",
    "load_cases",
    "lookup",
    "unknown_adapter_kinds",
]

SCHEMA_PATH = Path(__file__).resolve().with_name("cases.schema.json")
#: Written in an adapter name, ``{here}`` stands for the folder of the case file, so a
#: fixture next to the cases (``gpt2-encoder:{here}/data/x``) is found from anywhere. It
#: becomes ``{cases}`` in the shipped folder and the folder as given elsewhere (see
#: :mod:`harness.cases.fixtures`): names never carry an install's absolute path.
HERE = "{here}"


@dataclass(frozen=True)
class CaseProblem:
    """One defect in a case file."""

    file: str
    line: int
    field: str
    expected: str
    case_id: str | None = None
    column: int | None = None  # 1-based; known for YAML syntax errors

    def __str__(self) -> str:
        where = f" (case {self.case_id!r})" if self.case_id else ""
        at = f"{self.line}:{self.column}" if self.column is not None else f"{self.line}"
        return f"{self.file}:{at}: {self.field}{where}: expected {self.expected}"


class CaseFileError(ValueError):
    """Malformed case files. ``problems`` lists every defect; the attributes name the first."""

    def __init__(self, problems: Iterable[CaseProblem]) -> None:
        self.problems = tuple(sorted(problems, key=lambda p: (p.file, p.line, p.field)))
        if not self.problems:
            raise ValueError("CaseFileError needs at least one problem")
        first = self.problems[0]
        self.file, self.line, self.field, self.expected = first.file, first.line, first.field, first.expected
        lines = [str(p) for p in self.problems]
        head = lines[0] if len(lines) == 1 else f"{len(lines)} problems in case files:\n  " + "\n  ".join(lines)
        super().__init__(head)


# --------------------------------------------------------------------------- loading


def case_files(paths: Iterable[Path | str]) -> list[Path]:
    """Expand folders to their ``*.yaml``/``*.yml`` files (not recursive), in name order."""
    files: list[Path] = []
    missing: list[CaseProblem] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.suffix in {".yaml", ".yml"} and p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            missing.append(CaseProblem(str(path), 1, "(path)", "an existing case file or folder"))
    if missing:
        raise CaseFileError(missing)
    return files


def check_adapter_kinds(cases: Iterable[Case], known_kinds: Iterable[str]) -> None:
    """Raise :class:`CaseFileError` for every documented adapter kind nothing registers."""
    problems = [CaseProblem(*p) for p in unknown_adapter_kinds(cases, known_kinds)]
    if problems:
        raise CaseFileError(problems)


def is_long(case: Case) -> bool:
    """Whether ``case`` belongs to the long tier (``--long``, nightly)."""
    return case.long


def load_cases(paths: Iterable[Path | str] | None = None) -> list[Case]:
    """Load every case from ``paths`` (files or folders; ``None`` = the shipped cases).

    Raises :class:`CaseFileError` listing every problem in every file, duplicate ids
    across files included.
    """
    files = case_files([default_cases_dir()] if paths is None else paths)
    cases: list[Case] = []
    problems: list[CaseProblem] = []
    first_seen: dict[str, Case] = {}
    for file in files:
        try:
            loaded = load_case_file(file)
        except CaseFileError as exc:
            problems.extend(exc.problems)
            continue
        for case in loaded:
            if case.id in first_seen:
                other = first_seen[case.id]
                problems.append(
                    CaseProblem(
                        case.file, case.line, "id", f"a unique id; {case.id!r} is already used at "
                        f"{other.file}:{other.line}", case.id,
                    )
                )
                continue
            first_seen[case.id] = case
            cases.append(case)
    if problems:
        raise CaseFileError(problems)
    return cases


def load_case_file(path: Path | str) -> list[Case]:
    """Load one file; ids are checked for uniqueness within it (``load_cases`` does across)."""
    path = Path(path)
    shown = _display(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise CaseFileError([CaseProblem(shown, line, "(file)", f"UTF-8 text: {exc.reason} at byte {exc.start}")]) from exc
    try:
        doc = parse_yaml(text)
    except YamlProblem as exc:
        raise CaseFileError([CaseProblem(shown, exc.line, exc.field, exc.expected, column=exc.column)]) from exc
    if not known_valid(text, SCHEMA_PATH):
        problems = _schema_problems(doc, shown)
        if problems:
            raise CaseFileError(problems)
        remember_valid(text, SCHEMA_PATH)
    builder = _Builder(doc, shown, portable_argument(path.parent.as_posix()))
    cases = [builder.case(raw, i) for i, raw in enumerate(doc.data["cases"])]
    if builder.problems:
        raise CaseFileError(builder.problems)
    return [c for c in cases if c is not None]


def _display(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path.resolve()) if relative.startswith("..") else relative


# --------------------------------------------------------------------------- schema


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _schema_problems(doc: YamlDocument, file: str) -> list[CaseProblem]:
    problems: dict[tuple[int, str], CaseProblem] = {}
    # a wrong type explains everything else at that place: report it first
    for error in sorted(_validator().iter_errors(doc.data), key=lambda e: e.validator != "type"):
        path, line, expected = _explain(error, doc)
        case_id = _case_id(doc.data, path)
        problems.setdefault((line, format_path(path)), CaseProblem(file, line, format_path(path), expected, case_id))
    return sorted(problems.values(), key=lambda p: p.line)


def _explain(error: jsonschema.ValidationError, doc: YamlDocument) -> tuple[list[str | int], int, str]:
    """Turn a jsonschema error into (path, line, what was expected) for a person."""
    path: list[str | int] = list(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    instance, kind, value = error.instance, error.validator, error.validator_value
    # x-expected words the rule a oneOf or a pattern stands for; other keywords speak for themselves
    custom = schema.get("x-expected") if error.validator in ("oneOf", "anyOf", "pattern") else None
    if kind == "additionalProperties" and isinstance(instance, dict):
        allowed = sorted(schema.get("properties", {}))
        key = next(k for k in instance if k not in allowed)
        return [*path, key], doc.line_of([*path, key], key=True), f"only known keys; {key!r} is unknown (allowed: {', '.join(allowed)})"
    if kind == "required" and isinstance(instance, dict):
        key = next(k for k in value if k not in instance)
        return [*path, key], doc.line_of(path), f"key {key!r}, which is required and missing"
    if kind == "oneOf" and custom and isinstance(instance, dict):
        present = [k for alt in value for k in alt.get("required", ()) if k in instance]
        if len(present) > 1:
            return [*path, present[1]], doc.line_of([*path, present[1]], key=True), f"{custom}; found both {present[0]!r} and {present[1]!r}"
        return path, doc.line_of(path), f"{custom}; found none of them"
    parent = _value_at(doc.data, path)
    if isinstance(parent, dict) and isinstance(instance, str) and instance in parent:
        # propertyNames: the offending thing is a key of the mapping at `path`
        path = [*path, instance]
        line = doc.line_of(path, key=True)
    else:
        line = doc.line_of(path)
    found = _describe(instance)
    if custom:
        return path, line, f"{custom}, found {found}"
    messages = {
        "type": lambda: f"{_type_phrase(value)}, found {found}",
        "const": lambda: f"{value!r}, found {found}",
        "enum": lambda: f"one of {', '.join(repr(v) for v in value)}; found {found}",
        "minimum": lambda: f"a number >= {value}, found {found}",
        "minItems": lambda: f"at least {value} item(s), found {len(instance)}",
        "maxItems": lambda: f"at most {value} item(s), found {len(instance)}",
        "minProperties": lambda: f"at least {value} key(s), found none",
        "uniqueItems": lambda: f"no repeated items, found {found}",
        "minLength": lambda: f"at least {value} character(s), found {found}",
        "pattern": lambda: f"a string matching {value}, found {found}",
    }
    return path, line, messages.get(kind, lambda: error.message)()


def _type_phrase(value: Any) -> str:
    names = {"integer": "an integer", "string": "a string", "array": "a list", "object": "a mapping",
             "boolean": "true or false", "number": "a number", "null": "null"}
    kinds = value if isinstance(value, list) else [value]
    return " or ".join(names.get(k, k) for k in kinds)


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null or an empty document)"
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "mapping"}.get(type(value), type(value).__name__)
    shown = repr(value)
    return f"{kind} {shown[:60] + '...' if len(shown) > 60 else shown}"


def _value_at(data: Any, path: list[str | int]) -> Any:
    for step in path:
        try:
            data = data[step]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _case_id(data: Any, path: list[str | int]) -> str | None:
    if len(path) >= 2 and path[0] == "cases" and isinstance(path[1], int):
        case = _value_at(data, path[:2])
        if isinstance(case, dict) and isinstance(case.get("id"), str):
            return case["id"]
    return None


# --------------------------------------------------------------------------- building


class _Builder:
    """Builds Case values from schema-valid data, collecting semantic problems."""

    def __init__(self, doc: YamlDocument, file: str, folder: str) -> None:
        self.doc, self.file, self.folder = doc, file, folder
        self.problems: list[CaseProblem] = []
        self._ids: dict[str, int] = {}
        self._path: list[str | int] = []
        self._case_id: str | None = None

    def problem(self, rel: list[str | int], expected: str, *, key: bool = False) -> None:
        path = [*self._path, *rel]
        line = self.doc.line_of(path, key=key)
        self.problems.append(CaseProblem(self.file, line, format_path(path), expected, self._case_id))

    def unescape(self, text: str, rel: list[str | int]) -> str:
        try:
            return parse_escapes(text)
        except EscapeError as exc:
            self.problem(rel, f"valid backslash escapes: {exc}")
            return text

    def name(self, name: str, rel: list[str | int], *, key: bool = False) -> str:
        if name == "gpt2":
            self.problem(rel, "'r50k_base': GPT-2 and r50k_base are one ID space, named r50k_base", key=key)
        return name.replace(HERE, self.folder)

    def names(self, names: list[str] | None, field: str) -> tuple[str, ...] | None:
        if names is None:
            return None
        return tuple(self.name(n, [field, i]) for i, n in enumerate(names))

    def keyed(
        self, mapping: Mapping[str, Any], rel: list[str | int], convert: Callable[[Any, list[str | int]], Any]
    ) -> dict[str, Any]:
        return {self.name(k, [*rel, k], key=True): convert(v, [*rel, k]) for k, v in mapping.items()}

    def case(self, raw: dict[str, Any], index: int) -> Case | None:
        self._path, self._case_id = ["cases", index], raw["id"]
        before = len(self.problems)
        if raw["id"] in self._ids:
            self.problem(["id"], f"a unique id; {raw['id']!r} is already used at line {self._ids[raw['id']]}")
        self._ids.setdefault(raw["id"], self.doc.line_of(["cases", index]))
        generated = None
        if "text_generated" in raw:
            g = raw["text_generated"]
            generated = GeneratedText(repeat=g["repeat"], times=g["times"], before=g.get("before", ""),
                                      then=g.get("then", ""))
            text = generated.text()
        else:
            text = raw["text"] if "text" in raw else self.unescape(raw["text_escaped"], ["text_escaped"])
        tags = tuple(raw.get("tags", ()))
        if len(text) >= LONG_TEXT_CHARS and "long" not in tags:
            self.problem(["tags"] if "tags" in raw else ["id"],
                         f"the tag `long` on a case of {len(text)} characters ({LONG_TEXT_CHARS} or more): "
                         f"long cases run only with --long or the nightly profile; add `tags: [long]`",
                         key="tags" not in raw)
        expect = raw.get("expect", {})
        ids = self.keyed(expect.get("ids", {}), ["expect", "ids"], lambda v, _: tuple(v))
        errors = self.keyed(expect.get("errors", {}), ["expect", "errors"], self.error)
        for key in sorted(set(ids) & set(errors)):
            self.problem(["expect", "errors", key], f"either IDs or an error for {key!r}, not both", key=True)
        pretokens = self.keyed(expect.get("pretokens_escaped", {}), ["expect", "pretokens_escaped"],
                               lambda v, rel: self.pretokens(v, rel, text))
        trace = self.keyed(expect.get("trace", {}), ["expect", "trace"],
                           lambda v, _: tuple(ExpectedRound(r.get("rank"), r.get("merged"),
                                                            tuple(r["pair"]) if "pair" in r else None) for r in v))
        encodings, adapters = self.names(raw.get("encodings"), "encodings"), self.names(raw.get("adapters"), "adapters")
        probes = tuple(self.probe(p, ["decode", i]) for i, p in enumerate(raw.get("decode", [])))
        if probes and encodings is None and adapters is None:
            self.problem(["decode"], "`encodings` or `adapters` on a case with decode probes: IDs mean nothing "
                         "without an encoding", key=True)
        documented = tuple(self.documented(d, ["documented", i]) for i, d in enumerate(raw.get("documented", [])))
        policy = raw.get("policy", {})
        case = Case(
            id=raw["id"], text=text, file=self.file, line=self.doc.line_of(self._path),
            encodings=encodings, adapters=adapters,
            policy=Policy(allowed_special=_special_set(policy.get("allowed_special", "none")),
                          disallowed_special=_special_set(policy.get("disallowed_special", "all"))),
            expect_ids=ids, expect_errors=errors, expect_roundtrip=expect.get("roundtrip"),
            decode=probes, tags=tags, documented=documented,
            reference=self.name(raw["reference"], ["reference"]) if "reference" in raw else None,
            expect_pretokens=pretokens, expect_trace=trace, generated=generated,
        )
        return case if len(self.problems) == before else None

    def error(self, raw: dict[str, str], rel: list[str | int]) -> ExpectedError:
        if raw["category"] not in CATEGORIES:  # the schema's enum, kept honest if it drifts
            self.problem([*rel, "category"], f"one of {', '.join(sorted(CATEGORIES))}")
        return ExpectedError(raw["category"], raw.get("type"))

    def pretokens(self, pieces: list[str], rel: list[str | int], text: str) -> tuple[str, ...]:
        parsed = tuple(self.unescape(p, [*rel, i]) for i, p in enumerate(pieces))
        if "".join(parsed) != text:
            self.problem(rel, f"pre-token chunks that concatenate to the case's text; they give {''.join(parsed)!r}",
                         key=True)
        return parsed

    def probe(self, raw: dict[str, Any], rel: list[str | int]) -> DecodeProbe:
        text = raw.get("text")
        if "text_escaped" in raw:
            text = self.unescape(raw["text_escaped"], [*rel, "text_escaped"])
        error = self.error(raw["error"], [*rel, "error"]) if "error" in raw else None
        return DecodeProbe(ids=tuple(raw["ids"]), errors=raw.get("errors", "replace"), text=text,
                           bytes_hex=raw.get("bytes_hex"), error=error)

    def documented(self, raw: dict[str, Any], rel: list[str | int]) -> DocumentedDivergence:
        if raw["check"] not in CHECKS:
            self.problem([*rel, "check"], f"one of {', '.join(CHECKS)}")
        adapters = tuple(self.name(a, [*rel, "adapters", i]) for i, a in enumerate(raw["adapters"]))
        domain = self.domain(raw["domain"], [*rel, "domain"]) if "domain" in raw else None
        kinds = [raw["kind"]] if isinstance(raw["kind"], str) else list(raw["kind"])
        return DocumentedDivergence(adapters, raw["check"], raw["reason"], raw["source"],
                                    kind=kinds[0], domain=domain, more_kinds=tuple(kinds[1:]),
                                    line=self.doc.line_of([*self._path, *rel, "adapters"]))

    def domain(self, raw: dict[str, Any], rel: list[str | int]) -> Domain | None:
        ranges = []
        for i, text in enumerate(raw.get("ranges", [])):
            try:
                ranges.append(parse_range(text))
            except DomainError as exc:
                self.problem([*rel, "ranges", i], str(exc))
        chars = self.unescape(raw["chars_escaped"], [*rel, "chars_escaped"]) if "chars_escaped" in raw else None
        try:
            return Domain(regex=raw.get("regex"), chars=chars, ranges=tuple(ranges))
        except DomainError as exc:
            self.problem([*rel, "regex"] if "regex" in raw else rel, str(exc))
            return None


def _special_set(value: str | list[str]) -> Any:
    if value == "all":
        return "all"
    return frozenset() if value == "none" else frozenset(value)
