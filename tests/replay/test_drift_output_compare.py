"""Output comparison methods of the drift check, checked against hand-computed values."""

from __future__ import annotations

import math
import re

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


def test_embedding_and_judge_methods_are_spelled_with_their_threshold_model_and_rubric() -> None:
    methods = parse_methods(["embedding:0.15", "draft=embedding(text-embedding-3-large):0.3",
                             "reply=judge(0.8, gpt-4.1):Polite, short, and names the next step."], "ini")
    assert methods.default == OutputMethod("embedding", 0.15, model="text-embedding-3-small")
    assert methods.for_step("draft") == OutputMethod("embedding", 0.3, model="text-embedding-3-large")
    assert methods.for_step("reply") == OutputMethod("judge", 0.8, model="gpt-4.1",
                                                     rubric="Polite, short, and names the next step.")
    assert parse_methods(methods.to_wire(), "wire") == methods  # what an xdist worker sends reads back the same
    assert parse_methods("judge:Says thanks.", "flag").default == OutputMethod("judge", 0.7, model="gpt-4o-mini",
                                                                               rubric="Says thanks.")


@pytest.mark.parametrize(("written", "message"), [
    ("embeding:0.2", "unknown output comparison 'embeding:0.2'"),
    ("embedding:2.5", "the embedding distance (the largest cosine distance that is benign) must be a number from 0 "
                      "to 2 (got '2.5')"),
    ("embedding():0.1", "embedding() names no model"),
    ("judge", "judge needs a rubric after its colon"),
    ("judge(1.2):Polite.", "the judge threshold must be a number from 0 to 1 (got '1.2')"),
    ("jduge:Polite.", "did you mean 'judge'?"),
])
def test_bad_embedding_and_judge_methods_name_the_problem(written: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_methods(written, "--agentloom-drift-outputs")


_JUDGE = OutputMethod("judge", 0.7, model="m", rubric="r")


@pytest.mark.parametrize(("method", "measured", "benign", "detail"), [
    (OutputMethod("embedding", 0.2, model="e"), {"method": "embedding(e):0.2", "distance": 0.2}, True,
     "close by embedding (distance 0.200 <= 0.2)"),
    (OutputMethod("embedding", 0.2, model="e"), {"method": "embedding(e):0.2", "distance": 0.25}, False,
     "'a' -> 'b' (embedding distance 0.250 > 0.2)"),
    (OutputMethod("embedding", 0.2, model="e"), None, False,
     "'a' -> 'b' (embedding: not measured, no model was asked)"),
    (OutputMethod("embedding", 0.2, model="e"), {"method": "embedding(e):0.5", "distance": 0.0}, False,
     "'a' -> 'b' (embedding: not measured, no model was asked)"),  # measured for another method: not this one
    (_JUDGE, {"method": str(_JUDGE), "old": {"score": 0.4, "passed": False, "reason": "x"},
              "new": {"score": 0.7, "passed": True, "reason": "y"}}, True,
     "judge 0.40 -> 0.70 >= 0.7: passes now, failed before (reason now: 'y'; before: 'x')"),
    (_JUDGE, {"method": str(_JUDGE), "old": {"score": 0.2, "passed": False, "reason": "x"},
              "new": {"score": 0.3, "passed": False, "reason": "y"}}, True,
     "judged alike (judge 0.20 -> 0.30, both fail at 0.7; reason now: 'y')"),
    (_JUDGE, {"method": str(_JUDGE), "error": "judge down"}, False, "'a' -> 'b' (judge: not measured: judge down)"),
    # the replayed verdict read from its verdict snapshot, or asked with a note on the snapshot
    (_JUDGE, {"method": str(_JUDGE), "old": {"score": 0.9, "passed": True, "reason": "x", "source": "snapshot"},
              "new": {"score": 0.68, "passed": False, "reason": "y"}}, False,
     "'a' -> 'b' (judge 0.90 (snapshot) -> 0.68 < 0.7: fails, passed before; reason now: 'y'; before: 'x')"),
    (_JUDGE, {"method": str(_JUDGE), "old": {"score": 0.9, "passed": True, "reason": "x", "note": "asked; n"},
              "new": {"score": 0.8, "passed": True, "reason": "y"}}, True,
     "judged alike (judge 0.90 (asked; n) -> 0.80, both pass at 0.7; reason now: 'y')"),
])
def test_methods_that_ask_a_model_decide_by_what_it_answered(method: OutputMethod, measured: dict | None,
                                                              benign: bool, detail: str) -> None:
    verdict = compare_output(method, "a", "b", measured)
    assert (verdict.same, verdict.benign, verdict.detail) == (False, benign, detail)
