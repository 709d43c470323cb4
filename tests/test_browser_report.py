"""The report pages in a real headless Chromium (Debian's chromium + chromium-driver, selenium).

These tests need a browser. Without one they FAIL and say how to install it (CI's
``.ci/run`` installs it); ``TOKCONF_NO_BROWSER=1`` is the explicit opt-out that skips them.
Screenshots land in ``reports/browser/`` as artifacts.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import Any, Iterator

import pytest

from harness.report.page import render_report
from harness.report.diff_page import render_diff

FIXTURES = Path(__file__).parent / "data" / "parity"
ARTIFACTS = Path(__file__).resolve().parents[1] / "reports" / "browser"
CHROMIUM = os.environ.get("TOKCONF_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("TOKCONF_CHROMEDRIVER", "/usr/bin/chromedriver")
HOW_TO_INSTALL = (
    "install Debian's chromium and chromium-driver (apt-get update && apt-get install -y chromium "
    "chromium-driver; CI's .ci/run does), or point TOKCONF_CHROMIUM and TOKCONF_CHROMEDRIVER at a "
    "browser and its driver, or set TOKCONF_NO_BROWSER=1 to skip the browser tests"
)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1000", "--force-device-scale-factor=1")
#: Installed before any page script runs: counts every dialog, then still opens it, so
#: both the counter and WebDriver's alert check would see an injected alert().
DIALOG_TRAP = """
window.__tokconfDialogs = 0;
["alert", "confirm", "prompt", "print"].forEach(function (name) {
  var original = window[name];
  window[name] = function () { window.__tokconfDialogs += 1; return original.apply(window, arguments); };
});
"""


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="ascii"))


def browser_problem() -> str | None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        return f"{' and '.join(missing)} not found: {HOW_TO_INSTALL}"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install 'tokconf[test]' (or pip install selenium)"
    return None


def require_browser() -> None:
    if os.environ.get("TOKCONF_NO_BROWSER") == "1":
        pytest.skip("TOKCONF_NO_BROWSER=1: browser tests opted out")
    problem = browser_problem()
    if problem:
        pytest.fail(problem, pytrace=False)


def test_browser_is_available() -> None:
    require_browser()


def test_missing_browser_fails_with_install_instructions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKCONF_NO_BROWSER", raising=False)
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", "/nonexistent/chromium")
    with pytest.raises(pytest.fail.Exception) as caught:
        require_browser()
    assert str(caught.value) == f"/nonexistent/chromium not found: {HOW_TO_INSTALL}"
    assert "apt-get install -y chromium chromium-driver" in HOW_TO_INSTALL
    monkeypatch.setenv("TOKCONF_NO_BROWSER", "1")
    with pytest.raises(pytest.skip.Exception, match="TOKCONF_NO_BROWSER=1: browser tests opted out"):
        require_browser()


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("pages")
    out = {}
    for name in ("basic", "hostile"):
        path = folder / f"{name}.html"
        path.write_text(render_report(fixture(name)), encoding="utf-8")
        out[name] = path.as_uri()
    diff = folder / "diff.html"
    diff.write_text(render_diff(fixture("basic"), fixture("upgraded")), encoding="utf-8")
    out["diff"] = diff.as_uri()
    return out


def start_driver(profile: Path, *, javascript: bool) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DIALOG_TRAP})
    return driver


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    require_browser()
    d = start_driver(tmp_path_factory.mktemp("chromium-profile"), javascript=True)
    try:
        yield d
    finally:
        d.quit()


@pytest.fixture(scope="module")
def nojs_driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    require_browser()
    d = start_driver(tmp_path_factory.mktemp("chromium-profile-nojs"), javascript=False)
    try:
        yield d
    finally:
        d.quit()


def by_css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def one(driver: Any, selector: str) -> Any:
    found = by_css(driver, selector)
    assert len(found) == 1, (selector, len(found))
    return found[0]


def assert_no_dialog(driver: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 - the access itself is the check
    assert driver.execute_script("return window.__tokconfDialogs") == 0


def test_matrix_renders_with_the_right_counts(driver: Any, pages: dict[str, str]) -> None:
    data = fixture("basic")
    driver.get(pages["basic"])
    assert driver.title == "tokconf parity · 20261130T071500Z"
    for status, count in data["summary"].items():
        assert one(driver, f'#summary [data-count="{status}"]').text == str(count)
        assert len(by_css(driver, f'#matrix td.cell[data-status="{status}"]')) == count
    rows = by_css(driver, "#matrix tbody tr")
    assert [r.get_attribute("data-adapter") for r in rows] == [a["name"] for a in data["adapters"]]
    headers = by_css(driver, "#matrix thead th.chk")
    assert [h.get_attribute("textContent") for h in headers] == data["checks"]
    cell = one(driver, '#matrix tr[data-adapter="wrong:ltr"] td[data-check="id-parity"]')
    assert (cell.text, cell.get_attribute("data-status")) == ("✗ FAIL 2", "unexpected")
    assert "412 input(s)" in cell.get_attribute("title")
    assert one(driver, "#verdict").text == "FAIL: 3 unexpected divergences, 1 stale divergence (exit code 1)"
    assert one(driver, "#shown").text == "showing 8 of 8 divergence(s)"
    assert_no_dialog(driver)


def test_clicking_a_cell_opens_its_divergences(driver: Any, pages: dict[str, str]) -> None:
    driver.get(pages["basic"])
    assert not one(driver, "#d0003").get_attribute("open")
    assert not one(driver, "#d0003-body").is_displayed()
    one(driver, '#matrix tr[data-adapter="wrong:ltr"] td[data-check="id-parity"] a').click()
    for ident in ("d0003", "d0008"):
        assert one(driver, f"#{ident}").get_attribute("open") == "true"
    assert not one(driver, "#d0001").get_attribute("open")
    assert "target" in one(driver, "#cell-4-0").get_attribute("class")
    body = one(driver, "#d0003-body")
    assert body.is_displayed()
    pieces = [p.text for p in body.find_elements("css selector", ".prow .toks")]
    assert pieces == ["hello␠world", "hello␠world"]
    first = [p.text for p in body.find_elements("css selector", ".pc.first")]
    assert first == ["␠world", "␠"]
    assert [c.text for c in body.find_elements("css selector", "table.ids td.m-first")] == ["1917\n␠world", "220\n␠"]
    assert one(driver, "#d0003-body code.cmd").text == (
        "tokconf encode --escapes --impl tiktoken:cl100k_base --impl wrong:ltr -- 'hello world'")
    hexes = body.find_elements("css selector", "details.hex")
    assert not hexes[0].find_element("css selector", "code").is_displayed()
    hexes[0].find_element("css selector", "summary").click()
    assert hexes[0].find_element("css selector", "code").text == "68 65 6c 6c 6f 20 77 6f 72 6c 64"
    assert_no_dialog(driver)


def test_filters_by_adapter_encoding_check_and_status(driver: Any, pages: dict[str, str]) -> None:
    from selenium.webdriver.support.ui import Select

    driver.get(pages["basic"])

    def shown_divergences() -> list[str]:
        return [d.get_attribute("id") for d in by_css(driver, "details.div") if d.is_displayed()]

    def shown_rows() -> list[str]:
        return [r.get_attribute("data-adapter") for r in by_css(driver, "#matrix tbody tr") if r.is_displayed()]

    adapter = Select(one(driver, 'select[data-filter="adapter"]'))
    adapter.select_by_value("wrong:ltr")
    assert shown_divergences() == ["d0003", "d0008", "d0004"]
    assert shown_rows() == ["wrong:ltr"]
    assert one(driver, "#shown").text == "showing 3 of 8 divergence(s)"
    Select(one(driver, 'select[data-filter="check"]')).select_by_value("round-trip")
    assert shown_divergences() == ["d0004"]
    assert [h.text for h in by_css(driver, "#matrix thead th.chk") if h.is_displayed()] == ["round-trip"]
    one(driver, "#reset").click()
    assert len(shown_divergences()) == 8 and len(shown_rows()) == 7
    Select(one(driver, 'select[data-filter="encoding"]')).select_by_value("r50k_base")
    assert shown_divergences() == ["d0002", "d0001"]
    assert shown_rows() == ["tiktoken:r50k_base", "gpt2-encoder:gpt2", "hf:gpt2"]
    one(driver, "#reset").click()
    one(driver, '#summary button[data-status="stale"]').click()
    assert shown_divergences() == ["d0005"]
    assert one(driver, '#summary button[data-status="stale"]').get_attribute("aria-pressed") == "true"
    dimmed = by_css(driver, "#matrix td.cell.dim")
    assert len(dimmed) == len(by_css(driver, "#matrix td.cell[data-status]")) - 1
    one(driver, '#summary button[data-status="stale"]').click()  # toggles off
    assert len(shown_divergences()) == 8
    assert_no_dialog(driver)


def test_hostile_strings_show_as_text_and_nothing_runs(driver: Any, pages: dict[str, str]) -> None:
    data = fixture("hostile")
    driver.get(pages["hostile"])
    one(driver, "#expand").click()
    evil = data["adapters"][1]["name"]
    rows = {r.get_attribute("data-adapter"): r for r in by_css(driver, "#matrix tbody tr")}
    assert list(rows) == [a["name"] for a in data["adapters"]]
    assert rows[evil].find_element("css selector", "th .aname").text == evil
    assert [h.get_attribute("textContent") for h in by_css(driver, "#matrix thead th.chk")] == data["checks"]
    for d in data["divergences"]:
        escaped = one(driver, f"#{d['id']}-body code.esc").text
        assert escaped == d["input"]["escaped"]
    assert one(driver, "#h001-body code.input-visible").text == "<script>alert(1)</script>"
    assert one(driver, "#h002-body code.input-visible").text == '"><img␠src=x␠onerror=alert(1)>'
    assert one(driver, "#h003-body code.input-visible").text == "</textarea><script>alert(1)</script>"
    assert one(driver, "#h004-body code.input-visible").text == "]]><![CDATA[<script>alert(1)</script>]]>"
    # U+202E never reaches the page raw, so it cannot reverse what follows it
    assert one(driver, "#h005-body code.input-visible").text == "abc\\u202edef\\u2066gh"
    assert one(driver, "#h006-body code.input-visible").text == "x\\ud800y"
    reason = one(driver, "#h001-body dd.reason").text
    assert reason == "<script>alert('reason')</script> & \\u202e reversed"
    toks = [t.text for t in by_css(driver, "#h001-body .prow .toks")]
    assert toks[1] == "<<script>alert(1)</script>\\u202e\"><img src=x onerror=alert(1)>"
    body_text = driver.execute_script("return document.body.innerText")
    assert not any(ch in body_text for ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    counts = driver.execute_script(
        "return ['script','img','iframe','object','embed','textarea','svg','math']"
        ".map(function (t) { return document.getElementsByTagName(t).length; })")
    assert counts == [1, 0, 0, 0, 0, 0, 0, 0]
    handlers = driver.execute_script(
        "var n = 0; document.querySelectorAll('*').forEach(function (e) {"
        "  for (var i = 0; i < e.attributes.length; i++) { if (/^on/i.test(e.attributes[i].name)) { n++; } } });"
        "return n;")
    assert handlers == 0
    for link in by_css(driver, "a[href]"):
        assert link.get_attribute("href").startswith(pages["hostile"] + "#")
    assert_no_dialog(driver)


def test_dialog_trap_would_catch_an_alert(driver: Any, pages: dict[str, str]) -> None:
    """Positive control: the checks above would see a dialog if one opened."""
    driver.get(pages["basic"])
    driver.execute_script("setTimeout(function () { alert('control'); }, 0)")
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    alert = WebDriverWait(driver, 10).until(expected_conditions.alert_is_present())
    assert alert.text == "control"
    alert.accept()
    assert driver.execute_script("return window.__tokconfDialogs") == 1


def test_page_works_with_javascript_off(nojs_driver: Any, pages: dict[str, str]) -> None:
    driver = nojs_driver
    driver.get(pages["basic"])
    assert not one(driver, "#filters").is_displayed()  # only the page script reveals it
    assert one(driver, "noscript p.note").is_displayed()
    assert not one(driver, "#d0006").get_attribute("open")
    one(driver, "#d0006 > summary").click()
    assert one(driver, "#d0006").get_attribute("open") == "true"
    assert one(driver, "#d0006-body").is_displayed()
    # a matrix cell is a link into its first divergence; following it opens the details
    one(driver, '#matrix tr[data-adapter="gpt2-encoder:gpt2"] td[data-check="special-policy"] a').click()
    assert driver.current_url.endswith("#d0001-body")
    assert one(driver, "#d0001").get_attribute("open") == "true"
    assert [t.text for t in by_css(driver, "#d0001-body .prow .toks")] == ["<|endoftext|>", "<|endoftext|>"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / "parity-nojs.png"))
    driver.get(pages["hostile"])
    one(driver, "#h001 > summary").click()
    assert one(driver, "#h001-body code.input-visible").text == "<script>alert(1)</script>"
    assert_no_dialog(driver)


def decode_png(data: bytes) -> tuple[int, int, list[bytes], int]:
    """Width, height, unfiltered rows and bytes per pixel of an 8-bit RGB(A) PNG (stdlib only)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, color type {color}, interlace {interlace}")
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def assert_not_blank(png: bytes) -> None:
    width, height, rows, bpp = decode_png(png)
    assert (width, height) == (1400, 1000)
    colors = set()
    inked = 0
    for row in rows[::4]:
        for x in range(0, width * bpp, bpp * 4):
            pixel = row[x : x + 3]
            colors.add(pixel)
            inked += pixel != b"\xff\xff\xff"
    sampled = len(rows[::4]) * len(range(0, width * bpp, bpp * 4))
    assert len(colors) >= 20, f"only {len(colors)} colours: the page looks blank"
    assert inked / sampled > 0.03, f"only {inked / sampled:.1%} of the page is not white"


def test_screenshots_are_not_blank(driver: Any, pages: dict[str, str]) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.get(pages["basic"])
    shots = {"parity.png": driver.get_screenshot_as_png()}
    one(driver, '#matrix tr[data-adapter="wrong:ltr"] td[data-check="id-parity"] a').click()
    shots["parity-divergence.png"] = driver.get_screenshot_as_png()
    driver.get(pages["hostile"])
    one(driver, "#expand").click()
    driver.execute_script("document.getElementById('h005').scrollIntoView()")
    shots["hostile.png"] = driver.get_screenshot_as_png()
    driver.get(pages["diff"])
    shots["diff.png"] = driver.get_screenshot_as_png()
    for name, png in shots.items():
        (ARTIFACTS / name).write_bytes(png)
        assert_not_blank(png)
    assert_no_dialog(driver)


def test_no_network_and_no_console_errors(driver: Any, pages: dict[str, str]) -> None:
    driver.get_log("performance")  # drop what earlier tests logged
    driver.get_log("browser")
    for name in ("basic", "hostile", "diff"):
        driver.get(pages[name])
        if name != "diff":
            one(driver, "#expand").click()
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    assert urls and all(u.startswith("file://") for u in urls), urls
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []  # a CSP violation (wrong script hash) would show here


def _cjk_families() -> set[str]:
    """Font families on this machine that hold 你 (U+4F60), as fontconfig knows them."""
    import subprocess

    listed = subprocess.run(["fc-list", ":charset=4f60", "family"], capture_output=True, text=True, timeout=60)
    return {name.strip() for line in listed.stdout.split("\n") for name in line.split(",") if name.strip()}


def test_chinese_token_pieces_render_with_real_glyphs(driver: Any, pages: dict[str, str]) -> None:
    # Without a CJK font Chromium draws 你 as an empty box from whatever font it tried
    # first; with one, the font that drew it is one that holds the character.
    families = _cjk_families()
    assert families, "no font with CJK glyphs: apt-get install fonts-noto-cjk (CI's .ci/run does)"
    driver.get(pages["basic"])
    driver.execute_script("document.getElementById('d0002').open = true")
    driver.execute_cdp_cmd("DOM.enable", {})
    driver.execute_cdp_cmd("CSS.enable", {})
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = driver.execute_cdp_cmd("DOM.querySelector", {"nodeId": root, "selector": "#d0002 .input-visible bdi"})
    assert node["nodeId"], "the visible input of d0002 (你) is not on the page"
    fonts = driver.execute_cdp_cmd("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
    drawn = [f for f in fonts if f["glyphCount"] > 0]
    assert drawn and all(f["familyName"] in families for f in drawn), (fonts, sorted(families)[:5])
    width = driver.execute_script("return document.querySelector('#d0002 .input-visible bdi').getBoundingClientRect().width")
    assert width > 0
