"""What ``tokconf gate`` shows: the changes as text for a terminal and as one HTML page.

Both take the gate's JSON (:meth:`harness.golden.compare.GateResult.to_json`), so the
page can be rebuilt from a saved ``--json`` answer. Inputs are untrusted text: the
terminal sees them through :func:`harness.report.view.neutralize` and ``short_visible``,
the page through HTML escaping only (no script, no external resource).
"""

from __future__ import annotations

import html
from typing import Any

from harness.escapes import escape_text
from harness.report.view import neutralize, short_visible

__all__ = ["format_gate_text", "outcome_text", "render_gate_page"]


def outcome_text(outcome: dict[str, Any] | None, limit: int = 160) -> str:
    """``[15339, 1917]``, ``raised unknown-id (builtins.KeyError)``, ``absent``."""
    if outcome is None:
        return "absent"
    if "ok" in outcome:
        value = outcome["ok"]
        if isinstance(value, dict) and "=" in value:
            shown = f"(the input's own {value['=']})"
        elif isinstance(value, dict) and "u8" in value:
            shown = "text with surrogates"
        elif isinstance(value, dict) and "b" in value:
            shown = f"bytes (base64) {value['b']}"
        else:
            shown = repr(value) if isinstance(value, str) else str(value)
        return shown if len(shown) <= limit else shown[:limit] + f"… ({len(shown)} chars)"
    for kind in ("raised", "timeout", "crashed"):
        if kind in outcome:
            category, native = outcome[kind]
            return f"{kind} {category} ({native})" if native else f"{kind} {category or ''}".strip()
    return str(outcome)


def _input(change: dict[str, Any]) -> str:
    text = change.get("input")
    if isinstance(text, dict):  # an encoded value (surrogates)
        return "(text with surrogates)"
    return short_visible(text or "")


def _known(change: dict[str, Any]) -> str:
    known = change.get("known")
    return f"{known['as']}: documented by case {known['case']}" if known else "not documented by a shipped case"


def format_gate_text(data: dict[str, Any], *, limit: int = 200) -> str:
    n = neutralize
    lines = [f"tokconf gate {n(data['golden'])}: {data['inputs']} inputs re-run"]
    for a in data["adapters"]:
        lines.append(f"  {n(a['golden'])} ({a['before'] or '?'}) -> {n(a['now'])} ({a['after'] or '?'})")
    if data["by_kind"]:
        lines.append("changes by kind: " + ", ".join(f"{k} {v}" for k, v in data["by_kind"].items()))
    for change in data["changes"][:limit]:
        lines.append(f"  [{change['kind']}] {n(change['adapter'])} {n(change['path'])}  {n(change['source'])}  "
                     f"\"{_input(change)}\"")
        if change["before"] is not None or change["after"] is not None:
            lines.append(f"      before: {n(outcome_text(change['before']))}")
            lines.append(f"      after:  {n(outcome_text(change['after']))}")
        lines.append(f"      {_known(change)}")
        if change.get("command"):
            lines.append(f"      again: {n(change['command'])}")
    for summary in data.get("summaries", ()):
        lines.append(f"  [{summary['kind']}] {n(summary['adapter'])} -> {n(summary['now'])} {n(summary['path'])}: "
                     f"{summary['inputs']} inputs, one line ({n(summary['why'])})")
    hidden = data["changes_total"] - min(limit, len(data["changes"]))
    if hidden > 0:
        lines.append(f"  ... and {hidden} more (all in --json and the page)")
    total = data["changes_total"]
    lines.append(f"result: {total} change(s) against the golden" if total else "result: no change against the golden")
    return "\n".join(lines) + "\n"


_STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}code{white-space:pre-wrap;
word-break:break-all}.k{font-weight:bold}"""


def render_gate_page(data: dict[str, Any]) -> str:
    e = html.escape
    rows = []
    for change in data["changes"]:
        text = change.get("input")
        shown = escape_text(text) if isinstance(text, str) else "(text with surrogates)"
        rows.append(
            f"<tr><td class=k>{e(change['kind'])}</td><td>{e(change['adapter'])}<br>&rarr; {e(change['now'])}</td>"
            f"<td><code>{e(change['path'])}</code></td><td>{e(change['source'])}<br><code>{e(shown[:400])}</code></td>"
            f"<td><code>{e(outcome_text(change['before'], 400))}</code></td>"
            f"<td><code>{e(outcome_text(change['after'], 400))}</code></td><td>{e(_known(change))}</td>"
            f"<td><code>{e(change.get('command') or '')}</code></td></tr>")
    adapters = "".join(f"<li>{e(a['golden'])} ({e(str(a['before']))}) &rarr; {e(a['now'])} ({e(str(a['after']))})</li>"
                       for a in data["adapters"])
    kinds = "".join(f"<li>{e(k)}: {v}</li>" for k, v in data["by_kind"].items())
    summaries = "".join(f"<li>{e(x['kind'])}: {e(x['adapter'])} &rarr; {e(x['now'])} <code>{e(x['path'])}</code> on "
                        f"{x['inputs']} inputs ({e(x['why'])})</li>" for x in data.get("summaries", ()))
    verdict = f"{data['changes_total']} change(s)" if data["changes_total"] else "no change"
    more = f"<p>{data['not_listed']} more changes were counted but not listed.</p>" if data.get("not_listed") else ""
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>tokconf gate: {e(verdict)}</title>"
            f"<style>{_STYLE}</style></head><body><h1>tokconf gate: {e(verdict)}</h1>"
            f"<p>golden <code>{e(data['golden'])}</code> (made {e(data.get('created') or '?')}), "
            f"{data['inputs']} inputs re-run.</p><ul>{adapters}</ul><h2>By kind</h2><ul>{kinds or '<li>none</li>'}</ul>"
            f"<h2>Changes</h2><p>Answers that changed first, then failures, then the surface.</p>"
            f"<table><tr><th>kind</th><th>adapter</th><th>path</th><th>input</th><th>before</th>"
            f"<th>after</th><th>documented</th><th>again</th></tr>{''.join(rows)}</table>{more}"
            f"<h2>Paths that appeared or disappeared</h2><ul>{summaries or '<li>none</li>'}</ul></body></html>\n")
