r"""Backslash escapes, so any code point (a lone surrogate or NUL included) can be written.

Used by ``tokconf encode --escapes``, by YAML cases (``text_escaped``) and by reports
(the reproduction command). ``parse_escapes(escape_text(s)) == s`` for every ``str``.

A long run of one character is written ``\{COUNT*X}`` (``X`` itself escaped, a ``}`` in it
as ``\x7d``), so a reproduce command for 500 spaces stays short: ``escape_text(s,
runs=True)`` writes it, :func:`parse_escapes` always reads it.
"""

from __future__ import annotations

import unicodedata

__all__ = ["EscapeError", "escape_text", "parse_escapes", "visible"]

_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "0": "\0", "'": "'", '"': '"'}
_WIDTH = {"x": 2, "u": 4, "U": 8}


class EscapeError(ValueError):
    """Malformed escape text; the message names the position and the fix."""


def parse_escapes(text: str) -> str:
    r"""Read ``\n \t \r \\ \0 \xNN \uNNNN \UNNNNNNNN`` escapes and ``\{COUNT*X}`` runs.

    >>> parse_escapes(r"a\tb\ud83d\x00")
    'a\tb\ud83d\x00'
    >>> parse_escapes(r"x\{3* }y\{2*\t}")
    'x   y\t\t'
    """
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(text):
            raise EscapeError(f"text ends in a lone backslash at position {i}; write \\\\ for a backslash")
        code = text[i + 1]
        if code in _SIMPLE:
            out.append(_SIMPLE[code])
            i += 2
            continue
        if code == "{":
            star = text.find("*", i + 2)
            close = text.find("}", star + 1) if star != -1 else -1
            count = text[i + 2 : star] if star != -1 else ""
            if close == -1 or not count.isdigit() or close == star + 1:
                raise EscapeError(
                    f"\\{{ at position {i} starts a run: write \\{{COUNT*X}}, e.g. \\{{500* }} for 500 "
                    f"spaces (a }} inside X as \\x7d)"
                )
            out.append(parse_escapes(text[star + 1 : close]) * int(count))
            i = close + 1
            continue
        if code in _WIDTH:
            width = _WIDTH[code]
            digits = text[i + 2 : i + 2 + width]
            if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise EscapeError(
                    f"\\{code} at position {i} needs exactly {width} hex digits, found {digits!r}"
                )
            value = int(digits, 16)
            if value > 0x10FFFF:
                raise EscapeError(f"\\{code}{digits} at position {i} is beyond U+10FFFF")
            out.append(chr(value))
            i += 2 + width
            continue
        raise EscapeError(
            f"unknown escape \\{code} at position {i}; known: \\n \\t \\r \\\\ \\0 \\xNN \\uNNNN "
            f"\\UNNNNNNNN \\{{COUNT*X}} (write \\\\ for a literal backslash)"
        )
    return "".join(out)


def escape_text(text: str, *, runs: bool = False) -> str:
    r"""Escape so the result is printable ASCII-safe and reads back with :func:`parse_escapes`.

    Printable non-ASCII letters are kept; controls, surrogates, format characters
    (U+202E, ZWJ), separators other than space and the backslash are escaped. With
    ``runs=True`` a run of at least :data:`RUN_MIN` equal characters becomes ``\{N*X}``.

    >>> escape_text("a\tb 你\u202e\ud800\\")
    'a\\tb 你\\u202e\\ud800\\\\'
    >>> escape_text("x" + " " * 500 + "\t" * 20, runs=True)
    'x\\{500* }\\{20*\\t}'
    """
    if runs:
        return "".join(_escape_run(ch, n) for ch, n in _runs(text))
    out: list[str] = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif ch == " " or (ch.isprintable() and unicodedata.category(ch) not in {"Cf", "Zs", "Zl", "Zp", "Mn", "Me", "Co"}):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


#: the shortest run of one character that ``escape_text(..., runs=True)`` compresses
RUN_MIN = 16


def _runs(text: str) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for ch in text:
        if out and out[-1][0] == ch:
            out[-1] = (ch, out[-1][1] + 1)
        else:
            out.append((ch, 1))
    return out


def _escape_run(ch: str, count: int) -> str:
    if count < RUN_MIN:
        return escape_text(ch) * count
    return f"\\{{{count}*{escape_text(ch).replace('}', chr(92) + 'x7d')}}}"


_VISIBLE = {" ": "␠", "\n": "␤", "\r": "␍", "\t": "⇥"}


def visible(text: str) -> str:
    r"""Make whitespace and control characters visible in a token piece.

    >>> visible(" a\r\n\t\x00\u3000")
    '␠a␍␤⇥\\x00\\u3000'
    """
    out: list[str] = []
    for ch in text:
        if ch in _VISIBLE:
            out.append(_VISIBLE[ch])
        elif ch.isprintable() and unicodedata.category(ch) not in {"Zs", "Zl", "Zp", "Cf", "Co"}:
            out.append(ch)
        else:
            out.append(escape_text(ch))
    return "".join(out)


def visible_bytes(piece: bytes) -> str:
    r"""A token's bytes for display: UTF-8 text made visible, other bytes as ``\xNN``.

    >>> visible_bytes(b" \xe4\xbd")
    '␠\\xe4\\xbd'
    """
    out: list[str] = []
    i = 0
    while i < len(piece):
        for width in (1, 2, 3, 4):
            chunk = piece[i : i + width]
            try:
                out.append(visible(chunk.decode("utf-8")))
            except UnicodeDecodeError:
                continue
            i += width
            break
        else:
            out.append(f"\\x{piece[i]:02x}")
            i += 1
    return "".join(out)
