"""The one-line progress of ``snapshot`` and ``gate``: inputs done, and the one under way.

A long input holds either command for minutes (every path of a slow release on a million
characters, each bounded by ``--timeout``); a line that only counted sat at "600 inputs"
for 19 minutes with no sign of what it was doing. So the line names the input being
recorded as soon as it is taken up.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

__all__ = ["ProgressLine", "describe_input"]

#: inputs at least this long are named on the line; shorter ones pass too fast to read
NAMED_FROM = 10_000


def describe_input(source: str, characters: int) -> str:
    """What the line says of an input under way.

    >>> describe_input("long:letters*1000000", 1_000_000)
    'long:letters*1000000 (1,000,000 characters)'
    """
    return f"{source} ({characters:,} characters)"


class ProgressLine:
    """``verb: N inputs`` redrawn in place on ``stream``, with the long input under way.

    ``done(n)`` after each input; ``starting(source, characters)`` as one is taken up (the
    :data:`harness.golden.snapshot.Starting` hook). ``every``: redraw after every so many
    inputs (a gate of 100,000 corpus documents need not redraw each time)."""

    def __init__(self, verb: str, *, every: int = 1, stream: TextIO | None = None) -> None:
        self.verb = verb
        self.every = every
        self.stream = stream if stream is not None else sys.stderr
        self.count = 0
        self.now = ""
        self._width = 0

    def done(self, count: int) -> None:
        named = bool(self.now)  # a name on the line is cleared at once, whatever ``every`` says
        self.count = count
        self.now = ""
        if named or count % self.every == 0:
            self._draw()

    def starting(self, source: str, characters: int) -> None:
        if characters >= NAMED_FROM:
            self.now = describe_input(source, characters)
            self._draw()

    def hooks(self) -> dict[str, Any]:
        """The keyword arguments ``write_snapshot`` and ``run_gate`` take for progress."""
        return {"progress": self.done, "starting": self.starting}

    def end(self) -> None:
        print(file=self.stream)

    def _draw(self) -> None:
        line = f"{self.verb}: {self.count} inputs"
        if self.now:
            line += f"; now {self.now}"
        # pad over what a longer previous line left
        print("\r" + line.ljust(self._width), end="", file=self.stream, flush=True)
        self._width = len(line)
