"""Scripted models that go wrong on purpose, the classic ways an agent's model does.

Each helper returns a callable that answers every request it gets (give it as a
step's only reply), or one request when it sits in a list: a model that never
finishes, repeats itself, calls a tool it was never given, writes arguments that
aren't JSON, claims it is done without doing anything, or obeys an instruction
planted in a tool's result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from .._core.types import LLMRequest, ToolCall
from ._replies import Reply, ReplySpec, is_answer

__all__ = ["calls_unknown_tool", "claims_done", "invalid_call", "never_finishes", "obeys_injection", "repeats"]


def _call_for(request: LLMRequest, name: str, arguments: str) -> ReplySpec:
    call = ToolCall(id=f"call_{request.turn}", name=name, arguments=arguments)
    return ReplySpec(tool_calls=(call,), finish_reason="tool_calls")


def never_finishes(name: str, /, *, vary: str = "page", **arguments: Any) -> Callable[[LLMRequest], ReplySpec]:
    """A model that keeps calling ``name``, each time with ``vary`` set to the next number: it never answers."""
    def answer(request: LLMRequest) -> ReplySpec:
        return _call_for(request, name, json.dumps({**arguments, vary: request.turn}, sort_keys=True))

    return answer


def repeats(name: str, /, **arguments: Any) -> Callable[[LLMRequest], ReplySpec]:
    """A model that asks for the same call with the same arguments every time."""
    text = json.dumps(arguments, sort_keys=True)
    return lambda request: _call_for(request, name, text)


def calls_unknown_tool(name: str = "delete_all_records", /, **arguments: Any) -> Callable[[LLMRequest], ReplySpec]:
    """A model that calls a tool it was never given (hallucinated, or outside its allowlist)."""
    return repeats(name, **arguments)


def invalid_call(name: str, /, raw_arguments: str = '{"ticket_id": T-1') -> Callable[[LLMRequest], ReplySpec]:
    """A model whose call is not a valid call: its arguments aren't JSON."""
    return lambda request: _call_for(request, name, raw_arguments)


def claims_done(
    text: str = "Done: the ticket is triaged and the customer was emailed.",
) -> Callable[[LLMRequest], ReplySpec]:
    """A model that claims success at once, without calling any tool, and says so again when asked again."""
    claim = ReplySpec(text=text)
    return lambda request: claim


def obeys_injection(
    plan: Sequence[Reply] = (), *, final: str = "Done.", pattern: str = r"call (\w+) with (\{.*?\})",
) -> Callable[[LLMRequest], Any]:
    """A model that does what the last tool result tells it to, when it says ``call <tool> with {json}``.

    Otherwise it follows ``plan`` (one reply per model call so far), then answers ``final``.
    """
    instruction = re.compile(pattern, re.IGNORECASE | re.DOTALL)

    def texts(content: str) -> list[str]:  # the result itself, and the strings inside it when it is JSON
        found: list[str] = []
        try:
            stack = [json.loads(content)]
        except ValueError:
            return [content]
        while stack:
            value = stack.pop()
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, dict):
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
        return [*found, content]

    def answer(request: LLMRequest) -> Any:
        last = request.messages[-1] if request.messages else None
        if last is not None and last.role == "tool" and last.content:
            for text in texts(last.content):
                if match := instruction.search(text):
                    return _call_for(request, match.group(1), match.group(2))
        made = sum(1 for message in request.messages if message.role == "assistant")
        if made < len(plan):
            step = plan[made]
            return step if is_answer(step) or not callable(step) else step(request)
        return ReplySpec(text=final)

    return answer
