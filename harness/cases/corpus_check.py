"""Corpus files checked before a run starts: a file that is not UTF-8 is named up front.

Reading a corpus is lazy (:mod:`harness.cases.corpus`), so a binary file in a folder
used to stop ``tokconf run`` only when the corpus phase reached it, after the cases had
run, and no report was written. :func:`first_invalid_utf8` reads every regular file
once, in chunks, with an incremental decoder, and reports the byte offset of the first
byte that is not UTF-8. Pipes (``--corpus /dev/stdin``) cannot be read twice and are
checked as they are read, as before.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from harness.cases.corpus import corpus_files

__all__ = ["NotUtf8", "first_invalid_utf8", "undecodable_files"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class NotUtf8:
    """One corpus file that is not UTF-8: where its first bad byte is."""

    file: str
    offset: int  # of the first byte that cannot start or continue a character
    found: bytes  # up to four bytes from there, to show
    in_folder: bool  # found under a --corpus FOLDER (then --skip-non-utf8 may leave it out)

    def describe(self) -> str:
        return f"{self.file}: not UTF-8 at byte {self.offset} ({self.found!r})"


def first_invalid_utf8(path: str | os.PathLike[str]) -> tuple[int, bytes] | None:
    """Byte offset and bytes of the first invalid UTF-8 in the file, or None if it is all UTF-8.

    A sequence cut off by the end of the file counts as invalid at its first byte.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    consumed = 0
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(_CHUNK)
            final = not chunk
            try:
                decoder.decode(chunk, final)
            except UnicodeDecodeError as exc:
                # exc.start is relative to the decoder's pending bytes plus this chunk
                pending = exc.object[: len(exc.object) - len(chunk)] if chunk else exc.object
                offset = consumed - len(pending) + exc.start
                return offset, bytes(exc.object[exc.start: exc.start + 4])
            consumed += len(chunk)
            if final:
                return None


def undecodable_files(paths: Iterable[str | os.PathLike[str]]) -> list[NotUtf8]:
    """Every regular corpus file that is not UTF-8, in reading order."""
    found = []
    for file, in_folder in corpus_files(paths):
        if not Path(file).is_file():
            continue  # a pipe: read once, checked as it is read
        try:
            bad = first_invalid_utf8(file)
        except OSError:
            continue  # reported, with its reason, when it is read
        if bad is not None:
            found.append(NotUtf8(str(file), bad[0], bad[1], in_folder))
    return found
