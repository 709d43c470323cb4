"""Rust panics in one line: what native code writes to stderr is held back, then summarised.

tiktoken and tokenizers are Rust behind pyo3. A panic becomes a Python exception that
tokconf records as an outcome (``pyo3_runtime.PanicException``), but Rust's panic hook
has already written ``thread '<unnamed>' panicked at src/lib.rs:150:37:``, the message
and, with ``RUST_BACKTRACE`` set, a backtrace of dozens of lines straight to file
descriptor 2, in the middle of the progress bar. Inside :func:`native_stderr_summarised`
fd 2 goes to a temporary file while Python's own ``sys.stderr`` keeps writing to the
terminal (a duplicate of the old fd 2); at the end each distinct panic is one line, and
anything else native code wrote is passed through unchanged. ``verbose=True`` leaves
fd 2 alone: everything as written, when it is written.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tempfile
from contextlib import contextmanager
from typing import Iterator, TextIO

__all__ = ["native_stderr_summarised", "summarise_panics"]

_PANIC = re.compile(r"^thread '[^']*'(?: \(\d+\))? panicked at (?P<where>.+?):?$")
#: what follows a panic's header and belongs to it: the message, the note, the backtrace
_PANIC_TAIL = re.compile(r"^(note: run with `RUST_BACKTRACE|stack backtrace:|\s+\d+: |\s+at |note: Some details)")


def summarise_panics(text: str) -> tuple[list[str], str]:
    """One line per distinct panic (with a count), and the rest of ``text`` untouched.

    >>> lines, rest = summarise_panics(
    ...     "thread '<unnamed>' (18984) panicked at src/lib.rs:150:37:\\n"
    ...     "range end index 2 out of range for slice of length 0\\n"
    ...     "stack backtrace:\\n   0: __rustc::rust_begin_unwind\\n             at /x.rs:1:2\\n"
    ...     "hello from elsewhere\\n")
    >>> lines
    ['Rust panicked at src/lib.rs:150:37: range end index 2 out of range for slice of length 0']
    >>> rest
    'hello from elsewhere\\n'
    """
    counts: dict[str, int] = {}
    rest: list[str] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        header = _PANIC.match(lines[index])
        if header is None:
            rest.append(lines[index])
            index += 1
            continue
        message = lines[index + 1] if index + 1 < len(lines) else ""
        key = f"Rust panicked at {header.group('where')}: {message.strip()}"
        counts[key] = counts.get(key, 0) + 1
        index += 2
        while index < len(lines) and _PANIC_TAIL.match(lines[index]):
            index += 1
    summary = [key if n == 1 else f"{key} ({n} times)" for key, n in counts.items()]
    return summary, "\n".join(rest)


@contextmanager
def native_stderr_summarised(*, verbose: bool, out: TextIO | None = None) -> Iterator[None]:
    """Hold back native writes to fd 2 for the block; then print panics as one line each."""
    if verbose:
        yield
        return
    try:
        real = sys.stderr.fileno() == 2
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        real = False
    if not real:  # sys.stderr is an object (pytest's capsys, an embedding): leave both alone
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    held = tempfile.TemporaryFile()
    original = sys.stderr
    terminal = io.TextIOWrapper(os.fdopen(os.dup(saved), "wb", buffering=0), encoding=original.encoding or "utf-8",
                                errors="backslashreplace", line_buffering=True, write_through=True)
    os.dup2(held.fileno(), 2)
    sys.stderr = terminal
    try:
        yield
    finally:
        terminal.flush()
        sys.stderr = original
        os.dup2(saved, 2)
        os.close(saved)
        terminal.close()
        held.seek(0)
        text = held.read().decode("utf-8", "replace")
        held.close()
        if text:
            panics, rest = summarise_panics(text)
            sink = out or original
            if rest.strip():
                sink.write(rest if rest.endswith("\n") else rest + "\n")
            for line in panics:
                sink.write(f"note: {line} (--verbose shows Rust's own output)\n")
            sink.flush()
