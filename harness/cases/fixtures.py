"""Where the shipped cases live, and how an adapter name points at a file there portably.

An adapter that takes a path (``gpt2-encoder:DIR``, ``bytebpe:MODEL.json``,
``hf-json:tokenizer.json``, ``source:FILE.py:CLASS``) is named by that path, and a name
is what ``tokconf diff`` keys runs on and what a reproduce command repeats. A name must
therefore never hold an absolute path that differs between two installs of the same
code. Two rules keep it so:

- a file inside the shipped cases folder is named ``{cases}/<path inside it>``, however
  it was given (a case file's ``{here}``, a relative path in a checkout, or the absolute
  path of an installed copy); the families resolve ``{cases}`` back to the real folder,
  so the name works from any folder and in any install;
- any other file keeps the path as given: relative stays relative (to the folder the
  command runs in), absolute stays absolute, because that is what the user typed.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CASES", "default_cases_dir", "portable_argument", "resolve_argument"]

#: In an adapter argument, the shipped cases folder (``gpt2-encoder:{cases}/data/x``).
CASES = "{cases}"
_MARKER = "tokconf case files"  # first line of cases/README.md: tells our folder from others


def default_cases_dir() -> Path:
    """The shipped cases: ``<repo>/cases`` in a checkout, else the installed copy.

    An installed (non-editable) distribution carries them as package data under
    ``harness/data/cases``.
    """
    candidates = _candidate_dirs()
    for candidate in candidates:
        readme = candidate / "README.md"
        if readme.is_file() and _MARKER in readme.read_text(encoding="utf-8").split("\n", 1)[0]:
            return candidate
    raise FileNotFoundError(
        "the shipped tokconf cases were not found (looked in "
        + " and ".join(str(c) for c in candidates)
        + "); reinstall tokconf, or pass case files or folders explicitly"
    )


def _candidate_dirs() -> tuple[Path, ...]:
    package = Path(__file__).resolve().parent.parent  # harness/
    return (package.parent / "cases", package / "data" / "cases")


def _inside_cases(argument: str) -> str | None:
    """``argument``'s path inside the shipped cases folder (POSIX), or ``None``."""
    try:
        root = default_cases_dir().resolve()
        target = Path(argument).expanduser().resolve()
    except (OSError, RuntimeError):  # no shipped cases, or a path that cannot be resolved
        return None
    if target == root:
        return ""
    try:
        return target.relative_to(root).as_posix()
    except ValueError:
        return None


def portable_argument(argument: str) -> str:
    """The argument as an adapter name should carry it.

    >>> portable_argument("{cases}/data/x")
    '{cases}/data/x'
    >>> portable_argument(str(default_cases_dir() / "data" / "x"))
    '{cases}/data/x'
    >>> portable_argument("my/model.json"), portable_argument("/elsewhere/model.json")
    ('my/model.json', '/elsewhere/model.json')
    """
    if argument == CASES or argument.startswith(CASES + "/"):
        return argument
    inside = _inside_cases(argument)
    if inside is None:
        return argument
    return CASES + (f"/{inside}" if inside else "")


def resolve_argument(argument: str) -> Path:
    """The file or folder an adapter argument names: ``{cases}`` is the shipped folder.

    >>> resolve_argument("{cases}/data/x") == default_cases_dir() / "data" / "x"
    True
    >>> resolve_argument("my/model.json").as_posix()
    'my/model.json'
    """
    if argument == CASES:
        return default_cases_dir()
    if argument.startswith(CASES + "/"):
        return default_cases_dir() / argument[len(CASES) + 1:]
    return Path(argument).expanduser()
