"""vocabulary-consistency: the vocabulary as a whole, probed once per adapter.

First, for a library that bundles its own rank tables (the JavaScript packages declare
them in :attr:`harness.calls.AdapterInfo.vocabulary`: the SHA-256 of the table written in
the pinned file's format), the table must be the pinned one; kind
``rank-table:<file>`` otherwise. Then three properties, on a deterministic sample of IDs
(:func:`probe_ids`):

1. **special IDs are unique and disjoint from ordinary ones**: no two literals share an
   ID; decoding a special ID gives its literal; encoding the literal as ordinary text
   (``disallowed_special=()``) gives no special ID (skipped for ``always-special``
   adapters, which by declaration cannot encode a literal as text). Kinds
   ``special-duplicate``, ``special-decode`` (wrong bytes) or ``special-decode:<shape>``
   (decoding it raised), ``special-ordinary``.
2. **an ID's piece is what decoding the ID gives**: ``token_bytes(i) ==
   decode_bytes([i])``. Kind ``piece``.
3. **every ID round-trips**: the text of a token (the reference's bytes for that ID,
   when they are valid UTF-8) encodes to the same IDs with this adapter as with the
   reference (for the reference itself: encodes to IDs that decode back to the
   token). This is what finds a merges file that lost its last rule: the last
   merges are probed on purpose, and the token they make stops coming out whole.
   Kinds as in id-parity (``segmentation``, ``content``) and ``token-round-trip``.

The sample: every single-byte ID, the 64 IDs below the end of the ordinary vocabulary
(the last merges, where file-format slips bite), ~512 IDs spread evenly, and each special
ID. The end of the ordinary vocabulary is found by probing the reference's
``token_bytes`` (exponential then binary search), so no adapter needs a vocabulary-size
method.
"""

from __future__ import annotations

from typing import Iterator

from harness.calls import Calls
from harness.checks.base import ORDINARY, Finding, Subject, shape
from harness.checks.ids import compare_ids
from harness.outcomes import Outcome

__all__ = ["VocabReport", "check_vocab", "ordinary_end", "probe_ids"]

CHECK = "vocab-consistency"


def ordinary_end(calls: Calls, *, limit: int = 1 << 24) -> int:
    """An ID past the ordinary vocabulary: the first non-special ID whose piece fails.

    Exponential search from 256, then binary search; gaps may make it land on an
    earlier hole, which is fine for choosing probes.
    """
    specials = calls.info.special_ids

    def present(i: int) -> bool:
        return i in specials or calls.token_bytes(i).is_ok

    if not present(0):
        return 0
    low, high = 0, 256
    while high < limit and present(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if present(middle):
            low = middle
        else:
            high = middle
    return high


def probe_ids(calls: Calls) -> list[int]:
    """The IDs the check probes for this (reference) adapter, in order."""
    end = ordinary_end(calls)
    specials = calls.info.special_ids
    ids = set(range(min(256, end)))
    ids.update(range(max(0, end - 64), end))
    ids.update(range(0, end, max(1, end // 512)))
    ids.update(specials)
    return sorted(i for i in ids if i >= 0)


class VocabReport:
    """What the check saw: how many probes ran and the findings, shortest input first."""

    def __init__(self) -> None:
        self.inputs = 0
        self.findings: list[Finding] = []

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)

    def sorted_findings(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: (len(f.text), f.text))


def check_vocab(adapter: Calls, reference: Calls, *, max_findings: int = 50) -> VocabReport:
    """Run the properties for ``adapter`` against ``reference`` (may be itself): the
    bundled rank tables first, then the three properties."""
    report = VocabReport()
    for finding in _rank_tables(adapter, report):
        report.add(finding)
    for finding in _specials(adapter, report):
        report.add(finding)
    for token_id in probe_ids(reference):
        if len(report.findings) >= max_findings:
            break
        report.inputs += 1
        finding = _probe(adapter, reference, token_id)
        if finding is not None:
            report.add(finding)
    return report


def _rank_tables(adapter: Calls, report: VocabReport) -> Iterator[Finding]:
    """A library that bundles its own ranks (:attr:`AdapterInfo.vocabulary`) must bundle
    the pinned ones: a table that hashes differently is reported as what it is, a
    different vocabulary, before any of its IDs are blamed on the encoder."""
    from harness.vocab import VOCAB_FILES

    for file, digest in adapter.info.vocabulary:
        spec = VOCAB_FILES.get(file)
        if spec is None:
            continue  # nothing pinned to compare with; parity.json still records the hash
        report.inputs += 1
        if digest != spec.sha256:
            yield Finding(adapter.name, CHECK, f"rank-table:{file}",
                          f"the rank table {adapter.info.library or adapter.name} bundles, written as {file}, "
                          f"hashes to {digest}; the pinned {file} is {spec.sha256}: it is another vocabulary, "
                          "so its IDs differ for that reason", "", shrinkable=False)


def _specials(adapter: Calls, report: VocabReport) -> Iterator[Finding]:
    info = adapter.info
    if info.special_tokens_error is not None:
        report.inputs += 1
        yield Finding(adapter.name, CHECK, "special-tokens:failed",
                      f"special_tokens failed: {info.special_tokens_error}; its special literals are "
                      "unknown, so no check could treat them as specials", "", shrinkable=False)
    by_id: dict[int, str] = {}
    for literal, token_id in info.special_tokens:
        report.inputs += 1
        if token_id in by_id:
            yield Finding(info.name, CHECK, "special-duplicate",
                          f"special literals {by_id[token_id]!r} and {literal!r} share ID {token_id}",
                          literal, decode_ids=(token_id,))
            continue
        by_id[token_id] = literal
        piece = adapter.token_bytes(token_id)
        if not (piece.is_ok and piece.value == literal.encode("utf-8")):
            yield Finding(info.name, CHECK, "special-decode" if piece.is_ok else f"special-decode:{shape(piece)}",
                          f"special ID {token_id} decodes to {piece.describe()}, not {literal!r}",
                          literal, outcomes=((info.name, piece), ("expected", Outcome.ok(literal.encode("utf-8")))),
                          decode_ids=(token_id,))
            continue
        if info.capabilities.special_policy == "always-special":
            continue
        adapter.reset()
        ordinary = adapter.encode(literal, ORDINARY)
        if ordinary.is_ok and set(ordinary.value) & info.special_ids:
            yield Finding(info.name, CHECK, "special-ordinary",
                          f"encoding {literal!r} as ordinary text gives special IDs {ordinary.describe()}",
                          literal, policy=ORDINARY, outcomes=((info.name, ordinary),),
                          ids=((info.name, ordinary.value),))


def _probe(adapter: Calls, reference: Calls, token_id: int) -> Finding | None:
    name = adapter.name
    piece = adapter.token_bytes(token_id)
    if piece.is_ok and token_id not in adapter.info.special_ids:
        whole = adapter.decode_bytes((token_id,))
        if not whole.same_as(piece):
            return Finding(name, CHECK, "piece",
                           f"token_bytes({token_id}) is {piece.describe()}, decode_bytes([{token_id}]) "
                           f"{whole.describe()}", "",
                           outcomes=((f"{name} token_bytes", piece), (f"{name} decode_bytes", whole)),
                           decode_ids=(token_id,))
    ref_piece = reference.token_bytes(token_id)
    if not ref_piece.is_ok or token_id in reference.info.special_ids:
        return None
    try:
        text = ref_piece.value.decode("utf-8")
    except UnicodeDecodeError:
        return None  # a partial character has no text to encode
    adapter.reset()
    reference.reset()
    if not (adapter.in_domain(text) and reference.in_domain(text)):
        return None  # a closed vocabulary's token outside its own domain (a lone byte)
    subject = Subject(text, ORDINARY, adapter, reference)
    if subject.is_reference:
        return _self_round_trip(subject, ref_piece.value)
    result = compare_ids(subject, CHECK)
    return result if isinstance(result, Finding) else None


def _self_round_trip(subject: Subject, piece: bytes) -> Finding | None:
    got = subject.adapter.encode(subject.text, ORDINARY)
    if not got.is_ok:
        return subject.finding(CHECK, f"token-round-trip:{got.kind}", f"encoding a token's own text failed: {got.describe()}",
                               outcomes=((subject.name, got),))
    back = subject.adapter.decode_bytes(got.value)
    if back.is_ok and back.value == piece:
        return None
    return subject.finding(CHECK, "token-round-trip",
                           f"the token text {subject.text!r} encodes to {got.describe()}, which decodes to {back.describe()}",
                           outcomes=((subject.name, back), ("expected", Outcome.ok(piece))),
                           ids=((subject.name, got.value),))
