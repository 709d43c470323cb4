"""A unit the cache cannot keep whole keeps the answers of the adapters it can hash
(harness/run/answers.py): the user's path asks its reference nothing it asked before,
and finds what it found with nothing kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.calls import InProcess
from harness.cases.model import Policy
from harness.checks.base import ORDINARY
from harness.cli import main
from harness.outcomes import Outcome
from harness.registry import default_registry
from harness.run.answers import RememberingExecutor
from tests.run_verdicts import verdicts

#: every literal special under every policy: found by the shipped cases, which ask the
#: same literals under several policies (the answers kept must tell them apart)
PLUGIN = "wrong:always-special"
#: the shipped cases and one generated example; every token, everyday text and the
#: default long inputs are other tests'
RUN = ["run", "--quiet", "--no-isolate", "--plugin", "tests.wrong_adapters:always_special", "--impl", PLUGIN,
       "--no-every-token", "--no-everyday", "--no-default-long", "--max-examples", "1", "--profile-harness"]
REFERENCE = "tiktoken:cl100k_base"


def _run(tmp_path: Path, name: str, *extra: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
    out = tmp_path / name
    code = main([*RUN, *extra, "--out", str(out)])
    latest = out / "latest"
    return (code, json.loads((latest / "parity.json").read_text(encoding="utf-8")),
            json.loads((latest / "harness-profile.json").read_text(encoding="utf-8")))


def test_a_plugins_second_run_asks_its_reference_nothing_again_and_finds_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path / "cache"))
    code, cold, cold_profile = _run(tmp_path, "cold", "--jobs", "1")
    assert code == 1
    assert any(d["adapter"] == PLUGIN and d["status"] == "unexpected" for d in cold["divergences"])
    asked = cold_profile["adapter_calls_by_phase_s"]
    assert REFERENCE in asked["cases"] and REFERENCE in asked["generated"]

    code, warm, warm_profile = _run(tmp_path, "warm", "--jobs", "1")
    assert code == 1
    # the plugin's code is not tokconf's to hash: asked again; its reference's answers are read
    assert PLUGIN not in warm["run"]["cache"]["from_cache"]
    assert {"cases", "generated", "shrink"} <= set(warm["run"]["cache"]["from_cache"][REFERENCE])
    asked = warm_profile["adapter_calls_by_phase_s"]
    # (the generated phase still asks it outside its units: the pieces that steer inputs)
    assert REFERENCE not in asked["cases"] and PLUGIN in asked["cases"]

    # in two processes: what each one read is in the parent's report
    code, parallel, _ = _run(tmp_path, "parallel", "--jobs", "2")
    assert code == 1
    assert {"cases", "generated"} <= set(parallel["run"]["cache"]["from_cache"][REFERENCE])

    code, fresh, _ = _run(tmp_path, "fresh", "--no-cache")
    assert code == 1
    assert (verdicts(warm, details=True) == verdicts(parallel, details=True) == verdicts(fresh, details=True)
            == verdicts(cold, details=True))


def _tiktoken() -> InProcess:
    registry = default_registry()
    return InProcess(registry.get(REFERENCE), provider=registry.spec(REFERENCE).provider)


class _Counting:
    """An executor that counts the items it is asked."""

    def __init__(self, inner: InProcess) -> None:
        self.inner = inner
        self.info = inner.info
        self.asked: list[Any] = []

    def call(self, op: str, *args: Any) -> Outcome:
        self.asked.append((op, *args))
        return self.inner.call(op, *args)

    def encode_ids_many(self, texts: list[str], policy: Policy) -> list[Any]:
        self.asked += [("encode", t, policy) for t in texts]
        return self.inner.encode_ids_many(texts, policy)

    def api_surfaces(self, texts: list[str]) -> list[Outcome]:
        self.asked += [("api_surface", t) for t in texts]
        return self.inner.api_surfaces(texts)


def test_bulk_calls_ask_only_what_is_not_known_and_answer_as_the_adapter() -> None:
    special = Policy(allowed_special="all", disallowed_special=frozenset())
    texts = ["hello world", "<|endoftext|>", "  \n\n", "<|endoftext|>"]
    plain = _tiktoken()
    counting = _Counting(_tiktoken())
    remembering = RememberingExecutor(counting, {})
    assert not hasattr(remembering, "token_bytes_many")  # what the inner executor lacks, it lacks
    for policy in (ORDINARY, special):
        expected = plain.encode_ids_many(texts, policy)
        assert remembering.encode_ids_many(texts, policy) == expected
    # the literal is text under the ordinary policy and a token under "all": two answers
    assert remembering.new[("encode", "<|endoftext|>", special)].value == (100257,)
    assert remembering.new[("encode", "<|endoftext|>", ORDINARY)].value == (27, 91, 8862, 728, 428, 91, 29)
    assert remembering.missed == len(counting.asked) == 8  # a bulk call asks what the adapter's would

    again = RememberingExecutor(counting, {**remembering.new})
    counting.asked.clear()
    assert again.encode_ids_many([*texts, "new"], special) == plain.encode_ids_many([*texts, "new"], special)
    assert again.call("encode", "hello world", ORDINARY).value == (15339, 1917)
    assert counting.asked == [("encode", "new", special)] and again.missed == 1
    walks = again.api_surfaces(["a", "b"])
    assert [w.value for w in walks] == [plain.call("api_surface", t).value for t in ("a", "b")]
    assert counting.asked[1:] == [("api_surface", "a"), ("api_surface", "b")]


def test_a_timeout_is_never_kept() -> None:
    class Slow:
        info = None

        def call(self, op: str, *args: Any) -> Outcome:
            return Outcome.timeout(5.0)

    remembering = RememberingExecutor(Slow(), {})
    assert remembering.call("encode", "a", ORDINARY).kind == "timeout"
    assert remembering.new == {} and remembering.missed == 1


def test_the_answers_are_kept_under_the_hashable_adapters_fingerprints() -> None:
    from dataclasses import replace

    from harness.run.every_token import adapter_task_groups
    from harness.run.runner import Runner
    from harness.run.selection import select
    from harness.run.unit_cache import UnitCache

    selected = select(default_registry(), impls=["tiktoken:r50k_base", "minbpe:r50k_base"])
    cache = UnitCache(Path("/nonexistent"))

    def keys() -> tuple[Any, Any]:
        runner = Runner(selected)
        ((task,),) = [[t] for group in adapter_task_groups(runner) for n, t in group if n == "minbpe:r50k_base"]
        return cache.key(runner, "every-token", task), cache.answers_key(runner, "every-token", task)

    whole, answers = keys()
    assert whole is not None and answers is None  # kept whole: nothing kept apart
    row = selected.rows["minbpe:r50k_base"]
    selected.rows["minbpe:r50k_base"] = replace(row, provider="plugin mine.py:family")  # not hashable
    whole, answers = keys()
    assert whole is None and answers is not None and answers[0] == ("tiktoken:r50k_base",)
    undigestible = [(object(), ("minbpe:r50k_base",), "tiktoken:r50k_base", False)]  # a plugin's own object
    assert cache.answers_key(Runner(selected), "generated", undigestible) is None  # asked, not a dead run
    # the whole unit's key is refused before its inputs are digested: a drop-in's run
    # pickles each unit's inputs once, for its answers' key, not twice
    assert cache.key(Runner(selected), "generated", undigestible) is None
    reference = selected.rows["tiktoken:r50k_base"]
    selected.rows["tiktoken:r50k_base"] = replace(reference, version="0.0.0-other")
    assert keys()[1][1] != answers[1]  # another release of the reference: its answers are not these
    selected.rows["tiktoken:r50k_base"] = reference
    assert keys()[1] == answers
    selected.close()


def test_the_long_inputs_keep_the_references_answers_though_a_worker_asks_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The long inputs move the in-process reference into a worker (a per-call timeout) in
    the middle of their unit: its answers there are kept with the unit's."""
    monkeypatch.setenv("TOKCONF_CACHE_DIR", str(tmp_path / "cache"))
    flags = ["run", "--quiet", "--plugin", "tests.wrong_adapters:always_special", "--impl", PLUGIN, "--no-cases",
             "--no-every-token", "--no-everyday", "--max-examples", "1", "--long", "--long-sizes", "3000",
             "--profile-harness", "--jobs", "1"]
    runs = {}
    for name in ("cold", "warm"):
        out = tmp_path / name
        main([*flags, "--out", str(out)])
        runs[name] = (json.loads((out / "latest" / "parity.json").read_text(encoding="utf-8")),
                      json.loads((out / "latest" / "harness-profile.json").read_text(encoding="utf-8")))
    (cold, cold_profile), (warm, warm_profile) = runs["cold"], runs["warm"]
    rows = {a["name"]: a for a in cold["adapters"]}
    assert not rows[REFERENCE].get("isolated") and rows[PLUGIN]["isolated"].startswith("worker process")
    assert REFERENCE in cold_profile["adapter_calls_by_phase_s"]["long"]
    assert "long" in warm["run"]["cache"]["from_cache"][REFERENCE]
    assert REFERENCE not in warm_profile["adapter_calls_by_phase_s"]["long"]
    assert PLUGIN in warm_profile["adapter_calls_by_phase_s"]["long"]
    assert cold["run"]["limits"]["long_reach"] == warm["run"]["limits"]["long_reach"]
    assert verdicts(warm, details=True) == verdicts(cold, details=True)


def test_a_cases_units_answers_key_is_the_same_under_one_job_and_under_two() -> None:
    """One job holds every adapter's vocabulary findings when it keys a cases unit, most of
    them empty; a ``--jobs`` process forked before the vocabulary phase ended holds none.
    The key was made of both, so a drop-in's run at ``--jobs 1`` after one at ``--jobs 2``
    asked tiktoken every case and everyday document again (3.7 s of its calls, measured
    with ``--profile-harness``). A finding the unit judges is still in its key."""
    from dataclasses import replace

    from harness.cases.loader import load_cases
    from harness.cases.model import Case, DocumentedDivergence
    from harness.checks.base import Finding
    from harness.run.runner import Runner
    from harness.run.selection import select
    from harness.run.unit_cache import UnitCache

    selected = select(default_registry(), impls=["tiktoken:r50k_base", "minbpe:r50k_base"])
    row = selected.rows["minbpe:r50k_base"]
    selected.rows["minbpe:r50k_base"] = replace(row, provider="plugin mine.py:family")  # a drop-in: not hashable
    cache = UnitCache(Path("/nonexistent"))
    cases = [case for case in load_cases() if not case.long][:24]
    documented = Case(id="vocab#0", text="a", file="t.yaml", line=1, documented=(DocumentedDivergence(
        adapters=("minbpe:*",), check="vocab-consistency", reason="why", source="tests", kind="token-round-trip"),))

    def key(runner: Runner, chunk: list[Case]) -> str:
        found = cache.answers_key(runner, "cases", (chunk, runner.vocab_for(chunk)))
        assert found is not None and found[0] == ("tiktoken:r50k_base",)
        return found[1]

    forked = Runner(selected)  # a --jobs process: forked before the vocabulary phase ended
    one_job = Runner(selected)
    one_job.vocab_findings = {name: [] for name in selected.calls}
    assert key(one_job, cases) == key(forked, cases)
    assert key(one_job, [*cases, documented]) == key(forked, [*cases, documented])

    # a finding these cases judge keys them; one no case here judges does not
    finding = Finding(adapter="minbpe:r50k_base", check="vocab-consistency", kind="token-round-trip",
                      detail="d", text="a")
    one_job.vocab_findings["minbpe:r50k_base"] = [finding]
    assert one_job.vocab_for([*cases, documented]) == {"minbpe:r50k_base": [finding]}
    assert key(one_job, [*cases, documented]) != key(forked, [*cases, documented])
    assert key(one_job, cases) == key(forked, cases)
    selected.close()
