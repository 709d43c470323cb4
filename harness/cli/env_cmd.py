"""``tokconf env add|list|remove``: other Python environments whose adapters join a run.

``tokconf env add 'tiktoken==0.9.0'`` installs the requirements into a new virtual
environment under tokconf's cache and registers its adapters as ``tiktoken@0.9.0:...``;
``tokconf run --impl tiktoken:cl100k_base --impl tiktoken@0.9.0:cl100k_base`` then
compares both releases. See :mod:`harness.envs`.
"""

from __future__ import annotations

import argparse
import json
import sys

from harness.cli import EXIT_OK, UsageError


def add_parser(subparsers, parent: argparse.ArgumentParser) -> None:
    del parent
    parser = subparsers.add_parser(
        "env", help="add, list or remove other Python environments or Node projects (another release, another language)",
        description="Environments hold other releases of tokenizer libraries; their adapters are named "
                    "with the version (tiktoken@0.9.0:cl100k_base) and run in worker processes.")
    commands = parser.add_subparsers(dest="env_command", metavar="ACTION")
    add = commands.add_parser("add", help="make an environment holding REQUIREMENT ... and register its adapters")
    add.add_argument("requirements", nargs="+", metavar="REQUIREMENT",
                     help="e.g. 'tiktoken==0.9.0' 'transformers<5', or npm packages: npm:js-tiktoken@1.0.21")
    add.add_argument("--name", help="the environment's name (default: from the requirements)")
    add.add_argument("--installer", choices=["uv", "pip"], help="default: uv when installed, else pip")
    add.add_argument("--quiet", action="store_true", help="do not echo the install commands")
    add.add_argument("--ladder", action="store_true",
                     help="one environment per release: 'tiktoken>=0.9,<=0.14' (every release the package "
                          "index has in the range) or 'tiktoken==0.9.0,0.10.0'; releases already in an "
                          "environment are kept (for tokconf run --ladder)")
    add.add_argument("--exist-ok", action="store_true",
                     help="an environment of that name holding exactly these requirements is kept as it is "
                          "(for CI caches); one holding other requirements is still an error")
    listing = commands.add_parser("list", help="environments, their packages and adapters")
    listing.add_argument("--json", action="store_true")
    remove = commands.add_parser("remove", help="delete an environment")
    remove.add_argument("name", metavar="NAME")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from harness.envs.store import EnvError

    try:
        if args.env_command == "add":
            return _add(args)
        if args.env_command == "list":
            return _list(args)
        if args.env_command == "remove":
            from harness.envs.store import remove

            print(f"removed {remove(args.name)}")
            return EXIT_OK
    except EnvError as exc:
        raise UsageError(str(exc)) from exc
    raise UsageError("say what to do: tokconf env add|list|remove (see tokconf env --help)")


def _add(args: argparse.Namespace) -> int:
    from harness.envs.create import create
    from harness.envs.npm import create_npm, default_npm_name, is_npm
    from harness.envs.store import EnvError, default_name, load_all

    requirements = list(args.requirements)
    npm = [is_npm(r) for r in requirements]
    if any(npm) and not all(npm):
        raise EnvError("an environment is either Python or Node: give the npm: requirements and the Python "
                       "ones to two `tokconf env add` commands")
    log = (lambda line: None) if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    if args.ladder:
        return _add_ladder(requirements, log=log)
    if args.exist_ok:
        name = args.name or (default_npm_name(requirements) if all(npm) else default_name(requirements))
        existing = next((e for e in load_all() if e.name == name), None)
        if existing is not None and list(existing.requirements) == requirements:
            print(f"environment {existing.name} exists with these requirements; kept")
            _print_adapters(existing)
            return EXIT_OK
    if all(npm):
        env = create_npm(requirements, name=args.name, log=log)
        print(f"environment {env.name}: Node {env.node_version} project {env.folder} (npm)")
        _print_adapters(env)
        return EXIT_OK
    env = create(requirements, name=args.name, log=log, installer=args.installer)
    print(f"environment {env.name}: {env.python} ({env.installer})")
    _print_adapters(env)
    return EXIT_OK


def _add_ladder(specs: list[str], *, log) -> int:
    from harness.envs.ladder import make_rungs, parse_ladder

    if len(specs) != 1:
        raise UsageError("env add --ladder takes one ladder, e.g. 'tiktoken>=0.9,<=0.14'; run it once per library")
    ladder = parse_ladder(specs[0])
    rungs = make_rungs(ladder, log=log, from_index=True)
    print(f"ladder {ladder.library}: {len(rungs)} release(s) in environments: {', '.join(rungs)}")
    for version, env in rungs.items():
        print(f"environment {env.name}: {ladder.library} {version}")
    return EXIT_OK


def _print_adapters(env) -> None:
    width = max((len(a.name) for a in env.adapters), default=10)
    for a in env.adapters:
        state = "available" if a.reason is None else f"unavailable: {a.reason}"
        print(f"  {a.name:<{width}}  {a.encoding:<14} {state}")
    for requirement, why in env.api_requirements:
        print(f"  also installed: {requirement} ({why})")
    for note in env.notes:
        print(f"  note: {note}")


def _list(args: argparse.Namespace) -> int:
    from harness.envs.store import broken, envs_root, load_all

    envs = load_all()
    if args.json:
        print(json.dumps({"root": str(envs_root()), "environments": [e.to_json() for e in envs],
                          "broken": broken()}, indent=2, sort_keys=True))
        return EXIT_OK
    if not envs:
        print(f"no environments (in {envs_root()}); make one with `tokconf env add 'tiktoken==0.9.0'`")
    from harness.envs.create import requirement_name
    from harness.envs.probe import normalise

    from harness.envs.npm import parse_npm

    for env in envs:
        if env.runtime == "node":
            asked = {parse_npm(r)[0] for r in env.requirements}
            libs = ", ".join(f"{n} {v}" for n, v in env.packages if n in asked)
            print(f"{env.name}: {' '.join(env.requirements)} -> {libs or '?'}  (Node {env.node_version}, {env.folder})")
            _print_adapters(env)
            continue
        asked = {normalise(requirement_name(r)) for r in env.requirements}
        libs = ", ".join(f"{n} {v}" for n, v in env.packages if normalise(n) in asked)
        print(f"{env.name}: {' '.join(env.requirements)} -> {libs or '?'}  ({env.python})")
        _print_adapters(env)
    for name in broken():
        print(f"{name}: half-made (no env.json); `tokconf env remove {name}` or add it again")
    return EXIT_OK
