"""What every check shares: the subject of a check, its result, and small pure helpers.

A check looks at one :class:`Subject` (one input text, the adapter under test, the
reference adapter of its encoding, the policy, and the case if the input came from one)
and returns one of:

- ``AGREE``: the check ran and found nothing;
- ``SKIP``: the check does not apply to this input (not counted as an input);
- ``UNSUPPORTED``: the adapter does not offer the operation the check needs;
- a :class:`Finding`: a difference, with a *kind*.

The **kind** is a short, coarse description of the difference (``segmentation``: both
ID lists decode to the same bytes; ``raised:unencodable-text|ok``: the adapter raised
where the reference did not). It does two jobs: shrinking keeps it (a candidate only
counts as still failing if it fails *the same way*), and a documented divergence that
reproduced in a case explains later generated inputs of the same (adapter, check, kind)
— see :mod:`harness.run.runner`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Literal, Union

from harness.calls import Calls
from harness.cases.model import Case, Policy
from harness.outcomes import Outcome

__all__ = [
    "AGREE",
    "ALL",
    "DEFAULT",
    "ORDINARY",
    "SKIP",
    "UNSUPPORTED",
    "CheckFn",
    "Finding",
    "Result",
    "Subject",
    "declared_policy",
    "expected_text",
    "first_difference",
    "policy_flags",
    "shape",
    "utf16_text",
]

AGREE = "agree"
SKIP = "skip"
UNSUPPORTED = "unsupported"

#: tiktoken's default: no literal allowed, every literal an error.
DEFAULT = Policy()
#: every literal becomes its special ID.
ALL = Policy(allowed_special="all", disallowed_special=frozenset())
#: every literal is ordinary text (what ``encode_ordinary`` means); generated inputs use it.
ORDINARY = Policy(allowed_special=frozenset(), disallowed_special=frozenset())


@dataclass(frozen=True)
class Finding:
    """One difference one check saw for one adapter on one input."""

    adapter: str
    check: str
    kind: str
    detail: str
    text: str
    policy: Policy = ORDINARY
    #: labelled outcomes to show: adapter names (or "expected") -> Outcome
    outcomes: tuple[tuple[str, Outcome], ...] = ()
    #: ID lists to align and show as pieces: (adapter name, IDs); first is the adapter's
    ids: tuple[tuple[str, tuple[int, ...]], ...] = ()
    #: the adapter under test differs from tiktoken semantics only as its
    #: ``special_policy`` declares (see harness.checks.special)
    declared: bool = False
    #: for divergences about IDs rather than text (vocab-consistency): the IDs to decode
    decode_ids: tuple[int, ...] | None = None
    #: whether another text can show it (not so for a case's own expectations and probes)
    shrinkable: bool = True
    #: every kind the check saw on this input, ``kind`` first (empty: ``kind`` alone); a
    #: second symptom never hides the first (issue 22: tiktoken 0.9.0's ``_encode_bytes``
    #: bug and ``encode_to_numpy``'s on one lone surrogate)
    kinds: tuple[str, ...] = ()

    def each_kind(self) -> list[Finding]:
        """One finding per kind this one showed (itself when it showed one)."""
        if len(self.kinds) < 2:
            return [self]
        return [replace(self, kind=k, kinds=()) for k in self.kinds]

    def shows(self, kind: str) -> bool:
        """Whether this finding showed ``kind`` (as its first kind or another)."""
        return kind == self.kind or kind in self.kinds


Result = Union[Literal["agree", "skip", "unsupported"], Finding]


@dataclass
class Subject:
    """One input as a check sees it."""

    text: str
    policy: Policy
    adapter: Calls
    reference: Calls
    case: Case | None = None

    @property
    def name(self) -> str:
        return self.adapter.name

    @property
    def is_reference(self) -> bool:
        return self.adapter is self.reference

    def finding(self, check: str, kind: str, detail: str, **extra: object) -> Finding:
        return Finding(adapter=self.name, check=check, kind=kind, detail=detail, text=self.text,
                       policy=extra.pop("policy", self.policy), **extra)  # type: ignore[arg-type]


CheckFn = Callable[[Subject], Result]


def shape(outcome: Outcome) -> str:
    """``ok``, ``raised:<category>``, ``timeout`` or ``crashed:<cause>``: an outcome without its value.

    >>> shape(Outcome.ok((1, 2))), shape(Outcome.raised("unknown-id", "builtins.KeyError", "9"))
    ('ok', 'raised:unknown-id')
    >>> shape(Outcome.crashed("SIGSEGV")), shape(Outcome.timeout(5))
    ('crashed:SIGSEGV', 'timeout')
    """
    if outcome.kind in ("raised", "crashed") and outcome.category:
        return f"{outcome.kind}:{outcome.category}"
    return outcome.kind


def declared_policy(policy: Policy, special_policy: str) -> Policy:
    """The tiktoken policy that reproduces an adapter's *native* handling of ``policy``.

    >>> declared_policy(DEFAULT, "none") == ORDINARY
    True
    >>> declared_policy(DEFAULT, "always-special") == ALL
    True
    >>> declared_policy(Policy(allowed_special=frozenset({"<a>"})), "ordinary-unless-allowed")
    Policy(allowed_special=frozenset({'<a>'}), disallowed_special=frozenset())
    """
    if special_policy == "always-special":
        return ALL
    if special_policy == "ordinary-unless-allowed":
        return Policy(allowed_special=policy.allowed_special, disallowed_special=frozenset())
    if special_policy == "none":
        return ORDINARY
    return policy


def expected_text(text: str) -> str:
    r"""The text a byte-level tokenizer can give back: surrogates resolved per code point.

    A ``str`` may hold surrogate code points, which UTF-8 cannot carry. Walking code
    point by code point: a high surrogate directly followed by a low one is read as the
    one character the pair encodes in UTF-16 (as Python's ``utf-16`` codec and tiktoken
    do); every other surrogate becomes U+FFFD. Everything else is kept.

    >>> expected_text("a\ud800b\udc00")
    'a\ufffdb\ufffd'
    >>> expected_text("\ud83d\ude00\udc00\ud800")
    '😀\ufffd\ufffd'
    """
    if text.isascii() or _has_no_surrogate(text):
        return text  # nothing to resolve: the common case, answered in C
    out: list[str] = []
    i = 0
    while i < len(text):
        code = ord(text[i])
        if 0xD800 <= code <= 0xDBFF and i + 1 < len(text) and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
            out.append(chr(0x10000 + ((code - 0xD800) << 10) + (ord(text[i + 1]) - 0xDC00)))
            i += 2
            continue
        out.append("\ufffd" if 0xD800 <= code <= 0xDFFF else text[i])
        i += 1
    return "".join(out)


def _has_no_surrogate(text: str) -> bool:
    """Whether UTF-8 can carry ``text``: only a surrogate stops it. Encoding 2 KB of prose
    takes 2 us here, searching it for a surrogate with a pattern 14 us (a corpus asks
    this of every document and adapter)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def utf16_text(text: str) -> str:
    r"""``text`` as a UTF-16 language holds it: a high surrogate followed by a low one is
    the character the pair encodes, every other surrogate stays. A JavaScript adapter's
    strings come back this way (:mod:`harness.worker.node`): two surrogate code points in
    a Python ``str`` are one character in JavaScript.

    >>> utf16_text("\ud8dd\ud800\uddda")
    '\ud8dd𐇚'
    """
    if text.isascii() or _has_no_surrogate(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def first_difference(a: tuple[int, ...], b: tuple[int, ...]) -> int | None:
    """Index of the first position where two ID lists differ (``None`` if equal).

    >>> first_difference((1, 2, 3), (1, 5)), first_difference((1, 2), (1, 2, 3)), first_difference((1,), (1,))
    (1, 2, None)
    """
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def policy_flags(policy: Policy) -> list[str]:
    """``tokconf encode`` flags for a policy (none for the default).

    >>> policy_flags(ORDINARY), policy_flags(ALL), policy_flags(DEFAULT)
    (['--disallowed-special', 'none'], ['--allowed-special', 'all', '--disallowed-special', 'none'], [])
    >>> policy_flags(Policy(allowed_special=frozenset({"<|b|>", "<|a|>"})))
    ['--allowed-special', '<|a|>', '--allowed-special', '<|b|>']
    """
    flags: list[str] = []
    allowed, disallowed = policy.allowed_special, policy.disallowed_special
    if allowed == "all":
        flags += ["--allowed-special", "all"]
    else:  # one value per flag: `tokconf encode` repeats the flag (TEXT is never swallowed)
        for token in sorted(allowed):
            flags += ["--allowed-special", token]
    if disallowed != "all":
        for token in sorted(disallowed) or ["none"]:
            flags += ["--disallowed-special", token]
    return flags
