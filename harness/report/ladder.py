"""Which releases of a ladder show each behaviour, and where it changed (issue 22).

A ladder run (``tokconf run --ladder``) compares several releases of one library side
by side; each release's divergences are in parity.json like any adapter's. This module
folds them per behaviour (check, kind, encoding) into the releases that show it,
in ladder order, as runs ``first..last``, and names the release after each run: the one
that changed it. So "which release fixed this" is read off, not guessed. Written into
parity.json as ``ladders`` (:func:`ladder_sections`) and printed after the run's summary.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence, TextIO

__all__ = ["Behaviour", "behaviours", "ladder_sections", "print_ladder", "release_span"]


@dataclass(frozen=True)
class Behaviour:
    """One divergence as it shows across the ladder's releases."""

    check: str
    kind: str
    encoding: str
    #: an input that shows it (the first seen), escaped as parity.json shows it (cut at 120)
    input: str
    #: the case of that input, when it is one
    case: str | None
    #: the releases that show it, in ladder order, with each one's statuses there
    shown: tuple[tuple[str, str], ...]
    #: (first, last) release of each run of consecutive releases that show it
    runs: tuple[tuple[str, str], ...]
    #: the release right after each run (where it stopped showing), when there is one
    changed_in: tuple[str, ...]


def _runs(present: Sequence[bool], order: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
    runs, changed, start = [], [], None
    for i, here in enumerate([*present, False]):
        if here and start is None:
            start = i
        elif not here and start is not None:
            runs.append((order[start], order[i - 1]))
            if i < len(order):
                changed.append(order[i])
            start = None
    return runs, changed


def behaviours(data: Mapping[str, Any], releases: Mapping[str, str], order: Sequence[str]) -> list[Behaviour]:
    """Every behaviour the ladder's adapters (``releases``: adapter -> release) show in the
    run ``data`` (parity.json), folded across releases; ``order`` is the ladder, oldest first.

    >>> data = {"divergences": [
    ...     {"adapter": "t@0.9:e", "check": "c", "kind": "k", "encoding": "e", "status": "documented",
    ...      "input": {"escaped": "x"}, "case": "x1"},
    ...     {"adapter": "t@0.10:e", "check": "c", "kind": "k", "encoding": "e", "status": "documented",
    ...      "input": {"escaped": "x"}, "case": "x1"}]}
    >>> b, = behaviours(data, {"t@0.9:e": "0.9", "t@0.10:e": "0.10", "t:e": "0.14"}, ["0.9", "0.10", "0.14"])
    >>> b.runs, b.changed_in
    ((('0.9', '0.10'),), ('0.14',))
    """
    folded: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for d in data.get("divergences", ()):
        release = releases.get(d.get("adapter", ""))
        if release is None:
            continue
        # a behaviour is a (check, kind) in an encoding, not an input: one release's finding
        # is recorded on its documented case, another's shrunk and grouped under another
        # case, and both are the same behaviour; a record grouped by cause lists each symptom
        text = str((d.get("input") or {}).get("escaped", ""))[:120]
        symptoms = d.get("symptoms") or [{"check": d["check"], "kind": d.get("kind") or ""}]
        for symptom in symptoms:
            key = (symptom.get("check", d["check"]), symptom.get("kind") or "", d.get("encoding") or "")
            entry = folded.setdefault(key, {"case": d.get("case"), "text": text, "shown": {}})
            statuses = entry["shown"].setdefault(release, [])
            if d.get("status", "") not in statuses:
                statuses.append(d.get("status", ""))
    out = []
    for (check, kind, encoding), entry in folded.items():
        shown = entry["shown"]
        runs, changed = _runs([r in shown for r in order], order)
        out.append(Behaviour(check, kind, encoding, entry["text"], entry["case"],
                             tuple((r, "/".join(sorted(shown[r]))) for r in order if r in shown), tuple(runs),
                             tuple(changed)))
    # what changed inside the ladder first, then what every release shows
    out.sort(key=lambda b: (not b.changed_in and len(b.shown) == len(order), b.encoding, b.check, b.kind))
    return out


def release_span(runs: Sequence[Sequence[str]]) -> str:
    """The runs as the terminal and the page both print them, so the two read alike.

    >>> release_span([("0.9", "0.10"), ("0.12", "0.12")])
    '0.9..0.10, 0.12'
    """
    return ", ".join(first if first == last else f"{first}..{last}" for first, last in runs)


def print_ladder(found: Sequence[Behaviour], order: Sequence[str], stream: TextIO, *, library: str) -> None:
    """The ladder table: per behaviour, the releases that show it and where it changed."""
    stream.write(f"ladder {library}: {' < '.join(order)}\n")
    if not found:
        stream.write("  every release behaves as the reference on every input\n")
    for b in found:
        where = f"{b.case}" if b.case else repr(b.input)[:60]  # one input that shows it
        change = f"; changed in {', '.join(b.changed_in)}" if b.changed_in else ""
        everywhere = " (every release)" if len(b.shown) == len(order) else ""
        statuses = sorted({s for _, both in b.shown for s in both.split("/")})
        stream.write(f"  {b.encoding} {b.check} {b.kind[:70]} on {where}: {release_span(b.runs)}{everywhere}{change}"
                     f" [{'/'.join(statuses)}]\n")


def ladder_sections(data: Mapping[str, Any],
                    ladders: Sequence[tuple[str, Sequence[str], Sequence[tuple[str, str]]]]) -> list[dict[str, Any]]:
    """parity.json's ``ladders``: per ladder, its releases, adapters and folded behaviours."""
    out = []
    for library, order, pairs in ladders:
        releases = dict(pairs)
        found = behaviours(data, releases, list(order))
        out.append({"library": library, "releases": list(order), "adapters": releases,
                    "behaviours": [json.loads(json.dumps(asdict(b))) for b in found]})
    return out
