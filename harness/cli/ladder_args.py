"""``tokconf run --ladder SPEC``: several releases of one library side by side in one run.

The front door's part of a ladder (issue 22): the flag is read into a
:class:`~harness.envs.ladder.Ladder`, the missing releases of a listed ladder get their
environments (``env add`` of each), and the rungs' adapters join the plan's ``--impl``
beside the installed release's own, which is the reference of each encoding; so the plan
is an ordinary plan with several releases. After the run, each divergence of a rung is
folded across releases (:mod:`harness.report.ladder`): parity.json's ``ladders``, and
printed after the summary.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any, Callable

from harness.cli import UsageError

__all__ = ["Rungs", "add_ladder_argument", "report_ladders", "resolve_ladders"]


def add_ladder_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ladder", action="append", default=[], metavar="SPEC",
                        help="run several releases of a library side by side: LIBRARY (every release in an "
                             "environment), LIBRARY==V1,V2,... (made with env add when missing) or "
                             "LIBRARY>=A,<=B (the installed ones in the range); npm:PACKAGE for npm releases. "
                             "Reports per divergence the releases that show it and where it changed (repeatable)")


@dataclass(frozen=True)
class Rungs:
    """One resolved ladder: its library, its releases oldest first, and adapter -> release."""

    library: str
    order: tuple[str, ...]
    releases: tuple[tuple[str, str], ...]


def _encodings_of(impls: list[str], rungs: dict) -> list[str]:
    by_inner = {a.inner: a.encoding for env in rungs.values() for a in env.adapters}
    return sorted({by_inner[i] for i in impls if i in by_inner})


def resolve_ladders(args: argparse.Namespace, *, log: Callable[[str], None]) -> tuple[argparse.Namespace, list[Rungs]]:
    """``args`` with every ladder's adapters added to ``--impl``, and the ladders (exit 2 if bad)."""
    from harness.envs.ladder import ladder_adapters, make_rungs, parse_ladder, release_key
    from harness.envs.store import EnvError
    from harness.registry import library_version

    if not args.ladder:
        return args, []
    impls = list(args.impl or [])
    resolved = []
    for spec in args.ladder:
        try:
            ladder = parse_ladder(spec)
            rungs = make_rungs(ladder, log=log)
            encodings = list(args.encoding or []) or _encodings_of(impls, rungs)
            installed = None if ladder.library.startswith("npm:") else library_version(ladder.library)
            names = ladder_adapters(rungs, ladder, encodings=encodings, installed=installed,
                                    available=_installed_names(rungs, installed))
        except EnvError as exc:
            raise UsageError(f"--ladder {spec}: {exc}") from exc
        if installed is not None and installed in rungs:
            # an environment holding the installed release too: the two are told apart
            names = {n: (f"{v} (installed)" if "@" not in n.partition(":")[0] else v) for n, v in names.items()}
        order = sorted(set(names.values()), key=lambda v: (release_key(v.split(" ")[0]), v))
        impls += [n for n in names if n not in impls]
        resolved.append(Rungs(ladder.library, tuple(order), tuple(sorted(names.items()))))
    ladders = tuple((r.library, r.order, r.releases) for r in resolved)
    return argparse.Namespace(**{**vars(args), "impl": impls, "ladder_rungs": ladders}), resolved


def _installed_names(rungs: dict, installed: str | None) -> list[str]:
    """The installed release's adapters named like the rungs' (``tiktoken:cl100k_base``)."""
    if installed is None:
        return []
    return sorted({a.inner for env in rungs.values() for a in env.adapters})


def report_ladders(data: dict[str, Any]) -> None:
    """Print each ladder of the run's parity.json: per behaviour, its releases and where it changed."""
    from harness.report.ladder import Behaviour, print_ladder

    for section in data.get("ladders", ()):
        found = [Behaviour(**{k: tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list)
                              else v for k, v in b.items()}) for b in section["behaviours"]]
        print_ladder(found, section["releases"], sys.stdout, library=section["library"])
