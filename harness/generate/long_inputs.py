"""The long-input tier: runs of 10^4 to 10^6 characters, generated, never stored.

Tokenizers meet their limits on long runs of one kind of character: regex engines run
out of backtracking stack (tiktoken's o200k_base on a million spaces), BPE over one
huge pre-token goes quadratic, recursion overflows. ``tokconf run --long`` (and the
``nightly`` profile) feeds every open-vocabulary adapter a run of each kind below at
each length, with the reference of its encoding, through the generated checks.

Each input is a :class:`harness.cases.model.GeneratedText`: the same rule a case can
name (``text_generated: {repeat: " ", times: 1000000}``), so a finding here becomes a
small case file, not a megabyte of YAML.

How far each adapter goes is decided as it runs (:mod:`harness.run.long_tier`): a size
is skipped when the time the last one took, scaled by how it grew, says it would take
longer than :attr:`LongOptions.seconds_per_input`.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.cases.model import GeneratedText

__all__ = ["LONG_KINDS", "LONG_LENGTHS", "LongOptions", "long_text", "parse_sizes"]

#: kind -> the unit repeated. ``mixed`` cycles through every other kind's unit.
LONG_KINDS: dict[str, str] = {
    "spaces": " ",
    "tabs": "\t",
    "ideographic-spaces": "\u3000",
    "newlines": "\n",
    "letters": "a",
    "digits": "7",
    "cjk": "\u4f60",
    "mixed": " \ta\u3000 7\n\u4f60",
}
LONG_LENGTHS: tuple[int, ...] = (10_000, 100_000, 1_000_000)


@dataclass(frozen=True)
class LongOptions:
    kinds: tuple[str, ...] = tuple(LONG_KINDS)
    lengths: tuple[int, ...] = LONG_LENGTHS
    #: seconds one adapter's checks on one long input may be expected to take (the
    #: reference of the encoding three times that: without it nothing is compared):
    #: tiktoken takes 2 to 10 on a million characters, a pure-Python BPE ten times that
    seconds_per_input: float = 20.0

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in LONG_KINDS]
        if unknown:
            raise ValueError(f"long input kinds are {', '.join(LONG_KINDS)}; not {', '.join(unknown)}")
        if list(self.lengths) != sorted(self.lengths) or not self.lengths or self.lengths[0] < 1:
            raise ValueError(f"long input lengths must be positive and ascending, not {self.lengths}")


def long_text(kind: str, length: int) -> GeneratedText:
    """The input of ``kind`` with ``length`` characters (whole units).

    >>> long_text("spaces", 5).text(), long_text("mixed", 16).times
    ('     ', 2)
    """
    unit = LONG_KINDS[kind]
    return GeneratedText(repeat=unit, times=max(1, length // len(unit)))


def parse_sizes(text: str) -> tuple[int, ...]:
    """The lengths of ``--long-sizes`` (raises ValueError saying what is wrong).

    >>> parse_sizes("10000, 100000")
    (10000, 100000)
    """
    try:
        sizes = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError as exc:
        raise ValueError(f"{text!r}: expected lengths separated by commas, such as 10000,100000") from exc
    if not sizes or min(sizes) < 1 or list(sizes) != sorted(set(sizes)):
        raise ValueError(f"{text!r}: expected positive lengths in ascending order, such as 10000,100000")
    return sizes
