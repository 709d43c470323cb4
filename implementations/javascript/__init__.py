"""JavaScript tokenizers, run in a Node worker (:mod:`harness.worker.node`).

One adapter module per npm package, written in JavaScript (the worker imports it):

============================  ==================  =========================================
npm package                   adapter kind        module
============================  ==================  =========================================
``js-tiktoken``               ``js-tiktoken``     :file:`js_tiktoken.mjs` (pure-JS port)
``gpt-tokenizer``             ``gpt-tokenizer``   :file:`gpt_tokenizer.mjs` (own encoder)
``tiktoken``                  ``tiktoken-wasm``   :file:`tiktoken_wasm.mjs` (tiktoken's Rust
                                                  core compiled to WebAssembly)
============================  ==================  =========================================

:file:`common.mjs` holds what they share: tiktoken's special-token policy in each
package's own spelling, the canonical hash of a bundled rank table, and the Node snippets
the report shows. ``tokconf env add npm:PACKAGE@VERSION`` (:mod:`harness.envs.npm`)
installs the packages; :mod:`implementations.javascript.adapters` registers one adapter
per encoding each offers, named with the package version
(``js-tiktoken@1.0.21:cl100k_base``, ``tiktoken-wasm@1.0.22:o200k_base``), each run in a
Node worker.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["KINDS", "PACKAGES", "module_paths"]

#: npm package -> adapter kind
PACKAGES: dict[str, str] = {"js-tiktoken": "js-tiktoken", "gpt-tokenizer": "gpt-tokenizer", "tiktoken": "tiktoken-wasm"}
#: adapter kind -> its module file, beside this one
KINDS: dict[str, str] = {"js-tiktoken": "js_tiktoken.mjs", "gpt-tokenizer": "gpt_tokenizer.mjs",
                         "tiktoken-wasm": "tiktoken_wasm.mjs"}


def module_paths() -> tuple[tuple[str, str], ...]:
    """(kind, absolute path of its adapter module), for a Node worker's setup."""
    here = Path(__file__).resolve().parent
    return tuple((kind, str(here / file)) for kind, file in sorted(KINDS.items()))
