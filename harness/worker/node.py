"""Workers in Node.js: JavaScript adapters behind the same protocol and limits.

:class:`NodeExecutor` is a :class:`~harness.worker.client.WorkerExecutor` whose process
is ``node harness/worker/node/worker.mjs`` (the protocol in JavaScript, see that file and
``protocol.mjs`` beside it) started through :mod:`harness.worker.launch`, which applies
the limits a Python worker applies to itself. Everything the parent does with a worker
(batches, follow-ups, time limits, crashes and restarts) is unchanged.

Memory: the limit is Node's heap (``--max-old-space-size``) plus ``RLIMIT_DATA`` for the
whole process (WebAssembly memory included); see :mod:`harness.worker.launch` for why not
``RLIMIT_AS``. A heap that runs out aborts Node with "JavaScript heap out of memory",
which :func:`harness.worker.limits.crash_cause` names ``out-of-memory``.

Node itself is found as ``TOKCONF_NODE`` or ``node`` on ``PATH``; without it every
JavaScript adapter is unavailable with :func:`node_unavailable_reason`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.worker.client import WorkerExecutor
from harness.worker.launch import PROTOCOL_IN_FD, PROTOCOL_OUT_FD
from harness.worker.setup import Isolation

__all__ = ["MIN_NODE_MAJOR", "NODE_ENV", "NodeExecutor", "NodeSetup", "node_binary", "node_unavailable_reason",
           "node_version", "worker_script"]

NODE_ENV = "TOKCONF_NODE"
#: Well-formed JSON.stringify (lone surrogates as escapes) is Node 12; ESM with top-level
#: await and import attributes as used here is solid from 18.
MIN_NODE_MAJOR = 18


def worker_script() -> Path:
    """``worker.mjs``, shipped as package data beside this module."""
    return Path(__file__).resolve().with_name("node") / "worker.mjs"


def node_binary() -> str | None:
    """The ``node`` to use: ``$TOKCONF_NODE``, else the first on ``PATH``."""
    given = os.environ.get(NODE_ENV)
    if given:
        return given if Path(given).exists() else shutil.which(given)
    return shutil.which("node")


@lru_cache(maxsize=8)
def _version_of(binary: str) -> str | None:
    try:
        done = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip().lstrip("v") if done.returncode == 0 else None


def node_version() -> str | None:
    """The version of :func:`node_binary` (``20.20.2``), or ``None`` without a usable Node."""
    binary = node_binary()
    return _version_of(binary) if binary else None


def node_unavailable_reason() -> str | None:
    """Why JavaScript adapters cannot run here, or ``None`` when they can."""
    binary = node_binary()
    if binary is None:
        where = f"${NODE_ENV} ({os.environ[NODE_ENV]}) does not exist" if os.environ.get(NODE_ENV) else "no `node` on PATH"
        return (f"Node.js is not installed ({where}): JavaScript adapters run in a Node worker; install Node.js "
                f">= {MIN_NODE_MAJOR} (e.g. `apt-get install nodejs npm`) or set {NODE_ENV} to its path")
    version = _version_of(binary)
    if version is None:
        return f"{binary} --version failed: is it Node.js? set {NODE_ENV} to a working node"
    try:
        major = int(version.split(".")[0])
    except ValueError:
        return f"{binary} reports version {version!r}, not a Node.js version"
    if major < MIN_NODE_MAJOR:
        return f"Node.js {version} is too old for tokconf's worker (needs >= {MIN_NODE_MAJOR}); set {NODE_ENV}"
    if not worker_script().exists():
        return f"tokconf's Node worker is missing at {worker_script()}: reinstall tokconf"
    return None


@dataclass(frozen=True)
class NodeSetup:
    """The ``setup`` of a Node worker's load message: where the packages are installed
    (a Node project made by ``tokconf env add npm:...``), and the adapter modules by kind."""

    project: str | None = None
    #: kind -> path of its adapter module (``implementations/javascript/*.mjs``)
    modules: tuple[tuple[str, str], ...] = ()
    #: Node's heap limit in MB (``--max-old-space-size``); None = Node's default
    heap_mb: int | None = None
    node_options: tuple[str, ...] = field(default=())
    #: a port over an encoding file's ranks: {name, ranks_file, sha256, pattern,
    #: special_tokens} (:mod:`implementations.javascript.ranks`); the adapter module
    #: reads it as ``ctx.encoding``. None: the package's bundled encoding
    encoding: dict[str, Any] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"node": {"project": self.project, "modules": dict(self.modules), "encoding": self.encoding}}


class NodeExecutor(WorkerExecutor):
    """A JavaScript adapter in a Node worker; ``name`` is its name inside the worker
    (``js-tiktoken:cl100k_base``)."""

    def __init__(self, name: str, isolation: Isolation, setup: NodeSetup) -> None:
        self.node_setup = setup
        super().__init__(name, isolation)

    def _command(self) -> list[str]:
        binary = node_binary()
        if binary is None:
            binary = "node"  # the launcher reports that it cannot be started
        command = [sys.executable, "-m", "harness.worker.launch"]
        memory = self.isolation.memory_limit_mb
        if memory:
            command += ["--memory-mb", str(memory)]
        if not self.isolation.network_namespace:
            command.append("--no-namespace")
        command += ["--", binary]
        heap = self.node_setup.heap_mb or memory
        if heap:
            command.append(f"--max-old-space-size={heap}")
        command += [*self.node_setup.node_options, str(worker_script()),
                    "--in", str(PROTOCOL_IN_FD), "--out", str(PROTOCOL_OUT_FD)]
        return command

    def _setup_json(self) -> dict[str, Any]:
        return self.node_setup.to_json()
