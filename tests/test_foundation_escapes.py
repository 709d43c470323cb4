"""Backslash escapes read and write any code point, lone surrogates and NUL included."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from harness.escapes import EscapeError, escape_text, parse_escapes, visible, visible_bytes


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)))
def test_escape_round_trips_every_string(text: str) -> None:
    assert parse_escapes(escape_text(text)) == text


def test_escaped_form_hides_nothing_dangerous() -> None:
    escaped = escape_text("a\u202eb\u2028c\x00\ud800")
    assert escaped == "a\\u202eb\\u2028c\\x00\\ud800"


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [("abc\\", "lone backslash"), ("\\xZZ", "exactly 2 hex digits"), ("\\q", "unknown escape \\q"),
     ("\\U00110000", "beyond U+10FFFF")],
)
def test_bad_escapes_say_where_and_how(bad: str, fragment: str) -> None:
    with pytest.raises(EscapeError, match="position"):
        parse_escapes(bad)
    with pytest.raises(EscapeError) as info:
        parse_escapes(bad)
    assert fragment in str(info.value)


def test_visible_marks_whitespace_and_controls() -> None:
    assert visible(" \n\r\t\x1c\u2028") == "␠␤␍⇥\\x1c\\u2028"
    assert visible_bytes(" \u4f60".encode()[:3]) == "␠\\xe4\\xbd"
