"""Notebook cell selection: only the definitions a class needs run; downloads never do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.registry import AdapterUnavailable, Registry
from implementations.source import adapter as source
from implementations.foreign import NetworkBlocked
from implementations.source.adapter import SourceAdapter
from implementations.source.notebook import (
    NotebookError,
    python_of_cell,
    read_statements,
    select,
)
from implementations.source.spec import load_spec

NOTEBOOKS = Path(__file__).parent / "data" / "foreign" / "checkouts" / "LLMs-from-scratch" / "ch02" / "05_bpe-from-scratch"
SIMPLE = NOTEBOOKS / "bpe-from-scratch-simple.ipynb"
COMPLEX = NOTEBOOKS / "bpe-from-scratch.ipynb"


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test notebooks' download and training cells write here if they ever run."""
    path = tmp_path / "cell-ran.marker"
    monkeypatch.setenv("TOKCONF_TEST_MARKER", str(path))
    return path


def write_notebook(path: Path, cells: list[str]) -> Path:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": src}
                  for src in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }), encoding="utf-8")
    return path


def spec_for(tmp_path: Path, notebook: Path, **extra) -> Path:
    data = {"tokconf_source_spec": 1, "source": str(notebook), "class": "BPETokenizerSimple",
            "encoding": "trained", "special_policy": "none",
            "setup": [{"call": "train", "args": ["the cat sat on the mat", 270]}],
            "encode": {"method": "encode"}, "decode": {"method": "decode"}, **extra}
    path = tmp_path / "nb.tokconf.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def picked(selection) -> list[tuple[int, int, list[str]]]:
    return [(s.cell, s.line, sorted(s.binds)) for s in selection.statements]


def test_shell_magic_and_non_python_cells_are_noted_not_run() -> None:
    _, notes = read_statements(SIMPLE)
    assert notes == {5: "shell line (!)", 7: "magic line (%)", 8: "not Python (invalid syntax, line 1)"}
    _, notes = read_statements(COMPLEX)
    assert notes == {8: "cell magic %%bash: not Python"}
    assert python_of_cell("%%time\nx = 1") == ("pass  # cell magic removed by tokconf\nx = 1", "")
    assert python_of_cell("  %pip install regex") == ("  pass  # magic line removed by tokconf", "magic line (%)")


def test_statements_that_download_write_or_train_are_never_definitions() -> None:
    statements, _ = read_statements(SIMPLE)
    reasons = {(s.cell, s.line): s.reason for s in statements if not s.definition}
    assert reasons[(4, 5)] == "writes files (open for writing)"
    assert reasons[(4, 7)] == "downloads (urllib.request.urlretrieve)"
    assert reasons[(6, 1)] == "calls BPETokenizerSimple() at top level"
    assert reasons[(6, 2)] == "trains (tokenizer.train)"
    assert reasons[(1, 2)] == "calls bytearray() at top level"
    statements, _ = read_statements(COMPLEX)
    reasons = {(s.cell, s.line): s.reason for s in statements if not s.definition}
    assert reasons[(6, 3)] == "downloads (download_file_if_absent)"


def test_simple_notebook_selects_the_class_and_its_imports_only() -> None:
    statements, notes = read_statements(SIMPLE)
    selection = select(statements, ["BPETokenizerSimple"], cell_notes=notes)
    assert picked(selection) == [(3, 1, ["Counter", "deque"]), (3, 4, ["BPETokenizerSimple"])]
    assert selection.skipped == () and selection.unresolved == ()


def test_complex_notebook_follows_helpers_transitively() -> None:
    statements, notes = read_statements(COMPLEX)
    selection = select(statements, ["BPETokenizerSimple"], cell_notes=notes)
    assert picked(selection) == [
        (1, 1, ["Counter", "deque"]), (1, 2, ["json"]), (1, 3, ["re"]),
        (2, 2, ["GPT2_NEWLINE_ID"]), (2, 4, ["_PIECE"]), (2, 7, ["pretokenize_text"]),
        (5, 1, ["BPETokenizerSimple"]),
    ]
    # the download helper is a harmless def, but nothing needs it: not selected
    assert all("download_file_if_absent" not in s.binds for s in selection.statements)


def test_building_the_adapter_runs_no_download_or_training_cell(marker: Path, tmp_path: Path) -> None:
    for notebook in (SIMPLE, COMPLEX):
        adapter = SourceAdapter(load_spec(spec_for(tmp_path, notebook)))
        assert adapter.encode("the cat") == adapter.encode("the cat")
        assert adapter.decode(adapter.encode("the mat")) == "the mat"
    assert not marker.exists()


def test_a_forced_download_cell_runs_and_meets_the_network_guard(marker: Path, tmp_path: Path) -> None:
    spec = load_spec(spec_for(tmp_path, SIMPLE, cells=[4]))
    with pytest.raises(OSError) as info:
        SourceAdapter(spec)
    assert marker.read_text() == "download cell ran\n"  # forcing works: the cell ran...
    assert "tokconf is offline" in str(info.value)  # ...and its download was refused
    assert isinstance(info.value, NetworkBlocked) or isinstance(getattr(info.value, "reason", None), NetworkBlocked)


def test_a_forced_download_through_the_registry_is_an_unavailable_adapter(marker: Path, tmp_path: Path) -> None:
    registry = Registry()
    registry.add(source.family(), provider="test")
    path = spec_for(tmp_path, SIMPLE, cells=[4])
    with pytest.raises(AdapterUnavailable, match="tokconf is offline"):
        registry.get(f"source:{path}")


def test_a_cell_with_shell_lines_cannot_be_forced(tmp_path: Path) -> None:
    spec = load_spec(spec_for(tmp_path, SIMPLE, cells=[5]))
    with pytest.raises(NotebookError, match=r"cells: \[5\] cannot be forced: it has shell line \(!\)"):
        SourceAdapter(spec)


def test_forcing_a_cell_that_is_not_code(tmp_path: Path) -> None:
    spec = load_spec(spec_for(tmp_path, SIMPLE, cells=[0]))
    with pytest.raises(NotebookError, match=r"cells: \[0\] names no code cell"):
        SourceAdapter(spec)


def test_a_class_that_only_a_non_definition_binds_needs_forcing(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "nb.ipynb", ["import os", "if os.name:\n    class BPETokenizerSimple:\n        pass"])
    statements, notes = read_statements(notebook)
    with pytest.raises(NotebookError, match=r"BPETokenizerSimple is defined in cell 1 \(line 1\) by a statement "
                                            r"tokconf will not run on its own.*`cells: \[1\]`"):
        select(statements, ["BPETokenizerSimple"], cell_notes=notes)
    selection = select(statements, ["BPETokenizerSimple"], force_cells=[1], cell_notes=notes)
    assert picked(selection) == [(0, 1, ["os"]), (1, 1, ["BPETokenizerSimple"])]


def test_an_unknown_class_lists_what_is_defined() -> None:
    statements, notes = read_statements(SIMPLE)
    with pytest.raises(NotebookError, match="nothing defines 'Nope'; classes and functions defined here: BPETokenizerSimple"):
        select(statements, ["Nope"], cell_notes=notes)


def test_needed_names_bound_only_by_running_code_are_reported(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "nb.ipynb", [
        "VOCAB = open('vocab.txt').read()",
        "class Tok:\n    def size(self):\n        return len(VOCAB) + len(helper())",
        "def helper():\n    return SUFFIX",
        "SUFFIX = 'x' * 3",
        "display(Tok())",
    ])
    statements, notes = read_statements(notebook)
    selection = select(statements, ["Tok"], cell_notes=notes)
    # helper and SUFFIX come after the class (used only when called): still selected
    assert picked(selection) == [(1, 1, ["Tok"]), (2, 1, ["helper"]), (3, 1, ["SUFFIX"])]
    assert selection.skipped == ("VOCAB (bound in cell 0 line 1, which calls open(...).read() at top level)",)
    assert selection.unresolved == ()


def test_locals_of_methods_do_not_pull_in_globals_of_the_same_name(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "nb.ipynb", [
        "text = 'a global that the class never reads'\nprint(text)",
        "class Tok:\n    def encode(self, text):\n        ids = [ord(c) for c in text]\n        return ids",
    ])
    statements, notes = read_statements(notebook)
    assert picked(select(statements, ["Tok"], cell_notes=notes)) == [(1, 1, ["Tok"])]


def test_definition_time_calls_make_a_statement_unsafe(tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "nb.ipynb", [
        "import re\nimport requests",
        "PATTERN = re.compile(r'\\w+')",
        "DATA = requests.get('https://example.invalid/data')",
        "class Tok:\n    table = requests.get('https://example.invalid/table')",
        "def f(x=requests.get('https://example.invalid/default')):\n    return x",
    ])
    statements, _ = read_statements(notebook)
    kinds = {(s.cell, tuple(sorted(s.binds))): (s.definition, s.reason) for s in statements}
    assert kinds[(1, ("PATTERN",))] == (True, "")
    assert kinds[(2, ("DATA",))] == (False, "downloads (requests.get)")
    assert kinds[(3, ("Tok",))] == (False, "downloads (requests.get)")
    assert kinds[(4, ("f",))] == (False, "downloads (requests.get)")


def test_a_notebook_that_is_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(NotebookError, match="not a readable .ipynb"):
        read_statements(bad)
