"""A provider for tests that answers from a script, never from a default.

``Scripted({"classify": "bug", "summarize": ["draft", reply("final")]})`` gives
each step its own queue of replies. Running out of replies is an error that
names the step and the size of its script: a test must never pass because a
fake made something up.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.types import EmbedRequest, EmbedResponse, LLMRequest, LLMResponse, ToolCall, Usage
from ..errors import ProviderError, ScriptError

__all__ = [
    "Scripted",
    "ScriptedCall",
    "calls_unknown_tool",
    "claims_done",
    "embedding",
    "error",
    "invalid_call",
    "never_finishes",
    "obeys_injection",
    "repeats",
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
) -> ReplySpec:
    """A reply with usage and finish reason, for tests of budgets and results (``reasoning``: its reasoning text)."""
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, reasoning_tokens=reasoning_tokens)
    return ReplySpec(
        text=text, tool_calls=tuple(tool_calls), usage=usage, finish_reason=finish_reason, model=model, cost=cost,
        reasoning_content=reasoning,
    )


def tool_call(
    name: str, /, *, call_id: str | None = None, raw_arguments: str | None = None, **arguments: Any
) -> ReplySpec:
    """A reply in which the model asks to call one tool with ``arguments``.

    ``raw_arguments`` sends text as written, for tests of arguments that are not JSON.
    """
    import json

    args = raw_arguments if raw_arguments is not None else json.dumps(arguments, sort_keys=True)
    call = ToolCall(id=call_id or f"call_{name}", name=name, arguments=args)
    return ReplySpec(tool_calls=(call,), finish_reason="tool_calls")


def error(status: int | None, message: str = "") -> ErrorSpec:
    """A provider error: ``error(429)`` is retried, ``error(400)`` fails at once."""
    return ErrorSpec(status=status, message=message)


@dataclass(frozen=True)
class ScriptedCall:
    """One request a scripted provider received, in plain data for assertions."""

    step_id: str
    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    tools: list[str]
    attempt: int
    turn: int
    request: LLMRequest | EmbedRequest = field(repr=False, compare=False)
    texts: list[str] = field(default_factory=list)  # an embed step's texts (no messages then)


class Scripted:
    """Answers each step's requests from its own queue of scripted replies.

    ``replies`` maps a step id to one reply or a list of successive replies. A
    reply is a string, :func:`reply`, :func:`tool_call`, :func:`error`, or a
    callable taking the :class:`LLMRequest` and returning one of those. A
    single callable answers every request of its step.
    """

    __test__ = False  # not a test class, whatever its name looks like to pytest

    def __init__(self, replies: Mapping[str, Reply | Sequence[Reply]] | None = None) -> None:
        self._script: dict[str, list[Reply]] = {}
        self._repeat: dict[str, Reply] = {}
        for step_id, value in (replies or {}).items():
            if callable(value) and not isinstance(value, (ReplySpec, ErrorSpec, EmbeddingSpec)):
                self._repeat[step_id] = value
            elif isinstance(value, (list, tuple)):
                self._script[step_id] = list(value)
            else:
                self._script[step_id] = [value]  # type: ignore[list-item]
        self._used: dict[str, int] = {}
        self.requests: list[ScriptedCall] = []

    name = "scripted"

    def calls(self, step_id: str) -> list[ScriptedCall]:
        """The requests received for one step, in order."""
        return [call for call in self.requests if call.step_id == step_id]

    def unused(self) -> dict[str, int]:
        """Steps whose scripted replies were not all consumed, with how many are left."""
        return {
            step: len(queue) - self._used.get(step, 0)
            for step, queue in self._script.items()
            if len(queue) > self._used.get(step, 0)
        }

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(_record(request))
        answer = self._next_reply(request)
        if callable(answer) and not isinstance(answer, (ReplySpec, ErrorSpec)):
            answer = answer(request)
            if inspect.isawaitable(answer):  # an async callable, e.g. one that sleeps on the run's clock
                answer = await answer
        return _to_response(answer, request)

    async def embed(self, request: EmbedRequest) -> EmbedResponse:
        """Answer an ``embed`` step from its script: :func:`embedding`, :func:`error` or a callable."""
        self.requests.append(ScriptedCall(
            step_id=request.step_id, model=request.model, messages=[], params={}, tools=[], attempt=request.attempt,
            turn=1, request=request, texts=list(request.texts),
        ))
        answer = self._next_reply(request)
        if callable(answer) and not isinstance(answer, (ReplySpec, ErrorSpec, EmbeddingSpec)):
            answer = answer(request)  # type: ignore[arg-type]  # an embed step's callable takes the EmbedRequest
            if inspect.isawaitable(answer):
                answer = await answer
        if isinstance(answer, ErrorSpec):
            raise ProviderError(answer.message, status=answer.status, provider="scripted")
        if not isinstance(answer, EmbeddingSpec):
            raise ScriptError(
                f"Scripted reply for embed step '{request.step_id}' must be embedding([[...], ...]) or error(), "
                f"got {type(answer).__name__}: {answer!r}.\nHow to fix: script it as embedding([[0.1, 0.2]])."
            )
        return EmbedResponse(
            vectors=[list(vector) for vector in answer.vectors], usage=Usage(input_tokens=answer.input_tokens),
            model=answer.model or request.model, provider="scripted", cost=answer.cost,
        )

    def _next_reply(self, request: LLMRequest | EmbedRequest) -> Reply:
        step = request.step_id
        if step in self._repeat:
            return self._repeat[step]
        if step not in self._script:
            scripted = ", ".join(sorted([*self._script, *self._repeat])) or "none"
            raise ScriptError(
                f"Scripted provider has no replies for step '{step}' (steps with replies: {scripted}).\n"
                f"How to fix: add '{step}' to the script, e.g. Scripted({{'{step}': 'the reply text'}})."
            )
        used = self._used.get(step, 0)
        queue = self._script[step]
        if used >= len(queue):
            raise ScriptError(
                f"Scripted provider has no reply left for step '{step}': {len(queue)} "
                f"{'reply was' if len(queue) == 1 else 'replies were'} scripted and all were used "
                f"(this is request {used + 1} for the step, attempt {request.attempt}, "
                f"turn {getattr(request, 'turn', 1)}).\n"
                f"How to fix: add another reply to the list for '{step}'."
            )
        self._used[step] = used + 1
        return queue[used]


def _record(request: LLMRequest) -> ScriptedCall:
    return ScriptedCall(
        step_id=request.step_id,
        model=request.model,
        messages=[message.to_dict() for message in request.messages],
        params=dict(request.params),
        tools=[tool.name for tool in request.tools],
        attempt=request.attempt,
        turn=request.turn,
        request=request,
    )


def _to_response(answer: Any, request: LLMRequest) -> LLMResponse:
    if isinstance(answer, ErrorSpec):
        raise ProviderError(answer.message, status=answer.status, provider="scripted")
    if isinstance(answer, str):
        answer = ReplySpec(text=answer)
    if not isinstance(answer, ReplySpec):
        raise ScriptError(
            f"Scripted reply for step '{request.step_id}' must be a str, reply(), tool_call() or error(), "
            f"got {type(answer).__name__}: {answer!r}"
        )
    return LLMResponse(
        text=answer.text,
        tool_calls=answer.tool_calls,
        usage=answer.usage,
        finish_reason=answer.finish_reason,
        model=answer.model or request.model,
        provider="scripted",
        cost=answer.cost,
        reasoning_content=answer.reasoning_content,
    )


# -- misbehaving models -------------------------------------------------------------------------------------
# The classic ways an agent's model goes wrong, as scripted replies. Each callable answers every request it
# gets (give it as the step's only reply), or one request when it sits in a list.


def tool_calls(*calls: ToolCall | tuple[str, Mapping[str, Any]], text: str = "", input_tokens: int = 0,
               output_tokens: int = 0) -> ReplySpec:
    """One reply asking for several calls: ``tool_calls(("lookup", {"id": 1}), ("lookup", {"id": 2}))``."""
    import json

    made = tuple(
        call if isinstance(call, ToolCall)
        else ToolCall(id=f"call_{index}", name=call[0], arguments=json.dumps(dict(call[1]), sort_keys=True))
        for index, call in enumerate(calls, 1)
    )
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    return ReplySpec(text=text, tool_calls=made, usage=usage, finish_reason="tool_calls")


def _call_for(request: LLMRequest, name: str, arguments: str) -> ReplySpec:
    call = ToolCall(id=f"call_{request.turn}", name=name, arguments=arguments)
    return ReplySpec(tool_calls=(call,), finish_reason="tool_calls")


def never_finishes(name: str, /, *, vary: str = "page", **arguments: Any) -> Callable[[LLMRequest], ReplySpec]:
    """A model that keeps calling ``name``, each time with ``vary`` set to the next number: it never answers."""
    import json

    def answer(request: LLMRequest) -> ReplySpec:
        return _call_for(request, name, json.dumps({**arguments, vary: request.turn}, sort_keys=True))

    return answer


def repeats(name: str, /, **arguments: Any) -> Callable[[LLMRequest], ReplySpec]:
    """A model that asks for the same call with the same arguments every time."""
    import json

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
    import re

    instruction = re.compile(pattern, re.IGNORECASE | re.DOTALL)

    def texts(content: str) -> list[str]:  # the result itself, and the strings inside it when it is JSON
        import json

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
            return step(request) if callable(step) and not isinstance(step, (ReplySpec, ErrorSpec)) else step
        return ReplySpec(text=final)

    return answer
