"""Issue 23's acceptance, as users run it: a converted ``tokenizer.json`` checked against the
vendor's own tokenizer with ``tokconf run --impl hf-json:FILE --encoding ENC``, and
``tokconf fingerprint`` on files whose pre-tokenizer was swapped.

The files are converted here by tokconf's converter from the pinned ranks (real
``tokenizers`` objects saved as ``tokenizer.json``); the runs are real ``tokconf`` processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("llama_models")
pytest.importorskip("mistral_common")

from harness.encodings import encoding_specs  # noqa: E402
from implementations.openweight.ports import converted_tokenizer  # noqa: E402

#: transformers' TikTokenConverter default: the pattern a converted Tekken file shipped with
#: before `fix_mistral_regex` (Llama 3's, which does not split eBay or digits one by one)
DEFAULT_PATTERN = encoding_specs()["llama3"].pattern


def _save(tmp_path: Path, name: str, encoding: str, **options) -> Path:
    path = tmp_path / f"{name}.json"
    converted_tokenizer(encoding_specs()[encoding], converter="tokconf", **options).save(str(path))
    return path


def _tokconf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                          timeout=1800)


def _run(tmp_path: Path, tokenizer: Path, encoding: str) -> tuple[int, list[dict]]:
    out = tmp_path / f"reports-{tokenizer.stem}"
    done = _tokconf("run", "--impl", f"hf-json:{tokenizer}", "--encoding", encoding, "--no-generated",
                    "--quiet", "--out", str(out))
    parity = json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))
    mine = [d for d in parity["divergences"] if d["adapter"] == f"hf-json:{tokenizer}"
            and d["status"] == "unexpected"]
    return done.returncode, mine


def test_llama3_without_ignore_merges_fails_on_one_word_and_with_it_passes(tmp_path: Path) -> None:
    code, found = _run(tmp_path, _save(tmp_path, "llama3-merges-only", "llama3", ignore_merges=False), "llama3")
    assert code == 1
    smallest = min((d["input"]["text"] for d in found), key=len)
    assert len(smallest.split()) == 1, smallest  # one word, e.g. ' Việt'
    code, found = _run(tmp_path, _save(tmp_path, "llama3-ignore-merges", "llama3"), "llama3")
    assert (code, found) == (0, [])


def test_tekken_with_the_default_split_pattern_fails_within_six_characters(tmp_path: Path) -> None:
    wrong = _save(tmp_path, "tekken-default-pattern", "tekken_240911", pattern=DEFAULT_PATTERN)
    code, found = _run(tmp_path, wrong, "tekken_240911")
    assert code == 1
    assert min(len(d["input"]["text"]) for d in found) <= 6


def _fingerprint(*args: str) -> tuple[int, dict]:
    done = _tokconf("fingerprint", "--json", *args)
    return done.returncode, json.loads(done.stdout)


def test_fingerprint_catches_a_swapped_pre_tokenizer_and_agrees_for_a_correct_conversion(tmp_path: Path) -> None:
    code, vendor = _fingerprint("meta:llama3")
    assert (code, vendor["matches"]) == (0, "llama3")
    good = _save(tmp_path, "llama3-good", "llama3")
    code, converted = _fingerprint(f"hf-json:{good}", "--encoding", "llama3")
    assert (code, converted["matches"], converted["fingerprint"]) == (0, "llama3", vendor["fingerprint"])
    # the transformers-v5 / GGUF fault: the same vocabulary behind another pre-tokenizer
    swapped = _save(tmp_path, "llama3-o200k-split", "llama3", pattern=encoding_specs()["o200k_base"].pattern)
    code, other = _fingerprint(f"hf-json:{swapped}", "--encoding", "llama3")
    assert code == 1 and other["matches"] is None
    assert other["fingerprint"] != vendor["fingerprint"]
