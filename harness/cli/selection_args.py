"""The flags that choose a run's adapters, read into :class:`harness.run.choice.AdapterChoice`.

The value and what builds adapters from it live in the engine (:mod:`harness.run.choice`),
so a Dask worker rebuilds them without the command line; this module only reads the
flags. ``SelectionArgs`` is the value's older name.
"""

from __future__ import annotations

import argparse
from typing import Any, Iterable

from harness.run.choice import AdapterChoice, select_for, selected_for

__all__ = ["SelectionArgs", "select_adapters", "selection_from_args", "worker_selection"]

SelectionArgs = AdapterChoice
select_adapters = select_for
worker_selection = selected_for


def selection_from_args(args: argparse.Namespace, cases: Iterable[Any]) -> AdapterChoice:
    """The choice the flags of ``args`` make, with the adapters ``cases`` name."""
    return AdapterChoice.of(
        plugin=getattr(args, "plugin", None) or [], vocab_dir=getattr(args, "vocab_dir", None),
        source_root=getattr(args, "source_root", None) or [], cases=cases,
        impl=tuple(args.impl or []), encoding=tuple(getattr(args, "encoding", None) or []),
        reference=tuple(getattr(args, "reference", None) or []),
        isolate=bool(getattr(args, "isolate", False)), no_isolate=bool(getattr(args, "no_isolate", False)),
        timeout=float(args.timeout), memory_limit=int(getattr(args, "memory_limit", 0) or 0))
