"""The parent's side of a worker: an :class:`~harness.calls.Executor` in another process.

:class:`WorkerExecutor` starts ``python -m harness.worker`` (with the run's interpreter
and limits), sends it the adapter's name and setup, and then turns every call into
frames. What the checks see is unchanged: an :class:`~harness.outcomes.Outcome` per call.

- **Time limit**: each answer must come within ``timeout_s`` of the previous one (answers
  are written as each call returns). Past it the worker is killed and the call's outcome
  is ``timeout``.
- **Crash**: a worker that dies (a signal, ``os.abort()``, the memory limit) gives the call
  it was running the outcome ``crashed:<cause>`` (:func:`harness.worker.limits.crash_cause`).
- After either, a new worker is started and the rest of the batch is sent to it, so one
  bad input costs one restart and every other answer is kept.
- **Batches**: :meth:`WorkerExecutor.call_many` sends many calls in one frame, and
  ``follow`` asks the worker to also answer what the checks ask next about an encode's
  IDs; one round trip then serves a whole input (see :class:`harness.calls.Calls.prefetch`).
- **Fork safety**: a ``--jobs`` process forked from the parent must not talk to the
  parent's worker; an executor notices it now lives in another process and starts its own.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from harness.calls import AdapterInfo
from harness.cases.model import Policy
from harness.outcomes import Outcome, checked
from harness.provenance import Provenance
from harness.registry import AdapterUnavailable
from harness.worker import differing
from harness.worker.limits import NetworkProtection, crash_cause
from harness.worker.protocol import (
    ProtocolError,
    decode_outcome,
    decode_value,
    encode_frame,
    encode_value,
    frame_length,
    info_from_json,
    parse_payload,
)
from harness.worker.setup import Isolation

__all__ = ["Request", "WorkerExecutor", "harness_root", "probe_network"]

#: (operation, arguments, follow): one call of a batch
Request = tuple[str, tuple[Any, ...], bool]
_READ_CHUNK = 1 << 16
#: how long a worker may take to start and build its adapter (vocabularies load here)
_START_TIMEOUT_S = 300.0


def harness_root() -> str:
    """The folder holding the ``harness`` package, for a worker's import path."""
    return str(Path(__file__).resolve().parents[2])


def probe_network(isolation: Isolation) -> NetworkProtection:
    """The network protection a worker of ``isolation`` gets here (a worker that exits at once)."""
    command = [isolation.python, "-m", "harness.worker", "--probe"]
    if not isolation.network_namespace:
        command.append("--no-namespace")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (harness_root(), env.get("PYTHONPATH", "")) if p)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
        return NetworkProtection.from_json(json.loads(done.stdout))
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return NetworkProtection(False, False, f"unknown: no worker could be started with {isolation.python} ({exc})")


class _Died(Exception):
    """The worker ended or broke the protocol; ``cause`` names what killed it."""

    def __init__(self, cause: str, detail: str) -> None:
        super().__init__(detail)
        self.cause = cause
        self.detail = detail


class _TimedOut(Exception):
    pass


class WorkerExecutor:
    """Calls one adapter in a worker process; restarts it after a timeout or a crash."""

    def __init__(self, name: str, isolation: Isolation) -> None:
        self.name = name
        self.isolation = isolation
        self.restarts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = 0
        self._buffer = bytearray()
        self._stderr: Any = None
        self.network: NetworkProtection | None = None
        self.version: str | None = None
        #: what the worker says its adapter was built from (None: it did not say)
        self.provenance: Provenance | None = None
        self.info: AdapterInfo = self._start()

    # -- life cycle ------------------------------------------------------------------------

    def _command(self) -> list[str]:
        command = [self.isolation.python, "-m", "harness.worker"]
        if self.isolation.memory_limit_mb:
            command += ["--memory-mb", str(self.isolation.memory_limit_mb)]
        if not self.isolation.network_namespace:
            command.append("--no-namespace")
        return command

    def _start(self) -> AdapterInfo:
        env = dict(os.environ)
        env.update(dict(self.isolation.environ))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (harness_root(), env.get("PYTHONPATH", "")) if p)
        self._stderr = tempfile.TemporaryFile()
        self._buffer = bytearray()
        try:
            self._proc = subprocess.Popen(self._command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._stderr, env=env, start_new_session=True)
        except OSError as exc:
            raise AdapterUnavailable(f"cannot start a worker with {self.isolation.python}: {exc}") from exc
        self._owner = os.getpid()
        load = {"type": "load", "adapter": self.name, "setup": self._setup_json()}
        try:
            self._send(encode_frame(load))
            reply = self._receive(_START_TIMEOUT_S)
        except _TimedOut as exc:
            self._kill()
            raise AdapterUnavailable(f"its worker did not start within {_START_TIMEOUT_S:g} s") from exc
        except _Died as exc:
            raise AdapterUnavailable(f"its worker died while building it ({exc.cause}): "
                                     f"{self._stderr_tail()[-400:] or exc.detail}") from exc
        if reply.get("type") == "error":
            self._kill()
            raise AdapterUnavailable(reply.get("message") or "unavailable in its worker")
        if reply.get("type") != "ready":
            self._kill()
            raise AdapterUnavailable(f"its worker answered {reply.get('type')!r} instead of ready")
        self.network = NetworkProtection.from_json(reply.get("network", {}))
        self.version = reply.get("version")
        reported = reply.get("provenance")
        self.provenance = Provenance.from_json(reported) if isinstance(reported, dict) else None
        return info_from_json(reply["info"])

    def _setup_json(self) -> dict[str, Any]:
        """The ``setup`` of the load message (a worker in another language reads its own)."""
        return self.isolation.setup.to_json()

    def _restart(self) -> None:
        self._kill()
        self.restarts += 1
        self._start()

    def _ensure_own_worker(self) -> None:
        """After a fork (``--jobs``) the inherited pipes belong to the parent's worker: this
        process starts its own (at the next call, as after a crash)."""
        if self._owner != os.getpid():
            self._proc = None  # the parent's; never kill or close it from here
            self._owner = os.getpid()

    def _kill(self) -> None:
        proc = self._proc
        self._proc = None
        if proc is None or self._owner != os.getpid():
            return
        if proc.poll() is None:
            proc.kill()
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        proc.wait()

    def close(self) -> None:
        """End the worker (politely: an ``exit`` message, then a kill if it lingers)."""
        proc = self._proc
        if proc is None or self._owner != os.getpid():
            self._proc = None
            return
        try:
            self._send(encode_frame({"type": "exit"}))
            proc.wait(timeout=2)
        except (OSError, _Died, subprocess.TimeoutExpired):
            pass
        self._kill()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown; nothing to report to
            pass

    # -- frames ----------------------------------------------------------------------------

    def _send(self, frame: bytes) -> None:
        if self._proc is None or self._proc.stdin is None:
            raise _Died("exited", "no worker is running")
        try:
            self._proc.stdin.write(frame)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise self._death(f"the worker stopped reading: {exc}") from exc

    def _receive(self, timeout: float) -> dict[str, Any]:
        """The next message, waiting at most ``timeout`` seconds for it."""
        if self._proc is None or self._proc.stdout is None:
            raise _Died("exited", "no worker is running")
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            if len(self._buffer) >= 4:
                try:
                    length = frame_length(self._buffer[:4])
                except ProtocolError as exc:
                    raise self._broken(str(exc)) from exc
                if len(self._buffer) >= 4 + length:
                    payload = self._buffer[4:4 + length]
                    del self._buffer[:4 + length]
                    try:
                        return parse_payload(payload)
                    except ProtocolError as exc:
                        raise self._broken(str(exc)) from exc
            left = deadline - time.monotonic()
            if left <= 0:
                raise _TimedOut()
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise _TimedOut()
            chunk = os.read(fd, _READ_CHUNK)
            if not chunk:
                raise self._death("the worker closed its output")
            self._buffer += chunk

    def _broken(self, detail: str) -> _Died:
        """The worker is alive but said something that is not the protocol: end it."""
        self._kill()
        return _Died("protocol-error", detail)

    def _death(self, detail: str) -> _Died:
        proc = self._proc
        code = None
        if proc is not None:
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
        cause = crash_cause(code, self._stderr_tail(), memory_limited=bool(self.isolation.memory_limit_mb))
        return _Died(cause, detail)

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 4096))
            return self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    # -- calls -----------------------------------------------------------------------------

    def call(self, op: str, *args: Any) -> Outcome:
        return self.call_many([(op, tuple(args), False)])[0][1]

    def encode_many(self, texts: Sequence[str], policy: Policy) -> list[Outcome]:
        """``call("encode", text, policy)`` for each of ``texts``, in order (an every-token
        frame: 4,096 texts), answered by the worker in one outcome: not one JSON call and
        one frame back per text. See :meth:`_bulk` for what happens when one text fails."""
        return self._bulk("encode_many", "encode", texts, policy)

    def token_bytes_many(self, ids: Sequence[int]) -> list[Outcome]:
        """``call("token_bytes", i)`` for each of ``ids``, in order, in one call (the
        every-token phase asks every ID's bytes)."""
        return self._bulk("token_bytes_many", "token_bytes", ids)

    def encode_differing(self, texts: Sequence[str], policy: Policy,
                         expected: Sequence[tuple[int, ...] | None]) -> tuple[int, ...]:
        """The positions of ``texts`` whose ``encode`` is not exactly ``expected`` there,
        compared in the worker (:mod:`harness.worker.differing`): only those positions cross back."""
        texts = list(texts)
        if len(texts) > 1:
            found = differing.valid_positions(self.call("encode_differing", tuple(texts), policy, tuple(expected)),
                                              len(texts))
            if found is not None:
                return found
        # one text, or the call did not answer (a hang, a crash): each text on its own
        answers = [outcome for _, outcome in self.call_many([("encode", (t, policy), False) for t in texts])]
        return differing.positions_differing([a.value if a.is_ok else a for a in answers], expected, tuple)

    def token_bytes_differing(self, ids: Sequence[int], expected: Sequence[bytes]) -> tuple[int, ...]:
        """The positions of ``ids`` whose ``token_bytes`` is not exactly ``expected`` there,
        compared in the worker; the expected bytes cross as one string."""
        ids = list(ids)
        if len(ids) > 1:
            joined, lengths = differing.join_pieces(expected)
            found = differing.valid_positions(self.call("token_bytes_differing", tuple(ids), joined, lengths), len(ids))
            if found is not None:
                return found
        answers = [outcome for _, outcome in self.call_many([("token_bytes", (i,), False) for i in ids])]
        return differing.positions_differing([a.value if a.is_ok else a for a in answers], expected, bytes)

    def api_surfaces(self, texts: Sequence[str]) -> list[Outcome]:
        """``call("api_surface", text)`` for each of ``texts``, in order, walked together in
        the worker (:meth:`harness.calls.InProcess.api_surfaces`: tiktoken's batch paths are
        then asked once for all texts, not once per text with a thread pool each)."""
        return self._bulk("api_surfaces", "api_surface", texts)

    def _bulk(self, op: str, single: str, items: Sequence[Any], *rest: Any) -> list[Outcome]:
        """Operation ``single`` on each item, asked as one call ``op`` (its outcome holds
        every item's value: :func:`harness.outcomes.together`). When that call does not answer
        every item (one raised, timed out, or crashed the worker), each item is asked in a
        call of its own, all in one frame, so each gets its own outcome and its own
        timeout, exactly as without the bulk call; a hang then costs two timeouts."""
        items = list(items)
        if len(items) > 1:
            answer = self.call(op, tuple(items), *rest)
            if answer.is_ok and isinstance(answer.value, tuple) and len(answer.value) == len(items):
                return [checked(single, Outcome.ok(value)) for value in answer.value]
        return [outcome for _, outcome in self.call_many([(single, (item, *rest), False) for item in items])]

    def call_many(self, requests: Iterable[Request]) -> list[tuple[tuple[Any, ...], Outcome]]:
        """Answer every request; returns ((op, *args), outcome) pairs, follow-ups included.

        The answers to the requests come first, in order, then the follow-ups.
        """
        self._ensure_own_worker()
        pending = list(requests)
        answers: list[tuple[tuple[Any, ...], Outcome]] = []
        extras: list[tuple[tuple[Any, ...], Outcome]] = []
        try:
            while pending:
                if self._proc is None:
                    try:
                        self._restart()
                    except AdapterUnavailable as exc:
                        # it built once and cannot now: every call left is that failure
                        gone = Outcome.crashed("exited", f"its worker could not be started again: {exc}")
                        answers += [((op, *args), gone) for op, args, _ in pending]
                        break
                done = self._run_batch(pending, answers, extras)
                pending = pending[done:]
        except BaseException:
            # interrupted (Ctrl-C, SIGTERM) between frames: answers still on their way
            # would be taken for the next call's, so this worker cannot be used again
            self._kill()
            raise
        return answers + extras

    def _run_batch(self, batch: list[Request], answers: list[tuple[tuple[Any, ...], Outcome]],
                   extras: list[tuple[tuple[Any, ...], Outcome]]) -> int:
        """Send ``batch``; returns how many of its calls were settled (all, unless the worker died)."""
        calls = []
        policies: dict[Policy, Any] = {}  # a frame's calls share a few policies: each encoded once

        def encoded(arg: Any) -> Any:
            if type(arg) is not Policy:
                return encode_value(arg)
            if arg not in policies:
                policies[arg] = encode_value(arg)
            return policies[arg]

        for n, (op, args, follow) in enumerate(batch):
            call: dict[str, Any] = {"n": n, "op": op, "args": [encoded(a) for a in args]}
            if follow:
                call["follow"] = True
            calls.append(call)
        timeout = self.isolation.timeout_s
        try:
            self._send(encode_frame({"type": "calls", "calls": calls}))
        except _Died:
            self._restart()
            self._send(encode_frame({"type": "calls", "calls": calls}))
        for n, (op, args, follow) in enumerate(batch):
            key = (op, *args)
            try:
                message = self._expect(n, "outcome", timeout)
            except _TimedOut:
                self._kill()
                answers.append((key, Outcome.timeout(timeout)))
                return n + 1
            except _Died as exc:
                self._kill()
                answers.append((key, Outcome.crashed(exc.cause, f"the worker died ({exc.cause}) during {op}")))
                return n + 1
            outcome = checked(op, decode_outcome(message["outcome"]))
            answers.append((key, outcome))
            if outcome.kind == "crashed":
                # the worker said it is ending (out of memory): the rest go to a new one
                self._kill()
                return n + 1
            if follow:
                try:
                    message = self._expect(n, "follow", timeout)
                except (_TimedOut, _Died):
                    # a follow-up hung or crashed: those calls are asked again one by one
                    # when a check needs them, and get their own outcome then
                    self._kill()
                    return n + 1
                for follow_op, follow_args, outcome in message["calls"]:
                    extras.append(((follow_op, *(decode_value(a) for a in follow_args)),
                                   checked(follow_op, decode_outcome(outcome))))
        return len(batch)

    def _expect(self, n: int, kind: str, timeout: float) -> dict[str, Any]:
        message = self._receive(timeout)
        if message.get("type") != kind or message.get("n") != n:
            raise self._broken(f"expected {kind} {n}, got {message.get('type')} {message.get('n')}")
        return message
