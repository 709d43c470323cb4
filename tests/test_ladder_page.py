"""The page's Releases section (issue 22): parity.json's ``ladders`` on parity.html, offline.

No release is installed: the ladder is folded by :func:`harness.report.ladder.ladder_sections`
from divergences written here, as a ladder run would fold its own, and added to the basic
fixture. ``ladder_sample`` is also one of the pages ``test_browser_layout.py`` measures.
"""

from __future__ import annotations

import io
import re
from typing import Any

from harness.report.ladder import Behaviour, ladder_sections, print_ladder
from harness.report.page import render_report
from tests.test_browser_report import fixture

#: twelve releases, so the section is measured as wide as a long ladder makes it
RELEASES = [f"0.{n}.0" for n in range(3, 14)] + ["0.14.0 (installed)"]
LONG_KIND = "inconsistent:encode_to_numpy[ordinary]~encode[ordinary]:raised:unencodable-text|ok"


def _divergence(release: str, kind: str, text: str, status: str, case: str | None) -> dict[str, Any]:
    adapter = "tiktoken:o200k_base" if "installed" in release else f"tiktoken@{release}:o200k_base"
    return {"adapter": adapter, "check": "api-surface", "kind": kind, "encoding": "o200k_base", "status": status,
            "input": {"escaped": text}, "case": case}


def ladder_sample() -> dict[str, Any]:
    """The basic fixture with two ladders: tiktoken's twelve releases and an empty npm one."""
    divergences = [
        # fixed in 0.5.0, back in 0.7.0, fixed again in 0.8.0
        *(_divergence(r, "changed:_encode_bytes:ok|ok", "a b\\n\\t<x>", "documented", "enc-bytes")
          for r in ("0.3.0", "0.4.0", "0.7.0")),
        # every release; documented in the installed one only
        *(_divergence(r, LONG_KIND, "\\ud83d", "documented" if "installed" in r else "unexpected", None)
          for r in RELEASES),
        # a new undocumented behaviour of the installed release, on a long input
        _divergence(RELEASES[-1], "segmentation", "x" * 100 + " tail", "unexpected", None),
    ]
    pairs = [("tiktoken:o200k_base" if "installed" in r else f"tiktoken@{r}:o200k_base", r) for r in RELEASES]
    data = fixture("basic")
    data["ladders"] = [*ladder_sections({"divergences": divergences}, [("tiktoken", RELEASES, pairs)]),
                       {"library": "npm:js-tiktoken", "releases": ["1.0.7", "1.0.21"], "adapters": {},
                        "behaviours": []}]
    return data


def _section(page: str) -> str:
    start = page.index('<section id="ladders">')
    return page[start:page.index("</section>", start)]


def _rows(section: str) -> list[str]:
    return re.findall(r"<tr data-encoding=.*?</tr>", section, flags=re.S)


def _cells(row: str) -> list[tuple[str, str]]:
    return re.findall(r'<td class="cell st-[a-z-]+" data-release="([^"]+)" data-status="([a-z-]+)"', row)


def test_the_section_has_the_releases_in_order_and_a_row_per_behaviour() -> None:
    section = _section(render_report(ladder_sample()))
    headers = re.findall(r'<th scope="col" class="rel" data-release="([^"]+)"', section)
    assert headers == RELEASES
    rows = _rows(section)
    # the order of parity.json: what changed inside the ladder first
    assert [re.search(r'data-kind="([^"]*)"', r).group(1) for r in rows] == [
        "changed:_encode_bytes:ok|ok", "segmentation", LONG_KIND]
    fixed, new, everywhere = rows
    assert _cells(fixed) == [(r, "documented" if r in ("0.3.0", "0.4.0", "0.7.0") else "agree") for r in RELEASES]
    assert _cells(new) == [(r, "unexpected" if "installed" in r else "agree") for r in RELEASES]
    assert _cells(everywhere) == [(r, "documented" if "installed" in r else "unexpected") for r in RELEASES]
    # the glyphs and words of the matrix
    assert '<span class="g" aria-hidden="true">◐</span> <span class="w">doc</span>' in fixed
    assert '<span class="g" aria-hidden="true">✓</span> <span class="w">ok</span>' in fixed
    assert '<span class="g" aria-hidden="true">✗</span> <span class="w">FAIL</span>' in everywhere


def test_each_row_says_where_it_shows_where_it_changed_whether_documented_and_its_input() -> None:
    fixed, new, everywhere = _rows(_section(render_report(ladder_sample())))
    assert '<td class="span"><bdi>0.3.0..0.4.0, 0.7.0</bdi></td>' in fixed
    assert '<td class="changed"><bdi>0.5.0</bdi>, <bdi>0.8.0</bdi></td>' in fixed
    assert ('<span class="lg st-documented">◐ documented</span> <bdi class="case">enc-bytes</bdi>'
            ' <span class="muted">[documented]</span>') in fixed
    # whitespace made visible and tinted as in the divergence lines; markup escaped
    assert ('<code class="tok vis" title="escaped: a b\\n\\t&lt;x&gt;"><bdi>a<span class="ws">␠</span>b'
            '<span class="ws">␤⇥</span>&lt;x&gt;</bdi></code>') in fixed
    assert '<bdi>0.14.0 (installed)</bdi></td>' in new
    assert '<td class="changed"><span class="muted">—</span></td>' in new
    assert '<span class="lg st-unexpected">✗ not documented</span> <span class="muted">[unexpected]</span>' in new
    assert "x" * 79 + "…</bdi></code>" in new  # a long input is cut, as the divergence lines cut it
    assert '<bdi>0.3.0..0.14.0 (installed)</bdi> <span class="muted">(every release)</span>' in everywhere
    assert '◐ documented</span> <span class="muted">[documented/unexpected]</span>' in everywhere
    assert '<span class="xe">\\ud83d</span>' in everywhere


def test_the_page_reads_the_same_ladder_as_the_terminal() -> None:
    data = ladder_sample()
    (tiktoken, _) = data["ladders"]
    found = [Behaviour(**{k: tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list)
                          else v for k, v in b.items()}) for b in tiktoken["behaviours"]]
    printed = io.StringIO()
    print_ladder(found, tiktoken["releases"], printed, library="tiktoken")
    assert "on enc-bytes: 0.3.0..0.4.0, 0.7.0; changed in 0.5.0, 0.8.0 [documented]" in printed.getvalue()
    assert "0.3.0..0.4.0, 0.7.0" in _section(render_report(data))


def test_a_ladder_whose_releases_all_agree_says_so() -> None:
    section = _section(render_report(ladder_sample()))
    npm = section[section.index('data-library="npm:js-tiktoken"'):]
    assert "<bdi>1.0.7</bdi> &lt; <bdi>1.0.21</bdi>" in npm
    assert '<table class="ladder" data-library="npm:js-tiktoken">' not in npm
    assert "Every release behaves as the reference on every input." in npm


def test_a_page_without_ladders_has_no_releases_section() -> None:
    page = render_report(fixture("basic"))
    assert 'id="ladders"' not in page and 'class="ladder"' not in page
