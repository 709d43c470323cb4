"""Small plugin objects for registry tests, in every shape the registry accepts."""

from __future__ import annotations

from typing import Sequence

from harness.interface import Adapter
from harness.registry import AdapterSpec, Family

BUILT: list[str] = []


class Latin1Adapter(Adapter):
    """A toy adapter: one ID per Latin-1 byte. Its own ID space."""

    name = "toy:latin1"
    encoding = "toy-latin1"

    def __init__(self) -> None:
        BUILT.append(self.name)

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all") -> list[int]:
        return list(text.encode("latin-1"))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return bytes(ids)


def factory() -> Adapter:
    return Latin1Adapter()


def lazy_specs() -> list[AdapterSpec]:
    return [
        AdapterSpec(name="toy:lazy", encoding="toy-latin1", factory=factory),
        AdapterSpec(
            name="toy:missing",
            encoding="toy-latin1",
            factory=factory,
            check=lambda: "needs the toy-vocab package: `pip install toy-vocab`",
        ),
    ]


def duplicate() -> AdapterSpec:
    return AdapterSpec(name="tiktoken:cl100k_base", encoding="cl100k_base", factory=factory)


def exploding_factory() -> AdapterSpec:
    def build() -> Adapter:
        raise RuntimeError("vocabulary corrupt")

    return AdapterSpec(name="toy:exploding", encoding="toy", factory=build)


FAMILY = Family(
    kind="toyarg",
    resolve=lambda arg: AdapterSpec(name=f"toyarg:{arg}", encoding="toy-latin1", factory=factory),
)

NOT_AN_ADAPTER = 42
