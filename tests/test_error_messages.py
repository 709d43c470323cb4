"""Errors that point at the cause (issue 26, item 3): one test per error a new user met.

Each runs the real command in a subprocess, as the ``tokconf`` console script does
(``python -P``: the current folder is *not* put on the path, unlike ``python -m``), and
checks that the message names the cause (line and column, file and line, byte offset)
and the exit code.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cases import corpus_check
from harness.cases.corpus_check import first_invalid_utf8
from tests.signal_state import when_signalled

# the console script's own body; -P keeps the current folder off sys.path as it does
CONSOLE = [sys.executable, "-P", "-c", "import sys; from harness.cli import main; sys.exit(main(sys.argv[1:]))"]


def tokconf(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CONSOLE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def last_line(text: str) -> str:
    return text.rstrip("\n").split("\n")[-1]


def test_yaml_syntax_error_names_line_and_column_of_the_cause(tmp_path: Path) -> None:
    # the quote opened on line 4 (column 11) is never closed; PyYAML notices at the end of the file
    (tmp_path / "bad.yaml").write_text(
        'version: 1\ncases:\n  - id: a\n    text: "unclosed\n    encodings: [gpt2]\n', encoding="utf-8")
    result = tokconf("run", "--cases", "bad.yaml", "--impl", "tiktoken:gpt2", "--no-generated", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert last_line(result.stderr).startswith("tokconf run: error: bad.yaml:4:11: (YAML syntax)")
    assert "while scanning a quoted scalar (line 4, column 11)" in result.stderr
    assert "found unexpected end of stream (line 6, column 1)" in result.stderr


def test_yaml_syntax_error_in_the_middle_names_where_the_parser_stopped(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("version: 1\ncases:\n  - id: a\n    text: x: y\n", encoding="utf-8")
    result = tokconf("run", "--cases", "bad.yaml", "--impl", "tiktoken:gpt2", "--no-generated", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "bad.yaml:4:12: (YAML syntax)" in result.stderr
    assert "mapping values are not allowed here (line 4, column 12)" in result.stderr


@pytest.mark.parametrize("plugin", ["myplug.py:factory", "myplug:factory"])
def test_a_plugin_that_raises_names_the_file_and_line_of_the_raise(tmp_path: Path, plugin: str) -> None:
    (tmp_path / "myplug.py").write_text(
        "def helper():\n    raise RuntimeError('boom')\n\n\ndef factory():\n    return helper()\n", encoding="utf-8")
    result = tokconf("list", "--plugin", plugin, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    message = last_line(result.stderr)
    assert "calling factory() failed: RuntimeError: boom (raised at myplug.py:2 in helper)" in message
    assert "0x" not in message  # no `<function factory at 0x7f...>`


def test_a_plugin_module_that_raises_on_import_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "brokenplug.py").write_text("x = 1\nraise ValueError('bad config')\n", encoding="utf-8")
    result = tokconf("list", "--plugin", "brokenplug:factory", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "ValueError: bad config (raised at brokenplug.py:2 in <module>)" in result.stderr


def test_a_corpus_file_that_is_not_utf8_stops_the_run_before_anything_runs(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("hello world\n", encoding="utf-8")
    (folder / "b.bin").write_bytes(b"h\xc3\xa9llo w\xffrld")  # the \xff is byte 8
    result = tokconf("run", "--corpus", "corpus", "--impl", "tiktoken:gpt2", "--no-generated",
                     "--out", "reports", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert last_line(result.stderr) == (
        "tokconf run: error: --corpus corpus/b.bin: not UTF-8 at byte 8 (b'\\xffrld'); convert it to UTF-8, "
        "remove it from the folder, or leave such files out with --skip-non-utf8")
    assert "cases" not in result.stderr.replace("such files", "")  # no phase started
    assert not (tmp_path / "reports").exists()


def test_a_corpus_file_named_directly_is_never_skipped(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"abc\xe4\xbd")  # a character cut off by the end
    result = tokconf("snapshot", "-o", "g.tokconf", "--corpus", "b.bin", "--skip-non-utf8",
                     "--impl", "tiktoken:gpt2", "--no-generated", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "--corpus b.bin: not UTF-8 at byte 3 (b'\\xe4\\xbd'); convert it to UTF-8" in result.stderr
    assert not (tmp_path / "g.tokconf").exists()


def test_skip_non_utf8_leaves_the_file_out_with_a_note(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("hello world\n", encoding="utf-8")
    (folder / "b.bin").write_bytes(b"\x80abc")
    result = tokconf("run", "--corpus", "corpus", "--skip-non-utf8", "--impl", "tiktoken:gpt2",
                     "--no-generated", "--no-cases", "--out", "reports", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: --corpus: left out corpus/b.bin: not UTF-8 at byte 0 (b'\\x80abc') (--skip-non-utf8)" \
        in result.stderr
    assert list((tmp_path / "reports").glob("*/parity.json"))
    assert "note: --corpus: left out corpus/b.bin, which is not UTF-8 (--skip-non-utf8)" in result.stdout


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 1 << 20])
def test_the_byte_offset_is_exact_across_read_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     chunk: int) -> None:
    monkeypatch.setattr(corpus_check, "_CHUNK", chunk)
    samples = [b"", b"abc", "héllo 你好".encode(), b"ab\xffcd", "你".encode() + b"\xe4\xbd",
               b"\xe4\xbd\xa0\xe4" + b"x", "ok你".encode() + b"\xc3(", b"\xed\xa0\x80"]
    for index, data in enumerate(samples):
        path = tmp_path / f"s{index}"
        path.write_bytes(data)
        try:
            data.decode("utf-8")
            expected = None
        except UnicodeDecodeError as exc:
            expected = exc.start
        found = first_invalid_utf8(path)
        assert (found[0] if found else None) == expected, (data, found)


def test_gate_on_a_file_that_is_not_a_golden_never_suggests_overwriting_it(tmp_path: Path) -> None:
    not_golden = tmp_path / "notes.txt"
    not_golden.write_text("my notes\n", encoding="utf-8")
    result = tokconf("gate", str(not_golden), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert f"snapshot -o {not_golden}" not in result.stderr
    assert "it is not a tokconf golden" in result.stderr
    assert "`tokconf snapshot -o golden.tokconf`" in result.stderr
    missing = tmp_path / "new.tokconf"
    result = tokconf("gate", str(missing), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert f"tokconf snapshot -o {missing}" in result.stderr  # nothing there: making it is safe


def test_ctrl_c_during_snapshot_ends_with_one_line_saying_what_was_kept(tmp_path: Path) -> None:
    (tmp_path / "g.tokconf").write_bytes(b"earlier golden")
    # 50,000 documents besides the cases: the recording lasts long past the first progress
    # line however busy the machine (a snapshot of the cases alone could finish before the
    # signal arrived); Ctrl-C stops it at once
    (tmp_path / "many.jsonl").write_text("".join(json.dumps({"text": f"document {n}: {n * n}"}) + "\n"
                                                 for n in range(50_000)), encoding="utf-8")
    process = subprocess.Popen([*CONSOLE, "snapshot", "-o", "g.tokconf", "--impl", "tiktoken:gpt2",
                                "--corpus", "many.jsonl"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # wait for the snapshot to be recording (its progress), however slow the machine
    seen = b""
    deadline = time.monotonic() + 600
    while b"snapshot:" not in seen and time.monotonic() < deadline:
        byte = process.stderr.read(1)
        if not byte:
            break
        seen += byte
    assert b"snapshot:" in seen, seen
    state = when_signalled(process.pid)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=600)
    stderr = (seen + err).decode("utf-8", "replace")
    assert process.returncode == 128 + signal.SIGINT, f"{state}\n{stderr}"
    assert "Traceback" not in stderr
    # what finished is kept as a partial golden that --resume completes (issue 22)
    assert re.fullmatch(r"snapshot interrupted by SIGINT \(Ctrl-C\): stopped after \d+ inputs; they are kept in "
                        r"g\.tokconf\.partial: the same command with --resume records the rest", last_line(stderr)), \
        last_line(stderr)
    assert (tmp_path / "g.tokconf").read_bytes() == b"earlier golden"
    assert (tmp_path / "g.tokconf.partial").exists()
    assert not list(tmp_path.glob("g.tokconf.*.tmp"))  # the half-written temporary file is removed


def test_a_module_in_the_current_folder_is_importable_for_tiktoken_compatible(tmp_path: Path) -> None:
    (tmp_path / "mytk.py").write_text("from tiktoken import get_encoding\n", encoding="utf-8")
    result = tokconf("encode", "--impl", "tiktoken-compatible:mytk:cl100k_base", "--json", "--", "hello",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["results"][0]["ids"] == [15339]


def test_without_the_current_folder_the_module_is_not_found(tmp_path: Path) -> None:
    # the control: from another folder the same name is unknown, so the test above
    # passes because of the current folder and nothing else
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "mytk2.py").write_text("from tiktoken import get_encoding\n", encoding="utf-8")
    result = tokconf("encode", "--impl", "tiktoken-compatible:mytk2:cl100k_base", "--", "hello", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "'mytk2' is not importable here" in result.stderr
    assert os.getcwd() != str(tmp_path)


PANICKY = '''
import tiktoken
from harness import Adapter


class Panicky(Adapter):
    """Reaches a real Rust panic in tiktoken (encode_single_piece of no bytes) on text with '!'."""

    name = "panicky:cl100k_base"
    encoding = "cl100k_base"
    library = "tiktoken"

    def __init__(self):
        self._enc = tiktoken.get_encoding("cl100k_base")

    @property
    def special_tokens(self):
        return {}

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        if "!" in text:
            self._enc._core_bpe.encode_single_piece(b"")
        return self._enc.encode_ordinary(text)

    def decode_bytes(self, ids):
        return self._enc.decode_bytes(ids)
'''


@pytest.mark.parametrize("verbose", [False, True])
def test_a_rust_panic_prints_one_line_unless_verbose(tmp_path: Path, verbose: bool) -> None:
    (tmp_path / "panicky.py").write_text(PANICKY, encoding="utf-8")
    args = ["encode", "--plugin", "panicky.py:Panicky", "--impl", "panicky:cl100k_base", "--impl",
            "tiktoken:cl100k_base", *(["--verbose"] if verbose else []), "--", "hi!"]
    env = {**os.environ, "RUST_BACKTRACE": "1"}  # the longest output Rust writes
    result = subprocess.run([*CONSOLE, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stderr  # the adapters disagree: one raised
    assert "raised internal-error (pyo3_runtime.PanicException): range end index" in result.stdout
    if verbose:
        assert re.search(r"^thread '.*'(?: \(\d+\))? panicked at src/lib\.rs:\d+:\d+:$", result.stderr, re.M), result.stderr
        assert "stack backtrace:" in result.stderr
    else:
        assert re.fullmatch(r"note: Rust panicked at src/lib\.rs:\d+:\d+: range end index 2 out of range for slice "
                            r"of length 0 \(--verbose shows Rust's own output\)\n", result.stderr), result.stderr
