"""The Jinja2 environment the report pages are rendered with, and their inline assets.

Autoescape is on for every template and every printed value first goes through
:func:`harness.report.view.neutralize` (Jinja2's ``finalize``), so token text can neither
inject markup nor reorder the page with bidi controls. The pages are self-contained:
CSS and JS are inlined, and a Content-Security-Policy allows exactly those two blocks
(by SHA-256) and nothing else: no network, no injected script, no inline handlers.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from harness.report.view import marked_segments, neutralize

__all__ = ["TEMPLATE_DIR", "Assets", "assets", "environment", "neutralize_surrogates", "render_page"]

TEMPLATE_DIR = Path(__file__).with_name("templates")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _finalize(value: Any) -> Any:
    # Markup is template output (macros, the inline assets): its data parts were already
    # finalized and escaped; touching it again would double-escape.
    if isinstance(value, Markup):
        return value
    if value is None:
        return ""
    if isinstance(value, str):
        return neutralize(value)
    return value


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The shared environment: autoescape on, strict undefined, deterministic output."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["marks"] = marked_segments
    return env


@dataclass(frozen=True)
class Assets:
    """Inline CSS and JS with the Content-Security-Policy that admits exactly them."""

    css: Markup
    js: Markup
    csp: str


def _sha256_source(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _read_asset(name: str, closing: str) -> str:
    text = (TEMPLATE_DIR / name).read_text(encoding="utf-8")
    if closing in text.lower():
        # An asset containing its own closing tag would end the inline block early.
        raise ValueError(f"{TEMPLATE_DIR / name} contains {closing!r}; inline assets must not")
    return text


@lru_cache(maxsize=2)
def assets(*, script: bool = True) -> Assets:
    """The page CSS and (optionally) JS, read once, with the matching CSP."""
    css = _read_asset("report.css", "</style")
    js = _read_asset("report.js", "</script") if script else ""
    script_src = _sha256_source(js) if script else "'none'"
    csp = (
        "default-src 'none'; "
        f"style-src {_sha256_source(css)}; "
        f"script-src {script_src}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    return Assets(css=Markup(css), js=Markup(js), csp=csp)


def render_page(template: str, *, script: bool = True, **context: Any) -> str:
    """Render ``template`` with the inline assets; the result holds no lone surrogates."""
    page = environment().get_template(template).render(assets=assets(script=script), **context)
    # Every data value was neutralized; this guards template literals and future slips,
    # since a lone surrogate would make the page impossible to write as UTF-8.
    return neutralize_surrogates(page)


def neutralize_surrogates(text: str) -> str:
    r"""Replace any lone surrogate left in ``text`` by U+FFFD.

    >>> neutralize_surrogates("a\ud800b")
    'a\ufffdb'
    """
    return _SURROGATE.sub("\ufffd", text)
