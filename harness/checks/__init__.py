"""Every check, by name, in the display order of :data:`harness.cases.model.CHECKS`.

A *text check* judges one input (:class:`~harness.checks.base.Subject`); the one
*adapter check* (vocab-consistency) judges a vocabulary once per adapter. The checks
themselves live one idea per module:

- :mod:`harness.checks.ids`: id-parity, error-category, expected
- :mod:`harness.checks.decode`: round-trip, per-token-decode, decode
- :mod:`harness.checks.stream`: stream-decode
- :mod:`harness.checks.special`: special-policy, encode-ordinary
- :mod:`harness.checks.structure`: batch, pretokenize-coverage
- :mod:`harness.checks.api_surface`: api-surface (every public path of a library)
- :mod:`harness.checks.vocab`: vocab-consistency

``CHECK_FUNCTIONS`` must name every check of ``CHECKS``; an import-time error says which
is missing, so the list of names and the code cannot drift apart.
"""

from __future__ import annotations

from harness.cases.model import CHECKS
from harness.checks.api_surface import check_api_surface
from harness.checks.base import CheckFn, Result, Subject
from harness.checks.decode import check_decode, check_per_token_decode, check_round_trip
from harness.checks.ids import check_error_category, check_expected, check_id_parity
from harness.checks.stream import check_stream_decode
from harness.checks.special import check_encode_ordinary, check_special_policy
from harness.checks.structure import check_batch, check_pretokenize_coverage
from harness.checks.vocab import check_vocab

__all__ = ["ADAPTER_CHECKS", "CHECK_FUNCTIONS", "TEXT_CHECKS", "check_vocab", "run_text_check"]

CHECK_FUNCTIONS: dict[str, CheckFn] = {
    "id-parity": check_id_parity,
    "expected": check_expected,
    "round-trip": check_round_trip,
    "per-token-decode": check_per_token_decode,
    "decode": check_decode,
    "stream-decode": check_stream_decode,
    "special-policy": check_special_policy,
    "encode-ordinary": check_encode_ordinary,
    "batch": check_batch,
    "error-category": check_error_category,
    "pretokenize-coverage": check_pretokenize_coverage,
    "api-surface": check_api_surface,
}

#: Checks judged once per adapter rather than per input.
ADAPTER_CHECKS: tuple[str, ...] = ("vocab-consistency",)

#: Per-input checks in display order.
TEXT_CHECKS: tuple[str, ...] = tuple(c for c in CHECKS if c in CHECK_FUNCTIONS)

_missing = [c for c in CHECKS if c not in CHECK_FUNCTIONS and c not in ADAPTER_CHECKS]
if _missing:
    raise ImportError(f"harness.checks has no function for check(s) {_missing}; add them to CHECK_FUNCTIONS")


def run_text_check(name: str, subject: Subject) -> Result:
    """Run one per-input check by name."""
    try:
        function = CHECK_FUNCTIONS[name]
    except KeyError as exc:
        raise ValueError(f"unknown check {name!r}; known: {', '.join(CHECK_FUNCTIONS)}") from exc
    return function(subject)
