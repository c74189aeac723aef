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

from .._core.arguments import bad_argument
from .._core.types import LLMRequest, ToolCall
from ._replies import Reply, ReplySpec, is_answer

__all__ = ["calls_unknown_tool", "claims_done", "invalid_call", "never_finishes", "obeys_injection", "repeats"]


def _tool_name(call: str, name: object) -> str:
    """A tool name as the model would write it: a non-empty string (checked here, not at the first call)."""
    if not isinstance(name, str) or not name.strip():
        raise bad_argument(f"{call}()", "name", name, "the tool's name as a non-empty string, e.g. 'lookup'")
    return name


def _arguments_text(call: str, arguments: dict[str, Any]) -> str:
    """The call's arguments as the JSON the model sends; a value JSON cannot hold is refused by name."""
    try:
        return json.dumps(arguments, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise bad_argument(f"{call}()", "arguments", arguments, "keyword arguments whose values JSON can hold "
                           "(str, int, float, bool, None, lists and dicts of them)",
                           hint=f"convert the value first, e.g. with str() ({exc})") from None


def _text(call: str, name: str, value: object) -> str:
    if not isinstance(value, str):
        raise bad_argument(f"{call}()", name, value, "a string")
    return value


def _call_for(request: LLMRequest, name: str, arguments: str) -> ReplySpec:
    call = ToolCall(id=f"call_{request.turn}", name=name, arguments=arguments)
    return ReplySpec(tool_calls=(call,), finish_reason="tool_calls")


def never_finishes(name: str, /, *, vary: str = "page", **arguments: Any) -> Callable[[LLMRequest], ReplySpec]:
    """A model that keeps calling ``name``, each time with ``vary`` set to the next number: it never answers."""
    name, vary = _tool_name("never_finishes", name), _text("never_finishes", "vary", vary)
    _arguments_text("never_finishes", arguments)

    def answer(request: LLMRequest) -> ReplySpec:
        return _call_for(request, name, json.dumps({**arguments, vary: request.turn}, sort_keys=True))

    return answer


def repeats(name: str, /, **arguments: Any) -> Callable[[LLMRequest], ReplySpec]:
    """A model that asks for the same call with the same arguments every time."""
    name, text = _tool_name("repeats", name), _arguments_text("repeats", arguments)
    return lambda request: _call_for(request, name, text)


def calls_unknown_tool(name: str = "delete_all_records", /, **arguments: Any) -> Callable[[LLMRequest], ReplySpec]:
    """A model that calls a tool it was never given (hallucinated, or outside its allowlist)."""
    name, text = _tool_name("calls_unknown_tool", name), _arguments_text("calls_unknown_tool", arguments)
    return lambda request: _call_for(request, name, text)


def invalid_call(name: str, /, raw_arguments: str = '{"ticket_id": T-1') -> Callable[[LLMRequest], ReplySpec]:
    """A model whose call is not a valid call: its arguments aren't JSON."""
    name, raw_arguments = _tool_name("invalid_call", name), _text("invalid_call", "raw_arguments", raw_arguments)
    return lambda request: _call_for(request, name, raw_arguments)


def claims_done(
    text: str = "Done: the ticket is triaged and the customer was emailed.",
) -> Callable[[LLMRequest], ReplySpec]:
    """A model that claims success at once, without calling any tool, and says so again when asked again."""
    claim = ReplySpec(text=_text("claims_done", "text", text))
    return lambda request: claim


def obeys_injection(
    plan: Sequence[Reply] = (), *, final: str = "Done.", pattern: str = r"call (\w+) with (\{.*?\})",
) -> Callable[[LLMRequest], Any]:
    """A model that does what the last tool result tells it to, when it says ``call <tool> with {json}``.

    Otherwise it follows ``plan`` (one reply per model call so far), then answers ``final``.
    """
    instruction = _instruction_pattern(pattern)
    final = _text("obeys_injection", "final", final)
    if isinstance(plan, (str, bytes)) or not isinstance(plan, Sequence):
        raise bad_argument("obeys_injection()", "plan", plan, "a list of replies (one per model call before the "
                           "injection is obeyed)")

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


def _instruction_pattern(pattern: object) -> re.Pattern[str]:
    """``pattern`` compiled; it must capture the tool's name and its JSON arguments, in that order."""
    accepted = "a regular expression with two groups: the tool's name, then its JSON arguments"
    if not isinstance(pattern, str):
        raise bad_argument("obeys_injection()", "pattern", pattern, accepted)
    try:
        compiled = re.compile(pattern, re.IGNORECASE | re.DOTALL)
    except re.error as exc:
        raise bad_argument("obeys_injection()", "pattern", pattern, accepted,
                           hint=f"it does not compile: {exc}") from None
    if compiled.groups < 2:
        raise bad_argument("obeys_injection()", "pattern", pattern, accepted,
                           hint=f"it has {compiled.groups} group(s); add parentheses around each part")
    return compiled
