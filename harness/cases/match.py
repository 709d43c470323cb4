"""Which adapters a case applies to, and which of its expectations applies to one adapter.

Every consumer of cases (checks, runner, pytest plugin, reports) must read a case the
same way, so the rules live here once: an adapter is named exactly, by ``kind:*``, or by
a shell pattern; for one adapter the most specific key wins (its exact name, then the
longest matching pattern, then its encoding), across ``ids`` and ``errors`` together.

An adapter over the same library as another shares what cases declare about that
library's native behaviour: ``also`` holds the names it declares like
(``Adapter.declares_like``: a converted ``hf-json:`` file is read as ``hf:<encoding>``),
matched as patterns are, after its own name.
"""

from __future__ import annotations

import fnmatch
from typing import Iterable, Mapping, Sequence, TypeVar

from harness.cases.model import Case, DocumentedDivergence, ExpectedError

__all__ = ["adapter_matches", "any_release", "case_applies_to", "documented_for", "documenting", "expectation_for",
           "lookup", "unknown_adapter_kinds"]

T = TypeVar("T")


def adapter_matches(pattern: str, name: str) -> bool:
    """Whether an adapter name matches a name or pattern from a case.

    ``kind:*`` matches every adapter of that kind (and a bare ``kind``); other
    patterns use shell wildcards.

    >>> adapter_matches("hf:*", "hf:cl100k_base"), adapter_matches("hf:*", "hf-json:x")
    (True, False)
    >>> adapter_matches("source:*simple.ipynb:*", "source:/up/ch02/bpe-from-scratch-simple.ipynb:BPETokenizerSimple")
    True
    """
    if pattern == name or (pattern.endswith(":*") and name == pattern[:-2]):
        return True
    return any(ch in pattern for ch in "*?[") and fnmatch.fnmatchcase(name, pattern)


def _matches(pattern: str, adapter: str, also: Sequence[str]) -> bool:
    return adapter_matches(pattern, adapter) or any(adapter_matches(pattern, a) for a in also)


def any_release(pattern: str) -> str:
    """A case's adapter pattern that names one release, widened to every release of that
    package: a case written against ``js-tiktoken@1.0.21:*`` runs on ``js-tiktoken@1.0.7:*``
    too, so an older release with the same bug does not look fixed (issue 22). A version
    written as a glob (``js-tiktoken@1.0.2[1]:*``) says otherwise and stays as it is.

    >>> any_release("js-tiktoken@1.0.21:*"), any_release("tiktoken@0.9.0:cl100k_base")
    ('js-tiktoken@*:*', 'tiktoken@*:cl100k_base')
    >>> any_release("js-tiktoken@1.0.2[1]:*"), any_release("hf:*")
    ('js-tiktoken@1.0.2[1]:*', 'hf:*')
    """
    kind, colon, rest = pattern.partition(":")
    package, at, version = kind.partition("@")
    if not at or not colon or not version or any(ch in version for ch in "*?["):
        return pattern
    return f"{package}@*:{rest}"


def case_applies_to(case: Case, adapter: str, encoding: str, also: Sequence[str] = ()) -> bool:
    """Whether ``case`` runs on this adapter (both ``encodings`` and ``adapters`` must allow
    it); a pattern naming one release names every release (:func:`any_release`)."""
    if case.encodings is not None and encoding not in case.encodings:
        return False
    return case.adapters is None or any(_matches(any_release(p), adapter, also) for p in case.adapters)


def _score(key: str, adapter: str, encoding: str, also: Sequence[str] = ()) -> tuple[int, int]:
    if key == adapter:
        return (3, 0)
    if adapter_matches(key, adapter):
        return (2, len(key))  # the longer pattern is the more specific
    if any(adapter_matches(key, a) for a in also):
        return (2, 0)  # a declared likeness is less specific than any pattern on its own name
    return (1, 0) if key == encoding else (0, 0)


def lookup(mapping: Mapping[str, T], adapter: str, encoding: str, also: Sequence[str] = ()) -> T | None:
    """The entry for this adapter: exact name, else the most specific pattern, else encoding.

    >>> lookup({"cl100k_base": 1, "hf:*": 2, "hf:cl100k_base": 3}, "hf:cl100k_base", "cl100k_base")
    3
    >>> lookup({"cl100k_base": 1, "hf:*": 2}, "minbpe:cl100k_base", "cl100k_base")
    1
    """
    best = max(mapping, key=lambda k: _score(k, adapter, encoding, also), default=None)
    return mapping[best] if best is not None and _score(best, adapter, encoding, also)[0] else None


def expectation_for(case: Case, adapter: str, encoding: str,
                    also: Sequence[str] = ()) -> tuple[int, ...] | ExpectedError | None:
    """What encoding the case's text must give this adapter: IDs, an error, or nothing.

    IDs and errors compete on the same footing, so ``ids: {cl100k_base: [...]}`` with
    ``errors: {minbpe:cl100k_base: ...}`` gives minbpe the error and the others the IDs.
    """
    merged: dict[str, tuple[int, ...] | ExpectedError] = {**case.expect_ids, **case.expect_errors}
    return lookup(merged, adapter, encoding, also)


def documented_for(case: Case, adapter: str, check: str, also: Sequence[str] = ()) -> DocumentedDivergence | None:
    """The documented divergence covering (adapter, check) on this case, if any."""
    for entry in case.documented:
        if entry.check == check and any(_matches(p, adapter, also) for p in entry.adapters):
            return entry
    return None


def documenting(cases: Iterable[Case], check: str, likes: Mapping[str, Sequence[str]]) -> list[str]:
    """The adapters of ``likes`` (each name -> the names it declares like) for which one of
    ``cases`` documents ``check``, matched as :func:`documented_for` matches them.

    >>> doc = DocumentedDivergence(adapters=("hf:*",), check="vocab-consistency", reason="r", source="s")
    >>> case = Case(id="c", text="a", file="f.yaml", line=1, documented=(doc,))
    >>> documenting([case], "vocab-consistency", {"hf-json:x.json": ("hf:cl100k_base",), "tiktoken:gpt2": ()})
    ['hf-json:x.json']
    """
    cases = [case for case in cases if any(entry.check == check for entry in case.documented)]
    return [name for name, also in likes.items() if any(documented_for(case, name, check, also) for case in cases)]


def unknown_adapter_kinds(cases: Iterable[Case], known_kinds: Iterable[str]) -> list[tuple[str, int, str, str, str]]:
    """Documented entries naming an adapter kind nothing registers (``tiktokn:*``).

    Such an entry matches no adapter, so it would load and never run: a typo that
    silently documents nothing. A kind with ``@VERSION`` names an adapter of an
    environment (``tokconf env add``), which this machine may not have: accepted when
    its library kind is known, and also when it is not, since environments can bring
    kinds of their own (``js-tiktoken@1.0.21``). Each problem is (file, line, field, what
    was expected, case id): :class:`harness.cases.loader.CaseProblem`'s fields.
    """
    known = set(known_kinds)
    bases = known | {k.split("@", 1)[0] for k in known}
    problems: list[tuple[str, int, str, str, str]] = []
    for case in cases:
        for entry in case.documented:
            for pattern in entry.adapters:
                kind = pattern.split(":", 1)[0]
                if kind in known or "@" in kind:
                    continue
                if any(ch in kind for ch in "*?[") and any(fnmatch.fnmatchcase(k, kind) for k in bases):
                    continue
                problems.append((
                    case.file, entry.line or case.line, "documented.adapters",
                    f"an adapter kind that exists; {pattern!r} names kind {kind!r}, which no installed "
                    f"adapter has (known kinds: {', '.join(sorted(known))}). Fix the name, or install "
                    f"the package that provides it", case.id))
    return problems
