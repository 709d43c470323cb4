"""Throughput of the corpus phase: ``--executor local --jobs 1`` against ``--executor dask``
with 1 and 2 workers, and what a shard costs the scheduler and the client.

    python bench/bench_dask.py [--documents 20000] [--shard-size 1000] [--rounds 1]

Each configuration is a ``tokconf run`` subprocess over a generated corpus
(:mod:`tests.dask_corpus`) and the four cl100k_base adapters of the Dask tests; the
figures are the run's own ``run.executor`` (corpus phase only: not the adapters'
start-up nor the cluster's). Then, on a one-worker ``LocalCluster``:

- **round trip**: an empty shard submitted and its result awaited, one at a time
  (the scheduling overhead a shard pays when nothing else is queued);
- **burst**: 200 empty shards at once, wall time per shard (what the scheduler
  sustains when the queue is full);
- **delta**: the pickled result of one full shard, per document (what crosses the
  network and what the client merges), and the client's merge time per shard.

Nothing here is a test; on a shared machine wall times carry the neighbours' load.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.dask_corpus import write_corpus  # noqa: E402

ADAPTERS = ["--impl", "tiktoken:cl100k_base", "--impl", "hf:cl100k_base", "--impl", "minbpe:cl100k_base",
            "--impl", "bytebpe-ranks:cl100k_base", "--no-cases", "--no-generated", "--quiet"]


def one_run(corpus: Path, out: Path, flags: list[str]) -> tuple[dict[str, Any], float, Path]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "harness", "run", *ADAPTERS, "--corpus", str(corpus),
                           "--out", str(out), *flags], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"tokconf run {' '.join(flags)} failed ({done.returncode}): {done.stderr[-2000:]}")
    (folder,) = [p for p in out.iterdir() if p.name not in ("latest", ".latest.tmp")]
    return json.loads((folder / "parity.json").read_text(encoding="utf-8"))["run"]["executor"], wall, folder


def overhead(corpus: Path) -> dict[str, float]:
    import logging

    from distributed import Client, LocalCluster

    from harness.cli.selection_args import SelectionArgs
    from harness.scale.shard_task import run_shard
    from harness.scale.shards import Shard

    names = sorted(ADAPTERS[i + 1] for i, a in enumerate(ADAPTERS) if a == "--impl")
    spec = SelectionArgs(impl=tuple(names), timeout=60.0, memory_limit=4096)
    empty = Shard(0, "-", "-", 0, 0)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        client.submit(run_shard, spec, names, empty, pure=False).result()  # the adapters built once
        rounds = 50
        started = time.perf_counter()
        for _ in range(rounds):
            client.submit(run_shard, spec, names, empty, pure=False).result()
        trip = (time.perf_counter() - started) / rounds
        burst = 200
        started = time.perf_counter()
        client.gather([client.submit(run_shard, spec, names, empty, pure=False) for _ in range(burst)])
        per = (time.perf_counter() - started) / burst
    return {"round_trip_ms": trip * 1000, "burst_ms_per_shard": per * 1000}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--shard-size", type=int, default=1000)
    args = parser.parse_args(argv)
    print(f"cpus: {os.cpu_count()}; corpus: {args.documents} documents; shard size {args.shard_size}")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(Path(tmp) / "corpus.jsonl", args.documents)
        rows = {}
        for label, flags in (("local --jobs 1", ["--jobs", "1"]),
                             ("dask, 1 worker", ["--executor", "dask", "--jobs", "1", "--shard-size", str(args.shard_size)]),
                             ("dask, 2 workers", ["--executor", "dask", "--jobs", "2", "--shard-size", str(args.shard_size)])):
            info, wall, folder = one_run(corpus, Path(tmp) / label.replace(" ", "_"), flags)
            rows[label] = info
            print(f"{label:16} {info['documents_per_second']:8.1f} docs/s  corpus phase {info['seconds']:7.1f} s  "
                  f"whole run {wall:6.1f} s  shards {info['shards']}", flush=True)
            if info["kind"] == "dask":
                shards = folder / "shards"
                per_document = {kind: sum(p.stat().st_size for p in shards.glob(pattern)) / max(1, info["documents"])
                                for kind, pattern in (("outcomes", "*.outcomes.jsonl.gz"), ("rest", "*.pickle"))}
                merge_ms = 1000 * info["merge_seconds"] / max(1, info["shards"])
                shard_s = info["seconds"] * info["workers"] / max(1, info["shards"])
        base = rows["local --jobs 1"]["documents_per_second"]
        for label in ("dask, 1 worker", "dask, 2 workers"):
            print(f"{label} / local --jobs 1: {rows[label]['documents_per_second'] / base:.2f}x")
        cost = overhead(corpus)
    print(f"scheduling: round trip of an empty shard {cost['round_trip_ms']:.1f} ms; "
          f"burst {cost['burst_ms_per_shard']:.1f} ms per shard")
    print(f"shard files: {per_document['outcomes']:.0f} bytes per document of outcome records, "
          f"{per_document['rest']:.0f} of pickled counts and findings; client merge {merge_ms:.1f} ms per shard; "
          f"one shard of {args.shard_size} takes a worker ~{shard_s:.1f} s")
    # the client merges shards one after another: it saturates when a merge (plus the
    # scheduler's per-task cost) per shard equals a shard's time divided by N workers
    per_shard_client = merge_ms / 1000 + cost["burst_ms_per_shard"] / 1000
    print(f"workers one client keeps busy (shard time / (merge + scheduling per shard)): "
          f"~{shard_s / per_shard_client:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
