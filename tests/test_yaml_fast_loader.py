"""The C loader (libyaml) used for speed reads every YAML file of the project exactly as
the pure-Python ``SafeLoader`` does: same values, same line of every node."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.cases import yaml_source

REPO = Path(__file__).resolve().parent.parent
FILES = sorted(p for p in REPO.rglob("*.yaml") if ".venv" not in p.parts and "reports" not in p.parts)


def _lines(node: yaml.Node | None) -> list[int]:
    if node is None:
        return []
    out = [node.start_mark.line]
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out += _lines(key) + _lines(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            out += _lines(item)
    return out


@pytest.mark.skipif(yaml_source._FAST_LOADER is None, reason="PyYAML without libyaml")
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_fast_and_pure_loaders_agree(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        pure = yaml_source._parse_with(yaml.SafeLoader, text)
    except (yaml_source.YamlProblem, yaml.YAMLError):
        return  # a deliberately broken file: parse_yaml reports it with SafeLoader's words
    fast = yaml_source._parse_with(yaml_source._FAST_LOADER, text)
    assert fast.data == pure.data
    assert _lines(fast.root) == _lines(pure.root)


def test_a_broken_document_is_reported_in_the_pure_loaders_words() -> None:
    with pytest.raises(yaml_source.YamlProblem) as caught:
        yaml_source.parse_yaml("a: [1, 2\nb: 3\n")
    with pytest.raises(yaml.YAMLError) as pure:
        yaml.safe_load("a: [1, 2\nb: 3\n")
    assert pure.value.problem in str(caught.value)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_safe_load_gives_what_yaml_safe_load_gives(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert yaml_source.safe_load(text) == yaml.safe_load(text)


def test_safe_load_raises_what_yaml_safe_load_raises() -> None:
    text = 'name: x\nsource: "unclosed\nclass: C\n'
    with pytest.raises(yaml.YAMLError) as pure:
        yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError) as ours:
        yaml_source.safe_load(text)
    assert str(ours.value) == str(pure.value)
