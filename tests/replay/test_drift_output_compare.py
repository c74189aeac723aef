"""Output comparison methods of the drift check, checked against hand-computed values."""

from __future__ import annotations

import math

import pytest

from pytest_agentloom.testing._live.drift_diff import compare_test
from pytest_agentloom.testing._live.output_compare import compare_output, normalized_text, word_similarity
from pytest_agentloom.testing._settings.drift_outputs import OutputMethod, OutputMethods, parse_methods


def test_similarity_is_the_cosine_of_word_counts() -> None:
    assert word_similarity("A printer fire.", "The printer fire!") == round(2 / 3, 6)  # 2 shared of 3 and 3
    assert word_similarity("b a a", "a b") == round(3 / math.sqrt(5 * 2), 6)  # (2*1 + 1*1) / (sqrt(5) * sqrt(2))
    assert word_similarity("Open Settings, then Export.", "Completely different answer text.") == 0.0
    assert word_similarity("Zwei Wörter", "zwei WÖRTER") == 1.0
    assert word_similarity("", "") == 1.0 and word_similarity("", "x") == 0.0


def test_normalized_text_sets_case_punctuation_and_space_aside() -> None:
    assert normalized_text("  Open  Settings,\nthen EXPORT. ") == "open settings then export"
    assert normalized_text("ﬁle") == "file"  # NFKC: the ligature is two letters


@pytest.mark.parametrize(("method", "new", "same", "benign"), [
    (OutputMethod("exact"), "Open settings, then export.", False, False),
    (OutputMethod("normalized"), "open settings then export", False, True),
    (OutputMethod("normalized"), "Open settings, then quit.", False, False),
    (OutputMethod("similarity", 0.7), "Open Settings, then Export now.", False, True),  # 4/sqrt(20) = 0.89
    (OutputMethod("similarity", 0.95), "Open Settings, then Export now.", False, False),
    (OutputMethod("ignore"), "Something else", False, True),
    (OutputMethod("exact"), "Open Settings, then Export.", True, True),
])
def test_each_method_decides(method: OutputMethod, new: str, same: bool, benign: bool) -> None:
    verdict = compare_output(method, "Open Settings, then Export.", new)
    assert (verdict.same, verdict.benign) == (same, benign), verdict.detail


@pytest.mark.parametrize("written", [
    "normalized\nreply=exact", ["normalized", "reply=exact"], "normalized, reply=exact",
    {"*": "normalized", "reply": "exact"},
])
def test_methods_are_written_as_lines_or_a_mapping(written: object) -> None:
    methods = parse_methods(written, "ini agentloom_drift_outputs")
    assert methods.for_step("reply") == OutputMethod("exact")
    assert methods.for_step("classify") == OutputMethod("normalized")
    assert methods.to_wire() == {"*": "normalized", "reply": "exact"}
    assert parse_methods(methods.to_wire(), "wire") == methods


def test_the_default_is_similarity_0_6_and_bad_methods_name_the_source_and_the_fix() -> None:
    assert parse_methods(None, "x").for_step("any") == OutputMethod("similarity", 0.6)
    with pytest.raises(ValueError, match=r"(?s)ini agentloom_drift_outputs \(reply=exct\): unknown output comparison "
                                         r"'exct'.*did you mean 'exact'\?"):
        parse_methods(["reply=exct"], "ini agentloom_drift_outputs")
    with pytest.raises(ValueError, match="threshold must be a number from 0 to 1"):
        parse_methods("similarity:high", "--agentloom-drift-outputs")
    with pytest.raises(ValueError, match="must be a method"):
        parse_methods(3, "@pytest.mark.agentloom(drift_outputs=...)")


def _side(outputs: dict[str, str], route: list[str] | None = None) -> dict[str, object]:
    run = {"status": "success", "reason": "completed", "steps": dict.fromkeys(outputs, "success"),
           "route": route or [], "tools": [], "stops": {}, "schema": {}, "errors": {}, "outputs": outputs,
           "tokens": {"input": 1, "output": 1, "reasoning": 0}, "cost_usd": 0.0}
    return {"outcome": "passed", "runs": [run]}


def test_verdicts_from_facts() -> None:
    old = _side({"answer": "Open Settings, then Export."})
    assert compare_test("t", old, _side({"answer": "Open Settings, then Export."})).verdict == "identical"
    benign = compare_test("t", old, _side({"answer": "open settings then export"}))
    assert (benign.verdict, benign.changes) == ("benign", ["output answer: similar (1.00 >= 0.6)"])
    moved = compare_test("t", old, _side({"answer": "Open Settings, then Export."}, route=["r -> x"]))
    assert (moved.verdict, moved.reasons()) == ("regression", "route")
    exact = compare_test("t", old, _side({"answer": "open settings then export"}),
                         OutputMethods(per_step=(("answer", OutputMethod("exact")),)))
    assert (exact.verdict, exact.reasons()) == ("regression", "output answer")
    wired = _side({"answer": "open settings then export"})
    wired["output_methods"] = {"*": "exact"}  # what the live side carries from a worker
    assert compare_test("t", old, wired).verdict == "regression"
