"""What an environment is, and where it lives: ``<cache>/envs/NAME/env.json``.

An environment is a folder with a virtual environment in it (``venv/``) and a manifest
(``env.json``) that :mod:`harness.envs.create` writes once everything is installed and
probed. A folder without a manifest is a half-made environment: it is never registered,
and ``tokconf env add`` of the same name replaces it.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.atomic import write_atomic
from harness.vocab import cache_dir

__all__ = ["EnvAdapter", "EnvError", "Environment", "default_name", "envs_root", "found_adapters", "load", "load_all",
           "remove", "save", "versioned_name"]

MANIFEST = "env.json"
FORMAT = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class EnvError(Exception):
    """An environment that cannot be made, found or used; the message says the fix."""


@dataclass(frozen=True)
class EnvAdapter:
    """One adapter of an environment: its name here and there, and whether it runs."""

    name: str  # versioned, as this process registers it: tiktoken@0.9.0:cl100k_base
    inner: str  # its name inside the environment: tiktoken:cl100k_base
    encoding: str
    library: str
    version: str
    reason: str | None = None  # why it cannot run there (an encoding the release lacks)


@dataclass(frozen=True)
class Environment:
    name: str
    folder: str
    python: str
    requirements: tuple[str, ...]
    #: every distribution installed there, with its version
    packages: tuple[tuple[str, str], ...]
    adapters: tuple[EnvAdapter, ...] = ()
    installer: str = "pip"
    created: str = ""
    notes: tuple[str, ...] = field(default=())
    #: ``python`` (a virtual environment) or ``node`` (a Node project: ``folder`` holds its
    #: package.json, package-lock.json and node_modules; ``python`` is empty)
    runtime: str = "python"
    #: the Node.js version the project was installed with (``node`` environments)
    node_version: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "name": self.name, "folder": self.folder, "python": self.python,
                "requirements": list(self.requirements), "packages": dict(self.packages),
                "adapters": [vars(a) for a in self.adapters], "installer": self.installer,
                "created": self.created, "notes": list(self.notes), "runtime": self.runtime,
                "node_version": self.node_version}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Environment:
        return cls(name=data["name"], folder=data["folder"], python=data["python"],
                   requirements=tuple(data["requirements"]), packages=tuple(sorted(data["packages"].items())),
                   adapters=tuple(EnvAdapter(**a) for a in data.get("adapters", ())),
                   installer=data.get("installer", "pip"), created=data.get("created", ""),
                   notes=tuple(data.get("notes", ())), runtime=data.get("runtime", "python"),
                   node_version=data.get("node_version", ""))


def versioned_name(inner: str, version: str) -> str:
    """``tiktoken:cl100k_base`` at 0.9.0 -> ``tiktoken@0.9.0:cl100k_base``.

    >>> versioned_name("hf:gpt2", "0.20.3")
    'hf@0.20.3:gpt2'
    """
    kind, _, argument = inner.partition(":")
    return f"{kind}@{version}:{argument}"


def found_adapters(found: list[dict]) -> tuple[list[EnvAdapter], list[str]]:
    """The adapters a probe of a new environment reported, named with their versions, and
    a note for each name another environment already provides (that one is used)."""
    taken = {a.name: e.name for e in load_all() for a in e.adapters}
    adapters, notes = [], []
    for a in found:
        versioned = versioned_name(a["name"], a["version"])
        if versioned in taken:
            notes.append(f"{versioned} is already provided by environment {taken[versioned]}; that one is used")
        adapters.append(EnvAdapter(name=versioned, inner=a["name"], encoding=a["encoding"], library=a["library"],
                                   version=a["version"], reason=a["reason"]))
    return adapters, notes


def default_name(requirements: list[str]) -> str:
    """A folder-safe name from the requirements.

    >>> default_name(["tiktoken==0.9.0"]), default_name(["transformers<5", "tokenizers==0.20.*"])
    ('tiktoken-0.9.0', 'transformers-lt5+tokenizers-0.20.x')
    """
    parts = []
    for requirement in requirements:
        text = requirement.strip().replace("==", "-").replace("<=", "-le").replace(">=", "-ge")
        text = text.replace("<", "-lt").replace(">", "-gt").replace("~=", "-compat").replace("*", "x")
        parts.append(re.sub(r"[^A-Za-z0-9._-]+", "", text))
    return "+".join(parts)[:64] or "env"


def envs_root() -> Path:
    return cache_dir() / "envs"


def check_name(name: str) -> str:
    if not _NAME.match(name.replace("+", "-")):
        raise EnvError(f"environment name {name!r} must be letters, digits, '.', '_', '-' or '+' "
                       "(at most 64); pass --name NAME")
    return name


def save(env: Environment) -> None:
    write_atomic(Path(env.folder) / MANIFEST, json.dumps(env.to_json(), indent=2, sort_keys=True) + "\n")


def load_all() -> list[Environment]:
    """Every finished environment, by name (half-made and unreadable ones are skipped)."""
    root = envs_root()
    if not root.is_dir():
        return []
    envs = []
    for manifest in sorted(root.glob(f"*/{MANIFEST}")):
        try:
            envs.append(Environment.from_json(json.loads(manifest.read_text(encoding="utf-8"))))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # `tokconf env list` says which ones are broken
    return envs


def broken() -> list[str]:
    """Folders under the envs root that hold no readable manifest."""
    root = envs_root()
    if not root.is_dir():
        return []
    names = {e.name for e in load_all()}
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in names)


def load(name: str) -> Environment:
    for env in load_all():
        if env.name == name:
            return env
    known = ", ".join(e.name for e in load_all()) or "none"
    raise EnvError(f"no environment named {name!r} (known: {known}); make one with `tokconf env add REQUIREMENT`")


def remove(name: str) -> Path:
    check_name(name)
    folder = envs_root() / name
    if not folder.is_dir():
        known = ", ".join(e.name for e in load_all()) or "none"
        raise EnvError(f"no environment named {name!r} (known: {known})")
    # the manifest goes first: a removal cut short leaves a half-made folder, never a
    # registered environment without its interpreter
    (folder / MANIFEST).unlink(missing_ok=True)
    shutil.rmtree(folder)
    return folder


def find_adapter(name: str) -> tuple[Environment, EnvAdapter] | None:
    """The environment and adapter a versioned name belongs to (first environment wins)."""
    for env in load_all():
        for adapter in env.adapters:
            if adapter.name == name:
                return env, adapter
    return None
