"""The HTML form of ``tokconf diff``: one self-contained page, no script needed."""

from __future__ import annotations

from typing import Any, Mapping

from harness.report.page import divergence_view
from harness.report.diff import KIND_ORDER, RunDiff, diff_runs
from harness.report.schema import STATUSES
from harness.report.render import render_page
from harness.report.view import outcome_line, short_visible

__all__ = ["render_diff"]

_TITLES = {
    "new": "New divergences",
    "changed": "Changed divergences",
    "fixed": "Fixed divergences",
    "unchecked": "No longer checked",
}


def render_diff(old: Mapping[str, Any], new: Mapping[str, Any], diff: RunDiff | None = None) -> str:
    """The diff page for two validated runs (deterministic, like the parity page)."""
    diff = diff if diff is not None else diff_runs(old, new)
    sections = []
    for kind in KIND_ORDER:
        items = []
        for n, change in enumerate(diff.of_kind(kind)):
            shown = change.new if change.new is not None else change.old
            items.append({
                "change": change,
                "view": divergence_view(shown, anchor_prefix=f"{kind}{n}-"),
                "was": change.old["status"] if change.old is not None else None,
            })
        sections.append({"kind": kind, "title": _TITLES[kind], "entries": items})
    gating = diff.gating
    return render_page(
        "diff.html.j2",
        script=False,
        tool=new["tool"],
        old_run=diff.old_run,
        new_run=diff.new_run,
        verdict="fail" if gating else "pass",
        verdict_text=(f"FAIL: {len(gating)} new unexpected or stale divergence(s)" if gating
                      else "PASS: no new unexpected or stale divergences"),
        summary=[{"status": s, "old": diff.summary_old.get(s, 0), "new": diff.summary_new.get(s, 0)} for s in STATUSES],
        diff=diff,
        sections=sections,
        outcomes=[{"change": o, "short": short_visible(o.text), "old": outcome_line(o.old),
                   "new": outcome_line(o.new)} for o in diff.outcomes],
        inputs=[{"change": c, "short": short_visible(c.text), "old": c.before.describe()[:200],
                 "new": c.after.describe()[:200]} for c in diff.inputs[:2000]],
    )
