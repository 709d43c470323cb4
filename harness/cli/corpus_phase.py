"""The executor flags of ``tokconf run``: ``--executor local|dask``, ``--scheduler``,
``--shard-size``, ``--resume``, and their usage errors.

The flags become the plan's :class:`~harness.engine.plan.Executor`; the engine runs every
phase on it (:mod:`harness.engine.corpus` for the corpus's shards and the cluster's
life, :mod:`harness.scale.executor` for the units). The local executor never imports Dask.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli import UsageError
from harness.cli.executor_args import add_cluster_options, check_cluster_options

__all__ = ["add_executor_options", "check_executor_options"]


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    group = add_cluster_options(parser, what="where the run's inputs are checked")
    group.add_argument("--shard-size", type=int, default=None, metavar="N",
                       help="with --executor dask: --corpus documents per shard (default 1000)")
    group.add_argument("--resume", metavar="RUN_FOLDER",
                       help="with --executor dask: complete the interrupted run in RUN_FOLDER (same flags): "
                            "only the corpus shards not finished there are checked")


def check_executor_options(args: argparse.Namespace) -> None:
    """Usage errors (exit 2) before anything is built."""
    if not check_cluster_options(args, dask_only=("--scheduler", "--resume", "--shard-size")):
        return
    if args.shard_size is not None and args.shard_size < 1:
        raise UsageError(f"--shard-size must be at least 1 document, got {args.shard_size}")
    if args.resume is not None and not (Path(args.resume) / "shards" / "progress.json").is_file():
        raise UsageError(f"--resume {args.resume}: not a run folder of `tokconf run --executor dask` "
                         f"(no shards/progress.json in it)")
