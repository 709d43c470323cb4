"""A module that offers part of tiktoken's API, for tokconf's tests (not a real tokenizer).

get_encoding("partial") has encode and decode only; "boom" raises a BaseException
subclass from encode; "network" tries to download its vocabulary; "badresult" returns
strings instead of IDs.
"""

import socket


class Boom(BaseException):
    pass


class Partial:
    name = "partial"
    _special_tokens = {"<|end|>": 300}

    def encode(self, text, allowed_special=frozenset(), disallowed_special="all"):
        if disallowed_special == "all" and "<|end|>" in text and allowed_special != "all":
            raise ValueError("Encountered text corresponding to disallowed special token '<|end|>'")
        return list(text.encode("utf-8"))

    def decode(self, tokens, errors="replace"):
        return bytes(tokens).decode("utf-8", errors=errors)


class Booming(Partial):
    def encode(self, text, allowed_special=frozenset(), disallowed_special="all"):
        raise Boom("the extension fell over")


class BadResult(Partial):
    def encode(self, text, allowed_special=frozenset(), disallowed_special="all"):
        return [str(b) for b in text.encode("utf-8")]


def get_encoding(name):
    if name == "network":
        socket.create_connection(("openaipublic.blob.core.windows.net", 443), timeout=5)
    return {"partial": Partial, "boom": Booming, "badresult": BadResult}.get(name, Partial)()
