"""Faults only ordinary text shows fail `tokconf run` and the pytest suite through the
everyday-text phase (issue 20, item 2), with the document's provenance in the finding.

Two drop-ins of :mod:`tests.everyday_text_plugins`: one lowercases a sentence-initial
"The", one encodes " the" (the most frequent English token) as two tokens. Each must
make a run exit 1 with an unexpected id-parity divergence shrunk to ``The`` or `` the``,
found on an everyday document (``everyday:<source>#<n>``); without the everyday phase
the same plan passes, so it is that phase that catches them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.engine.execute import execute
from harness.engine.plan import Outputs, Plan
from harness.run.choice import AdapterChoice

ROOT = Path(__file__).resolve().parents[1]
#: adapter -> (plugin, minimal input, the document ``tokconf run``'s finding names, the
#: document the failing pytest item names). Hundreds of documents show each fault; the run
#: judges all findings at once, smallest input first (harness/run/settle.py), so it names
#: the smallest such document; pytest judges unit by unit in plan order, so its first
#: failing item (everyday[prose#0-23]) names the smallest one of that unit. Both are
#: fixed by the corpus: a change here means the corpus or the judging changed.
FAULTS = {
    "faulty-everyday:lower-the": ("tests.everyday_text_plugins:lower_the", "The", "everyday:chat#30",
                                  "everyday:prose#3"),
    "faulty-everyday:split-the": ("tests.everyday_text_plugins:split_the", " the", "everyday:chat#15",
                                  "everyday:prose#3"),
}


@pytest.fixture(autouse=True)
def _own_registry() -> Any:
    """An in-process plan registers its plugin process-wide: forget it afterwards."""
    from harness.registry import reset_default_registry

    reset_default_registry()
    yield
    reset_default_registry()


def _plan(name: str, tmp_path: Path, phases: tuple[str, ...]) -> Plan:
    plugin = FAULTS[name][0]
    return Plan(adapters=AdapterChoice.of(plugin=[plugin], impl=(name, "tiktoken:cl100k_base"), no_isolate=True),
                cases=(), phases=phases, outputs=Outputs(out=str(tmp_path)))


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_the_everyday_phase_catches_it_with_the_documents_provenance(name: str, tmp_path: Path) -> None:
    _, minimal, where, _ = FAULTS[name]
    outcome = execute(_plan(name, tmp_path, ("vocab", "everyday")))
    assert outcome.exit_code == 1
    found = [(r.adapter, r.check, r.text, r.case) for r in outcome.result.by_status("unexpected")]
    assert found == [(name, "id-parity", minimal, where)]
    assert outcome.data["run"]["everyday"]["documents"] == outcome.result.matrix[name]["id-parity"].inputs


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_without_the_everyday_phase_the_fault_passes(name: str, tmp_path: Path) -> None:
    # the planted fault is invisible to the vocabulary check: the everyday text is what finds it
    assert execute(_plan(name, tmp_path, ("vocab",))).exit_code == 0


def test_the_reference_alone_agrees_on_every_document(tmp_path: Path) -> None:
    plan = Plan(adapters=AdapterChoice.of(impl=("tiktoken:cl100k_base",)), cases=(), phases=("everyday",),
                outputs=Outputs(out=str(tmp_path)))
    outcome = execute(plan)
    assert outcome.exit_code == 0
    everyday = outcome.data["run"]["everyday"]
    assert outcome.result.matrix["tiktoken:cl100k_base"]["round-trip"].inputs == everyday["documents"]
    # recorded: in parity.json (schema-valid, as written) and in one line of the page
    from harness.generate.everyday import build
    from harness.report.schema import load_parity

    assert load_parity(outcome.folder / "parity.json")["run"]["everyday"] == build(profile="ci").summary() == everyday
    page = (outcome.folder / "parity.html").read_text(encoding="utf-8")
    assert f"Everyday text: {everyday['documents']} documents" in page and everyday["sha256"][:16] in page


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_tokconf_run_exits_1_naming_the_document(name: str, tmp_path: Path) -> None:
    # without the every-token phase, which meets " the" as a token of its own first
    # (tests/test_everyday_faults.py): here it is the everyday document that must name it
    plugin, minimal, where, _ = FAULTS[name]
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--quiet", "--no-isolate", "--plugin", plugin, "--impl", name,
         "--impl", "tiktoken:cl100k_base", "--no-cases", "--max-examples", "1", "--no-every-token",
         "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((tmp_path / "latest" / "parity.json").read_text(encoding="utf-8"))
    found = [(d["check"], d["input"]["text"], d["case"]) for d in data["divergences"]
             if d["adapter"] == name and d["status"] == "unexpected"]
    if name == "faulty-everyday:lower-the":
        # the generated phase meets this one too, on a shorter input ('The.isOpen ...'),
        # which the run judges first; the everyday findings are then merged into that
        # record (its occurrences): the minimal input is the same. The everyday phase on
        # its own names the document (test above).
        assert [(c, t) for c, t, _ in found] == [("id-parity", minimal)], found
    else:
        assert found == [("id-parity", minimal, where)], found
        assert where in proc.stdout, proc.stdout[-3000:]


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_the_pytest_suite_fails_on_an_everyday_item(name: str, pytester: pytest.Pytester,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    plugin, minimal, _, where = FAULTS[name]
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    (pytester.path / "none.yaml").write_text("version: 1\ncases: []\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "--tokconf-plugin", plugin, "--tokconf-impl", name, "--tokconf-no-isolate", "--tokconf-cases", "none.yaml",
        "--tokconf-no-every-token", "-p", "no:cacheprovider", "-k", "everyday", timeout=1800)
    text = result.stdout.str()
    assert "FAILED tokconf::everyday[prose#0-23]" in text, text[-3000:]
    assert f"unexpected divergence: {name} / id-parity [" in text
    assert f"(case {where})" in text
    assert f"minimal input: '{minimal}'" in text
    assert result.ret == 1
