"""Shrinks asked ahead in waves (``--jobs``, Dask): how many waves, and which shrinks.

``Settler._shrink_ahead`` decides, before settling, which findings settling will shrink,
and asks for them in waves through ``shrink_many``. These tests give it findings whose
"shrink" is known (the cause character alone) and count the waves and the shrinks asked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harness.cases.domain import Domain
from harness.checks.base import ORDINARY, Finding
from harness.run.judging import Documentation
from harness.run.result import DivergenceRecord
from harness.run.settle import SHRINKS_PER_GROUP, Candidate, Settler

ADAPTER = "wrong:demo"


def _candidates(*texts: str) -> list[Candidate]:
    return [Candidate(Finding(ADAPTER, "id-parity", "content", "", text), ORDINARY, "tiktoken:gpt2", "generated", None)
            for text in texts]


def _settler() -> Settler:
    """A settler whose adapter documents the divergence on any input holding ``D``."""
    documentation = Documentation()
    documentation.add(ADAPTER, "id-parity", "content", "D", domain=Domain(chars="D"))
    return Settler(runner=None, documentation=documentation, max_shrink_calls=100,  # type: ignore[arg-type]
                   progress=lambda done, total: None)


class Waves:
    """A ``shrink_many`` that shrinks a text to its cause (``U`` if it holds one, else
    ``D`` if it holds one, else its first character) and keeps the texts asked, one list
    per wave."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def __call__(self, work: list[tuple[Candidate, int, Any]]) -> list[tuple[Finding, bool]]:
        self.asked.append([candidate.finding.text for candidate, _, _ in work])
        return [(replace(c.finding, text=_cause(c.finding.text)), False) for c, _, _ in work]


def _cause(text: str) -> str:
    return "U" if "U" in text else "D" if "D" in text else text[0]


def test_a_documented_group_is_shrunk_in_one_wave_up_to_its_bound() -> None:
    """Ten findings the documentation explains as they stand: settling shrinks the first
    eight; all eight go in one wave (one wave each made eight barriers)."""
    candidates = _candidates(*(f"x{n}D" for n in range(10)))
    waves = Waves()
    done = _settler()._shrink_ahead(candidates, waves)
    assert waves.asked == [[f"x{n}D" for n in range(SHRINKS_PER_GROUP)]]
    assert sorted(done) == list(range(SHRINKS_PER_GROUP))


def test_an_unexpected_shrink_is_waited_for_and_what_it_explains_is_not_shrunk() -> None:
    """A finding the documentation does not explain may shrink to an unexpected minimal
    input that later findings hold: nothing past it is asked until it is known, and the
    findings holding ``U`` are then passed by unshrunk."""
    candidates = _candidates("aU", "bU", "cU", "dD")
    waves = Waves()
    done = _settler()._shrink_ahead(candidates, waves)
    assert waves.asked == [["aU"], ["dD"]]
    assert sorted(done) == [0, 3]


def test_a_documented_finding_that_shrinks_to_an_unexpected_cause_wastes_work_never_a_record() -> None:
    """``DaU`` is documented as it stands, so the findings after it are asked in the same
    wave; its shrink is the unexpected ``U``, so settling shrinks none of the ``…U``
    findings after it. Their shrinks were asked in vain; the one settling needs (``dD``) is
    among the results."""
    candidates = _candidates("DaU", "DbU", "DcU", "dD")
    waves = Waves()
    done = _settler()._shrink_ahead(candidates, waves)
    assert waves.asked == [["DaU", "DbU", "DcU", "dD"]]
    assert {0, 3} <= set(done)


def test_groups_are_walked_apart_and_known_unexpected_inputs_are_not_shrunk_again() -> None:
    """Two groups (two kinds) share each wave; a group whose unexpected minimal input is
    known from an earlier settle shrinks only what does not hold it; the group of a kind
    nothing documents is asked one shrink per wave."""
    settler = _settler()
    # an unexpected divergence found earlier (only its type counts here, not its fields)
    settler.minimal[(ADAPTER, "id-parity", "content")] = [("U", DivergenceRecord.__new__(DivergenceRecord))]
    other = [replace(c, finding=replace(c.finding, kind="segmentation")) for c in _candidates("eX", "fX")]
    candidates = _candidates("aU", "bD") + other
    waves = Waves()
    settler._shrink_ahead(candidates, waves)
    assert waves.asked == [["bD", "eX"], ["fX"]]
