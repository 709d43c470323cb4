"""``tokconf train`` as a service of the bytebpe family (the ``train`` hook).

The command line (:mod:`harness.cli.train_cmd`) reads the flags and the files; training,
saving and naming the adapter that uses the model are this family's, reached through
:meth:`harness.registry.Registry.hook` so the engine never imports the family.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from implementations.bytebpe.base import BASE_VOCAB_SIZE, SpecialTokenError
from implementations.bytebpe.model import TrainingError, train

__all__ = ["TrainFailed", "hooks", "train_model"]


class TrainFailed(ValueError):
    """Training or saving failed; the message says why and the fix (a usage error)."""


def train_model(texts: Sequence[str], *, vocab_size: int, pattern: str, specials: Mapping[str, int],
                output: Path, model_encoding: Callable[[Path], str]) -> dict[str, Any]:
    """Train, save to ``output`` and describe the model (what ``train --json`` prints)."""
    if vocab_size < BASE_VOCAB_SIZE:
        raise TrainFailed(f"--vocab-size {vocab_size} is below the {BASE_VOCAB_SIZE} single-byte tokens; "
                          f"use --vocab-size {BASE_VOCAB_SIZE} or more")
    try:
        model = train(list(texts), vocab_size=vocab_size, pattern_name=pattern, special_tokens=dict(specials))
    except SpecialTokenError as exc:
        raise TrainFailed(f"--special: {exc}") from exc
    except TrainingError as exc:
        raise TrainFailed(str(exc)) from exc
    try:
        model.save(output)
    except OSError as exc:
        raise TrainFailed(f"-o {output}: cannot write the model ({exc.strerror}); pick a writable path") from exc
    return {
        "merges": len(model.merges), "vocab_size": model.ordinary_size, "budget": vocab_size,
        "stopped_early": model.ordinary_size < vocab_size, "special_tokens": dict(model.special_tokens),
        "pattern": pattern, "output": str(output), "adapter": f"bytebpe:{output}",
        "encoding": model_encoding(output),
    }


def hooks(model_encoding: Callable[[Path], str]) -> tuple[tuple[str, Callable[..., Any]], ...]:
    def train_hook(texts: Sequence[str], **options: Any) -> dict[str, Any]:
        return train_model(texts, model_encoding=model_encoding, **options)

    return (("train", train_hook), ("train-base-vocab-size", lambda: BASE_VOCAB_SIZE))
