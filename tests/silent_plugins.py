"""Plugins that cannot run, each in its own way (see tests/test_nothing_silent.py)."""

from __future__ import annotations

from harness.registry import AdapterSpec
from tests.wrong_adapters import _Wrapped


def _broken() -> _Wrapped:
    raise RuntimeError("the tokenizer's vocabulary is not where it looked")


def broken() -> list[AdapterSpec]:
    return [AdapterSpec(name="silent:broken", encoding="cl100k_base", factory=_broken, library="tiktoken")]


class NoEncoding(_Wrapped):
    name = "silent:no-encoding"
    encoding = ""


def no_encoding() -> list[AdapterSpec]:
    return [AdapterSpec(name="silent:no-encoding", encoding="", factory=NoEncoding, library="tiktoken")]


class P50k(_Wrapped):
    name = "silent:p50k"
    encoding = "p50k_base"


def p50k() -> list[AdapterSpec]:
    return [AdapterSpec(name="silent:p50k", encoding="p50k_base", factory=P50k, library="tiktoken")]
