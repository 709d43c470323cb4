"""Figures of the harness itself: the default ``tokconf run``, ``tokconf list``, merge recovery.

- ``tokconf run`` runs as a child with ``--profile-harness``: its wall time, its CPU time
  and peak RSS from the kernel (``wait4``), and its own account of where the time went
  (``harness-profile.json``: adapter calls, adapter builds, harness overhead). The
  default run twice on a fresh cache folder (first and second run), and the user's path
  (``--impl hf:cl100k_base --impl tiktoken:cl100k_base``) with ``--no-cache``, and twice on a
  fresh cache folder of its own; and the README's drop-in path (tiktoken itself as
  ``tiktoken-compatible:mytokenizer:cl100k_base``, in a worker) with ``--no-cache``.
- ``--jobs``: the same run with ``--no-cache`` at ``--jobs 1`` and ``--jobs 2``, back to
  back, each with the load average before it: the default run, or the user's path under
  ``--quick`` (two default runs without the cache are eight minutes here).
- ``tokconf list``: the median wall and CPU time of five runs of the console script, and
  the import time of ``harness.cli`` from ``python -X importtime``.
- minbpe's merge recovery for cl100k_base and o200k_base: cold (replaying every token;
  the rank file already parsed, its parse timed on its own) and from the disk cache, in
  CPU seconds.

``getrusage`` keeps a process's peak RSS across ``exec``, and a child starts as a copy of
its parent: ``bench/run.py`` therefore measures the run before it loads any adapter itself.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["default_run", "jobs_speedup", "list_time", "recovery"]

REPO = Path(__file__).resolve().parent.parent


def _tokconf() -> list[str]:
    script = Path(sys.executable).with_name("tokconf")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "harness"]


def default_run() -> dict[str, Any]:
    """The default ``tokconf run`` twice on a fresh cache folder (what a fresh clone's first
    and second runs cost: the second reads unchanged adapters' units from the unit cache),
    and the user's path (one candidate and its reference) with ``--no-cache`` and twice on
    a fresh cache folder of its own (in the user's own folder, the first run's figure
    would depend on what earlier runs left there)."""
    first, second = _twice_on_a_fresh_cache([])
    user_first, user_second = _twice_on_a_fresh_cache(USER_PATH)
    return {**second, "first_run": first, "user_path_no_cache": _measured_run([*USER_PATH, "--no-cache"]),
            "user_path_first_run": user_first, "user_path": user_second, "dropin_path_no_cache": dropin_path()}


USER_PATH = ["--impl", "hf:cl100k_base", "--impl", "tiktoken:cl100k_base"]

#: the README's "Check my tokenizer": a module with tiktoken's API, here tiktoken itself,
#: so the candidate is exactly as fast as tiktoken; a drop-in is foreign code and runs in
#: a worker, so this path pays the worker protocol that the hf path above does not
DROPIN_PATH = ["--impl", "tiktoken-compatible:mytokenizer:cl100k_base"]
DROPIN_MODULE = '''"""A drop-in that is tiktoken: the fastest candidate a user can bring."""
import tiktoken


def get_encoding(name):
    return tiktoken.get_encoding(name)
'''


def dropin_path() -> dict[str, Any]:
    """The README's drop-in path with ``--no-cache``, from a folder holding ``mytokenizer.py``."""
    with tempfile.TemporaryDirectory(prefix="tokconf-bench-dropin-") as folder:
        Path(folder, "mytokenizer.py").write_text(DROPIN_MODULE, encoding="utf-8")
        return _measured_run([*DROPIN_PATH, "--no-cache"], cwd=Path(folder))


def jobs_speedup(*, quick: bool) -> dict[str, Any]:
    """``--jobs 2`` against ``--jobs 1`` on the same run, the unit cache off (a cached run
    asks no adapter: nothing to spread): wall of 1 over wall of 2 (issue 25: >= 1.6)."""
    args = [*(USER_PATH if quick else []), "--no-cache"]
    runs = {}
    for jobs in (1, 2):
        load = _load_average()
        runs[f"jobs_{jobs}"] = {**_measured_run([*args, "--jobs", str(jobs)]), "load_average_before": load}
    return {"args": args, **runs, "speedup": round(runs["jobs_1"]["wall_s"] / runs["jobs_2"]["wall_s"], 2)}


def _load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _twice_on_a_fresh_cache(args: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``tokconf run ARGS`` measured twice on an empty cache folder: (first, second)."""
    with tempfile.TemporaryDirectory(prefix="tokconf-bench-cache-") as cache:
        env = {**os.environ, "TOKCONF_CACHE_DIR": cache}
        return _measured_run(args, env=env), _measured_run(args, env=env)


def _measured_run(args: list[str], *, env: dict[str, str] | None = None, cwd: Path = REPO) -> dict[str, Any]:
    """One ``tokconf run ARGS`` as a child, measured from outside (wall, CPU, peak RSS: the
    child's and those of its descendants it waited for, which a run does for every worker
    and ``--jobs`` process)."""
    pools = _pool_count()
    with tempfile.TemporaryDirectory(prefix="tokconf-bench-") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        # a file, not a pipe, for stderr: nobody reads a pipe while wait4 waits
        proc = subprocess.Popen([*_tokconf(), "run", "--quiet", "--profile-harness", *args, "--out", out],
                                cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, text=True, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage: CPU and peak RSS
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
        profiles = [p for p in Path(out).glob("*/harness-profile.json") if p.parent.name != "latest"]
        profile = json.loads(profiles[0].read_text(encoding="utf-8")) if profiles else {}
        reports = [p for p in Path(out).glob("*/parity.json") if p.parent.name != "latest"]
        cache = json.loads(reports[0].read_text(encoding="utf-8"))["run"].get("cache", {}) if reports else {}
    peak_mb = usage.ru_maxrss / (1024 * 1024) if sys.platform == "darwin" else usage.ru_maxrss / 1024
    return {
        "args": args,
        "exit_code": proc.returncode,
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(peak_mb, 1),
        "harness_share": profile.get("harness_share"),
        "harness_cpu_share": profile.get("harness_cpu_share"),
        "adapter_calls_s": profile.get("adapter_calls_s"),
        "adapter_build_s": profile.get("adapter_build_s"),
        "harness_s": profile.get("harness_s"),
        "phases_s": profile.get("phases_s", profile.get("phases")),
        "slowest_adapters_s": dict(list(profile.get("adapters_s", {}).items())[:6]),
        "adapters_from_cache": len(cache.get("from_cache", {})),
        "pools_cached_before": pools > 0,
        "stderr_tail": "" if proc.returncode in (0, 1) else stderr[-1000:],
    }


def _pool_count() -> int:
    from harness.vocab import cache_dir

    folder = cache_dir() / "pools"
    return len(list(folder.glob("*.json"))) if folder.is_dir() else 0


def list_time() -> dict[str, Any]:
    """``tokconf list``: median of five wall times; ``harness.cli``'s import time."""
    times, cpu = [], []
    for _ in range(5):
        started = time.perf_counter()
        proc = subprocess.Popen([*_tokconf(), "list"], cwd=REPO, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped by wait4
        times.append(time.perf_counter() - started)
        cpu.append(usage.ru_utime + usage.ru_stime)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import harness.cli"],
                          cwd=REPO, capture_output=True, text=True, check=False)
    imports: list[tuple[int, str]] = []
    for line in proc.stderr.split("\n"):
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
            if cumulative.isdigit():
                imports.append((int(cumulative), name))
    cli = next((us for us, name in imports if name == "harness.cli"), None)
    top = sorted((i for i in imports if not i[1].startswith(" ")), reverse=True)[:5]
    return {
        "list_s": round(statistics.median(times), 3),
        "list_cpu_s": round(statistics.median(cpu), 3),
        "list_runs_s": [round(t, 3) for t in times],
        "import_harness_cli_s": round(cli / 1e6, 3) if cli is not None else None,
        "largest_imports_s": {name: round(us / 1e6, 3) for us, name in top},
    }


def recovery() -> list[dict[str, Any]]:
    from harness import vocab
    from implementations.minbpe.recovery import load_or_recover_merges, recover_merges

    out = []
    for encoding in ("cl100k_base", "o200k_base"):
        file_name = f"{encoding}.tiktoken"
        sha = vocab.VOCAB_FILES[file_name].sha256
        vocab.vocab_bytes(file_name)  # reading and hashing the file is not recovery
        # CPU time, as everywhere in the benchmark: a shared machine's wall clock is noise
        started = time.process_time()
        ranks = vocab._shared_tables.__wrapped__(file_name, sha)[0]  # a fresh parse, timed
        parse = time.process_time() - started
        started = time.process_time()
        merges = recover_merges(ranks)
        cold = time.process_time() - started
        load_or_recover_merges(ranks, vocab_sha256=sha)  # makes sure the disk cache is there
        disk = []
        for _ in range(3):
            started = time.process_time()
            cached = load_or_recover_merges(ranks, vocab_sha256=sha)
            disk.append(time.process_time() - started)
        out.append({"encoding": encoding, "parse_s": round(parse, 3), "cold_s": round(cold, 3),
                    "disk_cache_s": round(statistics.median(disk), 3), "merges": len(merges),
                    "same_from_disk": cached == merges})
    return out
