"""Adapter calls as pure data: an operation name and arguments in, an Outcome out.

Checks never touch an :class:`~harness.interface.Adapter` directly. They ask a
:class:`Calls` object, which runs every call through :func:`harness.outcomes.capture`
with the adapter's own ``classify_error`` and remembers the answer for the current
input, so the several checks that need ``encode(text)`` pay for it once.

Everything that crosses this boundary is plain data (``str``, ``int``, tuples,
:class:`~harness.cases.model.Policy`, :class:`~harness.outcomes.Outcome`), so the
:class:`Executor` that performs a call could live in a worker process later (for
isolation and timeouts) without a check noticing: only :class:`InProcess` would be
replaced. :class:`harness.worker.client.WorkerExecutor` is that replacement; it also
answers many calls per round trip (``call_many``), which :meth:`Calls.prefetch` uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Iterable, Protocol, Sequence

from harness.cases.model import Policy
from harness.interface import Adapter, Capabilities
from harness.outcomes import (Outcome, capture, checked, surface_from_data, surface_outcome, surface_to_data,
                              together, values_each)

__all__ = ["AdapterInfo", "Calls", "Executor", "InProcess", "policy_kwargs", "surface_from_data", "surface_to_data"]


def policy_kwargs(policy: Policy) -> dict[str, Any]:
    """tiktoken's keyword arguments for a policy.

    >>> policy_kwargs(Policy())
    {'allowed_special': frozenset(), 'disallowed_special': 'all'}
    """
    return {"allowed_special": policy.allowed_special, "disallowed_special": policy.disallowed_special}


@dataclass(frozen=True)
class AdapterInfo:
    """What is known about an adapter without calling it again: pure data."""

    name: str
    encoding: str
    library: str
    capabilities: Capabilities
    special_tokens: tuple[tuple[str, int], ...]
    provider: str = ""
    #: the adapter defines its own ``in_domain`` (a word-level closed vocabulary)
    custom_domain: bool = False
    #: flags besides --impl/--plugin that select it again (``Adapter.reproduce_flags``)
    reproduce_flags: tuple[str, ...] = ()
    #: the language its users call it from: "Python", or "JavaScript" for an adapter in a
    #: Node worker (:mod:`harness.worker.node`), "JavaScript (WASM)" for a WASM build there
    language: str = "Python"
    #: (pinned vocabulary file name, SHA-256 of the rank table the library bundles, in that
    #: file's format): for libraries that ship their own ranks instead of reading the pinned
    #: files (the JavaScript packages); checked by vocab-consistency (kind ``rank-table``)
    vocabulary: tuple[tuple[str, str], ...] = ()
    #: ``Adapter.declares_like``: cases about these adapters' native behaviour apply too
    declares_like: tuple[str, ...] = ()
    #: the pre-tokenizer's split regex, when the adapter declares it (``Adapter.split_pattern``)
    split_pattern: str | None = None
    #: ``special_tokens`` failed (the outcome, described): the adapter's finding, never
    #: silently "no specials" (vocab-consistency reports it)
    special_tokens_error: str | None = None

    @property
    def specials(self) -> dict[str, int]:
        return dict(self.special_tokens)

    @cached_property
    def special_ids(self) -> frozenset[int]:
        # asked for on every check of every input; o200k_harmony has 1,000+ specials
        return frozenset(i for _, i in self.special_tokens)


class Executor(Protocol):
    """Performs one call: :class:`InProcess`, or a worker process
    (:class:`harness.worker.client.WorkerExecutor`, which also has ``call_many`` and
    ``close``)."""

    info: AdapterInfo

    def call(self, op: str, *args: Any) -> Outcome: ...


class InProcess:
    """Calls the adapter in this process."""

    def __init__(self, adapter: Adapter, *, provider: str = "") -> None:
        self._adapter = adapter
        specials = capture("other", lambda: dict(adapter.special_tokens), classify=adapter.classify_error)
        items = tuple(sorted(specials.value.items(), key=lambda kv: (kv[1], kv[0]))) if specials.is_ok else ()
        self.info = AdapterInfo(
            name=adapter.name,
            encoding=adapter.encoding,
            library=adapter.library,
            capabilities=adapter.capabilities,
            special_tokens=items,
            provider=provider,
            custom_domain=type(adapter).in_domain is not Adapter.in_domain,
            reproduce_flags=_reproduce_flags(adapter),
            language=adapter.language,
            vocabulary=tuple(adapter.vocabulary),
            declares_like=tuple(str(n) for n in getattr(adapter, "declares_like", ()) or ()),
            split_pattern=_split_pattern(adapter),
            special_tokens_error=None if specials.is_ok else specials.describe(),
        )

    def call(self, op: str, *args: Any) -> Outcome:
        return checked(op, self._call(op, *args))

    def encode_many(self, texts: Sequence[str], policy: Policy) -> list[Outcome]:
        """``call("encode", text, policy)`` for each of ``texts``, in order (a worker's answer)."""
        return [Outcome.ok(got) if type(got) is tuple else got for got in self.encode_ids_many(texts, policy)]

    def encode_ids_many(self, texts: Sequence[str], policy: Policy) -> list[tuple[int, ...] | Outcome]:
        """:meth:`encode_many` with a success as its IDs alone (:func:`~harness.outcomes.values_each`)."""
        a = self._adapter
        return values_each(a.encode, texts, classify=a.classify_error, **policy_kwargs(policy))

    def token_bytes_many(self, ids: Sequence[int]) -> list[Outcome]:
        """``call("token_bytes", i)`` for each of ``ids``, in order, without the dispatch per
        call: the every-token phase asks each adapter the bytes of every ID it has."""
        return [Outcome.ok(p) if type(p) is bytes else p for p in self.pieces_each(ids)]

    def pieces_each(self, ids: Sequence[int]) -> list[bytes | Outcome]:
        """:meth:`token_bytes_many` with a success as its bytes alone (:func:`~harness.outcomes.values_each`)."""
        a = self._adapter
        return values_each(a.token_bytes, ids, op="token_bytes", classify=a.classify_error)

    def api_surfaces(self, texts: Sequence[str]) -> list[Outcome]:
        """``call("api_surface", text)`` for each of ``texts``, in order, the adapter asked
        once for all of them (:meth:`Adapter.api_surfaces`) where it shares work across
        texts; if that call raises or does not answer one walk per text, each text is
        walked alone, so every outcome is its own text's."""
        a = self._adapter
        if _shares_walks(type(a)):
            together = capture("other", a.api_surfaces, list(texts), classify=a.classify_error)
            if together.is_ok and isinstance(together.value, tuple) and len(together.value) == len(texts):
                return [surface_outcome(Outcome.ok(walk)) for walk in together.value]
        return [self.call("api_surface", text) for text in texts]

    def _call(self, op: str, *args: Any) -> Outcome:
        a = self._adapter
        classify = a.classify_error
        if op == "encode":
            text, policy = args
            return capture("encode", a.encode, text, classify=classify, **policy_kwargs(policy))
        if op == "encode_ordinary":
            return capture("encode", a.encode_ordinary, args[0], classify=classify)
        if op == "encode_batch":
            texts, policy = args
            outcome = capture("encode", a.encode_batch, list(texts), classify=classify, **policy_kwargs(policy))
            if outcome.is_ok and isinstance(outcome.value, tuple) and all(isinstance(x, (list, tuple)) for x in outcome.value):
                return Outcome.ok(tuple(tuple(ids) for ids in outcome.value))
            return outcome
        if op == "decode_bytes":
            return capture("decode", a.decode_bytes, list(args[0]), classify=classify)
        if op == "decode":
            ids, errors = args
            return capture("decode", a.decode, list(ids), errors=errors, classify=classify)
        if op == "token_bytes":
            return capture("decode", a.token_bytes, args[0], classify=classify)
        if op == "decode_stream":
            return capture("decode", a.decode_stream, list(args[0]), classify=classify)
        if op == "pretokenize":
            return capture("other", a.pretokenize, args[0], classify=classify)
        if op == "trace":
            return capture("other", a.trace, args[0], classify=classify)
        if op == "in_domain":
            return capture("other", a.in_domain, args[0], classify=classify)
        if op == "api_surface":
            return surface_outcome(capture("other", a.api_surface, args[0], classify=classify))
        if op == "api_attributes":
            return surface_outcome(capture("other", a.api_attributes, classify=classify))
        # the bulk operations a worker answers in one outcome (harness.worker.client)
        if op == "encode_many":
            return together(self.encode_many(args[0], args[1]))
        if op == "token_bytes_many":
            return together(self.token_bytes_many(args[0]))
        if op == "api_surfaces":
            return together(self.api_surfaces(args[0]))
        raise ValueError(f"unknown adapter operation {op!r}")


def _shares_walks(cls: type) -> bool:
    """Whether ``cls``'s :meth:`~Adapter.api_surfaces` is its own walk's: defined by the class
    that defines its ``api_surface`` (a subclass that replaces ``api_surface`` alone, such as
    a planted fault, inherits a batch walk that would bypass it; tests/test_api_surface_many.py)."""
    owner = next((k for k in cls.__mro__ if "api_surface" in vars(k)), None)
    return owner is not None and owner is not Adapter and "api_surfaces" in vars(owner)


def _split_pattern(adapter: Adapter) -> str | None:
    """``adapter.split_pattern`` if it is a string; a property that raises declares nothing."""
    outcome = capture("other", lambda: adapter.split_pattern, classify=adapter.classify_error)
    return outcome.value if outcome.is_ok and isinstance(outcome.value, str) and outcome.value else None


#: texts up to this many characters keep their API-surface walk across ``Calls.reset``
#: (64 covered 785 of the 790 repeated walks measured while shrinking)
LASTING_TEXT_LIMIT = 64


#: IDs per round trip of ``Calls.prefetch_pieces`` to a worker (an every-token plan asks
#: 200,000: one frame of them all would be held whole on both sides)
_PIECES_PER_FRAME = 8192
#: texts up to this many characters are walked together by ``Calls.prefetch_surfaces``
PREFETCH_SURFACE_LIMIT = 10_000


def _short(args: tuple[Any, ...]) -> bool:
    """Whether no text or ID list among a call's arguments is over
    :data:`PREFETCH_SURFACE_LIMIT` long.

    >>> _short(("abc", Policy())), _short(((1,) * 20_000,))
    (True, False)
    """
    return all(len(a) <= PREFETCH_SURFACE_LIMIT for a in args if isinstance(a, (str, tuple)))


class Calls:
    """Memoised calls to one adapter. ``reset()`` between inputs keeps memory bounded.

    Token pieces (``token_bytes``) are kept across inputs: IDs recur. So are API-surface
    walks of short texts (:data:`LASTING_TEXT_LIMIT`): a walk is some thirty library calls,
    and shrinking converges on the same short texts again and again (the user path's
    first run walked 1,265 times while shrinking tiktoken's documented findings, 475
    distinct texts).
    """

    _PIECE_CACHE_LIMIT = 200_000
    #: walks kept across ``reset`` before the memo starts over: ~6.7 KB a walk, so at most
    #: ~3.4 MB per adapter (a default run has some twenty adapters with a surface); on the
    #: user path's shrinks 512 saved as many walks as 4,096, 256 did not
    _LASTING_LIMIT = 512

    def __init__(self, executor: Executor) -> None:
        self._executor = executor
        self.info = executor.info
        self._memo: dict[tuple[Any, ...], Outcome] = {}
        self._pieces: dict[int, Outcome] = {}
        self._lasting: dict[str, Outcome] = {}
        #: answers fetched ahead (several inputs at once); survive ``reset`` until used
        self._ahead: dict[tuple[Any, ...], Outcome] = {}
        #: API-surface walks made ahead (:meth:`prefetch_surfaces`), text -> outcome
        self._walked: dict[str, Outcome] = {}
        literals = sorted((s for s, _ in self.info.special_tokens), key=len, reverse=True)
        self._literal_re = re.compile("|".join(re.escape(s) for s in literals)) if literals else None

    @property
    def name(self) -> str:
        return self.info.name

    def reset(self) -> None:
        self._memo.clear()

    def wrap_executor(self, wrap: Callable[[Executor], Executor]) -> None:
        """Put a wrapper (a stopwatch, a tracer) around the executor; memos are kept."""
        self._executor = wrap(self._executor)
    @property
    def executor(self) -> Executor:
        return self._executor

    @property
    def batches(self) -> bool:
        """Whether the executor answers many calls per round trip (a worker does)."""
        return hasattr(self._executor, "call_many")

    def prefetch(self, requests: list[tuple[str, tuple[Any, ...], bool]], *, keep: bool = False) -> None:
        """Ask for these calls (op, args, follow) now, in one round trip, for later use.

        Only for executors with ``call_many``; in process there is nothing to save.
        Answers are kept until the next ``prefetch`` (``keep``: until the one after it),
        which drops them, in process too (:meth:`ahead`).
        """
        if not keep:
            self._ahead.clear()
        if not self.batches:
            return
        known = self._memo.keys() | self._ahead.keys()
        wanted = [r for r in dict.fromkeys(requests) if (r[0], *r[1]) not in known]
        if not wanted:
            return
        for key, outcome in self._executor.call_many(wanted):  # type: ignore[attr-defined]
            if key[0] == "token_bytes":
                self._pieces.setdefault(key[1], outcome)
            else:
                self._ahead.setdefault(key, outcome)

    def found_ahead(self, key: tuple[Any, ...]) -> Outcome | None:
        """What :meth:`keep_ahead` kept, or a prefetch fetched, under ``key``; never asks."""
        return self._ahead.get(key)

    def keep_ahead(self, key: tuple[Any, ...], outcome: Outcome) -> None:
        """Keep ``outcome`` under ``key`` until the next :meth:`prefetch` drops it."""
        self._ahead[key] = outcome

    def ahead(self, op: str, *args: Any) -> Outcome:
        """The answer to this call, asked now if nobody has yet, and kept with the answers
        fetched ahead (until the next :meth:`prefetch`), so the check that asks it next
        finds it: what is asked ahead of one adapter may depend on another's answer (the
        stream check decodes the reference's IDs, :mod:`harness.run.prefetch`)."""
        key = (op, *args)
        if key in self._memo:
            return self._memo[key]
        if key not in self._ahead:
            self._ahead[key] = self._executor.call(op, *args)
        return self._ahead[key]

    def close(self) -> None:
        """End the executor's worker, if it has one."""
        close = getattr(self._executor, "close", None)
        if close is not None:
            close()

    def _call(self, op: str, *args: Any) -> Outcome:
        key = (op, *args)
        if key not in self._memo:
            # kept until the next prefetch, not popped: a case met by two references asks
            # the adapter the same calls again after a reset (2,096 round trips of the
            # README's drop-in path); but not a long input's, which would hold a task's
            # million-ID answers at once
            ahead = self._ahead.get(key) if _short(args) else self._ahead.pop(key, None)
            self._memo[key] = ahead if ahead is not None else self._executor.call(op, *args)
        return self._memo[key]

    def encode(self, text: str, policy: Policy) -> Outcome:
        return self._call("encode", text, policy)

    def encode_ordinary(self, text: str) -> Outcome:
        return self._call("encode_ordinary", text)

    def encode_many(self, texts: Sequence[str], policy: Policy) -> list[tuple[int, ...] | Outcome]:
        """Each text's :meth:`encode` answer, in order: its IDs, or the outcome of a failure
        (:data:`harness.generate.every_token.EncodeMany`); in one loop in process, in one call
        to a worker, else one call each. Not memoised: for lists of distinct texts."""
        ids_many = getattr(self._executor, "encode_ids_many", None)
        if ids_many is not None:
            return ids_many(texts, policy)
        many = getattr(self._executor, "encode_many", None)
        if many is not None:
            outcomes = many(texts, policy)
        else:
            outcomes = [self.encode(t, policy) for t in texts]
            self.reset()
        return [o.value if o.is_ok else o for o in outcomes]

    def encode_batch(self, texts: tuple[str, ...], policy: Policy) -> Outcome:
        return self._call("encode_batch", texts, policy)

    def decode_bytes(self, ids: tuple[int, ...]) -> Outcome:
        return self._call("decode_bytes", tuple(ids))

    def decode(self, ids: tuple[int, ...], errors: str = "replace") -> Outcome:
        return self._call("decode", tuple(ids), errors)

    def pretokenize(self, text: str) -> Outcome:
        return self._call("pretokenize", text)

    def decode_stream(self, ids: tuple[int, ...]) -> Outcome:
        return self._call("decode_stream", tuple(ids))

    def trace(self, text: str) -> Outcome:
        return self._call("trace", text)

    def api_surface(self, text: str) -> Outcome:
        """Every public path of the adapter's library on ``text``: an outcome whose value
        :func:`surface_from_data` reads (``unsupported`` for adapters without one)."""
        walked = self._walked.pop(text, None)
        if len(text) > LASTING_TEXT_LIMIT:
            if walked is None:
                return self._call("api_surface", text)
            self._memo[("api_surface", text)] = walked
            return walked
        if text not in self._lasting:
            if len(self._lasting) >= self._LASTING_LIMIT:
                self._lasting.clear()
            self._lasting[text] = walked if walked is not None else self._call("api_surface", text)
        return self._lasting[text]

    def prefetch_surfaces(self, texts: Iterable[str]) -> None:
        """Walk the API surface of each of ``texts`` now, all in one call
        (:meth:`InProcess.api_surfaces`, or a worker's
        :meth:`~harness.worker.client.WorkerExecutor.api_surfaces`), for :meth:`api_surface`
        to find. For an adapter that walks a surface; texts over
        :data:`PREFETCH_SURFACE_LIMIT` characters are walked when asked (per call overhead
        is nothing beside their encodes). Walks made ahead and not asked for are dropped at
        the next call."""
        many = getattr(self._executor, "api_surfaces", None)
        self._walked = {}
        if many is None or not self.info.capabilities.api_surface:
            return
        wanted = [t for t in dict.fromkeys(texts) if len(t) <= PREFETCH_SURFACE_LIMIT
                  and t not in self._lasting and ("api_surface", t) not in self._memo]
        if len(wanted) > 1:
            self._walked = dict(zip(wanted, many(wanted)))

    def api_attributes(self) -> Outcome:
        return self._call("api_attributes")

    def token_bytes(self, token_id: int) -> Outcome:
        if token_id not in self._pieces:
            if len(self._pieces) >= self._PIECE_CACHE_LIMIT:
                self._pieces.clear()
            self._pieces[token_id] = self._executor.call("token_bytes", token_id)
        return self._pieces[token_id]

    def prefetch_pieces(self, ids: Sequence[int]) -> None:
        """Ask for the bytes of these IDs now, for :meth:`token_bytes` to find: in process in
        one loop (:meth:`InProcess.token_bytes_many`), from a worker one call per
        :data:`_PIECES_PER_FRAME` IDs (:meth:`~harness.worker.client.WorkerExecutor.token_bytes_many`)."""
        many = getattr(self._executor, "token_bytes_many", None)
        wanted = [i for i in ids if i not in self._pieces]
        if many is None or not wanted:
            return
        if len(self._pieces) + len(wanted) > self._PIECE_CACHE_LIMIT:
            self._pieces.clear()
        for start in range(0, len(wanted), _PIECES_PER_FRAME):
            part = wanted[start:start + _PIECES_PER_FRAME]
            self._pieces.update(zip(part, many(part)))

    def forget_pieces(self, ids: Any) -> None:
        """Drop these IDs' cached pieces: the every-token phase reads every ID once, and
        keeping 200,000 pieces per adapter cost ~40 MB each."""
        for token_id in ids:
            self._pieces.pop(token_id, None)

    def in_domain(self, text: str) -> bool:
        if self.info.capabilities.alphabet is None and not self.info.custom_domain:
            return True
        outcome = self._call("in_domain", text)
        # an in_domain that raises claims nothing: the input counts against the adapter
        return bool(outcome.value) if outcome.is_ok else True

    def literals_in(self, text: str) -> list[str]:
        """This adapter's special literals found in ``text``, left to right, longest first."""
        if self._literal_re is None:
            return []
        return self._literal_re.findall(text)


def _reproduce_flags(adapter: Adapter) -> tuple[str, ...]:
    flags = capture("other", adapter.reproduce_flags, classify=adapter.classify_error)
    if flags.is_ok and isinstance(flags.value, (list, tuple)) and all(isinstance(f, str) for f in flags.value):
        return tuple(flags.value)
    return ()
