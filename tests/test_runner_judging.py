"""How the runner judges: documented, stale, unexpected, explained; domains; references."""

from __future__ import annotations

import pytest

from harness.cases.model import CHECKS, Case, DocumentedDivergence, Policy
from harness.registry import AdapterSpec, Registry
from harness.run.result import RunResult
from harness.run.runner import GenerationOptions, Runner
from harness.run.selection import SelectionError, parse_references, select
from tests.wrong_adapters import ToyClosed, toy


def registry(*adapters, specs=()) -> Registry:  # type: ignore[no-untyped-def]
    reg = Registry()
    for adapter in adapters:
        reg.add(adapter, provider="test")
    for spec in specs:
        reg.add(spec, provider="test")
    return reg


def case(case_id: str, text: str, *documented: DocumentedDivergence, **kwargs) -> Case:  # type: ignore[no-untyped-def]
    return Case(id=case_id, text=text, file="t.yaml", line=1, documented=documented, **kwargs)


def doc(adapter: str, check: str) -> DocumentedDivergence:
    return DocumentedDivergence((adapter,), check, f"{adapter} differs in {check}", "seeds/000 §x")


def run(reg: Registry, cases: list[Case], *, generated: bool = False, **select_kwargs) -> RunResult:  # type: ignore[no-untyped-def]
    runner = Runner(select(reg, **select_kwargs))
    runner.run_vocab()
    runner.run_cases(cases)
    if generated:
        runner.run_generated(GenerationOptions(profile="ci", max_examples=60))
    return runner.finish()


def records(result: RunResult, **where) -> list:  # type: ignore[type-arg]
    return [d for d in result.divergences if all(getattr(d, k) == v for k, v in where.items())]


def test_documented_reproduced_passes_and_keeps_the_case_text() -> None:
    result = run(registry(toy(), toy("crlf")), [case("crlf", "a\r\nb", doc("toy:crlf", "id-parity"))])
    (record,) = records(result, check="id-parity")
    assert (record.status, record.origin, record.case, record.text) == ("documented", "case", "crlf", "a\r\nb")
    assert record.reason == "toy:crlf differs in id-parity" and record.doc_source == "seeds/000 §x"
    assert result.matrix["toy:crlf"]["id-parity"].status == "documented"
    # round-trip is not documented on this case: unexpected, and shrunk
    (lossy,) = records(result, check="round-trip")
    assert (lossy.status, lossy.text) == ("unexpected", "\r\n")
    assert result.failed


def test_documented_but_not_reproduced_is_stale() -> None:
    result = run(registry(toy(), toy("crlf")), [case("plain", "abc", doc("toy:crlf", "id-parity"))])
    (record,) = records(result, status="stale")
    assert (record.adapter, record.check, record.kind, record.case) == ("toy:crlf", "id-parity", "not-reproduced", "plain")
    assert "did not reproduce: the check agreed" in record.detail
    assert result.matrix["toy:crlf"]["id-parity"].status == "stale"
    assert result.failed


def test_a_documented_kind_explains_later_inputs_of_that_kind_only() -> None:
    cases = [
        case("documented", "\r\n", doc("toy:crlf", "id-parity"), doc("toy:crlf", "round-trip")),
        case("same-kind", "x\r\n\r\ny"),
    ]
    result = run(registry(toy(), toy("crlf")), cases, generated=True)
    assert not result.failed, [(d.check, d.kind, d.text) for d in result.divergences if d.status != "documented"]
    assert {d.case for d in result.divergences} == {"documented"}
    assert result.matrix["toy:crlf"]["id-parity"].explained > 1


def test_a_different_kind_is_still_unexpected() -> None:
    cases = [case("documented", "\r\n", doc("toy:crlf", "id-parity"))]
    result = run(registry(toy(), toy("strict-surrogates", name="toy:crlf")), cases)
    stale = records(result, status="stale")
    assert [(d.check, d.case) for d in stale] == [("id-parity", "documented")]


def test_inputs_outside_a_closed_vocabulary_are_not_counted() -> None:
    closed = ToyClosed()
    result = run(registry(closed), [case("outside", "abc"), case("inside", "ab b")])
    assert result.divergences == []
    assert result.matrix["toy:closed"]["round-trip"].inputs == 1
    documented = run(registry(ToyClosed()), [case("outside", "abc", doc("toy:closed", "round-trip"))])
    (record,) = documented.divergences
    assert (record.status, record.kind) == ("documented", "encode:raised:unknown-token")


def test_generated_inputs_for_a_closed_vocabulary_come_from_its_alphabet() -> None:
    result = run(registry(ToyClosed()), [], generated=True)
    assert result.matrix["toy:closed"]["round-trip"].inputs > 10
    assert result.divergences == []


def test_unavailable_adapters_become_unavailable_cells_and_do_not_stop_the_run() -> None:
    def explode():  # type: ignore[no-untyped-def]
        raise RuntimeError("vocabulary corrupt")

    specs = [
        AdapterSpec("toy:missing", "toy-bytes", toy, check=lambda: "needs toy-vocab: `pip install toy-vocab`"),
        AdapterSpec("toy:broken", "toy-bytes", explode),
    ]
    result = run(registry(toy(), specs=specs), [case("c", "ab")])
    rows = {row.name: row for row in result.adapters}
    assert rows["toy:missing"].reason == "needs toy-vocab: `pip install toy-vocab`"
    assert rows["toy:broken"].reason == "RuntimeError: vocabulary corrupt"
    assert {cell.status for cell in result.matrix["toy:broken"].values()} == {"unavailable"}
    assert result.summary()["unavailable"] == 2 * len(CHECKS)  # two rows, every check
    assert not result.failed


def test_an_adapter_that_panics_is_an_outcome_not_a_crash() -> None:
    class Panic(BaseException):
        pass

    class Panicky(type(toy())):  # type: ignore[misc]
        def encode(self, text, **kwargs):  # type: ignore[no-untyped-def]
            if "!" in text:
                raise Panic("rust panicked")
            return super().encode(text, **kwargs)

    result = run(registry(toy(), Panicky(name="toy:panicky")), [case("bang", "hi!")])
    (record,) = records(result, check="error-category")
    assert record.kind == "raised:internal-error|ok" and record.text == "!"
    assert record.evidence.outcomes["toy:panicky"].native_type.endswith("Panic")


def test_reference_choice() -> None:
    reg = registry(toy(name="toy:a-first"), toy("crlf", name="toy:b-second"))
    assert select(reg).references == {"toy-bytes": "toy:a-first"}
    assert select(reg, case_references=["toy:b-second"]).references == {"toy-bytes": "toy:b-second"}
    chosen = select(reg, references=parse_references(["toy-bytes=toy:b-second"]), case_references=["toy:a-first"])
    assert chosen.references == {"toy-bytes": "toy:b-second"}
    with pytest.raises(SelectionError, match="claims encoding 'toy-bytes', not 'other'"):
        select(registry(toy(), ToyClosed()), references={"other": "toy:bytes"})
    with pytest.raises(SelectionError, match="ENCODING=ADAPTER"):
        parse_references(["cl100k_base"])
    with pytest.raises(SelectionError, match="no adapter named 'toy:nope'"):
        select(reg, impls=["toy:nope"])


def test_a_cases_own_reference() -> None:
    reg = registry(toy("crlf", name="toy:a-wrong"), toy(name="toy:b-right"))
    own = case("own", "\r\n", doc("toy:a-wrong", "id-parity"), reference="toy:b-right")
    result = run(reg, [own])
    (record,) = records(result, check="id-parity")
    assert (record.adapter, record.reference, record.status) == ("toy:a-wrong", "toy:b-right", "documented")


def test_policy_of_the_case_is_used() -> None:
    allowed = case("allowed", "<|x|>", doc("toy:eager", "expected"), policy=Policy(allowed_special="all",
                   disallowed_special=frozenset()), expect_ids={"toy-bytes": (1,)})
    result = run(registry(toy(), toy("always-special", name="toy:eager")), [allowed])
    assert records(result, adapter="toy:eager", check="expected")[0].status == "documented"
    assert records(result, adapter="toy:bytes", check="expected")[0].status == "unexpected"


def test_generated_runs_are_deterministic_in_the_seed() -> None:
    def texts() -> list[tuple[str, str, str]]:
        result = run(registry(toy(), toy("crlf"), toy("rstrip")), [], generated=True)
        return [(d.adapter, d.check, d.text) for d in result.divergences]

    first = texts()
    assert first == texts()
    assert ("toy:crlf", "id-parity", "\r\n") in first and ("toy:rstrip", "id-parity", " ") in first


def test_the_share_of_the_pool_is_declared_never_timed() -> None:
    """A slow adapter gets the whole pool unless it declares less (issue 20: timed
    budgets made --jobs 2 check fewer inputs than --jobs 1 on a loaded machine)."""
    import dataclasses
    import time

    from harness.calls import Calls, InProcess
    from harness.generate.budget import pool_budget
    from harness.generate.pools import open_pool

    class Slow(type(toy())):  # type: ignore[misc]
        def encode(self, text, **kwargs):  # type: ignore[no-untyped-def]
            time.sleep(0.05)  # far over any time budget: must not matter
            return super().encode(text, **kwargs)

    pool = open_pool(literals=[], patterns=[], profile="ci", max_examples=40, seed=0)
    slow = Slow(name="toy:slow")
    assert pool_budget(Calls(InProcess(slow)), pool, max_examples=40) == len(pool.texts)
    slow.capabilities = dataclasses.replace(slow.capabilities, generated_halvings=2)
    declared = pool_budget(Calls(InProcess(slow)), pool, max_examples=40)
    assert declared < pool.short_count and declared == pool_budget(Calls(InProcess(slow)), pool, max_examples=40)


def test_a_malformed_return_value_is_an_internal_error_outcome() -> None:
    class Sloppy(type(toy())):  # type: ignore[misc]
        def encode(self, text, **kwargs):  # type: ignore[no-untyped-def]
            return None if "?" in text else super().encode(text, **kwargs)

    result = run(registry(toy(), Sloppy(name="toy:sloppy")), [case("q", "what?")])
    (record,) = records(result, check="error-category")
    assert record.kind == "raised:internal-error|ok" and record.text == "?"
    outcome = record.evidence.outcomes["toy:sloppy"]
    assert (outcome.native_type, outcome.message) == ("tokconf.BadReturnValue",
                                                      "encode returned NoneType, expected a list of int")
