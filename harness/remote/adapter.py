"""An adapter that runs in another process, seen as an :class:`~harness.interface.Adapter`.

A run calls such an adapter through its executor directly (:mod:`harness.run.selection`
takes the spec's ``executor``); commands that want an ``Adapter`` object
(``tokconf encode``/``decode``, an adapter family's ``factory``) wrap the executor in a
:class:`RemoteAdapter`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.cases.model import Policy
from harness.interface import Adapter, AllowedSpecial, DisallowedSpecial
from harness.outcomes import Operation, Outcome

__all__ = ["RemoteAdapter"]


class _RemoteError(Exception):
    category = "internal-error"


_ERROR_TYPES: dict[str, type[_RemoteError]] = {}


def _remote_error(outcome: Outcome) -> _RemoteError:
    """An exception whose type name is the native one the worker saw (``builtins.KeyError``)."""
    native = outcome.native_type or f"tokconf.{outcome.kind}"
    cls = _ERROR_TYPES.get(native)
    if cls is None:
        module, _, qualname = native.rpartition(".")
        cls = type(qualname or native, (_RemoteError,), {"__module__": module or "tokconf", "__qualname__": qualname})
        _ERROR_TYPES[native] = cls
    error = cls(outcome.message or outcome.kind)
    error.category = outcome.category if outcome.kind == "raised" and outcome.category else "internal-error"
    return error


class RemoteAdapter(Adapter):
    """An adapter running in a worker, seen as an :class:`Adapter`: each call goes to the
    worker and a failure is raised again under its native type name and category."""

    def __init__(self, executor: Any) -> None:
        # ``executor``: a worker already started (an environment's Python worker, a
        # JavaScript adapter's Node worker); its info names the adapter
        self.executor = executor
        info = self.executor.info
        self.name, self.encoding, self.library = info.name, info.encoding, info.library
        self.capabilities = info.capabilities
        self.language, self.vocabulary = info.language, info.vocabulary

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return self.executor.info.specials

    def _value(self, op: str, *args: Any) -> Any:
        outcome = self.executor.call(op, *args)
        if outcome.is_ok:
            return outcome.value
        raise _remote_error(outcome)

    def encode(self, text: str, *, allowed_special: AllowedSpecial = frozenset(),
               disallowed_special: DisallowedSpecial = "all") -> list[int]:
        policy = Policy(allowed_special="all" if allowed_special == "all" else frozenset(allowed_special),
                        disallowed_special="all" if disallowed_special == "all" else frozenset(disallowed_special))
        return list(self._value("encode", text, policy))

    def encode_ordinary(self, text: str) -> list[int]:
        return list(self._value("encode_ordinary", text))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self._value("decode_bytes", tuple(ids))

    def decode(self, ids: Sequence[int], *, errors: str = "replace") -> str:
        return self._value("decode", tuple(ids), errors)

    def token_bytes(self, token_id: int) -> bytes:
        return self._value("token_bytes", token_id)

    def trace(self, text: str) -> Any:
        return list(self._value("trace", text))

    def pretokenize(self, text: str) -> list[str]:
        return list(self._value("pretokenize", text))

    def classify_error(self, op: Operation, exc: BaseException) -> str | None:
        return exc.category if isinstance(exc, _RemoteError) else None
