"""Whether a shipped case documents a gate's change, and a command that shows it again.

A change between two releases is *known* when a shipped case documents a divergence of
one of the two adapters on that input (its own text, or its ``domain``) whose kind names
the same API path (``changed:_encode_bytes:ok|ok`` names ``_encode_bytes``; id-parity
and ``expected`` entries name the encode paths). Documented against the golden's adapter
(the old release) it is a **known fix**: the release that had the bug no longer shows it
here. Documented against the adapter of this run it is a **known break**.

The command re-runs exactly that input and path from the golden against this run's
adapter (``tokconf gate GOLDEN --impl NOW --input SOURCE --path PATH``): the golden holds
what the old release returned, the command calls the new one, and it exits 1 while the
change is there.
"""

from __future__ import annotations

import shlex
from typing import Any, Sequence

from harness.cases.match import adapter_matches
from harness.cases.model import Case

__all__ = ["KnownChanges", "gate_command", "known_change"]


def _names_path(kind: str | None, check: str, path: str) -> bool:
    """Whether a documented kind is about ``path``.

    >>> _names_path("inconsistent:_encode_bytes→decode_bytes~input bytes:ok|ok", "api-surface", "_encode_bytes")
    True
    >>> _names_path("changed:encode_to_numpy[ordinary]:ok|ok", "api-surface", "encode_to_numpy[all]")
    False
    """
    if check in ("id-parity", "expected") and path.startswith("encode"):
        return True
    if not kind or ":" not in kind:
        return False
    named = kind.split(":")[1].split("~")[0].split("→")[0]
    return path == named or path.partition("[")[0] == named


def _covers_text(case: Case, domain: Any, text: str) -> bool:
    return text == case.text or (domain is not None and domain.contains(text))


class KnownChanges:
    """:func:`known_change` over one list of cases, with the entries that can document a
    (adapter, now, path) found once (a gate has thousands of changes, the cases hundreds
    of entries)."""

    def __init__(self, cases: Sequence[Case]) -> None:
        self.cases = cases
        self._entries: dict[tuple[str, str, str, str], list[tuple[Case, Any, str]]] = {}

    def __call__(self, adapter: str, now: str, path: str, text: str, encoding: str) -> dict[str, str] | None:
        if not text:
            return None
        key = (adapter, now, path, encoding)
        if key not in self._entries:
            found = []
            for case in self.cases:
                if case.encodings is not None and encoding not in case.encodings:
                    continue
                for entry in case.documented:
                    if not _names_path(entry.kind, entry.check, path):
                        continue
                    if any(adapter_matches(p, adapter) for p in entry.adapters):
                        found.append((case, entry.domain, "known fix"))
                    elif any(adapter_matches(p, now) for p in entry.adapters):
                        found.append((case, entry.domain, "known break"))
            self._entries[key] = found
        for case, domain, known_as in self._entries[key]:
            if _covers_text(case, domain, text):
                return {"case": case.id, "as": known_as}
        return None


def known_change(cases: Sequence[Case], adapter: str, now: str, path: str, text: str,
                 encoding: str) -> dict[str, str] | None:
    """``{"case": id, "as": "known fix" | "known break"}`` for the first shipped case of
    ``encoding`` that documents this change, else None."""
    return KnownChanges(cases)(adapter, now, path, text, encoding)


def gate_command(golden: str, now: str, source: str, path: str) -> str:
    """The command that re-runs one input and path of ``golden`` on ``now``; exit 1 while
    it still differs.

    >>> gate_command("old.tokconf", "tiktoken:cl100k_base", "case:x", "_encode_bytes")
    'tokconf gate old.tokconf --impl tiktoken:cl100k_base --input case:x --path _encode_bytes'
    """
    q = shlex.quote
    return f"tokconf gate {q(golden)} --impl {q(now)} --input {q(source)} --path {q(path)}"
