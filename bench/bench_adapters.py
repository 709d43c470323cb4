"""Encode throughput of every adapter against tiktoken: the ``throughput`` section of
``bench/run.py`` (kept as a short name for it).

    python bench/bench_adapters.py [--quick] [--json] [--impl NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(["--section", "throughput", *sys.argv[1:]]))
