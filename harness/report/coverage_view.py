"""The coverage section of the page: parity.json's optional ``coverage``, made readable.

A pure function of the JSON like the rest of the page. Each adapter gets one row of
figures (pattern alternatives, ordered pairs, vocabulary, merge ranks, Unicode general
categories and scripts, steered tokens) and a folded list of its pattern's alternatives
with how many inputs each took, and the constructible pairs no input exercised.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["coverage_rows", "figure"]


def figure(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``{"seen": 3, "total": 8, "fraction": 0.375}`` -> what a cell shows.

    >>> figure({"seen": 3, "total": 8, "fraction": 0.375})["text"]
    '3/8 (37.5%)'
    >>> figure(None) is None
    True
    """
    if not value:
        return None
    percent = value["fraction"] * 100
    shown = f"{percent:.1f}%" if percent >= 0.1 or percent == 0 else f"{percent:.3f}%"
    return {"text": f"{value['seen']}/{value['total']} ({shown})", "width": round(min(100.0, percent), 1),
            "ordered": value.get("ordered")}


def coverage_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per adapter with coverage figures, in the order of the adapters list."""
    coverage = data.get("coverage") or {}
    rows = []
    for adapter in data["adapters"]:
        entry = coverage.get(adapter["name"])
        if entry is None:
            continue
        pattern = entry.get("pattern")
        rows.append({
            "name": adapter["name"],
            "inputs": entry["inputs"],
            "alternatives": figure(entry.get("alternatives")),
            "pairs": figure(entry.get("pairs")),
            "vocab": figure(entry.get("vocab")),
            "merges": figure(entry.get("merges")),
            "categories": entry.get("categories", []),
            "scripts": entry.get("scripts", []),
            "steered": entry.get("steered"),
            "every_token": entry.get("every_token"),
            "reachability": entry.get("reachability"),
            "pattern_source": pattern["source"] if pattern else None,
            "pattern": pattern["pattern"] if pattern else None,
            "pattern_inputs": pattern.get("inputs", entry["inputs"]) if pattern else None,
            "branches": pattern["branches"] if pattern else [],
            "pairs_missing": pattern["pairs_missing"] if pattern else [],
        })
    return rows
