"""Outcomes: nothing escapes as a raw exception, categories are a closed set."""

from __future__ import annotations

import pytest

from harness.outcomes import Outcome, UnsupportedOperation, capture, default_category


class FakePanic(BaseException):
    """Stands for pyo3_runtime.PanicException: a BaseException, not an Exception."""


def boom(exc: BaseException):
    raise exc


def test_base_exception_becomes_an_internal_error_outcome() -> None:
    outcome = capture("encode", boom, FakePanic("rust panicked"))
    assert outcome.kind == "raised"
    assert outcome.category == "internal-error"
    assert outcome.native_type.endswith("FakePanic")
    assert outcome.message == "rust panicked"


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), SystemExit(3)])
def test_interrupts_pass_through(exc: BaseException) -> None:
    with pytest.raises(type(exc)):
        capture("encode", boom, exc)


@pytest.mark.parametrize(
    ("op", "exc", "category"),
    [
        ("decode", KeyError(5), "unknown-id"),
        ("encode", KeyError("word"), "unknown-token"),
        ("decode", UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), "invalid-utf8"),
        ("encode", UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates"), "unencodable-text"),
        ("encode", MemoryError(), "input-too-large"),
        ("encode", ValueError("Encountered text corresponding to disallowed special token"), "disallowed-special"),
        ("encode", UnsupportedOperation("no batch"), "unsupported"),
        ("encode", AssertionError(), "internal-error"),
    ],
)
def test_default_categories(op, exc, category) -> None:
    assert default_category(op, exc) == category


def test_adapter_classification_wins() -> None:
    outcome = capture("encode", boom, AssertionError(), classify=lambda op, e: "disallowed-special")
    assert outcome.category == "disallowed-special"
    assert outcome.native_type == "builtins.AssertionError"


def test_unknown_category_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown outcome category 'oops'"):
        Outcome.raised("oops", "builtins.ValueError", "x")


def test_json_round_trip() -> None:
    for outcome in [
        Outcome.ok([1, 2]),
        Outcome.ok(b"\xe4\xbd"),
        Outcome.ok("text"),
        Outcome.raised("unknown-id", "builtins.KeyError", "99"),
        Outcome.timeout(5),
        Outcome.crashed("SIGSEGV", "the worker died during encode"),
        Outcome.crashed("out-of-memory"),
    ]:
        assert Outcome.from_json(outcome.to_json()) == outcome


def test_same_as_compares_values_or_categories() -> None:
    assert Outcome.ok([1]).same_as(Outcome.ok((1,)))
    a = Outcome.raised("unknown-id", "builtins.KeyError", "x")
    b = Outcome.raised("unknown-id", "builtins.ValueError", "y")
    assert a.same_as(b) and not a.same_as(Outcome.ok([1]))


def test_a_subclass_answer_is_a_plain_value_in_bulk_and_an_outcome_per_call() -> None:
    # values_each keeps a success as its value alone and callers tell it from an Outcome by
    # its exact type: a tuple or bytes subclass from an adapter came back raw, neither
    from harness.calls import InProcess
    from harness.checks.base import ORDINARY
    from harness.outcomes import values_each

    class Ids(tuple):  # type: ignore[type-arg]
        pass

    class Piece(bytes):
        pass

    class Odd:
        def encode(self, text, **policy):  # type: ignore[no-untyped-def]
            return Ids((1, 2))

        def token_bytes(self, token_id: int) -> bytes:
            return Piece(b"ab")

        def classify_error(self, op, exc):  # type: ignore[no-untyped-def]
            return None

    assert [type(v) for v in values_each(Odd().encode, ["a"])] == [tuple]
    assert [type(v) for v in values_each(Odd().token_bytes, [0], op="token_bytes")] == [bytes]
    executor = object.__new__(InProcess)
    executor._adapter = Odd()
    assert executor.encode_many(["a"], ORDINARY) == [Outcome.ok((1, 2))]
    assert executor.token_bytes_many([0]) == [Outcome.ok(b"ab")]
