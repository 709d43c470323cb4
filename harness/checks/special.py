"""Special-token handling: the policy matrix, and ``encode_ordinary``.

**special-policy** runs on inputs holding a registered special literal (of the adapter
or of its reference). For each policy of the matrix — ``default`` (nothing allowed,
everything disallowed), ``all``, ``ordinary`` (nothing allowed, nothing disallowed),
``one`` (only the first literal present allowed) — the adapter's outcome is compared
with what tiktoken semantics give (the reference under the same policy) and with what
the adapter's *declared* ``Capabilities.special_policy`` promises (the reference under
:func:`~harness.checks.base.declared_policy`). Three results:

1. same as tiktoken semantics: agreement (a declaration permits a difference, it does
   not demand one: an adapter may follow tiktoken under some policies and its own rule
   under others, as minbpe does with its ``none_raise`` default);
2. different from tiktoken, but exactly what the declaration promises: a *declared
   difference* (kind ``declared:<special_policy>``, ``Finding.declared``);
3. neither: a *violation* (kind ``violation:<policy>:<adapter shape>|<expected shape>``).
   The adapter does not do what it says it does. This is what catches an adapter that
   declares ``tiktoken`` yet treats literals as special under every policy.

Outcomes are compared by what the policy decides (:func:`special_view`): whether encode
raised and in which category, and which special IDs came out in which order. The
ordinary IDs around a literal are id-parity's concern, so one bad merge is not charged
twice.

Why a declared difference is not simply an agreement: a declaration is a line of code,
not an explanation. The house rule is that a divergence passes only when a case in
``cases/`` documents it with a reason and a source, so a declared difference is reported
as *documented* only when a case documents it for that adapter (``documented:`` with
``check: special-policy``), and is *unexpected* otherwise. The declaration still matters
twice: it decides what the check expects, so a violation is never mistaken for the
declared behaviour; and once a case documents the declared behaviour, generated inputs
showing the same declared difference (same kind) count under that documented
divergence instead of raising new ones (see :mod:`harness.run.runner`). An adapter that
declares ``tiktoken`` has no declared differences: all its differences are violations.

An input that the adapter or the reference refuses even as ordinary text (a lone
surrogate, an unknown character of a closed vocabulary) is skipped: no policy can be
judged on it, and error-category or round-trip reports the refusal.

The reference itself (or an adapter that is its own reference) is checked
structurally: under a policy that disallows a literal present, encode must raise
``disallowed-special``; otherwise the IDs must hold the special ID of every allowed
literal present and no special ID of a literal that is not allowed.

**encode-ordinary**: ``encode_ordinary(t)`` must equal ``encode(t, disallowed_special=())``
on the same adapter. For an ``always-special`` adapter the two legitimately differ on a
literal; that is again a declared difference (kind ``declared:always-special``).
"""

from __future__ import annotations

from harness.cases.model import Policy
from harness.checks.base import (
    AGREE,
    ALL,
    DEFAULT,
    ORDINARY,
    SKIP,
    UNSUPPORTED,
    Finding,
    Result,
    Subject,
    declared_policy,
    shape,
)
from harness.outcomes import Outcome

__all__ = ["check_encode_ordinary", "check_special_policy", "policy_matrix"]


def policy_matrix(literals: list[str]) -> list[tuple[str, Policy]]:
    """The policies tried on an input holding ``literals`` (the reference's, in text order).

    >>> [label for label, _ in policy_matrix(["<|endoftext|>"])]
    ['default', 'all', 'ordinary', 'one']
    """
    matrix = [("default", DEFAULT), ("all", ALL), ("ordinary", ORDINARY)]
    if literals:
        matrix.append(("one", Policy(allowed_special=frozenset({literals[0]}), disallowed_special="all")))
    return matrix


def check_special_policy(subject: Subject) -> Result:
    adapter, reference, text = subject.adapter, subject.reference, subject.text
    ref_literals = reference.literals_in(text)
    if not ref_literals and not adapter.literals_in(text):
        return SKIP
    if _refuses_text(subject):
        return SKIP
    if subject.is_reference:
        return _structural(subject)
    declared = adapter.info.capabilities.special_policy
    specials = adapter.info.special_ids | reference.info.special_ids
    first_declared: Finding | None = None
    ran = False
    for label, policy in policy_matrix(ref_literals):
        mine = adapter.encode(text, policy)
        if mine.is_unsupported:
            continue
        ran = True
        tiktoken_like = reference.encode(text, policy)
        if special_view(mine, specials) == special_view(tiktoken_like, specials):
            continue
        promised = reference.encode(text, declared_policy(policy, declared))
        outcomes = ((subject.name, mine), (reference.name, tiktoken_like))
        ids = tuple((n, o.value) for n, o in outcomes if o.is_ok)
        if declared != "tiktoken" and special_view(mine, specials) == special_view(promised, specials):
            if first_declared is None:
                first_declared = subject.finding(
                    "special-policy", f"declared:{declared}",
                    f"policy {label} ({policy.describe()}): {subject.name} follows its declared "
                    f"special_policy {declared!r}, which differs from tiktoken semantics",
                    policy=policy, outcomes=outcomes, ids=ids, declared=True,
                )
            continue
        return subject.finding(
            "special-policy", f"violation:{label}:{shape(mine)}|{shape(promised)}",
            f"policy {label} ({policy.describe()}): {subject.name} {mine.describe()}; its "
            f"declared special_policy {declared!r} promises {promised.describe()}",
            policy=policy, outcomes=((subject.name, mine), (f"{reference.name} (as declared)", promised)),
            ids=tuple((n, o.value) for n, o in ((subject.name, mine), (reference.name, promised)) if o.is_ok),
        )
    if not ran:
        return UNSUPPORTED
    return first_declared or AGREE


def _refuses_text(subject: Subject) -> bool:
    """The adapter (or reference) refuses this text whatever the policy (a lone surrogate).

    Then no policy can be judged on it; error-category reports the refusal.
    """
    for calls in (subject.adapter, subject.reference):
        ordinary = calls.encode(subject.text, ORDINARY)
        if ordinary.kind == "raised" and ordinary.category not in ("disallowed-special", "unsupported"):
            return True
    return False


def special_view(outcome: Outcome, specials: frozenset[int]) -> tuple[object, ...]:
    """What the policy decides: the outcome's shape, and which special IDs came out, in order.

    Ordinary IDs are id-parity's business, so they are left out here.

    >>> special_view(Outcome.ok((27, 100257, 91)), frozenset({100257}))
    ('ok', (100257,))
    """
    if not outcome.is_ok:
        return (shape(outcome),)
    return ("ok", tuple(i for i in outcome.value if i in specials))


def _structural(subject: Subject) -> Result:
    adapter, text = subject.adapter, subject.text
    literals = adapter.literals_in(text)
    if not literals:
        return SKIP
    declared = adapter.info.capabilities.special_policy
    first_declared: Finding | None = None
    ran = False
    for label, policy in policy_matrix(literals):
        got = adapter.encode(text, policy)
        if got.is_unsupported:
            continue
        ran = True
        if _meets(subject, got, literals, policy):
            continue
        outcomes = ((subject.name, got),)
        ids = ((subject.name, got.value),) if got.is_ok else ()
        if declared != "tiktoken" and _meets(subject, got, literals, declared_policy(policy, declared)):
            if first_declared is None:
                first_declared = subject.finding(
                    "special-policy", f"declared:{declared}",
                    f"policy {label}: follows its declared special_policy {declared!r}",
                    policy=policy, outcomes=outcomes, ids=ids, declared=True)
            continue
        return subject.finding(
            "special-policy", f"violation:{label}:{shape(got)}",
            f"policy {label} ({policy.describe()}): {got.describe()} breaks "
            f"{declared!r} semantics for {literals!r}",
            policy=policy, outcomes=outcomes, ids=ids)
    if not ran:
        return UNSUPPORTED
    return first_declared or AGREE


def _meets(subject: Subject, got: Outcome, literals: list[str], policy: Policy) -> bool:
    """Whether ``got`` is what tiktoken semantics give for ``policy`` on these literals."""
    specials = subject.adapter.info.specials
    allowed = set(specials) if policy.allowed_special == "all" else set(policy.allowed_special)
    if policy.disallowed_special == "all":
        disallowed = set(specials) - allowed
    else:
        disallowed = set(policy.disallowed_special)
    if any(lit in disallowed for lit in literals):
        return got.kind == "raised" and got.category == "disallowed-special"
    if not got.is_ok:
        return False
    present = set(got.value) & set(specials.values())
    wanted = {specials[lit] for lit in literals if lit in allowed}
    return present == wanted


def check_encode_ordinary(subject: Subject) -> Result:
    adapter = subject.adapter
    if not adapter.info.capabilities.encode_ordinary:
        return UNSUPPORTED
    ordinary = adapter.encode_ordinary(subject.text)
    explicit = adapter.encode(subject.text, ORDINARY)
    if ordinary.is_unsupported or explicit.is_unsupported:
        return UNSUPPORTED
    if ordinary.same_as(explicit):
        return AGREE
    declared = adapter.info.capabilities.special_policy
    if declared == "always-special" and adapter.literals_in(subject.text):
        kind = "declared:always-special"
    elif ordinary.is_ok and explicit.is_ok:
        kind = "ids"
    else:
        kind = f"{shape(ordinary)}|{shape(explicit)}"
    return subject.finding(
        "encode-ordinary", kind,
        f"encode_ordinary gives {ordinary.describe()}; encode(disallowed_special=()) gives "
        f"{explicit.describe()}",
        policy=ORDINARY,
        outcomes=((f"{subject.name} encode_ordinary", ordinary), (f"{subject.name} encode", explicit)),
        ids=tuple((n, o.value) for n, o in ((f"{subject.name} encode_ordinary", ordinary), (f"{subject.name} encode", explicit)) if o.is_ok),
        declared=kind.startswith("declared:"),
    )
