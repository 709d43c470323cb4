"""What a task asks its adapters ahead, so an adapter in a worker answers in round trips
per task, not per call.

An adapter in a worker (:class:`harness.worker.client.WorkerExecutor`) pays a round trip
for each call a check makes; the checks of one input make some thirty. A task of the run
(a few dozen cases or generated texts) therefore asks ahead, per adapter:

1. everything the checks ask of the input itself (:func:`prefetch_requests`): its encode
   under the input's policy with the follow-ups the worker computes from the IDs (the
   decodes and each ID's bytes), ``encode_ordinary`` and encode under the ordinary
   policy, the pre-tokenization, the batch and its texts one by one;
2. the API-surface walks, all texts together (also in process: tiktoken opens a thread
   pool per batch call, so a short text's walk is 3.2 ms alone and a fraction of that
   with the others');
3. the batch check's batches, all of a task's in one ``encode_batch`` per policy
   (:func:`prefetch_batches`): tiktoken starts a thread pool per batch call, whatever its
   size;
4. the stream-decode check's decodes of cut sequences of the *reference's* IDs
   (:func:`harness.checks.stream.stream_calls`), which only the reference's answer of
   step 1 makes known: on the README's drop-in path these were 12,000 of its 17,000 single
   round trips.

What is asked ahead is kept until the task's next prefetch (``Calls.prefetch``); a call
the checks then make that was not foreseen is asked on its own, as before, so asking
ahead never changes an answer, only when it is asked.

A corpus document the screen checks alone (:mod:`harness.run.screen`) is asked only its
encode and the follow-ups: the screen's checks ask nothing else unless they find
something, and then what the full checks ask is asked when asked. Walking its API
surface ahead cost a ``--corpus`` run with tiktoken 80 % of its time (53.5 of 66.8 s for
10^5 short documents, ``--profile-harness``) for a check that never ran.
"""

from __future__ import annotations

from typing import Any, Collection, Iterable, Sequence

from harness.calls import PREFETCH_SURFACE_LIMIT, Calls
from harness.cases.model import Policy
from harness.checks.base import ORDINARY
from harness.checks.stream import stream_calls
from harness.checks.structure import batch_texts
from harness.outcomes import Outcome

__all__ = ["prefetch", "prefetch_batches", "prefetch_requests"]

Request = tuple[str, tuple[Any, ...], bool]


def prefetch_requests(calls: Calls, text: str, policy: Policy, *, screened: bool = False) -> list[Request]:
    """The calls the checks make about ``text`` on ``calls`` in the usual case;
    ``screened``: the screen's checks alone make them (:data:`~harness.run.screen.SCREEN_CHECKS`)."""
    caps = calls.info.capabilities
    requests: list[Request] = [("encode", (text, policy), True)]
    if caps.alphabet is not None or calls.info.custom_domain:
        requests.insert(0, ("in_domain", (text,), False))
    if screened:
        return requests
    if caps.encode_ordinary:
        # and encode under the ordinary policy, which check_encode_ordinary compares it with
        requests += [("encode_ordinary", (text,), False), ("encode", (text, ORDINARY), False)]
    if caps.pretokenize:
        requests.append(("pretokenize", (text,), False))
    if caps.batch:  # the batch itself is asked with the task's others (prefetch_batches)
        requests += [("encode", (t, policy), False) for t in batch_texts(text)[1:]]
    return requests


def prefetch(items: Iterable[tuple[Calls, Calls, str, Policy]], *, screened: Collection[str] = frozenset()) -> None:
    """Ask ahead, per adapter, what the checks of a task's inputs will ask (steps 1-4 of
    the module's text); ``items``: (adapter, its reference, text, policy); ``screened``:
    the texts only the corpus screen checks (:func:`harness.run.screen.screened_only`).
    What the last task asked ahead is dropped first, of every adapter and reference here."""
    work = list(items)
    inputs: dict[int, tuple[Calls, list[tuple[str, Policy]]]] = {}
    for calls, reference, text, policy in work:
        for one in (reference, calls):  # the reference's checks ask it the same as an adapter's
            inputs.setdefault(id(one), (one, []))[1].append((text, policy))
    for calls, asked in inputs.values():
        asked = list(dict.fromkeys(asked))
        # in process nothing is asked ahead; what the last task kept is dropped all the same
        calls.prefetch([r for text, policy in asked
                        for r in prefetch_requests(calls, text, policy, screened=text in screened)]
                       if calls.batches else [])
        calls.prefetch_surfaces(text for text, _ in asked if text not in screened)
        if calls.info.capabilities.batch:
            prefetch_batches(calls, [(batch_texts(text), policy) for text, policy in asked
                                     if text not in screened and len(text) <= PREFETCH_SURFACE_LIMIT])
    streams: dict[int, tuple[Calls, list[Request]]] = {}
    for calls, reference, text, policy in work:
        # a long text's few calls cost nothing beside its encodes, and its IDs are many
        if calls.batches and len(text) <= PREFETCH_SURFACE_LIMIT and text not in screened:
            streams.setdefault(id(calls), (calls, []))[1].extend(_stream_requests(reference, text, policy))
    for calls, requests in streams.values():
        calls.prefetch(requests, keep=True)


#: characters per ``encode_batch`` of :func:`prefetch_batches`: a slow adapter's call stays
#: well inside the per-call time limit of an isolated run
MERGED_BATCH_CHARS = 16_384


def prefetch_batches(calls: Calls, batches: Sequence[tuple[tuple[str, ...], Policy]]) -> None:
    """Ask ``calls`` the batch check's ``batches`` together: one ``encode_batch`` per policy
    and up to :data:`MERGED_BATCH_CHARS` characters, each batch's share kept under
    ``("batched", texts, policy)`` (:meth:`Calls.keep_ahead`).

    It is a screen, not the check's answer: a batch whose share equals its texts encoded
    one by one agrees; any other asks its own batch again, and the check judges that one,
    so a finding's batch is the one its reproduction sends. A merged call that fails (a
    text the adapter refuses, a timeout) keeps nothing: each batch is asked on its own,
    from a worker in one round trip."""
    by_policy: dict[Policy, list[tuple[str, ...]]] = {}
    for texts, policy in dict.fromkeys(batches):
        by_policy.setdefault(policy, []).append(texts)
    alone: list[Request] = []
    for policy, groups in by_policy.items():
        for part in _chunks(groups):
            flat = tuple(t for texts in part for t in texts)
            merged = calls.executor.call("encode_batch", flat, policy) if len(part) > 1 else None
            if merged is None or not merged.is_ok or len(merged.value) != len(flat):
                alone += [("encode_batch", (texts, policy), False) for texts in part]
                continue
            shares = iter(merged.value)
            for texts in part:
                calls.keep_ahead(("batched", texts, policy), Outcome.ok(tuple(next(shares) for _ in texts)))
    if alone and calls.batches:
        calls.prefetch(alone, keep=True)


def _chunks(groups: list[tuple[str, ...]]) -> Iterable[list[tuple[str, ...]]]:
    """``groups`` in runs of at most :data:`MERGED_BATCH_CHARS` characters (a longer group alone).

    >>> [len(part) for part in _chunks([("a" * 9000,), ("b" * 9000,), ("c",)])]
    [1, 2]
    """
    part: list[tuple[str, ...]] = []
    size = 0
    for texts in groups:
        length = sum(len(t) for t in texts)
        if part and size + length > MERGED_BATCH_CHARS:
            yield part
            part, size = [], 0
        part.append(texts)
        size += length
    if part:
        yield part


def _stream_requests(source: Calls, text: str, policy: Policy) -> list[Request]:
    """The stream check's decodes for ``text``: of ``source``'s IDs (the reference's) and
    their pieces. Its encode is the one its checks ask next (:meth:`Calls.ahead`: fetched
    ahead already when it is in a worker, else asked now and kept for them)."""
    encoded = source.ahead("encode", text, policy)
    if not encoded.is_ok or not encoded.value:
        return []
    pieces = [source.token_bytes(i) for i in encoded.value]
    if not all(p.is_ok for p in pieces):
        return []
    return [(op, args, False) for op, args in stream_calls(encoded.value, [p.value for p in pieces])]
