"""What a report found, without its timings and its cache section: two runs of one plan,
one asked and one read from the unit cache, must give the same."""

from __future__ import annotations

import json
from typing import Any


def verdicts(data: dict[str, Any], *, details: bool = False) -> tuple[Any, ...]:
    """The matrix, the divergences (each with its detail when ``details``), the coverage
    and the verdict of a parity.json."""
    divergences = sorted((d["adapter"], d["check"], d["kind"], d["status"], json.dumps(d["input"]),
                          *((d["detail"],) if details else ())) for d in data["divergences"])
    return data["matrix"], divergences, data["coverage"], data["verdict"]
