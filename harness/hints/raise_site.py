"""Where an exception was raised, in words for an error message.

A plugin factory that raises used to be reported as ``calling <function factory at
0x7f...> failed: RuntimeError: boom``: no file, no line. The innermost frame of the
traceback is the ``raise`` (or the failing call) in the user's code; naming it lets the
reader open the file at that line without a traceback.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

__all__ = ["raise_site", "describe_raise", "callable_name"]


def raise_site(exc: BaseException) -> str | None:
    """``file:line in function`` of the innermost frame of ``exc``'s traceback (None without one).

    >>> def boom() -> None:
    ...     raise RuntimeError("boom")
    >>> try:
    ...     boom()
    ... except RuntimeError as exc:
    ...     raise_site(exc).endswith(" in boom")
    True
    """
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    if not frames:
        return None
    last = frames[-1]
    return f"{_shown(last.filename)}:{last.lineno} in {last.name}"


def describe_raise(exc: BaseException) -> str:
    """``RuntimeError: boom (raised at plugin.py:12 in factory)``: type, message, place."""
    site = raise_site(exc)
    words = f"{type(exc).__name__}: {exc}"
    return f"{words} (raised at {site})" if site else words


def callable_name(obj: Any) -> str:
    """``factory()`` rather than ``<function factory at 0x7f...>``, which nobody can look up."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return f"{name}()" if name else repr(obj)


def _shown(filename: str) -> str:
    # relative to the current folder when under it: what the user typed, and shorter
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if relative.startswith("..") else relative
