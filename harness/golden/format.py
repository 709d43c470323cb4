"""The golden file: gzip-compressed JSON Lines, versioned, streamed, written atomically.

Line 1, the **header**::

    {"format": "tokconf-golden", "version": 1, "created": ISO-8601, "tool": {"version"},
     "adapters": [{"name", "encoding", "library", "version", "provider",
                   "attributes": {PATH: OUTCOME}}],
     "vocabularies": {FILE: SHA256}, "inputs": {"sources": [...], "options": {...}}}

then one line per **input**::

    {"n": N, "source": "case:ID" | "generated:N" | "long:..." | "corpus:FILE#DOC@BYTE",
     "text": VALUE, "values": [OUTCOME, ...], "outcomes": {ADAPTER: {PATH: INDEX}}}

and a last **trailer** line ``{"end": COUNT}``: a file without it was cut short and is
refused. ``VALUE`` is the worker protocol's value encoding
(:func:`harness.worker.protocol.encode_value`: text with surrogates exact, bytes as
base64); an ``OUTCOME`` is ``{"ok": VALUE}`` or ``{"raised": [CATEGORY, NATIVE_TYPE]}``
(``timeout``/``crashed`` likewise; messages are not kept: they hold addresses and vary).
Within an input, equal outcomes are stored once in ``values`` and paths point at them;
a value that is an earlier value in a one-element list (``encode_batch([t])``) is
``{"wrap": I}``, one that is the distinct IDs of an earlier value in first-seen order
(``encode_single_token`` of each piece) is ``{"distinct": I}``; the bytes of each distinct
token, cut from an earlier (joined bytes, lengths) value along earlier IDs, is
``{"slices": [IDS, PIECES]}``; offsets computed from such a value as tiktoken's
``decode_with_offsets`` documents are ``{"offsets": PIECES, "text": VALUE}`` (a
reference is written only when it rebuilds the value exactly); and a value equal to the
input's own text (or its UTF-8 bytes) is written ``{"=": "text"}`` (``{"=": "bytes"}``):
most paths of most adapters give the same IDs, and decoding gives the input back.
Measured: see README ("Gating an upgrade").
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterator

from harness.atomic import open_atomic
from harness.outcomes import Outcome, ints_only, is_ids
from harness.worker.protocol import ProtocolError, decode_value, encode_value

__all__ = ["FORMAT", "VERSION", "GoldenAdapter", "GoldenError", "GoldenHeader", "GoldenInput", "GoldenWriter",
           "read_golden"]

FORMAT = "tokconf-golden"
VERSION = 1


class GoldenError(Exception):
    """A golden that cannot be read; the message names the file and the fix."""


@dataclass(frozen=True)
class GoldenAdapter:
    name: str
    encoding: str
    library: str
    version: str | None
    provider: str = ""
    attributes: dict[str, Outcome] = field(default_factory=dict)


@dataclass(frozen=True)
class GoldenHeader:
    adapters: tuple[GoldenAdapter, ...]
    vocabularies: dict[str, str]
    inputs: dict[str, Any]
    created: str = ""
    tool_version: str = ""


@dataclass(frozen=True)
class GoldenInput:
    number: int
    source: str
    text: str
    outcomes: dict[str, dict[str, Outcome]]


# -- outcomes --------------------------------------------------------------------------------


def _swap(value: Any, text: str, raw: bytes) -> Any:
    if isinstance(value, str) and value == text and text:
        return {"=": "text"}
    if isinstance(value, bytes) and value == raw and raw:
        return {"=": "bytes"}
    if isinstance(value, tuple) and value:
        if ints_only(value):  # IDs, the common case: what encode_value makes of them, tested once
            return list(value)
        return [_swap(v, text, raw) for v in value]
    return encode_value(value)


def _unswap(data: Any, text: str, raw: bytes) -> Any:
    if isinstance(data, dict) and "=" in data:
        return text if data["="] == "text" else raw
    if isinstance(data, list) and data and not ints_only(data):
        return tuple(_unswap(v, text, raw) for v in data)
    return decode_value(data)


def outcome_to_json(outcome: Outcome, text: str = "", raw: bytes = b"") -> dict[str, Any]:
    if outcome.is_ok:
        return {"ok": _swap(outcome.value, text, raw)}
    return {outcome.kind: [outcome.category, outcome.native_type]}


def outcome_from_json(data: dict[str, Any], text: str = "", raw: bytes = b"") -> Outcome:
    if "ok" in data:
        return Outcome.ok(_unswap(data["ok"], text, raw))
    for kind in ("raised", "timeout", "crashed"):
        if kind in data:
            category, native = data[kind]
            return Outcome(kind=kind, category=category, native_type=native)  # type: ignore[arg-type]
    raise GoldenError(f"an outcome with none of ok, raised, timeout, crashed: {sorted(data)}")


# -- writing ---------------------------------------------------------------------------------


class GoldenWriter:
    """``with GoldenWriter(path, header) as w: w.add(...)``; the file appears only whole."""

    def __init__(self, path: str | os.PathLike[str], header: GoldenHeader) -> None:
        self.path = path
        self.header = header
        self.count = 0
        self._atomic: Any = None
        self._gzip: Any = None

    def __enter__(self) -> GoldenWriter:
        self._atomic = open_atomic(self.path)
        handle: BinaryIO = self._atomic.__enter__()
        # mtime=0: the same golden twice is the same bytes
        self._gzip = gzip.GzipFile(fileobj=handle, mode="wb", compresslevel=6, mtime=0)
        h = self.header
        self._line({"format": FORMAT, "version": VERSION, "created": h.created, "tool": {"version": h.tool_version},
                    "adapters": [{"name": a.name, "encoding": a.encoding, "library": a.library, "version": a.version,
                                  "provider": a.provider,
                                  "attributes": {p: outcome_to_json(o) for p, o in a.attributes.items()}}
                                 for a in h.adapters],
                    "vocabularies": h.vocabularies, "inputs": h.inputs})
        return self

    def _line(self, record: dict[str, Any]) -> None:
        self._gzip.write(json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n")

    def add(self, source: str, text: str, outcomes: dict[str, dict[str, Outcome]]) -> None:
        raw = text.encode("utf-8", "surrogatepass")
        values: list[dict[str, Any]] = []
        ids: list[tuple[int, tuple[int, ...]]] = []  # stored ID lists, for {"distinct": I}
        pieces: list[tuple[int, Any]] = []  # stored (joined bytes, lengths), for slices and offsets
        index: dict[Any, int] = {}
        table: dict[str, dict[str, int]] = {}
        for adapter, paths in outcomes.items():
            row = table.setdefault(adapter, {})
            for path, outcome in paths.items():
                # what is stored: the value, or kind + category + native type (no message)
                key: Any = (outcome.kind, outcome.value) if outcome.is_ok else (outcome.kind, outcome.category,
                                                                                 outcome.native_type)
                try:
                    known = index.get(key)
                except TypeError:  # an unhashable value
                    key, known = json.dumps(outcome_to_json(outcome), sort_keys=True), None
                    known = index.get(key)
                if known is None:
                    known = index[key] = len(values)
                    derived = _derived(outcome, index, ids, pieces)
                    if derived is not None and "text" in derived:
                        derived["text"] = _swap(derived["text"], text, raw)
                    values.append(derived or outcome_to_json(outcome, text, raw))
                    if outcome.is_ok and is_ids(outcome.value) and len(outcome.value) > 1:
                        ids.append((known, outcome.value))
                    if outcome.is_ok and _is_pieces(outcome.value):
                        pieces.append((known, outcome.value))
                row[path] = known
        self._line({"n": self.count, "source": source, "text": encode_value(text), "values": values, "outcomes": table})
        self.count += 1

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        try:
            if kind is None:
                self._line({"end": self.count})
            self._gzip.close()
        finally:
            self._atomic.__exit__(kind, exc, tb)


def _is_pieces(value: Any) -> bool:
    return (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bytes) and is_ids(value[1])
            and sum(value[1]) == len(value[0]))


def _slices(id_list: tuple[int, ...], pieces: Any) -> tuple[bytes, ...]:
    """Each distinct ID's bytes, cut from (joined, lengths) at its first occurrence."""
    joined, lengths = pieces
    out: dict[int, bytes] = {}
    at = 0
    for token_id, length in zip(id_list, lengths):
        out.setdefault(token_id, joined[at:at + length])
        at += length
    return tuple(out.values())


def _offsets(pieces: Any) -> tuple[int, ...]:
    """Offsets as tiktoken's ``decode_with_offsets`` defines them (a continuation byte first:
    the character it belongs to)."""
    joined, lengths = pieces
    offsets, text_len, at = [], 0, 0
    for length in lengths:
        token = joined[at:at + length]
        at += length
        offsets.append(max(0, text_len - (1 if token and 0x80 <= token[0] < 0xC0 else 0)))
        text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
    return tuple(offsets)


def _derived(outcome: Outcome, index: dict[Any, int], ids: list[tuple[int, tuple[int, ...]]],
             pieces: list[tuple[int, Any]] = ()) -> dict[str, Any] | None:  # type: ignore[assignment]
    """A reference when the value is made from earlier ones (see the module docstring)."""
    if not outcome.is_ok or not isinstance(outcome.value, tuple):
        return None
    value = outcome.value
    if value and all(isinstance(v, bytes) for v in value):
        for i, id_list in ids:
            for j, stored in pieces:
                if len(stored[1]) == len(id_list) and _slices(id_list, stored) == value:
                    return {"slices": [i, j]}
    if len(value) == 2 and isinstance(value[0], str) and is_ids(value[1]):
        for j, stored in pieces:
            if len(stored[1]) == len(value[1]) and _offsets(stored) == value[1]:
                return {"offsets": j, "text": value[0]}
    if len(value) == 1:
        try:
            inner = index.get(("ok", value[0]))
        except TypeError:
            inner = None
        if inner is not None:
            return {"wrap": inner}
    if is_ids(value) and len(value) > 1:
        for i, stored in ids:
            if len(stored) >= len(value) and tuple(dict.fromkeys(stored)) == value:
                return {"distinct": i}
    return None


def _resolve(data: dict[str, Any], earlier: list[Outcome], text: str, raw: bytes) -> Outcome:
    if "slices" in data:
        i, j = data["slices"]
        return Outcome.ok(_slices(earlier[i].value, earlier[j].value))
    if "offsets" in data:
        return Outcome.ok((_unswap(data["text"], text, raw), _offsets(earlier[data["offsets"]].value)))
    if "wrap" in data:
        return Outcome.ok((earlier[data["wrap"]].value,))
    if "distinct" in data:
        return Outcome.ok(tuple(dict.fromkeys(earlier[data["distinct"]].value)))
    return outcome_from_json(data, text, raw)


# -- reading ---------------------------------------------------------------------------------


def read_golden(path: str | os.PathLike[str]) -> tuple[GoldenHeader, Iterator[GoldenInput]]:
    """The header, and the inputs lazily (the last one checks the trailer)."""
    try:
        handle = gzip.open(path, "rb")
        first = handle.readline()
    except (OSError, EOFError) as exc:
        raise GoldenError(f"cannot read golden {path}: {exc}; {_make_one_hint(path)}") from exc
    try:
        header = json.loads(first)
    except ValueError as exc:
        raise GoldenError(f"{path} is not a tokconf golden (its first line is not JSON)") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise GoldenError(f"{path} is not a tokconf golden (format {header.get('format') if isinstance(header, dict) else None!r})")
    if header.get("version") != VERSION:
        raise GoldenError(f"{path} has golden format version {header.get('version')}; this tokconf reads {VERSION}: "
                          f"make it again with `tokconf snapshot`")
    adapters = tuple(GoldenAdapter(a["name"], a["encoding"], a["library"], a["version"], a.get("provider", ""),
                                   {p: outcome_from_json(o) for p, o in a.get("attributes", {}).items()})
                     for a in header["adapters"])
    parsed = GoldenHeader(adapters=adapters, vocabularies=header.get("vocabularies", {}),
                          inputs=header.get("inputs", {}), created=header.get("created", ""),
                          tool_version=header.get("tool", {}).get("version", ""))
    return parsed, _inputs(handle, str(path))


def _make_one_hint(path: str | os.PathLike[str]) -> str:
    """How to get a golden, never by overwriting a file that is not one (``gate /bin/ls``)."""
    if os.path.exists(path):
        return ("it is not a tokconf golden (those are gzip files written by `tokconf snapshot`); give the "
                "golden's path, or make one under a new name: `tokconf snapshot -o golden.tokconf`")
    return f"make one with `tokconf snapshot -o {path}`"


def _inputs(handle: Any, path: str) -> Iterator[GoldenInput]:
    count = 0
    try:
        for line in handle:
            record = json.loads(line)
            if "end" in record:
                if record["end"] != count:
                    raise GoldenError(f"{path}: the trailer says {record['end']} inputs, the file holds {count}")
                return
            text = decode_value(record["text"])
            raw = text.encode("utf-8", "surrogatepass")
            values: list[Outcome] = []
            for v in record["values"]:
                values.append(_resolve(v, values, text, raw))
            outcomes = {a: {p: values[i] for p, i in paths.items()} for a, paths in record["outcomes"].items()}
            yield GoldenInput(record["n"], record["source"], text, outcomes)
            count += 1
    except (OSError, EOFError, ValueError, KeyError, IndexError, ProtocolError) as exc:
        raise GoldenError(f"{path} is damaged after {count} inputs ({type(exc).__name__}: {exc}); "
                          f"make it again with `tokconf snapshot`") from exc
    finally:
        handle.close()
    raise GoldenError(f"{path} ends without its trailer after {count} inputs: it was cut short; "
                      f"make it again with `tokconf snapshot`")
