"""The small JSON-Schema validator used to check an agent's proposed arguments."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agentloom.tools import validate_against

SCHEMA = {
    "type": "object",
    "properties": {
        "to": {"type": "string", "minLength": 3},
        "priority": {"enum": ["low", "high"]},
        "count": {"type": "integer", "minimum": 1, "maximum": 5},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    },
    "required": ["to"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("value", "problems"),
    [
        ({"to": "a@b"}, []),
        ({"to": "a@b", "priority": "high", "count": 5, "tags": ["x", "y"]}, []),
        ({}, ["$: missing required property 'to'"]),
        ({"to": 7}, ["$.to: expected string, got integer"]),
        ({"to": "ab"}, ["$.to: has 2 characters, fewer than 3"]),
        ({"to": "a@b", "priority": "urgent"}, ["$.priority: 'urgent' is not one of ['low', 'high']"]),
        ({"to": "a@b", "count": 0}, ["$.count: 0 is less than the minimum 1"]),
        ({"to": "a@b", "count": 9}, ["$.count: 9 is more than the maximum 5"]),
        ({"to": "a@b", "count": True}, ["$.count: expected integer, got boolean"]),
        ({"to": "a@b", "tags": ["x", 1]}, ["$.tags[1]: expected string, got integer"]),
        ({"to": "a@b", "tags": ["x", "y", "z"]}, ["$.tags: has 3 items, more than 2"]),
        ({"to": "a@b", "cc": "boss"}, ["$: unexpected property 'cc'"]),
        ([1], ["$: expected object, got array"]),
    ],
)
def test_validate_against(value: Any, problems: list[str]) -> None:
    assert validate_against(SCHEMA, value) == problems


def test_number_accepts_integers_and_nullable_types() -> None:
    assert validate_against({"type": "number"}, 3) == []
    assert validate_against({"type": ["string", "null"]}, None) == []
    assert validate_against({"anyOf": [{"type": "integer"}, {"type": "string"}]}, 1.5) == [
        "$: matches none of the allowed shapes"]
