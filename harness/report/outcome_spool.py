"""A corpus run's per-input outcomes, spooled to sorted files in the run folder (issue 25).

``Runner.inputs`` keeps what every adapter answered on every input until the outcome log
is written (:mod:`harness.report.outcome_log`). For a corpus that is one entry per
document, so a client's memory grew with the corpus. While the corpus phase runs, the
runner hands each unit's inputs to an :class:`OutcomeSpool` instead:

- they are turned into the log's own records at once (outcomes as JSON, no objects kept)
  and buffered, ``buffer`` inputs at most;
- a full buffer is written, sorted, as one *run*: a gzip file of JSON lines in
  ``RUN/outcomes.spool/``;
- whenever the newest ``fan_in`` runs are of one level they are merged, by streaming,
  into one run of the next level (a tiered merge: a record is rewritten about
  ``log(documents / buffer) / log(fan_in)`` times, and at most ``fan_in`` runs per level
  are ever open);
- :func:`harness.report.outcome_log.write_outcome_log` merges the spool's runs with the
  in-memory inputs of the other phases into the one log, by streaming, and the spool
  folder is removed.

The client's memory is then one buffer plus one line per run being merged, whatever the
size of the corpus. Records of one input that arrive in several units are combined as
``Runner.apply`` combines them in memory: the first one's origin and case, the outcomes
of all (a later answer of the same adapter replaces an earlier one).
"""

from __future__ import annotations

import gzip
import heapq
import itertools
import io
import json
import shutil
from collections import Counter
from dataclasses import dataclass
from json.decoder import scanstring
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Mapping

__all__ = ["SPOOL_FOLDER", "OutcomeSpool", "Row", "combined", "combined_rows", "encode_json", "entry_line",
           "entry_of", "held_record", "pack_inputs", "record_key", "record_line", "record_of", "unpack_inputs",
           "write_record"]

SPOOL_FOLDER = "outcomes.spool"
BUFFER = 2048
FAN_IN = 16


def record_of(text: str, policy: Any, entry: Mapping[str, Any]) -> dict[str, Any]:
    """One input's entry of ``Runner.inputs`` as the outcome log's record (outcomes as JSON)."""
    record = held_record(text, policy, entry)
    return {**record, "outcomes": {a: encode_json(o) for a, o in record["outcomes"].items()}}


def entry_line(text: str, policy: Any, entry: Mapping[str, Any]) -> bytes:
    """``record_line(record_of(text, policy, entry))``, written as :func:`write_record`
    writes the log's: an outcome object that several adapters share (the runner keeps one
    for the adapters that agree) is encoded once. A corpus run makes one per document; the
    JSON of a 2 KB document's ~450 IDs is some 40 us here, more than the rest of its line.

    >>> from harness.cases.model import Policy
    >>> from harness.outcomes import Outcome
    >>> ids = Outcome.ok((6151, 0))
    >>> entry = {"origin": "corpus", "case": "c#0", "outcomes": {"t": ids, "h": ids, "x": Outcome.timeout(1)}}
    >>> entry_line("hi", Policy(), entry) == record_line(record_of("hi", Policy(), entry))
    True
    """
    out = io.BytesIO()
    write_record(out, held_record(text, policy, entry))
    return out.getvalue()


def encode_json(outcome: Any) -> dict[str, Any]:
    """:func:`~harness.golden.format.outcome_to_json` of an ``encode`` outcome of
    ``Runner.inputs``: IDs were checked to be exact ints when they were answered
    (:func:`harness.outcomes.checked`, on every executor), so they are listed without
    testing each element again (11 us for a document's 450 IDs).

    >>> from harness.outcomes import Outcome
    >>> encode_json(Outcome.ok((1, 2))), encode_json(Outcome.ok(())), encode_json(Outcome.timeout(1))
    ({'ok': [1, 2]}, {'ok': []}, {'timeout': [None, None]})
    """
    from harness.golden.format import outcome_to_json

    if outcome.is_ok and type(outcome.value) is tuple and outcome.value:
        return {"ok": list(outcome.value)}
    return outcome_to_json(outcome)


def held_record(text: str, policy: Any, entry: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`record_of` with the outcomes still :class:`~harness.outcomes.Outcome` objects,
    for :func:`write_record`, which turns each into JSON only when it writes it."""
    return {"text": text, "policy": policy.describe(), "origin": entry["origin"], "case": entry["case"],
            "outcomes": dict(sorted(entry["outcomes"].items()))}


def pack_inputs(inputs: Mapping[Any, Mapping[str, Any]]) -> bytes:
    """Inputs (``Runner.inputs``: ``(text, policy)`` -> origin, case, outcomes) as gzip JSON
    lines: the policies, then one outcome-log record per input, in order. What a Dask
    worker hands back for its shard's documents instead of pickled outcomes (the client
    then does not convert them) and what the run folder keeps of a done shard.

    >>> from harness.cases.model import Policy
    >>> from harness.outcomes import Outcome
    >>> inputs = {("hi", Policy()): {"origin": "corpus", "case": "c#0", "outcomes": {"t": Outcome.ok([6151])}}}
    >>> [line for line in gzip.decompress(pack_inputs(inputs)).decode().split("\\n") if line]
    ['{"policies":{"allowed={} disallowed=all":{"policy":[[],"all"]}}}', '{"text":"hi","policy":"allowed={} disallowed=all","origin":"corpus","case":"c#0","outcomes":{"t":{"ok":[6151]}}}']
    >>> [(key[0], entry_of(line)["outcomes"]) for key, _, line in unpack_inputs(pack_inputs(inputs))]
    [('hi', {'t': Outcome(kind='ok', value=(6151,), category=None, native_type=None, message=None)})]
    """
    from harness.worker.protocol import encode_value

    policies = {policy.describe(): encode_value(policy) for _, policy in inputs}
    buffer = io.BytesIO()
    # level 1, as the spool's own runs: read once, by the client or by --resume
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=1, mtime=0) as out:
        out.write(record_line({"policies": policies}))
        for (text, policy), entry in inputs.items():
            out.write(entry_line(text, policy, entry))
    return buffer.getvalue()


def unpack_inputs(data: bytes) -> Iterator[tuple[tuple[str, Any], str, bytes]]:
    """:func:`pack_inputs`'s inputs back, in order: ``(text, policy)``, the policy as the
    line spells it, and the record's line (:func:`entry_of` makes it an input's entry)."""
    from harness.worker.protocol import decode_value

    lines = gzip.decompress(data).split(b"\n")
    header = json.loads(lines[0])
    policies = {described: decode_value(policy) for described, policy in header["policies"].items()}
    for line in lines[1:]:
        if line:
            text, described = line_key(line)
            yield (text, policies[described]), described, line + b"\n"


def entry_of(line: bytes) -> dict[str, Any]:
    """A record's line as an entry of ``Runner.inputs``: origin, case and the outcomes as
    :class:`~harness.outcomes.Outcome` (without their messages, which the log never shows)."""
    from harness.golden.format import outcome_from_json

    record = json.loads(line)
    return {"origin": record["origin"], "case": record["case"],
            "outcomes": {a: outcome_from_json(o) for a, o in record["outcomes"].items()}}


def record_line(record: Mapping[str, Any]) -> bytes:
    """One JSON line of an outcome file: ASCII with escapes, so a lone surrogate of an
    input survives the round trip."""
    return _dumps(record) + b"\n"


def write_record(out: IO[bytes], record: Mapping[str, Any]) -> None:
    """Write :func:`record_line` of ``record`` one outcome at a time: the same bytes.

    A long input's record is ~10^5 IDs per adapter: as one JSON value with its lists of
    ints it took 90 MB of a default run's report phase (issue 25). Here an outcome that
    is still an :class:`~harness.outcomes.Outcome` (:func:`held_record`) becomes JSON when
    it is written, and one object that the adapters which agree share is encoded once.

    >>> import io
    >>> record = {"text": "a", "policy": "ordinary", "origin": "case", "case": None,
    ...           "outcomes": {"h": {"ok": [1]}, "t": {"ok": [1]}}}
    >>> out = io.BytesIO(); write_record(out, record); out.getvalue() == record_line(record)
    True
    >>> long = {**record, "text": "a" * 5000}  # written piece by piece
    >>> out = io.BytesIO(); write_record(out, long); out.getvalue() == record_line(long)
    True
    """
    from harness.outcomes import Outcome

    encoded: dict[int, bytes] = {}  # id(outcome) -> its JSON, for an object more adapters share
    parts: list[bytes] = []  # written together: a gzip write per piece cost more than the JSON
    held = 0
    comma = b"{"
    for field, value in record.items():
        parts.append(comma + _dumps(field) + b":")
        comma = b","
        if field != "outcomes":
            parts.append(_dumps(value))
            continue
        shared = Counter(id(outcome) for outcome in value.values())
        inner = b"{"
        for adapter, outcome in value.items():
            line = encoded.get(id(outcome))
            if line is None:
                line = _dumps(encode_json(outcome) if isinstance(outcome, Outcome) else outcome)
                if shared[id(outcome)] > 1:  # the record holds the object: its id stays its own
                    encoded[id(outcome)] = line
            parts.append(inner + _dumps(adapter) + b":" + line)
            inner = b","
            held += len(line)
            if held > _HELD_BYTES:  # a long input: out with it before the next adapter's
                out.write(b"".join(parts))
                parts.clear()
                held = 0
        parts.append(b"{}" if inner == b"{" else b"}")
    parts.append((b"{}" if comma == b"{" else b"}") + b"\n")
    out.write(b"".join(parts))


#: bytes of JSON a record holds before writing them (a long input's, adapter by adapter)
_HELD_BYTES = 1 << 16


#: one encoder for every record: ``json.dumps`` with options makes a new one per call,
#: 1.4 us of a short record's 5.6 us here, paid once per document of a corpus run
_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def _dumps(value: Any) -> bytes:
    return _ENCODER.encode(value).encode("ascii")


def combined(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Sorted records with each (text, policy) once: the first's origin and case, every
    record's outcomes (a later one wins per adapter), adapters in sorted order.

    >>> rows = [{"text": "a", "policy": "p", "origin": "case", "case": "x", "outcomes": {"t": [1]}},
    ...         {"text": "a", "policy": "p", "origin": "corpus", "case": "y", "outcomes": {"h": [2]}},
    ...         {"text": "b", "policy": "p", "origin": "corpus", "case": "z", "outcomes": {"t": [3]}}]
    >>> [(r["text"], r["case"], r["outcomes"]) for r in combined(rows)]
    [('a', 'x', {'h': [2], 't': [1]}), ('b', 'z', {'t': [3]})]
    """
    for _, group in itertools.groupby(records, key=record_key):
        first = next(group)
        outcomes = dict(first["outcomes"])
        for later in group:
            outcomes.update(later["outcomes"])
        yield {**first, "outcomes": dict(sorted(outcomes.items()))}


def record_key(record: Mapping[str, Any]) -> tuple[str, str]:
    """What the outcome log is sorted by, and one input is: (text, policy)."""
    return record["text"], record["policy"]


#: a spooled input: its key, its log line (b"": not made), and its record when at hand (else None)
Row = tuple[tuple[str, str], bytes, "dict[str, Any] | None"]


@dataclass(frozen=True)
class _Run:
    path: Path
    level: int


class OutcomeSpool:
    """Sorted runs of outcome records in ``folder``; :meth:`rows` streams them merged.

    Records are held and written as their log lines (:func:`record_line`): a line is made
    once, when the record arrives (or comes made, from a worker: :meth:`add_line`), and
    copied through every merge and into the log; only inputs that arrive more than once
    are parsed and combined again."""

    def __init__(self, folder: Path, *, buffer: int = BUFFER, fan_in: int = FAN_IN) -> None:
        if buffer < 1 or fan_in < 2:
            raise ValueError(f"an outcome spool needs buffer >= 1 and fan_in >= 2, got {buffer} and {fan_in}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.buffer = buffer
        self.fan_in = fan_in
        #: (text, policy) -> log line: the inputs not written yet
        self.pending: dict[tuple[str, str], bytes] = {}
        #: written runs, oldest first (so their order is the order records arrived in)
        self.runs: list[_Run] = []
        self._names = itertools.count()
        #: records handed in (an input handed in twice counts twice)
        self.added = 0
        #: whether ``Runner.apply`` sends inputs here: only while the corpus phase runs
        self.receiving = False

    def add_input(self, key: tuple[str, Any], entry: Mapping[str, Any]) -> None:
        """One entry of ``Runner.inputs`` (``(text, policy)`` and its outcomes)."""
        text, policy = key
        self.add_line((text, policy.describe()), entry_line(text, policy, entry))

    def add(self, record: dict[str, Any]) -> None:
        """One record (:func:`record_of`); an input seen before in the buffer is combined."""
        self.add_line(record_key(record), record_line(record), record)

    def add_line(self, key: tuple[str, str], line: bytes, record: dict[str, Any] | None = None) -> None:
        """One record as its log line (``key``: its text and policy as the line spells
        them; ``record``: the line parsed, if at hand)."""
        self.added += 1
        held = self.pending.get(key)
        if held is None:
            self.pending[key] = line
        else:
            first = json.loads(held)
            later = record if record is not None else json.loads(line)
            self.pending[key] = record_line(next(combined([first, later])))
        if len(self.pending) >= self.buffer:
            self.flush()

    def add_packed(self, data: bytes, held: Mapping[Any, Any]) -> dict[Any, dict]:
        """Spool inputs :func:`pack_inputs` packed, as their lines, except those ``held``
        (``Runner.inputs``) has already, the cases having seen them first: those come
        back as entries (:func:`entry_of`) for ``Runner.apply`` to combine as it combines
        unpacked ones."""
        rest: dict[Any, dict] = {}
        for key, described, line in unpack_inputs(data):
            if key in held:
                rest[key] = entry_of(line)
            else:
                self.add_line((key[0], described), line)
        return rest

    def flush(self) -> None:
        """Write the buffer as a run, then merge runs while the newest ``fan_in`` share a level."""
        if not self.pending:
            return
        lines = [self.pending[key] for key in sorted(self.pending)]
        self.pending = {}
        self.runs.append(_Run(self._write(lines), 0))
        while len(self.runs) >= self.fan_in and len({r.level for r in self.runs[-self.fan_in:]}) == 1:
            group = self.runs[-self.fan_in:]
            merged = self._write(line or record_line(record) for _, line, record in combined_rows(_merge(group)))
            for run in group:
                run.path.unlink()
            self.runs[-self.fan_in:] = [_Run(merged, group[0].level + 1)]

    def rows(self) -> Iterator[Row]:
        """Every input's :data:`Row`, sorted by (text, policy), each input once."""
        self.flush()
        return combined_rows(_merge(self.runs))

    def records(self) -> Iterator[dict[str, Any]]:
        """Every record, sorted by (text, policy), each input once (:func:`combined`)."""
        for _, line, record in self.rows():
            yield record if record is not None else json.loads(line)

    def close(self) -> None:
        """Remove the spool's folder (after the log is written, or when the run gives up)."""
        self.pending = {}
        self.runs = []
        shutil.rmtree(self.folder, ignore_errors=True)

    def _write(self, lines: Iterable[bytes]) -> Path:
        path = self.folder / f"{next(self._names):08d}.jsonl.gz"
        # compresslevel 1: these files live for one run; speed matters more than size
        with gzip.open(path, "wb", compresslevel=1) as out:
            for chunk in _chunks(lines):
                out.write(chunk)
        return path


def _chunks(lines: Iterable[bytes], size: int = 1 << 16) -> Iterator[bytes]:
    """``lines`` joined into chunks of about ``size`` bytes: one gzip write per chunk, not
    per line (a write costs more than a short line's compression)."""
    held: list[bytes] = []
    count = 0
    for line in lines:
        held.append(line)
        count += len(line)
        if count >= size:
            yield b"".join(held)
            held, count = [], 0
    if held:
        yield b"".join(held)


def combined_rows(rows: Iterable[Row]) -> Iterator[Row]:
    """:func:`combined` on rows: an input met once keeps its line as it is; one met more
    than once is combined from the records (its lines parsed) and comes without a line
    (its outcomes may be :class:`~harness.outcomes.Outcome` objects of a held record,
    which :func:`write_record` writes)."""
    for key, group in itertools.groupby(rows, key=lambda row: row[0]):
        first = next(group)
        more = list(group)
        if not more:
            yield first
            continue
        yield key, b"", next(combined(r if r is not None else json.loads(line) for _, line, r in (first, *more)))


def _merge(runs: list[_Run]) -> Iterator[Row]:
    """The runs' rows in (text, policy) order; equal keys in run order (heapq.merge is stable)."""
    return heapq.merge(*(_read(run.path) for run in runs), key=lambda row: row[0])


def _read(path: Path) -> Iterator[Row]:
    with gzip.open(path, "rb") as handle:
        for line in handle:
            # the record is not kept: a row waiting in the merge holds its line only
            yield line_key(line), line, None


_PREFIX = '{"text":"'
_MIDDLE = ',"policy":"'


def line_key(line: bytes) -> tuple[str, str]:
    """(text, policy) of a :func:`record_line`, read from its first two fields without
    parsing its outcomes (a line is ASCII, its fields in :func:`held_record`'s order).

    >>> line_key(record_line({"text": 'say "é"', "policy": "p", "origin": "corpus", "outcomes": {"t": {"ok": [1]}}}))
    ('say "é"', 'p')
    """
    head = line[:4096].decode("ascii", "replace")
    if head.startswith(_PREFIX):
        try:
            text, end = scanstring(head, len(_PREFIX))
            if head.startswith(_MIDDLE, end):
                policy, _ = scanstring(head, end + len(_MIDDLE))
                return text, policy
        except ValueError:
            pass  # a text longer than the head: parse the line
    record = json.loads(line)
    return record["text"], record["policy"]
