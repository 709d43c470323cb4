"""The known encodings: the YAML files shipped in ``harness/encodings/data/`` and any a user
adds with ``--encoding-file``. Read once per process; each is schema-checked on reading."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from harness.encodings.spec import EncodingError, EncodingSpec, parse_encoding

__all__ = ["DATA_DIR", "add_encoding_file", "encoding_spec", "encoding_specs", "is_on_request", "reference_of"]

DATA_DIR = Path(__file__).resolve().parent / "data"

#: encodings added with --encoding-file in this process, by name
_added: dict[str, EncodingSpec] = {}


@lru_cache(maxsize=1)
def _builtin() -> dict[str, EncodingSpec]:
    out: dict[str, EncodingSpec] = {}
    for path in sorted(DATA_DIR.glob("*.yaml")):
        spec = parse_encoding(path.read_text(encoding="utf-8"), origin=str(path), base=path.parent)
        if spec.name in out:
            raise EncodingError(f"{path}: encoding {spec.name!r} is also defined by {out[spec.name].origin}")
        out[spec.name] = spec
    return out


def encoding_specs() -> dict[str, EncodingSpec]:
    """Every known encoding by name: the built-in ones, then the user's."""
    return {**_builtin(), **_added}


def encoding_spec(name: str) -> EncodingSpec | None:
    return encoding_specs().get(name)


def add_encoding_file(path: str | os.PathLike[str]) -> EncodingSpec:
    """Read a user's encoding file (``--encoding-file``) and make its encoding known.

    A name that a built-in encoding has is refused: the same name must mean one ID space.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise EncodingError(f"--encoding-file {path}: there is no such file; give the path of an encoding YAML "
                            f"(see docs/encodings.md)")
    spec = parse_encoding(file.read_text(encoding="utf-8"), origin=str(file), base=file.resolve().parent)
    known = _builtin().get(spec.name)
    if known is not None:
        raise EncodingError(f"{file}: encoding name {spec.name!r} is a built-in encoding ({known.origin}); "
                            f"give yours another name")
    _added[spec.name] = spec
    return spec


def reference_of(encoding: str) -> str | None:
    """The adapter an encoding file names as its reference, or ``None`` for an unknown one."""
    spec = encoding_spec(encoding)
    return spec.reference if spec is not None else None


def is_on_request(encoding: str) -> bool:
    """Whether an encoding's adapters join a run only when the encoding (or the adapter) is
    named: the open-weight vocabularies are 128k-250k tokens each, and a default run that
    walked all of them would be several times slower than the one the README promises."""
    spec = encoding_spec(encoding)
    return spec is not None and not spec.run_by_default
