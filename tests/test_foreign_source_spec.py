"""Source adapter specs: validation errors name file and field; checkouts are located or
reported unavailable with the exact fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from harness.registry import Registry, RegistryError
from implementations.source import adapter as source
from implementations.source.roots import locate_source, set_source_root
from implementations.source.spec import (
    SHIPPED_DIR,
    SourceSpecError,
    SourceUnavailable,
    load_spec,
    shipped_spec_names,
)

DATA = Path(__file__).parent / "data" / "foreign"
CHECKOUTS = DATA / "checkouts"
ADHOC = DATA / "adhoc"
ROOT_VARS = ("TOKCONF_SOURCE_ROOT", "TOKCONF_SOURCE_ROOT_MINBPE", "TOKCONF_SOURCE_ROOT_GPT2",
             "TOKCONF_SOURCE_ROOT_LLMS_FROM_SCRATCH")

MINIMAL = {
    "tokconf_source_spec": 1,
    "source": "tok.py",
    "class": "Tok",
    "encoding": "trained",
    "encode": {"method": "encode"},
    "decode": {"method": "decode"},
}


@pytest.fixture(autouse=True)
def no_roots(monkeypatch: pytest.MonkeyPatch):
    for var in ROOT_VARS:
        monkeypatch.delenv(var, raising=False)
    yield
    set_source_root(None)


def write_spec(tmp_path: Path, data, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


def with_(**changes):
    data = {k: v for k, v in MINIMAL.items()}
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


@pytest.mark.parametrize("data, field, expected", [
    (with_(tokconf_source_spec=None), "tokconf_source_spec", "is required"),
    (with_(tokconf_source_spec=2), "tokconf_source_spec", "must be 1"),
    (with_(clas="Tok"), "clas", "is not a known field"),
    (with_(decode=None), "decode", "is required"),
    (with_(decode={"method": "decode", "returns": "str"}), "decode.returns", "must be text or bytes"),
    (with_(decode={"method": "decode", "how": 1}), "decode.how", "is not a known field"),
    (with_(source="tok.rb"), "source", "must name a .py file or an .ipynb notebook"),
    (with_(special_policy="sometimes"), "special_policy", "must be one of"),
    (with_(encode={"method": "encode", "policy": {"all": "all"}}), "encode.special_arg", "is required with encode.policy"),
    (with_(encode={"method": "encode", "special_arg": "allowed"}), "encode.policy", "is required with special_arg"),
    (with_(encode={"method": "encode", "special_arg": "a", "policy": {"everything": 1}}), "encode.policy.everything", "is not a known field"),
    (with_(errors={"encode": [{"exception": "KeyError", "category": "oops"}]}), "errors.encode[0].category", "must be one of"),
    (with_(errors={"encode": [{"exception": "KeyError"}]}), "errors.encode[0].category", "is required"),
    (with_(errors={"encode": [{"exception": "KeyError", "category": "unknown-token", "match": "("}]}), "errors.encode[0].match", "must be a valid regular expression"),
    (with_(construct={"args": [{"vocab_dir": "o200k_base"}]}), "construct.args[0]", "vocab_dir supports gpt2"),
    (with_(construct={"args": [{"vocab_dir": "gpt2", "extra": 1}]}), "construct.args[0]", "a reference has one key"),
    (with_(construct={"args": [{"models_dir": "gpt2", "model_name": "../x"}]}), "construct.args[0]", "models_dir"),
    (with_(construct={"args": [{"tiktoken_ranks": "p51k"}]}), "construct.args[0]", "tiktoken_ranks must name"),
    (with_(construct={"kwargs": {"path": {"text_file": "/etc/passwd"}}}), "construct.kwargs.path", "relative path"),
    (with_(setup=[{"args": []}]), "setup[0].call", "is required"),
    (with_(setup=[{"method": "train"}]), "setup[0].method", "is not a known field (known: args, call, kwargs)"),
    (with_(setup="train"), "setup", "must be a list"),
    (with_(cells=[1]), "cells", "applies to notebooks only"),
    (with_(source="nb.ipynb", cells=["1"]), "cells", "must be a list of cell indexes"),
    (with_(tiktoken_cache=["p99k"]), "tiktoken_cache[0]", "must be one of"),
    (with_(alphabet={"chars": "ab", "ranges": [[0, 1]]}), "alphabet", "exactly one of"),
    (with_(special_tokens={"<|end|>": "one"}), "special_tokens", "must map literals to integer IDs"),
    (with_(**{"class": None}), "class", "is required (or construct.factory)"),
    (with_(decode_bytes={"byte_map_attr": "byte_decoder"}), "decode_bytes", "needs either method"),
    (with_(decode_bytes={"method": "m", "pieces_attr": "vocab"}), "decode_bytes", "needs either method"),
    (with_(decode_bytes={"pieces_attr": "vocab", "tables": "x"}), "decode_bytes.tables", "is not a known field"),
])
def test_validation_errors_name_the_file_and_the_field(tmp_path: Path, data, field: str, expected: str) -> None:
    path = write_spec(tmp_path, data)
    with pytest.raises(SourceSpecError) as info:
        load_spec(path)
    message = str(info.value)
    assert message.startswith(f"{path}: field '{field}' ")
    assert expected in message


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    path = write_spec(tmp_path, "tokconf_source_spec: 1\nencode: [unclosed\n")
    with pytest.raises(SourceSpecError, match=rf"^{path}: not valid YAML"):
        load_spec(path)


def test_a_top_level_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = write_spec(tmp_path, "- 1\n- 2\n")
    with pytest.raises(SourceSpecError, match=r"field '\(top level\)' must be a mapping"):
        load_spec(path)


def test_trained_encoding_is_a_fingerprint_of_class_file_and_setup(tmp_path: Path) -> None:
    a = load_spec(write_spec(tmp_path, with_(setup=[{"call": "train", "args": ["abc", 300]}]), "a.yaml"))
    b = load_spec(write_spec(tmp_path, with_(setup=[{"call": "train", "args": ["abc", 301]}]), "b.yaml"))
    c = load_spec(write_spec(tmp_path, with_(setup=[{"call": "train", "args": ["abc", 300]}]), "c.yaml"))
    assert a.encoding.startswith("trained:") and len(a.encoding) == len("trained:") + 12
    assert a.encoding != b.encoding
    assert a.encoding == c.encoding
    assert load_spec(write_spec(tmp_path, with_(encoding="gpt2"), "d.yaml")).encoding == "r50k_base"


def test_shipped_specs_all_parse() -> None:
    assert shipped_spec_names() == [
        "llms-from-scratch-bpe", "llms-from-scratch-bpe-simple", "minbpe-gpt4", "minbpe-regex",
        "openai-gpt2-encoder",
    ]
    for name in shipped_spec_names():
        spec = load_spec(SHIPPED_DIR / f"{name}.yaml", name=name)
        assert spec.name == name and spec.root_env and spec.upstream["url"].startswith("https://github.com/")
    gpt4 = load_spec(SHIPPED_DIR / "minbpe-gpt4.yaml")
    assert (gpt4.encoding, gpt4.special_policy, gpt4.tiktoken_cache) == ("cl100k_base", "ordinary-unless-allowed", ("cl100k_base",))
    assert gpt4.policy_map == {"all": "all", "some": "$allowed", "some-ordinary": "$allowed",
                               "none-raise": "none_raise", "none": "none"}


def test_shipped_spec_without_checkout_is_unavailable_with_the_fix() -> None:
    registry = Registry()
    registry.add(source.family(), provider="test")
    reason = registry.status("source:minbpe-gpt4")
    assert reason is not None
    assert "git clone https://github.com/karpathy/minbpe /path/to/checkout" in reason
    assert "TOKCONF_SOURCE_ROOT_MINBPE=/path/to/checkout" in reason
    assert "minbpe/gpt4.py" in reason
    for name in ("source:openai-gpt2-encoder", "source:llms-from-scratch-bpe"):
        assert "needs a local checkout" in registry.status(name)


def test_root_that_lacks_the_file_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOKCONF_SOURCE_ROOT_MINBPE", str(tmp_path))
    spec = load_spec(SHIPPED_DIR / "minbpe-gpt4.yaml")
    with pytest.raises(SourceUnavailable) as info:
        locate_source(spec)
    message = str(info.value)
    assert f"{tmp_path}/minbpe/gpt4.py" in message and f"TOKCONF_SOURCE_ROOT_MINBPE={tmp_path}" in message
    assert "top folder of a checkout of https://github.com/karpathy/minbpe" in message


def test_roots_in_order_of_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spec = load_spec(SHIPPED_DIR / "minbpe-gpt4.yaml")
    expected = (CHECKOUTS / "minbpe" / "minbpe" / "gpt4.py").resolve()
    monkeypatch.setenv("TOKCONF_SOURCE_ROOT", str(CHECKOUTS / "minbpe"))
    assert locate_source(spec) == expected
    monkeypatch.setenv("TOKCONF_SOURCE_ROOT_MINBPE", str(tmp_path))  # the spec's own variable wins
    with pytest.raises(SourceUnavailable):
        locate_source(spec)
    set_source_root(CHECKOUTS / "minbpe")  # --source-root wins over both
    assert locate_source(spec) == expected
    set_source_root(tmp_path, spec="minbpe-gpt4")  # a per-spec root wins over the global one
    with pytest.raises(SourceUnavailable):
        locate_source(spec)


def test_spec_next_to_the_source_is_found_by_class_then_by_file() -> None:
    char = source.spec_from_argument(f"{ADHOC}/chartok.py:CharTokenizer")
    assert char.spec_file == str((ADHOC / "chartok.CharTokenizer.tokconf.yaml").resolve())
    assert (char.class_name, char.source) == ("CharTokenizer", str((ADHOC / "chartok.py").resolve()))
    boom = source.spec_from_argument(f"{ADHOC}/chartok.py:BoomTokenizer")
    assert boom.spec_file == str((ADHOC / "chartok.tokconf.yaml").resolve())
    assert boom.class_name == "BoomTokenizer"


def test_missing_spec_says_where_to_write_it(tmp_path: Path) -> None:
    (tmp_path / "tok.py").write_text("class Tok: pass\n")
    registry = Registry()
    registry.add(source.family(), provider="test")
    with pytest.raises(RegistryError) as info:
        registry.spec(f"source:{tmp_path}/tok.py:Tok")
    message = str(info.value)
    assert f"write {tmp_path}/tok.Tok.tokconf.yaml (or {tmp_path}/tok.tokconf.yaml)" in message
    assert "tokconf_source_spec: 1" in message


def test_unknown_argument_forms(tmp_path: Path) -> None:
    with pytest.raises(SourceSpecError, match="not a shipped spec"):
        source.spec_from_argument("no-such-spec")
    with pytest.raises(SourceSpecError, match="does not exist"):
        source.spec_from_argument(f"{tmp_path}/missing.py:Tok")
    with pytest.raises(SourceSpecError, match="does not exist"):
        source.spec_from_argument(f"{tmp_path}/missing.yaml")


def test_spec_that_contradicts_the_name(tmp_path: Path) -> None:
    (tmp_path / "tok.py").write_text("class Tok: pass\n")
    write_spec(tmp_path, with_(**{"class": "Other"}), "tok.tokconf.yaml")
    with pytest.raises(SourceSpecError, match=r"field 'class' contradicts the adapter name, which names 'Tok'"):
        source.spec_from_argument(f"{tmp_path}/tok.py:Tok")


def test_spec_with_its_own_source_resolves_relative_to_itself(tmp_path: Path) -> None:
    (tmp_path / "tok.py").write_text("class Tok: pass\n")
    path = write_spec(tmp_path, MINIMAL, "mine.yaml")
    spec = source.spec_from_argument(str(path))
    assert locate_source(spec) == (tmp_path / "tok.py").resolve()
    os.remove(tmp_path / "tok.py")
    with pytest.raises(SourceUnavailable, match="Fix the spec's `source` field"):
        locate_source(spec)
