"""What a scripted provider answers: replies, tool calls, errors and embeddings, as values a test writes.

``reply("text", input_tokens=120)``, ``tool_call("lookup", id=1)``, ``error(429)``
and ``embedding([[0.1, 0.2]])`` build the answers :class:`~._scripted.Scripted`
hands out; a plain string is a reply too. :mod:`._misbehaving` builds answers
that go wrong on purpose; :mod:`._script_data` reads the same answers from
YAML or JSON (``agentloom run --script``, scenario tables).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core.arguments import bad_argument, check_optional_text, check_real_number
from .._core.types import LLMRequest, ToolCall, Usage
from ..errors import UsageError

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
    #: how the text arrives when the request streams (``()``: whole, at the end); they join to ``text``
    chunks: tuple[str, ...] = ()
    #: virtual seconds the run's clock waits before each chunk (one per chunk, or none)
    chunk_delays: tuple[float, ...] = ()
    #: the stream breaks (``MidStreamError``) after this many chunks; ``None``: it completes
    break_after: int | None = None


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
    chunks: Sequence[str] | int | str | None = None,
    chunk_delay: float | Sequence[float] | None = None,
    break_after: int | None = None,
) -> ReplySpec:
    """A reply with usage and finish reason, for tests of budgets and results (``reasoning``: its reasoning text).

    ``refusal`` makes it a refusal, as a real provider sends one (docs/providers.md: Refusals): ``finish_reason``
    is then ``refusal`` and the step fails with ``error_code: refused``, unless it says
    ``on_refusal: output``.

    ``chunks`` says how the text arrives when the step streams: a list of pieces that join to ``text``, a
    number of characters per piece, or ``"words"``. ``chunk_delay`` is the virtual time before each piece
    (one number, or one per piece), so time to first token is testable; ``break_after=N`` breaks the
    stream after N pieces with a ``MidStreamError``. Each is checked here, naming the argument.
    """
    _check_reply("reply()", text=text, input_tokens=input_tokens, output_tokens=output_tokens,
                 reasoning_tokens=reasoning_tokens, cost=cost, texts={"finish_reason": finish_reason, "model": model,
                                                                     "reasoning": reasoning, "refusal": refusal})
    if isinstance(tool_calls, (str, bytes)) or not all(isinstance(call, ToolCall) for call in tool_calls):
        raise bad_argument("reply()", "tool_calls", tool_calls,
                           "a list of ToolCall values (tool_call(...) makes a reply asking for one call)")
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, reasoning_tokens=reasoning_tokens)
    pieces = _chunked(text, chunks)
    return ReplySpec(
        text=text, tool_calls=tuple(tool_calls), usage=usage, model=model, cost=cost, reasoning_content=reasoning,
        finish_reason="refusal" if refusal is not None else finish_reason, refusal=refusal,
        chunks=pieces, chunk_delays=_delays(pieces, chunk_delay), break_after=_break(pieces, break_after),
    )


def _refused(name: str, value: object, accepted: str, hint: str | None = None) -> UsageError:
    """The error for one stream argument; ``stream_argument`` keeps its parts, so that a script written as data
    names its own key (``draft[0].chunks``) in its own words."""
    error = bad_argument("reply()", name, value, accepted, hint=hint)
    error.stream_argument = (name, value, accepted, hint)  # type: ignore[attr-defined]
    return error


_CHUNKS_FORM = "a list of strings that join to the text, a number of characters per chunk, or 'words'"


def _chunked(text: str, chunks: Sequence[str] | int | str | None) -> tuple[str, ...]:
    """The pieces a streamed reply arrives in; refuses any that would not give back ``text`` exactly."""
    if chunks is None:
        return ()
    if not text:
        raise _refused("chunks", chunks, "chunks of a non-empty text",
                           hint="give the reply its text: reply('Hello world', chunks='words').")
    if chunks == "words":  # each word with the whitespace after it, so the pieces join to the text
        return tuple(re.findall(r"\s*\S+\s*", text)) or (text,)
    if isinstance(chunks, int) and not isinstance(chunks, bool):
        if chunks < 1:
            raise _refused("chunks", chunks, _CHUNKS_FORM, hint="e.g. chunks=5 (five characters each)")
        return tuple(text[start:start + chunks] for start in range(0, len(text), chunks))
    if isinstance(chunks, str) or not isinstance(chunks, Sequence) or not chunks:
        raise _refused("chunks", chunks, _CHUNKS_FORM, hint="e.g. chunks=['Hel', 'lo'] or 'words'")
    if not all(isinstance(piece, str) and piece for piece in chunks):
        raise _refused("chunks", chunks, "non-empty strings only",
                           hint="leave the empty pieces out: a stream never sends one.")
    if "".join(chunks) != text:
        raise _refused("chunks", chunks, f"pieces that join to the text {text!r}",
                           hint=f"they join to {''.join(chunks)!r}: fix a piece, or pass chunks='words'.")
    return tuple(chunks)


def _delays(pieces: tuple[str, ...], delay: float | Sequence[float] | None) -> tuple[float, ...]:
    """One virtual delay per piece, from one number or a list of them."""
    if delay is None:
        return ()
    if not pieces:
        raise _refused("chunk_delay", delay, "a delay for a reply with chunks",
                           hint="give the reply chunks=... too.")
    delays = [delay] * len(pieces) if isinstance(delay, (int, float)) else delay
    if isinstance(delays, str) or not isinstance(delays, Sequence) or len(delays) != len(pieces) or not all(
            isinstance(d, (int, float)) and not isinstance(d, bool) and math.isfinite(d) and d >= 0 for d in delays):
        raise _refused("chunk_delay", delay,
                           f"seconds of virtual time, at least 0: one number, or a list of {len(pieces)} (one per "
                           "chunk)", hint="e.g. chunk_delay=0.25, or chunk_delay=[1.5, 0.1, 0.1]")
    return tuple(float(d) for d in delays)


def _break(pieces: tuple[str, ...], after: int | None) -> int | None:
    """Where a stream breaks: after at least one chunk (before the first it is no stream) and at most all."""
    if after is None:
        return None
    if isinstance(after, bool) or not isinstance(after, int) or not pieces or not 1 <= after <= len(pieces):
        span = f"1 to {len(pieces)}, the number of chunks" if pieces else "a number of chunks, with chunks=..."
        raise _refused("break_after", after, span,
                           hint="a failure before the first chunk is error(None) (a dropped connection).")
    return after


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
