"""The schema of an encoding file, and its reader (errors name the file, line and fix).

An encoding file looks like::

    name: llama3
    description: Meta Llama 3 (llama-models 0.3.0)
    vocabulary:
      format: tiktoken                 # tiktoken (.model/.tiktoken) | tekken-json
      package: llama_models            # the installed package that ships the file ...
      path: llama3/tokenizer.model     # ... and its path inside it (or `file:` for a path)
      distribution: llama-models==0.3.0
      sha256: 82e9d319...
      id_offset: 0                     # Tekken's ordinary IDs start after 1,000 specials
      ordinary_tokens: 128000          # how many ranks the encoding uses (Tekken cuts)
    pattern: '(?i:''s|''t|...)'
    normalization: none                # or NFC (Qwen's tokenizer normalizes first)
    special_tokens:
      - {token: "<|begin_of_text|>", id: 128000}
      - {template: "<|reserved_special_token_{i}|>", ids: [128012, 128255], index_from: 2}
    reference: meta:llama3
    run_by_default: false
    source: https://...

``pinned: cl100k_base.tiktoken`` instead of ``package``/``path``/``sha256`` names a file
:mod:`harness.vocab` already pins (the GPT encodings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.cases.yaml_source import YamlDocument, YamlProblem, format_path, parse_yaml

__all__ = ["EncodingError", "EncodingSpec", "SpecialRange", "VocabularySource", "parse_encoding"]

FORMATS = ("tiktoken", "tekken-json")
NORMALIZATIONS = ("none", "NFC")
_TOP_KEYS = ("name", "description", "vocabulary", "pattern", "normalization", "special_tokens",
             "reference", "run_by_default", "source")
_VOCAB_KEYS = ("format", "package", "path", "file", "pinned", "distribution", "sha256", "id_offset",
               "ordinary_tokens")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")
_SHA256 = re.compile(r"[0-9a-f]{64}")


class EncodingError(ValueError):
    """An encoding file that does not follow the schema; the message says where and the fix."""


@dataclass(frozen=True)
class VocabularySource:
    """Where an encoding's rank file comes from and what its bytes must hash to."""

    format: str
    sha256: str
    #: (import package, path inside it) for a file shipped in an installed package
    package: str | None = None
    path: str | None = None
    #: a file on disk (a user's encoding file names it, relative to the YAML)
    file: Path | None = None
    #: a file :data:`harness.vocab.VOCAB_FILES` pins (its hash is pinned there)
    pinned: str | None = None
    distribution: str | None = None
    id_offset: int = 0
    ordinary_tokens: int | None = None


@dataclass(frozen=True)
class SpecialRange:
    """``template`` with ``{i}`` filled from ``index_from`` on, for the IDs ``first..last``."""

    template: str
    first: int
    last: int
    index_from: int

    def items(self) -> list[tuple[str, int]]:
        return [(self.template.replace("{i}", str(self.index_from + k)), self.first + k)
                for k in range(self.last - self.first + 1)]


@dataclass(frozen=True)
class EncodingSpec:
    """One encoding as data (see the module docstring for the file format)."""

    name: str
    description: str
    vocabulary: VocabularySource
    pattern: str
    special_tokens: Mapping[str, int]
    reference: str
    normalization: str = "none"
    run_by_default: bool = False
    source: str = ""
    #: where it was read from, for messages
    origin: str = ""


def parse_encoding(text: str, *, origin: str, base: Path | None = None) -> EncodingSpec:
    """Read one encoding file's text; ``origin`` names it in errors, ``base`` resolves ``file:``."""
    try:
        doc = parse_yaml(text)
    except YamlProblem as exc:
        raise EncodingError(f"{origin}: {exc}") from exc
    return _Reader(doc, origin, base).spec()


class _Reader:
    def __init__(self, doc: YamlDocument, origin: str, base: Path | None) -> None:
        self.doc, self.origin, self.base = doc, origin, base

    def fail(self, path: Sequence[str | int], expected: str, *, key: bool = False) -> EncodingError:
        line = self.doc.line_of(path, key=key)
        return EncodingError(f"{self.origin}, line {line}: {format_path(path)}: {expected}")

    def mapping(self, value: Any, path: list[str | int], keys: Sequence[str], required: Sequence[str]) -> dict:
        if not isinstance(value, dict):
            raise self.fail(path, f"must be a mapping with keys {', '.join(keys)}")
        for key in value:
            if key not in keys:
                raise self.fail([*path, key], f"unknown key {key!r}; known keys: {', '.join(keys)}", key=True)
        for key in required:
            if key not in value:
                raise self.fail(path, f"missing required key {key!r}")
        return value

    def text(self, value: Any, path: list[str | int], *, pattern: re.Pattern[str] | None = None,
             hint: str = "") -> str:
        if not isinstance(value, str) or not value:
            quote = " (YAML read it as a number: put it in quotes)" if isinstance(value, (int, float)) else ""
            raise self.fail(path, f"must be a non-empty string{hint}, found {value!r}{quote}")
        if pattern is not None and not pattern.fullmatch(value):
            raise self.fail(path, f"{value!r} is not valid{hint}")
        return value

    def integer(self, value: Any, path: list[str | int], *, minimum: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(path, f"must be an integer >= {minimum}, found {value!r}")
        return value

    def spec(self) -> EncodingSpec:
        data = self.mapping(self.doc.data, [], _TOP_KEYS, ("name", "vocabulary", "pattern", "special_tokens",
                                                            "reference"))
        name = self.text(data["name"], ["name"], pattern=_NAME, hint=" (letters, digits, _ . -)")
        pattern = self.text(data["pattern"], ["pattern"])
        self._compiles(pattern)
        normalization = data.get("normalization", "none")
        if normalization not in NORMALIZATIONS:
            raise self.fail(["normalization"], f"must be one of {', '.join(NORMALIZATIONS)}, found {normalization!r}")
        reference = self.text(data["reference"], ["reference"], hint=" naming an adapter, e.g. meta:llama3")
        if ":" not in reference:
            raise self.fail(["reference"], f"{reference!r} must be an adapter name '<kind>:<argument>'")
        by_default = data.get("run_by_default", False)
        if not isinstance(by_default, bool):
            raise self.fail(["run_by_default"], f"must be true or false, found {by_default!r}")
        return EncodingSpec(
            name=name,
            description=str(data.get("description", "")),
            vocabulary=self.vocabulary(data["vocabulary"]),
            pattern=pattern,
            special_tokens=self.specials(data["special_tokens"]),
            reference=reference,
            normalization=normalization,
            run_by_default=by_default,
            source=str(data.get("source", "")),
            origin=self.origin,
        )

    def _compiles(self, pattern: str) -> None:
        import regex

        try:
            regex.compile(pattern)
        except regex.error as exc:
            raise self.fail(["pattern"], f"is not a valid regular expression: {exc}") from exc

    def vocabulary(self, value: Any) -> VocabularySource:
        path: list[str | int] = ["vocabulary"]
        data = self.mapping(value, path, _VOCAB_KEYS, ("format",))
        fmt = data["format"]
        if fmt not in FORMATS:
            raise self.fail([*path, "format"], f"must be one of {', '.join(FORMATS)}, found {fmt!r}")
        where = [k for k in ("pinned", "package", "file") if k in data]
        if len(where) != 1:
            raise self.fail(path, "needs exactly one of `pinned: FILE` (a file tokconf pins), "
                                  "`package:` with `path:` (a file in an installed package) or `file: PATH`")
        offset = self.integer(data.get("id_offset", 0), [*path, "id_offset"])
        ordinary = data.get("ordinary_tokens")
        if ordinary is not None:
            ordinary = self.integer(ordinary, [*path, "ordinary_tokens"], minimum=256)
        if "pinned" in data:
            from harness.vocab import VOCAB_FILES

            pinned = self.text(data["pinned"], [*path, "pinned"])
            if pinned not in VOCAB_FILES:
                raise self.fail([*path, "pinned"], f"{pinned!r} is not a pinned file; pinned: {', '.join(sorted(VOCAB_FILES))}")
            return VocabularySource(fmt, VOCAB_FILES[pinned].sha256, pinned=pinned,
                                    distribution=VOCAB_FILES[pinned].distribution, id_offset=offset,
                                    ordinary_tokens=ordinary)
        sha = self.text(data.get("sha256"), [*path, "sha256"], pattern=_SHA256, hint=" (64 lower-case hex digits)")
        if "package" in data:
            package = self.text(data["package"], [*path, "package"])
            inner = self.text(data.get("path"), [*path, "path"], hint=" (the file's path inside the package)")
            distribution = data.get("distribution")
            return VocabularySource(fmt, sha, package=package, path=inner,
                                    distribution=str(distribution) if distribution else None,
                                    id_offset=offset, ordinary_tokens=ordinary)
        file = Path(self.text(data["file"], [*path, "file"])).expanduser()
        if not file.is_absolute() and self.base is not None:
            file = self.base / file
        return VocabularySource(fmt, sha, file=file, id_offset=offset, ordinary_tokens=ordinary)

    def specials(self, value: Any) -> dict[str, int]:
        if not isinstance(value, list):
            raise self.fail(["special_tokens"], "must be a list of {token, id} or {template, ids, index_from}")
        out: dict[str, int] = {}
        by_id: dict[int, str] = {}
        for k, entry in enumerate(value):
            path: list[str | int] = ["special_tokens", k]
            if isinstance(entry, dict) and "template" in entry:
                data = self.mapping(entry, path, ("template", "ids", "index_from"), ("template", "ids"))
                template = self.text(data["template"], [*path, "template"])
                if "{i}" not in template:
                    raise self.fail([*path, "template"], f"{template!r} must contain {{i}} (the running index)")
                ids = data["ids"]
                if not (isinstance(ids, list) and len(ids) == 2):
                    raise self.fail([*path, "ids"], "must be [FIRST_ID, LAST_ID]")
                first = self.integer(ids[0], [*path, "ids", 0])
                last = self.integer(ids[1], [*path, "ids", 1], minimum=first)
                index_from = self.integer(data.get("index_from", 0), [*path, "index_from"])
                items = SpecialRange(template, first, last, index_from).items()
            else:
                data = self.mapping(entry, path, ("token", "id", "shares_id"), ("token", "id"))
                items = [(self.text(data["token"], [*path, "token"]), self.integer(data["id"], [*path, "id"]))]
                if data.get("shares_id") is True and items[0][1] in by_id:
                    # declared: one ID for two literals (tiktoken's o200k_harmony does this)
                    out[items[0][0]] = items[0][1]
                    continue
            for token, token_id in items:
                if token in out:
                    raise self.fail(path, f"special token {token!r} is listed twice (IDs {out[token]} and {token_id})")
                if token_id in by_id:
                    raise self.fail(path, f"ID {token_id} is given to {by_id[token_id]!r} and to {token!r}; if that "
                                          f"is meant, list the second as {{token: ..., id: ..., shares_id: true}}")
                out[token] = token_id
                by_id[token_id] = token
        return out
