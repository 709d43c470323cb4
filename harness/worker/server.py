"""The worker: ``python -m harness.worker [--memory-mb N] [--no-namespace] [--probe]``.

Hosts one adapter and answers calls over the framed protocol of
:mod:`harness.worker.protocol` on its stdin and stdout. Started by
:class:`harness.worker.client.WorkerExecutor` with whatever interpreter the run names.

Before anything else it takes its limits (:mod:`harness.worker.limits`): memory,
network namespace, death with its parent, Ctrl-C ignored (tokconf ends it). Then it
moves the protocol off file descriptors 0 and 1, so foreign code that prints goes to
stderr instead of corrupting a frame, and reading stdin gives it nothing.

Each call runs through :class:`harness.calls.InProcess`, exactly as in process: the same
categories, the same checks on return values. A ``MemoryError`` under a memory limit is
answered as ``crashed:out-of-memory`` and the worker exits, so the next call gets a fresh
process rather than a heap in an unknown state.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack
from types import SimpleNamespace
from typing import Any, BinaryIO

from harness.calls import InProcess
from harness.outcomes import CRASH_OUT_OF_MEMORY, Outcome, native_type_name
from harness.registry import AdapterUnavailable, library_version
from harness.worker import differing, limits
from harness.worker.argv import read_flags
from harness.worker.protocol import (decode_value, encode_frame, encode_outcome, encode_value, info_to_json,
                                     outcome_frame, read_frame)
from harness.worker.network import no_network
from harness.worker.setup import WorkerSetup


def _parse(argv: list[str] | None) -> SimpleNamespace:
    found = read_flags(argv, prog="python -m harness.worker", values=["--memory-mb"],
                       switches=["--no-namespace", "--probe"])
    memory = found.get("memory_mb")
    return SimpleNamespace(memory_mb=int(memory) if memory is not None else None,  # type: ignore[call-overload]
                           no_namespace=found["no_namespace"], probe=found["probe"])


def _take_protocol_streams() -> tuple[BinaryIO, int]:
    """The protocol's own copies of stdin/stdout; fd 0 becomes /dev/null and fd 1 stderr."""
    proto_in = os.fdopen(os.dup(0), "rb", buffering=1 << 16)
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return proto_in, proto_out


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    limits.die_with_parent()
    limits.ignore_interrupts()
    network = limits.isolate_network() if not args.no_namespace else limits.NetworkProtection(
        False, True, "socket block only: the network namespace was not asked for")
    if args.probe:
        print(json.dumps(network.to_json()))
        return 0
    limits.limit_memory(args.memory_mb)
    proto_in, proto_out = _take_protocol_streams()
    with ExitStack() as stack:
        stack.enter_context(no_network("an isolated adapter"))
        try:
            return _serve(proto_in, proto_out, network, memory_limited=bool(args.memory_mb))
        except MemoryError:
            return limits.EXIT_OUT_OF_MEMORY


def _serve(proto_in: BinaryIO, proto_out: int, network: limits.NetworkProtection, *, memory_limited: bool) -> int:
    first = read_frame(proto_in)
    if first is None:
        return 0
    if first.get("type") != "load":
        _write(proto_out, encode_frame({"type": "error", "message": f"expected a load message first, got {first.get('type')!r}"}))
        return 2
    try:
        adapter, provider = WorkerSetup.from_json(first.get("setup", {})).build(first["adapter"])
    except AdapterUnavailable as exc:
        _write(proto_out, encode_frame({"type": "error", "message": str(exc) or "unavailable"}))
        return 0
    executor = InProcess(adapter, provider=provider)
    _write(proto_out, encode_frame({
        "type": "ready", "info": info_to_json(executor.info), "network": network.to_json(), "pid": os.getpid(),
        "version": library_version(executor.info.library), "provenance": _provenance(adapter),
    }))
    while True:
        message = read_frame(proto_in)
        if message is None or message.get("type") == "exit":
            return 0
        if message.get("type") != "calls":
            _write(proto_out, encode_frame({"type": "error", "message": f"unknown message type {message.get('type')!r}"}))
            return 2
        for call in message["calls"]:
            if not _answer(executor, call, proto_out, memory_limited=memory_limited):
                return limits.EXIT_OUT_OF_MEMORY


def _provenance(adapter: Any) -> dict[str, Any] | None:
    """The files the adapter was built from, as only this process knows them: the parent
    never builds an isolated adapter, and its report and unit cache key need them (a
    drop-in's module, an ``hf-json:`` file)."""
    try:
        return adapter.provenance().to_json()
    except Exception:  # noqa: BLE001 - a foreign override must not sink the worker
        return None


def _run(executor: InProcess, op: str, args: tuple[Any, ...]) -> Outcome:
    try:
        if op in differing.OPERATIONS:  # the comparison made here (harness.worker.differing)
            return differing.answer(executor, op, args)
        return executor.call(op, *args)
    except (KeyboardInterrupt, SystemExit) as exc:
        # in process these are the user's; here no user is at this process's keyboard, so
        # an adapter that raises them is simply failing
        return Outcome.raised("internal-error", native_type_name(exc), f"the adapter raised {type(exc).__name__}")


def _out_of_memory(outcome: Outcome) -> bool:
    return outcome.kind == "raised" and outcome.native_type == "builtins.MemoryError"


def _answer(executor: InProcess, call: dict[str, Any], out: int, *, memory_limited: bool) -> bool:
    """Answer one call (and its follow-ups); False when the worker must end (out of memory)."""
    number, op = call["n"], call["op"]
    args = tuple(decode_value(a) for a in call.get("args", ()))
    outcome = _run(executor, op, args)
    if memory_limited and _out_of_memory(outcome):
        crashed = Outcome.crashed(CRASH_OUT_OF_MEMORY, f"{op} went past the worker's memory limit (MemoryError)")
        _write(out, encode_frame({"type": "outcome", "n": number, "outcome": encode_outcome(crashed)}))
        return False
    try:
        frame = outcome_frame(number, outcome)
    except TypeError as exc:
        bad = Outcome.raised("internal-error", "tokconf.UnserializableValue", f"{op} returned a value that {exc}")
        frame = encode_frame({"type": "outcome", "n": number, "outcome": encode_outcome(bad)})
    _write(out, frame)
    if not call.get("follow"):
        return True
    follow: list[list[Any]] = []
    if outcome.is_ok and isinstance(outcome.value, tuple):
        ids = outcome.value
        wanted: list[tuple[str, tuple[Any, ...]]] = [("decode_bytes", (ids,)), ("decode", (ids, "replace"))]
        wanted += [("token_bytes", (i,)) for i in dict.fromkeys(ids)]
        for follow_op, follow_args in wanted:
            got = _run(executor, follow_op, follow_args)
            if memory_limited and _out_of_memory(got):
                break  # the parent asks again on its own, and learns it then
            follow.append([follow_op, [encode_value(a) for a in follow_args], encode_outcome(got)])
    _write(out, encode_frame({"type": "follow", "n": number, "calls": follow}))
    return True


if __name__ == "__main__":
    sys.exit(main())
