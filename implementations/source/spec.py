"""Adapter specs for upstream source files and notebooks: parse and validate.

A spec is a small YAML file (read with ``yaml.safe_load``) that says how to turn a class
in someone else's ``.py`` file or notebook into a tokconf adapter: how to construct it,
which method encodes and which decodes, how its vocabulary is loaded or trained, which
special-policy argument it takes, the encoding it claims. The format is documented in
``implementations/source/specs/README.md``; every shipped spec is an example.

Everything here is pure data: a :class:`SourceSpec` can be pickled into a worker
process, which builds the adapter from it (see ``implementations.source.adapter``);
:mod:`implementations.source.roots` finds the checkout it reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from harness.cases.yaml_source import safe_load
from harness.outcomes import CATEGORIES
from harness.vocab import TIKTOKEN_ENCODING_FILES, VOCAB_FILES
from implementations.foreign import ErrorRule

__all__ = [
    "FORMAT_VERSION",
    "POLICY_CASES",
    "SHIPPED_DIR",
    "SourceSpec",
    "SourceSpecError",
    "SourceUnavailable",
    "load_spec",
    "shipped_spec_names",
]

FORMAT_VERSION = 1
SHIPPED_DIR = Path(__file__).with_name("specs")

#: tiktoken policy situations a spec maps onto its native special argument.
#:  all: every special allowed; some: some allowed, the rest disallowed (tiktoken's
#:  default for the rest); some-ordinary: some allowed, the rest ordinary text;
#:  none-raise: nothing allowed, some disallowed (tiktoken's default); none: nothing
#:  allowed, nothing disallowed (encode_ordinary).
POLICY_CASES = ("all", "some", "some-ordinary", "none-raise", "none")
SPECIAL_POLICIES = ("tiktoken", "always-special", "ordinary-unless-allowed", "none", "auto")

#: Argument references the harness resolves when it builds the adapter.
REFERENCE_KEYS = ("vocab_dir", "models_dir", "vocab_file", "tiktoken_ranks", "text_file",
                  "root_file", "set", "literal")

_TOP_KEYS = {
    "tokconf_source_spec", "name", "description", "upstream", "root_env", "source", "class",
    "construct", "setup", "tiktoken_cache", "cells", "encoding", "special_tokens",
    "special_policy", "encode", "encode_ordinary", "decode", "decode_bytes", "alphabet", "errors",
    "notes",
}


class SourceSpecError(ValueError):
    """A spec file is malformed; the message names the file, the field and the fix."""


class SourceUnavailable(Exception):
    """The upstream file a spec points at is not here; the message says how to supply it."""


@dataclass(frozen=True)
class Call:
    """One method call on the built tokenizer (``setup``), or the constructor itself."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceSpec:
    """A validated spec. Paths are absolute strings, so a worker needs nothing else."""

    name: str
    spec_file: str | None
    base_dir: str  # relative paths are read from here when no checkout root applies
    source: str  # path of the .py or .ipynb, relative to the root (or absolute)
    class_name: str | None
    construct: Call  # method = the class name or a module-level factory
    setup: tuple[Call, ...]
    encoding: str
    special_policy: str
    encode_method: str
    special_arg: str | None
    policy_map: Mapping[str, Any]
    decode_method: str
    decode_returns: str  # "text" | "bytes"
    decode_errors_arg: str | None
    encode_ordinary_method: str | None = None
    #: How to get a token list's bytes when ``decode`` returns text: ``{"method": name}``, or
    #: the tokenizer's own tables ``{"pieces_attr": .., "byte_map_attr": .., "specials_attr": ..}``
    decode_bytes: Any = None
    special_tokens: Any = None  # {literal: id} | {"attr": name[, "literals": [...]]} | None
    alphabet: Any = None  # {"chars": str} | {"ranges": [[lo, hi], ...]} | {"vocab_attr": name}
    errors: tuple[ErrorRule, ...] = ()
    tiktoken_cache: tuple[str, ...] = ()
    cells: tuple[int, ...] | None = None
    root_env: str | None = None
    upstream: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    notes: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return "notebook" if self.source.endswith(".ipynb") else "python"


def shipped_spec_names() -> list[str]:
    """Names of the specs shipped in ``implementations/specs`` (``minbpe-gpt4``, ...)."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.yaml"))


# -- parsing and validation ------------------------------------------------------------


def load_spec(path: str | os.PathLike[str], *, name: str | None = None,
              source: str | None = None, class_name: str | None = None) -> SourceSpec:
    """Read and validate a spec file.

    ``source`` and ``class_name`` come from an adapter name such as
    ``source:tok.py:MyTokenizer``; when given, the spec may leave them out, and must
    not contradict them.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SourceSpecError(f"{path}: cannot read the spec: {exc}") from exc
    try:
        data = safe_load(text)
    except yaml.YAMLError as exc:
        raise SourceSpecError(f"{path}: not valid YAML: {exc}") from exc
    return parse_spec(data, where=str(path), base_dir=str(path.resolve().parent),
                      name=name or path.stem, spec_file=str(path.resolve()),
                      source=source, class_name=class_name)


def parse_spec(data: Any, *, where: str, base_dir: str, name: str, spec_file: str | None = None,
               source: str | None = None, class_name: str | None = None) -> SourceSpec:
    """Validate spec data (already loaded from YAML) into a :class:`SourceSpec`."""
    v = _Validator(where)
    top = v.mapping(data, "", required=_TOP_KEYS & {"tokconf_source_spec", "encoding", "decode"},
                    allowed=_TOP_KEYS)
    version = top["tokconf_source_spec"]
    if version != FORMAT_VERSION:
        v.fail("tokconf_source_spec", f"must be {FORMAT_VERSION} (the spec format version)", version)
    spec_source = v.opt_str(top, "source")
    if source is not None and spec_source is not None and Path(spec_source).name != Path(source).name:
        v.fail("source", f"contradicts the adapter name, which names {source!r}", spec_source)
    spec_source = source or spec_source
    if spec_source is None:
        v.fail("source", "is required: the path of the .py or .ipynb file", None)
    if not spec_source.endswith((".py", ".ipynb")):
        v.fail("source", "must name a .py file or an .ipynb notebook", spec_source)
    spec_class = v.opt_str(top, "class")
    if class_name is not None and spec_class is not None and spec_class != class_name:
        v.fail("class", f"contradicts the adapter name, which names {class_name!r}", spec_class)
    spec_class = spec_class or class_name

    construct = _construct(v, top.get("construct"), spec_class)
    setup = tuple(_call(v, item, f"setup[{i}]") for i, item in enumerate(v.seq(top, "setup")))
    special_policy = v.opt_str(top, "special_policy") or "none"
    if special_policy not in SPECIAL_POLICIES:
        v.fail("special_policy", f"must be one of {', '.join(SPECIAL_POLICIES)}", special_policy)

    encode = v.mapping(top.get("encode", {}), "encode", required=set(),
                       allowed={"method", "special_arg", "policy"})
    special_arg = v.opt_str(encode, "special_arg", "encode.")
    policy = v.mapping(encode.get("policy", {}), "encode.policy", required=set(),
                       allowed=set(POLICY_CASES))
    if special_arg and not policy:
        v.fail("encode.policy", "is required with special_arg: map "
               f"{', '.join(POLICY_CASES)} to the native argument value ($allowed, $omit, or a value)", None)
    if policy and not special_arg:
        v.fail("encode.special_arg", "is required with encode.policy: the keyword the policy values go to", None)

    decode = v.mapping(top["decode"], "decode", required={"method"}, allowed={"method", "returns", "errors_arg"})
    returns = v.opt_str(decode, "returns", "decode.") or "text"
    if returns not in ("text", "bytes"):
        v.fail("decode.returns", "must be text or bytes", returns)

    encoding = v.opt_str(top, "encoding")
    if encoding == "trained":
        encoding = "trained:" + _fingerprint(spec_source, spec_class, construct, setup)
    elif encoding == "gpt2":
        encoding = "r50k_base"

    tiktoken_cache = tuple(v.seq(top, "tiktoken_cache"))
    for i, enc in enumerate(tiktoken_cache):
        if enc not in TIKTOKEN_ENCODING_FILES:
            v.fail(f"tiktoken_cache[{i}]", f"must be one of {', '.join(sorted(TIKTOKEN_ENCODING_FILES))}", enc)
    cells = top.get("cells")
    if cells is not None:
        if not isinstance(cells, list) or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in cells):
            v.fail("cells", "must be a list of cell indexes (0-based, markdown cells count)", cells)
        if not spec_source.endswith(".ipynb"):
            v.fail("cells", "applies to notebooks only", cells)
    root_env = v.opt_str(top, "root_env")
    upstream = v.mapping(top.get("upstream", {}), "upstream", required=set(), allowed={"repo", "url", "path"})
    notes = tuple(str(n) for n in v.seq(top, "notes"))
    return SourceSpec(
        name=v.opt_str(top, "name") or name,
        spec_file=spec_file,
        base_dir=base_dir,
        source=spec_source,
        class_name=spec_class,
        construct=construct,
        setup=setup,
        encoding=encoding,
        special_policy=special_policy,
        encode_method=v.opt_str(encode, "method", "encode.") or "encode",
        special_arg=special_arg,
        policy_map=dict(policy),
        decode_method=decode["method"],
        decode_returns=returns,
        decode_errors_arg=v.opt_str(decode, "errors_arg", "decode."),
        encode_ordinary_method=_method_name(v, top.get("encode_ordinary"), "encode_ordinary"),
        decode_bytes=_decode_bytes(v, top.get("decode_bytes")),
        special_tokens=_special_tokens(v, top.get("special_tokens")),
        alphabet=_alphabet(v, top.get("alphabet")),
        errors=_errors(v, top.get("errors")),
        tiktoken_cache=tiktoken_cache,
        cells=tuple(cells) if cells is not None else None,
        root_env=root_env,
        upstream={k: str(val) for k, val in upstream.items()},
        description=v.opt_str(top, "description") or "",
        notes=notes,
    )


class _Validator:
    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, field_path: str, expected: str, found: Any) -> None:
        shown = "nothing" if found is None else f"{found!r}"
        raise SourceSpecError(f"{self.where}: field '{field_path or '(top level)'}' {expected}; found {shown}")

    def mapping(self, value: Any, path: str, *, required: set[str], allowed: set[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(path, "must be a mapping", value)
        unknown = sorted(str(k) for k in value if k not in allowed)
        if unknown:
            self.fail(f"{path}.{unknown[0]}" if path else unknown[0],
                      f"is not a known field (known: {', '.join(sorted(allowed))})", value[unknown[0]])
        for key in sorted(required):
            if key not in value:
                self.fail(f"{path}.{key}" if path else key, "is required", None)
        return value

    def opt_str(self, mapping: Mapping[str, Any], key: str, prefix: str = "") -> str | None:
        value = mapping.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            self.fail(prefix + key, "must be a non-empty string", value)
        return value

    def seq(self, mapping: Mapping[str, Any], key: str) -> list[Any]:
        value = mapping.get(key, [])
        if not isinstance(value, list):
            self.fail(key, "must be a list", value)
        return value


def _method_name(v: _Validator, value: Any, path: str) -> str | None:
    if value is None:
        return None
    data = v.mapping(value, path, required={"method"}, allowed={"method"})
    return v.opt_str(data, "method", path + ".")


def _decode_bytes(v: _Validator, value: Any) -> Any:
    if value is None:
        return None
    data = v.mapping(value, "decode_bytes", required=set(),
                     allowed={"method", "pieces_attr", "byte_map_attr", "specials_attr"})
    if ("method" in data) == ("pieces_attr" in data):
        v.fail("decode_bytes", "needs either method (a native bytes decode) or pieces_attr "
               "(the ID -> piece table its decode reads)", value)
    if "method" in data and len(data) > 1:
        v.fail("decode_bytes", "takes method alone", value)
    for key in data:
        v.opt_str(data, key, "decode_bytes.")
    return dict(data)


def _construct(v: _Validator, value: Any, class_name: str | None) -> Call:
    data = v.mapping(value if value is not None else {}, "construct", required=set(),
                     allowed={"factory", "args", "kwargs"})
    target = v.opt_str(data, "factory", "construct.") or class_name
    if target is None:
        v.fail("class", "is required (or construct.factory): the class or factory to build", None)
    return Call(target, tuple(_args(v, data.get("args", []), "construct.args")),
                _kwargs(v, data.get("kwargs", {}), "construct.kwargs"))


def _call(v: _Validator, value: Any, path: str) -> Call:
    data = v.mapping(value, path, required={"call"}, allowed={"call", "args", "kwargs"})
    return Call(v.opt_str(data, "call", path + "."), tuple(_args(v, data.get("args", []), path + ".args")),
                _kwargs(v, data.get("kwargs", {}), path + ".kwargs"))


def _args(v: _Validator, value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        v.fail(path, "must be a list", value)
    for i, item in enumerate(value):
        _check_reference(v, item, f"{path}[{i}]")
    return value


def _kwargs(v: _Validator, value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        v.fail(path, "must be a mapping of keyword names to values", value)
    for key, item in value.items():
        _check_reference(v, item, f"{path}.{key}")
    return dict(value)


def _check_reference(v: _Validator, value: Any, path: str) -> None:
    """A one-key mapping whose key is a reference kind is a reference; check its value."""
    if not isinstance(value, dict) or not value or not set(value) & set(REFERENCE_KEYS):
        return
    keys = set(value)
    if keys == {"models_dir", "model_name"}:
        model = value["model_name"]
        if value["models_dir"] != "gpt2" or not isinstance(model, str) or model in (".", "..") \
                or not re.fullmatch(r"[A-Za-z0-9_.-]+", model):
            v.fail(path, "{models_dir: gpt2, model_name: NAME} is the only models_dir form", value)
        return
    if len(keys) != 1:
        v.fail(path, f"a reference has one key of {', '.join(REFERENCE_KEYS)} "
               "(wrap a plain mapping as {literal: ...})", value)
    (key, arg), = value.items()
    if key == "vocab_dir" and arg != "gpt2":
        v.fail(path, "vocab_dir supports gpt2 (a folder with encoder.json and vocab.bpe)", value)
    if key == "models_dir":
        v.fail(path, "models_dir needs model_name too: {models_dir: gpt2, model_name: 124M}", value)
    if key == "vocab_file" and arg not in VOCAB_FILES:
        v.fail(path, f"vocab_file must be one of {', '.join(sorted(VOCAB_FILES))}", value)
    if key == "tiktoken_ranks" and f"{arg}.tiktoken" not in VOCAB_FILES:
        v.fail(path, "tiktoken_ranks must name an encoding with a pinned .tiktoken file "
               f"({', '.join(sorted(n[:-9] for n in VOCAB_FILES if n.endswith('.tiktoken')))})", value)
    if key in ("text_file", "root_file") and (not isinstance(arg, str) or Path(arg).is_absolute()):
        v.fail(path, f"{key} must be a relative path string", value)
    if key == "set" and not isinstance(arg, list):
        v.fail(path, "set must be a list", value)


def _special_tokens(v: _Validator, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, dict) and "attr" in value:
        data = v.mapping(value, "special_tokens", required={"attr"}, allowed={"attr", "literals"})
        literals = data.get("literals")
        if literals is not None and not (isinstance(literals, list) and all(isinstance(x, str) for x in literals)):
            v.fail("special_tokens.literals", "must be a list of strings", literals)
        return dict(data)
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(i, int) and not isinstance(i, bool) for k, i in value.items()
    ):
        v.fail("special_tokens", "must map literals to integer IDs, or be {attr: NAME[, literals: [...]]}", value)
    return dict(value)


def _alphabet(v: _Validator, value: Any) -> Any:
    if value is None:
        return None
    data = v.mapping(value, "alphabet", required=set(), allowed={"chars", "ranges", "vocab_attr"})
    if len(data) != 1:
        v.fail("alphabet", "needs exactly one of chars, ranges, vocab_attr", value)
    if "chars" in data and not isinstance(data["chars"], str):
        v.fail("alphabet.chars", "must be a string of the characters it can encode", data["chars"])
    if "ranges" in data and not (isinstance(data["ranges"], list) and all(
            isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r) for r in data["ranges"])):
        v.fail("alphabet.ranges", "must be a list of [first, last] code points", data["ranges"])
    if "vocab_attr" in data:
        v.opt_str(data, "vocab_attr", "alphabet.")
    return dict(data)


def _errors(v: _Validator, value: Any) -> tuple[ErrorRule, ...]:
    if value is None:
        return ()
    data = v.mapping(value, "errors", required=set(), allowed={"encode", "decode"})
    rules = []
    for op, items in data.items():
        if not isinstance(items, list):
            v.fail(f"errors.{op}", "must be a list of {exception, category[, match]}", items)
        for i, item in enumerate(items):
            path = f"errors.{op}[{i}]"
            rule = v.mapping(item, path, required={"exception", "category"}, allowed={"exception", "category", "match"})
            if rule["category"] not in CATEGORIES:
                v.fail(f"{path}.category", f"must be one of {', '.join(sorted(CATEGORIES))}", rule["category"])
            match = rule.get("match")
            if match is not None:
                try:
                    re.compile(str(match))
                except re.error as exc:
                    v.fail(f"{path}.match", f"must be a valid regular expression ({exc})", match)
            rules.append(ErrorRule(op, str(rule["exception"]), rule["category"],
                                   None if match is None else str(match)))
    return tuple(rules)


def _fingerprint(source: str, class_name: str | None, construct: Call, setup: tuple[Call, ...]) -> str:
    """A short stable ID-space name for a vocabulary the spec trains itself.

    Two specs that train the same class of the same file the same way share it; any
    other difference gives another ID space, so their IDs are never compared.
    """
    identity = {
        "source": Path(source).name, "class": class_name,
        "construct": [construct.method, list(construct.args), dict(construct.kwargs)],
        "setup": [[c.method, list(c.args), dict(c.kwargs)] for c in setup],
    }
    canonical = json.dumps(identity, sort_keys=True, ensure_ascii=True, default=repr)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]
