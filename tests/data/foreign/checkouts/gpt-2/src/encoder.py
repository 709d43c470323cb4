"""Test stand-in for openai/gpt-2's src/encoder.py, written for tokconf's tests.

Same shape as the historical upstream module (seed 000): a byte -> printable-character
alias table, string BPE with an outer lowest-rank loop and an inner left-to-right
replacement, no special-token handling, and get_encoder(model_name, models_dir) that
reads <models_dir>/<model_name>/encoder.json and vocab.bpe. Not upstream code.
"""

import json
import os

import regex

_SPLIT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def byte_aliases():
    kept = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    table = {b: chr(b) for b in kept}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def adjacent(symbols):
    return {(symbols[i], symbols[i + 1]) for i in range(len(symbols) - 1)}


class Encoder:
    def __init__(self, encoder, bpe_merges, errors="replace"):
        self.encoder = encoder
        self.decoder = {i: s for s, i in encoder.items()}
        self.errors = errors
        self.byte_encoder = byte_aliases()
        self.byte_decoder = {c: b for b, c in self.byte_encoder.items()}
        self.ranks = {pair: rank for rank, pair in enumerate(bpe_merges)}
        self.cache = {}

    def bpe(self, chunk):
        if chunk in self.cache:
            return self.cache[chunk]
        symbols = tuple(chunk)
        pairs = adjacent(symbols)
        if not pairs:
            return chunk
        while True:
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            out, i = [], 0
            while i < len(symbols):
                if i < len(symbols) - 1 and symbols[i] == best[0] and symbols[i + 1] == best[1]:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            symbols = tuple(out)
            if len(symbols) == 1:
                break
            pairs = adjacent(symbols)
        result = " ".join(symbols)
        self.cache[chunk] = result
        return result

    def encode(self, text):
        ids = []
        for chunk in _SPLIT.findall(text):
            aliased = "".join(self.byte_encoder[b] for b in chunk.encode("utf-8"))
            ids.extend(self.encoder[piece] for piece in self.bpe(aliased).split(" "))
        return ids

    def decode(self, tokens):
        aliases = "".join(self.decoder[t] for t in tokens)
        return bytearray(self.byte_decoder[c] for c in aliases).decode("utf-8", errors=self.errors)


def get_encoder(model_name, models_dir):
    with open(os.path.join(models_dir, model_name, "encoder.json"), "r") as f:
        encoder = json.load(f)
    with open(os.path.join(models_dir, model_name, "vocab.bpe"), "r", encoding="utf-8") as f:
        merges_text = f.read()
    merges = [tuple(line.split()) for line in merges_text.split("\n")[1:-1]]
    return Encoder(encoder=encoder, bpe_merges=merges)
