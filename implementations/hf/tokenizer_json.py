"""``hf-json:PATH``: any Hugging Face ``tokenizer.json``, loaded as HF loads it.

``PATH`` is either a ``tokenizer.json`` or a small adapter spec (``*.yaml``/``*.yml``)::

    tokenizer: my-model/tokenizer.json   # relative to the spec's folder
    encoding: cl100k_base                # the ID space the file claims (optional)
    add_special_tokens: false            # run HF's post-processor (BOS/EOS templates)?
    notes: ["known difference ..."]      # declared differences, shown in reports

A spec may also sit next to the file as ``PATH.tokconf.yaml`` (its ``tokenizer`` key is
then optional). Without a claimed encoding, a file whose vocabulary *is* one of the
pinned rank tables claims that encoding (:mod:`implementations.hf.recognize`) and is
compared with its reference, sharing what cases declare about ``hf:<encoding>``; any
other file claims its own ID space, ``hf-json:<first 12 hex digits of the file's
SHA-256>``, and runs without ID parity. :func:`hf_json_spec` and :func:`load_hf_json` take ``encoding=`` to
override the claim (for a ``--encoding`` flag).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.cases.fixtures import portable_argument, resolve_argument
from harness.provenance import file_record
from harness.registry import AdapterSpec, Family, RegistryError
from harness.vocab import bytes_to_unicode
from implementations.hf.adapters import HFAdapter
from implementations.hf.recognize import hf_name_for, recognize_file

__all__ = ["HFJsonError", "HFJsonSpec", "family", "hf_json_spec", "load_hf_json", "read_spec"]

KIND = "hf-json"
SIDECAR_SUFFIX = ".tokconf.yaml"
SPEC_KEYS = ("tokenizer", "encoding", "add_special_tokens", "notes")
#: Names that are one ID space (the house convention: GPT-2 *is* r50k_base).
ENCODING_ALIASES = {"gpt2": "r50k_base"}

_SPEC_HELP = (
    "an adapter spec is a YAML mapping such as `tokenizer: path/to/tokenizer.json` and "
    "`encoding: cl100k_base` (keys: " + ", ".join(SPEC_KEYS) + ")"
)


class HFJsonError(RegistryError):
    """A ``hf-json:`` argument, spec or ``tokenizer.json`` is missing or invalid."""


@dataclass(frozen=True)
class HFJsonSpec:
    """What ``hf-json:ARGUMENT`` resolves to."""

    argument: str
    tokenizer: Path
    encoding: str
    sha256: str
    add_special_tokens: bool = False
    notes: tuple[str, ...] = ()
    spec_file: Path | None = None


def default_encoding(sha256: str) -> str:
    """The ID space of a file that claims none: its own.

    >>> default_encoding("ab" * 32)
    'hf-json:abababababab'
    """
    return f"{KIND}:{sha256[:12]}"


def read_spec(argument: str, *, encoding: str | None = None) -> HFJsonSpec:
    """Resolve ``argument`` (a tokenizer.json or a spec YAML) and check what it names."""
    if not argument:
        raise HFJsonError(
            f"{KIND}: no path given; write {KIND}:PATH/TO/tokenizer.json or {KIND}:SPEC.yaml"
        )
    given = resolve_argument(argument)
    argument = portable_argument(argument)  # the name never holds an install's absolute path
    sidecar = given.with_name(given.name + SIDECAR_SUFFIX)
    if given.suffix in (".yaml", ".yml"):
        spec_file: Path | None = given
        data = _read_yaml(given, explicit=True)
        if "tokenizer" not in data:
            raise HFJsonError(
                f"{KIND}: adapter spec {given.resolve()} has no `tokenizer:` key; add "
                f"`tokenizer: path/to/tokenizer.json` (relative to the spec's folder)"
            )
    else:
        spec_file = sidecar if sidecar.is_file() else None
        data = _read_yaml(sidecar, explicit=False) if spec_file else {}
    tokenizer = given
    if "tokenizer" in data:
        tokenizer = _spec_path(data["tokenizer"], spec_file)
        if spec_file == sidecar and tokenizer.resolve() != given.resolve():
            raise HFJsonError(
                f"{KIND}: {spec_file.resolve()} sits next to {given.resolve()} but names another "
                f"tokenizer ({tokenizer.resolve()}); remove its `tokenizer:` key or make it match"
            )
    raw = _read_tokenizer_bytes(tokenizer, argument)
    sha = hashlib.sha256(raw).hexdigest()
    if encoding is not None:
        claimed = _encoding(encoding, None)
    elif "encoding" in data:
        claimed = _encoding(data["encoding"], spec_file)
    else:  # said nowhere: its vocabulary says it, if it is one of the pinned ones
        claimed = recognize_file(raw) or default_encoding(sha)
    return HFJsonSpec(
        argument=argument,
        tokenizer=tokenizer,
        encoding=claimed,
        sha256=sha,
        add_special_tokens=_flag(data.get("add_special_tokens", False), spec_file),
        notes=_notes(data.get("notes", ()), spec_file),
        spec_file=spec_file,
    )


def _read_yaml(path: Path, *, explicit: bool) -> dict[str, Any]:
    if not path.is_file():
        raise HFJsonError(
            f"{KIND}: adapter spec {path.resolve()} does not exist"
            + (" (it is a folder)" if path.is_dir() else "")
            + f"; {_SPEC_HELP}"
        )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise HFJsonError(f"{KIND}: cannot read adapter spec {path.resolve()}: {exc}; {_SPEC_HELP}") from exc
    if data is None and not explicit:
        return {}
    if not isinstance(data, dict):
        raise HFJsonError(
            f"{KIND}: adapter spec {path.resolve()} holds a {type(data).__name__}, not a mapping; {_SPEC_HELP}"
        )
    unknown = sorted(str(k) for k in data if k not in SPEC_KEYS)
    if unknown:
        raise HFJsonError(
            f"{KIND}: adapter spec {path.resolve()} has unknown keys {unknown}; the keys are "
            f"{', '.join(SPEC_KEYS)}"
        )
    return data


def _spec_path(value: Any, spec_file: Path | None) -> Path:
    if not isinstance(value, str) or not value:
        raise HFJsonError(
            f"{KIND}: in {spec_file}, `tokenizer:` must be a path (a string), found {value!r}"
        )
    path = Path(value).expanduser()
    return path if path.is_absolute() or spec_file is None else spec_file.parent / path


def _encoding(value: Any, spec_file: Path | None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise HFJsonError(
            f"{KIND}: the claimed encoding must be a non-empty name such as cl100k_base, found "
            f"{value!r}" + (f" in {spec_file}" if spec_file else "")
        )
    return ENCODING_ALIASES.get(value.strip(), value.strip())


def _flag(value: Any, spec_file: Path | None) -> bool:
    if not isinstance(value, bool):
        raise HFJsonError(f"{KIND}: in {spec_file}, `add_special_tokens:` must be true or false, found {value!r}")
    return value


def _notes(value: Any, spec_file: Path | None) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise HFJsonError(f"{KIND}: in {spec_file}, `notes:` must be a list of strings, found {value!r}")
    return tuple(value)


def _read_tokenizer_bytes(path: Path, argument: str) -> bytes:
    where = path.resolve()
    if path.is_dir():
        hint = (
            f"; did you mean {KIND}:{path / 'tokenizer.json'}?"
            if (path / "tokenizer.json").is_file()
            else "; give the tokenizer.json inside it"
        )
        raise HFJsonError(f"{KIND}:{argument}: {where} is a folder, not a tokenizer.json{hint}")
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise HFJsonError(
            f"{KIND}:{argument}: no tokenizer.json at {where}; give the path of a file saved by "
            f"Hugging Face tokenizers (Tokenizer.save), or of an adapter spec YAML"
        ) from exc
    except OSError as exc:
        raise HFJsonError(f"{KIND}:{argument}: cannot read {where}: {exc}") from exc
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise HFJsonError(
            f"{KIND}:{argument}: {where} is not JSON ({exc}); it must be a tokenizer.json "
            f"written by Hugging Face tokenizers"
        ) from exc
    if not isinstance(document, dict) or "model" not in document:
        raise HFJsonError(
            f"{KIND}:{argument}: {where} is JSON but not a tokenizer.json (no top-level "
            f"\"model\"); save one with tokenizers' Tokenizer.save(path)"
        )
    return raw


def load_hf_json(argument: str, *, encoding: str | None = None, name: str | None = None) -> HFAdapter:
    """Build the adapter for ``hf-json:ARGUMENT`` (``encoding`` overrides any claim)."""
    return _build(read_spec(argument, encoding=encoding), name=name)


def _build(spec: HFJsonSpec, *, name: str | None = None) -> HFAdapter:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(spec.tokenizer))
    except Exception as exc:
        raise HFJsonError(
            f"{KIND}:{spec.argument}: Hugging Face tokenizers cannot load {spec.tokenizer.resolve()}: "
            f"{exc}; the file must be a tokenizer.json this tokenizers version can read"
        ) from exc
    adapter = HFAdapter(
        tokenizer,
        name=name or f"{KIND}:{spec.argument}",
        encoding=spec.encoding,
        notes=(*_file_notes(tokenizer, spec), *spec.notes),
        add_special_tokens=spec.add_special_tokens,
    )
    like = hf_name_for(spec.encoding)
    if like is not None:
        # the same library's native behaviour (added tokens always special, gap IDs
        # decode to '', lone surrogates refused) is declared once, for hf:<encoding>
        adapter.declares_like = (like,)
    files = [spec.tokenizer] + ([spec.spec_file] if spec.spec_file is not None else [])
    adapter.files_read = tuple(file_record(portable_argument(f.as_posix()), f) for f in files)
    return adapter


def _file_notes(tokenizer: Any, spec: HFJsonSpec) -> list[str]:
    """Settings in the file that change what encode returns, said out loud."""
    notes = [f"loaded from {spec.tokenizer} (sha256 {spec.sha256})"]
    if tokenizer.normalizer is not None:
        notes.append(f"the file has a normalizer ({type(tokenizer.normalizer).__name__}): text is changed before splitting")
    if tokenizer.post_processor is not None:
        state = "applied" if spec.add_special_tokens else "not applied (add_special_tokens: false)"
        notes.append(f"the file has a post-processor ({type(tokenizer.post_processor).__name__}), {state}")
    if tokenizer.truncation is not None:
        notes.append(f"the file sets truncation {tokenizer.truncation}: long inputs are cut")
    if tokenizer.padding is not None:
        notes.append(f"the file sets padding {tokenizer.padding}")
    added = tokenizer.get_added_tokens_decoder().values()
    plain = sorted(t.content for t in added if not t.special)
    if plain:
        notes.append(f"non-special added tokens, always matched before splitting: {plain[:10]}")
    if type(tokenizer.decoder).__name__ == "ByteLevel":
        shifted = {ch for b, ch in bytes_to_unicode().items() if ord(ch) != b}
        changed = sorted(t.content for t in added if shifted & set(t.content))
        if changed:
            notes.append(
                f"added tokens decode through the ByteLevel alphabet, so these do not decode to "
                f"their own text: {changed[:10]}"
            )
    return notes


def hf_json_spec(argument: str, *, encoding: str | None = None) -> AdapterSpec:
    """The registry entry for ``hf-json:ARGUMENT``; reads the spec and hashes the file."""
    spec = read_spec(argument, encoding=encoding)
    return AdapterSpec(
        name=f"{KIND}:{spec.argument}",
        encoding=spec.encoding,
        factory=lambda: _build(spec),
        library="tokenizers",
        description=f"tokenizer.json at {spec.tokenizer}"
        + (f" (spec {spec.spec_file})" if spec.spec_file else ""),
        check=lambda: _check(spec),
    )


def _check(spec: HFJsonSpec) -> str | None:
    if importlib.util.find_spec("tokenizers") is None:
        return "the tokenizers package is not installed: `pip install tokenizers`"
    if not spec.tokenizer.is_file():
        return f"{spec.tokenizer.resolve()} is gone; give the path of an existing tokenizer.json"
    return None


def family() -> Family:
    # ``--encoding`` gives a bare tokenizer.json the ID space it claims (the claim-encoding hook)
    return Family(kind=KIND, resolve=hf_json_spec, hooks=(("claim-encoding", hf_json_spec),))
