"""``source:...``: a tokenizer class from someone else's ``.py`` file or notebook.

Names it answers to:

- ``source:NAME`` — a spec shipped in ``implementations/source/specs/NAME.yaml`` (minbpe,
  GPT-2's ``encoder.py``, LLMs-from-scratch's notebooks), pointed at a local checkout by
  the spec's ``root_env`` variable, ``TOKCONF_SOURCE_ROOT`` or ``--source-root``;
- ``source:SPEC.yaml`` — a spec of your own;
- ``source:PATH.py:CLASS`` and ``source:PATH.ipynb:CLASS`` — with the spec next to the
  source as ``PATH.CLASS.tokconf.yaml`` or ``PATH.tokconf.yaml``.

The adapter is built from the spec alone (plain data, so it can move into a worker
process unchanged): locate the file, load it (a ``.py`` as a module of its package,
under a private name; a notebook by running only the statements that define the class,
see :mod:`implementations.source.notebook`), construct, run the ``setup`` calls, all
with the network refused. Every call into the foreign object returns plain data.
"""

from __future__ import annotations

import ast

from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.cases.fixtures import portable_argument, resolve_argument
from harness.interface import (
    Adapter,
    AllowedSpecial,
    Capabilities,
    DisallowedSpecial,
    resolve_special_policy,
)
from harness.outcomes import Operation, UnsupportedOperation
from harness.provenance import FileRecord, file_record
from harness.registry import AdapterSpec, Family, RegistryError
from harness.vocab import TIKTOKEN_ENCODING_FILES, seed_tiktoken_cache, vocab_unavailable_reason
from implementations.source import notebook as source_notebook
from implementations.foreign import (
    as_bytes,
    as_ids,
    as_text,
    classify_by_rules,
    no_network,
    reraise_if_user_exit,
)
from implementations.source.load import load_notebook_source, load_python_source, resolve_reference
from implementations.source.roots import locate_source
from implementations.source.spec import (
    SHIPPED_DIR,
    Call,
    SourceSpec,
    SourceSpecError,
    SourceUnavailable,
    load_spec,
    shipped_spec_names,
)

__all__ = ["SourceAdapter", "family", "spec_from_argument"]

KIND = "source"


# -- the adapter -------------------------------------------------------------------------


class SourceAdapter(Adapter):
    """A foreign tokenizer object driven by its spec."""

    library = ""  # not an installed distribution: reports show no version

    def __init__(self, spec: SourceSpec, *, name: str | None = None) -> None:
        self.spec = spec
        self.name = name or f"{KIND}:{spec.name}"
        self.encoding = spec.encoding
        self.path = locate_source(spec)
        self.files_read = _files_read(spec, self.path)
        self.selection: source_notebook.Selection | None = None
        for encoding in spec.tiktoken_cache:
            seed_tiktoken_cache(encoding)  # the source calls tiktoken.get_encoding itself
        with no_network(self.name):
            if spec.kind == "notebook":
                module, self.selection = load_notebook_source(self.path, spec)
            else:
                module = load_python_source(self.path)
            self._obj = self._call(module, spec.construct, "construct")
            for call in spec.setup:
                self._call(self._obj, call, "setup")
        self._require_methods()
        self._special = self._special_tokens()
        notes = list(spec.notes)
        policy = spec.special_policy
        if policy == "auto":
            policy, note = self._probe_policy()
            notes.append(note)
        if spec.decode_returns == "text" and spec.decode_bytes is None:
            notes.append("decode_bytes is the UTF-8 of the native text decode (no bytes-level decode)")
        elif spec.decode_bytes is not None and "pieces_attr" in spec.decode_bytes:
            notes.append("decode_bytes joins the pieces from the tokenizer's own tables "
                         f"({', '.join(spec.decode_bytes.values())}), as its decode does before "
                         "its final UTF-8 step")
        if spec.decode_errors_arg is None:
            notes.append("the native decode takes no errors= argument; it is not passed")
        self.capabilities = Capabilities(
            special_policy=policy,  # type: ignore[arg-type]
            encode_ordinary=True,
            alphabet=self._alphabet(),
            notes=tuple(notes),
        )

    def reproduce_flags(self) -> list[str]:
        # the checkout this adapter read, so a copied command reads the same one
        relative = Path(self.spec.source)
        if relative.is_absolute() or not self.spec.root_env and not self._root_from_flags():
            return []
        root = self.path.parents[len(relative.parts) - 1]
        return ["--source-root", f"{self.spec.name}={root}"]

    def _root_from_flags(self) -> bool:
        from implementations.source.roots import _root_for

        return _root_for(self.spec)[0] is not None

    def _require_methods(self) -> None:
        wanted = [("encode.method", self.spec.encode_method), ("decode.method", self.spec.decode_method),
                  ("encode_ordinary.method", self.spec.encode_ordinary_method)]
        for field_name, method in wanted:
            if method is not None and not callable(getattr(self._obj, method, None)):
                found = [n for n in dir(self._obj) if not n.startswith("_") and callable(getattr(self._obj, n, None))]
                raise AttributeError(
                    f"{type(self._obj).__name__} has no method {method}() (the spec's {field_name}); "
                    f"its methods: {', '.join(found) or 'none'}"
                )

    def _call(self, target: Any, call: Call, what: str) -> Any:
        try:
            function = getattr(target, call.method)
        except AttributeError as exc:
            found = [n for n in dir(target) if not n.startswith("_")]
            raise AttributeError(f"{what}: {call.method!r} not found on {getattr(target, '__name__', type(target).__name__)}; "
                                 f"it has: {', '.join(found[:20])}") from exc
        args = resolve_reference(list(call.args), self.spec)
        kwargs = resolve_reference(dict(call.kwargs), self.spec)
        return function(*args, **kwargs)

    @property
    def native(self) -> Any:
        return self._obj

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return dict(self._special)

    def _special_tokens(self) -> dict[str, int]:
        declared = self.spec.special_tokens
        if declared is None:
            return {}
        if "attr" not in declared:
            return dict(declared)
        table = getattr(self._obj, declared["attr"])
        literals = declared.get("literals") or [k for k in table if isinstance(k, str)]
        return {lit: table[lit] for lit in literals if lit in table and isinstance(table[lit], int)}

    def _probe_policy(self) -> tuple[str, str]:
        """``auto``: encode each special literal natively; did it become its one ID?"""
        if not self._special:
            return "none", "special policy probed: no special tokens declared"
        hits = {}
        for literal, token_id in self._special.items():
            try:
                hits[literal] = self._native_encode(literal, {}) == [token_id]
            except BaseException as exc:  # noqa: BLE001 - foreign code
                reraise_if_user_exit(exc)
                hits[literal] = False
        policy = "always-special" if all(hits.values()) else "none"
        return policy, f"special policy probed on this checkout: {policy} ({', '.join(f'{k}: {v}' for k, v in hits.items())})"

    def _alphabet(self) -> frozenset[str] | None:
        declared = self.spec.alphabet
        if declared is None:
            return None
        if "chars" in declared:
            return frozenset(declared["chars"])
        if "ranges" in declared:
            return frozenset(chr(c) for lo, hi in declared["ranges"] for c in range(lo, hi + 1))
        table = getattr(self._obj, declared["vocab_attr"])
        return frozenset(k for k in table if isinstance(k, str) and len(k) == 1)

    def _native_encode(self, text: str, kwargs: dict[str, Any]) -> list[int]:
        method = getattr(self._obj, self.spec.encode_method)
        with no_network(self.name):
            return as_ids(method(text, **kwargs), what=f"{self.spec.encode_method}()")

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        kwargs: dict[str, Any] = {}
        if self.spec.special_arg:
            allowed, disallowed = resolve_special_policy(set(self._special), allowed_special, disallowed_special)
            case = policy_case(allowed, disallowed, frozenset(self._special))
            if case not in self.spec.policy_map:
                raise UnsupportedOperation(
                    f"{self.name}: the spec maps no native {self.spec.special_arg} value for the "
                    f"policy case {case!r} (allowed={sorted(allowed)}, disallowed={sorted(disallowed)})"
                )
            value = self.spec.policy_map[case]
            if value == "$allowed":
                kwargs[self.spec.special_arg] = set(allowed)
            elif value != "$omit":
                kwargs[self.spec.special_arg] = resolve_reference(value, self.spec)
        return self._native_encode(text, kwargs)

    def encode_ordinary(self, text: str) -> list[int]:
        if self.spec.encode_ordinary_method is None:
            return self.encode(text, allowed_special=frozenset(), disallowed_special=())
        method = getattr(self._obj, self.spec.encode_ordinary_method)
        with no_network(self.name):
            return as_ids(method(text), what=f"{self.spec.encode_ordinary_method}()")

    def _native_decode(self, ids: Sequence[int], errors: str | None) -> Any:
        method = getattr(self._obj, self.spec.decode_method)
        kwargs = {self.spec.decode_errors_arg: errors} if self.spec.decode_errors_arg and errors else {}
        with no_network(self.name):
            return method(list(ids), **kwargs)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        what = f"{self.spec.decode_method}()"
        table = self.spec.decode_bytes
        if table is not None and "method" in table:
            with no_network(self.name):
                value = getattr(self._obj, table["method"])(list(ids))
            return as_bytes(value, what=f"{table['method']}()")
        if table is not None:
            return self._bytes_from_tables(ids, table)
        if self.spec.decode_returns == "bytes":
            return as_bytes(self._native_decode(ids, None), what=what)
        # lone surrogates in native text survive as their (invalid) UTF-8 bytes
        return as_text(self._native_decode(ids, None), what=what).encode("utf-8", "surrogatepass")

    def _bytes_from_tables(self, ids: Sequence[int], table: Mapping[str, str]) -> bytes:
        """The bytes the native decode joins: ``pieces[id]``, mapped through ``byte_map``.

        A piece is bytes (minbpe's ``vocab``) or an alias string (GPT-2's ``decoder``);
        ``byte_map`` maps an alias character (or a shuffled byte) to the real byte. An ID
        only in ``specials`` (ID -> literal) is the literal's UTF-8. A missing ID raises
        the table's own ``KeyError``, as the native decode would.
        """
        pieces = getattr(self._obj, table["pieces_attr"])
        byte_map = getattr(self._obj, table["byte_map_attr"]) if "byte_map_attr" in table else None
        specials = getattr(self._obj, table["specials_attr"]) if "specials_attr" in table else {}
        out = bytearray()
        for token_id in ids:
            if token_id not in pieces and token_id in specials:
                out += str(specials[token_id]).encode("utf-8")
                continue
            piece = pieces[token_id]
            if byte_map is not None:
                out += bytes(int(byte_map[unit]) for unit in piece)
            elif isinstance(piece, (bytes, bytearray)):
                out += piece
            else:
                raise TypeError(f"{table['pieces_attr']}[{token_id}] is {type(piece).__name__}; "
                                f"a text piece needs decode_bytes.byte_map_attr to become bytes")
        return bytes(out)

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        what = f"{self.spec.decode_method}()"
        if self.spec.decode_returns == "bytes":
            return as_bytes(self._native_decode(ids, None), what=what).decode("utf-8", errors=errors)
        return as_text(self._native_decode(ids, errors), what=what)

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        return classify_by_rules(self.spec.errors, op, exc)


def _files_read(spec: SourceSpec, path: Path) -> tuple[FileRecord, ...]:
    """The source file, and a spec of the user's own, each shown as given."""
    given, sep, _ = spec.name.rpartition(":")
    from_name = sep and given.endswith((".py", ".ipynb"))
    # source:PATH.py:CLASS shows PATH as typed; a spec's `source:` field is relative to its
    # checkout root (whose commit says which checkout), or absolute as the spec wrote it
    records = [file_record(given if from_name else spec.source, path)]
    if spec.spec_file is not None and Path(spec.spec_file).parent != SHIPPED_DIR.resolve():
        if spec.name.endswith((".yaml", ".yml")):
            shown = spec.name
        elif from_name:
            shown = (Path(given).parent / Path(spec.spec_file).name).as_posix()
        else:
            shown = spec.spec_file
        records.append(file_record(shown, spec.spec_file))
    return tuple(records)


def policy_case(allowed: frozenset[str], disallowed: frozenset[str], specials: frozenset[str]) -> str:
    """Which of the spec's policy cases a tiktoken-style policy is.

    >>> s = frozenset({"<a>", "<b>"})
    >>> [policy_case(frozenset(a), frozenset(d), s) for a, d in
    ...  [(s, ()), ({"<a>"}, {"<b>"}), ({"<a>"}, ()), ((), s), ((), ())]]
    ['all', 'some', 'some-ordinary', 'none-raise', 'none']
    """
    if allowed:
        if specials and allowed >= specials:
            return "all"
        return "some" if (specials - allowed) & disallowed else "some-ordinary"
    return "none-raise" if disallowed else "none"


# -- names and the registry ---------------------------------------------------------------

_TEMPLATE = """tokconf_source_spec: 1
encoding: trained            # or r50k_base, cl100k_base, ... if it loads an official vocabulary
special_policy: none         # tiktoken | always-special | ordinary-unless-allowed | none | auto
construct: {{args: []}}        # or {{factory: make_tokenizer, args: [...]}}
setup:
  - {{call: train, args: ["some training text", 300]}}
encode: {{method: encode}}
decode: {{method: decode, returns: text}}"""


def spec_from_argument(argument: str) -> SourceSpec:
    """The spec a ``source:ARGUMENT`` name stands for (parsed and validated, not built)."""
    if argument in shipped_spec_names():
        return load_spec(SHIPPED_DIR / f"{argument}.yaml", name=argument)
    # the spec's name becomes the adapter's: a path as given, or {cases}/... for a shipped
    # fixture, never an install's absolute path (harness.cases.fixtures)
    if argument.endswith((".yaml", ".yml")):
        if not resolve_argument(argument).is_file():
            raise SourceSpecError(f"spec file {argument} does not exist")
        return load_spec(resolve_argument(argument), name=portable_argument(argument))
    path_text, sep, class_name = argument.rpartition(":")
    if sep and path_text.endswith((".py", ".ipynb")) and class_name.isidentifier():
        source = resolve_argument(path_text)
        if not source.is_file():
            raise SourceSpecError(f"source file {source} does not exist (from source:{argument})")
        stem = source.with_suffix("")
        candidates = [Path(f"{stem}.{class_name}.tokconf.yaml"), Path(f"{stem}.tokconf.yaml")]
        for candidate in candidates:
            if candidate.is_file():
                return load_spec(candidate, name=f"{portable_argument(path_text)}:{class_name}",
                                 source=str(source.resolve()), class_name=class_name)
        raise SourceSpecError(
            f"source:{argument} needs an adapter spec next to the source: write "
            f"{candidates[0]} (or {candidates[1]}), for example:\n"
            + _TEMPLATE.format() + "\nSee implementations/source/specs/README.md for every field."
        )
    raise SourceSpecError(
        f"source:{argument}: not a shipped spec ({', '.join(shipped_spec_names())}), a SPEC.yaml, "
        f"or PATH.py:CLASS / PATH.ipynb:CLASS"
    )


def _check(spec: SourceSpec) -> str | None:
    """Why the adapter would not build, from what is cheap to know: the file, its syntax,
    the vocabularies it names. (A NameError while building still needs ``--build``.)"""
    try:
        path = locate_source(spec)
    except SourceUnavailable as exc:
        return str(exc)
    if path.suffix == ".py":
        try:
            ast.parse(path.read_bytes(), filename=str(path))
        except SyntaxError as exc:
            return (f"{path}:{exc.lineno}: the source does not parse ({exc.msg}); fix the file or "
                    "point --source-root at a checkout where it parses")
    for name in _vocab_files_needed(spec):
        reason = vocab_unavailable_reason(name)
        if reason is not None:
            return reason
    return None


def _vocab_files_needed(spec: SourceSpec) -> list[str]:
    needed: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            if "vocab_dir" in value or "models_dir" in value:
                needed.extend(["encoder.json", "vocab.bpe"])
            elif "vocab_file" in value:
                needed.append(value["vocab_file"])
            elif "tiktoken_ranks" in value:
                needed.append(f"{value['tiktoken_ranks']}.tiktoken")
            else:
                for v in value.values():
                    walk(v)

    for call in (spec.construct, *spec.setup):
        walk(list(call.args))
        walk(dict(call.kwargs))
    for encoding in spec.tiktoken_cache:
        needed.extend(TIKTOKEN_ENCODING_FILES[encoding])
    return needed


def adapter_spec(argument: str, spec: SourceSpec) -> AdapterSpec:
    name = f"{KIND}:{argument}"
    return AdapterSpec(
        name=name,
        encoding=spec.encoding,
        factory=lambda: SourceAdapter(spec, name=name),
        library="",
        description=spec.description or f"{spec.class_name or spec.construct.method} from {spec.source}",
        check=lambda: _check(spec),
    )


def _resolve(argument: str) -> AdapterSpec:
    try:
        spec = spec_from_argument(argument)
        return adapter_spec(spec.name, spec)
    except SourceSpecError as exc:
        raise RegistryError(str(exc)) from exc


def _shipped() -> list[AdapterSpec]:
    out = []
    for name in shipped_spec_names():
        try:
            out.append(adapter_spec(name, load_spec(SHIPPED_DIR / f"{name}.yaml", name=name)))
        except SourceSpecError as exc:  # a broken shipped spec shows in `list`, it does not hide the rest
            message = str(exc)
            out.append(AdapterSpec(name=f"{KIND}:{name}", encoding="unknown", factory=_raiser(message),
                                   check=lambda message=message: message))
    return out


def _raiser(message: str):
    def factory() -> Adapter:
        raise SourceSpecError(message)
    return factory


def family() -> Family:
    from implementations.source.hooks import hooks

    return Family(kind=KIND, specs=_shipped, resolve=_resolve, hooks=hooks(spec_from_argument))
