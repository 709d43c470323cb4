"""Write report files atomically: a reader never sees half a page."""

from __future__ import annotations

from pathlib import Path

from harness.atomic import write_atomic

__all__ = ["write_text_atomic"]


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically (see :mod:`harness.atomic`).

    The text must hold no lone surrogates (the report renderers guarantee it).
    """
    return write_atomic(path, text)
