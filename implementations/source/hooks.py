"""What the source family offers the engine by name (:meth:`harness.registry.Registry.hook`).

``--source-root [SPEC=]FOLDER`` is a source-family option: the front doors hand the
flag's text to the ``source-root`` hook, and a worker re-applies a parsed root through
``set-source-root``; the engine never imports this family to do either.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from implementations.source.roots import parse_source_root, set_source_root
from implementations.source.spec import shipped_spec_names

__all__ = ["hooks", "source_spec_names"]


def source_spec_names(impls: Sequence[str], *, spec_of: Callable[[str], Any]) -> list[str]:
    """Spec names ``--source-root NAME=DIR`` may use: the shipped specs and those named by ``--impl``."""
    names = set(shipped_spec_names())
    for name in impls:
        kind, _, argument = name.partition(":")
        if kind != "source" or not argument:
            continue
        names.add(argument)
        try:
            names.add(spec_of(argument).name)
        except Exception:  # noqa: BLE001 - a bad spec is reported when the adapter is built
            pass
    return sorted(names)


def hooks(spec_of: Callable[[str], Any]) -> tuple[tuple[str, Callable[..., Any]], ...]:
    """``spec_of``: the family's spec reader (given, so this module does not import the adapter)."""

    def apply_source_root(value: str, *, impls: Sequence[str] = ()) -> tuple[str | None, str]:
        """Parse one ``--source-root`` value and apply it (raises SourceRootError, a ValueError)."""
        spec, folder = parse_source_root(value, known=source_spec_names(impls, spec_of=spec_of))
        set_source_root(folder, spec=spec)
        return spec, folder

    def spec_names(impls: Sequence[str]) -> list[str]:
        return source_spec_names(impls, spec_of=spec_of)

    return (("source-root", apply_source_root), ("set-source-root", set_source_root),
            ("source-spec-names", spec_names))
