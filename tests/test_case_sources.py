"""Every documented divergence cites something a reader can open.

A `source` is one or more references separated by "; " (outside parentheses). Each reference starts with either
an https URL or the path of a file in this repository, and may go on with words (the
symbol, the quoted line, what to look for). A GitHub file link must pin a commit (40 hex
digits) or a release tag and, unless it is a notebook (GitHub cannot anchor lines in one),
name its lines with #L. The seed documents and this project's issue tracker are not
public, so "seeds/..." and "issue N §M" are refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CASES_DIR = ROOT / "cases"

_GITHUB_BLOB = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/blob/(?P<ref>[^/]+)/(?P<path>[^#\s]+)(?P<anchor>#\S*)?$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_RELEASE_TAG = re.compile(r"^v?\d+(\.\d+)+$")
_LINES = re.compile(r"^#L\d+(-L\d+)?$")
_PRIVATE = re.compile(r"(^|[\s(;])seeds/|\bissue \d+ §", re.IGNORECASE)


def reference_problem(reference: str, *, root: Path) -> str | None:
    """What is wrong with one reference (None: a reader can open it)."""
    head = reference.split(" ", 1)[0]
    if not head:
        return "empty reference"
    if head.startswith("https://"):
        if head.startswith("https://github.com/") and "/blob/" in head:
            match = _GITHUB_BLOB.match(head)
            if match is None:
                return f"GitHub file link not understood: {head}"
            ref = match.group("ref")
            if not (_COMMIT.match(ref) or _RELEASE_TAG.match(ref)):
                return f"GitHub file link at {ref!r}, which moves: pin a commit (40 hex digits) or a release tag"
            anchor = match.group("anchor")
            if not match.group("path").endswith(".ipynb") and (anchor is None or not _LINES.match(anchor)):
                return f"GitHub file link without #L<line>: {head}"
        return None
    if head.startswith(("http://", "www.")):
        return f"not an https URL: {head}"
    if (root / head).is_file():
        return None
    return f"neither an https URL nor a file of this repository: {head!r}"


def split_references(source: str) -> list[str]:
    """The references of a source: split at "; " outside parentheses (remarks may hold "; ")."""
    references, depth, start = [], 0, 0
    for index, char in enumerate(source):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and source.startswith("; ", index):
            references.append(source[start:index])
            start = index + 2
    references.append(source[start:])
    return [reference.strip() for reference in references]


def source_problems(source: object, *, root: Path) -> list[str]:
    """Every problem with one `source` value (empty: it is fine)."""
    if not isinstance(source, str) or not source.strip():
        return [f"source must be a non-empty string, found {source!r}"]
    problems = []
    if _PRIVATE.search(source):
        problems.append("cites the seeds or this project's issues, which are not public")
    for reference in split_references(source):
        problem = reference_problem(reference, root=root)
        if problem is not None:
            problems.append(problem)
    return problems


def _shipped_sources() -> list[tuple[str, str, object]]:
    found = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for case in document.get("cases") or []:
            for entry in case.get("documented") or []:
                found.append((f"{path.name}::{case['id']}", entry.get("check", "?"), entry.get("source")))
    return found


SHIPPED = _shipped_sources()


def test_the_shipped_cases_have_documented_divergences() -> None:
    # If the walk above stopped finding entries (a renamed key), every other test here
    # would pass on nothing.
    assert len(SHIPPED) > 100
    assert all(source is not None for _, _, source in SHIPPED)


@pytest.mark.parametrize(("where", "check", "source"), SHIPPED, ids=[f"{w}::{c}" for w, c, _ in SHIPPED])
def test_every_source_can_be_opened(where: str, check: str, source: object) -> None:
    assert source_problems(source, root=ROOT) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("seeds/001_daa258633ef94afe.txt §原 GPT4Tokenizer 的 decode 有一处缺口", "not public"),
        ("https://github.com/openai/tiktoken/pull/258; issue 3 §2", "not public"),
        ("issue 2 §5 (added tokens are always special)", "not public"),
        ("tokenizers 0.23.3 behaviour, checked with the installed package", "neither an https URL"),
        ("https://github.com/openai/tiktoken/blob/main/tiktoken/core.py#L245", "which moves"),
        ("https://github.com/openai/tiktoken/blob/4e71bbe0c078468e00fefbf94b39849389f346e5/tiktoken/core.py",
         "without #L"),
        ("implementations/no_such_module.py notes", "neither an https URL"),
        ("http://example.org/page", "not an https URL"),
        ("", "non-empty"),
    ],
)
def test_a_source_nobody_can_open_is_refused(source: str, expected: str) -> None:
    problems = source_problems(source, root=ROOT)
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize(
    "source",
    [
        "https://github.com/openai/tiktoken/pull/258",
        "https://github.com/huggingface/transformers/blob/v4.57.1/src/transformers/tokenization_utils.py#L621-L661 tokenize",
        "https://github.com/rasbt/LLMs-from-scratch/blob/28c65cdfbc3338e2e040016eea4b7fdf556e4d57/ch02/01_main-chapter-code/ch02.ipynb SimpleTokenizerV1",
        "implementations/teaching.py SimpleV3; https://www.unicode.org/versions/Unicode17.0.0/",
    ],
)
def test_the_accepted_forms(source: str) -> None:
    assert source_problems(source, root=ROOT) == []
