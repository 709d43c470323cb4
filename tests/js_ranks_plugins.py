"""A planted fault for the JavaScript ports over an encoding file's ranks (issue 23).

``planted-wasm:llama3``: npm tiktoken (WASM) over Llama 3's verified ranks and special
tokens, built exactly as ``tiktoken-wasm@VERSION:llama3`` is, except that its pattern
takes a run of digits whole (``\\p{N}+``) where Meta's takes at most three. A run must
flag it against ``meta:llama3`` with a short run of digits as the minimal input.

    tokconf run --plugin tests.js_ranks_plugins:wrong_pattern --impl planted-wasm:llama3
"""

from __future__ import annotations

from dataclasses import replace

from harness.encodings import encoding_spec
from harness.envs.store import load_all
from harness.registry import AdapterSpec, RegistryError
from implementations.javascript.adapters import _problem, node_executor
from implementations.javascript.ranks import port_spec

NAME = "planted-wasm:llama3"


def wrong_pattern() -> AdapterSpec:
    spec = encoding_spec("llama3")
    env = next((e for e in load_all() if e.runtime == "node" and "tiktoken" in dict(e.packages)), None)
    if spec is None or env is None:
        raise RegistryError("planted-wasm:llama3 needs the llama3 encoding and a Node environment with npm tiktoken")
    planted = replace(spec, pattern=spec.pattern.replace(r"\p{N}{1,3}", r"\p{N}+"))
    return port_spec(env, "tiktoken", planted, _problem, node_executor, name=NAME)
