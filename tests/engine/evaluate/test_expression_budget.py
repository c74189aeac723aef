"""Router conditions spend a counted operation budget: whatever they compare, they stop with a named error."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom.engine._evaluate.budget import OPERATION_BUDGET, Budget
from pytest_agentloom.engine._evaluate.expressions import compile_expression
from pytest_agentloom.engine._format.loader import load_workflow
from pytest_agentloom.errors import ErrorCode, EvaluationError, ExpressionBudgetError

SQUARE = "[[0]*99999]*99999"  # 100,000 items in memory, 10**10 as a tree

HOSTILE = [
    ("equal", f"{SQUARE} == {SQUARE}"),
    ("deeper", f"[{SQUARE}]*99999 == [{SQUARE}]*99999"),
    ("not-equal", f"{SQUARE} != {SQUARE}"),
    ("ordered", f"{SQUARE} < {SQUARE}"),
    ("chained", f"1 < 2 < 3 and {SQUARE} >= {SQUARE}"),
    ("in", f"[0]*99999 in {SQUARE}"),
    ("not-in", f"[1]*99999 not in {SQUARE}"),
    ("min", f"min({SQUARE}) == 0"),
    ("max-of-two", f"max({SQUARE}, {SQUARE})"),
    ("set-hash", "{((0,)*99999,)*99999}"),
    ("dict-key-hash", "{((0,)*99999,)*99999: 1}"),
    ("subscript-hash", "state[((0,)*99999,)*99999]"),
    ("many-scans", " or ".join(["'z' in x"] * 80)),
]


@pytest.mark.parametrize("text", [case[1] for case in HOSTILE], ids=[case[0] for case in HOSTILE])
def test_a_condition_that_would_work_too_long_stops_with_a_budget_error(text: str) -> None:
    with pytest.raises(ExpressionBudgetError) as info:
        compile_expression(text).evaluate({"x": "y" * 2_500_000})
    assert isinstance(info.value, EvaluationError)  # an ``except EvaluationError`` still catches it
    assert info.value.code == ErrorCode.EXPRESSION_BUDGET == "expression_budget"
    assert f"more than {OPERATION_BUDGET:,} operations" in str(info.value)
    assert info.value.budget == OPERATION_BUDGET


def test_state_values_are_charged_as_well_as_the_values_an_expression_builds() -> None:
    shared: list[Any] = [[0] * 1000] * 1000
    with pytest.raises(ExpressionBudgetError):
        compile_expression("a == b").evaluate({"a": shared, "b": [list(row) for row in shared[:1]] * 1000})


def test_a_value_that_holds_itself_or_nests_too_deeply_is_an_evaluation_error_not_a_crash() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    other: list[Any] = [1]
    other.append(other)
    with pytest.raises(EvaluationError, match="nested too deeply to compare"):
        compile_expression("a == b").evaluate({"a": loop, "b": other})
    deep_a: list[Any] = []
    deep_b: list[Any] = []
    for depth in range(1, 100_001):
        deep_a, deep_b = [deep_a], [deep_b]
        if depth == 10_000:
            with pytest.raises(EvaluationError, match="nested too deeply to compare"):
                compile_expression("a == b").evaluate({"a": deep_a, "b": deep_b})
    with pytest.raises(ExpressionBudgetError):  # 100,000 levels: measuring them passes the budget first
        compile_expression("a == b").evaluate({"a": deep_a, "b": deep_b})


def test_the_size_of_a_value_counts_a_shared_list_each_time_it_is_held() -> None:
    budget = Budget("x")
    assert budget.size([[0] * 100] * 1000) == 1 + 1000 * 101
    assert budget.size({"a": [1, 2], "b": "x" * 126}) == 1 + 2 + 1 + 2 + 3  # keys, values; 64 characters an operation
    assert budget.size(7) == 1 and budget.size("abc") == 1
    assert OPERATION_BUDGET - budget.left == (8 + 1000) + (8 + 100) + (8 + 4) + (8 + 2)  # 8 a container, 1 an item


def test_the_budget_is_counted_so_the_same_condition_always_gives_the_same_answer() -> None:
    condition = compile_expression("a == b")
    inside = {"a": [[0] * 100] * 3000, "b": [[0] * 100] * 3000}  # 303,001 items a side: inside
    over = {"a": [[0] * 1000] * 1000, "b": [[0] * 1000] * 1000}  # 1,001,001 items a side: over
    for _ in range(3):
        assert condition.evaluate(inside) is True
        with pytest.raises(ExpressionBudgetError):
            condition.evaluate(over)


ORDINARY = [
    ("steps.classify.output.strip().lower() == 'bug'", True),
    ("label in ['bug', 'crash'] or state.urgent", True),
    ("len(tags) > 1 and 'ui' in tags", True),
    ("max(scores) >= 9 and min(scores) > 0", True),
    ("'error' in log", True),
    ("log.count('error') == 2500 and log.split('\\n')[0] == 'ok'", True),
    ("big == big_copy", True),
    ("{'a': 1} == {'a': 1} and (1, 2) in {(1, 2): 0}", True),
]


@pytest.mark.parametrize(("text", "expected"), ORDINARY, ids=[case[0][:30] for case in ORDINARY])
def test_ordinary_conditions_even_on_large_values_stay_inside_the_budget(text: str, expected: bool) -> None:
    big = [{"id": index, "tags": ["a", "b"]} for index in range(10_000)]
    state = {"steps": {"classify": {"output": " Bug "}}, "label": "bug", "urgent": False, "tags": ["ui", "x"],
             "scores": list(range(1, 10)), "log": "ok\n" + "an error line\n" * 2500 + "x" * 20_000_000, "big": big,
             "big_copy": [dict(item) for item in big]}
    assert bool(compile_expression(text).evaluate(state)) is expected


def test_a_router_over_budget_fails_its_step_naming_file_step_field_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "route.yaml"
    path.write_text(textwrap.dedent(f"""
        name: hostile
        steps:
          - {{id: first, type: tool, tool_name: echo}}
          - id: route
            type: router
            depends_on: [first]
            conditions:
              - {{expression: "x == 1", target: done}}
              - {{expression: "{SQUARE} == {SQUARE}", target: done}}
            default: done
          - {{id: done, type: tool, tool_name: echo}}
        """))
    result = run_workflow(load_workflow(path), tools={"echo": lambda: 1}, clock=VirtualClock())

    step = result.steps["route"]
    assert step.status == "failed" and step.error_code == "expression_budget"
    assert step.error is not None
    assert step.error.startswith("router 'route' condition 1 (")
    assert f"  file: {path}" in step.error
    assert "  step: route" in step.error
    assert "  field: steps[1].conditions[1].expression" in step.error
    assert "How to fix: compare something smaller" in step.error


@pytest.mark.parametrize("text", ["x == 'bug'", "x != 1", "x in ['bug', 'crash']", "x is None", "'bug' == x == 'bug'"])
def test_a_comparison_with_a_short_literal_is_settled_at_once_whatever_the_state_holds(text: str) -> None:
    square: list[Any] = [[0] * 99_999] * 99_999  # 10**10 items as a tree: any walk of it would pass the budget
    assert compile_expression(text).evaluate({"x": square}) in (True, False)


def test_ordinary_comparisons_give_python_s_answers_with_or_without_charges() -> None:
    state = {"a": [1, [2, 3]], "b": [1, [2, 3]], "t": "x" * 100, "n": 3}
    for text, expected in [("a == b", True), ("a < b", False), ("a in [a, b]", True), ("t == 'x' * 100", True),
                           ("n in [1, 2, 3]", True), ("'x' in t", True), ("n >= 3 > 1", True), ("t < 'y'", True)]:
        assert compile_expression(text).evaluate(state) is expected, text
