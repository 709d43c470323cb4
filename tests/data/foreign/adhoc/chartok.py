"""Tiny tokenizers for tokconf's source-adapter tests (written for the tests)."""


class CharTokenizer:
    """One ID per character of a fixed alphabet; anything else is a KeyError."""

    def __init__(self, alphabet):
        self.alphabet = alphabet
        self.ids = {c: i for i, c in enumerate(alphabet)}
        self.chars = dict(enumerate(alphabet))

    def encode(self, text):
        return [self.ids[c] for c in text]

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids).encode("utf-8")


class Boom(BaseException):
    """Not an Exception: the kind of thing a broken extension can raise."""


class BoomTokenizer:
    def encode(self, text):
        raise Boom(f"cannot encode {text!r}")

    def decode(self, ids):
        return "".join(chr(i) for i in ids)


class NotATokenizer:
    pass
