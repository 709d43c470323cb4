"""Finished shards in the run folder, so ``--resume RUN`` completes only the missing ones.

``RUN/shards/progress.json`` says which run the shards belong to (a fingerprint of the
corpus files, their sizes and modification times, the corpus options, the shard size
and the adapter selection) and which shards are done. Each done shard has two files:

- ``NNNNNNNN.outcomes.jsonl.gz``: its documents' outcomes, the bulk of a shard (99 % of
  it for 1,000 short documents on two adapters), in the outcome log's own records
  (:func:`harness.report.outcome_spool.pack_inputs`: IDs as JSON, one line per document,
  gzip; the worker's own bytes), after a first line that spells out each special-token
  policy the records name. 42 KB for the shard whose pickle was 255 KB (issue 25).
- ``NNNNNNNN.pickle``: the rest of its :class:`~harness.scale.shard_task.ShardResult`,
  the delta without its inputs: counts per cell and the findings with their evidence,
  a few KB. These objects have no other encoding; the file is the run's own, read back
  only by the run that wrote it.

Both are written with :func:`harness.atomic.write_atomic`, the outcomes first and the
list that names the shard last, so an interruption at any moment leaves a list whose
every entry is readable. :meth:`ProgressStore.load` streams the outcomes back into the
delta; a shard a run wrote before the split (one pickle, inputs in it) loads as it was.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Iterable

from harness.atomic import write_atomic
from harness.cases.corpus import CorpusOptions
from harness.report.outcome_spool import pack_inputs

__all__ = ["ProgressStore", "ResumeError", "fingerprint"]

FOLDER = "shards"
PROGRESS = "progress.json"


class ResumeError(Exception):
    """A run folder that cannot be resumed as asked."""


def _files(paths: Iterable[str]) -> list[list[Any]]:
    found = []
    for path in paths:
        root = Path(path)
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for file in files:
            stat = file.stat()
            found.append([str(file.resolve()), stat.st_size, stat.st_mtime_ns])
    return found


def fingerprint(*, corpus: Iterable[str], options: CorpusOptions, shard_size: int, selection: Any) -> dict[str, Any]:
    """What makes shard N of one run the same documents on the same adapters as in another."""
    return {"corpus": _files(corpus), "options": options.to_json(), "shard_size": shard_size,
            "selection": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(selection).items()}}


class ProgressStore:
    def __init__(self, run_folder: Path, print_: Any = None) -> None:
        self.folder = Path(run_folder) / FOLDER
        self.done: dict[int, str] = {}
        self.lost: dict[int, str] = {}
        self.print = print_

    @property
    def path(self) -> Path:
        return self.folder / PROGRESS

    def start(self, expected: dict[str, Any], *, resume: bool) -> None:
        """A fresh progress file, or (``resume``) the one there if it is this run's."""
        if not resume:
            self.fingerprint = expected
            self._save()
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ResumeError(f"--resume {self.folder.parent}: no readable {FOLDER}/{PROGRESS} ({exc}); "
                              f"resume a folder a `tokconf run --executor dask` wrote") from exc
        if data.get("fingerprint") != expected:
            differs = sorted(k for k in expected if data.get("fingerprint", {}).get(k) != expected[k])
            raise ResumeError(f"--resume {self.folder.parent}: that run checked other inputs or adapters "
                              f"(differs in: {', '.join(differs) or 'everything'}); give the same --corpus, "
                              f"--shard-size and adapter flags, with the corpus files unchanged")
        self.fingerprint = expected
        self.done = {int(k): v for k, v in data.get("done", {}).items()}

    def load(self, shard_id: int) -> Any:
        """Shard ``shard_id``'s result as :meth:`record` was given it (its inputs' outcomes
        back as :class:`~harness.outcomes.Outcome`, without their messages: the log and
        ``tokconf diff`` never read those)."""
        name = self.done[shard_id]
        with open(self.folder / name, "rb") as handle:
            result = pickle.load(handle)
        outcomes = self.folder / _outcomes_name(name)
        if not outcomes.exists():  # written before the split: the inputs are in the pickle
            return result
        return replace(result, delta=replace(result.delta, inputs=read_inputs(outcomes)))

    def record(self, shard_id: int, result: Any) -> None:
        name = f"{shard_id:08d}.pickle"
        delta = result.delta
        # a worker packed them already (harness.scale.shard_task): written as they came
        write_atomic(self.folder / _outcomes_name(name), delta.packed_inputs or pack_inputs(delta.inputs))
        rest = replace(result, delta=replace(delta, inputs={}, packed_inputs=b""))
        write_atomic(self.folder / name, pickle.dumps(rest, protocol=pickle.HIGHEST_PROTOCOL))
        self.done[shard_id] = name
        self.lost.pop(shard_id, None)
        self._save()

    def record_lost(self, shard_id: int, why: str) -> None:
        self.lost[shard_id] = why
        self._save()

    def _save(self) -> None:
        data = {"fingerprint": self.fingerprint, "done": {str(k): v for k, v in sorted(self.done.items())},
                "lost": {str(k): v for k, v in sorted(self.lost.items())}}
        write_atomic(self.path, json.dumps(data, indent=1) + "\n")


def _outcomes_name(pickle_name: str) -> str:
    return pickle_name.removesuffix(".pickle") + ".outcomes.jsonl.gz"


def read_inputs(path: Path) -> dict[Any, dict]:
    """A shard's stored inputs back, outcomes as :class:`~harness.outcomes.Outcome`."""
    from harness.report.outcome_spool import entry_of, unpack_inputs

    return {key: entry_of(line) for key, _, line in unpack_inputs(path.read_bytes())}
