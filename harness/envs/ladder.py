"""A release ladder: several releases of one library, each in its own environment (issue 22).

A ladder is written ``LIBRARY`` (every release installed in an environment),
``LIBRARY==V1,V2,...`` (these releases) or ``LIBRARY>=A,<=B`` (every release in the range:
installed ones for ``tokconf run --ladder``, the package index's for ``tokconf env add
--ladder``). ``npm:PACKAGE`` names a JavaScript package's releases. :func:`ladder_adapters`
turns a ladder into the adapter names one run compares side by side: every rung's
adapters of the run's encodings, and the installed release's own (``tiktoken:...``) as the
top rung. Versions are compared by their release numbers (``0.10.0`` after ``0.9.0``);
pre-releases are not rungs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

from harness.envs.probe import normalise
from harness.envs.store import EnvError, Environment, load_all

__all__ = ["Ladder", "LadderError", "ladder_adapters", "parse_ladder", "release_key", "index_releases"]

_SPEC = re.compile(r"^\s*((?:npm:)?[A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*?)\s*$")
_CLAUSE = re.compile(r"^(==|!=|>=|<=|>|<)\s*(\d+(?:\.\d+)*)$")
_RELEASE = re.compile(r"^\d+(?:\.\d+)*$")


class LadderError(EnvError):
    """A ladder that cannot be read or built; the message says the fix (exit 2)."""


def release_key(version: str) -> tuple[int, ...]:
    """Release numbers, padded so that ``0.9`` == ``0.9.0`` (``0.10.0`` sorts after ``0.9.0``).

    >>> sorted(["0.10.0", "0.9.0", "0.13.0"], key=release_key)
    ['0.9.0', '0.10.0', '0.13.0']
    """
    parts = [int(p) for p in version.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


@dataclass(frozen=True)
class Ladder:
    """Which releases of ``library`` a ladder names: ``versions`` listed, or ``clauses`` to meet."""

    library: str
    versions: tuple[str, ...] = ()
    clauses: tuple[tuple[str, str], ...] = ()

    def admits(self, version: str) -> bool:
        """Whether ``version`` is a rung (a listed version, or inside every clause)."""
        if not _RELEASE.match(version):
            return False  # pre-releases and local versions are never rungs
        if self.versions:
            return any(release_key(version) == release_key(v) for v in self.versions)
        key = release_key(version)
        tests = {"==": key.__eq__, "!=": key.__ne__, ">=": key.__ge__, "<=": key.__le__, ">": key.__gt__,
                 "<": key.__lt__}
        return all(tests[op](release_key(v)) for op, v in self.clauses)

    def requirement(self, version: str) -> str:
        """The requirement that installs one rung (``tiktoken==0.9.0``, ``npm:js-tiktoken@1.0.21``)."""
        return f"{self.library}@{version}" if self.library.startswith("npm:") else f"{self.library}=={version}"


def parse_ladder(spec: str) -> Ladder:
    """``tiktoken``, ``tiktoken==0.9.0,0.10.0`` or ``tiktoken>=0.9,<=0.14`` as a :class:`Ladder`.

    >>> parse_ladder("tiktoken==0.9.0,0.10.0").versions
    ('0.9.0', '0.10.0')
    >>> parse_ladder("tiktoken>=0.9,<0.14").clauses
    (('>=', '0.9'), ('<', '0.14'))
    """
    match = _SPEC.match(spec)
    if not match:
        raise LadderError(f"ladder {spec!r}: write LIBRARY, LIBRARY==V1,V2,... or LIBRARY>=A,<=B "
                          "(e.g. tiktoken==0.9.0,0.10.0)")
    library, rest = match.group(1), match.group(2)
    if not rest:
        return Ladder(library)
    parts = [p.strip() for p in rest.split(",") if p.strip()]
    if parts and parts[0].startswith("==") and all(_RELEASE.match(p.removeprefix("==").strip()) for p in parts):
        return Ladder(library, versions=tuple(p.removeprefix("==").strip() for p in parts))
    clauses = []
    for part in parts:
        clause = _CLAUSE.match(part)
        if clause is None:
            raise LadderError(f"ladder {spec!r}: {part!r} is not a bound like >=0.9 or <=0.14; write "
                              "LIBRARY==V1,V2,... for a list of releases")
        clauses.append((clause.group(1), clause.group(2)))
    return Ladder(library, clauses=tuple(clauses))


def _same_library(env_library: str, library: str) -> bool:
    if library.startswith("npm:") != env_library.startswith("npm:"):
        return False
    return normalise(env_library.removeprefix("npm:")) == normalise(library.removeprefix("npm:"))


def installed_rungs(ladder: Ladder, envs: Sequence[Environment] | None = None) -> dict[str, Environment]:
    """version -> the environment holding that release of the ladder's library (one each)."""
    found: dict[str, Environment] = {}
    for env in load_all() if envs is None else envs:
        for adapter in env.adapters:
            if _same_library(adapter.library, ladder.library) and ladder.admits(adapter.version):
                found.setdefault(adapter.version, env)
    return dict(sorted(found.items(), key=lambda item: release_key(item[0])))


def index_releases(library: str, *, python: str = sys.executable) -> list[str]:
    """The releases the package index offers (``pip index versions``; npm: ``npm view``)."""
    if library.startswith("npm:"):
        command = ["npm", "view", library.removeprefix("npm:"), "versions", "--json"]
    else:
        command = [python, "-m", "pip", "index", "versions", library, "--disable-pip-version-check"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LadderError(f"asking the package index for {library}'s releases failed: {exc}") from exc
    if done.returncode != 0:
        raise LadderError(f"asking the package index for {library}'s releases failed (exit {done.returncode}): "
                          f"{done.stderr.strip()[-400:]}; list the releases instead: {library}==V1,V2")
    if library.startswith("npm:"):
        import json

        return [v for v in json.loads(done.stdout) if _RELEASE.match(v)]
    line = next((ln for ln in done.stdout.split("\n") if ln.startswith("Available versions:")), "")
    return [v.strip() for v in line.partition(":")[2].split(",") if _RELEASE.match(v.strip())]


def make_rungs(ladder: Ladder, *, log: Callable[[str], None] = lambda line: None,
               from_index: bool = False) -> dict[str, Environment]:
    """Every rung's environment, making the missing ones (``env add`` of each release).

    Listed versions are made when missing; a range is met by the releases installed
    already, or with ``from_index`` by every release the package index has in it."""
    from harness.envs.create import create
    from harness.envs.npm import create_npm

    have = installed_rungs(ladder)
    wanted = list(ladder.versions)
    if from_index and not wanted:
        wanted = [v for v in index_releases(ladder.library) if ladder.admits(v)]
        if not wanted:
            raise LadderError(f"the package index has no release of {ladder.library} in {ladder.clauses}")
    for version in sorted(wanted, key=release_key):
        if any(release_key(version) == release_key(v) for v in have):
            continue
        requirement = ladder.requirement(version)
        log(f"ladder: making the environment of {requirement}")
        make = create_npm if ladder.library.startswith("npm:") else create
        have[version] = make([requirement], log=log)
    return dict(sorted(have.items(), key=lambda item: release_key(item[0])))


def ladder_adapters(rungs: dict[str, Environment], ladder: Ladder, *, encodings: Sequence[str],
                    available: Sequence[str], installed: str | None) -> dict[str, str]:
    """adapter name -> its release, for every rung and the installed release (``available``:
    this process's adapter names). Only adapters of ``encodings`` (all when empty) that can
    run: an encoding an old release lacks is not its rung's adapter."""
    chosen: dict[str, str] = {}
    inner_names: set[str] = set()
    for version, env in rungs.items():
        for adapter in env.adapters:
            if (_same_library(adapter.library, ladder.library) and adapter.reason is None
                    and (not encodings or adapter.encoding in encodings)):
                chosen[adapter.name] = version
                inner_names.add(adapter.inner)
    if not chosen:
        raise LadderError(f"no installed release of {ladder.library} fits the ladder"
                          f"{' for ' + ', '.join(encodings) if encodings else ''}; add them with "
                          f"`tokconf env add --ladder '{ladder.library}>=A,<=B'` or list them: "
                          f"--ladder '{ladder.library}==V1,V2'")
    for name in sorted(inner_names):
        if name in available:  # the installed release, the top rung, under its own name
            chosen[name] = installed or "installed"
    return chosen
