"""Trained byte-BPE models as adapters: tiktoken-style policy, names, encodings, the demo."""

from __future__ import annotations

import hashlib
import json

import pytest

from harness.cli import main
from harness.outcomes import capture
from harness.registry import Registry, RegistryError
from implementations.bytebpe import adapters as bytebpe_adapters
from implementations.bytebpe.model import ByteBPE, train
from implementations.bytebpe.adapters import DEMO_MODEL, DATA_DIR, build

FIGURE_TEXT = "低山 low low lower low\n低山"


@pytest.fixture(scope="module")
def registry() -> Registry:
    reg = Registry()
    reg.add(bytebpe_adapters.family(), provider="test")
    return reg


@pytest.fixture
def model_file(tmp_path):
    model = train(
        ["the lower the lowest, the low end", FIGURE_TEXT], vocab_size=300, pattern_name="gpt4",
        special_tokens={"<|endoftext|>": 300, "<|fim|>": 301},
    )
    return model.save(tmp_path / "model.json")


def _encoding_of(path) -> str:
    return "trained:" + hashlib.sha256(path.read_bytes()).hexdigest()[:12]


# -- names and encodings -------------------------------------------------------------


def test_family_lists_demo_pair_and_rank_mode(registry: Registry) -> None:
    names = registry.names()
    for name in ("bytebpe:demo", "bytebpe-ltr:demo", "bytebpe-ranks:gpt2",
                 "bytebpe-ranks:cl100k_base", "bytebpe-ranks:o200k_base"):
        assert name in names
    demo = _encoding_of(DEMO_MODEL)
    assert registry.spec("bytebpe:demo").encoding == demo
    assert registry.spec("bytebpe-ltr:demo").encoding == demo
    assert registry.spec("bytebpe-ranks:gpt2").encoding == "r50k_base"
    assert registry.spec("bytebpe-ranks:cl100k_base").encoding == "cl100k_base"


def test_a_model_path_resolves_to_an_adapter(registry: Registry, model_file) -> None:
    name = f"bytebpe:{model_file}"
    adapter = registry.get(name)
    assert adapter.name == name
    assert adapter.encoding == _encoding_of(model_file)
    wrong = registry.get(f"bytebpe-ltr:{model_file}")
    assert wrong.encoding == adapter.encoding  # same ID space: the harness compares them
    assert any("DELIBERATELY WRONG" in note for note in wrong.capabilities.notes)


def test_a_missing_model_path_is_a_registry_error(registry: Registry, tmp_path) -> None:
    with pytest.raises(RegistryError, match="cannot read model file .*tokconf train"):
        registry.spec(f"bytebpe:{tmp_path / 'missing.json'}")


# -- tiktoken-style policy mapped onto the native one ---------------------------------


def test_default_policy_raises_on_any_registered_literal(model_file) -> None:
    adapter = build(str(model_file), left_to_right=False)
    outcome = capture("encode", adapter.encode, "x<|fim|>", classify=adapter.classify_error)
    assert (outcome.category, outcome.native_type) == (
        "disallowed-special", "implementations.bytebpe.base.DisallowedSpecialError",
    )


def test_policy_matrix(model_file) -> None:
    adapter = build(str(model_file), left_to_right=False)
    text = "a<|endoftext|>b<|fim|>"
    ordinary = adapter.encode_ordinary(text)
    assert adapter.encode(text, disallowed_special=()) == ordinary
    assert 300 not in ordinary and 301 not in ordinary
    everything = adapter.encode(text, allowed_special="all")
    assert everything.count(300) == 1 and everything.count(301) == 1
    # allowed one, the other still disallowed (tiktoken's "all" minus the allowed)
    with pytest.raises(ValueError, match="'<\\|fim\\|>'"):
        adapter.encode(text, allowed_special={"<|endoftext|>"})
    one = adapter.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())
    assert one.count(300) == 1 and 301 not in one
    # an explicit disallowed set that is not registered still raises where it appears
    with pytest.raises(ValueError, match="'b<'"):
        adapter.encode(text, allowed_special="all", disallowed_special={"b<"})
    # tiktoken ignores allowed literals it does not know; so does the mapping
    assert adapter.encode("ab", allowed_special={"<|nope|>"}) == adapter.encode_ordinary("ab")


def test_decode_and_pieces(model_file) -> None:
    adapter = build(str(model_file), left_to_right=False)
    ids = adapter.encode("the lowest<|endoftext|>", allowed_special="all")
    assert adapter.decode(ids) == "the lowest<|endoftext|>"
    assert b"".join(adapter.token_bytes(i) for i in ids) == adapter.decode_bytes(ids)
    outcome = capture("decode", adapter.decode, [999], classify=adapter.classify_error)
    assert outcome.category == "unknown-id"
    assert adapter.pretokenize("the lowest!") == ["the", " lowest", "!"]


def test_batch_is_not_offered_for_trained_models(model_file) -> None:
    outcome = capture("encode", build(str(model_file), left_to_right=False).encode_batch, ["a"])
    assert outcome.category == "unsupported"


# -- the shipped demo model ----------------------------------------------------------


def test_demo_model_is_what_the_trainer_makes_from_the_demo_text(tmp_path) -> None:
    text = (DATA_DIR / "bytebpe_demo.txt").read_bytes().decode("utf-8")
    assert "\r\n" in text and "\t" in text
    model = train(text, vocab_size=400, pattern_name="gpt4", special_tokens={"<|endoftext|>": 400})
    assert len(model.merges) == 144
    assert model.save(tmp_path / "demo.json").read_bytes() == DEMO_MODEL.read_bytes()


def test_demo_right_and_wrong_encoders_differ_but_decode_alike(registry: Registry) -> None:
    right, wrong = registry.get("bytebpe:demo"), registry.get("bytebpe-ltr:demo")
    # the documented example: ' in' is one token by rank, ' i' + 'n' left to right
    assert [right.token_bytes(i) for i in right.encode(" in")] == [b" in"]
    assert [wrong.token_bytes(i) for i in wrong.encode(" in")] == [b" i", b"n"]
    text = "the end of the line, in the lowest lamp"
    assert right.encode(text) != wrong.encode(text)
    assert right.decode(right.encode(text)) == wrong.decode(wrong.encode(text)) == text


def test_demo_trace_lists_rounds_in_rank_order(registry: Registry) -> None:
    rounds = registry.get("bytebpe:demo").trace(" lowest")
    assert [r.rank for r in rounds] == sorted(r.rank for r in rounds)
    assert rounds[-1].pair == (b" low", b"est") and rounds[-1].merged == 1
    wrong_rounds = registry.get("bytebpe-ltr:demo").trace(" lowest")
    assert [r.rank for r in wrong_rounds] != sorted(r.rank for r in wrong_rounds)


# -- CLI -----------------------------------------------------------------------------


def test_train_cli_figure_as_json(tmp_path, capsys) -> None:
    source = tmp_path / "fig.txt"
    source.write_bytes(FIGURE_TEXT.encode())
    out = tmp_path / "fig.json"
    assert main(["train", "--vocab-size", "274", "--pattern", "none", "--json", "-o", str(out), str(source)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["merges"], summary["vocab_size"]) == (9, 265)
    assert summary["stopped_early"] is True and summary["encoding"] == _encoding_of(out)
    assert ByteBPE.load(out).ordinary_size == 265


def test_train_cli_text_output_and_specials(tmp_path, capsys) -> None:
    source = tmp_path / "t.txt"
    source.write_text("ab ab ab ab", encoding="utf-8")
    out = tmp_path / "m.json"
    code = main(["train", "--vocab-size", "300", "--special", "<|a=b|>=300", "-o", str(out), str(source)])
    text = capsys.readouterr().out
    assert code == 0
    assert "merges: 2\n" in text and "vocab_size: 258 (256 bytes + 2 merges; plus 1 special token)" in text
    assert f"bytebpe:{out}" in text
    assert ByteBPE.load(out).special_tokens == {"<|a=b|>": 300}


def test_trained_model_works_with_encode_cli(tmp_path, capsys) -> None:
    source = tmp_path / "t.txt"
    source.write_text("low lower lowest low low", encoding="utf-8")
    out = tmp_path / "m.json"
    assert main(["train", "--vocab-size", "300", "-o", str(out), str(source)]) == 0
    capsys.readouterr()
    main(["encode", "--json", "--trace", "--impl", f"bytebpe:{out}", " lowest"])
    result = json.loads(capsys.readouterr().out)["results"][0]
    assert result["encoding"] == _encoding_of(out)
    assert result["trace"] and {"rank", "pair", "merged"} <= set(result["trace"][0])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vocab-size", "255"], "below the 256 single-byte tokens"),
        (["--vocab-size", "300", "--special", "<|x|>"], "expected TOKEN=ID"),
        (["--vocab-size", "300", "--special", "<|x|>=abc"], "is not an integer"),
        (["--vocab-size", "300", "--special", "<|x|>=299"], "use an ID >= 300"),
        (["--vocab-size", "300", "--special", "<|x|>=300", "--special", "<|y|>=300"], "share ID 300"),
        (["--vocab-size", "300", "--special", "<|x|>=300", "--special", "<|x|>=301"], "given twice"),
    ],
)
def test_train_cli_usage_errors(tmp_path, capsys, args: list[str], message: str) -> None:
    source = tmp_path / "t.txt"
    source.write_text("abc", encoding="utf-8")
    assert main(["train", *args, "-o", str(tmp_path / "m.json"), str(source)]) == 2
    assert message in capsys.readouterr().err


def test_train_cli_file_errors(tmp_path, capsys) -> None:
    out = str(tmp_path / "m.json")
    assert main(["train", "--vocab-size", "300", "-o", out, str(tmp_path / "none.txt")]) == 2
    assert "no such file" in capsys.readouterr().err
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9")
    assert main(["train", "--vocab-size", "300", "-o", out, str(latin)]) == 2
    assert "is not UTF-8: byte 3 is 0xe9" in capsys.readouterr().err
    good = tmp_path / "good.txt"
    good.write_text("abab", encoding="utf-8")
    assert main(["train", "--vocab-size", "300", "-o", str(tmp_path), str(good)]) == 2
    assert "is a directory" in capsys.readouterr().err
