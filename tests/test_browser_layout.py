"""The page fits (issue 26, item 1): 1280 px without horizontal scrolling, 390 px reflowed.

Real headless Chromium, as in ``test_browser_report.py``. Each page is opened at a
desktop width (1280 px) and a phone width (390 px) with every divergence opened, and a
screenshot of each lands in ``reports/browser/`` as a test artifact. The assertions:
the document is no wider than the viewport, no element sticks out of it (an element
inside a scroll box is the box's business; the box itself must fit), and at 1280 px the
whole matrix is visible without scrolling its box. The pages: the parity.json of a
default ``tokconf run`` (``tests/data/parity/default-run.json.gz``: ``tokconf run`` with no flags on
this machine, 56 adapter rows, then ``gzip -9`` of its parity.json), the
hand-made fixtures with unavailable adapters and hostile strings, and the basic one with
a twelve-release ladder (``tests/test_ladder_page.py``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from harness.report.cells import CELL_MARKS, reason_line
from harness.report.page import render_report
from tests.test_browser_report import ARTIFACTS, FIXTURES, by_css, fixture, one, require_browser, start_driver
from tests.test_ladder_page import ladder_sample

WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}

#: Every visible element whose box leaves the viewport horizontally, unless an ancestor
#: clips it (a scroll box, an ellipsis): that ancestor is measured instead.
OUTSIDE = """
const vw = document.documentElement.clientWidth;
function clippedByAncestor(el) {
  for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX;
    if (o !== "visible") return true;
  }
  return false;
}
function describe(el) {
  const id = el.id ? "#" + el.id : "";
  const cls = typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\\s+/).join(".") : "";
  return el.tagName.toLowerCase() + id + cls;
}
const outside = [];
for (const el of document.body.querySelectorAll("*")) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  const style = getComputedStyle(el);
  if (style.visibility === "hidden" || style.display === "none") continue;
  if ((r.right > vw + 0.5 || r.left < -0.5) && !clippedByAncestor(el)) {
    outside.push(describe(el) + " [" + Math.round(r.left) + ", " + Math.round(r.right) + "]");
  }
}
return {viewport: vw, document: document.documentElement.scrollWidth, outside: outside.slice(0, 15)};
"""


def default_run() -> dict[str, Any]:
    with gzip.open(FIXTURES / "default-run.json.gz", "rt", encoding="utf-8") as handle:
        return json.load(handle)


PAGES = {"default-run": default_run, "basic": lambda: fixture("basic"), "hostile": lambda: fixture("hostile"),
         "ladder": ladder_sample}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("layout-pages")
    out = {}
    for name, load in PAGES.items():
        path = folder / f"{name}.html"
        path.write_text(render_report(load()), encoding="utf-8")
        out[name] = path.as_uri()
    return out


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    require_browser()
    d = start_driver(tmp_path_factory.mktemp("chromium-profile-layout"), javascript=True)
    try:
        yield d
    finally:
        d.quit()


def open_at(driver: Any, url: str, width: int, height: int, *, open_all: bool = True) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    driver.get(url)
    if open_all:  # every divergence's body measured too, not only the closed lines
        driver.execute_script("document.querySelectorAll('details').forEach(function (d) { d.open = true; });")


@pytest.mark.parametrize("width_name", list(WIDTHS))
@pytest.mark.parametrize("page", list(PAGES))
def test_the_page_fits_the_screen(driver: Any, pages: dict[str, str], page: str, width_name: str) -> None:
    width, height = WIDTHS[width_name]
    open_at(driver, pages[page], width, height)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(ARTIFACTS / f"layout-{page}-{width}.png"))
    found = driver.execute_script(OUTSIDE)
    assert found["document"] <= found["viewport"], found
    assert found["outside"] == [], found


@pytest.mark.parametrize("page", list(PAGES))
def test_at_1280_the_whole_matrix_is_visible_without_scrolling(driver: Any, pages: dict[str, str],
                                                               page: str) -> None:
    open_at(driver, pages[page], *WIDTHS["desktop"], open_all=False)
    box = driver.execute_script(
        "const s = document.querySelector('#matrix').parentElement;"
        "return [s.scrollWidth, s.clientWidth, document.querySelector('#matrix').getBoundingClientRect().right,"
        " document.documentElement.clientWidth];")
    scroll_width, client_width, right, viewport = box
    assert scroll_width <= client_width, box
    assert right <= viewport, box



def test_at_1280_a_twelve_release_ladder_is_visible_without_scrolling(driver: Any, pages: dict[str, str]) -> None:
    open_at(driver, pages["ladder"], *WIDTHS["desktop"], open_all=False)
    box = driver.execute_script(
        "const t = document.querySelector('#ladders table.ladder'); const s = t.parentElement;"
        "return [s.scrollWidth, s.clientWidth, t.getBoundingClientRect().right, document.documentElement.clientWidth,"
        " t.querySelectorAll('thead th.rel').length];")
    scroll_width, client_width, right, viewport, releases = box
    assert releases == 12 and scroll_width <= client_width and right <= viewport, box

def test_on_a_phone_the_matrix_is_a_list_per_adapter(driver: Any, pages: dict[str, str]) -> None:
    open_at(driver, pages["basic"], *WIDTHS["phone"])
    rows = [r for r in by_css(driver, "#matrix tbody tr")]
    assert len(rows) == 7
    for row in rows:
        box = row.rect
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    # each check is named in its chip, since the header row is gone
    cell = one(driver, '#matrix tr[data-adapter="wrong:ltr"] td[data-check="id-parity"]')
    label = driver.execute_script("return getComputedStyle(arguments[0], '::before').content", cell)
    assert label == '"id-parity "'
    assert not one(driver, "#matrix thead").is_displayed()


def test_every_status_has_its_own_glyph_and_word() -> None:
    glyphs = [glyph for glyph, _ in CELL_MARKS.values()]
    words = [word for _, word in CELL_MARKS.values()]
    assert len(set(glyphs)) == len(glyphs) and len(set(words)) == len(words)
    assert set(CELL_MARKS) >= {"agree", "documented", "unexpected", "stale", "unsupported", "empty", "unavailable"}


def test_cells_say_their_status_in_words(driver: Any, pages: dict[str, str]) -> None:
    open_at(driver, pages["basic"], *WIDTHS["desktop"])
    words = {}
    for status in ("agree", "documented", "unexpected", "stale", "unsupported", "unavailable"):
        cell = by_css(driver, f'#matrix td.cell[data-status="{status}"]')[0]
        words[status] = cell.find_element("css selector", ".w").text
    assert words == {"agree": "ok", "documented": "doc", "unexpected": "FAIL", "stale": "stale",
                     "unsupported": "n/a", "unavailable": "off"}
    # the unexpected cell is the only solid one: white on red
    colours = driver.execute_script(
        "const c = document.querySelector('#matrix td.cell[data-status=\"unexpected\"]');"
        "const a = document.querySelector('#matrix td.cell[data-status=\"agree\"]');"
        "return [getComputedStyle(c).backgroundColor, getComputedStyle(c).color, getComputedStyle(a).backgroundColor];")
    assert colours == ["rgb(207, 34, 46)", "rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"]


def test_an_unavailable_adapter_shows_one_line_and_the_fix_behind_a_disclosure(driver: Any,
                                                                             pages: dict[str, str]) -> None:
    reason = next(a["reason"] for a in fixture("basic")["adapters"] if a["name"] == "hf:gpt2")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    driver.get(pages["basic"])
    why = one(driver, '#matrix tr[data-adapter="hf:gpt2"] details.why')
    summary = why.find_element("css selector", "summary")
    assert summary.text == f"⊘ unavailable: {reason_line(reason)}"
    assert summary.size["height"] < 20  # one line, however long the reason
    assert not why.find_element("css selector", ".row-reason").is_displayed()
    summary.click()
    assert why.find_element("css selector", ".row-reason").text == reason
    row = one(driver, '#matrix tr[data-adapter="hf:gpt2"]')
    normal = one(driver, '#matrix tr[data-adapter="gpt2-encoder:gpt2"]')
    summary.click()  # closed again: the row is as tall as any other, give or take the one line
    assert row.size["height"] <= normal.size["height"] + 20, (row.size, normal.size)
