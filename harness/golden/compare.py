"""``tokconf gate``: run a golden's inputs again and list every outcome that changed.

Each adapter of the golden is paired with one adapter of this run: the same name, or
(``--impl``) the same name without an environment's version, so a golden made with
``tiktoken@0.9.0:cl100k_base`` gates ``tiktoken:cl100k_base``. Then for each input, each
pair and each path the two outcomes are compared by
:func:`harness.checks.api_surface.outcome_key` (values; for failures kind, category and
native type), and every difference is a :class:`Change` of one kind:

``IDs changed``, ``value changed`` (bytes, text, offsets), ``ok→raised`` (or
``ok→crashed``, ``ok→timeout``), ``raised→ok``, ``category changed``, ``error type
changed`` (same category, another exception class: ``except KeyError`` stops working),
``now supported`` / ``no longer supported`` (a path a release added or dropped),
``path added`` / ``path removed``, and for ``--corpus`` inputs ``input changed``,
``input added``, ``input removed``. Attributes (``n_vocab``, the hash of
``token_byte_values()``, fixed probes) are compared the same way under the source
``attributes``. Any change gates (exit 1).

The changes are listed by severity (:mod:`harness.golden.severity`): answers that changed
first, then failures, then the surface; a path that appeared or disappeared is one
summary line. Each listed change says whether a shipped case documents it and carries
the command that re-runs it (:mod:`harness.golden.known`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Mapping, Sequence

from harness.checks.api_surface import FAILED_WALK, outcome_key, walk_failure
from harness.golden.format import GoldenError, GoldenHeader, read_golden
from harness.golden.known import KnownChanges, gate_command
from harness.golden.paths import attributes_for
from harness.golden.severity import Summary, order_changes, severity, summarise
from harness.golden.snapshot import Recorder, Starting, announced, record_here
from harness.outcomes import Outcome, is_ids
from harness.run.selection import Selected

__all__ = ["Change", "GateResult", "classify", "pair_adapters", "run_gate", "walk_change"]


@dataclass(frozen=True)
class Change:
    kind: str
    source: str
    text: str
    adapter: str  # the golden's adapter
    now: str  # the adapter it was compared with
    path: str
    before: Outcome | None
    after: Outcome | None
    #: the shipped case that documents it: {"case": id, "as": "known fix" | "known break"}
    known: dict[str, str] | None = None
    #: re-runs this input and path; exits 1 while the change is there
    command: str = ""

    def to_json(self) -> dict[str, Any]:
        from harness.golden.format import outcome_to_json

        return {"kind": self.kind, "source": self.source, "input": self.text, "adapter": self.adapter,
                "now": self.now, "path": self.path, "severity": severity(self.kind),
                "before": outcome_to_json(self.before) if self.before is not None else None,
                "after": outcome_to_json(self.after) if self.after is not None else None,
                "known": self.known, "command": self.command}


@dataclass
class GateResult:
    golden: str
    header: GoldenHeader
    pairs: dict[str, str]
    versions: dict[str, tuple[str | None, str | None]]
    inputs: int = 0
    changes: list[Change] = field(default_factory=list)
    #: changes not kept in ``changes`` (past ``--max-changes``), still counted
    dropped: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    #: paths that appeared or disappeared, one line per (adapter, path, kind)
    summaries: list[Summary] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.changes) + self.dropped + sum(x.inputs for x in self.summaries)

    @property
    def exit_code(self) -> int:
        return 1 if self.total else 0

    def to_json(self) -> dict[str, Any]:
        return {"golden": self.golden, "inputs": self.inputs, "exit": self.exit_code, "changes_total": self.total,
                "by_kind": dict(sorted(self.counts.items())),
                "adapters": [{"golden": g, "now": n, "before": self.versions[g][0], "after": self.versions[g][1]}
                             for g, n in self.pairs.items()],
                "vocabularies": self.header.vocabularies, "created": self.header.created,
                "changes": [c.to_json() for c in self.changes], "not_listed": self.dropped,
                "summaries": [x.to_json() for x in self.summaries]}


def classify(before: Outcome | None, after: Outcome | None) -> str | None:
    """The kind of change from ``before`` to ``after``; ``None`` when nothing changed.

    >>> classify(Outcome.ok((1,)), Outcome.ok((2,)))
    'IDs changed'
    >>> classify(Outcome.raised("unknown-id", "builtins.KeyError", ""), Outcome.raised("unknown-id", "builtins.ValueError", ""))
    'error type changed'
    >>> classify(Outcome.ok((1,)), Outcome.raised("internal-error", "pyo3_runtime.PanicException", ""))
    'ok→raised'
    """
    if before is None:
        return "path added"
    if after is None:
        return "path removed"
    if outcome_key(before) == outcome_key(after):
        return None
    if before.is_unsupported and not after.is_unsupported:
        return "now supported"
    if after.is_unsupported and not before.is_unsupported:
        return "no longer supported"
    if before.is_ok and after.is_ok:
        return "IDs changed" if is_ids(before.value) and is_ids(after.value) else "value changed"
    if before.is_ok:
        return f"ok→{after.kind}"
    if after.is_ok:
        return f"{before.kind}→ok"
    if before.kind != after.kind or before.category != after.category:
        return "category changed"
    return "error type changed"


def _base(name: str) -> str:
    kind, _, argument = name.partition(":")
    return f"{kind.partition('@')[0]}:{argument}"


def pair_adapters(golden: list[str], current: list[str], *, strict: bool = True) -> dict[str, str]:
    """Golden adapter -> this run's adapter: same name first, else same name without version.

    >>> pair_adapters(["tiktoken@0.9.0:cl100k_base"], ["tiktoken:cl100k_base"])
    {'tiktoken@0.9.0:cl100k_base': 'tiktoken:cl100k_base'}
    """
    pairs: dict[str, str] = {}
    free = list(current)
    for name in golden:
        if name in free:
            pairs[name] = name
            free.remove(name)
    for name in golden:
        if name in pairs:
            continue
        match = next((c for c in free if _base(c) == _base(name)), None)
        if match is None and not strict:
            continue  # one change's command names one adapter: the others are not compared
        if match is None:
            raise GoldenError(f"the golden's adapter {name} has no counterpart in this run ({', '.join(current) or 'none'}); "
                              f"pass --impl {_base(name)} (or the adapter that replaces it)")
        pairs[name] = match
        free.remove(match)
    return pairs


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def run_gate(path: str, selected: Selected, *, corpus: Iterator[Any] | None = None, max_changes: int = 10_000,
             progress: Callable[[int], None] = lambda n: None, records: Recorder = record_here,
             only_input: str | None = None, only_path: str | None = None,
             cases: Sequence[Any] = (), starting: Starting = lambda source, n: None) -> GateResult:
    """Compare ``selected``'s adapters with the golden at ``path``.

    ``corpus``: the documents of ``--corpus`` (:class:`harness.golden.inputs.Input`); golden
    inputs from a corpus are checked against them by source and text. ``records``: where
    the inputs are run again (this process, or a Dask cluster); the changes come in the
    golden's order either way. ``only_input`` / ``only_path``: re-run that one input
    (by source) and compare that one path (the command each change carries). ``cases``:
    the shipped cases, to say which changes they document. ``starting``: told of each input
    as it is taken up (:func:`harness.golden.snapshot.announced`).
    """
    header, inputs = read_golden(path)
    pairs = pair_adapters([a.name for a in header.adapters], sorted(selected.calls), strict=only_input is None)
    versions = {a.name: (a.version, selected.rows[pairs[a.name]].version) for a in header.adapters if a.name in pairs}
    result = GateResult(golden=str(path), header=header, pairs=pairs, versions=versions)

    found: list[Change] = []

    def add(change: Change) -> None:
        if only_path is not None and change.path != only_path:
            return
        result.counts[change.kind] = result.counts.get(change.kind, 0) + 1
        found.append(change)

    if only_input is None or only_input == "attributes":
        for adapter in (a for a in header.adapters if a.name in pairs):
            now = selected.calls[pairs[adapter.name]]
            _compare(adapter.attributes, attributes_for(now), "attributes", "", adapter.name, now.name, add)
    if only_input is not None:
        inputs = (item for item in inputs if item.source == only_input)
    documents = {item.source: _digest(item.text) for item in corpus} if corpus is not None else None
    calls = {g: selected.calls[c] for g, c in pairs.items()}

    def todo() -> Iterator[tuple[Any, str | None]]:
        """Each golden input with the text to record, or None and the change that says why not."""
        for item in inputs:
            if documents is not None and item.source.startswith("corpus:"):
                digest = documents.pop(item.source, None)
                if digest is None or digest != _digest(item.text):
                    kind = "input removed" if digest is None else "input changed"
                    yield Change(kind, item.source, item.text, "", "", "", None, None), None
                    continue
            yield item, item.text

    for item, now in records(calls, announced(todo(), starting)):
        if isinstance(item, Change):  # in the golden's order, as the changes of the inputs around it
            add(item)
            continue
        for name in (n for n in item.outcomes if n in pairs):
            _compare(item.outcomes[name], now.get(name, {}), item.source, item.text, name, pairs.get(name, name), add)
        result.inputs += 1
        progress(result.inputs)
    for source in documents or {}:
        add(Change("input added", source, "", "", "", "", None, None))
    rows, result.summaries = summarise(found)
    known = KnownChanges(cases)
    encodings = {a.name: a.encoding for a in header.adapters}
    rows = [replace(c, known=known(c.adapter, c.now, c.path, c.text, encodings.get(c.adapter, "")),
                    command=gate_command(str(path), c.now, c.source, c.path) if c.path else "")
            for c in order_changes(rows)]
    result.changes, result.dropped = rows[:max_changes], max(0, len(rows) - max_changes)
    return result


def walk_change(before: Mapping[str, Outcome], after: Mapping[str, Outcome]) -> tuple[Outcome, Outcome] | None:
    """Where one side's whole walk failed (a timeout on a long input in a slow release, a
    crash) and the other answered path by path: the pair to compare, the walk's failure
    against the other side's first path; else None.

    Compared path by path, a walk that timed out in the golden and answers now read as
    "path removed: api_surface" and twenty "path added" rows at the bottom of the gate,
    where it is an answer that changed (``timeout→ok``).

    >>> timeout = Outcome.timeout(60.0)
    >>> pair = walk_change({"api_surface": timeout}, {"encode[default]": Outcome.ok((1,)), "decode_bytes": Outcome.ok(b"a")})
    >>> [(o.kind, o.value) for o in pair], classify(*pair)
    ([('timeout', None), ('ok', (1,))], 'timeout→ok')
    >>> walk_change({"api_surface": timeout}, {"api_surface": timeout}) is None
    True
    """
    failed_before, failed_after = walk_failure(before), walk_failure(after)
    if not before or not after or (failed_before is None) == (failed_after is None):
        return None
    if failed_before is not None:
        return failed_before, next(iter(after.values()))
    return next(iter(before.values())), failed_after


def _compare(before: Mapping[str, Outcome], after: Mapping[str, Outcome], source: str, text: str, adapter: str,
             now: str, add: Callable[[Change], None]) -> None:
    walk = walk_change(before, after)
    if walk is not None:  # one row for the input: the walk's failure is one fact
        kind = classify(*walk)
        if kind is not None:
            add(Change(kind, source, text, adapter, now, FAILED_WALK, *walk))
        return
    for path in [*before, *(p for p in after if p not in before)]:
        kind = classify(before.get(path), after.get(path))
        if kind is not None:
            add(Change(kind, source, text, adapter, now, path, before.get(path), after.get(path)))
