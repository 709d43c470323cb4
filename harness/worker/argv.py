"""The command lines of tokconf's own subprocesses (workers, the launcher, the probe).

tokconf starts these programs itself with a fixed handful of flags, so a small reader
is enough, and it keeps ``argparse`` in the front doors (:mod:`harness.cli`) only: the
engine below them takes values, never parsed command lines.
"""

from __future__ import annotations

import sys
from typing import Sequence

__all__ = ["read_flags"]


def read_flags(argv: Sequence[str] | None, *, prog: str, values: Sequence[str] = (),
               switches: Sequence[str] = (), repeated: Sequence[str] = (),
               rest: bool = False) -> dict[str, object]:
    """``--name VALUE`` (``values``; ``repeated``: a list), ``--switch`` (``switches``) and,
    with ``rest``, everything after ``--`` as ``"rest"``. Flag ``--a-b`` is key ``a_b``.

    >>> read_flags(["--memory-mb", "64", "--probe", "--", "node", "w.mjs"], prog="p",
    ...            values=["--memory-mb"], switches=["--probe"], rest=True)
    {'probe': True, 'memory_mb': '64', 'rest': ['node', 'w.mjs']}
    >>> read_flags(["--library", "a", "--library=b"], prog="p", repeated=["--library"])
    {'library': ['a', 'b']}
    """
    args = list(sys.argv[1:] if argv is None else argv)
    found: dict[str, object] = {s[2:].replace("-", "_"): False for s in switches}
    found |= {r[2:].replace("-", "_"): [] for r in repeated}
    while args:
        flag = args.pop(0)
        if flag.startswith("--") and "=" in flag and flag.partition("=")[0] in (*values, *repeated):
            flag, _, value = flag.partition("=")
            args.insert(0, value)  # ``--library=tiktoken`` is ``--library tiktoken``
        key = flag[2:].replace("-", "_")
        if rest and flag == "--":
            found["rest"] = args
            break
        if flag in switches:
            found[key] = True
        elif (flag in values or flag in repeated) and args:
            value = args.pop(0)
            if flag in repeated:
                found[key].append(value)  # type: ignore[union-attr]
            else:
                found[key] = value
        else:
            # these programs are started by tokconf itself: a bad flag is a bug, said loudly
            print(f"{prog}: unexpected argument {flag!r} (flags: "
                  f"{', '.join([*values, *switches, *repeated]) or 'none'})", file=sys.stderr)
            raise SystemExit(2)
    return found
