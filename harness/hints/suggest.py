"""Unknown names, answered with the closest known ones: one per line, did-you-mean first.

``--impl nosuch:thing`` used to print all 35 adapter names on one line. A reader wants the
one they meant: :func:`unknown_name` puts the closest matches first (``difflib``, the
same measure Python's own "did you mean" uses for names), then the names of the kind
they typed, one per line, and where to see the rest.
"""

from __future__ import annotations

import difflib
from typing import Sequence

__all__ = ["closest", "unknown_name"]

_SHOWN = 12  # names of one kind listed before "and N more"


def closest(name: str, known: Sequence[str], *, count: int = 3) -> list[str]:
    """The known names nearest to ``name``, best first.

    >>> closest("tiktoken:cl100k_bse", ["tiktoken:cl100k_base", "tiktoken:gpt2", "hf:cl100k_base"])
    ['tiktoken:cl100k_base', 'hf:cl100k_base']
    """
    return difflib.get_close_matches(name, list(known), n=count, cutoff=0.6)


def unknown_name(name: str, known: Sequence[str], *, kinds: Sequence[str] = (), what: str = "adapter",
                 see: str = "tokconf list") -> str:
    """The message for a name nobody registered: what, did you mean, the names of its kind.

    >>> print(unknown_name("tiktoken:cl100k_bse", ["tiktoken:cl100k_base", "tiktoken:gpt2", "hf:gpt2"]))
    no adapter named 'tiktoken:cl100k_bse'
    did you mean: tiktoken:cl100k_base
    adapters of kind 'tiktoken':
      tiktoken:cl100k_base
      tiktoken:gpt2
    `tokconf list` shows them all
    """
    kind = name.split(":", 1)[0]
    lines = [f"no {what} named {name!r}"]
    suggestions = closest(name, known) or [f"{k}:..." for k in closest(kind, kinds)]
    if suggestions:
        lines.append("did you mean: " + " or ".join(suggestions))
    same_kind = [n for n in known if n.split(":", 1)[0] == kind]
    if same_kind:
        lines.append(f"{what}s of kind {kind!r}:")
        lines.extend(f"  {n}" for n in same_kind[:_SHOWN])
        if len(same_kind) > _SHOWN:
            lines.append(f"  ... and {len(same_kind) - _SHOWN} more")
    else:
        all_kinds = sorted({n.split(":", 1)[0] for n in known} | set(kinds))
        lines.append(f"known kinds ({kind!r} is none of them):")
        lines.extend(f"  {k}" for k in all_kinds)
    lines.append(f"`{see}` shows them all")
    return "\n".join(lines)
