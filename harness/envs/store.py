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
           "providers", "remove", "save", "versioned_name"]

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
    #: what was installed besides the requirements because the library's public API needs
    #: it to run every path (numpy for tiktoken's encode_to_numpy), with why
    api_requirements: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "name": self.name, "folder": self.folder, "python": self.python,
                "requirements": list(self.requirements), "packages": dict(self.packages),
                "adapters": [vars(a) for a in self.adapters], "installer": self.installer,
                "created": self.created, "notes": list(self.notes), "runtime": self.runtime,
                "node_version": self.node_version, "api_requirements": [list(r) for r in self.api_requirements]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Environment:
        return cls(name=data["name"], folder=data["folder"], python=data["python"],
                   requirements=tuple(data["requirements"]), packages=tuple(sorted(data["packages"].items())),
                   adapters=tuple(EnvAdapter(**a) for a in data.get("adapters", ())),
                   installer=data.get("installer", "pip"), created=data.get("created", ""),
                   notes=tuple(data.get("notes", ())), runtime=data.get("runtime", "python"),
                   node_version=data.get("node_version", ""),
                   api_requirements=tuple((r[0], r[1]) for r in data.get("api_requirements", ())))


def versioned_name(inner: str, version: str) -> str:
    """``tiktoken:cl100k_base`` at 0.9.0 -> ``tiktoken@0.9.0:cl100k_base``.

    >>> versioned_name("hf:gpt2", "0.20.3")
    'hf@0.20.3:gpt2'
    """
    kind, _, argument = inner.partition(":")
    return f"{kind}@{version}:{argument}"


def found_adapters(found: list[dict], *, name: str) -> list[EnvAdapter]:
    """The adapters a probe of new environment ``name`` reported, named with their versions.

    A name another environment already provides is an error naming both (a run could not
    say which release it called); a name that already carries a version is another
    environment's adapter seen through tokconf's own entry points, never this one's.
    """
    taken = providers()
    adapters, clashes = [], []
    for a in found:
        if "@" in a["name"].partition(":")[0]:
            continue
        versioned = versioned_name(a["name"], a["version"])
        clashes += [(versioned, other) for other in taken.get(versioned, ())]
        adapters.append(EnvAdapter(name=versioned, inner=a["name"], encoding=a["encoding"], library=a["library"],
                                   version=a["version"], reason=a["reason"]))
    if clashes:
        shown = "; ".join(f"{adapter} (environment {other})" for adapter, other in clashes[:3])
        raise EnvError(f"environment {name} would provide adapter names another environment already provides: "
                       f"{shown}{f' and {len(clashes) - 3} more' if len(clashes) > 3 else ''}. One name must mean one release: "
                       f"`tokconf env remove {clashes[0][1]}` first, or keep that one")
    return adapters


def providers() -> dict[str, list[str]]:
    """adapter name -> the environments that provide it (more than one is an error)."""
    found: dict[str, list[str]] = {}
    for env in load_all():
        for adapter in env.adapters:
            found.setdefault(adapter.name, []).append(env.name)
    return found


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
    """The environment and adapter a versioned name belongs to; a name two environments
    provide is an :class:`EnvError` naming both."""
    found = [(env, adapter) for env in load_all() for adapter in env.adapters if adapter.name == name]
    if len(found) > 1:
        raise EnvError(duplicate_message(name, [env.name for env, _ in found]))
    return found[0] if found else None


def duplicate_message(name: str, envs: list[str]) -> str:
    return (f"{name} is provided by {len(envs)} environments ({', '.join(envs)}): one name must mean one "
            f"release; `tokconf env remove {envs[-1]}` (or the other)")
