"""The tokconf pytest plugin, driven through pytester in fresh subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

CASES = """\
version: 1
cases:
  - id: hello
    text: "hello world"
    encodings: [cl100k_base]
    expect:
      ids: {cl100k_base: [15339, 1917]}
  - id: crlf-documented
    text_escaped: 'a\\r\\nb'
    encodings: [cl100k_base]
    documented:
      - adapters: ["wrong:crlf"]
        check: id-parity
        kind: content
        reason: "reads text in text mode"
        source: "tests/wrong_adapters.py"
        domain: {chars_escaped: '\\r'}
      - adapters: ["wrong:crlf"]
        check: round-trip
        kind: bytes
        reason: "reads text in text mode"
        source: "tests/wrong_adapters.py"
        domain: {chars_escaped: '\\r'}
  - id: plain-but-documented
    text: "abc"
    encodings: [cl100k_base]
    documented:
      - adapters: ["wrong:crlf"]
        check: id-parity
        kind: content
        reason: "claimed, but abc has no CRLF"
        source: "tests/wrong_adapters.py"
  - id: crlf-undocumented
    text_escaped: 'x\\r\\n'
    encodings: [cl100k_base]
    expect:
      ids: {cl100k_base: [87, 319]}
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # so that --tokconf-plugin tests.wrong_adapters:... imports
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    pytester.makepyfile(test_theirs="def test_theirs():\n    assert True\n")
    (pytester.path / "cases.yaml").write_text(CASES, encoding="utf-8")
    return pytester


def test_an_unrelated_run_gets_no_items(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--collect-only", "-q")
    assert [line for line in result.outlines if "::" in line] == ["test_theirs.py::test_theirs"]
    project.runpytest_subprocess().assert_outcomes(passed=1)


@pytest.mark.parametrize("jobs", [[], ["--tokconf-jobs", "2"]], ids=["in-order", "jobs-2"])
def test_options_add_the_suite_documented_passes_stale_and_unexpected_fail(project: pytest.Pytester,
                                                                            jobs: list[str]) -> None:
    # the same outcomes whether the cases run as their items come or ahead over two processes
    result = project.runpytest_subprocess(
        "--tokconf-plugin", "tests.wrong_adapters:crlf", "--tokconf-impl", "wrong:crlf",
        "--tokconf-cases", "cases.yaml", "--tokconf-no-generated", "-p", "no:cacheprovider", *jobs,
    )
    result.assert_outcomes(passed=5, failed=2)  # 4 cases, 2 vocab (the reference too), test_theirs
    text = result.stdout.str()
    assert "FAILED tokconf::cases.yaml::plain-but-documented" in text
    assert "FAILED tokconf::cases.yaml::crlf-undocumented" in text
    assert "stale divergence: wrong:crlf / id-parity [not-reproduced] (case plain-but-documented)" in text
    assert "documented reason: claimed, but abc has no CRLF" in text
    # the id-parity and round-trip differences of crlf-undocumented shrink to '\r\n', inside
    # the domain crlf-documented declares (any text with a CR): explained; its own
    # expectation is not
    assert "unexpected divergence: wrong:crlf / expected [ids] (case crlf-undocumented)" in text
    assert "expected IDs [87, 319], got [87, 198]" in text
    assert "minimal input: 'x\\r\\n'" in text
    assert "|x|␍␤|" in text and "|x|␤|" in text
    assert ("reproduce: tokconf encode --escapes --plugin tests.wrong_adapters:crlf --impl wrong:crlf "
            "--impl tiktoken:cl100k_base -- 'x\\r\\n'") in text


def test_generated_items_are_slices_of_the_runs_own_inputs(project: pytest.Pytester) -> None:
    (project.path / "none.yaml").write_text("version: 1\ncases: []\n", encoding="utf-8")
    result = project.runpytest_subprocess(
        "--tokconf-plugin", "tests.wrong_adapters:rstrip", "--tokconf-impl", "wrong:rstrip",
        "--tokconf-cases", "none.yaml", "-p", "no:cacheprovider", "-k", "generated", "-q",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1 and outcomes.get("deselected", 0) >= 2, outcomes  # 2 vocab, steered
    text = result.stdout.str()
    assert "FAILED tokconf::generated[cl100k_base]::001" in text
    assert "unexpected divergence: wrong:rstrip / id-parity [content] (generated input)" in text
    assert "minimal input: ' '" in text
    collected = project.runpytest_subprocess("--tokconf-plugin", "tests.wrong_adapters:rstrip", "--tokconf-impl",
                                             "wrong:rstrip", "--tokconf-cases", "none.yaml", "--collect-only", "-q")
    ids = [line for line in collected.outlines if line.startswith("tokconf::")]
    assert ids[:2] == ["tokconf::vocab[tiktoken:cl100k_base]", "tokconf::vocab[wrong:rstrip]"]
    # the plan's order: vocabulary, generated, steered, every token, then the everyday text
    phases = [i.split("::")[1].split("[")[0] for i in ids]
    assert phases == sorted(phases, key=["vocab", "generated", "steered", "every-token", "everyday", "long"].index), phases
    assert ids[2].startswith("tokconf::generated[cl100k_base]::") and "tokconf::steered" in ids
    assert "tokconf::everyday[prose#0-23]" in ids
    assert [i for i in ids if "every-token" in i] == ["tokconf::every-token[tiktoken:cl100k_base]",
                                                      "tokconf::every-token[wrong:rstrip]"]


def test_a_test_module_requests_the_suite(project: pytest.Pytester) -> None:
    project.makepyfile(test_conformance=(
        "from harness.pytest.plugin import tokconf_suite\n"
        "test_tokconf = tokconf_suite(impls=('tiktoken:cl100k_base',), cases=('cases.yaml',), generated=False,\n"
        "                             plugins=('tests.wrong_adapters:crlf',))\n"
    ))
    collected = project.runpytest_subprocess("--collect-only", "-q", "test_conformance.py")
    ids = [line for line in collected.outlines if "::" in line]
    assert ids == [  # the plan's order: vocabulary checks, then cases
        "test_conformance.py::test_tokconf::vocab[tiktoken:cl100k_base]",
        "test_conformance.py::test_tokconf::vocab[wrong:crlf]",
        "test_conformance.py::test_tokconf::cases.yaml::hello",
        "test_conformance.py::test_tokconf::cases.yaml::crlf-documented",
        "test_conformance.py::test_tokconf::cases.yaml::plain-but-documented",
        "test_conformance.py::test_tokconf::cases.yaml::crlf-undocumented",
    ]
    project.runpytest_subprocess("test_conformance.py", "-k", "hello or vocab").assert_outcomes(passed=3, deselected=3)
    # the module's request and the command line do not add the suite twice
    both = project.runpytest_subprocess("--collect-only", "-q", "--tokconf-no-generated", "test_conformance.py")
    assert len([line for line in both.outlines if "::" in line]) == 6


def test_bad_options_are_usage_errors(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--tokconf-plugin", "nomodule:x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "tokconf: --plugin nomodule:x: no module named 'nomodule'; searched the current folder" in result.stderr.str()


def test_report_option_writes_parity_json(project: pytest.Pytester) -> None:
    # only the case without documented entries: the others document wrong:crlf, whose kind
    # is unknown without its plugin, a load error since issue 21
    (project.path / "hello.yaml").write_text(CASES.split("  - id: crlf-documented")[0], encoding="utf-8")
    result = project.runpytest_subprocess(
        "--tokconf-impl", "tiktoken:cl100k_base", "--tokconf-cases", "hello.yaml", "--tokconf-no-generated",
        "--tokconf-report", "out", "-p", "no:cacheprovider",
    )
    result.assert_outcomes(passed=3)  # the vocabulary, hello, test_theirs
    assert "tokconf: parity report: out/latest/parity.json (exit 0)" in result.stdout.str()
    data = json.loads((project.path / "out" / "latest" / "parity.json").read_text(encoding="ascii"))
    assert data["run"]["argv"][:2] == ["tokconf", "run"]
    # deselected items: the report would not be the plan's, so it is not written
    part = project.runpytest_subprocess(
        "--tokconf-plugin", "tests.wrong_adapters:crlf", "--tokconf-impl", "tiktoken:cl100k_base",
        "--tokconf-cases", "cases.yaml", "--tokconf-no-generated",
        "--tokconf-report", "part", "-p", "no:cacheprovider", "-k", "hello")
    assert "tokconf: parity report: not written: 1 of the plan's 6 units ran (some were deselected)" in part.stdout.str()
    assert not (project.path / "part").exists()
    assert data["matrix"]["tiktoken:cl100k_base"]["expected"]["status"] == "agree"


#: a module collected after the suite's: what the suite holds once its last item ran, and an
#: item of it run again after that (a pytest-xdist worker may be handed one late)
LATER = """\
import os
from pathlib import Path

from harness.pytest.plugin import _SUITES


def _children():
    pid = os.getpid()
    return [c for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]


def test_later(request):
    (suite, _), = request.config.stash[_SUITES].values()
    print("BUILT", sorted({"_ready", "judge", "collector", "_units"} & set(vars(suite))), "CHILDREN", len(_children()))
    unit = next(u for u in suite.units() if u.name == "crlf-undocumented")
    print("AGAIN", sorted({r.status for r in suite.run(unit)}))
"""


def test_the_suite_lets_go_of_its_adapters_after_its_last_item(project: pytest.Pytester) -> None:
    # a pytest-xdist worker kept the suite's workers, adapters, pools and outcomes through
    # every test file it ran after the conformance suite
    project.makepyfile(test_conformance=(
        "from harness.pytest.plugin import tokconf_suite\n"
        "test_tokconf = tokconf_suite(impls=('wrong:crlf',), cases=('cases.yaml',), generated=False,\n"
        "                             plugins=('tests.wrong_adapters:crlf',))\n"
    ), test_zlater=LATER)
    args = ("--tokconf-isolate", "-p", "no:cacheprovider", "-p", "no:xdist", "-s")
    result = project.runpytest_subprocess(*args)
    result.assert_outcomes(passed=6, failed=2)  # as above, and test_later
    text = result.stdout.str()
    # its workers ended, its adapters and outcomes let go; an item run later builds them again
    assert "BUILT [] CHILDREN 0" in text
    assert "AGAIN ['unexpected']" in text
    # a report still to be written keeps what it is written from
    kept = project.runpytest_subprocess(*args, "--tokconf-report", "out")
    assert "BUILT ['_ready', '_units', 'collector', 'judge'] CHILDREN 2" in kept.stdout.str(), kept.stdout.str()[-3000:]
