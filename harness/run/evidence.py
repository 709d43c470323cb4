"""Evidence for one divergence: what a person needs to see it and to reproduce it.

Given a (shrunk) :class:`~harness.checks.base.Finding`, :func:`gather` collects

- the index of the first differing ID, when two ID lists are compared;
- the first differing pre-token chunk: the reference's ``pretokenize`` splits the input,
  and the first chunk both adapters encode differently on its own is where they part;
- the token pieces of each ID list (``visible_bytes`` of ``token_bytes``) and their hex, the
  first :data:`_MAX_PIECES` (what the report keeps, and one more);
- the first merge rounds of the adapters that can trace;
- the command that reproduces it: ``tokconf encode --escapes --impl A --impl B -- '...'``
  (``tokconf decode`` for divergences about given IDs; ``tokconf call --check CHECK --kind
  KIND`` for the checks whose difference ``encode`` does not show: the API surface, error
  types, policies, batches, streams, pre-tokenization), with the ``--plugin`` flags an
  adapter from a plugin needs and the flags of the policy it was seen under;
- for an adapter in another language, its own short program that shows the divergence
  without tokconf (:func:`foreign_snippet`: two lines of Node for a JavaScript adapter).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable

from harness.calls import Calls
from harness.cases.model import LONG_TEXT_CHARS, Policy
from harness.checks.base import Finding, declared_policy, first_difference, policy_flags
from harness.escapes import escape_text, visible_bytes
from harness.outcomes import Outcome
from harness.vocab import vocab_dir_flag

__all__ = ["Evidence", "gather", "plugin_target", "reproduce_command", "special_segments", "trace_segments"]

#: Checks whose divergences are about how text became IDs: a differing chunk means something.
_CHUNK_CHECKS = frozenset({"id-parity", "vocab-consistency", "expected", "error-category"})
_MAX_TRACE_ROUNDS = 300
#: pieces gathered per ID list: the report's ``harness.report.bounds.MAX_ITEMS`` and one
#: more, which says the list was longer (named here: the run does not import the report)
_MAX_PIECES = 1_001
#: checks whose reproduce command is ``tokconf call`` (the operation it shows), because the
#: difference is not in ``encode``'s IDs and error categories
_CALL_OPERATION = {"api-surface": "api_surface", "error-category": "encode", "special-policy": "encode",
                   "encode-ordinary": "encode_ordinary", "batch": "encode_batch", "stream-decode": "encode",
                   "pretokenize-coverage": "pretokenize", "per-token-decode": "encode", "round-trip": "encode",
                   "vocab-consistency": "encode"}


@dataclass(frozen=True)
class Evidence:
    first_difference: int | None
    first_differing_chunk: str | None
    outcomes: dict[str, Outcome]
    pieces: dict[str, list[str | None]]
    piece_bytes: dict[str, list[str | None]]
    traces: dict[str, list[dict[str, Any]]]
    reproduce: str
    #: for an adapter in another language: a short program showing it without tokconf
    snippet: str | None = None


def plugin_target(calls: Calls) -> str | None:
    """``module:attr`` when the adapter came from ``--plugin``, else ``None``.

    >>> from harness.calls import AdapterInfo
    >>> from harness.interface import Capabilities
    >>> class Fake: info = AdapterInfo("x:y", "e", "", Capabilities(), (), "plugin tests.wrong_adapters:crlf")
    >>> plugin_target(Fake())
    'tests.wrong_adapters:crlf'
    """
    provider = calls.info.provider
    return provider[len("plugin "):] if provider.startswith("plugin ") else None


def reproduce_command(finding: Finding, adapter: Calls, reference: Calls) -> str:
    """The shell command that shows this divergence again."""
    names = [adapter.name] if adapter is reference else [adapter.name, reference.name]
    plugins = sorted({t for t in (plugin_target(adapter), plugin_target(reference)) if t})
    selecting: list[str] = []
    for calls in dict.fromkeys([adapter, reference]):
        selecting += calls.info.reproduce_flags
        if calls.info.provider == "--encoding":  # a tokenizer.json whose ID space the run claimed
            selecting += ["--encoding", calls.info.encoding]
    if vocab_dir_flag() is not None:
        selecting += ["--vocab-dir", vocab_dir_flag()]
    parts: list[str] = ["tokconf"]
    # a case's expected error type (AssertionError where ValueError is expected): only the
    # native types differ, which `tokconf call` compares and `encode` does not
    expected_error = finding.check == "expected" and finding.kind.startswith("error:") and adapter is not reference
    # the check re-derives any IDs from the text, so a decode finding with a text is judged too
    if (finding.check in _CALL_OPERATION or expected_error) and len(finding.text) < LONG_TEXT_CHARS and (
            finding.text or finding.decode_ids is None or finding.check == "vocab-consistency"):
        # `encode` compares IDs and error categories only: these differences need the
        # same path, judged by the same check (harness.cli.call_cmd)
        operation = _CALL_OPERATION.get(finding.check, "encode")
        if finding.check == "vocab-consistency" and finding.decode_ids is not None:
            operation = "decode_bytes"
        parts += ["call", "--escapes", *selecting]
        for target in plugins:
            parts += ["--plugin", target]
        for name in names:
            parts += ["--impl", name]
        if not expected_error:  # the expected check needs its case: the outcomes are compared
            parts += ["--check", finding.check, "--kind", finding.kind]
        parts += policy_flags(finding.policy)
        if operation == "api_surface":
            for path in _surface_paths(finding.kind):
                parts += ["--path", path]
        arguments = [str(i) for i in finding.decode_ids or ()] if operation == "decode_bytes" else [
            escape_text(finding.text, runs=True)]
        parts += [operation, "--", *arguments]
        return " ".join(shlex.quote(p) for p in parts)
    decode_ids = finding.decode_ids
    if decode_ids is None and _about_decoding(finding) and adapter is not reference \
            and adapter.info.encoding == reference.info.encoding:
        decode_ids = tuple(finding.ids[0][1])  # its own IDs: both decode them, differently
    if decode_ids is not None:
        parts.append("decode")
        parts += selecting
        for target in plugins:
            parts += ["--plugin", target]
        for name in names:
            parts += ["--impl", name]
        if finding.kind == "strict":
            parts += ["--errors", "strict"]
        parts += ["--", *(str(i) for i in decode_ids)]
    else:
        parts += ["encode", "--escapes", *selecting]
        for target in plugins:
            parts += ["--plugin", target]
        for name in names:
            parts += ["--impl", name]
        parts += policy_flags(finding.policy)
        if len(finding.text) >= LONG_TEXT_CHARS:
            # a million characters do not fit a command line: a program writes them, or
            # (not one repeated run) the report holds them
            writer = _writer(finding.text)
            if writer is None:
                parts += ["--file", "INPUT.txt"]
                return (" ".join(shlex.quote(p) for p in parts)
                        + "  # INPUT.txt: this divergence's input.text from parity.json, as UTF-8")
            parts += ["--file", "-"]
            return f"{writer} | " + " ".join(shlex.quote(p) for p in parts)
        parts += ["--", escape_text(finding.text, runs=True)]
    return " ".join(shlex.quote(p) for p in parts)


def _surface_paths(kind: str) -> list[str]:
    """The API paths an api-surface kind names (``inconsistent:a~b:...``, ``changed:a:...``).

    >>> _surface_paths("inconsistent:encode_batch~encode:ok|raised"), _surface_paths("changed:_encode_bytes:a|b")
    (['encode_batch', 'encode'], ['_encode_bytes'])
    """
    parts = kind.split(":")
    return [p for p in parts[1].split("~") if p] if len(parts) >= 3 else []


def _writer(text: str) -> str | None:
    """A shell command that writes ``text`` exactly (UTF-8, surrogates passed) to stdout,
    if it is one repeated run between short ends (else None).

    >>> print(_writer("x" + " " * 20000))
    python3 -c 'import sys; sys.stdout.buffer.write(("x" + " " * 20000).encode("utf-8", "surrogatepass"))'
    """
    from harness.generate.shrink import as_generated

    generated = as_generated(text)
    if generated is None:
        return None
    pieces = [_literal(generated.before)] if generated.before else []
    pieces.append(f"{_literal(generated.repeat)} * {generated.times}")
    pieces += [_literal(generated.then)] if generated.then else []
    expression = " + ".join(pieces)
    program = f'import sys; sys.stdout.buffer.write(({expression}).encode("utf-8", "surrogatepass"))'
    return "python3 -c " + shlex.quote(program)


def _literal(text: str) -> str:
    """A double-quoted Python literal with every non-ASCII or control code point escaped."""
    body = text.encode("unicode_escape").decode("ascii").replace('"', '\\"')
    return '"' + body + '"'


def _about_decoding(finding: Finding) -> bool:
    """A difference in how IDs become text, not in how text becomes IDs."""
    return bool(finding.ids) and finding.check in ("round-trip", "per-token-decode", "decode") and (
        finding.kind in ("text", "strict") or finding.kind.startswith(("decode:", "piece:")))



def _calls_for(label: str, adapter: Calls, reference: Calls) -> Calls:
    if label == "expected":
        return reference
    if reference is not adapter and (label == reference.name or label.startswith(reference.name + " ")):
        return reference
    return adapter


def first_differing_chunk(finding: Finding, adapter: Calls, reference: Calls) -> str | None:
    if adapter is reference or not finding.text or finding.check not in _CHUNK_CHECKS:
        return None
    chunks = reference.pretokenize(finding.text)
    if not chunks.is_ok:
        return None
    ref_policy = declared_policy(finding.policy, adapter.info.capabilities.special_policy)
    for chunk in chunks.value:
        if not adapter.encode(chunk, finding.policy).same_as(reference.encode(chunk, ref_policy)):
            return chunk
    return None


def special_segments(text: str, specials: dict[str, int], policy: Policy,
                     special_policy: str = "tiktoken") -> list[tuple[str, int | None]]:
    """Split ``text`` as encoding it under ``policy`` does: ``(literal, id)`` for each
    special literal the policy lets through as a special token, ``(text, None)`` between.

    >>> special_segments("a<|e|>b<|f|>", {"<|e|>": 9, "<|f|>": 8}, Policy(allowed_special=frozenset({"<|e|>"})))
    [('a', None), ('<|e|>', 9), ('b<|f|>', None)]
    >>> special_segments("a<|e|>", {"<|e|>": 9}, Policy())
    [('a<|e|>', None)]
    """
    allowed = declared_policy(policy, special_policy).allowed_special
    live = sorted((s for s in specials if s and (allowed == "all" or s in allowed)), key=len, reverse=True)
    if not text:
        return []
    if not live:
        return [(text, None)]
    out: list[tuple[str, int | None]] = []
    start = 0
    # leftmost place first, the longest literal there first (the alternation's order): a
    # per-character scan took seconds on the million-character cases
    for match in re.finditer("|".join(map(re.escape, live)), text):
        if start < match.start():
            out.append((text[start:match.start()], None))
        out.append((match.group(), specials[match.group()]))
        start = match.end()
    if start < len(text):
        out.append((text[start:], None))
    return out


def trace_segments(trace: Callable[[str], Outcome], text: str, specials: dict[str, int], policy: Policy,
                   special_policy: str, *, limit: int | None = None) -> Outcome:
    """Merge rounds for the segments the IDs came from: a special literal is not merged
    from bytes, so it shows as one ``special`` step instead of a trace of its text.
    ``ok`` with the rounds as JSON (the first ``limit`` of them), or the first failure of
    ``trace`` before the limit."""
    rounds: list[dict[str, Any]] = []
    for segment, special_id in special_segments(text, specials, policy, special_policy):
        if limit is not None and len(rounds) >= limit:
            break
        if special_id is not None:
            rounds.append({"pair": [segment, "special"], "rank": None, "merged": 0, "result": special_id,
                           "special": True})
            continue
        traced = trace(segment)
        if not traced.is_ok:
            return traced
        # a million-character input has a million rounds; the report keeps the first few
        wanted = traced.value if limit is None else islice(traced.value, limit - len(rounds))
        rounds += [r.to_json() for r in wanted]
    return Outcome.ok(rounds)


def _trace(calls: Calls, text: str, policy: Policy, special_policy: str) -> list[dict[str, Any]] | None:
    traced = trace_segments(calls.trace, text, calls.info.specials, policy, special_policy,
                            limit=_MAX_TRACE_ROUNDS)
    # Outcome.ok keeps sequences as tuples; the report's JSON wants lists
    return list(traced.value) if traced.is_ok else None


def gather(finding: Finding, adapter: Calls, reference: Calls, *, extra_outcomes: dict[str, Outcome] | None = None) -> Evidence:
    """Collect the evidence for ``finding``; calls are memoised, so this is cheap after a check."""
    pieces: dict[str, list[str | None]] = {}
    piece_hex: dict[str, list[str | None]] = {}
    for label, ids in finding.ids:
        calls = _calls_for(label, adapter, reference)
        outcomes = [calls.token_bytes(i) for i in ids[:_MAX_PIECES]]
        pieces[label] = [visible_bytes(o.value) if o.is_ok else None for o in outcomes]
        piece_hex[label] = [o.value.hex() if o.is_ok else None for o in outcomes]
    difference = first_difference(finding.ids[0][1], finding.ids[1][1]) if len(finding.ids) >= 2 else None
    traces: dict[str, list[dict[str, Any]]] = {}
    # not of a long input: the report leaves its traces out (harness.report.bounds), and a
    # million characters are a million merge rounds, memoised with the adapter's calls (the
    # shipped long cases through one runner: 188 MB kept; peak 2.46 GB before, 2.13 after)
    if finding.text and len(finding.text) < LONG_TEXT_CHARS:
        for calls in (adapter, reference):
            if calls.info.capabilities.trace and calls.name not in traces:
                if calls is adapter:  # its native handling of the policy
                    rounds = _trace(calls, finding.text, finding.policy, calls.info.capabilities.special_policy)
                else:  # asked as the checks ask it: under the adapter's declared semantics
                    rounds = _trace(calls, finding.text, declared_policy(
                        finding.policy, adapter.info.capabilities.special_policy), "tiktoken")
                if rounds is not None:
                    traces[calls.name] = rounds
    outcomes = dict(finding.outcomes)
    outcomes.update(extra_outcomes or {})
    return Evidence(
        first_difference=difference,
        first_differing_chunk=first_differing_chunk(finding, adapter, reference),
        outcomes=outcomes,
        pieces=pieces,
        piece_bytes=piece_hex,
        traces=traces,
        reproduce=reproduce_command(finding, adapter, reference),
        snippet=foreign_snippet(finding, adapter),
    )


def foreign_snippet(finding: Finding, adapter: Calls) -> str | None:
    """The adapter's own two-line program for this divergence, when it runs in another
    language (a JavaScript adapter answers the ``snippet`` operation); else ``None``."""
    if adapter.info.language == "Python":
        return None
    outcome = adapter.executor.call("snippet", finding.check, finding.kind, finding.text, finding.policy,
                                    finding.decode_ids)
    return outcome.value if outcome.is_ok and isinstance(outcome.value, str) else None
