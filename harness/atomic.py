"""Write a file atomically: readers see the old file or the whole new one, never half.

Every file tokconf writes (reports, caches of converted tokenizers and recovered merges,
trained models, seeded vocabulary files) goes through :func:`write_atomic`.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

__all__ = ["open_atomic", "write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` (text is encoded with ``encoding``) to ``path`` via ``os.replace``.

    The file gets the usual permissions (``mkstemp`` would leave it private). A failure
    leaves any previous file untouched and no temporary file behind.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode(encoding) if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


@contextmanager
def open_atomic(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file to stream into; it replaces ``path`` only when the block ends normally.

    For outputs too big to hold in memory (a golden of 100,000 documents). The data is
    flushed to disk (``fsync``) before the rename, so a crash or a ``SIGKILL`` at any
    moment leaves either the previous file or the whole new one: at worst a stray
    ``NAME.*.tmp`` beside it. An exception inside the block removes the temporary file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
