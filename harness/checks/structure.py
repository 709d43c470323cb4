"""Checks an adapter can fail on its own: batch vs single, and pre-token coverage.

**batch**: ``encode_batch([t, t[:half], ""])`` equals encoding each text alone, IDs and
error categories alike (kinds ``ids``, ``<batch shape>|<single shape>``). Adapters
without ``Capabilities.batch`` are *unsupported*, not failures. A task's batches are first
asked in one call (:func:`harness.run.prefetch.prefetch_batches`); a batch whose share
there does not agree is asked on its own, and that answer is judged.

**pretokenize-coverage**: the pre-token chunks concatenate back to the input. A custom
pattern that does not cover every character lets ``findall`` drop text silently, and the
round trip is lost before BPE starts (seed 003). Surrogates are compared after
:func:`~harness.checks.base.expected_text`, since tiktoken's pre-tokenizer sees the text
with surrogates already resolved, or as UTF-16 holds them (:func:`~harness.checks.base.utf16_text`:
a JavaScript adapter's chunks, where a high and a low surrogate are one character). Kinds ``coverage`` and the failed call's shape,
``raised:<category>`` (a pre-tokenizer that raises where encode does not; an adapter that
refuses the text in both is left to error-category), ``timeout`` or ``crashed:<cause>``.
"""

from __future__ import annotations

from harness.checks.base import AGREE, ORDINARY, SKIP, UNSUPPORTED, Result, Subject, expected_text, shape, utf16_text
from harness.outcomes import Outcome

__all__ = ["batch_texts", "check_batch", "check_pretokenize_coverage"]


def batch_texts(text: str) -> tuple[str, ...]:
    """The batch the check sends: the input, its first half, and the empty string.

    >>> batch_texts("abcd")
    ('abcd', 'ab', '')
    """
    return (text, text[: len(text) // 2], "")


def check_batch(subject: Subject) -> Result:
    adapter = subject.adapter
    if not adapter.info.capabilities.batch:
        return UNSUPPORTED
    texts = batch_texts(subject.text)
    # the share of a task's batches asked together (harness.run.prefetch.prefetch_batches):
    # when it agrees, this batch would have; else this batch is asked and judged
    merged = adapter.found_ahead(("batched", texts, subject.policy))
    if merged is not None:
        alone = [adapter.encode(t, subject.policy) for t in texts]
        if all(o.is_ok for o in alone) and tuple(o.value for o in alone) == merged.value:
            return AGREE
    together = adapter.encode_batch(texts, subject.policy)
    if together.is_unsupported:
        return UNSUPPORTED
    alone = [adapter.encode(t, subject.policy) for t in texts]
    name = subject.name
    if together.is_ok:
        if all(o.is_ok for o in alone) and tuple(o.value for o in alone) == together.value:
            return AGREE
        for i, (batched, single) in enumerate(zip(together.value, alone)):
            if not (single.is_ok and tuple(batched) == single.value):
                return subject.finding(
                    "batch", "ids" if single.is_ok else f"ok|{shape(single)}",
                    f"text {i} of the batch: encode_batch gives {list(batched)}, encode gives "
                    f"{single.describe()}",
                    outcomes=((f"{name} encode_batch", Outcome.ok(tuple(batched))), (f"{name} encode", single)),
                    ids=((f"{name} encode_batch", tuple(batched)),)
                    + (((f"{name} encode", single.value),) if single.is_ok else ()),
                )
        return subject.finding("batch", "length",
                               f"encode_batch returned {len(together.value)} results for {len(texts)} texts",
                               outcomes=((f"{name} encode_batch", together),))
    failing = next((o for o in alone if not o.is_ok), None)
    if failing is not None and failing.same_as(together):
        return AGREE
    return subject.finding(
        "batch", f"{shape(together)}|{shape(failing) if failing else 'ok'}",
        f"encode_batch {together.describe()}; encode one by one "
        f"{failing.describe() if failing else 'succeeds'}",
        outcomes=((f"{name} encode_batch", together),)
        + (((f"{name} encode", failing),) if failing else ()),
    )


def check_pretokenize_coverage(subject: Subject) -> Result:
    adapter = subject.adapter
    if not adapter.info.capabilities.pretokenize:
        return UNSUPPORTED
    chunks = adapter.pretokenize(subject.text)
    if chunks.is_unsupported:
        return UNSUPPORTED
    name = subject.name
    if not chunks.is_ok:
        refused = adapter.encode(subject.text, ORDINARY)
        if refused.kind == "raised" and refused.category == chunks.category:
            return SKIP  # it refuses the text altogether: error-category's business
        return subject.finding("pretokenize-coverage", shape(chunks),
                               f"pretokenize failed: {chunks.describe()}", outcomes=((name, chunks),))
    joined = "".join(chunks.value)
    if joined in (subject.text, expected_text(subject.text), utf16_text(subject.text)):
        return AGREE
    return subject.finding(
        "pretokenize-coverage", "coverage",
        f"{len(chunks.value)} chunks join to {joined!r}, not the input {subject.text!r}",
        outcomes=((name, Outcome.ok(joined)), ("expected", Outcome.ok(subject.text))),
    )
