"""A drop-in for tiktoken whose encode_to_numpy needs a module that is not installed.

Everything is tiktoken's own Encoding, except ``encode_to_numpy``, which imports a module
no environment has (as a package that imports numpy lazily does where numpy is missing).
"""

import tiktoken


class _Encoding:
    def __init__(self, name):
        self._enc = tiktoken.get_encoding(name)

    def __getattr__(self, name):
        return getattr(self._enc, name)

    def encode_to_numpy(self, text, **kwargs):
        import tokconf_module_nobody_has  # noqa: F401  # raises ModuleNotFoundError

        return self._enc.encode_to_numpy(text, **kwargs)


def get_encoding(name):
    return _Encoding(name)
