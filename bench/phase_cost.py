"""One input phase's cost per adapter: every token, everyday text or the long inputs.

For each adapter of an encoding (default: every available one of cl100k_base), one run
of a plan with only that phase (the long inputs ride on the generated phase, so their
plan also holds a one-example generated phase, timed apart), that adapter and the
encoding's reference, isolation as a default run has it, one job, the unit cache off,
timed by the harness profile. The reference alone is run first: an adapter's cost is its
run's phase minus the reference's. Wall seconds on a shared machine count waiting for a
core; the adapter's own call seconds in that phase are printed beside them
(``adapter_calls_by_phase_s``). The exit code is that of a run without the cases phase:
a documented divergence explains findings only once its case reproduced it
(harness/run/judging.py), so an adapter with documented differences exits 1 here where a
default run passes. Outside the tests: no test asserts a time.

    python bench/phase_cost.py --phase long [--encoding cl100k_base] [--profile ci] [--impl NAME ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.engine.execute import execute, prepare  # noqa: E402
from harness.engine.plan import Outputs, Plan  # noqa: E402
from harness.registry import reset_default_registry  # noqa: E402
from harness.run.choice import AdapterChoice  # noqa: E402

#: the plan's phases for the measured one (the long inputs go with the generated phase)
PHASES = {"every-token": ("every-token",), "everyday": ("everyday",), "long": ("generated", "long")}


def _phase(phase: str, impl: tuple[str, ...], profile: str, out: str) -> dict[str, Any]:
    plan = Plan(adapters=AdapterChoice.of(impl=impl), cases=(), phases=PHASES[phase], profile=profile,
                max_examples=1, cache=False, outputs=Outputs(out=out, profile_harness=True))
    outcome = execute(plan)
    summary = outcome.profile.summary()
    reset_default_registry()
    return {"phase_s": summary["phases_s"].get(phase, 0.0), "exit": outcome.exit_code,
            "calls_s": summary["adapter_calls_by_phase_s"].get(phase, {}),
            "peak_rss_mb": summary["peak_rss_mb"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--phase", choices=sorted(PHASES), required=True)
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--impl", action="append", default=[])
    args = parser.parse_args()
    ready = prepare(Plan(adapters=AdapterChoice.of(encoding=(args.encoding,)), cases=(), phases=PHASES[args.phase]))
    reference = ready.selected.references[args.encoding]
    names = args.impl or sorted(n for n in ready.selected.calls if n != reference)
    ready.selected.close()
    reset_default_registry()
    rows = []
    with tempfile.TemporaryDirectory() as out:
        base = _phase(args.phase, (reference,), args.profile, out)
        print(f"{reference:45s} {args.phase} {base['phase_s']:7.2f} s (reference alone, its own calls "
              f"{base['calls_s'].get(reference, 0.0):6.2f} s, exit {base['exit']})", flush=True)
        for name in names:
            row = _phase(args.phase, (name, reference), args.profile, out)
            own = row["calls_s"].get(name, 0.0)
            rows.append({"adapter": name, "phase_s": row["phase_s"], "added_s": round(row["phase_s"] - base["phase_s"], 2),
                         "own_calls_s": own, "peak_rss_mb": row["peak_rss_mb"], "exit": row["exit"]})
            print(f"{name:45s} {args.phase} {row['phase_s']:7.2f} s, +{row['phase_s'] - base['phase_s']:6.2f} s "
                  f"over the reference alone, own calls {own:6.2f} s, exit {row['exit']}", flush=True)
    print(json.dumps({"phase": args.phase, "encoding": args.encoding, "profile": args.profile, "reference": reference,
                      "reference_phase_s": base["phase_s"], "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
