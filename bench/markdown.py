"""The benchmark's report as Markdown tables (``bench/run.py --markdown``), as in the README."""

from __future__ import annotations

from typing import Any

__all__ = ["render"]


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def throughput_table(report: dict[str, Any]) -> list[str]:
    rows = report.get("results", [])
    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    head = "| adapter | " + " | ".join(f"{c} warm × / cold × (MB/s)" for c in corpora) + " |"
    lines = [head, "|---|" + "---|" * len(corpora)]
    for impl in dict.fromkeys(r["impl"] for r in rows):
        cells = []
        for corpus in corpora:
            r = next((x for x in rows if x["impl"] == impl and x["corpus"] == corpus), None)
            cells.append("-" if r is None else
                         f"{_fmt(r['ratio_to_tiktoken'])} / {_fmt(r['cold_ratio_to_tiktoken'])} ({_fmt(r['mb_per_s'], 1)})")
        lines.append(f"| `{impl}` | " + " | ".join(cells) + " |")
    return lines


def worst_table(report: dict[str, Any]) -> list[str]:
    rows = [r for r in report.get("worst_cases", []) if ("seconds" in r or "error" in r)
            and not r["impl"].startswith("tiktoken:")]
    cases = list(dict.fromkeys((r["case"], r["size"]) for r in rows))
    biggest = {}
    for case, size in cases:
        biggest[case] = max(size, biggest.get(case, 0))
    lines = ["| adapter | " + " | ".join(f"{c} {s:,}: s (regex s, × tiktoken)" for c, s in biggest.items()) + " |",
             "|---|" + "---|" * len(biggest)]
    for impl in dict.fromkeys(r["impl"] for r in rows):
        cells = []
        for case, size in biggest.items():
            r = next((x for x in rows if x["impl"] == impl and x["case"] == case and x["size"] == size), None)
            if r is None:
                cells.append("-")
            elif "error" in r:
                cells.append(r["error"].split(":")[0])
            else:
                cells.append(f"{_fmt(r['seconds'], 3)} ({_fmt(r.get('pretokenize_seconds'), 3)}, "
                             f"{_fmt(r.get('ratio_to_tiktoken'), 1)})")
        lines.append(f"| `{impl}` | " + " | ".join(cells) + " |")
    return lines


def growth_table(report: dict[str, Any]) -> list[str]:
    rows = [r for r in report.get("linearity", []) if r["from_sizes"]]
    cases = list(dict.fromkeys(r["case"] for r in rows))
    lines = ["| adapter | " + " | ".join(f"{c}: ×time per ×10 input" for c in cases) + " |",
             "|---|" + "---|" * len(cases)]
    reference = {}
    for r in rows:
        reference[r["case"]] = ", ".join(f"{s:,}: {g}" for s, g in zip(r["from_sizes"], r["linear_reference_growth"]))
    for impl in dict.fromkeys(r["impl"] for r in rows):
        cells = []
        for case in cases:
            r = next((x for x in rows if x["impl"] == impl and x["case"] == case), None)
            cells.append("-" if r is None else ", ".join(f"{s:,}: {g}" for s, g in zip(r["from_sizes"], r["growth_per_tenfold"])))
        lines.append(f"| `{impl}` | " + " | ".join(cells) + " |")
    lines.append("| *linear work (a Python loop over the bytes)* | " + " | ".join(reference.get(c, "-") for c in cases) + " |")
    return lines


def targets_table(report: dict[str, Any]) -> list[str]:
    lines = ["| target (the growth per tenfold input is the table above) | value | limit | met |", "|---|---|---|---|"]
    for t in report.get("targets", []):
        if "per tenfold" in t["target"]:
            continue  # the growth table shows them all
        state = {True: "yes", False: "**no**", None: "-"}[t["met"]]
        lines.append(f"| {t['target']} | {_fmt(t['value'])} | {_fmt(t['limit'])} | {state} |")
    return lines


def render(report: dict[str, Any]) -> str:
    m = report.get("machine", {})
    out = [f"Machine: {m.get('cpus')} CPUs, {m.get('platform')}, Python {m.get('python')}, tiktoken "
           f"{m.get('tiktoken')}, tokenizers {m.get('tokenizers')}, regex {m.get('regex')}; load average "
           f"{m.get('load_average')} at the start, {m.get('load_average_end')} at the end; "
           f"{'--quick' if report.get('quick') else 'full'} run, {report.get('bench_seconds')} s.", ""]
    for c in report.get("corpora", []):
        out.append(f"- **{c['name']}**: {c['documents']:,} documents, {c['bytes']:,} bytes; {c['source']}")
    for title, table in (("Throughput (× tiktoken, same encoding; CPU time)", throughput_table),
                         ("Worst cases, largest size", worst_table), ("Growth per tenfold input", growth_table),
                         ("Targets", targets_table)):
        lines = table(report)
        if len(lines) > 2:
            out += ["", f"**{title}**", "", *lines]
    run = report.get("harness", {}).get("run")
    if run:
        out += ["", f"`tokconf run` (default): wall {run['wall_s']} s, CPU {run['cpu_s']} s, peak RSS "
                    f"{run['peak_rss_mb']} MB, harness overhead {_fmt(100 * (run['harness_share'] or 0), 1)} % of "
                    f"the wall time and {_fmt(100 * (run['harness_cpu_share'] or 0), 1)} % of the CPU time."]
    return "\n".join(out) + "\n"
