"""Encode throughput of every available adapter, as a ratio to tiktoken in the same run.

    python bench/bench_adapters.py [--impl NAME ...] [--repeat 3]

The workload is the shipped hostile corpus (cases tagged ``corpus``) without special
literals, encoded with ``encode_ordinary``. For each adapter the best of ``--repeat``
passes is compared with the best pass of ``tiktoken:<its encoding>`` (for encodings
tiktoken does not hold, with ``tiktoken:cl100k_base``, so the ratio still says how far
from tiktoken's speed the adapter is). Ratios, not seconds, are what to compare across
machines. Nothing here is a test: no time is asserted anywhere.
"""

from __future__ import annotations

import argparse
import time
from typing import Callable, Sequence

from harness.cases.loader import load_cases
from harness.registry import AdapterUnavailable, default_registry


def best_of(repeat: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def corpus_texts() -> list[str]:
    texts = []
    for case in load_cases():
        if "corpus" in case.tags and "<|" not in case.text:
            texts.append(case.text)
    return texts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--impl", action="append", default=[])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    registry = default_registry()
    texts = corpus_texts()
    total_bytes = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    names = args.impl or [s.name for s in registry.specs() if registry.status(s.name) is None]
    reference_time: dict[str, float] = {}

    def timed(adapter, subset: list[str]) -> float:
        def work() -> None:
            for text in subset:
                try:
                    adapter.encode_ordinary(text)
                except Exception:
                    pass  # the harness judges errors; here only time counts

        work()  # warm caches and lazy tables before measuring
        return best_of(args.repeat, work)

    print(f"workload: {len(texts)} corpus strings, {total_bytes:,} bytes; best of {args.repeat}")
    print(f"{'adapter':<48} {'ms':>9} {'MB/s':>8} {'x tiktoken':>11}  baseline (inputs)")
    for name in names:
        try:
            adapter = registry.get(name)
        except AdapterUnavailable as exc:
            print(f"{name:<48} unavailable: {exc}")
            continue
        baseline = f"tiktoken:{adapter.encoding}"
        if baseline not in registry.names():
            baseline = "tiktoken:cl100k_base"
        # a closed vocabulary is timed on its own domain only, and tiktoken on the same subset
        subset = [t for t in texts if adapter.in_domain(t)]
        if not subset:
            print(f"{name:<48} no corpus string is inside its closed vocabulary")
            continue
        full = len(subset) == len(texts)
        if not full or baseline not in reference_time:
            base_seconds = timed(registry.get(baseline), subset)
            if full:
                reference_time[baseline] = base_seconds
        else:
            base_seconds = reference_time[baseline]
        seconds = timed(adapter, subset)
        size = sum(len(t.encode("utf-8", "surrogatepass")) for t in subset)
        print(f"{name:<48} {seconds * 1e3:>9.1f} {size / seconds / 1e6:>8.2f} "
              f"{seconds / base_seconds:>11.1f}  {baseline} ({len(subset)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
