"""The CLI as a user runs it: real subprocesses, exact JSON, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def tokconf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=300
    )


def test_list_json_shows_tiktoken_available_offline() -> None:
    result = tokconf("list", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)["adapters"]}
    for name in ["tiktoken:gpt2", "tiktoken:r50k_base", "tiktoken:cl100k_base",
                 "tiktoken:o200k_base", "tiktoken:o200k_harmony"]:
        assert rows[name]["available"], rows[name]
        assert rows[name]["library"] == "tiktoken" and rows[name]["version"]
    assert not rows["tiktoken:p50k_base"]["available"]
    assert "--vocab-dir" in rows["tiktoken:p50k_base"]["reason"]


def test_encode_json_shape_and_pieces() -> None:
    result = tokconf("encode", "--json", "--impl", "tiktoken:cl100k_base", "--impl", "tiktoken:gpt2",
                     "--", "Hi 你!")
    assert result.returncode == 0, result.stderr
    results = json.loads(result.stdout)["results"]
    assert results[0]["impl"] == "tiktoken:cl100k_base"
    assert results[0]["ids"] == [13347, 220, 57668, 0]
    assert results[0]["pieces"] == ["Hi", "␠", "你", "!"]
    assert results[1]["ids"] == [17250, 220, 19526, 254, 0]
    assert results[1]["pieces"] == ["Hi", "␠", "\\xe4\\xbd", "\\xa0", "!"]


def test_encode_error_outcome_and_policies() -> None:
    result = tokconf("encode", "--json", "--impl", "tiktoken:cl100k_base", "<|endoftext|>")
    [row] = json.loads(result.stdout)["results"]
    assert row["error"]["category"] == "disallowed-special"
    assert row["error"]["type"] == "builtins.ValueError"
    allowed = tokconf("encode", "--json", "--impl", "tiktoken:cl100k_base",
                      "--allowed-special", "<|endoftext|>", "<|endoftext|>")
    assert json.loads(allowed.stdout)["results"][0]["ids"] == [100257]
    ordinary = tokconf("encode", "--json", "--impl", "tiktoken:cl100k_base",
                       "--disallowed-special", "none", "--", "<|endoftext|>")
    assert json.loads(ordinary.stdout)["results"][0]["ids"] == [27, 91, 8862, 728, 428, 91, 29]


def test_escapes_reach_a_lone_surrogate() -> None:
    result = tokconf("encode", "--json", "--escapes", "--impl", "tiktoken:cl100k_base", "--", "\\ud83d")
    assert json.loads(result.stdout)["results"][0]["ids"] == [5809]


def test_human_output_shows_pieces_side_by_side() -> None:
    result = tokconf("encode", "--impl", "tiktoken:cl100k_base", "--escapes", "--", "a\\r\\n b")
    assert result.returncode == 0
    assert "|a|␍␤|␠b|" in result.stdout


def test_decode_json() -> None:
    result = tokconf("decode", "--json", "--impl", "tiktoken:cl100k_base", "57668")
    [row] = json.loads(result.stdout)["results"]
    assert row["text"] == "你" and row["bytes"] == "e4bda0"
    bad = json.loads(tokconf("decode", "--json", "--impl", "tiktoken:cl100k_base", "100261").stdout)
    assert bad["results"][0]["error"]["category"] == "unknown-id"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["encode", "--impl", "tiktoken:nope", "x"], "no adapter named 'tiktoken:nope'"),
        (["encode", "--escapes", "--impl", "tiktoken:cl100k_base", "--", "\\q"], "unknown escape"),
        (["encode", "--plugin", "nomodule:x", "--impl", "tiktoken:cl100k_base", "x"], "no module named 'nomodule'"),
        (["encode", "--allowed-special", "all", "--allowed-special", "<|x|>", "--impl",
          "tiktoken:cl100k_base", "x"],
         "stand alone"),
    ],
)
def test_usage_errors_exit_2_with_the_reason(args: list[str], fragment: str) -> None:
    result = tokconf(*args)
    assert result.returncode == 2
    assert fragment in result.stderr


def test_no_command_prints_help_and_exits_2() -> None:
    result = tokconf()
    assert result.returncode == 2 and "usage: tokconf" in result.stdout


def test_console_script_loads_a_plugin_from_the_current_folder_and_tests_it_with_impl() -> None:
    """`tokconf` (not `python -m`) must import `--plugin` modules from where the user stands,
    and a plugged-in adapter joins an `--impl` selection: it is what the user came to test."""
    from pathlib import Path

    script = Path(sys.executable).parent / "tokconf"
    repo = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [str(script), "run", "--no-generated", "--quiet", "--impl", "tiktoken:cl100k_base",
         "--plugin", "tests.wrong_adapters:crlf", "--cases", str(repo / "cases" / "corpus-whitespace.yaml"),
         "--out", str(repo / "reports" / "test-console-script")],
        capture_output=True, text=True, timeout=600, cwd=repo,
    )
    assert result.returncode == 1, result.stderr
    assert "wrong:crlf" in result.stdout and "FAIL" in result.stdout


def test_encoding_flag_gives_a_bare_tokenizer_json_its_id_space(tmp_path) -> None:
    from harness.registry import default_registry

    path = tmp_path / "tokenizer.json"
    default_registry().get("hf:gpt2").native.save(str(path))
    claimed = tokconf("encode", "--json", "--encoding", "r50k_base", "--impl", f"hf-json:{path}",
                      "--impl", "tiktoken:gpt2", "--", "Hi 你!")
    assert claimed.returncode == 0, claimed.stderr
    rows = json.loads(claimed.stdout)["results"]
    assert [r["encoding"] for r in rows] == ["r50k_base", "r50k_base"]
    assert rows[0]["ids"] == rows[1]["ids"] == [17250, 220, 19526, 254, 0]
    # without the flag its vocabulary says which pinned ID space it is
    bare = json.loads(tokconf("encode", "--json", "--impl", f"hf-json:{path}", "--", "Hi").stdout)
    assert bare["results"][0]["encoding"] == "r50k_base"


def test_hypothesis_entry_point_plugins_are_not_run_by_tokconf(tmp_path) -> None:
    """A package's "hypothesis" entry point runs when Hypothesis is imported (trio's, which
    selenium installs, imports pytest: 0.3 s of CPU per command). tokconf draws from its
    own strategies and seed, so it turns them off; the empty string turns them back on."""
    import os

    (tmp_path / "plugged-0.dist-info").mkdir()
    (tmp_path / "plugged-0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: plugged\nVersion: 0\n")
    (tmp_path / "plugged-0.dist-info" / "entry_points.txt").write_text("[hypothesis]\nmark = plugged_hook:mark\n")
    marker = tmp_path / "ran"
    (tmp_path / "plugged_hook.py").write_text(f"def mark():\n    open({str(marker)!r}, 'a').write('ran')\n")
    # a run imports Hypothesis (vocabulary phase alone: the quickest run there is)
    command = [sys.executable, "-m", "harness", "run", "--impl", "tiktoken:gpt2", "--no-cases", "--no-generated",
               "--no-every-token", "--no-everyday", "--no-default-long", "--no-cache", "--quiet",
               "--out", str(tmp_path / "reports")]
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_NO_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not marker.exists()
    done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**env, "HYPOTHESIS_NO_PLUGINS": ""})
    assert done.returncode == 0 and marker.read_text() == "ran", done.stderr  # the plugin is seen when asked for
