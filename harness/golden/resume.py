"""A snapshot stopped by Ctrl-C or SIGTERM keeps what it recorded; ``--resume`` completes it.

``tokconf snapshot -o G`` records into ``G.partial`` (a golden of its own, whose inputs
are the first ones of the snapshot's input stream) and renames it to ``G`` when every
input is recorded. A stop ends the recording after the input in hand; the partial golden
is committed (written atomically, like every golden) and the command says how to go on.
``tokconf snapshot -o G --resume`` reads ``G.partial``, checks that it was made with the
same adapters, releases and input options, copies its inputs as they were recorded
(checking each source against the input stream, which is deterministic), records the
rest and writes ``G``: the same inputs and outcomes as an uninterrupted snapshot, and
the partial's creation time (the snapshot began then).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Iterator

from harness.golden.format import GoldenError, GoldenHeader, read_golden

__all__ = ["ResumeError", "partial_path", "resumed"]


class ResumeError(GoldenError):
    """A partial golden that cannot be completed by this command; the message says why."""


def partial_path(path: str) -> str:
    return f"{path}.partial"


def _same(header: GoldenHeader, adapters: Iterable[Any], options: dict[str, Any]) -> str | None:
    theirs = [(a.name, a.version) for a in header.adapters]
    mine = [(a.name, a.version) for a in adapters]
    if theirs != mine:
        return f"it was made with {theirs}, this command has {mine}"
    if header.inputs != options:
        return f"it was made with the input options {header.inputs}, this command has {options}"
    return None


def resumed(path: str, adapters: Iterable[Any], options: dict[str, Any],
            inputs: Iterable[Any]) -> tuple[str, list[Any], Iterator[Any]]:
    """(the partial's creation time, its recorded inputs, the inputs still to record).

    Raises :class:`ResumeError` when there is no partial golden at ``path`` or it was made
    by another command."""
    partial = partial_path(path)
    if not Path(partial).is_file():
        raise ResumeError(f"nothing to resume: no partial golden at {partial} (a snapshot stopped by Ctrl-C or "
                          f"SIGTERM leaves one); run the snapshot without --resume")
    header, done_inputs = read_golden(partial)
    why = _same(header, adapters, options)
    if why is not None:
        raise ResumeError(f"cannot resume {partial}: {why}; run the same snapshot command with --resume, or "
                          "start again without it")
    recorded = list(done_inputs)
    stream = iter(inputs)
    for item in recorded:
        upcoming = next(stream, None)
        if upcoming is None or upcoming.source != item.source:
            raise ResumeError(f"cannot resume {partial}: its input {item.source} is not the next input of this "
                              f"command ({upcoming.source if upcoming is not None else 'none'}); the cases or "
                              "corpus changed since: start again without --resume")
    return header.created, recorded, stream
