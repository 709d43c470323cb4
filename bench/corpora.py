"""The benchmark's texts: three corpora of real text found on this machine, and worst cases.

Nothing is downloaded and nothing is shipped: every corpus is read from what is
installed, and :class:`Corpus` says where each document came from.

- **prose**: the standard library's pydoc topics (``pydoc_data.topics``), split into
  paragraphs on blank lines: English technical prose, 2,608 paragraphs, 461 KB on
  CPython 3.11.
- **python**: the standard library's own top-level ``.py`` files of up to 60 KB, in name
  order.
- **multilingual**: (1) CPython's codec test texts, decoded with the codec each is
  written in (``test/cjkencodings``: Chinese, Japanese, Korean; ``test/encoded_modules``:
  Russian and Latin-1 text); (2) translated messages from the GNU gettext catalogs
  (``.mo``) that installed system packages put under ``share/locale`` (glib, coreutils,
  GTK, PAM: real sentences in dozens of languages), read with a small parser of the
  ``.mo`` format (GNU gettext manual, "The Format of GNU MO Files"). Where no catalog is
  installed the corpus is the CPython texts alone, and its ``source`` says so.

Worst cases (:func:`worst_cases`) are generated: runs of one letter, random letters with
no space, a whitespace run, a digit run, distinct CJK ideographs.
"""

from __future__ import annotations

import random
import struct
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

__all__ = ["Corpus", "WorstCase", "corpora", "worst_cases"]


@dataclass(frozen=True)
class Corpus:
    name: str
    documents: tuple[str, ...]
    source: str

    @property
    def size(self) -> int:
        return sum(len(d.encode("utf-8")) for d in self.documents)


@dataclass(frozen=True)
class WorstCase:
    name: str
    size: int  # characters
    text: str


def _take(documents: list[str], limit: int) -> tuple[str, ...]:
    out: list[str] = []
    total = 0
    for doc in documents:
        if total >= limit:
            break
        out.append(doc)
        total += len(doc.encode("utf-8"))
    return tuple(out)


def prose(limit: int) -> Corpus:
    from pydoc_data.topics import topics

    paragraphs = [p for text in topics.values() for p in text.split("\n\n") if p.strip()]
    return Corpus("prose", _take(paragraphs, limit),
                  "pydoc_data.topics of the standard library (English), paragraphs split on blank lines")


def python_source(limit: int) -> Corpus:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: list[str] = []
    for path in sorted(stdlib.glob("*.py")):
        if path.stat().st_size > 60_000:
            continue  # a few giants (_pydecimal.py) would be most of a small corpus
        try:
            files.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        if sum(len(f.encode("utf-8")) for f in files) >= limit:
            break
    return Corpus("python", _take(files, limit),
                  f"the standard library's top-level .py files up to 60 KB each ({stdlib}), by name")


# -- multilingual ---------------------------------------------------------------------

#: Catalog domains tried in order: the first one installed in several languages is used.
_DOMAINS = ("glib20", "coreutils", "gtk30", "Linux-PAM", "gtk20", "shared-mime-info")
#: A spread of scripts and languages; those installed are used, in this order.
_LANGUAGES = ("zh_CN", "ja", "ko", "ru", "ar", "hi", "el", "he", "th", "uk", "fa", "vi", "tr", "pl",
              "de", "fr", "es", "pt_BR", "it", "sv", "id", "bn", "ta", "ka", "hy", "am", "zh_TW", "cs")


def _cpython_texts() -> list[tuple[str, str]]:
    """(where, text) of CPython's multilingual codec test data, decoded."""
    test = Path(sysconfig.get_paths()["stdlib"]) / "test"
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for path in sorted((test / "cjkencodings").glob("*-utf8.txt")):
        text = path.read_bytes().decode("utf-8", "replace")
        if text not in seen:
            seen.add(text)
            out.append((f"test/cjkencodings/{path.name}", text))
    for name, codec in (("module_koi8_r.py", "koi8_r"), ("module_iso_8859_1.py", "latin-1")):
        path = test / "encoded_modules" / name
        if path.is_file():
            out.append((f"test/encoded_modules/{name}", path.read_bytes().decode(codec, "replace")))
    return out


def read_mo(data: bytes) -> Iterator[tuple[str, str]]:
    """(original, translation) pairs of a GNU ``.mo`` catalog; plural forms joined by newlines.

    The header says the charset; the first entry (empty original) is the header itself
    and is skipped.
    """
    if len(data) < 20:
        return
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        return
    _, count, originals, translations = struct.unpack(order + "4I", data[4:20])
    charset = "utf-8"
    entries = []
    for i in range(count):
        o_len, o_off = struct.unpack(order + "2I", data[originals + 8 * i : originals + 8 * i + 8])
        t_len, t_off = struct.unpack(order + "2I", data[translations + 8 * i : translations + 8 * i + 8])
        entries.append((data[o_off : o_off + o_len], data[t_off : t_off + t_len]))
    for original, translated in entries:
        if original == b"":
            for line in translated.decode("ascii", "replace").split("\n"):
                if "charset=" in line:
                    charset = line.split("charset=")[1].strip() or "utf-8"
            continue
        try:
            yield original.decode(charset), "\n".join(translated.decode(charset).split("\x00"))
        except (LookupError, UnicodeDecodeError):
            continue


def _locale_dirs() -> list[Path]:
    dirs = [Path(sys.prefix) / "share" / "locale", Path("/usr/share/locale"), Path("/usr/local/share/locale")]
    return [d for d in dict.fromkeys(dirs) if d.is_dir()]


def multilingual(limit: int) -> Corpus:
    documents = [text for _, text in _cpython_texts()]
    sources = ["CPython's codec test texts (test/cjkencodings, test/encoded_modules)"] if documents else []
    per_language = max(1000, (limit - sum(len(d.encode()) for d in documents)) // len(_LANGUAGES))
    for folder in _locale_dirs():
        for domain in _DOMAINS:
            found = [(lang, folder / lang / "LC_MESSAGES" / f"{domain}.mo") for lang in _LANGUAGES]
            found = [(lang, path) for lang, path in found if path.is_file()]
            if len(found) < 5:
                continue
            for lang, path in found:
                messages = [t for o, t in read_mo(path.read_bytes()) if t and t != o]
                chunk = "\n".join(messages)
                # a document of about 2 KB, like a page, not thousands of one-line calls
                text = chunk.encode("utf-8")[:per_language].decode("utf-8", "ignore")
                documents += [text[i : i + 2000] for i in range(0, len(text), 2000)]
            sources.append(f"translated messages of {folder}/<lang>/LC_MESSAGES/{domain}.mo "
                           f"({len(found)} languages: {', '.join(lang for lang, _ in found)})")
            break
        if len(sources) > 1:
            break
    if len(sources) <= 1:
        sources.append("no gettext catalog installed here: CPython's texts only")
    return Corpus("multilingual", _take(documents, limit), "; ".join(sources))


def corpora(*, quick: bool) -> list[Corpus]:
    scale = 4 if quick else 1
    return [prose(500_000 // scale), python_source(500_000 // scale), multilingual(300_000 // scale)]


# -- worst cases ---------------------------------------------------------------------


def worst_cases(*, quick: bool) -> list[WorstCase]:
    """Each family in growing sizes, so the time per decade of input can be read off.

    Quick mode stops a decade earlier on the costly families (a megabyte of one piece is
    several seconds per pure-Python encoder).
    """
    rng = random.Random(14)
    top = 5 if quick else 6
    cases = [WorstCase("a*n", 10**k, "a" * 10**k) for k in range(3, 7 if not quick else 6)]
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10**top))
    cases += [WorstCase("random letters", 10**k, letters[: 10**k]) for k in range(4, top + 1)]
    cases += [WorstCase("spaces then x", 10**k, " " * 10**k + "x") for k in range(3, 6)]
    digits = "".join(rng.choice("0123456789") for _ in range(2 * 10**4))
    cases += [WorstCase("digits", 2 * 10**k, digits[: 2 * 10**k]) for k in range(2, 5)]
    cjk = "".join(chr(0x4E00 + i) for i in range(10**4))
    cases += [WorstCase("distinct CJK", 10**k, cjk[: 10**k]) for k in range(2, 5)]
    return cases
