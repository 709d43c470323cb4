"""``tokconf run --save-new-cases DIR``: unexpected divergences as YAML cases to commit.

Each unexpected divergence becomes one case in the schema of ``cases/`` (read back by
:func:`harness.cases.loader.load_case_file`): its minimal input as ``text_escaped``, the adapter
and its reference as targets, the policy it was seen under, and a comment with what
differed. No ``documented:`` block is written: committed as is, the case is a regression
test that fails until the adapter is fixed. If the difference is intended, add the
block the comment shows (with a real reason and source) and it passes as documented.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Iterable

from harness.cases.model import Policy
from harness.escapes import escape_text

# records are harness.run.result.DivergenceRecord values, taken by their fields: cases sit
# below the run in the layering, so this module does not import it
__all__ = ["case_id", "render_cases", "write_new_cases", "yaml_single_quoted"]


def yaml_single_quoted(text: str) -> str:
    """A YAML single-quoted scalar: only ``'`` needs doubling.

    >>> yaml_single_quoted("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def case_id(record: Any) -> str:
    """A stable id from adapter, check and input.

    >>> from harness.run.evidence import Evidence
    >>> from harness.run.result import DivergenceRecord
    >>> r = DivergenceRecord("wrong:crlf", "tiktoken:cl100k_base", "id-parity", "cl100k_base", "unexpected",
    ...     "generated", None, None, None, "\\r\\n", "content", "", Evidence(None, None, {}, {}, {}, {}, "x"))
    >>> case_id(r)
    'new-id-parity-wrong-crlf-24983425'
    """
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", record.adapter).strip("-")[:40]
    digest = hashlib.sha256(f"{record.adapter}\0{record.check}\0{record.text}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"new-{record.check}-{slug}-{digest}"


def _policy_yaml(policy: Policy) -> str | None:
    def value(v: object) -> str:
        if v == "all":
            return "all"
        items = sorted(v)  # type: ignore[arg-type]
        return "none" if not items else "[" + ", ".join(yaml_single_quoted(escape_text(i)) for i in items) + "]"

    if policy == Policy():
        return None
    return f"{{allowed_special: {value(policy.allowed_special)}, disallowed_special: {value(policy.disallowed_special)}}}"


def render_cases(records: Iterable[Any], *, run: str) -> str:
    """The YAML text of a case file holding one case per record."""
    lines = [
        "version: 1",
        f"description: {yaml_single_quoted(f'New minimal counterexamples from tokconf run {run}: review, then fix the adapter or document the divergence')}",
        "cases:",
    ]
    for record in records:
        targets = [record.adapter] + ([record.reference] if record.reference else [])
        lines.append(f"  # {record.status} {record.check} ({record.kind}) found by {record.origin} input"
                     + (f" (case {record.case})" if record.case else ""))
        for line in record.detail.split("\n"):
            lines.append(f"  #   {escape_text(line)[:160]}")
        lines.append(f"  #   reproduce: {escape_text(record.evidence.reproduce)}")
        lines.append(f"  - id: {case_id(record)}")
        lines.append(f"    text_escaped: {yaml_single_quoted(escape_text(record.text))}")
        lines.append("    adapters: [" + ", ".join(yaml_single_quoted(t) for t in targets) + "]")
        if record.reference:
            lines.append(f"    reference: {yaml_single_quoted(record.reference)}")
        policy = _policy_yaml(record.policy)
        if policy:
            lines.append(f"    policy: {policy}")
        lines.append("    tags: [new, generated]")
        lines.append("    # If the difference is intended, document it:")
        lines.append("    # documented:")
        lines.append(f"    #   - adapters: [{yaml_single_quoted(record.adapter)}]")
        lines.append(f"    #     check: {record.check}")
        lines.append(f"    #     kind: {yaml_single_quoted(record.kind)}")
        lines.append("    #     reason: \"why it differs\"")
        lines.append("    #     source: \"seed file section, or upstream issue URL\"")
    return "\n".join(lines) + "\n"


def write_new_cases(folder: str | Path, records: list[Any], *, run: str) -> Path | None:
    """Write ``new-cases-<run>.yaml`` into ``folder``; ``None`` when there is nothing new."""
    if not records:
        return None
    target = Path(folder) / f"new-cases-{run}.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(render_cases(records, run=run), encoding="utf-8")
    tmp.replace(target)
    return target
