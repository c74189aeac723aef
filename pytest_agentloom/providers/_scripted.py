"""A provider for tests that answers from a script, never from a default.

``Scripted({"classify": "bug", "summarize": ["draft", reply("final")]})`` gives
each step its own queue of replies (:mod:`._replies`). Running out of replies is
an error that names the step and the size of its script: a test must never
pass because a fake made something up. :meth:`Scripted.from_data` builds one
from plain data (YAML or JSON), as ``agentloom run --script`` and scenario
tables write it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core.arguments import bad_argument
from .._core.clock import current_clock
from .._core.types import EmbedRequest, EmbedResponse, LLMRequest, LLMResponse, Usage, emit_text
from ..errors import (
    ErrorCode,
    MidStreamError,
    ProviderError,
    ScriptDataError,
    ScriptError,
    StepError,
    UsageError,
    render_message,
)
from ._replies import EmbeddingSpec, ErrorSpec, Reply, ReplySpec, is_answer
from ._script_data import replies_from_data, reply_from_data

__all__ = ["Scripted", "ScriptedCall"]


_REPLY_FORM = ("a string, reply(...), tool_call(...), error(...), embedding(...), a callable taking the "
               "request, or a reply written as data ({text: ...}, {tool_call: name, arguments: {...}}, "
               "{error: 429}, {embedding: [[...]]}, {misbehave: ...})")
_REPLIES_FORM = f"None, or a mapping of step id to a reply or a list of replies; a reply is {_REPLY_FORM}"
_REPLIES_EXAMPLE = "Scripted({'classify': 'bug', 'summarize': ['draft', reply('final')]})"


def _checked_script(replies: object, allow_unused: object) -> dict[str, Any]:
    """The script with each reply written as data made into its reply; refuses at construction a script no
    request could be answered from (it would fail much later, at the step)."""
    if not isinstance(allow_unused, bool):
        raise bad_argument("Scripted()", "allow_unused", allow_unused, "True or False")
    if replies is None:
        return {}
    if not isinstance(replies, Mapping):
        raise bad_argument("Scripted()", "replies", replies, _REPLIES_FORM, hint=f"e.g. {_REPLIES_EXAMPLE}")
    checked: dict[str, Any] = {}
    for step_id, value in replies.items():
        if type(step_id) is str and type(value) is str:  # the common case, a step's one text reply
            checked[step_id] = value
            continue
        if not isinstance(step_id, str):
            raise bad_argument("Scripted()", "replies", step_id, "step ids that are strings",
                               hint=f"key each reply by its step's id, e.g. {_REPLIES_EXAMPLE}")
        if isinstance(value, (list, tuple)):
            checked[step_id] = [_checked_reply(step_id, index, answer) for index, answer in enumerate(value)]
        else:
            checked[step_id] = _checked_reply(step_id, None, value)
    return checked


def _checked_reply(step_id: str, index: int | None, answer: object) -> Any:
    """One reply as :class:`Scripted` keeps it: as given, or read from its data form (a mapping)."""
    where = f"{step_id}[{index}]" if index is not None else step_id
    if is_answer(answer) or callable(answer):
        return answer
    if isinstance(answer, Mapping):
        try:
            return reply_from_data(answer, where=where)
        except ScriptDataError as exc:
            raise _invalid(step_id, index, answer, exc.headline, exc.hint) from None
    raise _invalid(step_id, index, answer, f"{type(answer).__name__} is no reply form", None)


def _invalid(step_id: str, index: int | None, answer: object, problem: str, hint: str | None) -> UsageError:
    error = UsageError(render_message(
        f"Scripted(): the reply {'for step' if index is None else f'{index + 1} for step'} '{step_id}' is not a "
        f"reply: {problem}.",
        [("reply", repr(answer)), ("accepted", _REPLY_FORM)],
        hint=hint or f"e.g. Scripted({{{step_id!r}: 'the reply text'}}) or "
                     f"Scripted({{{step_id!r}: tool_call('lookup', order_id=42)}})",
    ))
    error.code = ErrorCode.INVALID_SCRIPT.value
    return error


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
    reply is a string, :func:`reply`, :func:`tool_call`, :func:`error`, a
    callable taking the :class:`LLMRequest` and returning one of those, or a
    reply written as data as scenario tables write it (``{"tool_call": "lookup",
    "arguments": {...}}``, ``{"text": ..., "input_tokens": ...}``, ``{"error": 429}``).
    A single callable answers every request of its step. A reply of no such form
    raises :class:`~pytest_agentloom.errors.UsageError` (code ``invalid_script``)
    here, naming the step and the reply, not when the step runs.

    In a test of the ``agentloom`` fixture, replies left unused when the test
    passes fail it; ``allow_unused=True`` keeps them on purpose.
    """

    __test__ = False  # not a test class, whatever its name looks like to pytest

    def __init__(self, replies: Mapping[str, Reply | Sequence[Reply]] | None = None, *,
                 allow_unused: bool = False) -> None:
        checked = _checked_script(replies, allow_unused)
        self.allow_unused = allow_unused
        self._script: dict[str, list[Reply]] = {}
        self._repeat: dict[str, Reply] = {}
        for step_id, value in checked.items():
            if callable(value) and not is_answer(value):
                self._repeat[step_id] = value
            elif isinstance(value, (list, tuple)):
                self._script[step_id] = list(value)
            else:
                self._script[step_id] = [value]  # type: ignore[list-item]
        #: whether the script was written as data (a scenario row, ``--script``): hints then show YAML
        self.written_as_data = False
        self._used: dict[str, int] = {}
        self._calls: list[ScriptedCall] = []
        self._unrecorded: list[LLMRequest | EmbedRequest] = []  # frozen requests, made into calls when read

    @property
    def requests(self) -> list[ScriptedCall]:
        """Every request received, in order, as plain data.

        A request is frozen, so it is turned into a :class:`ScriptedCall` only when
        someone reads this list: a run that nobody inspects pays nothing for it.
        """
        if self._unrecorded:
            self._calls.extend(_record(request) for request in self._unrecorded)
            self._unrecorded.clear()
        return self._calls

    name = "scripted"

    @classmethod
    def from_data(cls, data: Any, *, where: str = "script") -> Scripted:
        """A provider from plain data: step id -> a reply or a list of replies, each written as data.

        The forms (one reading for ``--script`` files and scenario tables): ``"text"``,
        ``{text: ..., input_tokens: ..., finish_reason: ...}``, ``{error: 429}``,
        ``{tool_call: name, arguments: {...}}``, ``{embedding: [[...]]}`` and
        ``{misbehave: repeats, tool: ...}``. A bad form raises
        :class:`~._script_data.ScriptDataError` naming where it is (``where`` is the prefix).
        """
        made = cls(replies_from_data(data, where=where))
        made.written_as_data = True
        return made

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

    def script_length(self, step_id: str) -> int:
        """How many replies were scripted for ``step_id`` (0 for a step answered by a callable)."""
        return len(self._script.get(step_id, ()))

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self._unrecorded.append(request)
        answer = self._next_reply(request)
        if type(answer) is str:  # the usual script: no callable to call
            return _to_response(answer, request)
        if callable(answer) and not is_answer(answer):
            answer = answer(request)
            if inspect.isawaitable(answer):  # an async callable, e.g. one that sleeps on the run's clock
                answer = await answer
        if isinstance(answer, ReplySpec) and answer.chunks:
            await _stream(answer, request)
        return _to_response(answer, request)

    async def embed(self, request: EmbedRequest) -> EmbedResponse:
        """Answer an ``embed`` step from its script: :func:`embedding`, :func:`error` or a callable."""
        self._unrecorded.append(request)
        answer = self._next_reply(request)
        if callable(answer) and not is_answer(answer):
            answer = answer(request)  # type: ignore[arg-type]  # an embed step's callable takes the EmbedRequest
            if inspect.isawaitable(answer):
                answer = await answer
        if isinstance(answer, ErrorSpec):
            raise ProviderError(answer.message, status=answer.status, provider="scripted")
        if not isinstance(answer, EmbeddingSpec):
            raise ScriptError(
                render_message(
                        f"Scripted reply for embed step '{request.step_id}' must be embedding([[...], ...]) or "
                        "error(), "
                        f"got {type(answer).__name__}: {answer!r}.",
                        hint="script it as embedding([[0.1, 0.2]]).")
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
                render_message(
                        f"Scripted provider has no replies for step '{step}' (steps with replies: {scripted}).",
                        hint=f"add '{step}' to the script, e.g. "
                             + (f"script: {{{step}: the reply text}}." if self.written_as_data
                                else f"Scripted({{'{step}': 'the reply text'}})."))
            )
        used = self._used.get(step, 0)
        queue = self._script[step]
        if used >= len(queue):
            raise ScriptError(
                render_message(f"Scripted provider has no reply left for step '{step}': {len(queue)} "
                               f"{'reply was' if len(queue) == 1 else 'replies were'} scripted and all were used "
                               f"(this is request {used + 1} for the step, attempt {request.attempt}, "
                               f"turn {getattr(request, 'turn', 1)}).",
                               hint=f"add another reply to the list for '{step}'.")
            )
        self._used[step] = used + 1
        return queue[used]


def _record(request: LLMRequest | EmbedRequest) -> ScriptedCall:
    if isinstance(request, EmbedRequest):
        return ScriptedCall(
            step_id=request.step_id, model=request.model, messages=[], params={}, tools=[], attempt=request.attempt,
            turn=1, request=request, texts=list(request.texts),
        )
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


async def _stream(answer: ReplySpec, request: LLMRequest) -> None:
    """Hand a reply's chunks to the run's stream listener, each after its virtual delay; break where scripted.

    A request that does not stream gets the text whole (the engine passes it on in one piece). A break
    scripted for such a request is a mistake in the test, refused rather than turned into another failure.
    """
    if not request.stream:
        if answer.break_after is not None:
            raise StepError(render_message(
                f"Scripted reply for step '{request.step_id}' breaks its stream after {answer.break_after} "
                "chunk(s) (break_after), but the step's request does not stream.",
                hint="set stream: true on the step (or config.stream), or script error(None) for a dropped "
                     "connection instead."), code=ErrorCode.INVALID_SCRIPT.value)
        return
    clock = current_clock()
    for index, piece in enumerate(answer.chunks):
        if index == answer.break_after:
            break
        if answer.chunk_delays and answer.chunk_delays[index] > 0:
            await clock.sleep(answer.chunk_delays[index])
        emit_text(piece)
    if answer.break_after is not None:
        raise MidStreamError(f"scripted: the stream broke after {answer.break_after} of {len(answer.chunks)} "
                             "chunks (break_after)", provider="scripted")


def _to_response(answer: Any, request: LLMRequest) -> LLMResponse:
    if isinstance(answer, ErrorSpec):
        raise ProviderError(answer.message, status=answer.status, provider="scripted")
    if isinstance(answer, str):  # the usual script: what ReplySpec(text=answer) gives, built in one step
        return LLMResponse(text=answer, finish_reason="stop", model=request.model, provider="scripted")
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
        refusal=answer.refusal,
    )
