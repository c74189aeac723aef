"""What a scripted provider answers: replies, tool calls, errors and embeddings, as values a test writes.

``reply("text", input_tokens=120)``, ``tool_call("lookup", id=1)``, ``error(429)``
and ``embedding([[0.1, 0.2]])`` build the answers :class:`~._scripted.Scripted`
hands out; a plain string is a reply too. :mod:`._misbehaving` builds answers
that go wrong on purpose; :mod:`._script_data` reads the same answers from
YAML or JSON (``agentloom run --script``, scenario tables).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core.arguments import bad_argument, check_optional_text, check_real_number
from .._core.types import LLMRequest, ToolCall, Usage

__all__ = [
    "EmbeddingSpec",
    "ErrorSpec",
    "Reply",
    "ReplySpec",
    "embedding",
    "error",
    "is_answer",
    "reply",
    "tool_call",
    "tool_calls",
]


@dataclass(frozen=True)
class ReplySpec:
    """A scripted answer: text, tool calls, usage and finish reason."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = "stop"
    model: str | None = None
    cost: float | None = None
    reasoning_content: str | None = None  # the model's reasoning text, as Anthropic, Gemini and Ollama return it
    refusal: str | None = None  # the model refuses, with this text (docs/providers.md: Refusals)


@dataclass(frozen=True)
class ErrorSpec:
    """A scripted provider failure with an HTTP status (``None`` for a dropped connection)."""

    status: int | None
    message: str = ""


@dataclass(frozen=True)
class EmbeddingSpec:
    """A scripted answer to an ``embed`` step: one vector per text."""

    vectors: tuple[tuple[float, ...], ...]
    input_tokens: int = 0
    model: str | None = None
    cost: float | None = None


Reply = str | ReplySpec | ErrorSpec | EmbeddingSpec | Callable[[LLMRequest], Any]


def embedding(vectors: Sequence[Sequence[float]], *, input_tokens: int = 0, model: str | None = None,
              cost: float | None = None) -> EmbeddingSpec:
    """The vectors an ``embed`` step gets back, one per text in order: ``embedding([[0.1, 0.2], [0.3, 0.4]])``."""
    return EmbeddingSpec(vectors=tuple(tuple(float(x) for x in vector) for vector in vectors),
                         input_tokens=input_tokens, model=model, cost=cost)


def reply(
    text: str = "",
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    reasoning_tokens: int = 0,
    finish_reason: str | None = "stop",
    model: str | None = None,
    cost: float | None = None,
    tool_calls: Sequence[ToolCall] = (),
    reasoning: str | None = None,
    refusal: str | None = None,
) -> ReplySpec:
    """A reply with usage and finish reason, for tests of budgets and results (``reasoning``: its reasoning text).

    ``refusal`` makes it a refusal, as a real provider sends one (docs/providers.md: Refusals): ``finish_reason``
    is then ``refusal`` and the step fails with ``error_code: refused``, unless it says
    ``on_refusal: output``.
    """
    _check_reply("reply()", text=text, input_tokens=input_tokens, output_tokens=output_tokens,
                 reasoning_tokens=reasoning_tokens, cost=cost, texts={"finish_reason": finish_reason, "model": model,
                                                                     "reasoning": reasoning, "refusal": refusal})
    if isinstance(tool_calls, (str, bytes)) or not all(isinstance(call, ToolCall) for call in tool_calls):
        raise bad_argument("reply()", "tool_calls", tool_calls,
                           "a list of ToolCall values (tool_call(...) makes a reply asking for one call)")
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, reasoning_tokens=reasoning_tokens)
    return ReplySpec(
        text=text, tool_calls=tuple(tool_calls), usage=usage, model=model, cost=cost, reasoning_content=reasoning,
        finish_reason="refusal" if refusal is not None else finish_reason, refusal=refusal,
    )


def tool_call(
    name: str, /, *, call_id: str | None = None, raw_arguments: str | None = None, **arguments: Any
) -> ReplySpec:
    """A reply in which the model asks to call one tool with ``arguments``.

    ``raw_arguments`` sends text as written, for tests of arguments that are not JSON.
    """
    args = raw_arguments if raw_arguments is not None else json.dumps(arguments, sort_keys=True)
    call = ToolCall(id=call_id or f"call_{name}", name=name, arguments=args)
    return ReplySpec(tool_calls=(call,), finish_reason="tool_calls")


def error(status: int | None, message: str = "") -> ErrorSpec:
    """A provider error: ``error(429)`` is retried, ``error(400)`` fails at once."""
    if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
        raise bad_argument("error()", "status", status,
                           "an HTTP status as a whole number (429 is retried, 400 fails at once), or None")
    if not isinstance(message, str):
        raise bad_argument("error()", "message", message, "a string (the error's text)")
    return ErrorSpec(status=status, message=message)


def _check_reply(call: str, *, text: object, cost: object, texts: Mapping[str, object], **counts: object) -> None:
    """A scripted reply's fields, checked where the test wrote them (not when the step reads the reply)."""
    if not isinstance(text, str):
        raise bad_argument(call, "text", text, "a string (the reply's text)")
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad_argument(call, name, value, "a whole number of tokens, 0 or more")
    for name, value in texts.items():
        check_optional_text(call, name, value)
    if cost is not None:
        check_real_number(call, "cost", cost)


def is_answer(value: Any) -> bool:
    """Whether ``value`` is an answer as it stands (not a callable that makes one from the request)."""
    return isinstance(value, (str, ReplySpec, ErrorSpec, EmbeddingSpec))


def tool_calls(*calls: ToolCall | tuple[str, Mapping[str, Any]], text: str = "", input_tokens: int = 0,
               output_tokens: int = 0) -> ReplySpec:
    """One reply asking for several calls: ``tool_calls(("lookup", {"id": 1}), ("lookup", {"id": 2}))``."""
    made = tuple(
        call if isinstance(call, ToolCall)
        else ToolCall(id=f"call_{index}", name=call[0], arguments=json.dumps(dict(call[1]), sort_keys=True))
        for index, call in enumerate(calls, 1)
    )
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return ReplySpec(text=text, tool_calls=made, usage=usage, finish_reason="tool_calls")
