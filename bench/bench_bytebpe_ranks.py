"""How bytebpe-ranks' time grows with one long piece, beside tiktoken: the ``worst``
section of ``bench/run.py`` for the three rank-mode adapters (kept as a short name for it).

    python bench/bench_bytebpe_ranks.py [--quick] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import main  # noqa: E402

ADAPTERS = ("bytebpe-ranks:gpt2", "bytebpe-ranks:cl100k_base", "bytebpe-ranks:o200k_base")

if __name__ == "__main__":
    impls = [arg for name in ADAPTERS for arg in ("--impl", name)]
    raise SystemExit(main(["--section", "worst", *impls, *sys.argv[1:]]))
