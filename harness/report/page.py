"""parity.json -> parity.html: one self-contained page an engineer wants to open.

``render_report(data)`` is what ``tokconf run`` and ``tokconf report`` call. It is a pure
function of the JSON: no clock, no environment lookups, stable ordering, so the page
rebuilt later from parity.json is byte-identical to the one the run wrote.

Layout: the verdict and summary counts, the adapter x check matrix (each cell links to
its divergences), a ladder run's releases (:mod:`harness.report.ladder_view`), adapters
and environment, then every divergence in a ``<details>`` (so the page works with
JavaScript off; the inline script only adds filters).
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Mapping

from harness.escapes import visible
from harness.report.schema import STATUSES, validate_parity
from harness.report.cells import CELL_MARKS, cell_mark, reason_line
from harness.report.coverage_view import coverage_rows
from harness.report.ladder_view import ladder_tables
from harness.report.render import render_page
from harness.report.verdict import verdict_of
from harness.report.view import adapter_order, align_ids, hex_groups, outcome_line, short_visible
from harness.report.bounds import LONG_CHARS, input_text

__all__ = ["CELL_LABELS", "divergence_view", "parity_context", "render_report"]

#: What a matrix cell shows for each status: glyph and word (the count of divergences
#: follows, if any); see :mod:`harness.report.cells`.
CELL_LABELS: Mapping[str, str] = {status: f"{glyph} {word}" for status, (glyph, word) in CELL_MARKS.items()}

_LINKABLE = re.compile(r"^https?://[^\s\"'<>]+$")


def render_report(data: dict[str, Any], *, validate: bool = True) -> str:
    """The HTML page for one run. Validates ``data`` first (``ParityValidationError``)."""
    if validate:
        validate_parity(data)
    return render_page("parity.html.j2", **parity_context(data))


def parity_context(data: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the parity template prints, computed here so the template stays dumb."""
    checks: list[str] = list(data["checks"])
    references: Mapping[str, str] = data["run"]["references"]
    reference_names = set(references.values())
    by_id = {d["id"]: d for d in data["divergences"]}
    rows: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    # each divergence is shown once, in the cell of its own check; other cells that list
    # it (its other symptoms, findings it absorbed) link to it: one id, one element
    home = {d["id"]: (d["adapter"], d["check"]) for d in data["divergences"]}
    for r, adapter in enumerate(data["adapters"]):
        name = adapter["name"]
        cells: list[dict[str, Any]] = []
        for c, check in enumerate(checks):
            cell = data["matrix"].get(name, {}).get(check)
            if cell is None:
                cells.append({"check": check, "status": None})
                continue
            anchor = f"cell-{r}-{c}"
            ids = list(cell["divergences"])
            count = f" {len(ids)}" if ids else ""
            glyph, word = cell_mark(cell["status"])
            cells.append({
                "check": check,
                "status": cell["status"],
                "label": f"{glyph} {word}{count}",
                "glyph": glyph,
                "word": word,
                "inputs": cell["inputs"],
                "count": len(ids),
                "group": anchor if ids else None,
                "target": (f"{ids[0]}-body" if home.get(ids[0]) == (name, check) else ids[0]) if ids else None,
                "title": f"{name} × {check}: {cell['status']}, {cell['inputs']} input(s), "
                         f"{len(ids)} divergence(s)",
            })
            if ids:
                groups.append({
                    "anchor": anchor,
                    "adapter": name,
                    "encoding": adapter["encoding"],
                    "check": check,
                    "status": cell["status"],
                    "inputs": cell["inputs"],
                    "divergences": [divergence_view(by_id[i]) for i in ids if home[i] == (name, check)],
                    "also": [{"id": i, "check": by_id[i]["check"], "status": by_id[i]["status"]}
                             for i in ids if home[i] != (name, check)],
                })
        rows.append({
            "name": name,
            "language": adapter.get("language", "Python"),
            "encoding": adapter["encoding"],
            "available": adapter["status"] == "available",
            "reason": adapter["reason"],
            "reason_line": reason_line(adapter["reason"]),
            "is_reference": name in reference_names,
            "cells": cells,
        })
    summary = {s: data["summary"].get(s, 0) for s in STATUSES}
    # the exit code's function decides the page's verdict: they cannot disagree
    verdict = verdict_of(data)
    return {
        "tool": data["tool"],
        "schema_version": data["schema_version"],
        "run": data["run"],
        "argv": shlex.join(data["run"]["argv"]),
        "env": data["environment"],
        "adapters": [adapter_view(a, reference_names) for a in data["adapters"]],
        "checks": checks,
        "statuses": STATUSES,
        "summary": summary,
        "verdict": "pass" if verdict.passed else "fail",
        "verdict_text": verdict.line + (f" (exit code {verdict.exit_code})" if not verdict.passed else ""),
        "rows": rows,
        "groups": groups,
        "divergence_count": len(data["divergences"]),
        "divergence_counts": {s: sum(d["status"] == s for d in data["divergences"])
                              for s in ("unexpected", "stale", "documented")},
        "encodings": sorted({a["encoding"] for a in data["adapters"]}),
        "references": sorted(references.items()),
        "coverage_rows": coverage_rows(data),
        "ladder_tables": ladder_tables(data),
        "vocabularies": sorted((data.get("vocabularies") or {}).items()),
        "everyday": data["run"].get("everyday"),
    }


def adapter_view(adapter: Mapping[str, Any], reference_names: set[str]) -> dict[str, Any]:
    caps = adapter.get("capabilities") or {}
    # encode_ordinary is the norm: only its absence is worth a flag.
    flags = [key.replace("_", "-") for key in ("batch", "trace", "pretokenize", "closed_vocabulary") if caps.get(key)]
    if caps and not caps.get("encode_ordinary", True):
        flags.append("no-encode-ordinary")
    provenance = adapter.get("provenance") or {}
    return {
        **adapter,
        "is_reference": adapter["name"] in reference_names,
        "special_policy": caps.get("special_policy"),
        "flags": flags,
        "notes": list(caps.get("notes") or []),
        "language": adapter.get("language", "Python"),
        "bundled": [{"file": name, **v} for name, v in sorted((adapter.get("vocabulary") or {}).items())],
        # the distribution only where the library column does not already say it
        "distribution": provenance.get("distribution") if not adapter["library"] else None,
        "dist_version": provenance.get("version"),
        "files": [
            {"path": f["path"], "sha256": f["sha256"], "sha_short": (f["sha256"] or "unreadable")[:12],
             "commit": (f.get("git") or {}).get("commit"), "dirty": (f.get("git") or {}).get("dirty")}
            for f in provenance.get("files") or []
        ],
    }


def divergence_view(d: Mapping[str, Any], *, anchor_prefix: str = "") -> dict[str, Any]:
    """One divergence, with its display forms (visible text, hex, aligned IDs, traces).

    ``anchor_prefix`` keeps HTML ids unique when two runs share a page (``tokconf diff``).
    """
    full = input_text(d["input"])
    text = full if len(full) < LONG_CHARS else d["input"]["escaped"]  # a long input is shown by its ends
    names = adapter_order(d)
    columns, id_rows = align_ids(d, names)
    first = d["first_difference"]
    hexed, surrogates = hex_groups(text)
    ids_by_adapter = {
        n: d["outcomes"][n]["ids"] for n in names
        if d["outcomes"].get(n, {}).get("kind") == "ok" and "ids" in d["outcomes"][n]
    }
    piece_rows = []
    for name in names:
        pieces = d["pieces"].get(name)
        if pieces is None:
            continue
        ids = ids_by_adapter.get(name, [])
        hexes = (d.get("piece_bytes") or {}).get(name) or []
        piece_rows.append({
            "adapter": name,
            "role": _role(d, name),
            "pieces": [
                {
                    "text": "?" if p is None else (p or "∅"),
                    "cls": f"pc pc{i % 2}" + (" first" if i == first else "") + (" unknown" if p is None else ""),
                    "title": f"#{i}" + (f" id {ids[i]}" if i < len(ids) else "")
                             + (f" bytes {hexes[i]}" if i < len(hexes) and hexes[i] else ""),
                }
                for i, p in enumerate(pieces)
            ],
        })
    return {
        **d,
        "anchor": anchor_prefix + d["id"],
        "snippet": d.get("snippet"),
        "short": short_visible(text),
        "visible": visible(text),
        "nchars": len(full),
        "nbytes": len(full.encode("utf-8", "surrogatepass")),
        "hex": hexed,
        "surrogates": surrogates,
        "chunk_visible": None if d["first_differing_chunk"] is None else visible(d["first_differing_chunk"]),
        "source_link": d["doc_source"] if d["doc_source"] and _LINKABLE.match(d["doc_source"]) else None,
        "piece_rows": piece_rows,
        "id_columns": columns,
        "id_rows": id_rows,
        "piece_hex_rows": [
            (n, " | ".join(h or "?" for h in d["piece_bytes"][n]))
            for n in names if (d.get("piece_bytes") or {}).get(n)
        ],
        "outcome_rows": [
            {"adapter": n, "role": _role(d, n), "kind": d["outcomes"][n].get("kind"),
             "line": outcome_line(d["outcomes"][n])}
            for n in names if n in d["outcomes"]
        ],
        "trace_blocks": [
            {"adapter": n, "rounds": [_trace_round(i, t) for i, t in enumerate(d["traces"][n])]}
            for n in names if n in d["traces"]
        ],
    }


def _role(d: Mapping[str, Any], name: str) -> str:
    if name == d.get("reference"):
        return "reference"
    if name == d["adapter"]:
        return "adapter"
    return ""


def _trace_round(index: int, step: Mapping[str, Any]) -> dict[str, Any]:
    def show(value: Any) -> str:
        if isinstance(value, str):
            return visible(value)
        if isinstance(value, list):
            return " | ".join(show(v) for v in value)
        return "" if value is None else str(value)

    if step.get("special"):  # a special literal: one step, not merged from its bytes
        return {"index": index, "pair": f"special {show(step['pair'][0])}", "rank": "", "merged": "",
                "result": show(step.get("result"))}
    return {
        "index": index,
        "pair": " + ".join(show(p) for p in step["pair"]),
        "rank": "" if step["rank"] is None else str(step["rank"]),
        "merged": str(step["merged"]),
        "result": show(step.get("result")),
    }
