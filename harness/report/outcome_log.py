"""What every adapter answered on every input of a run, beside its parity.json.

parity.json keeps divergences; a run that agrees everywhere says nothing about the IDs
it saw, so two runs could not be compared input by input. ``tokconf run`` therefore also
writes ``outcomes.jsonl.gz`` into the run folder (named in parity.json under
``outcomes``): one gzip-compressed JSON line per input and policy, ``{"text", "policy",
"origin", "case", "outcomes": {ADAPTER: OUTCOME}}`` with each adapter's ``encode``
outcome as the golden stores it (:func:`harness.golden.format.outcome_to_json`: IDs, or
kind + category + native type). ``tokconf diff`` reads both runs' logs and lists every
input whose outcome changed (:func:`diff_inputs`): ``IDs changed``, ``ok→raised``,
``raised→ok``, ``category changed``, ``error type changed``.
"""

from __future__ import annotations

import gzip
import heapq
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from harness.atomic import open_atomic
from harness.golden.compare import classify
from harness.golden.format import outcome_from_json, outcome_to_json
from harness.outcomes import Outcome

__all__ = ["LOG_FILE", "InputChange", "diff_inputs", "read_outcome_log", "write_outcome_log"]

LOG_FILE = "outcomes.jsonl.gz"


@dataclass(frozen=True)
class InputChange:
    kind: str
    adapter: str
    text: str
    policy: str
    origin: str
    before: Outcome
    after: Outcome

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "adapter": self.adapter, "input": self.text, "policy": self.policy,
                "origin": self.origin, "before": outcome_to_json(self.before), "after": outcome_to_json(self.after)}


def write_outcome_log(path: str | os.PathLike[str], inputs: Mapping[Any, dict], *, spooled: Any = None) -> int:
    """Write ``Runner.inputs`` (sorted, so the file is the same for the same run) merged,
    by streaming, with a corpus's :class:`~harness.report.outcome_spool.OutcomeSpool`
    (``spooled``, whose folder is removed once the log is written); returns the count."""
    from harness.report.outcome_spool import combined_rows, held_record, write_record

    # sorted by the records' key, each record made only when it is written, and its
    # outcomes turned into JSON one at a time as they are written (write_record): a long
    # input's are ~10^5 ints per adapter, where the runner holds one shared object for
    # the adapters that agree
    order = sorted(inputs, key=lambda key: (key[0], key[1].describe()))
    held = (((text, policy.describe()), b"", held_record(text, policy, inputs[(text, policy)])) for text, policy in order)
    # the spool first: the corpus ran before every phase whose inputs are still in memory
    # (an input the cases saw first was combined into memory when the corpus met it); a
    # spooled input met nowhere else is copied as the line it is
    rows = combined_rows(heapq.merge(spooled.rows(), held, key=lambda row: row[0])) \
        if spooled is not None else held
    count = 0
    # compresslevel 1: a default run's 96 MB of records are 2.1 MB in 0.19 s, against
    # 1.27 MB in 0.86 s at gzip's default 9 (measured on this log; level 6: 1.28 MB, 0.77 s)
    with open_atomic(path) as handle, gzip.GzipFile(fileobj=handle, mode="wb", compresslevel=1, mtime=0) as out:
        for _, line, record in rows:
            if line:
                out.write(line)
            else:
                write_record(out, record)
            count += 1
    if spooled is not None:
        spooled.close()
    return count


def read_outcome_log(parity_path: str | os.PathLike[str], data: Mapping[str, Any]) -> dict[tuple[str, str], dict]:
    """The log a parity.json names (beside it); empty for runs written before logs existed."""
    name = (data.get("outcomes") or {}).get("file")
    if not name:
        return {}
    path = Path(parity_path).parent / name
    table: dict[tuple[str, str], dict] = {}
    try:
        with gzip.open(path, "rb") as handle:
            for line in handle:
                record = json.loads(line)
                table[(record["text"], record["policy"])] = record
    except (OSError, EOFError, ValueError, KeyError) as exc:
        raise ValueError(f"cannot read the outcome log {path} of {parity_path}: {exc}") from exc
    return table


def diff_inputs(old: Mapping[tuple[str, str], dict], new: Mapping[tuple[str, str], dict]) -> Iterator[InputChange]:
    """Every (input, policy, adapter) both runs saw whose outcome changed."""
    for key in sorted(set(old) & set(new)):
        before, after = old[key]["outcomes"], new[key]["outcomes"]
        for adapter in sorted(set(before) & set(after)):
            a, b = outcome_from_json(before[adapter]), outcome_from_json(after[adapter])
            kind = classify(a, b)
            if kind is not None:
                yield InputChange(kind, adapter, key[0], key[1], new[key]["origin"], a, b)
