"""The parity page as HTML text: deterministic, self-contained, everything escaped."""

from __future__ import annotations

import base64
import copy
import doctest
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import harness.report.diff
import harness.report.schema
import harness.report.render
import harness.report.view
from harness.report.page import render_report
from harness.report.schema import STATUSES, ParityValidationError
from harness.report.render import TEMPLATE_DIR, environment
from harness.report.view import align_ids, neutralize

FIXTURES = Path(__file__).parent / "data" / "parity"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="ascii"))


class Page(HTMLParser):
    """Collects tags, attributes, script/style bodies and visible text of a page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._in: str | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._in = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)
        else:
            self.text.append(data)

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())]


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {name: render_report(fixture(name)) for name in ("basic", "upgraded", "hostile")}


@pytest.mark.parametrize("name", ["basic", "upgraded", "hostile"])
def test_rendering_is_a_pure_function_of_the_json(name: str, pages: dict[str, str]) -> None:
    data = fixture(name)
    # what `tokconf run` renders (its dict) and what `tokconf report` renders (the JSON
    # read back) must be the same page, byte for byte
    reread = json.loads(json.dumps(copy.deepcopy(data), ensure_ascii=True))
    assert render_report(reread) == pages[name]
    assert render_report(data) == pages[name]
    # no clock in the page: the only timestamps are the run's own
    stamps = set(re.findall(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}[0-9:.]*Z?", pages[name]))
    assert stamps == {data["run"]["started"], data["run"]["finished"]}


def test_page_is_self_contained_and_locked_down(pages: dict[str, str]) -> None:
    for html in pages.values():
        page = Page(html)
        assert not [a for t, a in page.tags if "src" in a], "nothing may be loaded"
        assert not page.find("link") and not page.find("iframe") and not page.find("img")
        assert not page.find("object") and not page.find("embed") and not page.find("form")
        assert not any("url(" in s or "@import" in s or "@font-face" in s for s in page.styles)
        [csp] = [a["content"] for t, a in page.tags if a.get("http-equiv") == "Content-Security-Policy"]
        [script] = page.scripts
        [style] = page.styles
        assert csp == (f"default-src 'none'; style-src {_sha(style)}; script-src {_sha(script)}; "
                       "img-src 'none'; base-uri 'none'; form-action 'none'")
        hrefs = [a["href"] for t, a in page.tags if t == "a"]
        assert all(h.startswith("#") or h.startswith("https://") for h in hrefs), hrefs
        assert not [name for t, a in page.tags for name in a if name.startswith("on")]


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def test_templates_autoescape_and_never_mark_data_safe() -> None:
    assert environment().autoescape is True
    for path in TEMPLATE_DIR.glob("*.j2"):
        source = re.sub(r"\{#.*?#\}", "", path.read_text(encoding="utf-8"), flags=re.S)
        assert not re.search(r"\|\s*safe|Markup|autoescape\s+false", source), path


def test_hostile_strings_are_text_only(pages: dict[str, str]) -> None:
    html = pages["hostile"]
    page = Page(html)
    assert len(page.find("script")) == 1  # ours; the CSP admits only its hash
    for needle in ["<script>alert", "<img", "</textarea>", "]]>", "<b>", "<![CDATA["]:
        assert needle not in html, needle
    text = "".join(page.text)
    for shown in ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "</textarea>",
                  "]]><![CDATA[", 'evil:"><img src=x onerror=alert(1)>', "<b onmouseover=alert(1)>check</b>",
                  "gone:</td></tr></table><script>alert(1)</script>", "<script>alert('reason')</script> & "]:
        assert shown in text, shown
    # bidi controls, C0 controls and lone surrogates never reach the page raw
    assert not re.search("[\u202a-\u202e\u2066-\u2069\u200e\u200f\x00-\x08\x0b-\x1f\ud800-\udfff]", html)
    assert "abc\\u202edef\\u2066gh" in text
    assert "\\x1b[31mred\\x00\\x07{{ 7*7 }}\\u2028\\u2029" in text
    assert "x\\ud800y" in text and "78 eda080 79" in text
    assert "holds a lone surrogate" in text
    html.encode("utf-8")  # writable


def test_documentation_links_only_for_http_sources(pages: dict[str, str]) -> None:
    page = Page(pages["hostile"])
    # neither a javascript: URL nor a URL holding a quote becomes a link; both show as text
    assert [a["href"] for t, a in page.tags if t == "a" and not a["href"].startswith("#")] == []
    text = "".join(page.text)
    assert "javascript:alert(1)" in text and 'https://example.invalid/a"onmouseover=alert(1)' in text
    basic = Page(pages["basic"])
    assert [a["href"] for t, a in basic.tags if t == "a" and a["href"].startswith("https")] == [
        "https://github.com/openai/gpt-2/issues/1"]


def test_matrix_counts_match_the_summary(pages: dict[str, str]) -> None:
    data = fixture("basic")
    page = Page(pages["basic"])
    cells = [a for t, a in page.tags if t == "td" and "cell" in (a.get("class") or "").split()]
    assert len(cells) == len(data["adapters"]) * len(data["checks"])
    for status in STATUSES:
        assert sum(1 for a in cells if a.get("data-status") == status) == data["summary"].get(status, 0)
    counts = re.findall(r'<span class="n" data-count="([a-z]+)">(\d+)</span>', pages["basic"])
    assert dict((s, int(n)) for s, n in counts) == data["summary"]
    # the verdict counts divergences (what the exit code counts), not cells: 3 unexpected in 2 cells
    assert ('<p class="verdict v-fail" id="verdict">FAIL: 3 unexpected divergences, 1 stale divergence '
            '(exit code 1)</p>') in pages["basic"]


def test_each_cell_links_to_its_divergences(pages: dict[str, str]) -> None:
    page = Page(pages["basic"])
    ids = {a["id"] for t, a in page.tags if a.get("id")}
    links = [a for t, a in page.tags if t == "a" and a.get("data-group")]
    assert [(a["href"], a["data-group"]) for a in links] == [
        ("#d0002-body", "cell-2-3"), ("#d0001-body", "cell-2-5"), ("#d0005-body", "cell-3-4"),
        ("#d0006-body", "cell-3-8"), ("#d0003-body", "cell-4-0"), ("#d0004-body", "cell-4-2"),
        ("#d0007-body", "cell-6-2")]
    for a in links:
        assert a["href"][1:] in ids and a["data-group"] in ids
    details = [a["id"] for t, a in page.tags if t == "details" and "div" in (a.get("class") or "").split()]
    assert sorted(details) == sorted(d["id"] for d in fixture("basic")["divergences"])


def test_divergence_shows_pieces_ids_and_reproduce(pages: dict[str, str]) -> None:
    html = pages["basic"]
    start = html.index('<details class="div st-unexpected" id="d0003"')
    block = html[start: html.index("</details>\n", html.index('<h4>reproduce</h4>', start))]
    assert ('<span class="pc pc0" title="#0 id 15339">hello</span>'
            '<span class="pc pc1 first" title="#1 id 1917"><span class="ws">␠</span>world</span>') in block
    assert '<td class="m-first"><span class="id">220</span><span class="pv"><span class="ws">␠</span></span></td>' in block
    assert '<td class="m-missing"><span class="id"></span><span class="pv"></span></td>' in block
    assert "<code class=\"cmd\">tokconf encode --escapes --impl tiktoken:cl100k_base --impl wrong:ltr -- &#39;hello world&#39;</code>" in block
    assert "first differing pre-token chunk" in block
    assert "merge trace of <bdi>wrong:ltr</bdi> (3 round(s))" in block
    assert "<td><code class=\"tok\">h + e</code></td><td>383</td><td>1</td><td><code class=\"tok\">he</code></td>" in block


def test_documented_divergence_shows_reason_and_source(pages: dict[str, str]) -> None:
    html = pages["basic"]
    assert ('<dt>reason</dt><dd class="reason"><bdi>encoder.py has no special tokens: the literal is 7 '
            'ordinary tokens</bdi></dd>') in html
    assert "<dt>source</dt><dd><bdi>seeds/000 §special tokens</bdi></dd>" in html


def test_environment_and_adapters_are_shown(pages: dict[str, str]) -> None:
    text = "".join(Page(pages["basic"]).text)
    for fragment in ["3.11.2 (CPython)", "Linux-6.1.0-x86_64-with-glibc2.36", "profile ci · seed 0 · max_examples 200",
                     "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                     "tokenizer.json for gpt2 is not in the offline cache; pass --vocab-dir FOLDER",
                     "planted: merges left to right instead of by rank", "tokconf run --plugin tests.wrong_adapters:left_to_right"]:
        assert fragment in text, fragment


def test_render_validates_first() -> None:
    data = fixture("basic")
    data["summary"]["agree"] = 0
    with pytest.raises(ParityValidationError, match=r"\$\.summary\.agree"):
        render_report(data)


def test_align_ids_marks_the_first_difference() -> None:
    [d] = [d for d in fixture("basic")["divergences"] if d["id"] == "d0008"]
    columns, rows = align_ids(d, ["tiktoken:cl100k_base", "wrong:ltr"])
    assert columns == [0, 1, 2, 3, 4]
    assert [(c.token_id, c.mark) for c in rows[0].cells] == [
        ("220", "same"), ("28848", "first"), ("256", "differs"), ("", "missing"), ("", "missing")]
    assert [c.piece for c in rows[1].cells] == ["␠", "␠", "t", "railing", "␠␠"]


def test_bytes_per_token_on_demand(pages: dict[str, str]) -> None:
    html = pages["basic"]
    start = html.index('id="d0002-body"')
    block = html[start: html.index("<h4>outcomes</h4>", start)]
    assert "<summary>show each token's bytes in hex</summary>" in block
    assert block.count('<td><code class="tok">e4bd | a0</code></td>') == 2
    assert "show each token" not in html[html.index('id="d0003-body"'):html.index('id="d0008-body"')]


def test_neutralize_keeps_text_and_tab_newline() -> None:
    assert neutralize("a\tb\nc") == "a\tb\nc"
    assert neutralize("\u200f\u061c\x85\x7f") == "\\u200f\\u061c\\x85\\x7f"


@pytest.mark.parametrize("module", [harness.report.view, harness.report.schema, harness.report.render,
                                    harness.report.diff], ids=lambda m: m.__name__)
def test_docstring_examples(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0
