"""``tokconf snapshot``: record every path of every adapter on every input, into a golden.

Inputs are streamed through the adapters, 64 at a time (:func:`record_here`), and written
as they come (:class:`harness.golden.format.GoldenWriter`), so a corpus of 100,000
documents needs the memory of 64 documents. The file appears only when it is complete.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from harness.calls import Calls
from harness.cases.corpus import CorpusOptions
from harness.golden.format import GoldenAdapter, GoldenHeader, GoldenWriter
from harness.golden.inputs import Input, case_inputs, corpus_inputs, generated_inputs, long_inputs, unique
from harness.golden.paths import attributes_for, paths_for
from harness.registry import Registry
from harness.run.selection import Selected, SelectionError

__all__ = ["InputOptions", "Recorder", "build_adapters", "input_chunks", "input_stream", "record", "record_here",
           "record_many", "vocabulary_hashes", "write_snapshot"]


@dataclass(frozen=True)
class InputOptions:
    """Which inputs a snapshot records (``tokconf snapshot`` flags)."""

    cases: tuple[str, ...] | None = None  # None: the shipped cases; () with no_cases
    no_cases: bool = False
    generated: bool = True
    max_examples: int = 200
    seed: int = 0
    long_sizes: tuple[int, ...] = ()
    corpus: tuple[str, ...] = ()
    corpus_options: CorpusOptions = field(default_factory=CorpusOptions)

    def to_json(self) -> dict[str, Any]:
        return {"cases": None if self.no_cases else (list(self.cases) if self.cases else "shipped"),
                "generated": {"count": self.max_examples, "seed": self.seed} if self.generated else None,
                "long": list(self.long_sizes), "corpus": list(self.corpus),
                "corpus_options": self.corpus_options.to_json()}


def build_adapters(registry: Registry, names: Sequence[str], *, isolation: Any = None) -> Selected:
    """The adapters to record: the named ones (each must run), or every available one that
    is not another environment's (those are asked for by name)."""
    from harness.envs.handoff import is_env_spec

    selected = Selected(registry, isolation=isolation)
    wanted = list(names) or [s.name for s in registry.specs() if not is_env_spec(s)]
    failed = []
    for name in wanted:
        if selected.add(name) is None and names:
            row = selected.rows.get(selected.aliases.get(name, name))
            failed.append(f"  {name}: {row.reason if row else 'unavailable'}")
    if failed:
        raise SelectionError("asked for, but cannot run:\n" + "\n".join(failed))
    if not selected.calls:
        raise SelectionError("no adapter can run here; `tokconf list` says why")
    return selected


def input_stream(options: InputOptions, literals: Iterable[str]) -> Iterator[Input]:
    def chained() -> Iterator[Input]:
        if not options.no_cases:
            yield from case_inputs(options.cases, max_long=max(options.long_sizes, default=0))
        if options.generated:
            yield from generated_inputs(sorted(set(literals)), count=options.max_examples, seed=options.seed)
        if options.long_sizes:
            yield from long_inputs(options.long_sizes)
        if options.corpus:
            yield from corpus_inputs(options.corpus, options.corpus_options)
    return unique(chained())


def vocabulary_hashes() -> dict[str, str]:
    """The pinned SHA-256 of each vocabulary file available here (what every adapter reads)."""
    from harness.vocab import VOCAB_FILES, vocab_unavailable_reason

    return {name: f.sha256 for name, f in sorted(VOCAB_FILES.items()) if vocab_unavailable_reason(name) is None}


def record(calls_by_name: dict[str, Calls], text: str) -> dict[str, dict[str, Any]]:
    return {name: paths_for(calls, text) for name, calls in calls_by_name.items()}


#: how many inputs :func:`record_here` takes up before recording them, their API surfaces
#: walked together (:func:`record_many`)
RECORD_CHUNK = 64


def record_many(calls_by_name: dict[str, Calls], texts: Sequence[str | None]) -> list[Any]:
    """:func:`record` of each text (None: nothing to record), in order, each adapter's API
    surfaces of all of them walked in one call first (:meth:`Calls.prefetch_surfaces`:
    the same outcomes as one walk per text). A walk alone asks tiktoken's batch paths with
    one text each, and tiktoken starts a thread pool per batch call: a corpus snapshot of
    3,000 short documents through two tiktoken encodings took 21 s of CPU so, 7 s this way."""
    wanted = [t for t in texts if t is not None]
    for calls in calls_by_name.values():
        calls.prefetch_surfaces(wanted)
    return [record(calls_by_name, text) if text is not None else None for text in texts]


#: ``(calls by name, (item, text or None) ...)`` -> ``(item, record(calls, text) or None) ...``
#: **in the order given**: in this process (:func:`record_here`) or on a Dask cluster
#: (:class:`harness.scale.golden_chunks.DaskRecords`); goldens and gates are the same either way
Recorder = Callable[[dict[str, Calls], Iterable[tuple[Any, "str | None"]]], Iterator[tuple[Any, Any]]]


#: told of each input as it is taken up, before its paths are called: (source, characters)
Starting = Callable[[str, int], None]


def announced(items: Iterable[tuple[Any, "str | None"]], starting: Starting) -> Iterator[tuple[Any, "str | None"]]:
    """``items`` unchanged, telling ``starting`` of each one as it is taken up: a long input
    holds a snapshot or gate for minutes, and the progress line then says which one."""
    for item, text in items:
        if text is not None:
            starting(item.source, len(text))
        yield item, text


def input_chunks(items: Iterable[tuple[Any, str | None]], size: int, *,
                 long_from: int | None = None) -> Iterator[list[tuple[Any, str | None]]]:
    """``items`` in lists of ``size``, in order; an input of ``long_from`` characters or
    more (when given) ends its list.

    >>> [[i for i, _ in c] for c in input_chunks([(0, "a"), (1, None), (2, "long"), (3, "b")], 3, long_from=4)]
    [[0, 1, 2], [3]]
    """
    chunk: list[tuple[Any, str | None]] = []
    for item, text in items:
        chunk.append((item, text))
        if len(chunk) >= size or (long_from is not None and text is not None and len(text) >= long_from):
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def record_here(calls_by_name: dict[str, Calls], items: Iterable[tuple[Any, str | None]]) -> Iterator[tuple[Any, Any]]:
    """Records of ``items`` in order, :data:`RECORD_CHUNK` at a time (:func:`record_many`).
    An input of 10^4 characters or more ends its chunk: the progress line names such an
    input from when it is taken up (:func:`announced`) until the next one is, so the
    inputs after it wait for it to be recorded."""
    from harness.calls import PREFETCH_SURFACE_LIMIT

    for chunk in input_chunks(items, RECORD_CHUNK, long_from=PREFETCH_SURFACE_LIMIT):
        yield from zip([item for item, _ in chunk], record_many(calls_by_name, [text for _, text in chunk]))


def write_snapshot(path: str, selected: Selected, inputs: Iterable[Input], *, options: dict[str, Any],
                   progress: Callable[[int], None] = lambda n: None, records: Recorder = record_here,
                   resume: bool = False, starting: Starting = lambda source, n: None) -> int:
    """Write the golden; returns the number of inputs recorded.

    Recorded into ``path.partial`` and renamed to ``path`` when complete; a stop (Ctrl-C,
    SIGTERM: ``KeyboardInterrupt``) commits the partial golden and raises
    :class:`SnapshotStopped`; ``resume``: go on from the partial golden
    (:mod:`harness.golden.resume`); ``starting``: told of each input as it is taken up."""
    import os

    from harness.golden.resume import partial_path, resumed
    from harness.registry import library_version

    calls = {name: selected.calls[name] for name in sorted(selected.calls)}
    adapters = tuple(GoldenAdapter(name=name, encoding=c.info.encoding, library=c.info.library,
                                   version=selected.rows[name].version, provider=c.info.provider,
                                   attributes=attributes_for(c)) for name, c in calls.items())
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    recorded: list[Any] = []
    if resume:
        created, recorded, inputs = resumed(path, adapters, options, inputs)
    header = GoldenHeader(adapters=adapters, vocabularies=vocabulary_hashes(), inputs=options, created=created,
                          tool_version=library_version("tokconf") or "")
    partial = partial_path(path)
    stopped: KeyboardInterrupt | None = None
    with GoldenWriter(partial, header) as writer:
        for item in recorded:
            writer.add(item.source, item.text, item.outcomes)
        try:
            for item, outcomes in records(calls, announced(((item, item.text) for item in inputs), starting)):
                writer.add(item.source, item.text, outcomes)
                progress(writer.count)
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM (harness.cli.interrupts.Stopped)
            stopped = exc
        count = writer.count
    if stopped is not None:
        raise SnapshotStopped(partial, count) from stopped
    os.replace(partial, path)
    return count


class SnapshotStopped(Exception):
    """A snapshot stopped by a signal; what it recorded is in the partial golden."""

    def __init__(self, partial: str, count: int) -> None:
        super().__init__(f"stopped after {count} inputs; they are kept in {partial}: the same command with --resume "
                         "records the rest")
        self.partial, self.count = partial, count
