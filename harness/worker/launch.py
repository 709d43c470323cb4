"""Start a worker written in another language under the limits a Python worker takes.

``python -m harness.worker.launch [--memory-mb N] [--no-namespace] -- PROGRAM ARG ...``

The Python worker (:mod:`harness.worker.server`) limits itself before it imports
anything. A Node worker cannot: Node starts threads at once, and a multi-threaded process
cannot enter a new user namespace. So this small launcher does it and then ``exec``\\s the
program, which inherits everything:

- death with the parent (``PR_SET_PDEATHSIG`` survives ``execve``);
- the network namespace (:func:`harness.worker.limits.isolate_network`); what was in force
  is handed over in ``TOKCONF_NETWORK`` (JSON) for the worker's ``ready`` message;
- memory: ``RLIMIT_DATA``, not ``RLIMIT_AS``. V8 reserves address space it never uses
  (WebAssembly reserves about 10 GB per instance for its guard regions), so an
  address-space limit of a few GB stops tiktoken's WASM build from loading at all, while
  ``RLIMIT_DATA`` counts the private memory actually made writable. Node's own heap limit
  is set by the caller (``--max-old-space-size``);
- the protocol moves to file descriptors 3 (in) and 4 (out); 0 becomes ``/dev/null`` and 1
  a copy of stderr, so a package that prints cannot corrupt a frame.
"""

from __future__ import annotations

import json
import os
import sys
from types import SimpleNamespace

from harness.worker import limits
from harness.worker.argv import read_flags

#: Where the launched program finds the protocol.
PROTOCOL_IN_FD = 3
PROTOCOL_OUT_FD = 4


def _parse(argv: list[str] | None) -> SimpleNamespace:
    found = read_flags(argv, prog="python -m harness.worker.launch", values=["--memory-mb"],
                       switches=["--no-namespace"], rest=True)
    program = list(found.get("rest") or [])  # type: ignore[call-overload]
    if not program:
        print("python -m harness.worker.launch: name the program to start after --", file=sys.stderr)
        raise SystemExit(2)
    memory = found.get("memory_mb")
    return SimpleNamespace(memory_mb=int(memory) if memory is not None else None,  # type: ignore[call-overload]
                           no_namespace=found["no_namespace"], program=program)


def _limit_data(megabytes: int | None) -> None:
    if not megabytes:
        return
    import resource

    limit = int(megabytes) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def _move_protocol() -> None:
    """stdin/stdout -> fds 3/4 (inherited across exec); 0 -> /dev/null, 1 -> stderr."""
    for fd in (PROTOCOL_IN_FD, PROTOCOL_OUT_FD):
        try:
            os.close(fd)  # whatever the parent left there; the protocol takes the number
        except OSError:
            pass
    os.dup2(0, PROTOCOL_IN_FD, inheritable=True)
    os.dup2(1, PROTOCOL_OUT_FD, inheritable=True)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    limits.die_with_parent()
    limits.ignore_interrupts()
    network = limits.isolate_network() if not args.no_namespace else limits.NetworkProtection(
        False, True, "the network namespace was not asked for")
    os.environ["TOKCONF_NETWORK"] = json.dumps(network.to_json())
    _limit_data(args.memory_mb)
    _move_protocol()
    try:
        os.execvp(args.program[0], args.program)
    except OSError as exc:
        print(f"tokconf launcher: cannot start {args.program[0]}: {exc}", file=sys.stderr)
        return 127
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
