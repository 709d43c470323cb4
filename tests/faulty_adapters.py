"""Adapters that fail the hard way on one input: the run must turn each into an outcome.

Each wraps tiktoken's cl100k_base (:class:`tests.wrong_adapters._Wrapped`) and behaves
exactly like it, except that ``encode`` of a text holding :data:`TRIGGER` (U+2603 SNOWMAN)
does the damage below. A plugin is foreign code, so a run isolates them by default; in
process most of them would end or hang the run (never load them with ``--no-isolate``).

=========================== ================================================ ==========================
adapter                     what ``encode`` does on the trigger              outcome in the report
=========================== ================================================ ==========================
``faulty:hang``             sleeps for an hour                               ``timeout``
``faulty:segfault``         reads address 0 (``ctypes.string_at(0)``)        ``crashed:SIGSEGV``
``faulty:abort``            ``os.abort()``                                   ``crashed:SIGABRT``
``faulty:oom``              allocates 64 GiB, past any ``--memory-limit``    ``crashed:out-of-memory``
``faulty:panic``            raises a ``BaseException`` subclass (as          ``raised:internal-error``
                            tiktoken's ``PanicException`` is)
``faulty:not-integers``     returns ``["1", 2.5]``                           ``raised:internal-error``
                                                                             (``tokconf.BadReturnValue``)
``faulty:out-of-vocab``     returns an ID past the vocabulary                 id-parity ``content``; its
                                                                             decode ``raised:unknown-id``
=========================== ================================================ ==========================

    python -m harness run --plugin tests.faulty_adapters:all --impl tiktoken:cl100k_base --timeout 3
"""

from __future__ import annotations

import ctypes
import os
import time

from harness.registry import AdapterSpec
from tests.wrong_adapters import ENCODING, _Wrapped

TRIGGER = "\u2603"
#: an ID no cl100k_base token has (its vocabulary ends at 100276)
OUT_OF_VOCAB = 1_000_000


class Panic(BaseException):
    """What a Rust panic looks like from Python: not an ``Exception``."""


class _Faulty(_Wrapped):
    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        if TRIGGER in text:
            return self.fault(text)
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)

    def fault(self, text: str) -> object:
        raise NotImplementedError


class Hang(_Faulty):
    name = "faulty:hang"

    def fault(self, text: str) -> object:
        time.sleep(3600)
        return []


class Segfault(_Faulty):
    name = "faulty:segfault"

    def fault(self, text: str) -> object:
        return ctypes.string_at(0)


class Abort(_Faulty):
    name = "faulty:abort"

    def fault(self, text: str) -> object:
        os.abort()


class OutOfMemory(_Faulty):
    name = "faulty:oom"

    def fault(self, text: str) -> object:
        return bytearray(64 << 30)


class RaisesPanic(_Faulty):
    name = "faulty:panic"

    def fault(self, text: str) -> object:
        raise Panic("called `Option::unwrap()` on a `None` value")


class NotIntegers(_Faulty):
    name = "faulty:not-integers"

    def fault(self, text: str) -> object:
        return ["1", 2.5]


class OutOfVocab(_Faulty):
    name = "faulty:out-of-vocab"

    def fault(self, text: str) -> object:
        return [OUT_OF_VOCAB]


ADAPTERS = (Hang, Segfault, Abort, OutOfMemory, RaisesPanic, NotIntegers, OutOfVocab)


def _spec(cls: type) -> AdapterSpec:
    return AdapterSpec(name=cls.name, encoding=ENCODING, factory=cls, library="tiktoken")


def all() -> list[AdapterSpec]:  # noqa: A001 - the plugin's name on the command line
    return [_spec(cls) for cls in ADAPTERS]


def hang() -> list[AdapterSpec]:
    return [_spec(Hang)]


def abort() -> list[AdapterSpec]:
    """Only ``faulty:abort`` (a run that loads it with ``--no-isolate`` dies on the trigger)."""
    return [_spec(Abort)]
