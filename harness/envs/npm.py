"""Node environments: ``tokconf env add npm:js-tiktoken@1.0.21 npm:tiktoken@1.0.22 ...``.

The npm side of :mod:`harness.envs`. An ``npm:`` requirement makes a Node project under
tokconf's cache (``<cache>/envs/NAME``): a ``package.json``, the packages installed there
by ``npm install --save-exact`` with npm's ``package-lock.json`` kept (so what was
installed can be read and reproduced), and ``tokconf-load.mjs``, one line that imports a
package *from that folder*, so the worker resolves packages as a user's own code in that
project would (ESM conditions, that project's versions). Install scripts are not run
(``--ignore-scripts``): the packages tokconf drives need none, and nothing foreign runs
outside a worker.

The project is then probed by the Node worker itself (``worker.mjs --probe``): each
adapter module of :mod:`implementations.javascript` says which encodings its installed
package offers, and those become adapters named with the package version
(``js-tiktoken@1.0.21:cl100k_base``), registered by the manifest like any environment's.
They always run in a Node worker (:class:`harness.worker.node.NodeExecutor`).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable

from harness.envs.store import MANIFEST, EnvError, Environment, check_name, envs_root, found_adapters, save

__all__ = ["NPM_PREFIX", "create_npm", "default_npm_name", "is_npm", "parse_npm", "project_packages"]

NPM_PREFIX = "npm:"
LOADER = "tokconf-load.mjs"
#: npm package names (scoped or not) and an optional version or range after "@"
_SPEC = re.compile(r"^(?P<name>(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)(@(?P<version>[^\s@]+))?$")


def is_npm(requirement: str) -> bool:
    return requirement.strip().startswith(NPM_PREFIX)


def parse_npm(requirement: str) -> tuple[str, str | None]:
    """``npm:js-tiktoken@1.0.21`` -> ``("js-tiktoken", "1.0.21")``.

    >>> parse_npm("npm:gpt-tokenizer@4.0.0"), parse_npm("npm:@scope/pkg@^2"), parse_npm("npm:tiktoken")
    (('gpt-tokenizer', '4.0.0'), ('@scope/pkg', '^2'), ('tiktoken', None))
    """
    spec = requirement.strip()[len(NPM_PREFIX):]
    match = _SPEC.match(spec)
    if not match:
        raise EnvError(f"{requirement!r} is not an npm requirement like 'npm:js-tiktoken@1.0.21'")
    return match.group("name"), match.group("version")


def default_npm_name(requirements: list[str]) -> str:
    """``npm-js-tiktoken-1.0.21+tiktoken-1.0.22``: folder-safe, from the requirements.

    >>> default_npm_name(["npm:js-tiktoken@1.0.21", "npm:tiktoken@^1"])
    'npm-js-tiktoken-1.0.21+tiktoken-1'
    """
    parts = []
    for requirement in requirements:
        name, version = parse_npm(requirement)
        text = name.lstrip("@").replace("/", "-") + (f"-{version}" if version else "")
        parts.append(re.sub(r"[^A-Za-z0-9._-]+", "", text))
    return ("npm-" + "+".join(parts))[:64]


def _known() -> dict[str, str]:
    # the JavaScript family's, asked through the registry: the engine never imports a family
    return _hook("npm-packages")()


def _hook(name: str) -> Any:
    from harness.registry import RegistryError, default_registry

    try:
        return default_registry().hook(name)
    except RegistryError as exc:
        raise EnvError(f"Node environments need the JavaScript adapter family: {exc}") from exc


def _tool(name: str) -> str:
    from harness.worker.node import node_binary, node_unavailable_reason

    reason = node_unavailable_reason()
    if reason is not None:
        raise EnvError(reason)
    if name == "node":
        return node_binary() or "node"
    found = shutil.which(name) or str(Path(node_binary() or "node").with_name(name))
    if not Path(found).exists():
        raise EnvError(f"`{name}` is not installed beside Node.js ({found}): install npm (e.g. `apt-get install npm`)")
    return found


def _run(command: list[str], what: str, log: Callable[[str], None], cwd: Path) -> str:
    log(f"$ (cd {cwd} && {' '.join(command)})")
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        tail = "\n".join(done.stdout.strip().split("\n")[-15:])
        raise EnvError(f"{what} failed (exit {done.returncode}):\n{tail}")
    return done.stdout


def project_packages(folder: Path) -> dict[str, str]:
    """Every package npm installed in the project, with its version (from the lock file)."""
    try:
        lock = json.loads((folder / "package-lock.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found = {}
    for key, entry in (lock.get("packages") or {}).items():
        if key.startswith("node_modules/") and isinstance(entry, dict) and "version" in entry:
            found[key[len("node_modules/"):]] = entry["version"]
    return dict(sorted(found.items()))


def _write_project(folder: Path, name: str) -> None:
    folder.mkdir(parents=True)
    package = {"name": f"tokconf-env-{re.sub(r'[^a-z0-9-]+', '-', name.lower())}"[:214], "version": "0.0.0",
               "private": True, "description": "A tokconf environment: JavaScript tokenizers run by tokconf's Node worker"}
    (folder / "package.json").write_text(json.dumps(package, indent=2) + "\n", encoding="utf-8")
    # a dynamic import resolves bare names from the importing file's folder: this one's
    (folder / LOADER).write_text("export const load = (specifier) => import(specifier);\n", encoding="utf-8")


def probe(folder: Path) -> dict:
    """Ask the Node worker which adapters the project's packages offer."""
    from harness.worker.node import worker_script

    command = [_tool("node"), str(worker_script()), "--probe", "--project", str(folder)]
    for kind, path in _hook("node-modules")():
        command += ["--module", f"{kind}={path}"]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise EnvError(f"probing the Node project failed (exit {done.returncode}): {done.stderr.strip()[-800:]}")
    try:
        return json.loads(done.stdout)
    except ValueError as exc:
        raise EnvError(f"the Node probe printed something that is not JSON: {done.stdout[:200]!r}") from exc


def create_npm(requirements: list[str], *, name: str | None = None,
               log: Callable[[str], None] = lambda line: None) -> Environment:
    """Make Node environment ``name`` holding the ``npm:`` ``requirements``."""
    specs = [parse_npm(r) for r in requirements]
    unknown = sorted({n for n, _ in specs} - set(_known()))
    if unknown:
        raise EnvError(f"tokconf has no JavaScript adapter for {', '.join(unknown)}; it drives the npm packages "
                       f"{', '.join(sorted(_known()))}")
    npm = _tool("npm")
    name = check_name(name or default_npm_name(requirements))
    folder = envs_root() / name
    if (folder / MANIFEST).exists():
        raise EnvError(f"environment {name} already exists; `tokconf env remove {name}` first, or pass --name")
    if folder.exists():
        shutil.rmtree(folder)  # half-made by an earlier attempt
    _write_project(folder, name)
    try:
        # --prefer-offline: tarballs npm has cached are not fetched again (CI re-creates envs)
        _run([npm, "install", "--save-exact", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund",
              "--loglevel=error",
              *(f"{n}@{v}" if v else n for n, v in specs)], "npm install", log, folder)
        found = probe(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    packages = project_packages(folder)
    adapters, notes = found_adapters(found["adapters"])
    if not adapters:
        shutil.rmtree(folder, ignore_errors=True)
        raise EnvError(f"{', '.join(requirements)} gave no tokconf adapter (installed: {packages})")
    env = Environment(name=name, folder=str(folder), python="", requirements=tuple(requirements),
                      packages=tuple(packages.items()), adapters=tuple(adapters), installer="npm",
                      created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                      notes=tuple(notes), runtime="node", node_version=found.get("node", "").lstrip("v"))
    save(env)
    return env
