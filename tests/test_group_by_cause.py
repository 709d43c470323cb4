"""Issue 21 item 5: group by cause. Canonical shrinking lowers characters to the simplest
of their class, so one cause gets one minimal input and one divergence; ids come from
content, are stable from run to run and unique on the page, whose header, filter bar and
matrix count labelled things that agree."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Iterator

import pytest
import regex

from harness.cli import main
from harness.generate.shrink import shrink

PLUGIN = ["--plugin", "tests.grouping_adapters:surrogates", "--impl", "grouping:surrogates"]
#: five inputs holding five different lone surrogates (as the generator draws them), and one
#: without: the adapter refuses every lone surrogate, one cause
SURROGATES = ["a\ud808b", "\ud837", "x y \udbff", "\udc00\u4e2d", "hello \ud83d world", "plain"]
CASES = "version: 1\ncases:\n" + "".join(
    f"  - id: s{i}\n    text: {json.dumps(t)}\n    encodings: [cl100k_base]\n" for i, t in enumerate(SURROGATES))


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[tuple[int, dict, str]]]:
    out = []
    cases = tmp_path_factory.mktemp("cases") / "surrogates.yaml"
    cases.write_text(CASES, encoding="utf-8")
    for label in ("first", "second"):
        folder = tmp_path_factory.mktemp(label)
        code = main(["run", *PLUGIN, "--cases", str(cases), "--no-generated", "--quiet", "--out", str(folder)])
        data = json.loads((folder / "latest" / "parity.json").read_text(encoding="ascii"))
        out.append((code, data, (folder / "latest" / "parity.html").read_text(encoding="utf-8")))
    yield out
    # an in-process run registers its plugin process-wide: forget it, or every later run in
    # this pytest process would require (and isolate) the grouping adapter too
    from harness.registry import reset_default_registry

    reset_default_registry()


def test_a_package_raising_on_every_lone_surrogate_is_one_divergence(two_runs: list) -> None:
    code, data, _ = two_runs[0]
    assert code == 1
    mine = [d for d in data["divergences"] if d["adapter"] == "grouping:surrogates"]
    # before canonical shrinking: one divergence per surrogate the generator drew
    assert [(d["status"], d["input"]["text"]) for d in mine] == [("unexpected", "\ud800")]
    [one] = mine
    assert one["occurrences"] > 1
    found = [x["text"] for x in one["examples"]]
    assert found and all(re.search("[\ud800-\udfff]", x) for x in found)
    assert one["check"] == "error-category"
    note = next(n for n in data["run"]["notes"] if n.startswith("grouping by cause: "))
    merged = int(note.split()[3])
    assert merged >= 1


def test_canonical_shrinking_lowers_to_the_simplest_character_of_the_class() -> None:
    def lone(text: str) -> bool:
        return re.search("[\ud800-\udfff]", text) is not None

    assert shrink("ab\ud837cd", lone) == shrink("x\udbffy", lone) == "\ud800"
    # a cause about Han characters meets on one Han character, not on an ASCII one
    assert shrink("\u9fa5\u4e2d", lambda t: regex.search(r"\p{Han}", t) is not None) == "\u3400"
    # a tab stays whitespace (NUL is not a simpler tab)
    assert shrink("a\x0cb", lambda t: re.search(r"[\t\x0b\x0c\r]", t) is not None) == "\t"


def test_ids_are_stable_across_runs_and_unique_on_the_page(two_runs: list) -> None:
    (_, first, page), (_, second, _) = two_runs
    ids = [d["id"] for d in first["divergences"]]
    assert ids == [d["id"] for d in second["divergences"]]
    assert all(re.fullmatch(r"d[0-9a-f]{10}(-\d+)?", i) for i in ids)
    anchors = Counter(re.findall(r'\sid="([^"]+)"', page))
    assert [a for a, n in anchors.items() if n > 1] == []
    # every divergence is one element on the page: what the filter bar counts
    assert len(re.findall(r'<details class="div ', page)) == len(ids)
    statuses = Counter(d["status"] for d in first["divergences"])
    header = f"{len(ids)} divergence(s) ({statuses['unexpected']} unexpected, {statuses['stale']} stale, " \
             f"{statuses['documented']} documented)"
    assert header in page
    assert '<li class="muted">matrix cells:</li>' in page
    cells = Counter(c["status"] for row in first["matrix"].values() for c in row.values())
    for status, count in cells.items():
        assert f'<span class="n" data-count="{status}">{count}</span>' in page
