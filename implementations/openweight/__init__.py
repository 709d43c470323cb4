"""Open-weight tokenizers (issue 23): Llama 3/4, Mistral Tekken, Qwen.

Each encoding is described by a file in ``harness/encodings/data/`` (or a user's
``--encoding-file``); :mod:`.vendor` wraps the vendor's own tokenizer, its reference;
:mod:`.ports` builds tiktoken, Hugging Face (two converters, with and without
``ignore_merges``) and tokconf's rank-mode BPE over the same ranks.
"""

from __future__ import annotations

from harness.encodings import encoding_specs
from harness.registry import Family
from implementations.openweight.ports import port_specs
from implementations.openweight.vendor import vendor_specs

__all__ = ["family"]


def family() -> Family:
    # the encodings known when the registry asks: a user's --encoding-file is read first
    return Family(kind="openweight", specs=lambda: [*vendor_specs(), *port_specs(encoding_specs())])
