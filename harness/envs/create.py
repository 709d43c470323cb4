"""Make an environment: a virtual environment, the requirements, a probe, a manifest.

``uv`` is used when it is on ``PATH`` (much faster), else ``python -m venv`` and that
environment's own ``pip``. Besides the requirements, ``regex`` is installed (the
tiktoken adapter pre-tokenizes with it; tokconf's engine needs nothing else, see
:mod:`harness.envs`), and what the library's public API needs to run every path
(:data:`API_REQUIREMENTS`: numpy for tiktoken), recorded in the manifest. The environment is built in its final folder but registered only
when its manifest is written, last; a failed or interrupted ``env add`` leaves a
half-made folder that is never used and that the next ``env add`` of that name replaces.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

from harness.envs.handoff import own_entry_points, verified_vocab_dir
from harness.envs.probe import normalise
from harness.envs.store import (
    MANIFEST,
    EnvError,
    Environment,
    check_name,
    default_name,
    envs_root,
    found_adapters,
    save,
)

__all__ = ["API_REQUIREMENTS", "WORKER_REQUIREMENTS", "api_requirements", "create", "requirement_name"]

#: What the worker needs in an environment besides the user's requirements.
WORKER_REQUIREMENTS: tuple[str, ...] = ("regex",)
#: What a library's public API needs to run every path, by the library's distribution name,
#: with why: installed beside it, so that a path never fails for want of a module that any
#: user of that path has (tiktoken declares numpy nowhere, yet ``Encoding.encode_to_numpy``
#: imports it on every call). transformers and tokenizers need nothing more for tokconf's
#: paths: transformers requires numpy itself.
API_REQUIREMENTS: dict[str, tuple[tuple[str, str], ...]] = {
    "tiktoken": (("numpy", "tiktoken's Encoding.encode_to_numpy imports numpy"),),
}
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([<>=!~;@].*)?$")


def requirement_name(requirement: str) -> str:
    """The distribution a requirement names (``tiktoken==0.9.0`` -> ``tiktoken``).

    >>> requirement_name("tokenizers==0.20.*"), requirement_name("transformers[torch]<5")
    ('tokenizers', 'transformers')
    """
    match = _REQUIREMENT.match(requirement)
    if not match:
        raise EnvError(f"{requirement!r} is not a requirement like 'tiktoken==0.9.0' or 'transformers<5'")
    return match.group(1)


def api_requirements(libraries: list[str]) -> tuple[tuple[str, str], ...]:
    """What the public APIs of ``libraries`` need besides them, with why (each once).

    >>> api_requirements(["Tiktoken", "tokenizers"])
    (('numpy', "tiktoken's Encoding.encode_to_numpy imports numpy"),)
    """
    found: dict[str, str] = {}
    for library in libraries:
        for requirement, why in API_REQUIREMENTS.get(normalise(library), ()):
            found.setdefault(requirement, why)
    return tuple(found.items())


def _python_of(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _run(command: list[str], what: str, log: Callable[[str], None]) -> None:
    log(f"$ {' '.join(command)}")
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stdout.strip().split("\n")[-15:])
        raise EnvError(f"{what} failed (exit {done.returncode}):\n{tail}")


def create(requirements: list[str], *, name: str | None = None, log: Callable[[str], None] = lambda line: None,
           installer: str | None = None) -> Environment:
    """Make environment ``name`` (default: from the requirements) holding ``requirements``."""
    if not requirements:
        raise EnvError("name at least one requirement, e.g. `tokconf env add 'tiktoken==0.9.0'`")
    libraries = [requirement_name(r) for r in requirements]
    api = api_requirements(libraries)
    extra = [r for r, _ in api if normalise(r) not in {normalise(n) for n in libraries}]
    name = check_name(name or default_name(requirements))
    folder = envs_root() / name
    if (folder / MANIFEST).exists():
        raise EnvError(f"environment {name} already exists; `tokconf env remove {name}` first, or pass --name")
    if folder.exists():
        shutil.rmtree(folder)  # half-made by an earlier attempt
    folder.mkdir(parents=True)
    tool = installer or ("uv" if shutil.which("uv") else "pip")
    venv = folder / "venv"
    python = _python_of(venv)
    try:
        if tool == "uv":
            uv = shutil.which("uv") or "uv"
            _run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], "uv venv", log)
            _run([uv, "pip", "install", "--quiet", "--python", str(python), *requirements, *extra,
                  *WORKER_REQUIREMENTS], "uv pip install", log)
        else:
            _run([sys.executable, "-m", "venv", str(venv)], "python -m venv", log)
            _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements,
                  *extra, *WORKER_REQUIREMENTS], "pip install", log)
        found = probe(python, libraries)
        adapters = found_adapters(found["adapters"], name=name)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if not adapters:
        shutil.rmtree(folder, ignore_errors=True)
        raise EnvError(f"{', '.join(requirements)} gave no tokconf adapter: tokconf has adapters for the "
                       "libraries tiktoken, tokenizers and transformers (hf-slow), among others; "
                       "`tokconf list` shows each adapter's library")
    env = Environment(name=name, folder=str(folder), python=str(python), requirements=tuple(requirements),
                      packages=tuple(sorted(found["packages"].items())), adapters=tuple(adapters),
                      installer=tool, created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                      api_requirements=api)
    save(env)
    return env


def probe(python: Path, libraries: list[str]) -> dict:
    """Ask the environment which adapters of ``libraries`` it has (:mod:`harness.envs.probe`)."""
    from harness.worker.client import harness_root

    command = [str(python), "-m", "harness.envs.probe"]
    command += [f"--library={normalise(n)}" for n in libraries]
    command += [f"--entry-point={n}={v}" for n, v in own_entry_points()]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (harness_root(), env.get("PYTHONPATH", "")) if p)
    env["TOKCONF_VOCAB_DIR"] = str(verified_vocab_dir())
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if done.returncode != 0:
        raise EnvError(f"probing the new environment failed (exit {done.returncode}): {done.stderr.strip()[-800:]}")
    try:
        return json.loads(done.stdout)
    except ValueError as exc:
        raise EnvError(f"the probe printed something that is not JSON: {done.stdout[:200]!r}") from exc
