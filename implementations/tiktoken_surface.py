"""tiktoken's whole public API on one input: every path its users call, as outcomes.

:func:`walk` runs one text through each public ``Encoding`` method under each
special-token policy, and decodes the IDs back through each decode method;
:func:`attributes` reads what does not depend on an input (``n_vocab``, ``eot_token``,
a hash of ``token_byte_values()``) and a few fixed probes that releases have answered
differently (an ID past the vocabulary, invalid UTF-8 through the raw byte path).

A method a release lacks is ``unsupported``, never an error of the release. A method it
has that raises ``ImportError``/``ModuleNotFoundError`` (``encode_to_numpy`` where numpy
is missing) is an ``internal-error`` outcome whose message names the missing module: a
finding, since the package's users get that error (numpy is a dependency of tokconf, so
it is there for the packages tokconf installs). Paths are named ``method`` or ``method[variant]``:

- ``encode[P]``, ``encode_batch[P]``, ``encode_to_numpy[P]`` for the policies ``P`` of
  :data:`POLICIES` (``one``: only the first literal present allowed, when one is);
- ``encode_ordinary``, ``encode_ordinary_batch``;
- ``_encode_bytes``: the raw byte path tiktoken's own tests exercise
  (``tests/test_encoding.py``: ``enc._encode_bytes(bytestring)``), fed the text's UTF-8
  with surrogates kept as their 3-byte sequences, so a lone surrogate reaches it as
  invalid UTF-8;
- ``encode_single_token[text]`` (the whole text) and ``encode_single_token[pieces]``
  (each distinct token's bytes back to its ID, in first-seen order);
- ``decode_bytes``, ``decode[replace]``, ``decode[strict]``,
  ``decode_single_token_bytes[distinct]`` (each distinct ID), ``decode_tokens_bytes``,
  ``decode_with_offsets``, ``decode_batch``, ``decode_bytes_batch``, all on the IDs of
  ``encode[all]`` (or of ``encode_ordinary`` when that raised), so special tokens are
  decoded too.

Many texts at once (:func:`walk_many`): the six batch paths (``encode_batch[P]``,
``encode_ordinary_batch``, ``decode_batch``, ``decode_bytes_batch``) are asked once for
the whole list instead of once per text. tiktoken's batch methods open a thread pool per
call (``tiktoken/core.py``: ``with ThreadPoolExecutor(num_threads)``), about 0.4 ms on
this 2-core machine against 18 us for an ``encode``: 2.8 ms of a short text's 3.2 ms
walk, and a default run walks thousands of texts. :func:`walk_many` answers each text
exactly as :func:`walk` does (see :class:`_Batched` for the rule that keeps it so).

Values are plain data (tuples, bytes, str, int) so the surface crosses a worker
boundary in one call. A list of token byte strings (``decode_tokens_bytes``) is kept as
``(joined bytes, (length, ...))``: the same information, but a million-token input does
not become a million small objects to encode, send and store.
"""

from __future__ import annotations

import hashlib
import inspect
from typing import Any, Callable, Sequence

from harness.outcomes import Operation, Outcome, capture, ints_only

__all__ = ["POLICIES", "as_documented", "attributes", "missing_module", "walk", "walk_many"]

#: (label, allowed_special, disallowed_special), tiktoken's keyword arguments.
POLICIES: tuple[tuple[str, Any, Any], ...] = (
    ("default", frozenset(), "all"),
    ("all", "all", ()),
    ("ordinary", frozenset(), ()),
)

Classify = Callable[[Operation, BaseException], "str | None"]


def as_documented(value: Any) -> Any:
    """A special-token policy as tiktoken's documentation writes it: a ``set`` (or ``"all"``,
    or the ``()`` of ``disallowed_special=()``). tiktoken 0.3.2 takes only a ``set`` (its
    Rust core extracts a ``HashSet`` from a Python ``set``; a ``frozenset`` raises
    ``TypeError``), later releases take any set; called as documented, every release
    answers, and the one release's type quirk is one fixed probe (:func:`attributes`),
    not a finding on every input (issue 22).

    >>> as_documented(frozenset({"a"})), as_documented("all"), as_documented(())
    ({'a'}, 'all', ())
    """
    return set(value) if isinstance(value, frozenset) else value


def _plain(value: Any) -> Any:
    """Lists, numpy arrays and numpy integers as tuples and ints (protocol-ready).

    >>> _plain([1, 2]), _plain([[1], bytearray(b"a"), {3, 2}])
    ((1, 2), ((1,), b'a', (2, 3)))
    """
    if isinstance(value, (bytes, str, int, type(None))):
        return value
    if type(value) in (list, tuple) and ints_only(value):
        # a list of IDs, what most paths return: in C, not one call per ID (the user path's
        # walks made 1.5 million calls here)
        return tuple(value)
    if isinstance(value, bytearray):
        return bytes(value)
    if hasattr(value, "tolist") and not isinstance(value, (list, tuple)):
        return _plain(value.tolist())  # numpy array or scalar
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(_plain(v) for v in value))
    if hasattr(value, "__index__"):
        return value.__index__()
    return value


def missing_module(outcome: Outcome) -> Outcome:
    """An ImportError outcome whose message says which module is missing.

    >>> missing_module(Outcome.raised("internal-error", "builtins.ModuleNotFoundError", "No module named 'numpy'")).message
    "missing module 'numpy': No module named 'numpy'"
    """
    if outcome.kind != "raised" or outcome.native_type not in ("builtins.ImportError", "builtins.ModuleNotFoundError"):
        return outcome
    import re

    found = re.search(r"named '([^']+)'|import name '([^']+)'", outcome.message or "")
    module = next((g for g in found.groups() if g), None) if found else None
    if module is None or outcome.message.startswith("missing module"):
        return outcome
    return Outcome.raised(outcome.category or "internal-error", outcome.native_type,
                          f"missing module {module!r}: {outcome.message}")


class _Walker:
    def __init__(self, enc: Any, classify: Classify, release: str, batched: _Batched | None = None) -> None:
        self.enc = enc
        self.classify = classify
        self.release = release
        self.out: list[tuple[str, Outcome]] = []
        #: where the batch paths go when many texts are walked together (None: asked here)
        self.batched = batched

    def _classify(self, op: Operation, exc: BaseException) -> str | None:
        if isinstance(exc, ImportError):
            # a path the package defines but cannot run here (encode_to_numpy without
            # numpy): a finding that names the module, never a silent skip; the message
            # keeps ``exc.name`` (see :func:`missing_module`)
            return "internal-error"
        return self.classify(op, exc)

    def call(self, path: str, op: Operation, method: str, *args: Any, **kwargs: Any) -> Outcome:
        fn = getattr(self.enc, method, None)
        if fn is None:
            outcome = Outcome.raised("unsupported", "tokconf.MissingMethod",
                                     f"tiktoken {self.release} has no Encoding.{method}")
        else:
            classify = self._classify
            if method == "encode_single_token":
                # its contract: KeyError when the text is not one token (tiktoken/core.py),
                # an answer, not the lookup failure an encode's KeyError is to a drop-in's
                # classifier; one category for every family, so tiktoken re-exported agrees
                classify = lambda op_, exc: "unknown-token" if isinstance(exc, KeyError) else self._classify(op_, exc)  # noqa: E731
            outcome = capture(op, fn, *args, classify=classify, **kwargs)
            outcome = missing_module(outcome)
            if outcome.is_ok:
                outcome = Outcome.ok(_plain(outcome.value))
        self.out.append((path, outcome))
        return outcome

    def call_batch(self, path: str, op: Operation, method: str, item: Any, alone: Outcome, **kwargs: Any) -> None:
        """``method([item], **kwargs)``, the batch path of the single-item path whose
        outcome was ``alone``: asked now, or later with other texts' (:class:`_Batched`)."""
        if self.batched is None or getattr(self.enc, method, None) is None:
            self.call(path, op, method, [item], **kwargs)
            return
        self.out.append((path, alone))  # a place held; _Batched.resolve writes the answer
        self.batched.add(self, len(self.out) - 1, op, method, item, alone, kwargs)


class _Batched:
    """The batch paths of many walks, asked together.

    Each text's batch path is ``method([item])``. Asked instead as one
    ``method([item_1, ..., item_n])``, text *k* is given ``(answer_k,)`` only when the call
    returned exactly *n* answers and every answer equals that text's own single-item path
    (``encode[P]`` for ``encode_batch[P]``, ``encode_ordinary``, ``decode[replace]``,
    ``decode_bytes``): what ``method([item_k])`` returns for any batch that is the
    single-item method applied to each item (tiktoken's own, and each drop-in the run
    compares). An item whose single-item path failed, and every item of a call that raised or
    answered anything else, is asked alone, so a failure or a difference is always the
    answer of ``method([item_k])`` itself: what :func:`walk` records, and what a shrink of
    that text reproduces (``tests/test_api_surface_many.py`` compares both on the shipped
    cases' texts, and plants batch faults each rule must see).
    """

    def __init__(self) -> None:
        #: (method, policy) -> (its keyword arguments, [(walker, index in its out, op, item,
        #: the single-item path's outcome)])
        self.groups: dict[tuple[str, Any], tuple[dict[str, Any], list[_Entry]]] = {}

    def add(self, walker: _Walker, index: int, op: Operation, method: str, item: Any, alone: Outcome,
            kwargs: dict[str, Any]) -> None:
        key = (method, tuple(sorted((k, _hashable(v)) for k, v in kwargs.items())))
        self.groups.setdefault(key, (kwargs, []))[1].append((walker, index, op, item, alone))

    def resolve(self) -> None:
        for (method, _), (kwargs, entries) in self.groups.items():
            together = [e for e in entries if e[4].is_ok]
            if len(together) > 1 and self._together(method, kwargs, together):
                together_ids = {id(e) for e in together}
                entries = [e for e in entries if id(e) not in together_ids]
            for walker, index, op, item, _ in entries:
                path = walker.out[index][0]
                walker.call(path, op, method, [item], **kwargs)
                walker.out[index] = walker.out.pop()  # the answer into its place

    @staticmethod
    def _together(method: str, kwargs: dict[str, Any], entries: list[_Entry]) -> bool:
        """Ask ``entries`` in one call; True when every answer was taken (see the class)."""
        walker, _, op, _, _ = entries[0]
        fn = getattr(walker.enc, method)
        if _takes_num_threads(fn):
            # one pool thread, as each text's own single-item call has: tiktoken starts up
            # to num_threads (8) threads per call, 4.4 ms for 48 short texts here, 2.1 ms
            # with one (13.5 ms one text at a time)
            kwargs = {**kwargs, "num_threads": 1}
        got = capture(op, fn, [e[3] for e in entries], classify=walker._classify, **kwargs)
        if not got.is_ok:
            return False
        answers = _plain(got.value)
        if not isinstance(answers, tuple) or len(answers) != len(entries):
            return False
        if any(answer != alone.value for answer, (_, _, _, _, alone) in zip(answers, entries)):
            return False
        for answer, (owner, index, _, _, _) in zip(answers, entries):
            owner.out[index] = (owner.out[index][0], Outcome.ok((answer,)))
        return True


#: one batch path of one walk: (the walker, where its answer goes in ``walker.out``, the
#: operation, the item, the outcome of the item's single-item path)
_Entry = tuple[_Walker, int, Operation, Any, Outcome]


def _takes_num_threads(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` has tiktoken's ``num_threads`` keyword (a drop-in's batch may not)."""
    try:
        return "num_threads" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False


def _hashable(value: Any) -> Any:
    """A policy argument as a dictionary key (a ``set`` of literals is not one)."""
    return ("set", tuple(sorted(value))) if isinstance(value, (set, frozenset)) else value


def walk(enc: Any, text: str, *, classify: Classify, release: str,
         specials: Any = None) -> list[tuple[str, Outcome]]:
    """Every public path of ``enc`` (a ``tiktoken.Encoding``, or a drop-in's) on ``text``.
    ``specials``: its special literals where ``enc`` lacks ``special_tokens_set``."""
    return _walk(_Walker(enc, classify, release), text, specials)


def walk_many(enc: Any, texts: Sequence[str], *, classify: Classify, release: str,
              specials: Any = None) -> list[list[tuple[str, Outcome]]]:
    """:func:`walk` of each text, the batch paths asked once for all (:class:`_Batched`)."""
    if len(texts) < 2:
        return [walk(enc, text, classify=classify, release=release, specials=specials) for text in texts]
    batched = _Batched()
    walks = [_walk(_Walker(enc, classify, release, batched), text, specials) for text in texts]
    batched.resolve()
    return walks


def _walk(w: _Walker, text: str, specials: Any) -> list[tuple[str, Outcome]]:
    enc = w.enc
    policies = list(POLICIES)
    known = enc.special_tokens_set if specials is None else specials
    literals = sorted((s for s in known if s in text), key=text.index)
    if literals:
        policies.append(("one", frozenset({literals[0]}), "all"))
    encoded: dict[str, Outcome] = {}
    for label, allowed, disallowed in policies:
        kwargs = {"allowed_special": as_documented(allowed), "disallowed_special": as_documented(disallowed)}
        encoded[label] = w.call(f"encode[{label}]", "encode", "encode", text, **kwargs)
        w.call_batch(f"encode_batch[{label}]", "encode", "encode_batch", text, encoded[label], **kwargs)
        w.call(f"encode_to_numpy[{label}]", "encode", "encode_to_numpy", text, **kwargs)
    ordinary = w.call("encode_ordinary", "encode", "encode_ordinary", text)
    w.call_batch("encode_ordinary_batch", "encode", "encode_ordinary_batch", text, ordinary)
    w.call("_encode_bytes", "encode", "_encode_bytes", text.encode("utf-8", "surrogatepass"))
    w.call("encode_single_token[text]", "encode", "encode_single_token", text)
    source = encoded["all"] if encoded["all"].is_ok else ordinary
    if not source.is_ok:
        return w.out
    _decode_paths(w, list(source.value))
    return w.out


def pieces_value(tokens: Any) -> tuple[bytes, tuple[int, ...]]:
    """A list of token byte strings as (joined bytes, lengths).

    >>> pieces_value([b"ab", b"", b"c"])
    (b'abc', (2, 0, 1))
    """
    return b"".join(tokens), tuple(len(t) for t in tokens)


def _decode_paths(w: _Walker, ids: list[int]) -> None:
    distinct = list(dict.fromkeys(ids))
    joined = w.call("decode_bytes", "decode", "decode_bytes", ids)
    replaced = w.call("decode[replace]", "decode", "decode", ids, errors="replace")
    w.call("decode[strict]", "decode", "decode", ids, errors="strict")
    tokens = w.call("decode_tokens_bytes", "decode", "decode_tokens_bytes", ids)
    if tokens.is_ok:
        w.out[-1] = ("decode_tokens_bytes", Outcome.ok(pieces_value(tokens.value)))
    singles = _each(w, "decode_single_token_bytes", "decode", distinct, path="decode_single_token_bytes[distinct]")
    w.call("decode_with_offsets", "decode", "decode_with_offsets", ids)
    w.call_batch("decode_batch", "decode", "decode_batch", ids, replaced)
    w.call_batch("decode_bytes_batch", "decode", "decode_bytes_batch", ids, joined)
    if singles.is_ok:
        _each(w, "encode_single_token", "encode", list(singles.value), path="encode_single_token[pieces]")


def _each(w: _Walker, method: str, op: Operation, items: list[Any], *, path: str | None = None) -> Outcome:
    """``method`` on each item: the tuple of answers, or the first failure."""
    fn = getattr(w.enc, method, None)
    label = path or method
    if fn is None:
        outcome = Outcome.raised("unsupported", "tokconf.MissingMethod", f"tiktoken {w.release} has no Encoding.{method}")
        w.out.append((label, outcome))
        return outcome
    answers = []
    for item in items:
        one = capture(op, fn, item, classify=w._classify)
        if not one.is_ok:
            w.out.append((label, one))
            return one
        answers.append(_plain(one.value))
    outcome = Outcome.ok(tuple(answers))
    w.out.append((label, outcome))
    return outcome


def token_bytes_digest(values: Any) -> str:
    """``sha256:<hex> n=<count>`` over the length-prefixed token bytes, in order."""
    h = hashlib.sha256()
    count = 0
    for token in values:
        h.update(len(token).to_bytes(4, "big") + bytes(token))
        count += 1
    return f"sha256:{h.hexdigest()} n={count}"


def attributes(enc: Any, *, classify: Classify, release: str) -> list[tuple[str, Outcome]]:
    """The input-independent part of the surface: attributes and fixed probes."""
    w = _Walker(enc, classify, release)
    for name in ("name", "n_vocab", "max_token_value", "eot_token", "special_tokens_set"):
        if hasattr(enc, name):
            outcome = capture("other", lambda n=name: getattr(enc, n), classify=w._classify)
            w.out.append((name, Outcome.ok(_plain(outcome.value)) if outcome.is_ok else outcome))
        else:
            w.out.append((name, Outcome.raised("unsupported", "tokconf.MissingMethod",
                                               f"tiktoken {release} has no Encoding.{name}")))
    values = w.call("token_byte_values()", "other", "token_byte_values")
    if values.is_ok:
        w.out[-1] = ("token_byte_values()", Outcome.ok(token_bytes_digest(values.value)))
    past = getattr(enc, "max_token_value", 0) + 1
    # fixed probes: IDs no vocabulary has, and bytes that are not UTF-8
    w.call("decode_bytes[past-vocab]", "decode", "decode_bytes", [past])
    w.call("decode[past-vocab]", "decode", "decode", [past])
    w.call("decode_single_token_bytes[past-vocab]", "decode", "decode_single_token_bytes", past)
    w.call("decode_bytes[2**32]", "decode", "decode_bytes", [2**32])
    w.call("decode_bytes[-1]", "decode", "decode_bytes", [-1])
    w.call("decode_tokens_bytes[past-vocab]", "decode", "decode_tokens_bytes", [past])
    w.call("decode_with_offsets[past-vocab]", "decode", "decode_with_offsets", [past])
    w.call("encode_single_token[invalid-utf8]", "encode", "encode_single_token", b"\xff\xfe")
    w.call("_encode_bytes[invalid-utf8]", "encode", "_encode_bytes", b" \xec\x8b\xa4\xed")
    # the argument types a release takes (as_documented): tiktoken 0.3.2 refuses a frozenset
    w.call("encode[allowed_special=frozenset()]", "encode", "encode", "hi", allowed_special=frozenset())
    return w.out
