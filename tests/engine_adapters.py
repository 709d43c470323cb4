"""A wrong adapter that also says which process called it: proof of where units ran.

``wrong:crlf-where`` is :class:`tests.wrong_adapters.CrlfAsLf` (CRLF read as LF, so the run
has a real divergence to find, shrink and report) that, when ``TOKCONF_TEST_CALLS`` names
a folder, notes in ``<folder>/<pid>`` each text of :data:`MARKED` it encodes, and
``other`` once per process for anything else. Cheap on purpose: a slow adapter would get a
smaller share of the generated inputs and the runs compared would differ for that alone.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.registry import AdapterSpec
from tests.wrong_adapters import ENCODING, CrlfAsLf, _Wrapped

#: the case texts of tests/test_engine.py, which the runs note wherever they are encoded
MARKED = ("engine unit one\r\nline two", "engine unit two")
_seen_other: set[int] = set()


class CrlfWhere(CrlfAsLf):
    name = "wrong:crlf-where"

    def encode(self, text, **policy):  # type: ignore[no-untyped-def, override]
        folder = os.environ.get("TOKCONF_TEST_CALLS")
        if folder:
            pid = os.getpid()
            note = f"case {MARKED.index(text)}" if text in MARKED else None
            if note is None and pid not in _seen_other:
                _seen_other.add(pid)
                note = "other"
            if note is not None:
                with open(Path(folder) / str(pid), "a", encoding="utf-8") as out:
                    out.write(note + "\n")
        return super().encode(text, **policy)


def crlf_where() -> AdapterSpec:
    return AdapterSpec(name=CrlfWhere.name, encoding=ENCODING, factory=CrlfWhere, library="tiktoken",
                       description="deliberately wrong: CRLF read as LF; notes the processes that call it")


def some_faults() -> object:
    """Six faults of ``tokconf selftest``, one per area (the whole list takes a long run)."""
    from harness.selftest.score import FAULTS, family

    wanted = ("digits-in-fours", "vocabulary-cut", "loose-special-match", "decode-per-token", "batch-reversed",
              "crlf-to-lf")
    return family([f for f in FAULTS if f.fault in wanted])


class LongTail(_Wrapped):
    """Drops the last character of any input over :attr:`OVER` characters: only a long
    input shows it (generated and cased inputs stay far below; the long tier's 6,000 does
    not). Small enough that shrinking its findings without a time bound, on both fronts,
    costs minutes, not a quarter of an hour."""

    name = "wrong:long-tail"
    OVER = 5_000

    def encode(self, text, **policy):  # type: ignore[no-untyped-def, override]
        return super().encode(text[:-1] if len(text) > self.OVER else text, **policy)


def long_tail() -> AdapterSpec:
    return AdapterSpec(name=LongTail.name, encoding=ENCODING, factory=LongTail, library="tiktoken",
                       description=f"deliberately wrong: drops the last character of inputs over {LongTail.OVER:,} characters")
