"""``--executor`` without Dask: a usage error naming the install; the local executor never imports it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _main(argv: list[str], *, block_dask: bool, after: str = "") -> subprocess.CompletedProcess:
    code = ("import sys\n"
            + ("sys.modules['dask'] = None; sys.modules['distributed'] = None\n" if block_dask else "")
            + "from harness.cli import main\n"
            + f"code = main({argv!r})\n" + after + "sys.exit(code)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def _corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one document\n\nand another\n", encoding="utf-8")
    return corpus


def test_dask_executor_without_dask_is_a_usage_error_naming_the_install(tmp_path: Path) -> None:
    done = _main(["run", "--impl", "tiktoken:cl100k_base", "--no-cases", "--no-generated", "--quiet",
                  "--corpus", str(_corpus(tmp_path)), "--out", str(tmp_path), "--executor", "dask"], block_dask=True)
    assert done.returncode == 2, done.stderr
    assert "pip install 'tokconf[dask]'" in done.stderr
    assert not (tmp_path / "latest").exists()


def test_the_local_executor_does_not_import_dask(tmp_path: Path) -> None:
    done = _main(["run", "--impl", "tiktoken:cl100k_base", "--no-cases", "--no-generated", "--quiet",
                  "--corpus", str(_corpus(tmp_path)), "--split", "blank-line", "--out", str(tmp_path)],
                 block_dask=False,
                 after="assert not {'dask', 'distributed'} & set(sys.modules), 'dask was imported'\n")
    assert done.returncode == 0, done.stderr
    import json

    info = json.loads((tmp_path / "latest" / "parity.json").read_text(encoding="utf-8"))["run"]["executor"]
    assert (info["kind"], info["workers"], info["scheduler"], info["documents"], info["shards"]) == \
        ("local", 1, None, 2, 1)


def test_dask_flags_need_the_dask_executor(tmp_path: Path) -> None:
    for flag in (["--scheduler", "tcp://127.0.0.1:8786"], ["--resume", str(tmp_path)], ["--shard-size", "5"]):
        done = _main(["run", "--impl", "tiktoken:cl100k_base", "--no-generated", "--quiet", "--out", str(tmp_path),
                      *flag], block_dask=False)
        assert done.returncode == 2 and f"{flag[0]} needs --executor dask" in done.stderr, done.stderr


def test_snapshot_and_gate_on_dask_without_dask_are_usage_errors_naming_the_install(tmp_path: Path) -> None:
    golden = tmp_path / "g.tokconf"
    made = _main(["snapshot", "--impl", "tiktoken:cl100k_base", "--no-cases", "--no-generated", "--quiet",
                  "--corpus", str(_corpus(tmp_path)), "-o", str(golden)], block_dask=True)
    assert made.returncode == 0, made.stderr  # the local executor: dask cannot be imported here
    for argv in (["snapshot", "--impl", "tiktoken:cl100k_base", "--no-cases", "--no-generated", "--quiet",
                  "-o", str(tmp_path / "never.tokconf")], ["gate", str(golden), "--quiet"]):
        done = _main([*argv, "--executor", "dask"], block_dask=True)
        assert done.returncode == 2, done.stderr
        assert "--executor dask needs the optional packages" in done.stderr
        assert "pip install 'tokconf[dask]'" in done.stderr
    assert not (tmp_path / "never.tokconf").exists()


def test_snapshot_and_gate_cluster_flags_need_the_dask_executor(tmp_path: Path) -> None:
    (tmp_path / "g.tokconf").write_bytes(b"")  # refused before it is read
    for command in (["snapshot", "--no-generated", "-o", str(tmp_path / "g.tokconf")],
                    ["gate", str(tmp_path / "g.tokconf")]):
        for flag in (["--scheduler", "tcp://127.0.0.1:8786"], ["--jobs", "2"]):
            done = _main([*command, "--impl", "tiktoken:cl100k_base", "--quiet", *flag], block_dask=False)
            assert done.returncode == 2 and f"{flag[0]} needs --executor dask" in done.stderr, done.stderr
