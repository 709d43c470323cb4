"""The isolation and parallelism options of ``tokconf run`` (and ``list``), as an Isolation.

``--isolate`` / ``--no-isolate`` choose which adapters run in worker processes (default:
the foreign ones, :func:`harness.worker.setup.is_foreign`); ``--timeout`` and
``--memory-limit`` are the limits of those workers; ``--jobs`` spreads the inputs over
processes (:mod:`harness.run.parallel`).
"""

from __future__ import annotations

import argparse
import os

from harness.cli import UsageError
from harness.worker.setup import Isolation, WorkerSetup

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_TIMEOUT_S", "add_isolation_arguments", "isolation_from_args"]

#: seconds one isolated call may take: the slowest healthy call of a default run (a
#: pure-Python adapter's vocabulary check, one encode of a long case) is far below it
DEFAULT_TIMEOUT_S = 60.0
#: a worker's address space: a worker holding o200k_base in Python dicts uses well under
#: 1 GB; threads of native libraries reserve address space they never touch
DEFAULT_MEMORY_MB = 4096


def add_isolation_arguments(parser: argparse.ArgumentParser, *, jobs: bool = True) -> None:
    group = parser.add_argument_group("isolation and parallelism")
    which = group.add_mutually_exclusive_group()
    which.add_argument("--isolate", action="store_true",
                       help="run every adapter in a worker process (default: only foreign ones: "
                            "tiktoken-compatible:, source:, hf-json:, plugins)")
    which.add_argument("--no-isolate", action="store_true",
                       help="run every adapter in this process (for debugging; a crash ends the run)")
    group.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                       help=f"an isolated call taking longer is a `timeout` outcome (default {DEFAULT_TIMEOUT_S:g})")
    group.add_argument("--memory-limit", type=int, default=DEFAULT_MEMORY_MB, metavar="MB",
                       help=f"address-space limit of each worker (RLIMIT_AS; 0 = none; default {DEFAULT_MEMORY_MB}); "
                            f"past it a call is `crashed:out-of-memory`")
    if jobs:
        group.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                           help="spread the inputs over N processes (same report as 1, except timings)")


def isolation_from_args(args: argparse.Namespace, registry: object) -> Isolation:
    """The run's :class:`Isolation` from the flags, with the setup that rebuilds ``registry``."""
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be above 0 seconds, got {args.timeout:g}")
    if args.memory_limit < 0:
        raise UsageError(f"--memory-limit must be 0 (none) or a number of MB, got {args.memory_limit}")
    if getattr(args, "jobs", 1) < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    roots: list[tuple[str | None, str]] = []
    for root in getattr(args, "source_root", None) or []:
        spec, sep, folder = root.rpartition("=")
        roots.append((spec if sep else None, os.path.abspath(folder)))
    vocab_dir = getattr(args, "vocab_dir", None)
    setup = WorkerSetup.from_registry(registry, vocab_dir=os.path.abspath(vocab_dir) if vocab_dir else None,
                                      source_roots=tuple(roots))
    mode = "all" if args.isolate else "none" if args.no_isolate else "auto"
    return Isolation(mode=mode, timeout_s=float(args.timeout), memory_limit_mb=args.memory_limit or None,
                     setup=setup)
