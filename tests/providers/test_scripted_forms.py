"""Scripted() takes every reply form a scenario table takes, and refuses a bad one where it is built (issue 31)."""

from __future__ import annotations

import asyncio
import json

import pytest

from pytest_agentloom import Scripted, reply, tool_call
from pytest_agentloom._core.types import LLMRequest, Message
from pytest_agentloom.errors import UsageError


def _answer(provider: Scripted, step_id: str = "ask") -> object:
    request = LLMRequest(model="m", messages=[Message(role="user", content="hi")], step_id=step_id)
    return asyncio.run(provider.complete(request))


def test_the_data_forms_of_a_table_are_replies_here_too() -> None:
    provider = Scripted({"ask": [{"tool_call": "lookup", "arguments": {"order_id": 42}},
                                 {"text": "done", "input_tokens": 3, "cost": 0.25}, {"error": 429}]})
    first = _answer(provider)
    assert [(call.name, json.loads(call.arguments)) for call in first.tool_calls] == [("lookup", {"order_id": 42})]
    second = _answer(provider)
    assert (second.text, second.usage.input_tokens, second.cost) == ("done", 3, 0.25)
    with pytest.raises(Exception, match=r"429|rate"):
        _answer(provider)


def test_a_data_form_gives_what_its_helper_gives() -> None:
    made = Scripted({"a": {"tool_call": "lookup", "arguments": {"x": 1}}, "b": {"text": "t", "output_tokens": 2}})
    assert made._script == {"a": [tool_call("lookup", x=1)], "b": [reply("t", output_tokens=2)]}


@pytest.mark.parametrize(("replies", "words"), [
    ({"classify": {"tool_cal": "lookup"}}, ["step 'classify'", "unknown key 'tool_cal'", "did you mean 'tool_call'?"]),
    ({"classify": ["ok", {"text": "x", "input_token": 1}]},
     ["reply 2 for step 'classify'", "did you mean 'input_tokens'?"]),
    ({"classify": 42}, ["step 'classify'", "int is no reply form", "reply: 42"]),
    ({"classify": {"error": "429"}}, ["step 'classify'", "HTTP status number"]),
], ids=["mistyped form", "mistyped usage", "number", "error text"])
def test_a_bad_reply_is_a_usage_error_invalid_script_at_construction(replies: dict[str, object],
                                                                    words: list[str]) -> None:
    with pytest.raises(UsageError) as raised:
        Scripted(replies)  # type: ignore[arg-type]
    assert raised.value.code == "invalid_script"
    for word in words:
        assert word in str(raised.value)


def test_the_fixture_builds_it_the_same_way(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad="""
        def test_bad(agentloom):
            agentloom.scripted(classify={"tool_cal": "lookup"})
    """)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E*UsageError: Scripted(): the reply for step 'classify' is not a reply: unknown key 'tool_cal' in a "
        "text reply.",
    ])
    assert "script_exhausted" not in result.stdout.str()
