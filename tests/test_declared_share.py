"""An adapter's share of the generated inputs is declared, never timed, and parity.json says
what it took and skipped (issue 20, item 6).

A slow adapter that declares two halvings takes a quarter of the short inputs and no long
pieces, however fast the machine is; one that declares nothing takes the whole pool,
however slow it is. Both are real in-process runs of tiktoken's cl100k_base.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from harness.interface import Capabilities
from harness.registry import AdapterSpec, Family
from tests.wrong_adapters import ENCODING, _Wrapped


class _Halved(_Wrapped):
    name = "share:halved"
    capabilities = Capabilities(pretokenize=True, generated_halvings=2)


class _Slow(_Wrapped):
    """Slow on purpose: under a timed budget it would have lost inputs."""

    name = "share:slow"

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        time.sleep(0.002)
        return super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)


def family() -> Family:
    return Family(kind="share", specs=lambda: (
        AdapterSpec(name=_Halved.name, encoding=ENCODING, factory=_Halved, library="tiktoken"),
        AdapterSpec(name=_Slow.name, encoding=ENCODING, factory=_Slow, library="tiktoken"),
    ))


@pytest.fixture(autouse=True)
def _own_registry() -> Any:
    from harness.registry import reset_default_registry

    reset_default_registry()
    yield
    reset_default_registry()


def test_parity_json_records_each_adapters_declared_share(tmp_path: Path) -> None:
    from harness import execute
    from harness.engine.plan import Outputs, Plan
    from harness.report.schema import validate_parity
    from harness.run.choice import AdapterChoice

    plan = Plan(adapters=AdapterChoice.of(plugin=["tests.test_declared_share:family"],
                                          impl=(_Halved.name, _Slow.name), no_isolate=True),
                cases=(), phases=("vocab", "generated"), max_examples=16, profile="ci",
                outputs=Outputs(out=str(tmp_path)))
    data = execute(plan).data
    validate_parity(data)  # the schema knows generated_share
    limits = data["run"]["limits"]
    shares = limits["generated_share"]
    assert set(shares) == {"share:halved", "share:slow", "tiktoken:cl100k_base"}
    whole, halved, slow = shares["tiktoken:cl100k_base"], shares["share:halved"], shares["share:slow"]
    # one pool per encoding: the three see the same pool
    assert whole["pool"] == halved["pool"] == slow["pool"] > 16
    # no declaration: the whole pool, the slow one too (a timing would have cut it)
    for share in (whole, slow):
        assert share == {"halvings": 0, "pool": whole["pool"], "inputs": whole["pool"], "skipped_short": 0,
                         "skipped_long_pieces": 0}
    assert halved["halvings"] == 2 and halved["skipped_long_pieces"] > 0
    short = halved["pool"] - halved["skipped_long_pieces"]
    assert halved["inputs"] == short >> 2  # the short part, halved twice
    assert halved["inputs"] + halved["skipped_short"] + halved["skipped_long_pieces"] == halved["pool"]
    assert {n: s["inputs"] for n, s in shares.items()} == limits["generated_inputs"]
