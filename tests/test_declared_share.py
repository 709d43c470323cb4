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


class _Limited(_Wrapped):
    """Declares it takes long inputs up to 1,000 characters; fed a longer one, it raises
    (an error-category divergence), and it drops the last token of every text of 300 to
    1,000 characters (the long pieces it does take: the short inputs are shorter)."""

    name = "share:limited"
    capabilities = Capabilities(pretokenize=True, long_limit=1000)

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):  # type: ignore[no-untyped-def]
        if len(text) > 1000:
            raise RuntimeError(f"fed {len(text)} characters, past the 1000 it declares")
        ids = super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return ids[:-1] if len(text) >= 300 else ids


def family() -> Family:
    return Family(kind="share", specs=lambda: (
        AdapterSpec(name=_Halved.name, encoding=ENCODING, factory=_Halved, library="tiktoken"),
        AdapterSpec(name=_Slow.name, encoding=ENCODING, factory=_Slow, library="tiktoken"),
    ))


def limited() -> Family:
    return Family(kind="share", specs=lambda: (
        AdapterSpec(name=_Limited.name, encoding=ENCODING, factory=_Limited, library="tiktoken"),))


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


def test_a_declared_long_limit_leaves_out_the_longer_long_pieces_and_only_those(tmp_path: Path) -> None:
    from harness import execute
    from harness.engine.plan import Outputs, Plan
    from harness.generate.long_pieces import long_pieces
    from harness.run.choice import AdapterChoice

    plan = Plan(adapters=AdapterChoice.of(plugin=["tests.test_declared_share:limited"], impl=(_Limited.name,),
                                          no_isolate=True),
                cases=(), phases=("vocab", "generated"), max_examples=16, profile="ci",
                outputs=Outputs(out=str(tmp_path)))
    result = execute(plan)
    data = result.data
    share = data["run"]["limits"]["generated_share"][_Limited.name]
    over = sum(len(p) > 1000 for p in long_pieces())
    assert over > 0 and share["halvings"] == 0
    assert share["skipped_long_pieces"] == over and share["skipped_short"] == 0
    assert share["inputs"] == share["pool"] - over == data["run"]["limits"]["generated_inputs"][_Limited.name]
    assert f"generated: {_Limited.name} declares it takes at most 1000 characters (long_limit): " \
           f"{over} of the pool's long pieces left out" in data["run"]["notes"]
    mine = [d for d in data["divergences"] if d["adapter"] == _Limited.name]
    # never fed a piece past its limit (it would raise: an error-category divergence) ...
    assert {d["check"] for d in mine} == {"id-parity"}, [(d["check"], d["kind"]) for d in mine]
    # ... and still fed the ones within it, where its planted fault is found
    assert result.exit_code == 1 and all(len(d["input"]["text"]) >= 300 for d in mine)
