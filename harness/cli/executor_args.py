"""``--executor local|dask`` and ``--scheduler ADDRESS``: the flags every command that can
run on a Dask cluster shares (``run``, ``snapshot``, ``gate``), and their usage errors.

Without ``--scheduler`` the cluster is embedded, of ``--jobs`` worker processes
(:mod:`harness.scale.cluster`). Checking the flags imports Dask only for ``--executor dask``.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, Iterator

from harness.cli import UsageError

__all__ = ["add_cluster_options", "check_cluster_options", "golden_records"]


def add_cluster_options(parser: argparse.ArgumentParser, *, what: str, jobs: bool = False) -> Any:
    """The group holding ``--executor`` and ``--scheduler`` (and ``--jobs`` for commands
    that have no other); the caller may add its own flags to it."""
    group = parser.add_argument_group(f"executor ({what})")
    group.add_argument("--executor", choices=["local", "dask"], default="local",
                       help="local: this machine (default); dask: a Dask cluster (needs tokconf[dask]); "
                            "the result is the same")
    group.add_argument("--scheduler", metavar="ADDRESS",
                       help="with --executor dask: an existing cluster's scheduler (tcp://host:8786); "
                            "default: a local cluster of --jobs worker processes")
    if jobs:
        group.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                           help="with --executor dask and no --scheduler: worker processes of the local "
                                "cluster (default 1)")
    return group


def check_cluster_options(args: argparse.Namespace, *, dask_only: tuple[str, ...] = ("--scheduler",)) -> bool:
    """True for ``--executor dask`` (Dask importable); exit 2 for a flag of ``dask_only``
    given without it, or Dask missing (the message names the install)."""
    if args.executor != "dask":
        for flag in dask_only:
            if getattr(args, flag.lstrip("-").replace("-", "_"), None) is not None:
                raise UsageError(f"{flag} needs --executor dask")
        return False
    from harness.scale.cluster import DaskMissing, require_dask

    try:
        require_dask()
    except DaskMissing as exc:
        raise UsageError(str(exc)) from exc
    if (getattr(args, "jobs", None) or 1) < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    return True


@contextlib.contextmanager
def golden_records(args: argparse.Namespace, selected: Any, *, dask: bool) -> Iterator[Any]:
    """The :data:`~harness.golden.snapshot.Recorder` of ``snapshot``/``gate``: this process,
    or (``dask``) a Dask cluster whose workers build ``selected``'s adapters from the same flags."""
    from harness.golden.snapshot import record_here

    if not dask:
        yield record_here
        return
    from dataclasses import replace

    from harness.cli.selection_args import selection_from_args
    from harness.scale.cluster import ExecutorError
    from harness.scale.golden_chunks import DaskRecords

    # the workers must build exactly the adapters the client did, by their resolved names
    spec = replace(selection_from_args(args, []), impl=tuple(sorted(selected.calls)))
    try:
        with DaskRecords(spec=spec, scheduler=args.scheduler, workers=args.jobs or 1) as records:
            yield records
    except ExecutorError as exc:
        raise UsageError(str(exc)) from exc
