"""What a call to an adapter produced: a value, or a categorised failure.

No adapter call ever escapes as a raw exception. ``capture`` runs a call and turns
whatever happens into an :class:`Outcome`. The *category* is a small closed set that
lets different libraries be compared; the *native type* is kept as well, because the
seeds care about it (``AssertionError`` vs ``ValueError``, ``KeyError`` vs ``ValueError``).

Two more kinds exist only where a call runs isolated in a worker process
(:mod:`harness.worker`): ``timeout`` (no answer within the time limit; the worker is
killed) and ``crashed`` (the worker died). A crash carries what killed it as its
category: the signal name (``SIGSEGV``, ``SIGABRT``), ``out-of-memory`` when the worker
hit its memory limit (``RLIMIT_AS``), or ``exited`` when it ended without a signal. They
compare like any failure: two crashes agree when their categories do.

Some failures are *faults* of the adapter itself (:attr:`Outcome.is_fault`): an
``internal-error``, a timeout or a crash. The error-category check reports a fault even
when the reference fails the same way, and on the reference itself.

Two helpers every executor shares: :func:`checked` turns a malformed return value into
the adapter's ``internal-error``, and :func:`surface_to_data` / :func:`surface_from_data`
carry an API-surface walk as one plain value.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from typing import Any, Callable, Literal, Sequence

__all__ = [
    "ASK_APART",
    "CATEGORIES",
    "CRASH_EXITED",
    "CRASH_OUT_OF_MEMORY",
    "Outcome",
    "UnsupportedOperation",
    "capture",
    "checked",
    "default_category",
    "ints_only",
    "is_ids",
    "native_type_name",
    "raised_by",
    "surface_from_data",
    "surface_outcome",
    "surface_to_data",
    "together",
    "values_each",
]

#: The closed set of error categories. Adapters may only report these.
CATEGORIES: frozenset[str] = frozenset(
    {
        "disallowed-special",  # a special-token literal where the policy forbids it
        "unknown-token",  # text outside a closed vocabulary (teaching tokenizers)
        "unknown-id",  # decode of an ID the vocabulary does not have
        "invalid-utf8",  # strict decode of bytes that are not UTF-8
        "unencodable-text",  # text that cannot become bytes (e.g. a lone surrogate, strictly)
        "input-too-large",  # memory or size limits
        "unsupported",  # the adapter does not offer this operation
        "internal-error",  # anything else: a bug in the implementation under test
    }
)

#: The category of a crash when the worker hit its memory limit, or ended without a signal.
CRASH_OUT_OF_MEMORY = "out-of-memory"
CRASH_EXITED = "exited"

OutcomeKind = Literal["ok", "raised", "timeout", "crashed"]
Operation = Literal["encode", "decode", "other"]


class UnsupportedOperation(Exception):
    """Raised by an adapter for an operation or option it does not offer.

    It becomes an outcome of category ``unsupported``, which checks skip rather than
    count as a divergence.
    """


@dataclass(frozen=True)
class Outcome:
    """The result of one adapter call.

    ``value`` holds the IDs (a tuple of ints), bytes, or text of a successful call.
    For failures, ``category`` is one of :data:`CATEGORIES` and ``native_type`` the
    qualified name of the exception the library raised (``builtins.KeyError``).
    """

    kind: OutcomeKind
    value: Any = None
    category: str | None = None
    native_type: str | None = None
    message: str | None = None

    @classmethod
    def ok(cls, value: Any) -> Outcome:
        if isinstance(value, list):
            value = tuple(value)
        # the fields set at once, as the frozen dataclass's __init__ sets them one by one
        # (half the cost; a default run makes millions of these)
        outcome = object.__new__(cls)
        outcome.__dict__.update(kind="ok", value=value, category=None, native_type=None, message=None)
        return outcome

    @classmethod
    def raised(cls, category: str, native_type: str, message: str) -> Outcome:
        if category not in CATEGORIES:
            raise ValueError(
                f"unknown outcome category {category!r}; expected one of {sorted(CATEGORIES)}"
            )
        return cls(kind="raised", category=category, native_type=native_type, message=message)

    @classmethod
    def timeout(cls, seconds: float) -> Outcome:
        return cls(kind="timeout", message=f"no answer within {seconds:g} s")

    @classmethod
    def crashed(cls, cause: str, detail: str = "") -> Outcome:
        """A worker that died: ``cause`` is the signal name, ``out-of-memory`` or ``exited``.

        >>> Outcome.crashed("SIGSEGV", "the worker died during encode").describe()
        'crashed SIGSEGV: the worker died during encode'
        """
        if not cause or any(ch.isspace() for ch in cause):
            raise ValueError(f"a crash cause is one word (SIGSEGV, out-of-memory, exited), not {cause!r}")
        return cls(kind="crashed", category=cause, message=detail or f"the worker died ({cause})")

    @property
    def is_ok(self) -> bool:
        return self.kind == "ok"

    @property
    def is_unsupported(self) -> bool:
        return self.kind == "raised" and self.category == "unsupported"

    @property
    def is_fault(self) -> bool:
        """An internal error, a timeout or a crash: the adapter's own failure, whatever
        the reference does.

        >>> Outcome.timeout(1).is_fault, Outcome.raised("unknown-id", "builtins.KeyError", "9").is_fault
        (True, False)
        """
        return self.kind in ("timeout", "crashed") or (self.kind == "raised" and self.category == "internal-error")

    def same_as(self, other: Outcome) -> bool:
        """Equal for comparison: values for successes, categories for failures."""
        if self.kind != other.kind:
            return False
        if self.kind == "ok":
            return self.value == other.value
        return self.category == other.category

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; bytes become a hex string under ``"bytes"``."""
        if self.kind == "ok":
            if isinstance(self.value, (bytes, bytearray)):
                return {"kind": "ok", "bytes": bytes(self.value).hex()}
            if isinstance(self.value, tuple):
                return {"kind": "ok", "ids": list(self.value)}
            return {"kind": "ok", "text": self.value}
        out: dict[str, Any] = {"kind": self.kind}
        for key in ("category", "native_type", "message"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        if data["kind"] == "ok":
            if "bytes" in data:
                return cls.ok(bytes.fromhex(data["bytes"]))
            if "ids" in data:
                return cls.ok(tuple(data["ids"]))
            return cls.ok(data.get("text"))
        return cls(
            kind=data["kind"],
            category=data.get("category"),
            native_type=data.get("native_type"),
            message=data.get("message"),
        )

    def describe(self) -> str:
        """One line for humans: ``[15339, 1917]`` or ``raised unknown-id (builtins.KeyError)``."""
        if self.kind == "ok":
            if isinstance(self.value, (bytes, bytearray)):
                return f"bytes {bytes(self.value)!r}"
            if isinstance(self.value, tuple):
                return str(list(self.value))
            return repr(self.value)
        if self.kind == "raised":
            return f"raised {self.category} ({self.native_type}): {self.message}"
        if self.kind == "crashed":
            return f"crashed {self.category}: {self.message}"
        return f"{self.kind}: {self.message}"


def native_type_name(exc: BaseException) -> str:
    """``builtins.KeyError``, ``pyo3_runtime.PanicException``: module-qualified type name."""
    kind = type(exc)
    return f"{kind.__module__}.{kind.__qualname__}"


def default_category(op: Operation, exc: BaseException) -> str:
    """Map a native exception to a category when the adapter has no better idea.

    >>> default_category("decode", KeyError(99999))
    'unknown-id'
    >>> default_category("encode", ValueError("Encountered text corresponding to disallowed special token"))
    'disallowed-special'
    """
    if isinstance(exc, UnsupportedOperation):
        return "unsupported"
    if isinstance(exc, UnicodeDecodeError):
        return "invalid-utf8"
    if isinstance(exc, UnicodeEncodeError):
        return "unencodable-text"
    if isinstance(exc, (MemoryError, OverflowError, RecursionError)):
        return "input-too-large"
    message = str(exc).lower()
    if "disallowed special token" in message:
        return "disallowed-special"
    if isinstance(exc, (KeyError, IndexError)):
        return "unknown-id" if op == "decode" else "unknown-token"
    return "internal-error"


def capture(
    op: Operation,
    fn: Callable[..., Any],
    *args: Any,
    classify: Callable[[Operation, BaseException], str | None] | None = None,
    **kwargs: Any,
) -> Outcome:
    """Run ``fn`` and return its :class:`Outcome`.

    Catches ``BaseException`` because tiktoken's Rust panics surface as
    ``pyo3_runtime.PanicException``, which derives from ``BaseException``. Ctrl-C and
    ``sys.exit`` are the user's, not the adapter's, and pass through.
    """
    try:
        value = fn(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - the whole point: nothing escapes
        return raised_by(op, exc, classify=classify)
    return Outcome.ok(value)


def values_each(call: Callable[..., Any], items: Sequence[Any], *, op: Operation = "encode",
                classify: Callable[[Operation, BaseException], str | None] | None = None,
                **kwargs: Any) -> list[Any]:
    """``call(item, **kwargs)`` of each item (``op``: ``encode`` or ``token_bytes``): its
    value where it succeeded (IDs as a tuple, bytes), else the outcome
    ``checked(op, capture(op, call, item, ...))`` has, without an Outcome per success
    (cl100k_base: its 198,000 token texts 1.1 s of CPU with one each, 0.65 s without, most
    of it tiktoken's own encode; its 100,256 IDs' bytes 0.29-0.33 s, 0.05 s without).

    >>> values_each(lambda t: [ord(c) for c in t] if t else None, ["hi", ""])[0]
    (104, 105)
    >>> values_each(lambda t: [ord(c) for c in t] if t else None, ["hi", ""])[1].describe()
    'raised internal-error (tokconf.BadReturnValue): encode returned NoneType, expected a list of int'
    """
    exact = _VALUE_ALONE[op]  # callers tell a value from an Outcome by this exact type
    raised_as = "decode" if op == "token_bytes" else op  # as InProcess captures token_bytes
    out: list[Any] = []
    for item in items:
        try:
            value = call(item, **kwargs)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - as capture(): nothing escapes
            out.append(raised_by(raised_as, exc, classify=classify))
            continue
        if type(value) is list:  # as Outcome.ok
            value = tuple(value)
        if type(value) is not exact or (exact is tuple and not ints_only(value)):
            outcome = checked(op, Outcome.ok(value))  # numpy ints, a bytearray, a subclass: fine
            value = exact(outcome.value) if outcome.is_ok else outcome
        out.append(value)
    return out


def raised_by(op: Operation, exc: BaseException, *,
              classify: Callable[[Operation, BaseException], str | None] | None = None) -> Outcome:
    """The outcome :func:`capture` records for ``exc`` raised by ``op`` (for a loop that
    catches its own exceptions).

    >>> raised_by("decode", KeyError(7)).describe()
    'raised unknown-id (builtins.KeyError): 7'
    """
    category = (classify(op, exc) if classify else None) or default_category(op, exc)
    return Outcome.raised(category, native_type_name(exc), _message(exc))


def _message(exc: BaseException) -> str:
    text = str(exc)
    # KeyError.__str__ is repr(key); a subclass with its own __str__ has a real message
    if type(exc).__str__ is KeyError.__str__ and exc.args:
        text = repr(exc.args[0])
    return text[:500]


# -- what a successful call must return ------------------------------------------------------

_INT_ONLY = frozenset({int})


def ints_only(values: Sequence[Any]) -> bool:
    """Whether every element is exactly an int (not a bool, not a subclass), tested in C:
    every encode of a run, and every ID list a report writes, passes through here.

    >>> ints_only((1, 2)), ints_only([1, True]), ints_only(())
    (True, False, True)
    """
    return _INT_ONLY.issuperset(map(type, values))


def is_ids(value: Any) -> bool:
    """An encode's answer as the harness holds it: a tuple of exact ints."""
    return isinstance(value, tuple) and ints_only(value)


#: the exact type of what :func:`values_each` keeps as the value alone (IDs: of exact ints)
_VALUE_ALONE: dict[str, type] = {"encode": tuple, "token_bytes": bytes}


#: What a successful call must return; anything else is the adapter's bug, reported as one.
_RETURNS: dict[str, tuple[str, Any]] = {
    "encode": ("a list of int", is_ids),
    "encode_ordinary": ("a list of int", is_ids),
    "encode_batch": ("a list of lists of int", lambda v: isinstance(v, tuple) and all(is_ids(x) for x in v)),
    "decode_bytes": ("bytes", lambda v: isinstance(v, bytes)),
    "token_bytes": ("bytes", lambda v: isinstance(v, bytes)),
    "decode": ("str", lambda v: isinstance(v, str)),
    "pretokenize": ("a list of str", lambda v: isinstance(v, tuple) and all(isinstance(x, str) for x in v)),
    "decode_stream": ("a list of str or None",
                      lambda v: isinstance(v, tuple) and all(x is None or isinstance(x, str) for x in v)),
}


def checked(op: str, outcome: Outcome) -> Outcome:
    """Turn a malformed return value into an ``internal-error`` outcome (every executor
    applies it: in process, and to a worker's decoded answer, whatever its language).

    >>> checked("encode", Outcome.ok((1, 2))).is_ok
    True
    >>> checked("encode", Outcome.ok(None)).describe()
    'raised internal-error (tokconf.BadReturnValue): encode returned NoneType, expected a list of int'
    >>> checked("encode", Outcome.ok(("1", 2.5))).message
    "encode returned tuple ('1', 2.5), expected a list of int"
    """
    if not outcome.is_ok or op not in _RETURNS:
        return outcome
    wanted, valid = _RETURNS[op]
    if valid(outcome.value):  # what nearly every call returns: checked once
        return outcome
    if isinstance(outcome.value, bytearray):
        return Outcome.ok(bytes(outcome.value))
    if op in ("encode", "encode_ordinary") and isinstance(outcome.value, tuple) and not is_ids(outcome.value):
        # numpy integers and the like are IDs too; bools are not
        if all(hasattr(i, "__index__") and not isinstance(i, bool) for i in outcome.value):
            outcome = Outcome.ok(tuple(i.__index__() for i in outcome.value))
    if valid(outcome.value):
        return outcome
    value = outcome.value
    shown = type(value).__name__ + (f" {reprlib.repr(value)}" if value is not None else "")
    return Outcome.raised("internal-error", "tokconf.BadReturnValue", f"{op} returned {shown}, expected {wanted}")


# -- an API-surface walk as plain data: one value that crosses the worker protocol, and in
# process the same (Calls.api_surface keeps it so either way) ------------------------------


def surface_to_data(pairs: Any) -> tuple[tuple[Any, ...], ...]:
    """(path, Outcome) pairs as plain tuples, so a whole API surface crosses the worker
    protocol as one value: ``(path, "ok", value)`` or ``(path, kind, category, native_type,
    message)``, or ``(path, "same", earlier path)`` for an outcome equal to an earlier
    path's (a million-token input's IDs then cross once, not once per encode path).
    ``TypeError`` if ``pairs`` is not a list of (str, Outcome).

    >>> surface_to_data([("encode[default]", Outcome.ok([1, 2])), ("encode[all]", Outcome.ok([1, 2]))])
    (('encode[default]', 'ok', (1, 2)), ('encode[all]', 'same', 'encode[default]'))
    """
    rows = []
    seen: dict[Any, str] = {}
    for item in pairs:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], Outcome)):
            raise TypeError(f"an API surface is a list of (path, Outcome) pairs, not {type(item).__name__}")
        path, outcome = item
        try:
            earlier = seen.setdefault(outcome, path)
        except TypeError:  # an unhashable value: sent as it is
            earlier = path
        if earlier != path:
            rows.append((path, "same", earlier))
        elif outcome.kind == "ok":
            rows.append((path, "ok", outcome.value))
        else:
            rows.append((path, outcome.kind, outcome.category, outcome.native_type, outcome.message))
    return tuple(rows)


def surface_from_data(data: Any) -> dict[str, Outcome]:
    """The inverse of :func:`surface_to_data`: path -> Outcome, in the adapter's order."""
    out: dict[str, Outcome] = {}
    for row in data:
        path, kind = row[0], row[1]
        if kind == "same":
            out[path] = out[row[2]]
        elif kind == "ok":
            out[path] = Outcome.ok(row[2])
        else:
            out[path] = Outcome(kind=kind, category=row[2], native_type=row[3], message=row[4])
    return out


def surface_outcome(outcome: Outcome) -> Outcome:
    """An adapter's ``api_surface`` outcome with its value as :func:`surface_to_data`; a value
    that is not a list of (path, Outcome) is the adapter's ``internal-error``."""
    if not outcome.is_ok:
        return outcome
    try:
        return Outcome.ok(surface_to_data(outcome.value))
    except TypeError as exc:
        return Outcome.raised("internal-error", "tokconf.BadReturnValue", str(exc))


#: what a worker answers a bulk operation (``encode_many``, ``token_bytes_many``,
#: ``api_surfaces``) with when one item's call did not succeed: the client then asks each
#: item in a call of its own, so each gets its own outcome
#: (:meth:`harness.worker.client.WorkerExecutor.encode_many`)
ASK_APART = "tokconf.AskApart"


def together(outcomes: Sequence[Outcome]) -> Outcome:
    """Several items' outcomes as one that crosses the worker protocol: the tuple of their
    values when every one succeeded; otherwise an :data:`ASK_APART` error naming the first
    that did not.

    >>> together([Outcome.ok((1, 2)), Outcome.ok(())]).value
    ((1, 2), ())
    >>> together([Outcome.ok(()), Outcome.raised("internal-error", "ValueError", "x")]).describe()
    'raised internal-error (tokconf.AskApart): item 1: raised internal-error (ValueError): x'
    """
    for n, outcome in enumerate(outcomes):
        if not outcome.is_ok:
            return Outcome.raised("internal-error", ASK_APART, f"item {n}: {outcome.describe()}")
    return Outcome.ok(tuple(o.value for o in outcomes))
