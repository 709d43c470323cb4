"""The long-input tier: runs of 10^4 to 10^6 characters, generated, never stored.

Tokenizers meet their limits on long runs of one kind of character: regex engines run
out of backtracking stack (tiktoken's o200k_base on a million spaces), BPE over one
huge pre-token goes quadratic, recursion overflows. ``tokconf run --long`` (and the
``nightly`` profile) feeds every open-vocabulary adapter a run of each kind below at
each length, with the reference of its encoding, through the generated checks.

Each input is a :class:`harness.cases.model.GeneratedText`: the same rule a case can
name (``text_generated: {repeat: " ", times: 1000000}``), so a finding here becomes a
small case file, not a megabyte of YAML.

Every size is tried on every adapter (:mod:`harness.run.long_tier`), each in a worker
under the per-call timeout: a slow adapter's input becomes a ``timeout`` outcome, never
a skipped size.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.cases.model import GeneratedText

__all__ = ["DEFAULT_LONG", "DEFAULT_LONG_CHECKS", "KINDS", "LONG_KINDS", "LONG_LENGTHS", "LongOptions", "long_text",
           "parse_sizes"]

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

#: Kinds of the default run's long inputs besides those above (goldens keep to
#: :data:`LONG_KINDS`, so recorded snapshots do not change): mixed whitespace alone,
#: emoji sequences with joiners and skin-tone modifiers, and ordinary prose, written for
#: tokconf, repeated: what users paste.
EXTRA_KINDS: dict[str, str] = {
    "whitespace": " \t\n \u3000\r\n\u00a0  ",
    "emoji": "\U0001F469\U0001F3FD\u200D\U0001F4BB\U0001F3F3\uFE0F\u200D\U0001F308\U0001F44D\U0001F3FF ",
    "document": ("The report was due on Monday, so Mara spent the weekend reading logs. Each line said "
                 "what a server did, when, and for whom; most of it was dull. On Sunday night she found "
                 "the one request that took 41 seconds instead of 40 milliseconds. \"Why?\" she wrote "
                 "in the margin, and then, after an hour: \"Because the cache was cold.\"\n\n"),
}
KINDS: dict[str, str] = {**LONG_KINDS, **EXTRA_KINDS}


@dataclass(frozen=True)
class LongOptions:
    kinds: tuple[str, ...] = tuple(KINDS)
    lengths: tuple[int, ...] = LONG_LENGTHS
    #: the generated checks each long input runs; None: every one (the ``--long`` tier)
    checks: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in KINDS]
        if unknown:
            raise ValueError(f"long input kinds are {', '.join(KINDS)}; not {', '.join(unknown)}")
        if list(self.lengths) != sorted(self.lengths) or not self.lengths or self.lengths[0] < 1:
            raise ValueError(f"long input lengths must be positive and ascending, not {self.lengths}")


def long_text(kind: str, length: int) -> GeneratedText:
    """The input of ``kind`` with ``length`` characters (whole units).

    >>> long_text("spaces", 5).text(), long_text("mixed", 16).times
    ('     ', 2)
    """
    unit = KINDS[kind]
    return GeneratedText(repeat=unit, times=max(1, -(-length // len(unit))))


#: The checks of the default run's long inputs: the IDs against the reference, the round
#: trip, and the decode of the reference's IDs; what a lost or changed character at the
#: end of a long input shows in. Each is one or two calls per adapter. The rest of the
#: generated checks (the API surface's ~30 paths, per-token and stream decode over tens of
#: thousands of tokens, the batch) cost 40 to 60 times as much on these inputs, and stay in
#: the ``--long`` tier.
DEFAULT_LONG_CHECKS: tuple[str, ...] = ("id-parity", "round-trip", "decode")

#: Every default run (``ci`` without ``--long``): one input of at least 100,000 characters
#: per class the issue names (letters, digits, spaces, mixed whitespace, CJK, emoji, a
#: long ordinary document), after a 10^4 step (what an adapter that declares a
#: ``long_limit`` of 10^4 still takes), through :data:`DEFAULT_LONG_CHECKS`; the 10^6 tier
#: and every generated check stay behind ``--long``.
DEFAULT_LONG = LongOptions(kinds=("letters", "digits", "spaces", "whitespace", "cjk", "emoji", "document"),
                           lengths=(10_000, 100_000), checks=DEFAULT_LONG_CHECKS)


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
