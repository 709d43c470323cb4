"""``--executor dask``: the corpus phase on a Dask cluster gives the local executor's report.

A deterministic corpus of 20,000 short documents (:mod:`tests.dask_corpus`) over four
cl100k_base adapters (tiktoken, hf, minbpe, bytebpe-ranks): hf splits ``<|endoftext|>``
in the documents that hold it, so the report has corpus findings, shrunk by Dask tasks.
Real clusters: ``distributed.LocalCluster`` with two worker processes, real
``tokconf run`` subprocesses, real SIGKILL and SIGINT. The reports compared leave out
only the run's timing fields and ``run.executor``.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")

from tests.dask_corpus import write_corpus  # noqa: E402
from tests.signal_state import when_signalled

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ["--impl", "tiktoken:cl100k_base", "--impl", "hf:cl100k_base", "--impl", "minbpe:cl100k_base",
            "--impl", "bytebpe-ranks:cl100k_base", "--no-cases", "--no-generated", "--quiet"]
VOLATILE = ("id", "started", "finished", "duration_s", "argv", "executor", "cache")  # cache: where answers came from, not what they were


def tokconf(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", "run", *ADAPTERS, *args]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(tokconf(*args), capture_output=True, text=True, cwd=ROOT)


def comparable(folder: Path) -> tuple[dict[str, Any], bytes]:
    """parity.json without timings and executor, and the outcome log's bytes."""
    data = json.loads((folder / "parity.json").read_text(encoding="utf-8"))
    for key in VOLATILE:
        data["run"].pop(key, None)
    return data, gzip.decompress((folder / data["outcomes"]["file"]).read_bytes())


def executor(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "parity.json").read_text(encoding="utf-8"))["run"]["executor"]


def run_folder(out: Path) -> Path:
    (folder,) = [p for p in out.iterdir() if p.name not in ("latest", ".latest.tmp")]
    return folder


def shards_done(out: Path) -> int:
    for progress in out.glob("*/shards/progress.json"):
        try:
            return len(json.loads(progress.read_text(encoding="utf-8"))["done"])
        except (OSError, ValueError):
            return 0  # between the write and the rename: read it next time
    return 0


def wait_for_shards(out: Path, count: int, process: subprocess.Popen, *, limit_s: float = 600) -> int:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        done = shards_done(out)
        if done >= count:
            return done
        if process.poll() is not None:
            raise AssertionError(f"the run ended before {count} shards were done: {process.stderr.read()}")
        time.sleep(0.05)
    raise AssertionError(f"no {count} shards done in {limit_s} s")


@pytest.fixture(scope="module")
def corpus20k(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus") / "corpus.jsonl", 20_000)


@pytest.fixture(scope="module")
def corpus4k(tmp_path_factory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("corpus") / "small.jsonl", 4_000, seed=16)


def _local(corpus: Path, out: Path) -> tuple[int, tuple[dict[str, Any], bytes]]:
    # --jobs 2 gives the report of --jobs 1 (the parallel runner's contract), in half the time
    done = run("--corpus", str(corpus), "--out", str(out), "--jobs", "2")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, comparable(run_folder(out))


@pytest.fixture(scope="module")
def local20k(corpus20k: Path, tmp_path_factory) -> tuple[int, tuple[dict[str, Any], bytes]]:
    return _local(corpus20k, tmp_path_factory.mktemp("local20k"))


@pytest.fixture(scope="module")
def local4k(corpus4k: Path, tmp_path_factory) -> tuple[int, tuple[dict[str, Any], bytes]]:
    return _local(corpus4k, tmp_path_factory.mktemp("local4k"))


@pytest.fixture(scope="module")
def cluster():
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as local, distributed.Client(local) as client:
        yield local, client


def test_the_corpus_has_findings_on_documents(local20k) -> None:
    code, (data, log) = local20k
    cases = {d["case"] for d in data["divergences"] if d["adapter"] == "hf:cl100k_base"}
    assert code == 1 and len(cases) == 1 and next(iter(cases)).startswith("corpus:")
    assert len(log.split(b"\n")) > 15_000  # every distinct document's outcomes


def test_an_embedded_cluster_gives_the_local_report(corpus20k: Path, local20k, tmp_path: Path) -> None:
    done = run("--corpus", str(corpus20k), "--out", str(tmp_path), "--executor", "dask", "--jobs", "2")
    code, expected = local20k
    assert done.returncode == code, done.stderr
    folder = run_folder(tmp_path)
    assert comparable(folder) == expected
    info = executor(folder)
    assert (info["kind"], info["workers"], info["scheduler"], info["shards"], info["documents"]) == \
        ("dask", 2, None, 20, 20_000)
    assert info["lost_shards"] == [] and info["resumed_shards"] == 0
    assert info["documents_read_by"] == "workers"  # they see the corpus file: the client sent byte ranges


def test_a_killed_worker_leaves_the_report_unchanged(corpus4k: Path, local4k, cluster, tmp_path: Path) -> None:
    local, client = cluster
    process = subprocess.Popen(tokconf("--corpus", str(corpus4k), "--out", str(tmp_path), "--executor", "dask",
                                       "--scheduler", local.scheduler_address, "--shard-size", "200"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        done_at_kill = wait_for_shards(tmp_path, 2, process)
        pids = client.run(os.getpid)
        victim = sorted(pids.values())[0]
        os.kill(victim, signal.SIGKILL)
        _, err = process.communicate(timeout=900)
    finally:
        if process.poll() is None:
            process.kill()
    assert done_at_kill < 20, "the run finished before the kill: nothing was tested"
    code, expected = local4k
    assert process.returncode == code, err
    folder = run_folder(tmp_path)
    assert comparable(folder) == expected
    assert executor(folder)["shards"] == 20
    client.wait_for_workers(2, timeout=60)  # the nanny started a new one
    # the scheduler may still list the killed worker (it noticed a missed heartbeat only
    # 594 s later once, on a loaded machine): a broadcast to it fails, so it is left out
    assert victim not in client.run(os.getpid, on_error="ignore").values()


def test_an_interrupted_client_is_completed_by_resume(corpus4k: Path, local4k, cluster, tmp_path: Path) -> None:
    local, _ = cluster
    # 80 shards of 50: the signal, sent after the 4th, lands long before the last on a busy
    # machine too (with 20 of 200 the run once finished first under load)
    args = ("--corpus", str(corpus4k), "--out", str(tmp_path), "--executor", "dask",
            "--scheduler", local.scheduler_address, "--shard-size", "50")
    process = subprocess.Popen(tokconf(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        wait_for_shards(tmp_path, 4, process)
        state = when_signalled(process.pid)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, f"{state}\n{err}"
    folder = run_folder(tmp_path)
    stopped = json.loads((folder / "parity.json").read_text(encoding="utf-8"))
    assert stopped["run"]["incomplete"]["phase"] == "corpus"
    kept = shards_done(tmp_path)
    assert 4 <= kept < 80, kept

    done = run(*args, "--resume", str(folder))
    code, expected = local4k
    assert done.returncode == code, done.stderr
    assert run_folder(tmp_path) == folder  # completed in place
    assert comparable(folder) == expected
    info = executor(folder)
    assert (info["shards"], info["resumed_shards"], info["documents"]) == (80, kept, 4_000)


def test_each_worker_built_the_adapters_once(cluster) -> None:
    """After the runs above (same flags): one runner per worker process, whatever it ran."""
    _, client = cluster

    def runners() -> int:
        from harness.scale import shard_task

        return len(shard_task._RUNNERS)

    counts = client.run(runners)
    assert set(counts.values()) <= {0, 1} and 1 in counts.values(), counts


def test_resume_refuses_other_inputs(corpus4k: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    (folder / "shards").mkdir(parents=True)
    (folder / "shards" / "progress.json").write_text(json.dumps({"fingerprint": {"shard_size": 7}, "done": {}}))
    done = run("--corpus", str(corpus4k), "--out", str(tmp_path), "--executor", "dask", "--resume", str(folder))
    assert done.returncode == 2
    assert "checked other inputs or adapters" in done.stderr and "corpus" in done.stderr


def test_a_shard_that_kills_its_workers_is_reported_not_retried_forever(tmp_path: Path) -> None:
    """faulty:abort, in process, aborts the worker on the one document holding U+2603: with
    allowed-failures 1 the shard is given up after two dead workers; the others merge."""
    import logging

    import dask

    corpus = tmp_path / "corpus.jsonl"
    texts = [f"document {i}" if i != 25 else "a \u2603 here" for i in range(60)]
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                     silence_logs=logging.CRITICAL) as local:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run", "--plugin", "tests.faulty_adapters:abort", "--impl", "faulty:abort",
             "--impl", "tiktoken:cl100k_base", "--no-isolate", "--no-cases", "--no-generated", "--quiet",
             "--corpus", str(corpus), "--out", str(tmp_path / "out"), "--executor", "dask",
             "--scheduler", local.scheduler_address, "--shard-size", "10"],
            capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 1, done.stderr
    folder = run_folder(tmp_path / "out")
    info = executor(folder)
    (lost,) = info["lost_shards"]
    assert lost.startswith(f"shard 2 (10 documents, {corpus}#20@") and f"{corpus}#29@" in lost
    assert (info["shards"], info["documents"]) == (5, 50)
    assert "shard 2 (10 documents" in done.stdout + done.stderr  # the summary's notes say it too
    data = json.loads((folder / "parity.json").read_text(encoding="utf-8"))
    assert data["matrix"]["faulty:abort"]["id-parity"]["inputs"] == 50
    # the lost shard fails the verdict the page shows, not only the exit code
    assert data["run"]["lost_shards"] == [lost]
    assert data["verdict"] == {"result": "FAIL", "reason": f"1 corpus shard lost: {lost}", "exit_code": 1}


def test_an_adapter_a_worker_cannot_build_is_an_error_not_a_skip(corpus4k: Path, cluster, tmp_path: Path) -> None:
    """The plugin module is on the client's path only: the workers say so, the run exits 2."""
    local, _ = cluster
    (tmp_path / "client_only_plugin.py").write_text("from tests.wrong_adapters import crlf\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--plugin", "client_only_plugin:crlf",
                           "--impl", "wrong:crlf", "--no-cases", "--no-generated", "--quiet", "--corpus", str(corpus4k),
                           "--out", str(tmp_path / "out"), "--executor", "dask", "--scheduler", local.scheduler_address],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 2, done.stderr
    assert "Dask worker" in done.stderr and "cannot build the run's adapters" in done.stderr
    assert "client_only_plugin" in done.stderr
