"""What makes an adapter's answers what they are, as text: the unit cache's fingerprints.

An adapter's fingerprint names everything its answers depend on besides the input: its
name, library, version and provider, the files it was built from and their SHA-256 (as
its worker reports them), its encoding's description, its capabilities, how it is isolated
and under which limits, and for a JavaScript port the Node.js release. There is none for
an adapter whose code tokconf does not hash (a plugin, another package's entry point, a
``source:`` checkout, a ``tiktoken-compatible:`` module that is no installed release): the
unit cache (:mod:`harness.run.unit_cache`) never keeps what such an adapter said.

:func:`canonical` digests the other half of a key, a unit's inputs, the same way in every
process.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from dataclasses import fields, is_dataclass
from enum import Enum
from pathlib import PurePath
from typing import Any

__all__ = ["adapter_fingerprint", "canonical"]


#: per run's Selected: adapter name -> (the objects its fingerprint was made of, the
#: fingerprint); a default run keys about 4,000 units, each naming two or more adapters
_FINGERPRINTS: "weakref.WeakKeyDictionary[Any, dict[str, tuple[tuple[Any, ...], str | None]]]" = \
    weakref.WeakKeyDictionary()


def adapter_fingerprint(selected: Any, name: str) -> str | None:
    """What makes ``name``'s answers what they are, as text; None when that cannot be known.

    Made once per adapter and run: again only when its row, its info or the run's
    isolation is another object (a row is replaced, never changed, when a worker reports
    its provenance or the adapter becomes unavailable)."""
    row = selected.rows.get(name)
    calls = selected.calls.get(name)
    made_of = (row, None if calls is None else calls.info, selected.isolation)
    known = _FINGERPRINTS.setdefault(selected, {})
    found = known.get(name)
    if found is not None and all(a is b for a, b in zip(found[0], made_of)):
        return found[1]
    fingerprint = _fingerprint(selected, name, row, calls)
    known[name] = (made_of, fingerprint)
    return fingerprint


def _fingerprint(selected: Any, name: str, row: Any, calls: Any) -> str | None:
    if row is None or calls is None or not _own_code(str(row.provider or "")) or name.startswith("source:"):
        return None  # a source: adapter runs a checkout's modules, of which it hashes one file
    if name.startswith("tiktoken-compatible:") and (row.provenance is None or not row.provenance.version):
        # a module that is no installed release is the user's work in progress, and what it
        # imports besides its own package is not hashed (an installed release's modules are)
        return None
    info = calls.info
    isolation = selected.isolation
    limits = None if isolation is None else (isolation.mode, isolation.timeout_s, isolation.memory_limit_mb)
    node = None
    if str(info.provider or "").startswith("Node environment "):
        from harness.worker.node import node_version

        node = node_version()  # V8's Unicode tables split a JavaScript port's pre-tokens
    return json.dumps({
        "name": name, "library": row.library, "version": row.version, "provider": row.provider,
        "encoding_spec": _encoding_digest(info.encoding),
        "provenance": row.provenance.to_json() if row.provenance is not None else None,
        "vocabulary": [list(v) for v in info.vocabulary], "encoding": info.encoding,
        "isolated": row.isolated, "limits": limits, "capabilities": _plain_text(info.capabilities),  # not repr: a frozenset's order is the process's
        "node": node,
    }, sort_keys=True, default=str)


#: id of an encoding's spec -> (the spec, the digest of it): a fingerprint is made per unit
#: and adapter, and o200k_harmony's spec holds 1,091 special tokens
_ENCODING_DIGESTS: dict[int, tuple[Any, str]] = {}


def _encoding_digest(encoding: str) -> str | None:
    """SHA-256 of the encoding's description (pattern, special tokens, rank file and its
    hash, normalization, reference): a user's ``--encoding-file`` may say another pattern
    under the same name, and every adapter of that encoding is built from it."""
    from harness.encodings import encoding_spec

    spec = encoding_spec(encoding)
    if spec is None:
        return None
    found = _ENCODING_DIGESTS.get(id(spec))
    if found is None or found[0] is not spec:
        found = _ENCODING_DIGESTS[id(spec)] = (spec, canonical(spec).hex())
    return found[1]


def _own_code(provider: str) -> bool:
    """Whether an adapter of ``provider`` runs only code this cache hashes: tokconf's own
    families (in this environment or another one tokconf made) and encoding files.

    >>> _own_code("entry point tiktoken = implementations.tiktoken_adapter:family")
    True
    >>> _own_code("entry point mine = my_package:family"), _own_code("plugin my.py:family"), _own_code("test")
    (False, False, False)
    """
    if provider.startswith("entry point "):
        target = provider.partition(" = ")[2]
        return target.startswith(("harness.", "implementations."))
    return provider.startswith(("environment ", "Node environment ", "--encoding"))


def canonical(value: Any) -> bytes:
    """A digest of plain data and frozen dataclasses that does not depend on the process
    (sets sorted, dataclasses by field, strings with their surrogates).

    >>> canonical({"b": frozenset({"y", "x"}), "a": (1, b"\\x00", None)}) == canonical({"a": (1, b"\\x00", None), "b": {"x", "y"}})
    True
    """
    return hashlib.sha256(_plain_text(value).encode("utf-8", "surrogatepass")).digest()


def _plain_text(value: Any) -> str:
    """``value`` as text that is the same in every process (see :func:`canonical`)."""
    if is_dataclass(value) and not isinstance(value, type):
        return type(value).__name__ + "(" + ",".join(f"{f.name}={_plain_text(getattr(value, f.name))}" for f in fields(value)) + ")"
    if isinstance(value, dict):
        return "{" + ",".join(sorted(f"{_plain_text(k)}:{_plain_text(v)}" for k, v in value.items())) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_plain_text(v) for v in value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_plain_text(v) for v in value) + "]"
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return repr(value)
    if isinstance(value, Enum):
        return repr(value)
    if isinstance(value, PurePath):  # a user's encoding file names its rank file by path
        return f"Path({str(value)!r})"
    raise TypeError(f"no canonical form for {type(value).__name__}")
