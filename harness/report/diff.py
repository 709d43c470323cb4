"""What changed between two runs: the upgrade gate.

Record what tiktoken (or any adapter) does today, upgrade, run again, and
``diff_runs(old, new)`` says exactly what moved: divergences that are new, fixed,
changed or no longer checked (keyed by adapter + check + input), outcomes (IDs, bytes,
errors) that changed for the same input, adapters added, removed or now unavailable,
adapters whose implementation changed (a file they read has another content hash, see
:mod:`harness.provenance`), library and vocabulary changes, and matrix cells that changed
status.

A change *gates* (``tokconf diff`` exits 1) when a divergence is unexpected or stale in
the new run and was not already unexpected or stale in the old one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal, Mapping

from harness.report.schema import STATUSES
from harness.report.view import neutralize, outcome_line, short_visible
from harness.report.bounds import input_json, input_text

__all__ = [
    "AdapterChange",
    "CellChange",
    "DivergenceChange",
    "OutcomeChange",
    "RunDiff",
    "VersionChange",
    "diff_runs",
    "format_text",
]

FAILING = frozenset({"unexpected", "stale"})
Kind = Literal["new", "changed", "fixed", "unchecked"]
KIND_ORDER: tuple[Kind, ...] = ("new", "changed", "fixed", "unchecked")


@dataclass(frozen=True)
class DivergenceChange:
    """A divergence that appeared, changed, disappeared, or is no longer checked."""

    kind: Kind
    adapter: str
    check: str
    text: str
    old: Mapping[str, Any] | None
    new: Mapping[str, Any] | None
    notes: tuple[str, ...] = ()

    @property
    def gates(self) -> bool:
        """New status unexpected/stale where it was not failing before."""
        if self.new is None or self.new["status"] not in FAILING:
            return False
        return self.old is None or self.old["status"] not in FAILING

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "adapter": self.adapter, "check": self.check,
            "input": input_json(self.text),
            "old": _brief(self.old), "new": _brief(self.new), "notes": list(self.notes), "gates": self.gates,
        }


@dataclass(frozen=True)
class OutcomeChange:
    """The same adapter, check and input produced a different outcome."""

    adapter: str
    check: str
    text: str
    old: Mapping[str, Any]
    new: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"adapter": self.adapter, "check": self.check, "input": self.text,
                "old": dict(self.old), "new": dict(self.new)}


@dataclass(frozen=True)
class AdapterChange:
    """An adapter that appeared, vanished, changed availability or version, or whose
    implementation changed: a file it read has another SHA-256, commit or dirty state."""

    name: str
    change: Literal["added", "removed", "now unavailable", "now available", "version", "implementation"]
    old: str | None = None  # version
    new: str | None = None
    reason: str | None = None  # why unavailable; for "implementation", what changed


@dataclass(frozen=True)
class VersionChange:
    """A library version or vocabulary hash that differs (``None`` = absent)."""

    name: str
    old: str | None
    new: str | None


@dataclass(frozen=True)
class CellChange:
    adapter: str
    check: str
    old: str | None  # None = the cell did not exist
    new: str | None


@dataclass(frozen=True)
class RunDiff:
    old_run: Mapping[str, Any]
    new_run: Mapping[str, Any]
    divergences: tuple[DivergenceChange, ...]
    outcomes: tuple[OutcomeChange, ...]
    adapters: tuple[AdapterChange, ...]
    libraries: tuple[VersionChange, ...]
    vocabularies: tuple[VersionChange, ...]
    cells: tuple[CellChange, ...]
    summary_old: Mapping[str, int]
    summary_new: Mapping[str, int]
    unchanged: int = 0
    environment: tuple[VersionChange, ...] = field(default=())
    checks_added: tuple[str, ...] = ()
    checks_removed: tuple[str, ...] = ()
    #: inputs both runs saw whose outcome changed (from the runs' outcome logs)
    inputs: tuple[Any, ...] = ()

    def of_kind(self, kind: Kind) -> list[DivergenceChange]:
        return [c for c in self.divergences if c.kind == kind]

    @property
    def gating(self) -> list[DivergenceChange]:
        return [c for c in self.divergences if c.gates]

    @property
    def exit_code(self) -> int:
        return 1 if self.gating else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "old": {"id": self.old_run["id"], "started": self.old_run["started"]},
            "new": {"id": self.new_run["id"], "started": self.new_run["started"]},
            "exit": self.exit_code,
            "gating": len(self.gating),
            "summary": {s: {"old": self.summary_old.get(s, 0), "new": self.summary_new.get(s, 0)} for s in STATUSES},
            "divergences": {k: [c.to_json() for c in self.of_kind(k)] for k in KIND_ORDER},
            "unchanged_divergences": self.unchanged,
            "changed_outcomes": [c.to_json() for c in self.outcomes],
            "adapters": [vars(c) for c in self.adapters],
            "libraries": [vars(c) for c in self.libraries],
            "vocabularies": [vars(c) for c in self.vocabularies],
            "environment": [vars(c) for c in self.environment],
            "cells": [vars(c) for c in self.cells],
            "checks": {"added": list(self.checks_added), "removed": list(self.checks_removed)},
            "changed_inputs": [c.to_json() for c in self.inputs],
        }


def diff_runs(old: Mapping[str, Any], new: Mapping[str, Any], *, old_inputs: Mapping[Any, Any] | None = None,
              new_inputs: Mapping[Any, Any] | None = None) -> RunDiff:
    """Compare two validated parity.json documents (and, when given, their outcome logs:
    :mod:`harness.report.outcome_log`)."""
    old_divs, new_divs = dict(_keyed(old)), dict(_keyed(new))
    changes: list[DivergenceChange] = []
    unchanged = 0
    for key, d in new_divs.items():
        before = old_divs.get(key)
        if before is None:
            changes.append(DivergenceChange("new", key[0], key[1], key[2], None, d, _new_notes(d)))
            continue
        notes = _compare(before, d)
        if notes:
            changes.append(DivergenceChange("changed", key[0], key[1], key[2], before, d, notes))
        else:
            unchanged += 1
    for key, d in old_divs.items():
        if key in new_divs:
            continue
        cell = new["matrix"].get(key[0], {}).get(key[1])
        if cell is None or cell["status"] in ("unavailable", "unsupported", "empty"):
            why = "the adapter or check did not run" if cell is None else f"the cell is now {cell['status']}"
            changes.append(DivergenceChange("unchecked", key[0], key[1], key[2], d, None, (f"not checked: {why}",)))
        else:
            note = ("generated input: the new run may not have tried it",) if d["origin"] == "generated" else ()
            changes.append(DivergenceChange("fixed", key[0], key[1], key[2], d, None, note))
    changes.sort(key=lambda c: KIND_ORDER.index(c.kind))
    return RunDiff(
        old_run=old["run"], new_run=new["run"],
        divergences=tuple(changes),
        outcomes=tuple(_outcome_changes(old, new)),
        adapters=tuple(_adapter_changes(old, new)),
        libraries=tuple(_mapping_changes(old["environment"]["libraries"], new["environment"]["libraries"])),
        vocabularies=tuple(_mapping_changes(old["environment"]["vocabularies"], new["environment"]["vocabularies"])),
        cells=tuple(_cell_changes(old, new)),
        summary_old={s: old["summary"].get(s, 0) for s in STATUSES},
        summary_new={s: new["summary"].get(s, 0) for s in STATUSES},
        unchanged=unchanged,
        environment=tuple(_mapping_changes(_env_facts(old), _env_facts(new))),
        checks_added=tuple(c for c in new["checks"] if c not in old["checks"]),
        checks_removed=tuple(c for c in old["checks"] if c not in new["checks"]),
        inputs=tuple(_input_changes(old_inputs, new_inputs)),
    )


def _input_changes(old: Mapping[Any, Any] | None, new: Mapping[Any, Any] | None) -> Iterator[Any]:
    if not old or not new:
        return iter(())
    from harness.report.outcome_log import diff_inputs

    return diff_inputs(old, new)


def _keyed(run: Mapping[str, Any]) -> Iterator[tuple[tuple[str, str, str, int], Mapping[str, Any]]]:
    # The same adapter, check and input can diverge twice (e.g. under two policies);
    # the occurrence number keeps both, paired in order.
    seen: Counter[tuple[str, str, str]] = Counter()
    for d in run["divergences"]:
        base = (d["adapter"], d["check"], input_text(d["input"]))
        yield (*base, seen[base]), d
        seen[base] += 1


def _new_notes(d: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(f"{name}: {outcome_line(o)}" for name, o in d["outcomes"].items())


def _compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[str, ...]:
    notes: list[str] = []
    if old["status"] != new["status"]:
        notes.append(f"status {old['status']} -> {new['status']}")
    for name in sorted(set(old["outcomes"]) | set(new["outcomes"])):
        a, b = old["outcomes"].get(name), new["outcomes"].get(name)
        if a != b:
            notes.append(f"{name}: {outcome_line(a)} -> {outcome_line(b)}")
    if old["first_difference"] != new["first_difference"]:
        notes.append(f"first difference {old['first_difference']} -> {new['first_difference']}")
    if old.get("reason") != new.get("reason") and new["status"] == "documented":
        notes.append("documented reason changed")
    return tuple(notes)


def _outcome_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[OutcomeChange]:
    def table(run: Mapping[str, Any]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
        out: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        for d in run["divergences"]:
            for name, outcome in d["outcomes"].items():
                out.setdefault((name, d["check"], input_text(d["input"])), outcome)
        return out

    before, after = table(old), table(new)
    for key, outcome in after.items():
        if key in before and before[key] != outcome:
            yield OutcomeChange(key[0], key[1], key[2], before[key], outcome)


def _adapter_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[AdapterChange]:
    before = {a["name"]: a for a in old["adapters"]}
    after = {a["name"]: a for a in new["adapters"]}
    for name, a in after.items():
        b = before.get(name)
        if b is None:
            yield AdapterChange(name, "added", None, a["version"], a["reason"])
        elif b["status"] == "available" and a["status"] == "unavailable":
            yield AdapterChange(name, "now unavailable", b["version"], a["version"], a["reason"])
        elif b["status"] == "unavailable" and a["status"] == "available":
            yield AdapterChange(name, "now available", b["version"], a["version"])
        elif b["version"] != a["version"]:
            yield AdapterChange(name, "version", b["version"], a["version"])
        if b is None or not b["status"] == a["status"] == "available":
            continue  # an adapter that did not run in both has no implementation to compare
        changed = _implementation_changes(b.get("provenance"), a.get("provenance"))
        if changed:
            yield AdapterChange(name, "implementation", None, None, "; ".join(changed))
    for name, b in before.items():
        if name not in after:
            yield AdapterChange(name, "removed", b["version"], None)


def _implementation_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[str]:
    """What differs in the files two runs of one adapter read, by content hash.

    Files are paired in order, not by path: the same checkout in another folder is the
    same implementation. Only the SHA-256 decides: an editable install (files in a git
    checkout, with a commit) and a regular one (files in site-packages, no git) of the
    same commit read the same bytes, so they are the same implementation (issue 21); the
    commit and dirty state are shown beside a changed hash. A run without provenance
    (older tokconf) compares as unknown.

    >>> f = lambda sha, commit=None, dirty=False: {"path": "m.json", "sha256": sha,
    ...     "git": None if commit is None else {"commit": commit, "dirty": dirty}}
    >>> _implementation_changes({"files": [f("aa" * 32, "c1" * 20)]}, {"files": [f("bb" * 32, "c2" * 20, True)]})
    ['m.json: sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb, commit c1c1c1c1c1c1 -> c2c2c2c2c2c2, clean -> dirty']
    >>> _implementation_changes({"files": [f("aa" * 32)]}, {"files": [f("aa" * 32)]})
    []
    >>> _implementation_changes({"files": [f("aa" * 32, "c1" * 20)]}, {"files": [f("aa" * 32)]})
    []
    """
    if old is None or new is None:
        return []
    before, after = old.get("files") or [], new.get("files") or []
    notes = []
    if len(before) != len(after):
        notes.append(f"files read: {', '.join(f['path'] for f in before) or 'none'} -> "
                     f"{', '.join(f['path'] for f in after) or 'none'}")
    for a, b in zip(before, after):
        if a["sha256"] == b["sha256"] and a["sha256"] is not None:
            continue  # the same bytes: where they were installed from is not a change
        parts = [f"sha256 {_short(a['sha256'])} -> {_short(b['sha256'])}"]
        ga, gb = a.get("git") or {}, b.get("git") or {}
        if ga.get("commit") != gb.get("commit"):
            parts.append(f"commit {_short(ga.get('commit'))} -> {_short(gb.get('commit'))}")
        if ga and gb and ga.get("dirty") != gb.get("dirty"):
            parts.append(f"{'dirty' if ga.get('dirty') else 'clean'} -> {'dirty' if gb.get('dirty') else 'clean'}")
        if parts:
            shown = b["path"] if a["path"] == b["path"] else f"{a['path']} (now {b['path']})"
            notes.append(f"{shown}: {', '.join(parts)}")
    return notes


def _short(value: str | None) -> str:
    return "none" if value is None else value[:12]


def _mapping_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[VersionChange]:
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            yield VersionChange(name, old.get(name), new.get(name))


def _env_facts(run: Mapping[str, Any]) -> dict[str, Any]:
    env = run["environment"]
    return {"python": env["python"], "implementation": env["implementation"], "platform": env["platform"],
            "hypothesis profile": env["hypothesis"]["profile"], "hypothesis seed": str(env["hypothesis"]["seed"]),
            "tokconf": run["tool"]["version"]}


def _cell_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[CellChange]:
    # Only adapters with the same availability in both runs: a whole row appearing,
    # vanishing or going unavailable is already said once by the adapter changes.
    before = {a["name"]: a["status"] for a in old["adapters"]}
    for adapter in new["adapters"]:
        name = adapter["name"]
        if before.get(name) != adapter["status"]:
            continue
        for check in new["checks"]:
            a = old["matrix"].get(name, {}).get(check)
            b = new["matrix"].get(name, {}).get(check)
            if a is not None and b is not None and a["status"] != b["status"]:
                yield CellChange(name, check, a["status"], b["status"])


def _brief(d: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {"id": d["id"], "status": d["status"], "reference": d["reference"],
            "first_difference": d["first_difference"], "outcomes": d["outcomes"], "reproduce": d["reproduce"]}


def format_text(diff: RunDiff) -> str:
    """The terminal report; every piece of data passes through ``neutralize``/``visible``."""
    n = neutralize
    lines = [f"tokconf diff: run {n(diff.old_run['id'])} -> run {n(diff.new_run['id'])}"]
    for title, items in (("libraries", diff.libraries), ("vocabularies", diff.vocabularies),
                         ("environment", diff.environment)):
        for c in items:
            singular = {"libraries": "library", "vocabularies": "vocabulary"}.get(title, title)
            lines.append(f"  {singular} {n(c.name)}: "
                         f"{n(str(c.old)) if c.old is not None else 'absent'} -> "
                         f"{n(str(c.new)) if c.new is not None else 'absent'}")
    for label, names in (("checks added", diff.checks_added), ("checks removed", diff.checks_removed)):
        if names:
            lines.append(f"  {label}: " + ", ".join(n(c) for c in names))
    for c in diff.adapters:
        detail = f" ({n(c.reason)})" if c.reason else ""
        versions = f" {c.old} -> {c.new}" if c.change == "version" else ""
        change = "implementation changed" if c.change == "implementation" else c.change
        lines.append(f"  adapter {n(c.name)}: {change}{versions}{detail}")
    lines.append("summary (matrix cells): " + ", ".join(
        f"{s} {diff.summary_old.get(s, 0)}" + (f"->{diff.summary_new.get(s, 0)}" if diff.summary_old.get(s, 0) != diff.summary_new.get(s, 0) else "")
        for s in STATUSES))
    for kind in KIND_ORDER:
        items = diff.of_kind(kind)
        label = {"new": "new divergences", "changed": "changed divergences", "fixed": "fixed divergences",
                 "unchecked": "no longer checked"}[kind]
        lines.append(f"{label}: {len(items)}")
        for c in items:
            shown = c.new or c.old or {}
            mark = "!" if c.gates else " "
            lines.append(f" {mark} {shown.get('status', ''):<10} {n(c.adapter)} x {n(c.check)}  "
                         f"\"{short_visible(c.text)}\"  ({n(shown.get('id', ''))})")
            for note in c.notes:
                lines.append(f"      {n(note)}")
            if c.kind in ("new", "changed") and c.new:
                lines.append(f"      reproduce: {n(c.new['reproduce'])}")
    lines.append(f"unchanged divergences: {diff.unchanged}")
    if diff.outcomes:
        lines.append(f"changed outcomes for the same input: {len(diff.outcomes)}")
        for o in diff.outcomes:
            lines.append(f"  {n(o.adapter)} x {n(o.check)}  \"{short_visible(o.text)}\"")
            lines.append(f"      {outcome_line(o.old)} -> {outcome_line(o.new)}")
    if diff.inputs:
        kinds = Counter(c.kind for c in diff.inputs)
        lines.append(f"inputs whose outcome changed: {len(diff.inputs)} ("
                     + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")")
        for c in diff.inputs[:200]:
            lines.append(f"  [{c.kind}] {n(c.adapter)}  \"{short_visible(c.text)}\"  ({n(c.policy)}, {c.origin})")
            lines.append(f"      {n(c.before.describe()[:160])} -> {n(c.after.describe()[:160])}")
        if len(diff.inputs) > 200:
            lines.append(f"  ... and {len(diff.inputs) - 200} more (all in --json)")
    if diff.cells:
        lines.append(f"cells that changed status: {len(diff.cells)}")
        for c in diff.cells:
            lines.append(f"  {n(c.adapter)} x {n(c.check)}: {c.old or 'absent'} -> {c.new or 'absent'}")
    gating = diff.gating
    lines.append(f"result: {len(gating)} new unexpected or stale divergence(s)" if gating
                 else "result: no new unexpected or stale divergences")
    return "\n".join(lines) + "\n"
