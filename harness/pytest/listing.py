"""The suite's items, collected once for every pytest-xdist worker.

pytest-xdist starts several workers (one per core and one more: ``tests/conftest.py``) and
every worker collects every test file; their item IDs must be equal. Collecting the
conformance suite builds the run's adapters and generates its inputs: 30 s of CPU and
1.1 GB for this repository's suite on a 2-core machine (``pytest -n 0 --collect-only
tests/test_conformance.py``), which each of three workers paid at once, and kept for the
rest of the session, though under ``--dist loadfile`` one of them runs the items.

So the first worker to take a lock collects the suite and writes what its items are (a
:class:`Listing`: names, places in the plan, case tags and lines, the adapters that
cannot run) to a file named for this test run (``PYTEST_XDIST_TESTRUNUID``) and the
suite's options; the other workers read it and build nothing. An item of a worker that did
not collect builds the suite when it first runs and checks that its unit still has the name
it was collected under: the plan is deterministic (the ci profile is derandomized, the seed
fixed), and a plan that changed in between is an error, never another unit run under the
item's name.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

__all__ = ["Listed", "Listing", "clean_up", "listing_of", "shared"]

#: the files this process wrote or read, removed at the end of its session
_FILES: list[Path] = []


@dataclass(frozen=True)
class Listed:
    """One item: its name, its unit's place in the plan and, for a case, where the case is."""

    name: str
    index: int
    #: a case's file as the collector names it (relative to its cases folder); "" for a unit
    label: str = ""
    path: str = ""
    line: int = 0
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Listing:
    """The items of a suite, in collection order."""

    #: (adapter, reason) of each adapter asked for that cannot run: a failing item each
    missing: tuple[tuple[str, str], ...]
    #: (adapter, reason) of every adapter that cannot run, for the terminal summary
    unavailable: tuple[tuple[str, str], ...]
    items: tuple[Listed, ...]

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=True)

    @classmethod
    def from_json(cls, text: str) -> Listing:
        data = json.loads(text)
        return cls(missing=tuple((a, r) for a, r in data["missing"]),
                   unavailable=tuple((a, r) for a, r in data["unavailable"]),
                   items=tuple(Listed(**{**item, "tags": tuple(item["tags"])}) for item in data["items"]))


def listing_of(suite: Any) -> Listing:
    """The items of ``suite`` (a :class:`~harness.pytest.suite.Suite`, which this builds)."""
    missing = tuple(suite.missing().items())  # before the units, as a collection always asked
    items = []
    for unit in suite.units():
        if unit.phase == "cases":
            case = unit.case
            items.append(Listed(case.id, unit.index, label=suite.case_label(case), path=str(case.file),
                                line=case.line, tags=tuple(case.tags)))
        else:
            items.append(Listed(unit.name, unit.index))
    return Listing(missing=missing, unavailable=tuple(suite.unavailable().items()), items=tuple(items))


def shared(options: Any, make: Callable[[], Listing]) -> Listing:
    """Outside pytest-xdist, ``make()``. In an xdist worker, the listing the first worker of
    this test run made for the same ``options``; made here (and written for the others)
    when this worker is first. A ``make`` that raises writes nothing: each worker then
    raises its own error."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        return make()
    key = hashlib.sha256(repr(options).encode("utf-8")).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"tokconf-pytest-{run}-{key}.json"
    lock = path.with_suffix(".lock")
    _FILES.extend((path, lock))
    with open(lock, "a", encoding="ascii") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # released when the file closes, or the process dies
        try:
            return Listing.from_json(path.read_text(encoding="ascii"))
        except (OSError, ValueError, KeyError, TypeError):
            pass  # not written yet (or torn by a worker that died writing it): made here
        listing = make()
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(listing.to_json(), encoding="ascii")
        partial.replace(path)
        return listing


def clean_up() -> None:
    """Remove the listing files of this process's session (every worker has collected by
    then: pytest-xdist schedules no test before all collections are in)."""
    for path in _FILES:
        path.unlink(missing_ok=True)
    _FILES.clear()
