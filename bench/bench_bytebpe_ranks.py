"""How bytebpe-ranks' time grows with one long pre-split piece, next to tiktoken's.

A run of one character is a single chunk for the letter and whitespace alternatives of
the patterns, so BPE sees one piece as long as the run. A quadratic merge would show a
time per byte that grows tenfold with each tenfold size; the heap keeps it nearly flat.
Both are timed in the same process on the same strings, so the ratio is comparable
across machines even where the absolute times are not.

    python bench/bench_bytebpe_ranks.py [--encoding cl100k_base] [--char a] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

SIZES = (1_000, 10_000, 100_000, 1_000_000)


def best_of(fn, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoding", default="cl100k_base", choices=("gpt2", "cl100k_base", "o200k_base"))
    parser.add_argument("--char", action="append", help="character to repeat (default: a, space)")
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings (default 3)")
    args = parser.parse_args()

    import tiktoken

    from harness.vocab import seed_tiktoken_cache
    from implementations.bytebpe.adapters import build_rank_mode as build

    ours = build(args.encoding)
    seed_tiktoken_cache(args.encoding)
    reference = tiktoken.get_encoding(args.encoding)
    print(f"encoding {args.encoding}; best of {args.repeat}")
    print(f"{'char':>6} {'bytes':>9} {'ours s':>9} {'tiktoken s':>11} {'ratio':>7} {'ours us/byte':>13}")
    for ch in args.char or ["a", " "]:
        for size in SIZES:
            text = ch * size
            try:
                theirs = best_of(reference.encode_ordinary, text, args.repeat)
                theirs_text = f"{theirs:11.4f}"
            except BaseException as exc:  # tiktoken panics (a BaseException) on some long runs
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                theirs, theirs_text = float("nan"), f"{type(exc).__name__:>11.11}"
            mine = best_of(ours.encode_ordinary, text, args.repeat)
            ratio = mine / theirs if theirs == theirs and theirs > 0 else float("nan")
            print(f"{ch!r:>6} {size:>9} {mine:9.4f} {theirs_text} {ratio:7.1f} {mine / size * 1e6:13.3f}")


if __name__ == "__main__":
    main()
