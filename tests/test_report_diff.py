"""``diff_runs``: exactly what changed between two runs, and when it gates."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from harness.report.diff import AdapterChange, CellChange, VersionChange, diff_runs, format_text
from harness.report.diff_page import render_diff

FIXTURES = Path(__file__).parent / "data" / "parity"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="ascii"))


def drop_divergence(run: dict[str, Any], ident: str, *, cell_status: str = "agree") -> dict[str, Any]:
    """The run without one divergence, its cell set to ``cell_status`` (summary kept in step)."""
    out = copy.deepcopy(run)
    [d] = [d for d in out["divergences"] if d["id"] == ident]
    out["divergences"].remove(d)
    cell = out["matrix"][d["adapter"]][d["check"]]
    cell["divergences"].remove(ident)
    if not cell["divergences"]:
        out["summary"][cell["status"]] -= 1
        cell["status"] = cell_status
        out["summary"][cell_status] += 1
    return out


def test_upgrade_diff_in_full() -> None:
    diff = diff_runs(fixture("basic"), fixture("upgraded"))
    assert [(c.kind, c.adapter, c.check, c.text, c.gates) for c in diff.divergences] == [
        ("new", "bytebpe:cl100k_base", "id-parity", "x\u3000\u3000y", True),
        ("changed", "minbpe:cl100k_base", "decode", "<|endoftext|>", False),
        ("changed", "wrong:ltr", "round-trip", "a\r\nb", False),
        ("changed", "wrong:ltr", "id-parity", "  trailing  ", False),
        ("fixed", "wrong:ltr", "id-parity", "hello world", False),
        ("unchecked", "teaching:simple", "round-trip", "naïve", False),
    ]
    changed = {c.text: c.notes for c in diff.of_kind("changed")}
    assert changed["<|endoftext|>"] == (
        "status stale -> documented",
        "minbpe:cl100k_base: text <|endoftext|> -> raised unknown-id (builtins.KeyError): 100257",
    )
    assert changed["  trailing  "] == ("tiktoken:cl100k_base: [220, 28848, 256] -> [256, 28848, 220]",)
    assert diff.of_kind("fixed")[0].notes == ("generated input: the new run may not have tried it",)
    assert diff.of_kind("unchecked")[0].notes == ("not checked: the cell is now unavailable",)
    assert [(o.adapter, o.check, o.old, o.new) for o in diff.outcomes] == [
        ("minbpe:cl100k_base", "decode", {"kind": "ok", "text": "<|endoftext|>"},
         {"kind": "raised", "category": "unknown-id", "native_type": "builtins.KeyError", "message": "100257"}),
        ("wrong:ltr", "round-trip", {"kind": "ok", "bytes": "610a62"}, {"kind": "ok", "bytes": "61200a62"}),
        ("tiktoken:cl100k_base", "id-parity", {"kind": "ok", "ids": [220, 28848, 256]},
         {"kind": "ok", "ids": [256, 28848, 220]}),
    ]
    assert diff.libraries == (VersionChange("tiktoken", "0.14.0", "0.15.0"),)
    assert diff.vocabularies == ()
    assert diff.adapters == (
        AdapterChange("tiktoken:r50k_base", "version", "0.14.0", "0.15.0"),
        AdapterChange("tiktoken:cl100k_base", "version", "0.14.0", "0.15.0"),
        AdapterChange("bytebpe:cl100k_base", "added", None, "0.1.0"),
        AdapterChange("teaching:simple", "now unavailable", "0.1.0", "0.1.0",
                      "teaching texts missing: implementations/data/verdict.txt not found; reinstall tokconf"),
        AdapterChange("hf:gpt2", "removed", "0.23.0", None),
    )
    assert diff.cells == (CellChange("minbpe:cl100k_base", "decode", "stale", "documented"),)
    assert diff.unchanged == 3
    assert diff.exit_code == 1 and len(diff.gating) == 1


def test_same_run_has_no_changes() -> None:
    diff = diff_runs(fixture("basic"), fixture("basic"))
    assert (diff.divergences, diff.outcomes, diff.adapters, diff.libraries, diff.cells) == ((), (), (), (), ())
    assert diff.unchanged == 8 and diff.exit_code == 0
    assert format_text(diff).endswith("result: no new unexpected or stale divergences\n")


def test_only_fixes_pass_the_gate() -> None:
    old = fixture("basic")
    new = drop_divergence(old, "d0003")
    diff = diff_runs(old, new)
    assert [(c.kind, c.old["id"]) for c in diff.divergences] == [("fixed", "d0003")]
    assert diff.exit_code == 0


def test_documented_turning_unexpected_gates() -> None:
    old = fixture("basic")
    new = copy.deepcopy(old)
    [d] = [d for d in new["divergences"] if d["id"] == "d0001"]
    d["status"] = "unexpected"
    diff = diff_runs(old, new)
    [change] = diff.divergences
    assert (change.kind, change.notes, change.gates, diff.exit_code) == (
        "changed", ("status documented -> unexpected",), True, 1)


def test_unexpected_staying_unexpected_does_not_gate_again() -> None:
    diff = diff_runs(fixture("basic"), fixture("basic"))
    assert not diff.gating  # the gate is about what the upgrade changed, not the old debt


def test_disappearing_with_its_adapter_is_not_a_fix() -> None:
    old = fixture("basic")
    new = copy.deepcopy(old)
    new["adapters"] = [a for a in new["adapters"] if a["name"] != "wrong:ltr"]
    row = new["matrix"].pop("wrong:ltr")
    for cell in row.values():
        new["summary"][cell["status"]] -= 1
    new["divergences"] = [d for d in new["divergences"] if d["adapter"] != "wrong:ltr"]
    diff = diff_runs(old, new)
    assert {(c.kind, c.old["id"]) for c in diff.divergences} == {
        ("unchecked", "d0003"), ("unchecked", "d0004"), ("unchecked", "d0008")}
    assert diff.adapters == (AdapterChange("wrong:ltr", "removed", None, None),)


def test_repeated_key_pairs_occurrences_in_order() -> None:
    old = fixture("basic")
    new = copy.deepcopy(old)
    [d] = [d for d in new["divergences"] if d["id"] == "d0003"]
    twin = {**copy.deepcopy(d), "id": "d0100"}
    new["divergences"].append(twin)
    new["matrix"]["wrong:ltr"]["id-parity"]["divergences"].append("d0100")
    diff = diff_runs(old, new)
    assert [(c.kind, c.new["id"]) for c in diff.divergences] == [("new", "d0100")]


def test_text_output_is_terminal_safe() -> None:
    old = fixture("hostile")
    new = drop_divergence(old, "h001", cell_status="unexpected")
    new["environment"]["libraries"]["\x1b]0;pwned\x07"] = "1"
    text = format_text(diff_runs(new, old))
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\x00" not in text
    assert "\\x1b]0;pwned\\x07: absent -> 1" not in text  # it is a removal in this direction
    assert "library \\x1b]0;pwned\\x07: 1 -> absent" in text
    assert '   documented evil:"><img src=x onerror=alert(1)> x id-parity  "<script>alert(1)</script>"  (h001)' in text


def test_json_form_round_trips_lone_surrogates() -> None:
    old = fixture("hostile")
    new = drop_divergence(old, "h006", cell_status="unexpected")
    payload = diff_runs(old, new).to_json()
    text = json.dumps(payload, ensure_ascii=True)
    assert json.loads(text)["divergences"]["fixed"][0]["input"] == {"text": "x\ud800y", "escaped": "x\\ud800y"}


def test_diff_page_has_every_section_and_unique_anchors() -> None:
    html = render_diff(fixture("basic"), fixture("upgraded"))
    assert '<p class="verdict v-fail" id="verdict">FAIL: 1 new unexpected or stale divergence(s)</p>' in html
    for title in ["New divergences", "Changed divergences", "Fixed divergences", "No longer checked",
                  "Changed outcomes for the same input", "Environment and adapters", "Matrix cells"]:
        assert f"<h2>{title}" in html, title
    assert 'id="new0-d0009"' in html and 'id="fixed0-d0003"' in html and 'id="changed2-d0008"' in html
    assert "<script" not in html and "script-src &#39;none&#39;" in html
    assert html == render_diff(fixture("basic"), fixture("upgraded"))
