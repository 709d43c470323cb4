"""The registry: lazy, cached, rejects duplicate names, reports what is unavailable."""

from __future__ import annotations

import pytest

from harness.registry import AdapterUnavailable, DuplicateAdapter, Registry, RegistryError
from tests.plugins import sample_plugins


@pytest.fixture
def registry() -> Registry:
    registry = Registry()
    registry.load_entry_points()
    sample_plugins.BUILT.clear()
    return registry


def test_builtin_adapters_come_from_the_entry_point_group(registry: Registry) -> None:
    names = registry.names()
    for name in ["tiktoken:gpt2", "tiktoken:r50k_base", "tiktoken:cl100k_base",
                 "tiktoken:o200k_base", "tiktoken:o200k_harmony"]:
        assert name in names
        assert registry.spec(name).provider.startswith("entry point tiktoken")


def test_listing_builds_nothing(registry: Registry) -> None:
    registry.load_plugin("tests.plugins.sample_plugins:lazy_specs")
    assert [registry.status(n) for n in ["toy:lazy"]] == [None]
    assert sample_plugins.BUILT == []
    registry.get("toy:lazy")
    registry.get("toy:lazy")
    assert sample_plugins.BUILT == ["toy:latin1"]  # built once, then cached


def test_unavailable_adapter_reports_reason_and_others_go_on(registry: Registry) -> None:
    registry.load_plugin("tests.plugins.sample_plugins:lazy_specs")
    assert "pip install toy-vocab" in registry.status("toy:missing")
    with pytest.raises(AdapterUnavailable, match="toy-vocab"):
        registry.get("toy:missing")
    assert registry.get("toy:lazy").encode("é") == [0xE9]


def test_failing_factory_becomes_unavailable(registry: Registry) -> None:
    registry.load_plugin("tests.plugins.sample_plugins:exploding_factory")
    with pytest.raises(AdapterUnavailable, match="RuntimeError: vocabulary corrupt"):
        registry.get("toy:exploding")


def test_p50k_is_listed_unavailable_without_network(registry: Registry) -> None:
    reason = registry.status("tiktoken:p50k_base")
    assert reason is not None and "--vocab-dir" in reason


def test_duplicate_names_name_both_providers(registry: Registry) -> None:
    with pytest.raises(DuplicateAdapter) as info:
        registry.load_plugin("tests.plugins.sample_plugins:duplicate")
    message = str(info.value)
    assert "entry point tiktoken" in message and "plugin tests.plugins.sample_plugins:duplicate" in message


def test_plugin_factory_is_called_to_learn_the_name(registry: Registry) -> None:
    assert registry.load_plugin("tests.plugins.sample_plugins:factory") == ["toy:latin1"]
    assert sample_plugins.BUILT == ["toy:latin1"]


def test_plugin_adapter_class_with_a_name_stays_lazy(registry: Registry) -> None:
    assert registry.load_plugin("tests.plugins.sample_plugins:Latin1Adapter") == ["toy:latin1"]
    assert sample_plugins.BUILT == []
    assert registry.get("toy:latin1").decode([104, 105]) == "hi"


def test_same_name_from_two_plugins_is_a_duplicate(registry: Registry) -> None:
    registry.load_plugin("tests.plugins.sample_plugins:factory")
    with pytest.raises(DuplicateAdapter, match="registered twice"):
        registry.load_plugin("tests.plugins.sample_plugins:Latin1Adapter")


def test_family_resolves_argument_names(registry: Registry) -> None:
    registry.load_plugin("tests.plugins.sample_plugins:FAMILY")
    assert registry.get("toyarg:anything").encode("a") == [97]


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("no_colon", "must be MODULE:ATTR or FILE.py:ATTR"),
        ("no.such.module:x", "no module named 'no'; searched the current folder"),
        ("tests.plugins.sample_plugins:nope", "has no attribute 'nope'"),
        ("tests.plugins.sample_plugins:NOT_AN_ADAPTER", "expected an Adapter"),
    ],
)
def test_bad_plugins_say_what_and_how(registry: Registry, target: str, fragment: str) -> None:
    with pytest.raises(RegistryError) as info:
        registry.load_plugin(target)
    assert fragment in str(info.value)


def test_unknown_name_lists_known_ones(registry: Registry) -> None:
    with pytest.raises(RegistryError, match="tiktoken:cl100k_base"):
        registry.spec("tiktoken:cl100k")
