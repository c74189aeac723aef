"""The deterministic checks of pytest_agentloom.testing._output_checks: values, and the failure each one shows."""

from __future__ import annotations

import math
import re

import pytest

from pytest_agentloom import (
    Scripted,
    UsageError,
    assert_contains,
    assert_json_schema,
    assert_matches,
    assert_similar,
    run_workflow,
    similarity,
)
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.testing._output_checks import cosine_distance

FLOW = parse_workflow("""\
name: order
steps:
  - {id: draft, type: llm_call, model: m, prompt: "Draft", output: draft}
  - id: order
    type: llm_call
    depends_on: [draft]
    model: m
    prompt: "Order"
    response_schema: {type: json_object}
    output: order
""")


@pytest.fixture
def result():
    provider = Scripted({"draft": "Dear customer,\nyour order ships today.", "order": '{"id": 7, "items": ["a"]}'})
    return run_workflow(FLOW, provider=provider)


@pytest.mark.parametrize("a, b, expected", [
    ("kitten", "sitting", 1 - 3 / 7),
    ("same", "same", 1.0),
    ("", "", 1.0),
    ("abc", "", 0.0),
    ("a  b\n c", "a b c", 1.0),  # runs of whitespace count as one space
])
def test_similarity_is_one_minus_the_normalised_edit_distance(a: str, b: str, expected: float) -> None:
    assert math.isclose(similarity(a, b), expected)


def test_similarity_can_ignore_case() -> None:
    assert similarity("Hello", "hello") < 1.0 == similarity("Hello", "hello", ignore_case=True)


def test_assert_similar_shows_a_diff_of_the_reference_and_the_text(result) -> None:
    assert assert_similar(result, "Dear customer,\nyour order ships today!", step="draft", threshold=0.9) > 0.9
    with pytest.raises(AssertionError) as caught:
        assert_similar(result, "Dear customer,\nyour order is lost.", step="draft", threshold=0.9)
    message = str(caught.value)
    assert message.startswith("Text is 0.")
    assert "below the threshold 0.9" in message
    assert "text: step 'draft' of the run of 'order'" in message
    assert "-your order is lost." in message and "+your order ships today." in message


def test_a_result_is_read_by_its_final_output(result) -> None:
    assert_json_schema(result, {"type": "object", "required": ["id"]})  # the order step, a structured output
    assert_contains(result, "ships", step="draft")


def test_assert_contains_lists_the_missing_needles() -> None:
    assert_contains("Sorry, a Refund is coming", "refund", ignore_case=True)
    with pytest.raises(AssertionError, match=r"Text does not contain 'refund', 'today'\.") as caught:
        assert_contains("Sorry, a Refund is coming", "Sorry", "refund", "today")
    assert "  | Sorry, a Refund is coming" in str(caught.value)


def test_assert_matches_returns_the_match_and_shows_the_pattern() -> None:
    assert assert_matches("Ticket BUG-42 filed", r"BUG-(\d+)").group(1) == "42"
    with pytest.raises(AssertionError, match=re.escape(r"Text does not match the pattern 'BUG-\\d+'.")):
        assert_matches("nothing filed", r"BUG-\d+")
    with pytest.raises(UsageError, match="does not compile"):
        assert_matches("x", "(")


def test_assert_json_schema_lists_every_problem_with_its_path() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "integer"}, "items": {"type": "array",
              "items": {"type": "string"}}}, "required": ["id", "items"]}
    assert assert_json_schema('{"id": 1, "items": []}', schema) == {"id": 1, "items": []}
    with pytest.raises(AssertionError) as caught:
        assert_json_schema({"id": "x", "items": ["a", 2]}, schema)
    message = str(caught.value)
    assert "Output does not fit the JSON Schema: 2 problems." in message
    assert "$.id: 'x' is not of type 'integer'" in message and "$.items[1]: 2 is not of type 'string'" in message
    with pytest.raises(AssertionError, match="Output is not JSON"):
        assert_json_schema("not json", schema)
    with pytest.raises(UsageError, match="not valid JSON Schema"):
        assert_json_schema({}, {"type": "no-such-type"})


def test_bad_arguments_are_usage_errors(result) -> None:
    with pytest.raises(UsageError, match="threshold=2"):
        assert_similar("a", "a", threshold=2)
    with pytest.raises(UsageError, match="got no text to look for"):
        assert_contains("a")
    with pytest.raises(UsageError, match="did you mean 'draft'"):
        assert_contains(result, "x", step="drafts")
    with pytest.raises(UsageError, match="Cannot judge a int"):
        assert_contains(3, "x")


def test_cosine_distance() -> None:
    assert math.isclose(cosine_distance([1.0, 0.0], [2.0, 0.0]), 0.0)
    assert math.isclose(cosine_distance([1.0, 0.0], [0.0, 1.0]), 1.0)
    assert math.isclose(cosine_distance([1.0, 0.0], [-1.0, 0.0]), 2.0)
    with pytest.raises(UsageError, match="only zeros"):
        cosine_distance([0.0, 0.0], [1.0, 0.0])
    with pytest.raises(UsageError, match="2 and 3 numbers"):
        cosine_distance([1.0, 0.0], [1.0, 0.0, 0.0])


def _full_table(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, left in enumerate(a, 1):
        current = [i]
        for j, right in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != right)))
        previous = current
    return previous[-1]


def test_the_banded_edit_distance_agrees_with_the_full_table_up_to_its_limit() -> None:
    import random

    from pytest_agentloom.testing._output_checks import levenshtein

    rng = random.Random(15)
    for _ in range(400):
        a = "".join(rng.choice("abc") for _ in range(rng.randint(0, 10)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 10)))
        exact = _full_table(a, b)
        assert levenshtein(a, b) == exact, (a, b)
        for limit in range(6):
            assert levenshtein(a, b, limit) == min(exact, limit + 1), (a, b, limit)


def test_a_long_text_far_from_its_reference_fails_with_a_bound() -> None:
    text, reference = "x" * 2100, "y" * 2100  # past the exact-score size: the band stops after ~210 rows
    with pytest.raises(AssertionError, match=r"Text is below 0\.90 similar to the reference"):
        assert_similar(text, reference, threshold=0.9)
