"""``--encoding-file``: a user's own encoding as data gets tiktoken, hf and rank-mode BPE
adapters over its verified rank file (issue 23); a bad file is exit 2 with file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.encodings import encoding_specs
from harness.encodings.ranks import rank_file_path


def _tokconf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=1200)


def _mine(tmp_path: Path, *, sha: str | None = None) -> Path:
    llama3 = encoding_specs()["llama3"]
    ranks = rank_file_path(llama3.vocabulary)
    if ranks is None:
        pytest.skip("llama-models is not installed")
    pattern = llama3.pattern.replace("'", "''")
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\n"
        "vocabulary:\n"
        "  format: tiktoken\n"
        f"  file: {ranks}\n"
        f"  sha256: {sha or llama3.vocabulary.sha256}\n"
        f"pattern: '{pattern}'\n"
        "special_tokens:\n"
        "  - {token: '<|begin_of_text|>', id: 128000}\n"
        "reference: tiktoken:mine\n", encoding="utf-8")
    return path


def test_a_users_encoding_file_brings_its_adapters(tmp_path: Path) -> None:
    done = _tokconf("encode", "--json", "--encoding-file", str(_mine(tmp_path)), "--impl", "tiktoken:mine",
                    "--impl", "hf:mine", "--impl", "bytebpe-ranks:mine", "--", " Việt")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    ids = {row["impl"]: row["ids"] for row in rows["results"]}
    assert ids == {"tiktoken:mine": [101798], "hf:mine": [101798], "bytebpe-ranks:mine": [101798]}


def test_a_wrong_hash_in_a_users_file_is_refused(tmp_path: Path) -> None:
    done = _tokconf("encode", "--encoding-file", str(_mine(tmp_path, sha="ab" * 32)), "--impl", "tiktoken:mine",
                    "--", "x")
    assert done.returncode == 2
    assert "ab" * 32 in done.stderr and "refusing vocabulary file" in done.stderr


def test_a_bad_encoding_file_is_a_usage_error_with_its_line(tmp_path: Path) -> None:
    path = _mine(tmp_path)
    path.write_text(path.read_text().replace("format: tiktoken", "format: spm"), encoding="utf-8")
    done = _tokconf("list", "--encoding-file", str(path))
    assert done.returncode == 2
    assert f"{path}, line 3: vocabulary.format: must be one of tiktoken, tekken-json" in done.stderr


# ``--encoding-file`` is part of the run's AdapterChoice, so every front door and every
# process that rebuilds the adapters (an isolated worker, a Dask worker) reads the file too.
# The planted fault is the merges-only conversion: " Việt" is one Llama 3 token that
# merging its own bytes never builds (cases/openweight-unreachable.yaml).
VIET_CASE = "version: 1\ndescription: one word\ncases:\n  - id: mine-viet\n    text: ' Việt'\n    encodings: [mine]\n"
MERGES_ONLY_IDS = [11655, 26298, 83]  # " Vi", "ệ", "t": checked with `tokconf encode --impl hf-merges:llama3`


def _unexpected(parity: Path) -> set[tuple[str, str, str]]:
    data = json.loads(parity.read_text(encoding="utf-8"))
    return {(d["adapter"], d["check"], d["input"]["text"]) for d in data["divergences"] if d["status"] == "unexpected"}


def test_an_encoding_file_reaches_isolated_workers(tmp_path: Path) -> None:
    mine = _mine(tmp_path)
    (tmp_path / "viet.yaml").write_text(VIET_CASE, encoding="utf-8")
    common = ["run", "--encoding-file", str(mine), "--isolate", "--cases", str(tmp_path / "viet.yaml"),
              "--no-generated", "--quiet"]
    good = _tokconf(*common, "--impl", "hf:mine", "--out", str(tmp_path / "good"))
    # without the file in the workers' set-up: exit 2, "the worker cannot find hf:mine"
    assert good.returncode == 0, good.stdout + good.stderr
    data = json.loads((tmp_path / "good" / "latest" / "parity.json").read_text(encoding="utf-8"))
    rows = {row["name"]: row for row in data["adapters"]}
    assert set(rows) == {"hf:mine", "tiktoken:mine"}
    assert all(row["isolated"].startswith("worker process") for row in rows.values())
    bad = _tokconf(*common, "--impl", "hf-merges:mine", "--out", str(tmp_path / "bad"))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    parity = tmp_path / "bad" / "latest" / "parity.json"
    assert ("hf-merges:mine", "id-parity", " Việt") in _unexpected(parity)
    found = [d for d in json.loads(parity.read_text(encoding="utf-8"))["divergences"]
             if d["adapter"] == "hf-merges:mine" and d["check"] == "id-parity" and d["input"]["text"] == " Việt"]
    assert found[0]["outcomes"]["hf-merges:mine"]["ids"] == MERGES_ONLY_IDS
    assert found[0]["outcomes"]["tiktoken:mine"]["ids"] == [101798]


API_RUN = """
import json, sys
from harness import AdapterChoice, Plan, execute
from harness.engine.plan import Outputs
plan = Plan(adapters=AdapterChoice.of(encoding_file=[sys.argv[1]], impl=("hf-merges:mine",), no_isolate=True),
            cases=(sys.argv[2],), phases=("cases",), outputs=Outputs(out=sys.argv[3]))
outcome = execute(plan)
print(json.dumps([outcome.exit_code, sorted(d.adapter + " " + d.text for d in outcome.result.by_status("unexpected"))]))
"""


def test_the_python_api_takes_an_encoding_file(tmp_path: Path) -> None:
    (tmp_path / "viet.yaml").write_text(VIET_CASE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", API_RUN, str(_mine(tmp_path)), str(tmp_path / "viet.yaml"),
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().split("\n")[-1]) == [1, ["hf-merges:mine  Việt"]]


def test_the_pytest_plugin_passes_an_encoding_file_to_the_plan(tmp_path: Path) -> None:
    from harness.pytest.suite import SuiteOptions

    mine = _mine(tmp_path)
    plan = SuiteOptions(encoding_files=(str(mine),), impls=("hf:mine",), generated=False).plan()
    # the path made absolute, as for --plugin: a worker's working folder is not ours
    assert plan.adapters.encoding_file == (str(mine.resolve()),)
    assert plan.adapters.impl == ("hf:mine",)


def test_the_pytest_plugin_reads_an_encoding_file(tmp_path: Path) -> None:
    (tmp_path / "viet.yaml").write_text(VIET_CASE, encoding="utf-8")
    (tmp_path / "test_theirs.py").write_text("def test_theirs():\n    assert True\n", encoding="utf-8")
    mine = _mine(tmp_path)

    def pytest_run(impl: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tokconf-encoding-file",
                               str(mine), "--tokconf-impl", impl, "--tokconf-cases", "viet.yaml",
                               "--tokconf-no-generated"], cwd=tmp_path, capture_output=True, text=True, timeout=1200)

    bad = pytest_run("hf-merges:mine")
    assert bad.returncode == 1, bad.stdout[-3000:]
    assert "hf-merges:mine" in bad.stdout and "mine-viet" in bad.stdout
    good = pytest_run("hf:mine")
    assert good.returncode == 0, good.stdout[-3000:]


def test_a_users_encoding_over_a_pinned_file_brings_its_adapters(tmp_path: Path) -> None:
    """``pinned: cl100k_base.tiktoken`` with a pattern of one's own (digits two at a time):
    the docs offer it, yet such an encoding once got no adapter at all (``no adapter named
    'tiktoken:mine'``), as if it were cl100k_base itself."""
    cl100k = (Path(__file__).resolve().parents[1] / "harness" / "encodings" / "data" / "cl100k_base.yaml")
    text = cl100k.read_text(encoding="utf-8")
    path = tmp_path / "mine.yaml"
    path.write_text(text.replace("name: cl100k_base", "name: mine")
                    .replace("reference: tiktoken:cl100k_base", "reference: tiktoken:mine")
                    .replace("run_by_default: true", "run_by_default: false")
                    .replace(r"\p{N}{1,3}+", r"\p{N}{1,2}+"), encoding="utf-8")
    impls = [f for kind in ("tiktoken", "hf", "bytebpe-ranks", "minbpe-fixed") for f in ("--impl", f"{kind}:mine")]
    done = _tokconf("encode", "--json", "--encoding-file", str(path), *impls, "--", "hello 123456")
    assert done.returncode == 0, done.stderr
    ids = {row["impl"]: row["ids"] for row in json.loads(done.stdout)["results"]}
    # "12" "34" "56" where cl100k_base has "123" "456" ([4513, 10961])
    assert ids == {f"{kind}:mine": [15339, 220, 717, 1958, 3487]
                   for kind in ("tiktoken", "hf", "bytebpe-ranks", "minbpe-fixed")}
