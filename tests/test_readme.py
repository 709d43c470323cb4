"""The README gets a newcomer going: short, set-up first, four tasks that run as written.

Every ``sh`` block under "Four everyday tasks" is run here line by line, exactly as
written, from a fresh folder (holding the ``mytokenizer.py`` the first task names), by
the console script's own code (``python -P``: the current folder is not put on the path
by Python, as with the installed ``tokconf``). Each line ends with ``# exit N``, the code
the README promises; the test holds it to that.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONSOLE = [sys.executable, "-P", "-c", "import sys; from harness.cli import main; sys.exit(main(sys.argv[1:]))"]
SETUP = (
    "```sh\n"
    "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/tokconf run\n"
    "apt-get update && apt-get install -y chromium chromium-driver fonts-symbola fonts-noto-cjk && python3 -m venv "
    ".venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest\n"
    "```\n"
)
TASKS = ("Check my tokenizer", "Gate an upgrade", "Make a report", "Reproduce a counterexample")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def task_blocks(text: str) -> dict[str, list[tuple[str, int]]]:
    """Task heading -> its command lines, each with the exit code its ``# exit N`` promises."""
    start = text.index("## Four everyday tasks")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end != -1 else len(text)]
    blocks: dict[str, list[tuple[str, int]]] = {}
    for part in re.split(r"\n### ", section)[1:]:
        title = part.split("\n", 1)[0].strip()
        lines = []
        for block in re.findall(r"```sh\n(.*?)```", part, re.S):
            for line in block.split("\n"):
                if not line.strip():
                    continue
                found = re.fullmatch(r"(tokconf .*?)\s+# exit (\d)", line)
                if found is None:
                    raise ValueError(f"README task {title!r}: {line!r} is not `tokconf ...  # exit N`")
                lines.append((found.group(1), int(found.group(2))))
        blocks[title] = lines
    return blocks


def test_the_readme_is_short_and_starts_with_the_two_setup_commands() -> None:
    text = readme()
    assert len(text.split("\n")) < 250
    assert text.startswith("# tokconf\n\n" + SETUP)


def test_the_four_tasks_come_first_each_with_one_command_block() -> None:
    text = readme()
    blocks = task_blocks(text)
    assert list(blocks) == list(TASKS)
    assert all(blocks[title] for title in TASKS)
    # the tasks come before any reference material
    assert text.index("## Four everyday tasks") < text.index("## Where to read more")


def test_every_local_link_of_the_readme_and_docs_leads_to_a_file() -> None:
    for page in [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "#")):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            assert path.exists(), f"{page.relative_to(ROOT)} links to {target}, which does not exist"


def test_nothing_points_at_files_outside_the_repository() -> None:
    # the design notes and the seeds live outside the repository: a reader cannot open them
    for page in [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]:
        text = page.read_text(encoding="utf-8")
        assert "DESIGN.md" not in text and "seeds/" not in text, page


def test_the_task_commands_run_as_written(tmp_path: Path) -> None:
    # "Check my tokenizer" names a module with tiktoken's API in the current folder
    (tmp_path / "mytokenizer.py").write_text("from tiktoken import get_encoding\n", encoding="utf-8")
    outputs = {}
    for title, lines in task_blocks(readme()).items():
        for command, expected in lines:
            argv = shlex.split(command)
            result = subprocess.run([*CONSOLE, *argv[1:]], cwd=tmp_path, capture_output=True, text=True,
                                    timeout=1800)
            assert result.returncode == expected, (command, result.stdout[-2000:], result.stderr[-2000:])
            outputs[command] = result.stdout
    # what the README says each output means
    assert (tmp_path / "before.tokconf").is_file()
    assert (tmp_path / "reports" / "latest" / "parity.html").is_file()
    decode = next(out for cmd, out in outputs.items() if cmd.startswith("tokconf decode"))
    assert "<|endoftext|>" in decode and "unknown-id (builtins.KeyError)" in decode


def test_a_task_line_without_its_exit_code_is_refused() -> None:
    with pytest.raises(ValueError, match="is not `tokconf ...  # exit N`"):
        task_blocks("## Four everyday tasks\n\n### X\n\n```sh\ntokconf run\n```\n")
