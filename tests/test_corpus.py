"""User corpora: text files split three ways, JSON Lines, folders; streamed; findings name
file and document offset."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cases import corpus as corpus_module
from harness.cases.corpus import CorpusError, CorpusOptions, corpus_case_batches, read_corpus


def docs(paths, **options):
    return [(d.text, d.number, d.offset) for d in read_corpus(paths, CorpusOptions(**options))]


def test_a_text_file_is_one_document_by_default(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_bytes("one\n\ntwo\u2028three\r\n".encode())
    assert docs([f]) == [("one\n\ntwo\u2028three\r\n", 0, 0)]


def test_blank_lines_split_and_nothing_else_does(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    # U+2028, U+0085, \x1c and a lone \r are not line ends: str.splitlines() would cut at each
    text = "first\u2028still first\x85\x1cand\rthis\n\nsecond\r\n  \t\r\nthird\n\n\n"
    f.write_bytes(text.encode())
    assert docs([f], split="blank-line") == [
        ("first\u2028still first\x85\x1cand\rthis", 0, 0),
        ("second", 1, len("first\u2028still first\x85\x1cand\rthis\n\n".encode())),
        ("third", 2, len("first\u2028still first\x85\x1cand\rthis\n\nsecond\r\n  \t\r\n".encode())),
    ]


def test_a_separator_splits_exactly_even_across_read_chunks(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(corpus_module, "_CHUNK", 3)  # the separator straddles chunk ends
    f = tmp_path / "a.txt"
    f.write_bytes("a\x1e\x1eb<SEP>c\n<SEP><SEP>déf".encode())
    assert [t for t, _, _ in docs([f], split="separator", separator="<SEP>")] == ["a\x1e\x1eb", "c\n", "déf"]
    assert [o for _, _, o in docs([f], split="separator", separator="<SEP>")] == [0, 9, 21]


def test_json_lines_keep_lone_surrogates_and_name_the_bad_line(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl"
    f.write_text('{"body": "x\\ud800y"}\n\n{"body": "\\u2028"}\n', encoding="ascii")
    assert docs([f], text_field="body") == [("x\ud800y", 0, 0), ("\u2028", 1, 22)]
    with pytest.raises(CorpusError, match=r"a\.jsonl:1: no string field 'text' \(found \['body'\]\)"):
        docs([f])
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"text": "ok"}\n{"text": \n', encoding="ascii")
    with pytest.raises(CorpusError, match=r"b\.jsonl:2: not JSON"):
        docs([bad])


def test_folders_in_sorted_order_and_non_utf8_named_by_offset(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.txt").write_text("B", encoding="utf-8")
    (tmp_path / "sub" / "a.txt").write_text("A", encoding="utf-8")
    (tmp_path / ".hidden").write_text("H", encoding="utf-8")
    assert [d.text for d in read_corpus([tmp_path])] == ["B", "A"]
    bad = tmp_path / "sub" / "z.txt"
    bad.write_bytes(b"ok\n\nbad \xff here")
    with pytest.raises(CorpusError, match=r"z\.txt: the document at byte 4 is not UTF-8 \(byte 8"):
        list(read_corpus([bad], CorpusOptions(split="blank-line")))
    with pytest.raises(CorpusError, match="no such file or folder"):
        list(read_corpus([tmp_path / "missing"]))


def test_documents_become_cases_named_by_file_document_and_byte(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x\n\ny", encoding="utf-8")
    batches = list(corpus_case_batches([f], CorpusOptions(split="blank-line"), size=1))
    assert [[c.id for c in b] for b in batches] == [[f"corpus:{f}#0@0"], [f"corpus:{f}#1@3"]]


def test_run_corpus_findings_name_the_document(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("plain words\n\nline one\r\nline two\n", encoding="utf-8")
    out = tmp_path / "reports"
    # tests.wrong_adapters:crlf gets \r\n wrong: only the second document shows it
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--plugin", "tests.wrong_adapters:crlf", "--impl", "wrong:crlf", "--no-cases",
         "--no-generated", "--corpus", str(corpus), "--split", "blank-line", "--out", str(out), "--quiet"],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 1, done.stderr
    data = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    cases = {d["case"] for d in data["divergences"] if d["adapter"].startswith("wrong:")}
    assert cases == {f"corpus:{corpus}#1@13"}


def test_run_rejects_an_unreadable_corpus_with_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--impl", "tiktoken:gpt2", "--no-cases",
                           "--no-generated", "--corpus", str(tmp_path / "nope"), "--out", str(tmp_path), "--quiet"],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 2
    assert "no such file or folder" in done.stderr


def test_a_bad_document_mid_corpus_stops_the_run_and_leaves_no_run_folder(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "fine"}\n' * 300 + '{"txt": "no text field"}\n', encoding="utf-8")
    out = tmp_path / "reports"
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--impl", "tiktoken:gpt2", "--no-cases",
                           "--no-generated", "--corpus", str(corpus), "--out", str(out), "--quiet"],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 2, done.stderr
    assert f"{corpus}:301: no string field 'text' (found ['txt'])" in done.stderr
    # the folder made for the corpus's outcome spool (256 documents were spooled) goes with the run
    assert not out.exists() or list(out.iterdir()) == []
