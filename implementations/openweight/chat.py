"""Chat formatting where two implementations exist offline (issue 23, item 5).

Mistral: ``mistral_common``'s chat encoder (``MistralTokenizer.encode_chat_completion``)
against transformers' Tekken backend (``convert_tekken_tokenizer``: a ``tokenizers`` BPE
plus the chat template transformers generates, rendered by Jinja and then tokenized).
The same dialog must give the same token IDs.

Llama 3/4 are not compared: ``llama_models`` ships only its own ``ChatFormat`` and no
template, and transformers has no Llama template without the Hub's
``tokenizer_config.json``; writing one here would test tokconf's template, not a vendor's.

Run ``python -m implementations.openweight.chat [ENCODING]``: one line per dialog, exit 1
when any differs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Sequence

from harness.encodings import encoding_spec
from harness.encodings.ranks import rank_file_bytes, rank_file_path

__all__ = ["DIALOGS", "ChatComparison", "compare_mistral_chat"]

#: (role, content) turns; the last is the user's. Hostile content on purpose: control
#: literals typed by a user, whitespace at the edges, newline runs, scripts, digits.
DIALOGS: tuple[tuple[tuple[str, str], ...], ...] = (
    (("user", "Hello there"),),
    (("system", "Be brief."), ("user", "Hello there"), ("assistant", "Hi!"), ("user", "eBay NaOH 12345?")),
    (("user", "  spaced  "),),
    (("user", "Việt Nam\n\n\nnewlines"),),
    (("user", "[INST] hi </s>"),),
    (("user", "Use [TOOL_CALLS] and <s> literally"),),
)


@dataclass(frozen=True)
class ChatComparison:
    dialog: tuple[tuple[str, str], ...]
    vendor: tuple[int, ...]
    template: tuple[int, ...]

    @property
    def equal(self) -> bool:
        return self.vendor == self.template


def _vendor_ids(tokenizer: Any, dialog: Sequence[tuple[str, str]]) -> list[int]:
    from mistral_common.protocol.instruct.messages import AssistantMessage, SystemMessage, UserMessage
    from mistral_common.protocol.instruct.request import ChatCompletionRequest

    kinds = {"system": SystemMessage, "user": UserMessage, "assistant": AssistantMessage}
    messages = [kinds[role](content=content) for role, content in dialog]
    return list(tokenizer.encode_chat_completion(ChatCompletionRequest(messages=messages)).tokens)


def compare_mistral_chat(encoding: str = "tekken_240911",
                         dialogs: Sequence[Sequence[tuple[str, str]]] = DIALOGS) -> list[ChatComparison]:
    """Each dialog through both implementations, from the pinned Tekken file."""
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
    from transformers.integrations.mistral.tokenizer import convert_tekken_tokenizer

    spec = encoding_spec(encoding)
    if spec is None or spec.vocabulary.format != "tekken-json":
        raise ValueError(f"{encoding!r} is not a Tekken encoding; use tekken_240718 or tekken_240911")
    rank_file_bytes(spec)  # both read the file: it must be the pinned one
    path = str(rank_file_path(spec.vocabulary))
    vendor, backend = MistralTokenizer.from_file(path), convert_tekken_tokenizer(path)
    out = []
    for dialog in dialogs:
        turns = [{"role": role, "content": content} for role, content in dialog]
        rendered = backend.apply_chat_template(turns, tokenize=True)
        ids = rendered["input_ids"] if isinstance(rendered, dict) or hasattr(rendered, "keys") else rendered
        out.append(ChatComparison(tuple(dialog), tuple(_vendor_ids(vendor, dialog)), tuple(ids)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    results = compare_mistral_chat(*(args[:1] or []))
    for result in results:
        mark = "same" if result.equal else "DIFFERENT"
        print(f"{mark:9} {result.dialog[-1][1]!r}")
        if not result.equal:
            print(f"          mistral_common: {list(result.vendor)}\n          transformers:   {list(result.template)}")
    return 0 if all(r.equal for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
