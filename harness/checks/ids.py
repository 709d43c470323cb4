"""Checks on what ``encode`` returns: ID parity, error categories, a case's own expectations.

**id-parity** and **error-category** compare the adapter with the reference adapter of
its encoding under the same policy. Where the text holds a special literal and the
adapter declares non-tiktoken special-token handling, the reference is also asked under
the declared policy (:func:`~harness.checks.base.declared_policy`) and the adapter judged
against that, so a literal that HF turns into a special ID by design is charged once, to
the special-policy check, and not again here. Everything else is compared exactly.

- id-parity: both succeed and the IDs differ. Kind ``segmentation`` when both lists
  decode to the same bytes (other merges or other pre-token chunks), ``content`` when
  the bytes differ too (text was changed, dropped or added).
- error-category: one raised and the other did not, or both raised in different
  categories. Kind ``<adapter shape>|<reference shape>``, e.g. ``raised:unencodable-text|ok``.
  A *fault* (``internal-error``, ``timeout``, ``crashed:<cause>``: see
  :attr:`~harness.outcomes.Outcome.is_fault`) is the adapter's own finding even where the
  reference fails the same way and on the reference itself, which has nothing to be
  compared with: kind ``<shape>`` alone, e.g. ``raised:internal-error`` (tiktoken on a
  million spaces) or ``crashed:SIGSEGV``.

**expected** compares the adapter with what the case itself says: IDs or an error
(matched by :func:`harness.cases.loader.expectation_for`), whether the exact round trip holds,
pre-token chunks, merge rounds. These are compared *as written*, under the case's policy,
with no allowance for declared policies: a case that expects IDs for an encoding means
every adapter of it, and a documented divergence says otherwise where that is wrong.
"""

from __future__ import annotations

from typing import Any

from harness.cases.loader import expectation_for, lookup
from harness.cases.model import ExpectedError, Policy
from harness.checks.base import (
    AGREE,
    SKIP,
    UNSUPPORTED,
    Result,
    Subject,
    declared_policy,
    shape,
)
from harness.outcomes import Outcome

__all__ = ["check_error_category", "check_expected", "check_id_parity", "compare_ids"]


def _pair(subject: Subject) -> tuple[Outcome, Outcome]:
    """The adapter's outcome and the reference outcome it is judged against.

    Normally the reference under the same policy. On a text holding a special literal,
    an adapter whose declared special_policy is not tiktoken's is judged against the
    reference under the declared policy when that is what it matches, or when neither
    matches (the closer statement of what it should do); the special-policy check owns
    the declared difference itself.
    """
    adapter, reference, text = subject.adapter, subject.reference, subject.text
    mine = adapter.encode(text, subject.policy)
    same = reference.encode(text, subject.policy)
    declared = adapter.info.capabilities.special_policy
    if mine.same_as(same) or declared == "tiktoken":
        return mine, same
    if not (reference.literals_in(text) or adapter.literals_in(text)):
        return mine, same
    return mine, reference.encode(text, declared_policy(subject.policy, declared))


def compare_ids(subject: Subject, check: str) -> Result:
    """id-parity's comparison, reused by vocab-consistency for token texts."""
    if subject.is_reference:
        return SKIP  # comparing the reference with itself checks nothing: not an input of its row
    mine, theirs = _pair(subject)
    if mine.is_unsupported:
        return UNSUPPORTED
    if not (mine.is_ok and theirs.is_ok):
        return SKIP  # error-category's business
    if mine.value == theirs.value:
        return AGREE
    same_bytes = subject.adapter.decode_bytes(mine.value).same_as(subject.reference.decode_bytes(theirs.value))
    kind = "segmentation" if same_bytes else "content"
    return subject.finding(
        check,
        kind,
        f"{subject.name} gives {len(mine.value)} IDs, {subject.reference.name} gives "
        f"{len(theirs.value)}"
        + (" (same bytes, different tokens)" if same_bytes else " (the bytes differ)"),
        outcomes=((subject.name, mine), (subject.reference.name, theirs)),
        ids=((subject.name, mine.value), (subject.reference.name, theirs.value)),
    )


def check_id_parity(subject: Subject) -> Result:
    return compare_ids(subject, "id-parity")


def check_error_category(subject: Subject) -> Result:
    if subject.is_reference:
        return _own_fault(subject, subject.adapter.encode(subject.text, subject.policy))
    mine, theirs = _pair(subject)
    if mine.is_unsupported:
        return UNSUPPORTED
    if theirs.is_unsupported:
        return SKIP
    if mine.is_ok and theirs.is_ok:
        return AGREE
    if not mine.is_ok and not theirs.is_ok and mine.category == theirs.category and mine.kind == theirs.kind:
        return _own_fault(subject, mine)
    kind = f"{shape(mine)}|{shape(theirs)}"
    return subject.finding(
        "error-category",
        kind,
        f"{subject.name}: {mine.describe()}; {subject.reference.name}: {theirs.describe()}",
        outcomes=((subject.name, mine), (subject.reference.name, theirs)),
        ids=tuple((n, o.value) for n, o in ((subject.name, mine), (subject.reference.name, theirs)) if o.is_ok),
    )


def _own_fault(subject: Subject, mine: Outcome) -> Result:
    """A fault is a finding of the adapter even with nothing (or the same) beside it."""
    if not mine.is_fault:
        return AGREE
    return subject.finding(
        "error-category", shape(mine),
        f"{subject.name}: {mine.describe()} (an internal error, time-out or crash is a finding "
        f"of the adapter itself)",
        outcomes=((subject.name, mine),),
    )


def _error_matches(outcome: Outcome, expected: ExpectedError) -> bool:
    if outcome.kind != "raised" or outcome.category != expected.category:
        return False
    if expected.native_type is None:
        return True
    native = outcome.native_type or ""
    return native == expected.native_type or native.endswith("." + expected.native_type)


def check_expected(subject: Subject) -> Result:
    case = subject.case
    if case is None:
        return SKIP
    info = subject.adapter.info
    name, encoding, text = info.name, info.encoding, subject.text
    ran = False
    expectation = expectation_for(case, name, encoding, subject.adapter.info.declares_like)
    if expectation is not None:
        ran = True
        got = subject.adapter.encode(text, case.policy)
        if isinstance(expectation, ExpectedError):
            if not _error_matches(got, expectation):
                wanted = Outcome(kind="raised", category=expectation.category,
                                 native_type=expectation.native_type, message="(expected)")
                return subject.finding(
                    "expected", f"error:{shape(got)}",
                    f"expected {expectation.category}"
                    + (f" ({expectation.native_type})" if expectation.native_type else "")
                    + f", got {got.describe()}",
                    policy=case.policy, shrinkable=False, outcomes=((name, got), ("expected", wanted)),
                    ids=((name, got.value),) if got.is_ok else (),
                )
        elif not (got.is_ok and got.value == tuple(expectation)):
            return subject.finding(
                "expected", "ids" if got.is_ok else f"ids:{shape(got)}",
                f"expected IDs {list(expectation)}, got {got.describe()}",
                policy=case.policy, shrinkable=False, outcomes=((name, got), ("expected", Outcome.ok(tuple(expectation)))),
                ids=(((name, got.value),) if got.is_ok else ()) + (("expected", tuple(expectation)),),
            )
    if case.expect_roundtrip is not None:
        ran = True
        holds, got = _exact_round_trip(subject, case.policy)
        if holds != case.expect_roundtrip:
            return subject.finding(
                "expected", "roundtrip",
                f"expected the exact round trip to {'hold' if case.expect_roundtrip else 'fail'}; "
                f"it {'holds' if holds else 'fails'} ({got.describe()})",
                policy=case.policy, shrinkable=False, outcomes=((name, got),),
            )
    # an expectation the adapter cannot be asked about is passed over, never the end of
    # the check: the trace expectation after an unsupported pretokenize still runs
    unsupported = False
    pretokens = lookup(case.expect_pretokens, name, encoding, subject.adapter.info.declares_like)
    chunks = subject.adapter.pretokenize(text) if pretokens is not None else None
    if chunks is not None and chunks.is_unsupported:
        unsupported = True
    elif chunks is not None and pretokens is not None:
        ran = True
        if not (chunks.is_ok and tuple(chunks.value) == tuple(pretokens)):
            return subject.finding(
                "expected", "pretokens",
                f"expected pre-token chunks {list(pretokens)!r}, got {chunks.describe()}",
                policy=case.policy, shrinkable=False, outcomes=((name, chunks), ("expected", Outcome.ok(tuple(pretokens)))),
            )
    rounds = lookup(case.expect_trace, name, encoding, subject.adapter.info.declares_like)
    traced = subject.adapter.trace(text) if rounds is not None else None
    if traced is not None and traced.is_unsupported:
        unsupported = True
    elif traced is not None and rounds is not None:
        ran = True
        problem = _trace_problem(traced, rounds)
        if problem is not None:
            return subject.finding("expected", "trace", problem, policy=case.policy, shrinkable=False,
                                   outcomes=((name, traced),))
    if ran:
        return AGREE
    return UNSUPPORTED if unsupported else SKIP


def _exact_round_trip(subject: Subject, policy: Policy) -> tuple[bool, Outcome]:
    """Whether ``decode_bytes(encode(text))`` gives exactly the text's UTF-8 bytes."""
    got = subject.adapter.encode(subject.text, policy)
    if not got.is_ok:
        return False, got
    decoded = subject.adapter.decode_bytes(got.value)
    try:
        wanted = subject.text.encode("utf-8")
    except UnicodeEncodeError:
        return False, decoded  # a lone surrogate has no exact bytes to give back
    return decoded.is_ok and decoded.value == wanted, decoded


def _trace_problem(got: Outcome, rounds: tuple[Any, ...]) -> str | None:
    if not got.is_ok:
        return f"expected {len(rounds)} merge rounds, got {got.describe()}"
    actual = [r.to_json() for r in got.value]
    if len(actual) != len(rounds):
        return f"expected {len(rounds)} merge rounds, got {len(actual)}: {actual!r}"
    for i, (want, have) in enumerate(zip(rounds, actual)):
        for key in ("rank", "merged"):
            value = getattr(want, key)
            if value is not None and have[key] != value:
                return f"round {i}: expected {key} {value}, got {have[key]} ({have!r})"
        if want.pair is not None and list(want.pair) != list(have["pair"]):
            return f"round {i}: expected pair {list(want.pair)!r}, got {have['pair']!r}"
    return None
