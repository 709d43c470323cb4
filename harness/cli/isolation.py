"""The isolation and parallelism options of ``tokconf run`` (and ``list``), as an Isolation.

``--isolate`` / ``--no-isolate`` choose which adapters run in worker processes (default:
the foreign ones, :func:`harness.worker.setup.is_foreign`); ``--timeout`` and
``--memory-limit`` are the limits of those workers; ``--jobs`` spreads the inputs over
processes (:mod:`harness.run.parallel`).
"""

from __future__ import annotations

import argparse
import os
from typing import Mapping

from harness.cli import UsageError
from harness.run.choice import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S
from harness.worker.setup import Isolation

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_TIMEOUT_S", "add_golden_timeout", "add_isolation_arguments",
           "default_jobs", "isolation_from_args", "usable_cores"]



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
        group.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                           help="spread the inputs over N processes (same report as 1, except timings; default: "
                                "$TOKCONF_JOBS, else the cores this process may run on)")


def default_jobs(environ: Mapping[str, str] = os.environ) -> int:
    """``--jobs`` when the flag is not given: ``$TOKCONF_JOBS``, else the cores this process
    may run on (its CPU affinity, which a container or ``taskset`` narrows; not
    ``os.cpu_count()``, which counts the machine's). Issue 25: a default run uses the cores
    it has; the report is the same at any ``--jobs``.

    >>> default_jobs({"TOKCONF_JOBS": "3"})
    3
    >>> default_jobs({"TOKCONF_JOBS": "0"})
    Traceback (most recent call last):
    ...
    harness.cli.UsageError: TOKCONF_JOBS must be a whole number of at least 1, got '0'; fix it (TOKCONF_JOBS=2) or unset it to use the cores this process may run on
    """
    value = environ.get("TOKCONF_JOBS", "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise UsageError(f"TOKCONF_JOBS must be a whole number of at least 1, got {value!r}; fix it "
                             f"(TOKCONF_JOBS=2) or unset it to use the cores this process may run on")
        return int(value)
    return usable_cores()


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the OS has one, else the
    machine's count (at least 1)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, len(affinity(0)) if affinity is not None else (os.cpu_count() or 1))


def add_golden_timeout(parser: argparse.ArgumentParser) -> None:
    """``--timeout`` of ``snapshot`` and ``gate``: run's per-call limit, where one call is a
    whole API surface."""
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help="per call of an isolated adapter, as for run; a whole API surface is one call, and "
                             "one that runs over is a timeout outcome in the golden "
                             f"(default {DEFAULT_TIMEOUT_S:g})")


def isolation_from_args(args: argparse.Namespace, registry: object) -> Isolation:
    """The run's :class:`Isolation` from the flags, with the setup that rebuilds ``registry``."""
    from harness.cli.selection_args import selection_from_args
    from harness.run.choice import ChoiceError, isolation_for

    if getattr(args, "jobs", 1) < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    try:
        return isolation_for(selection_from_args(args, []), registry)  # type: ignore[arg-type]
    except ChoiceError as exc:
        raise UsageError(str(exc)) from exc
