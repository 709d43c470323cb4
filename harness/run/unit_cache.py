"""Units kept on disk across runs: an unchanged adapter is not asked the same again (issue 25).

Most of a default run asks the same adapters the same questions as the run before: every
ID of each encoding, the vocabulary probes, the shipped cases, the everyday documents, the
generated texts (a fixed seed), the long inputs, and shrinks of the same findings. A unit's
result (a :class:`~harness.run.deltas.Delta`, or a shrink's finding) is a pure function of

- tokconf's own code (every file of the ``harness`` and ``implementations`` packages),
  the Python it runs on and the versions of the distributions it depends on (:func:`runtime`),
- each adapter the unit asks: name, library and version, provider, the files it was built
  from and their SHA-256 (an isolated adapter's as its worker reports them: a drop-in's
  package modules, an ``hf-json:`` file), its encoding's description (a ``--encoding-file``'s
  pattern and special tokens), bundled tables, capabilities, how it is isolated and under which
  limits (a cases task asks every adapter of the run),
- the unit's inputs in a canonical form (IDs, bytes, texts, the reference's answers, the
  cases with their documentation, the findings they judge),

so it is stored under ``<cache dir>/units/`` keyed by the SHA-256 of exactly those, and a
later run with the same key reads it instead of asking again. The report lists which
adapters' units came from the cache (``run.cache`` in parity.json); ``--no-cache``
(``--tokconf-no-cache`` under pytest) asks everything again.

Never cached: a corpus's documents (read once, and as many as the user has), a unit
asking an adapter whose code is not tokconf's to hash (a plugin, another package's entry
point, a ``source:`` checkout, a ``tiktoken-compatible:`` module that is no installed
release, an adapter a test registers), and a result holding a
timeout, a crash or a shrink cut short by its time bound (how busy the machine was, not
what the adapter does). A unit asking such an adapter still keeps the answers of those in it that
can be hashed (:mod:`harness.run.answers`). A cache file that cannot be read is asked again,
never trusted. The folder is kept under 1 GiB, the least recently used results deleted
first.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from harness.cases.corpus import is_document
from harness.outcomes import Outcome
from harness.run.fingerprints import adapter_fingerprint, canonical

__all__ = ["UnitCache", "code_hash", "runtime"]

FORMAT = 1

#: the folder's size past which the least recently used results are deleted
LIMIT_BYTES = 1 << 30

#: the unit kinds whose results are kept: every token (one adapter and its reference), the
#: cases and everyday documents (every adapter of the run), the generated texts (theirs),
#: a finding's shrink (its adapter and reference), the long inputs of one (encoding, kind)
#: (its adapters; a result holding a timeout is never kept, so only what finished is), the
#: vocabulary check of one adapter (it and its reference: about 850 IDs probed three ways,
#: a quarter of a second per adapter in a worker process)
CACHED_KINDS = ("every-token", "cases", "generated", "shrink", "long", "vocab")


@lru_cache(maxsize=1)
def code_hash() -> str:
    """SHA-256 of every file of tokconf's own packages (any edit is a new key). The
    ``implementations`` package is found, not imported: the harness reaches adapters only
    through the registry."""
    from importlib.util import find_spec

    digest = hashlib.sha256()
    for name in ("harness", "implementations"):
        spec = find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            digest.update(f"no {name}".encode("ascii"))
            continue
        root = Path(list(spec.submodule_search_locations)[0])
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                           and p.suffix not in (".pyc", ".pyo")):
            digest.update(str(path.relative_to(root.parent)).encode("utf-8") + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def runtime() -> str:
    """What tokconf's own adapters answer by besides its code: the Python (its Unicode
    tables: ``str`` methods, ``unicodedata``) and the version of every distribution tokconf
    depends on. An own adapter names only tokconf as its library, yet ``regex``'s Unicode
    tables split minbpe's and gpt2-encoder's pre-tokens: an upgrade of either is a new key."""
    import importlib.metadata
    import sys
    import unicodedata

    from harness.provenance import library_version

    try:
        required = importlib.metadata.requires("tokconf") or []
    except importlib.metadata.PackageNotFoundError:  # run from a checkout: what it imports
        required = ["regex", "tiktoken", "tokenizers", "numpy", "transformers"]
    # not an extra's (pytest, selenium): an adapter built on one names it as its library
    names = sorted({re.match(r"[A-Za-z0-9._-]+", line).group(0).lower()  # type: ignore[union-attr]
                    for line in required if "extra ==" not in line})
    return json.dumps({"python": [sys.implementation.name, *sys.version_info[:3]],
                       "unicode": unicodedata.unidata_version,
                       "versions": {name: library_version(name) for name in names}}, sort_keys=True)


class _Inspect(pickle.Pickler):
    """A pickler that notices outcomes that depend on the machine (timeouts, crashes)."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.machine_bound = False

    def persistent_id(self, obj: Any) -> None:
        if isinstance(obj, Outcome) and obj.kind in ("timeout", "crashed"):
            self.machine_bound = True
        return None


@dataclass
class UnitCache:
    """The run's view of the on-disk unit cache."""

    folder: Path
    #: adapter -> the phases whose units came from the cache in this run
    hits: dict[str, set[str]] = field(default_factory=dict)
    stored: int = 0
    #: results not stored: a timeout, a crash or a shrink cut short in them, or no pickle
    refused: int = 0

    @classmethod
    def open(cls, *, limit_bytes: int = LIMIT_BYTES) -> UnitCache | None:
        """The cache under tokconf's cache folder (pruned to ``limit_bytes``, the least
        recently used first); None where that folder cannot be made."""
        from harness.vocab import cache_dir

        try:
            folder = cache_dir() / "units"
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        prune(folder, limit_bytes=limit_bytes)
        return cls(folder)

    def key(self, runner: Any, kind: str, task: Sequence[Any]) -> tuple[tuple[str, ...], str] | None:
        """(the adapters ``task`` asks, its key), or None when it is not cached."""
        unit = _unit(runner, kind, task)
        if unit is None:
            return None
        names, inputs, shown = unit
        if not _all_fingerprinted(runner.selected, names):
            return None  # before digesting the inputs: a drop-in's run keys its answers instead
        key = _key_of(runner.selected, kind, names, inputs())
        return None if key is None else (shown, key)

    def answers_key(self, runner: Any, kind: str, task: Sequence[Any]) -> tuple[tuple[str, ...], str] | None:
        """(the adapters of ``task`` whose answers are kept, the key they are kept under)
        where the unit cannot be kept whole but some of its adapters can be hashed
        (:mod:`harness.run.answers`); else None."""
        selected = runner.selected
        if _all_fingerprinted(selected, selected.calls):
            return None  # every unit of the run is kept whole (a default run): not digested twice
        unit = _unit(runner, kind, task)
        if unit is None:
            return None
        names, inputs, _ = unit
        known = tuple(n for n in names if adapter_fingerprint(selected, n) is not None)
        if not known or len(known) == len(names):
            return None
        try:
            digested = inputs()
        except TypeError:  # an input the cache cannot digest (a plugin's own objects): asked
            return None
        key = _key_of(selected, f"answers of {kind}", known, digested)
        return None if key is None else (known, key)

    def remembered(self, selected: Any, kind: str, names: Sequence[str], inputs: Sequence[bytes],
                   compute: Callable[[], Any]) -> Any:
        """``compute()``, or what it gave before for the same adapters and inputs."""
        key = _key_of(selected, kind, names, inputs)
        if key is None:
            return compute()
        found = self.load(key)
        if found is not None:
            self.hit(names, kind)
            return found
        value = compute()
        self.store(key, value)
        return value

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.pickle"

    def holds(self, key: str) -> bool:
        """Whether a result is stored under ``key`` (:meth:`load` may still find it unreadable)."""
        return self._path(key).is_file()

    def load(self, key: str) -> Any | None:
        path = self._path(key)
        try:
            value = pickle.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except Exception:  # noqa: BLE001 - unreadable (another Python, a torn file): ask again
            return None
        try:
            os.utime(path)  # used: the last to be pruned
        except OSError:
            pass
        return value

    def store(self, key: str, delta: Any) -> None:
        buffer = io.BytesIO()
        pickler = _Inspect(buffer)
        try:
            pickler.dump(delta)
        except Exception:  # noqa: BLE001 - a delta that does not pickle is not kept
            self.refused += 1
            return
        if pickler.machine_bound or _timed_out(delta):
            self.refused += 1
            return
        from harness.atomic import write_atomic

        try:
            write_atomic(self._path(key), buffer.getvalue())
        except OSError:
            return  # a read-only cache costs time, not correctness
        self.stored += 1

    def hit(self, adapters: Sequence[str], phase: str) -> None:
        for adapter in adapters:
            self.hits.setdefault(adapter, set()).add(phase)

    def take_counts(self) -> tuple[dict[str, set[str]], int, int]:
        """What this process's copy counted since the last call (hits, stored, refused),
        and counts it no more: a ``--jobs`` process hands it to the parent's
        (:meth:`add_counts`), whose report says it."""
        counts = (self.hits, self.stored, self.refused)
        self.hits, self.stored, self.refused = {}, 0, 0
        return counts

    def add_counts(self, counts: tuple[dict[str, set[str]], int, int]) -> None:
        hits, stored, refused = counts
        for adapter, phases in hits.items():
            self.hits.setdefault(adapter, set()).update(phases)
        self.stored += stored
        self.refused += refused

    def to_json(self) -> dict[str, Any]:
        return {"used": True, "folder": str(self.folder), "stored": self.stored, "refused": self.refused,
                "from_cache": {name: sorted(phases) for name, phases in sorted(self.hits.items())}}


def prune(folder: Path, *, limit_bytes: int) -> int:
    """Delete the least recently used files of ``folder`` until it holds at most
    ``limit_bytes`` (every edit of tokconf makes new keys: old ones would pile up);
    returns how many went."""
    # every run starts here: one scandir and one stat per file (a glob and two stats per
    # file were 0.29 s of CPU on a full folder of 13,681 files, now 0.065 s)
    files = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".pickle"):
                    try:
                        found = entry.stat()
                    except OSError:  # deleted by a run beside this one
                        continue
                    files.append((found.st_mtime, found.st_size, entry.path))
    except OSError:
        return 0
    total = sum(size for _, size, _ in files)
    removed = 0
    for _, size, path in sorted(files, key=lambda f: f[0]):
        if total <= limit_bytes:
            break
        try:
            os.unlink(path)
        except OSError:
            continue
        total -= size
        removed += 1
    return removed


def _unit(runner: Any, kind: str, task: Sequence[Any]
          ) -> tuple[list[str], Callable[[], list[bytes]], tuple[str, ...]] | None:
    """(every adapter ``task`` asks, what gives its inputs in canonical form, the adapters
    the report names when it comes from the cache), or None for a unit that is never kept.
    The inputs are digested only when asked: a unit with an adapter that cannot be hashed
    is never keyed whole, and its inputs are pickled once, for its answers' key."""
    if kind not in CACHED_KINDS or not task:
        return None
    if kind == "cases" and any(is_document(case) for case in task[0]):
        # a corpus streams through once: its documents would only push the units
        # that recur (every token, the shipped cases) out of the cache, and hashing
        # them cost more than checking them (a Dask run resumes from its own record)
        return None
    selected = runner.selected
    if kind == "every-token":
        names = sorted({name for _, adapters in task for name in adapters} | {task[0][0].reference})
        inputs = lambda: [token_slice.digest for token_slice, _ in task]  # each digested once per run
        shown = tuple(n for n in names if n != task[0][0].reference) or tuple(names)
    elif kind == "shrink":  # one finding on its adapter and reference
        ((candidate, max_calls, _),) = task  # the time bound: a result that hit it is not kept
        names = sorted({candidate.finding.adapter, candidate.reference})
        inputs = lambda: [canonical(candidate), str(max_calls).encode("ascii")]
        shown = (candidate.finding.adapter,)
    elif kind == "long":  # LongUnit values: kind, adapters, reference, sizes
        names = sorted({n for unit in task for n in unit.adapters})
        inputs = lambda: [canonical(unit) for unit in task]
        shown = tuple(names)
    elif kind == "vocab":  # adapter names; each probed against its encoding's reference
        shown = tuple(task)
        names = sorted({*task, *(selected.references[selected.calls[n].info.encoding] for n in task)})
        inputs = list  # no inputs: the adapters alone
    elif kind == "generated":
        names = sorted({n for _, adapters, reference, _ in task for n in (*adapters, reference)})
        inputs = lambda: [canonical(unit) for unit in task]
        shown = tuple(names)
    else:  # cases: a case picks its pairs among every adapter of the run
        cases, vocab_findings = task
        names = sorted(selected.calls)
        inputs = lambda: [canonical(list(cases)), canonical(_judged_vocab(vocab_findings)),
                          canonical(selected.references)]
        shown = tuple(names)
    return names, inputs, shown


def _judged_vocab(findings: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The vocabulary findings a cases unit judges (its task's: ``Runner.vocab_for``), as
    its key holds them: an adapter with none is left out, as the runner reads a missing one
    as none. The key once held the runner's findings too: every adapter's, most of them
    empty, with one job; none in a ``--jobs`` process forked before the vocabulary phase
    ended, where a drop-in's run makes the key of tiktoken's answers
    (:mod:`harness.run.answers`). So that run asked tiktoken every case again after a run
    at the other ``--jobs``.

    >>> _judged_vocab({"a": [], "b": ["found"]})
    {'b': ['found']}
    """
    return {name: found for name, found in findings.items() if found}


def _all_fingerprinted(selected: Any, names: Iterable[str]) -> bool:
    return all(adapter_fingerprint(selected, name) is not None for name in names)


def _key_of(selected: Any, kind: str, names: Sequence[str], inputs: Sequence[bytes]) -> str | None:
    parts = [adapter_fingerprint(selected, name) for name in names]
    if any(part is None for part in parts):
        return None
    digest = hashlib.sha256()
    for text in (str(FORMAT), kind, code_hash(), runtime(), *parts):  # type: ignore[arg-type]
        digest.update(text.encode("utf-8") + b"\0")
    for part in inputs:
        digest.update(part)
    return digest.hexdigest()


def _timed_out(result: Any) -> bool:
    """A shrink's result cut short by its time bound: how fast the machine was."""
    return isinstance(result, list) and any(isinstance(r, tuple) and len(r) == 2 and r[1] is True for r in result)
