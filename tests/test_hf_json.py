"""hf-json:PATH: any tokenizer.json, its claimed encoding, and clear errors."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from harness.registry import AdapterUnavailable, Registry, RegistryError, default_registry
from implementations.hf import tokenizer_json as hf_json
from implementations.hf.tokenizer_json import HFJsonError, hf_json_spec, load_hf_json, read_spec


@pytest.fixture(scope="module")
def gpt2_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """hf:gpt2's tokenizer, saved by tokenizers as a plain tokenizer.json."""
    folder = tmp_path_factory.mktemp("gpt2")
    path = folder / "tokenizer.json"
    default_registry().get("hf:gpt2").native.save(str(path))
    return path


@pytest.fixture()
def registry() -> Registry:
    fresh = Registry()
    fresh.add(hf_json.family(), provider="test")
    return fresh


def test_a_pinned_vocabulary_is_recognised_without_a_claim(gpt2_json: Path, registry: Registry) -> None:
    sha = hashlib.sha256(gpt2_json.read_bytes()).hexdigest()
    name = f"hf-json:{gpt2_json}"
    spec = registry.spec(name)
    assert (spec.name, spec.encoding, spec.library) == (name, "r50k_base", "tokenizers")
    adapter = registry.get(name)
    assert adapter.encoding == "r50k_base"
    assert adapter.declares_like == ("hf:gpt2",)  # shares what cases declare about hf:gpt2
    assert adapter.encode("Hi 你!") == [17250, 220, 19526, 254, 0]
    assert adapter.encode("<|endoftext|>") == [50256]
    assert adapter.encode_ordinary("<|endoftext|>") == [27, 91, 437, 1659, 5239, 91, 29]
    assert adapter.decode_bytes([19526]) == b"\xe4\xbd"
    assert adapter.capabilities.special_policy == "always-special"
    assert any(sha in note for note in adapter.capabilities.notes)


def test_spec_yaml_names_file_and_encoding(gpt2_json: Path, tmp_path: Path, registry: Registry) -> None:
    spec_file = tmp_path / "gpt2.yaml"
    spec_file.write_text(f"tokenizer: {gpt2_json}\nencoding: gpt2\nnotes: [saved from hf:gpt2]\n")
    adapter = registry.get(f"hf-json:{spec_file}")
    assert adapter.encoding == "r50k_base"  # gpt2 and r50k_base are one ID space
    assert adapter.encode("    hello world!!!") == [220, 220, 220, 23748, 995, 10185]
    assert "saved from hf:gpt2" in adapter.capabilities.notes


def test_spec_path_is_relative_to_the_spec(gpt2_json: Path) -> None:
    spec_file = gpt2_json.parent / "relative.yaml"
    spec_file.write_text("tokenizer: tokenizer.json\nencoding: r50k_base\n")
    assert read_spec(str(spec_file)).tokenizer == gpt2_json.parent / "tokenizer.json"


def test_spec_named_like_a_sidecar_given_explicitly(gpt2_json: Path, tmp_path: Path) -> None:
    spec_file = tmp_path / "mine.tokconf.yaml"
    spec_file.write_text(f"tokenizer: {gpt2_json}\nencoding: r50k_base\n")
    assert read_spec(str(spec_file)).tokenizer == gpt2_json


def test_sidecar_spec_next_to_the_file(gpt2_json: Path, tmp_path: Path) -> None:
    copy = tmp_path / "tokenizer.json"
    copy.write_bytes(gpt2_json.read_bytes())
    (tmp_path / "tokenizer.json.tokconf.yaml").write_text("encoding: r50k_base\n")
    assert hf_json_spec(str(copy)).encoding == "r50k_base"


def test_encoding_keyword_overrides_any_claim(gpt2_json: Path, tmp_path: Path) -> None:
    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(f"tokenizer: {gpt2_json}\nencoding: cl100k_base\n")
    assert hf_json_spec(str(spec_file), encoding="r50k_base").encoding == "r50k_base"
    adapter = load_hf_json(str(gpt2_json), encoding="r50k_base", name="hf-json:mine")
    assert (adapter.name, adapter.encoding) == ("hf-json:mine", "r50k_base")


def test_converted_cl100k_round_trips_through_a_file(tmp_path: Path) -> None:
    path = tmp_path / "cl100k.json"
    default_registry().get("hf:cl100k_base").native.save(str(path))
    adapter = load_hf_json(str(path), encoding="cl100k_base")
    assert adapter.encode(" hello1234!\n中文") == [24748, 4513, 19, 4999, 16325, 17161]
    assert adapter.pretokenize(" hello1234!\n中文") == [" hello", "123", "4", "!\n", "中文"]


def test_file_settings_are_declared(gpt2_json: Path, tmp_path: Path) -> None:
    from tokenizers import Tokenizer, normalizers

    tokenizer = Tokenizer.from_file(str(gpt2_json))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.enable_truncation(3)
    path = tmp_path / "changed.json"
    tokenizer.save(str(path))
    adapter = load_hf_json(str(path))
    notes = " ".join(adapter.capabilities.notes)
    assert "normalizer (Lowercase)" in notes and "truncation" in notes
    assert adapter.encode("HELLO HELLO HELLO HELLO") == [31373, 23748, 23748]  # native: lowercased, cut at 3


def test_added_literals_pass_through_the_byte_level_decoder(gpt2_json: Path, tmp_path: Path) -> None:
    from tokenizers import AddedToken, Tokenizer

    tokenizer = Tokenizer.from_file(str(gpt2_json))
    tokenizer.add_special_tokens([AddedToken("<Ġs>", special=True, normalized=False)])
    path = tmp_path / "added.json"
    tokenizer.save(str(path))
    adapter = load_hf_json(str(path))
    assert adapter.special_tokens["<Ġs>"] == 50257
    assert adapter.encode("hello<Ġs>") == [31373, 50257]
    # HF decodes the literal through the alphabet too: Ġ is the alias of the space byte
    assert adapter.decode([31373, 50257]) == "hello< s>"
    assert adapter.decode_bytes([31373, 50257]) == b"hello< s>"
    assert any("do not decode to their own text: ['<Ġs>']" in n for n in adapter.capabilities.notes)



@pytest.mark.parametrize("literal", ["<\x85é>", "<中Ġ>", "a b", "<Ġs>", "Ġé"])
def test_added_literals_decode_as_the_byte_level_decoder_maps_them(gpt2_json: Path, tmp_path: Path,
                                                                   literal: str) -> None:
    """HF's ``ByteLevel`` decoder maps a token through the alphabet only when every
    character of it is an alias, else passes it whole as its UTF-8 (``Ġé``: all aliases,
    the bytes of `` `` and 0xE9). ``decode_bytes`` must be its bytes on both of its paths:
    every token all aliases, or one not."""
    from tokenizers import AddedToken, Tokenizer, decoders

    tokenizer = Tokenizer.from_file(str(gpt2_json))
    tokenizer.add_special_tokens([AddedToken(literal, special=True, normalized=False)])
    path = tmp_path / "added.json"
    tokenizer.save(str(path))
    adapter = load_hf_json(str(path))
    alone = decoders.ByteLevel().decode([literal]).encode("utf-8", "replace")
    expected = {"<\x85é>": "<\x85é>".encode(), "<中Ġ>": "<中Ġ>".encode(), "a b": b"a b", "<Ġs>": b"< s>",
                "Ġé": b" \xe9"}[literal]
    special = adapter.special_tokens[literal]  # "Ġé" is GPT-2's own token 16268, made special
    assert adapter.token_bytes(special) == expected
    assert adapter.decode_bytes([31373, special, 31373]) == b"hello" + expected + b"hello"
    if literal != "Ġé":  # invalid UTF-8: HF's text has U+FFFD
        assert alone == expected
        assert adapter.decode([31373, special]) == tokenizer.decode([31373, special], skip_special_tokens=False) == \
            "hello" + expected.decode("utf-8")

# -- errors: what failed, where, the fix ----------------------------------------------------


def test_missing_file(tmp_path: Path, registry: Registry) -> None:
    missing = tmp_path / "nope" / "tokenizer.json"
    with pytest.raises(RegistryError) as caught:
        registry.spec(f"hf-json:{missing}")
    message = str(caught.value)
    assert isinstance(caught.value, HFJsonError)
    assert str(missing) in message and "no tokenizer.json" in message and "Tokenizer.save" in message


def test_folder_instead_of_file_suggests_the_file(gpt2_json: Path) -> None:
    with pytest.raises(HFJsonError, match=r"is a folder.*did you mean hf-json:.*tokenizer\.json"):
        read_spec(str(gpt2_json.parent))


def test_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(HFJsonError, match=r"is not JSON .* written by Hugging Face tokenizers"):
        read_spec(str(bad))


def test_json_but_not_a_tokenizer(tmp_path: Path) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(HFJsonError, match=r'no top-level\s+"model"'):
        read_spec(str(bad))


def test_tokenizers_refuses_the_file(tmp_path: Path, registry: Registry) -> None:
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "NoSuchModel"}}')
    name = f"hf-json:{bad}"
    assert registry.spec(name).encoding.startswith("hf-json:")
    with pytest.raises(AdapterUnavailable, match=r"HFJsonError: .*tokenizers cannot load"):
        registry.get(name)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("encoding: cl100k_base\n", r"no `tokenizer:` key"),
        ("- a list\n", r"holds a list, not a mapping"),
        ("tokenizer: x.json\nencodng: cl100k_base\n", r"unknown keys \['encodng'\]"),
        ("tokenizer: [1]\n", r"`tokenizer:` must be a path"),
        ("tokenizer: tokenizer.json\nencoding: ''\n", r"non-empty name"),
        ("tokenizer: tokenizer.json\nadd_special_tokens: maybe\n", r"true or false"),
        ("tokenizer: tokenizer.json\nnotes: 3\n", r"list of strings"),
        ("tokenizer: [unclosed\n", r"cannot read adapter spec"),
    ],
)
def test_invalid_spec(gpt2_json: Path, content: str, expected: str) -> None:
    spec_file = gpt2_json.parent / "bad.yaml"
    spec_file.write_text(content)
    with pytest.raises(HFJsonError, match=expected):
        read_spec(str(spec_file))


def test_missing_spec_file(tmp_path: Path) -> None:
    with pytest.raises(HFJsonError, match=r"adapter spec .*missing\.yaml does not exist"):
        read_spec(str(tmp_path / "missing.yaml"))


def test_sidecar_naming_another_file_is_refused(gpt2_json: Path, tmp_path: Path) -> None:
    copy = tmp_path / "tokenizer.json"
    copy.write_bytes(gpt2_json.read_bytes())
    (tmp_path / "tokenizer.json.tokconf.yaml").write_text(f"tokenizer: {gpt2_json}\n")
    with pytest.raises(HFJsonError, match=r"names another tokenizer"):
        read_spec(str(copy))


def test_empty_argument() -> None:
    with pytest.raises(HFJsonError, match=r"no path given"):
        read_spec("")


def test_empty_encoding_keyword(gpt2_json: Path) -> None:
    with pytest.raises(HFJsonError, match=r"non-empty name"):
        read_spec(str(gpt2_json), encoding=" ")


def test_registered_through_the_entry_point(gpt2_json: Path) -> None:
    assert default_registry().spec(f"hf-json:{gpt2_json}").provider.startswith("entry point hf-json")


def test_an_unknown_vocabulary_is_its_own_id_space(gpt2_json: Path, tmp_path: Path, registry: Registry) -> None:
    import json

    document = json.loads(gpt2_json.read_text(encoding="utf-8"))
    vocab = document["model"]["vocab"]
    vocab["hello"], vocab["Ġworld"] = vocab["Ġworld"], vocab["hello"]  # one swapped pair is enough
    changed = tmp_path / "tokenizer.json"
    changed.write_text(json.dumps(document), encoding="utf-8")
    sha = hashlib.sha256(changed.read_bytes()).hexdigest()
    spec = registry.spec(f"hf-json:{changed}")
    assert spec.encoding == f"hf-json:{sha[:12]}"
    assert registry.get(f"hf-json:{changed}").declares_like == ()


def test_a_correct_converted_file_passes_with_hf_declarations(gpt2_json: Path, tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    def run(path: Path) -> tuple[int, dict]:
        out = tmp_path / path.stem
        proc = subprocess.run([sys.executable, "-m", "harness", "run", "--impl", f"hf-json:{path}", "--no-generated",
                               "--quiet", "--out", str(out)], capture_output=True, text=True, timeout=600,
                              cwd=Path(__file__).resolve().parent.parent)
        return proc.returncode, json.loads((out / "latest" / "parity.json").read_text(encoding="ascii"))

    code, data = run(gpt2_json)
    assert code == 0
    assert data["run"]["references"] == {"r50k_base": "tiktoken:r50k_base"}
    row = data["matrix"][f"hf-json:{gpt2_json}"]
    assert row["id-parity"]["status"] == "agree" and row["special-policy"]["status"] == "documented"
    # plant a fault in the file: lower-casing before the split is caught, hf's declarations or not
    document = json.loads(gpt2_json.read_text(encoding="utf-8"))
    document["normalizer"] = {"type": "Lowercase"}
    broken = tmp_path / "lowercased.json"
    broken.write_text(json.dumps(document), encoding="utf-8")
    code, data = run(broken)
    assert code == 1
    assert any(d["status"] == "unexpected" and d["input"]["text"] == "A" for d in data["divergences"])


def test_a_tokenizer_json_declares_its_split_regex(gpt2_json: Path, tmp_path: Path) -> None:
    """The Split regex of a tokenizer.json (or ByteLevel's built-in GPT-2 pattern) is what
    pattern-aware generation and coverage read."""
    from implementations.hf.adapters import BYTE_LEVEL_PATTERN
    from implementations.hf.convert import oniguruma_pattern

    path = tmp_path / "cl100k.json"
    default_registry().get("hf:cl100k_base").native.save(str(path))
    cl100k = load_hf_json(str(path), encoding="cl100k_base")
    assert cl100k.split_pattern == oniguruma_pattern(default_registry().get("tiktoken:cl100k_base").split_pattern)
    assert load_hf_json(str(gpt2_json)).split_pattern == BYTE_LEVEL_PATTERN
