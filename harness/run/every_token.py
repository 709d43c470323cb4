"""The every-token phase: every ID of each encoding's reference through every adapter of it.

Inputs come from :mod:`harness.generate.every_token` (the reference's answers included).
For one slice and one adapter:

1. **bytes**: the adapter's ``token_bytes(id)`` must be the reference's bytes (for a
   special ID: its literal). A difference is a ``vocab-consistency`` finding of kind
   ``token-bytes`` about that ID (a special ID: ``special-decode``, on its literal, as
   the vocabulary check says it).
2. **IDs**: each text of the slice (a token's text alone, in its context, a special
   literal with every literal allowed) must encode to the reference's IDs; the
   reference itself must give back its text's bytes. Comparing is cheap; only a text
   that differs goes through the full set of generated checks
   (:meth:`harness.run.runner.Runner.run_generated_input`), which makes the findings that
   shrink and are judged like any other. At most :data:`FULL_CHECKS_PER_SLICE` texts per
   (adapter, slice) do so: an adapter that differs on thousands of tokens (another
   vocabulary) would otherwise spend the run shrinking copies of one fault; the count of
   the rest is a note in the report.

Every ID of a slice counts as checked for the adapter (the coverage measure ``vocab``);
an adapter whose closed vocabulary does not hold a token's text is not counted against
for it (``in_domain``), as everywhere.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from harness.calls import Calls
from harness.checks.base import ORDINARY, Finding, shape
from harness.generate.every_token import (SLICE_TOKENS, EncodeMany, EveryTokenPlan, TokenSlice, build_plan,
                                          encode_all)
from harness.outcomes import Outcome
from harness.run.settle import Candidate
from harness.worker.differing import differing_encodes, differing_pieces

__all__ = ["FULL_CHECKS_PER_SLICE", "PlanSource", "PlanSummary", "SliceRef", "adapter_task_groups",
           "named_task_groups", "plan_for", "run_slice", "unit_count"]

#: one encoding's units: (adapter, its task: every slice of the encoding, on it alone)
GroupTasks = list[tuple[str, list[tuple[Any, tuple[str, ...]]]]]

#: texts per (adapter, slice) that differ and get the full checks; the rest are counted
FULL_CHECKS_PER_SLICE = 4

#: texts (or IDs) per question to an adapter: a worker's round trip (encode_all's)
_FRAME = 2 * SLICE_TOKENS


def plan_for(selected: Any, reference: Calls, cache: Any = None, *,
             encode_many: EncodeMany | None = None) -> EveryTokenPlan:
    """``reference``'s plan: from the unit cache when the reference is unchanged
    (:mod:`harness.run.unit_cache`), else made (145 MB for o200k_base); ``encode_many``:
    how the reference is asked (:func:`~harness.generate.every_token.build_plan`)."""
    def build() -> EveryTokenPlan:
        plan = build_plan(reference, encode_many=encode_many)
        for token_slice in plan.slices:
            # each slice's digest is a cached property in its __dict__, so computed here it
            # is pickled with the plan: a run that reads the plan from the cache does not
            # hash every slice again (0.26 s for cl100k_base, 0.52 s for o200k_base)
            token_slice.digest  # noqa: B018 - computed for its side effect
        return plan

    if cache is None:
        return build()
    return cache.remembered(selected, "every-token", [reference.name], [b"plan"], build)


def _groups(selected: Any) -> Iterator[tuple[Calls, list[str]]]:
    """Per encoding: (its reference, the adapters that meet it: the reference first)."""
    for encoding in selected.encodings():
        reference = selected.reference_for(encoding)
        if reference.name not in selected.calls:
            continue
        names = {a.name for a in selected.group(encoding)} - {reference.name}
        yield reference, [reference.name, *sorted(names)]


def unit_count(selected: Any) -> int:
    """How many units :func:`adapter_task_groups` makes, without making a plan."""
    return sum(len(names) for _, names in _groups(selected))


def run_slice(runner: Any, token_slice: TokenSlice, names: Sequence[str]) -> dict[str, int]:
    """Check one slice on each adapter of ``names``; returns adapter -> texts that
    differed but were not checked in full (over :data:`FULL_CHECKS_PER_SLICE`)."""
    calls = runner.selected.calls
    reference = calls[token_slice.reference]
    left_over: dict[str, int] = {}
    for name in names:
        adapter = calls[name]
        differing = _differing_texts(runner, adapter, reference, token_slice)
        for text in differing[:FULL_CHECKS_PER_SLICE]:
            adapter.reset()
            reference.reset()
            runner.run_generated_input(text, adapter, reference)
        if len(differing) > FULL_CHECKS_PER_SLICE:
            left_over[name] = len(differing) - FULL_CHECKS_PER_SLICE
        runner.coverage.checked(adapter, token_slice.ids, left_over=left_over.get(name, 0))
        adapter.forget_pieces(token_slice.ids)
    return left_over


def _differing_texts(runner: Any, adapter: Calls, reference: Calls, token_slice: TokenSlice) -> list[str]:
    is_reference = adapter is reference
    if not is_reference:
        _compare_bytes(runner, adapter, token_slice)
    entries = token_slice.texts
    by_policy: dict[Any, list[int]] = {}
    for n, (_, policy, _) in enumerate(entries):
        by_policy.setdefault(policy, []).append(n)
    # the reference's own texts agree when its IDs' bytes join to the text: the bytes of
    # the slice's ordinary IDs are the plan's (asked once, in build_plan), not asked again
    known = _ordinary_pieces(token_slice, reference) if is_reference else None
    differing: list[str] = []
    agreed = 0
    for policy, positions in by_policy.items():
        if known is not None:
            answers = _reference_answers(adapter, entries, positions, policy)
            apart = [n for n, answer in zip(positions, answers) if not _joins_to(adapter, entries[n][0], answer, known)]
        else:
            # compared where the answers are: a worker sends back only the positions that
            # differ (harness.worker.differing), not every text's IDs
            found = differing_encodes(adapter, [entries[n][0] for n in positions], policy,
                                      [entries[n][2] for n in positions], frame=_FRAME)
            apart = [positions[k] for k in found]
        agreed += len(positions) - len(apart)
        for n in apart:
            text = entries[n][0]
            if adapter.in_domain(text) and reference.in_domain(text):
                differing.append(text)
    # an outcome equal to the reference's is both checks' agreement (same IDs, no error)
    runner.cell(adapter.name, "id-parity").inputs += agreed
    runner.cell(adapter.name, "error-category").inputs += agreed
    return differing


def _reference_answers(reference: Calls, entries: Sequence[tuple[str, Any, tuple[int, ...] | None]],
                       positions: Sequence[int], policy: Any) -> list[tuple[int, ...] | Outcome]:
    """The reference's answers on ``entries`` at ``positions`` (as :func:`encode_all`'s):
    the IDs the plan holds,
    which are this reference's own answers to these very texts under the same policy
    (:func:`~harness.generate.every_token.build_plan` asked it, and a cached plan is keyed
    by the reference's code, release and vocabulary), so asking again would encode each
    text twice on one path. Only a text the reference raised on is asked again, for the
    error the full checks judge.

    >>> from harness.checks.base import ORDINARY
    >>> class Asked:
    ...     def reset(self): pass
    ...     def encode_many(self, texts, policy): return [Outcome.raised("internal-error", "X", t) for t in texts]
    >>> got = _reference_answers(Asked(), [("a", ORDINARY, (64,)), ("b", ORDINARY, None)], [0, 1], ORDINARY)
    >>> got[0], got[1].describe()
    ((64,), 'raised internal-error (X): b')
    """
    asked = [n for n in positions if entries[n][2] is None]
    answers = dict(zip(asked, encode_all(reference, [entries[n][0] for n in asked], policy)))
    return [answers[n] if n in answers else entries[n][2] for n in positions]


def _joins_to(reference: Calls, text: str, answer: tuple[int, ...] | Outcome, known: dict[int, bytes | None]) -> bool:
    """Whether the reference's ``answer`` (:func:`encode_all`'s) to ``text`` is IDs whose
    bytes join to the text. (Another adapter agrees when its answer is exactly the IDs the
    plan holds: :func:`harness.worker.differing.positions_differing`.)"""
    if type(answer) is not tuple:
        return False  # a failure: the full checks judge it
    joined = _joined(reference, answer, known)
    return joined is not None and joined == text.encode("utf-8", "surrogatepass")


def _ordinary_pieces(token_slice: TokenSlice, reference: Calls) -> dict[int, bytes | None]:
    """The slice's ordinary IDs and the reference's bytes for them, as the plan holds them
    (``None``: it had none). A special ID's piece in the slice is its literal, not what
    the reference's ``token_bytes`` says: left out, so it is asked."""
    specials = reference.info.special_ids
    return {i: piece for i, piece in zip(token_slice.ids, token_slice.pieces) if i not in specials}


def _joined(reference: Calls, ids: Sequence[int], known: dict[int, bytes | None]) -> bytes | None:
    """The reference's bytes of ``ids`` joined; ``None`` where one ID has none. Pieces not
    in ``known`` are asked (``token_bytes``) and kept there for the slice's other texts.

    >>> class Asked:
    ...     def token_bytes(self, i): return Outcome.ok(b"!") if i == 0 else Outcome.raised("unknown-id", "KeyError", str(i))
    >>> known = {104: b"h", 105: b"i", 7: None}
    >>> _joined(Asked(), [104, 105, 0], known), known[0]
    (b'hi!', b'!')
    >>> _joined(Asked(), [104, 7], known), _joined(Asked(), [3], known), known[3]
    (None, None, None)
    """
    parts = []
    for token_id in ids:
        if token_id in known:
            piece = known[token_id]
        else:
            answer = reference.token_bytes(token_id)
            piece = known[token_id] = answer.value if answer.is_ok else None
        if piece is None:
            return None
        parts.append(piece)
    return b"".join(parts)


def _compare_bytes(runner: Any, adapter: Calls, token_slice: TokenSlice) -> None:
    cell = runner.cell(adapter.name, "vocab-consistency")
    specials = runner.selected.calls[token_slice.reference].info.special_ids
    asked = [(i, piece) for i, piece in zip(token_slice.ids, token_slice.pieces) if piece is not None]
    cell.inputs += len(asked)
    found = 0
    for n in differing_pieces(adapter, [i for i, _ in asked], [piece for _, piece in asked], frame=_FRAME):
        token_id, expected = asked[n]
        text = expected.decode("utf-8", "replace")
        if not adapter.in_domain(text):
            continue  # a closed vocabulary need not hold a token outside its alphabet
        found += 1
        if found > FULL_CHECKS_PER_SLICE:
            break
        mine = adapter.token_bytes(token_id)
        if token_id in specials:
            # the vocabulary check's own finding on a special ID (same kind, its literal as
            # the input), so what documents that one (minbpe's KeyError) documents this one
            kind, subject = ("special-decode" if mine.is_ok else f"special-decode:{shape(mine)}"), text
        else:
            kind, subject = "token-bytes", ""
        finding = Finding(adapter.name, "vocab-consistency", kind,
                          f"ID {token_id} is {mine.describe()} here, {Outcome.ok(expected).describe()} in "
                          f"{token_slice.reference}", subject,
                          outcomes=((adapter.name, mine), (token_slice.reference, Outcome.ok(expected))),
                          decode_ids=(token_id,), shrinkable=False)
        # judged like a vocabulary finding: on its ID, without shrinking
        runner.pending.append(Candidate(finding, ORDINARY, token_slice.reference, "generated", None))


def adapter_task_groups(runner: Any) -> Iterator[GroupTasks]:
    """The phase's units, one encoding's at a time: (adapter, its task: every slice of its
    encoding on it alone), the reference first. An encoding's plan is made only when the
    group before it has run (:class:`harness.engine.phases.UnitGroups`): the slices of
    every encoding at once set a default run's peak (issue 25)."""
    for _, make in named_task_groups(runner):
        yield make()


def named_task_groups(runner: Any) -> Iterator[tuple[list[str], Callable[[], GroupTasks]]]:
    """Each group of :func:`adapter_task_groups` as its adapters' names and a maker of that
    group alone: the pytest plugin names its items from the names, and makes a group when
    one of its items runs, so collecting the suite makes no plan (14 s and 520 MB for
    the default adapters on a fresh cache, measured in session 30).

    A made group's references are asked once, and each one's reachability audit goes into
    its coverage entry. The slices are :class:`SliceRef`: what the unit cache's key needs
    (reference, digest) comes from a small cached :class:`PlanSummary`, and the plan itself
    (145 MB for o200k_base) is read or made only when a unit of its group is not in the
    cache."""
    for reference, names in _groups(runner.selected):
        yield names, functools.partial(_group_tasks, runner, reference, names)


def _group_tasks(runner: Any, reference: Calls, names: list[str]) -> GroupTasks:
    selected = runner.selected
    cache = getattr(runner, "unit_cache", None)
    source = PlanSource(selected, reference, cache, encode_many=runner.jobs.encode_many(reference.name))
    summary = source.summary() if cache is None else \
        cache.remembered(selected, "every-token", [reference.name], [b"summary"], source.summary)
    runner.coverage.audited(reference, summary.reachability)
    slices = [SliceRef(source, n, digest) for n, digest in enumerate(summary.digests)]
    return [(name, [(token_slice, (name,)) for token_slice in slices]) for name in names]


@dataclass(frozen=True)
class PlanSummary:
    """What an encoding's units need of its plan before they run: each slice's digest
    (the unit cache's key) and the reference's reachability audit (its coverage entry)."""

    digests: tuple[bytes, ...]
    reachability: dict[str, Any]


class PlanSource:
    """One reference's :class:`EveryTokenPlan`, read or made at the first question, of
    which only the slices are kept."""

    def __init__(self, selected: Any, reference: Calls, cache: Any, *, encode_many: EncodeMany | None = None) -> None:
        self.selected, self.reference, self.cache = selected, reference, cache
        self.encode_many = encode_many
        self._slices: tuple[TokenSlice, ...] | None = None
        self._summary: PlanSummary | None = None

    def slices(self) -> tuple[TokenSlice, ...]:
        if self._slices is None:
            self._load()
        return self._slices  # type: ignore[return-value]

    def summary(self) -> PlanSummary:
        if self._summary is None:
            self._load()
        return self._summary  # type: ignore[return-value]

    def _load(self) -> None:
        plan = plan_for(self.selected, self.reference, self.cache, encode_many=self.encode_many)
        self.reference.forget_pieces(plan.ids)  # the plan holds what the slices need
        self._slices = plan.slices
        self._summary = PlanSummary(tuple(s.digest for s in plan.slices), plan.reachability_json())
        # the rest of the plan (every ID's bytes, the audit) goes with this frame


class SliceRef:
    """A slice of an encoding's plan, by position, that reads the plan only when its
    content is asked for; pickled (to a ``--jobs`` process or a Dask worker) it is the
    :class:`TokenSlice` itself."""

    __slots__ = ("source", "index", "digest")

    def __init__(self, source: PlanSource, index: int, digest: bytes) -> None:
        self.source, self.index, self.digest = source, index, digest

    @property
    def reference(self) -> str:
        return self.source.reference.name

    def resolve(self) -> TokenSlice:
        token_slice = self.source.slices()[self.index]
        if token_slice.digest != self.digest:  # the cached summary is of another plan
            raise RuntimeError(f"every-token: slice {self.index} of {self.reference}'s plan is not the one its "
                               f"cached summary names; clear the unit cache (tokconf run --no-cache, or remove "
                               f"its units/ folder)")
        return token_slice

    def __getattr__(self, name: str) -> Any:
        return getattr(self.resolve(), name)

    def __len__(self) -> int:
        return len(self.resolve())

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _same, (self.resolve(),)


def _same(value: Any) -> Any:
    return value
