"""A corpus run at growing sizes: documents per second and the client's peak memory.

    python bench/corpus_scale.py [--sizes 10000,100000,1000000] [--executors local,dask] [--json]

Each row is one ``tokconf run --corpus`` subprocess over a generated corpus
(:mod:`tests.dask_corpus`, the same documents for the same size) with ``--profile-harness``.
The adapter is :mod:`tests.bytes_adapters` (IDs are the UTF-8 bytes), in process: its own
time is next to nothing, so what is measured is the harness; one more row at 10^4
documents runs tiktoken:cl100k_base in process, a real adapter's speed. Those documents
are 1 to 8 hostile words (18 characters on average), where a harness's fixed cost per
document weighs most; ``--documents prose`` (and one more row of ``figures``) is 10^4
distinct documents of about 2 KB of English prose (:func:`write_prose`), the length of a
paragraph-sized web or code document. ``dask`` is an embedded cluster of two worker
processes. From the run's own accounts:

- ``docs_per_s``: the corpus phase's documents per second (``run.executor``);
- ``client_peak_mb``: the client's own peak RSS (workers not included);
- ``client_cpu_us_per_doc``: the client's CPU time per document, the whole run;
- ``harness_over_encode`` (local): the corpus phase's time outside adapter calls over the
  adapter's own ``encode`` time on the same documents, both measured in the run;
- ``saturation_workers`` (dask): workers one client keeps busy, the workers' time per
  document (two workers x the phase's seconds / documents) over the client's CPU per
  document: past that many workers the client is the bottleneck.

Nothing here is a test; on a shared machine the times carry the neighbours' load (the
load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.dask_corpus import write_corpus  # noqa: E402

PHASES = ["--no-isolate", "--no-cases", "--no-generated", "--no-every-token", "--no-everyday", "--quiet",
          "--profile-harness"]
#: ``bytes``: the harness alone; ``tiktoken``: a real adapter, the speed the issue asks to keep
ADAPTERS = {"bytes": ["--plugin", "tests.bytes_adapters:adapters", "--impl", "test:utf8-bytes", *PHASES],
            "tiktoken": ["--impl", "tiktoken:cl100k_base", *PHASES]}
# local at one job: the harness-over-encode ratio comes from this process's own stopwatch,
# which does not see calls made in forked --jobs processes (a run's default is every core)
EXECUTORS = {"local": ["--executor", "local", "--jobs", "1"], "dask": ["--executor", "dask", "--jobs", "2"]}


def write_prose(path: Path, documents: int, *, seed: int = 25, size: int = 2000) -> Path:
    """``documents`` distinct JSON Lines documents of paragraphs of the standard library's
    ``pydoc_data.topics`` (English prose and Python examples), each at least ``size``
    characters, the same for the same arguments."""
    import random

    from pydoc_data.topics import topics

    paragraphs = [p for _, text in sorted(topics.items()) for p in text.split("\n\n") if p.strip()]
    rng = random.Random(seed)
    written: set[str] = set()
    with open(path, "w", encoding="utf-8") as handle:
        while len(written) < documents:
            parts: list[str] = []
            while sum(map(len, parts)) < size:
                parts.append(rng.choice(paragraphs))
            text = "\n\n".join(parts)
            if text not in written:
                written.add(text)
                handle.write(json.dumps({"text": text}) + "\n")
    return path


def one(corpus: Path, documents: int, executor: str, adapter: str = "bytes") -> dict[str, Any]:
    """One run of ``corpus`` on ``executor`` with ``adapter`` (:data:`ADAPTERS`), as its reports tell it."""
    with tempfile.TemporaryDirectory(prefix="tokconf-corpus-bench-") as out:
        done = subprocess.run([sys.executable, "-m", "harness", "run", *ADAPTERS[adapter], *EXECUTORS[executor],
                               "--corpus", str(corpus), "--out", out], capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            raise SystemExit(f"tokconf run ({executor}, {documents}) exited {done.returncode}: {done.stderr[-2000:]}")
        (folder,) = [p for p in Path(out).iterdir() if p.name != "latest"]
        profile = json.loads((folder / "harness-profile.json").read_text(encoding="utf-8"))
        info = json.loads((folder / "parity.json").read_text(encoding="utf-8"))["run"]["executor"]
    row: dict[str, Any] = {
        "executor": executor, "adapter": adapter, "documents": documents, "docs_per_s": info["documents_per_second"],
        "phase_s": info["seconds"], "client_peak_mb": profile["peak_rss_mb"],
        "client_cpu_s": profile["cpu_s"], "client_cpu_us_per_doc": round(1e6 * profile["cpu_s"] / documents, 1),
    }
    if executor == "local":
        # the harness's time in the corpus phase: the phase less its adapter calls (the
        # run's other phases and its report are not per-document costs)
        encode = profile["adapter_calls_by_op_s"].get("encode", 0.0)
        calls = sum(profile["adapter_calls_by_phase_s"].get("corpus", {}).values())
        row["harness_s"] = round(profile["phases_s"]["corpus"] - calls, 3)
        row["encode_s"] = encode
        row["harness_over_encode"] = round(row["harness_s"] / encode, 1) if encode else None
    else:
        workers_s_per_doc = info["workers"] * info["seconds"] / documents
        row["documents_read_by"] = info.get("documents_read_by")
        row["saturation_workers"] = round(workers_s_per_doc / (profile["cpu_s"] / documents), 1)
    return row


#: the generated corpora: name -> how to write ``documents`` of them to a path
DOCUMENTS = {"short": write_corpus, "prose": write_prose}


def measure(sizes: Sequence[int], executors: Sequence[str], adapter: str = "bytes",
            documents: str = "short") -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="tokconf-corpus-") as tmp:
        for size in sizes:
            corpus = DOCUMENTS[documents](Path(tmp) / f"corpus-{size}.jsonl", size)
            for executor in executors:
                rows.append({**one(corpus, size, executor, adapter), "corpus": documents})
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def figures(*, quick: bool) -> dict[str, Any]:
    """``bench/run.py``'s corpus section: 10^4 and 10^5 documents locally (and 10^6 when not
    ``quick``), 10^4 on two Dask workers when Dask is installed; the client's peak growth."""
    import importlib.util

    sizes = [10**4, 10**5] if quick else [10**4, 10**5, 10**6]
    executors = ["local", "dask"] if importlib.util.find_spec("distributed") else ["local"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tokconf-corpus-") as tmp:
        for size in sizes:
            corpus = write_corpus(Path(tmp) / f"corpus-{size}.jsonl", size)
            for executor in executors:
                if executor == "local" or size == 10**4 or not quick:
                    rows.append(one(corpus, size, executor))
            if size == 10**4:
                rows.append(one(corpus, size, "local", "tiktoken"))
                prose = write_prose(Path(tmp) / "prose.jsonl", size)
                rows.append({**one(prose, size, "local", "tiktoken"), "corpus": "prose"})
    rows = [{"corpus": "short", **r} for r in rows]
    local = {r["documents"]: r for r in rows if r["executor"] == "local" and r["adapter"] == "bytes"}
    growth = round(local[10**5]["client_peak_mb"] / local[10**4]["client_peak_mb"], 3)
    return {"rows": rows, "client_peak_growth_1e4_to_1e5": growth}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="documents per run, comma-separated")
    parser.add_argument("--executors", default="local,dask", help="local, dask or both")
    parser.add_argument("--adapter", choices=sorted(ADAPTERS), default="bytes",
                        help="bytes: the harness alone (default); tiktoken: tiktoken:cl100k_base in process")
    parser.add_argument("--documents", choices=sorted(DOCUMENTS), default="short",
                        help="short: 1 to 8 hostile words (default); prose: ~2 KB of English prose each")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    executors = [e for e in args.executors.split(",") if e]
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    rows = measure(sizes, executors, args.adapter, args.documents)
    if args.json:
        print(json.dumps({"load_average": os.getloadavg()[0], "rows": rows}, indent=2))
        return 0
    print(f"{'executor':8} {'documents':>10} {'docs/s':>8} {'client peak MB':>14} {'client CPU us/doc':>17}  other")
    for r in rows:
        other = (f"harness / encode {r['harness_over_encode']}x" if r["executor"] == "local"
                 else f"read by {r['documents_read_by']}; client saturates at ~{r['saturation_workers']} workers")
        print(f"{r['executor']:8} {r['documents']:>10,} {r['docs_per_s']:>8,.0f} {r['client_peak_mb']:>14.0f} "
              f"{r['client_cpu_us_per_doc']:>17.0f}  {other}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
