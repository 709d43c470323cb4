"""Which adapters an open-weight encoding brings into a run (issue 23): only when asked for,
and with the reference its encoding file names (the vendor's code, not tiktoken's port)."""

from __future__ import annotations

from typing import Sequence

from harness.interface import Adapter
from harness.registry import AdapterSpec, Registry
from harness.run.selection import select


class _Bytes(Adapter):
    """A byte-per-token adapter: what is tested here is selection, not tokenization."""

    library = "tokconf"

    def __init__(self, name: str, encoding: str) -> None:
        self.name, self.encoding = name, encoding

    def encode(self, text: str, *, allowed_special=frozenset(), disallowed_special="all") -> list[int]:
        return list(text.encode("utf-8"))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return bytes(ids)


def _registry() -> Registry:
    registry = Registry()
    for name, encoding in [("tiktoken:r50k_base", "r50k_base"), ("meta:llama3", "llama3"),
                           ("tiktoken:llama3", "llama3"), ("hf-merges:llama3", "llama3")]:
        registry.add(AdapterSpec(name=name, encoding=encoding, factory=lambda n=name, e=encoding: _Bytes(n, e)),
                     provider="test")
    return registry


def test_a_default_run_leaves_the_open_weight_encodings_out() -> None:
    selected = select(_registry(), case_adapters=["hf-merges:llama3"])
    assert sorted(selected.calls) == ["tiktoken:r50k_base"]
    # and the run says so
    assert any("not in this run: llama3;" in note for note in selected.notes), selected.notes


def test_asking_for_the_encoding_brings_its_adapters_and_the_vendor_reference() -> None:
    selected = select(_registry(), encodings=["llama3"])
    assert sorted(selected.calls) == ["hf-merges:llama3", "meta:llama3", "tiktoken:llama3"]
    # tiktoken:llama3 exists, but the encoding file names Meta's tokenizer as the reference
    assert selected.references == {"llama3": "meta:llama3"}


def test_the_gpt_encodings_keep_tiktoken_as_their_reference() -> None:
    assert select(_registry()).references == {"r50k_base": "tiktoken:r50k_base"}
