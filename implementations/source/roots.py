"""Where a source spec's upstream checkout is: ``--source-root``, then environment variables.

Precedence: a ``--source-root SPEC=DIR`` for that spec, a bare ``--source-root DIR``, the
spec's own ``root_env`` variable, then ``TOKCONF_SOURCE_ROOT``; a spec of your own with
no ``root_env`` may name its source relative to the spec file itself.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Iterable

from implementations.source.spec import SourceSpec, SourceUnavailable

__all__ = ["ROOT_ENV", "SourceRootError", "locate_source", "parse_source_root", "set_source_root"]

ROOT_ENV = "TOKCONF_SOURCE_ROOT"

_root_override: dict[str | None, Path] = {}


class SourceRootError(ValueError):
    """A ``--source-root`` value names no known spec; the message lists the known names."""


def parse_source_root(value: str, *, known: Iterable[str]) -> tuple[str | None, str]:
    """``SPEC=FOLDER`` -> ``(SPEC, FOLDER)``, a bare ``FOLDER`` -> ``(None, FOLDER)``.

    A key that is not one of ``known`` is an error, not a silent no-op: a misspelled
    ``minbpe-gtp4=DIR`` would otherwise leave the spec without its checkout and the run
    would test nothing it was asked to. An existing folder whose own name holds ``=`` is
    still a bare folder.

    >>> parse_source_root("minbpe-gpt4=/src/minbpe", known=["minbpe-gpt4"])
    ('minbpe-gpt4', '/src/minbpe')
    >>> parse_source_root("/src/minbpe", known=["minbpe-gpt4"])
    (None, '/src/minbpe')
    """
    names = sorted(set(known))
    spec, sep, folder = value.partition("=")
    if not sep or (spec not in names and Path(value).is_dir()):
        return None, value
    if spec not in names:
        close = difflib.get_close_matches(spec, names, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise SourceRootError(
            f"--source-root {value}: no source spec named {spec!r}; {hint}known spec names: "
            f"{', '.join(names) or 'none'}. Fix: --source-root NAME=FOLDER with one of those "
            f"names, or --source-root FOLDER for every spec"
        )
    if not folder:
        raise SourceRootError(f"--source-root {value}: no folder after '='. Fix: --source-root {spec}=FOLDER")
    return spec, folder


def set_source_root(path: str | os.PathLike[str] | None, *, spec: str | None = None) -> None:
    """Point source specs at a checkout (the ``--source-root`` flag).

    With ``spec=None`` the folder applies to every spec; with a spec name only to it.
    ``None`` forgets the override.
    """
    if path is None:
        _root_override.pop(spec, None)
    else:
        _root_override[spec] = Path(path)


def _root_for(spec: SourceSpec) -> tuple[Path | None, str]:
    """The checkout root that applies, and a description of where it came from."""
    if spec.name in _root_override:
        return _root_override[spec.name], f"--source-root for {spec.name}"
    if None in _root_override:
        return _root_override[None], "--source-root"
    for env in (spec.root_env, ROOT_ENV):
        if env and os.environ.get(env):
            return Path(os.environ[env]), f"{env}={os.environ[env]}"
    return None, ""


def locate_source(spec: SourceSpec) -> Path:
    """The absolute path of the spec's source file, or :class:`SourceUnavailable`.

    A shipped spec needs a checkout root (its ``root_env`` variable, ``TOKCONF_SOURCE_ROOT``
    or ``--source-root``); a spec of your own may name its source relative to itself.
    """
    relative = Path(spec.source)
    root, origin = _root_for(spec)
    if relative.is_absolute():
        candidate = relative
    elif root is not None:
        candidate = root / relative
    elif spec.root_env:
        raise SourceUnavailable(_missing_root_message(spec))
    else:
        candidate = Path(spec.base_dir) / relative
    if not candidate.is_file():
        where = f" (root from {origin})" if origin else ""
        raise SourceUnavailable(
            f"source file {candidate} for source:{spec.name} does not exist{where}. "
            + (f"Point {spec.root_env or ROOT_ENV} (or --source-root) at the top folder of a "
               f"checkout of {_upstream_text(spec)} that contains {spec.source}"
               if root is not None or spec.root_env else
               f"Fix the spec's `source` field ({spec.source!r}, relative to {spec.base_dir})")
        )
    return candidate.resolve()


def _upstream_text(spec: SourceSpec) -> str:
    return spec.upstream.get("url") or spec.upstream.get("repo") or "the upstream project"


def _missing_root_message(spec: SourceSpec) -> str:
    clone = spec.upstream.get("url")
    return (
        f"source:{spec.name} needs a local checkout of {_upstream_text(spec)} (tokconf ships "
        f"only the spec, never upstream code). Fix: "
        + (f"`git clone {clone} /path/to/checkout`, then " if clone else "")
        + f"set {spec.root_env}=/path/to/checkout (or {ROOT_ENV}=..., or pass "
        f"--source-root /path/to/checkout); the spec reads {spec.source} inside it"
    )
