"""GPT4Tokenizer stand-in: cl100k_base's ranks from tiktoken, merged on bytes by rank.

Like upstream it takes no arguments, asks tiktoken for cl100k_base itself, registers the
five special tokens, and decodes through its byte vocabulary only, so decoding a special
ID raises KeyError (seed 001's documented gap).
"""

import tiktoken

from .regex import GPT4_SPLIT_PATTERN, RegexTokenizer

GPT4_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


class GPT4Tokenizer(RegexTokenizer):
    def __init__(self):
        super().__init__(pattern=GPT4_SPLIT_PATTERN)
        self.ranks = tiktoken.get_encoding("cl100k_base")._mergeable_ranks
        self.vocab = {rank: token for token, rank in self.ranks.items()}
        # upstream keeps permuted bytes in vocab and un-permutes them with this map; the
        # stand-in keeps real bytes, so its map is the identity
        self.inverse_byte_shuffle = {b: b for b in range(256)}
        self.register_special_tokens(GPT4_SPECIAL_TOKENS)

    def _encode_chunk(self, text_bytes):
        parts = [bytes([b]) for b in text_bytes]
        while len(parts) > 1:
            ranked = [(self.ranks.get(parts[i] + parts[i + 1]), i) for i in range(len(parts) - 1)]
            ranked = [(r, i) for r, i in ranked if r is not None]
            if not ranked:
                break
            _, i = min(ranked)
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        return [self.ranks[p] for p in parts]

    def decode(self, ids):
        return b"".join(self.vocab[idx] for idx in ids).decode("utf-8", errors="replace")

    def train(self, text, vocab_size, verbose=False):
        raise NotImplementedError
