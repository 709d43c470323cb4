"""The everyday-text phase's cost per adapter (docs/everyday.md).

For each adapter of an encoding (default: every available one of cl100k_base), one run
of the plan ``phases=("everyday",)`` with that adapter and the encoding's reference,
isolation as a default run has it, timed by the harness profile. The reference alone is
run first: an adapter's cost is its run's everyday phase minus the reference's. Wall
seconds on a shared machine count waiting for a core; the adapter's own call seconds
are printed beside them. Outside the tests: no test asserts a time.

    python bench/everyday_cost.py [--encoding cl100k_base] [--profile ci] [--impl NAME ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.engine.execute import execute, prepare  # noqa: E402
from harness.engine.plan import Outputs, Plan  # noqa: E402
from harness.registry import reset_default_registry  # noqa: E402
from harness.run.choice import AdapterChoice  # noqa: E402


def _phase(impl: tuple[str, ...], profile: str, out: str) -> dict[str, float]:
    plan = Plan(adapters=AdapterChoice.of(impl=impl), cases=(), phases=("everyday",), profile=profile,
                outputs=Outputs(out=out, profile_harness=True))
    outcome = execute(plan)
    summary = outcome.profile.summary()
    reset_default_registry()
    return {"everyday_s": summary["phases_s"].get("everyday", 0.0), "exit": outcome.exit_code,
            "calls_s": summary["adapters_s"], "documents": outcome.data["run"]["everyday"]["documents"],
            "peak_rss_mb": summary["peak_rss_mb"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--impl", action="append", default=[])
    args = parser.parse_args()
    ready = prepare(Plan(adapters=AdapterChoice.of(encoding=(args.encoding,)), cases=(), phases=("everyday",)))
    reference = ready.selected.references[args.encoding]
    names = args.impl or sorted(n for n in ready.selected.calls if n != reference)
    ready.selected.close()
    reset_default_registry()
    rows = []
    with tempfile.TemporaryDirectory() as out:
        base = _phase((reference,), args.profile, out)
        print(f"{reference:45s} everyday {base['everyday_s']:7.2f} s (reference alone; "
              f"{base['documents']} documents, exit {base['exit']})", flush=True)
        for name in names:
            row = _phase((name, reference), args.profile, out)
            own = row["calls_s"].get(name, 0.0)
            rows.append({"adapter": name, "everyday_s": row["everyday_s"],
                         "added_s": round(row["everyday_s"] - base["everyday_s"], 2), "own_calls_s": own,
                         "exit": row["exit"]})
            print(f"{name:45s} everyday {row['everyday_s']:7.2f} s, +{row['everyday_s'] - base['everyday_s']:6.2f} s "
                  f"over the reference alone, own calls {own:6.2f} s, exit {row['exit']}", flush=True)
    print(json.dumps({"encoding": args.encoding, "profile": args.profile, "reference": reference,
                      "reference_everyday_s": base["everyday_s"], "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
