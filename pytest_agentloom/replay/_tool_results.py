"""Tool results a model request carries, read from the provider's wire format, for ``--agentloom-live-tools=all``.

A tool without side effects runs for real on every replay and its tool tape keeps no result of it: the
recording of its result is the *next model request* of the step, which sends the result back to the
model. So when that request goes off the cassette, and the closest recorded request differs from it
only in the content of tool results, the cause is a tool that now returns something else: the replay
reports that call (:func:`tool_drift`, a :class:`~pytest_agentloom.errors.ToolDriftError`) instead of
the request's cassette mismatch. Reading the results again from both requests (rather than recording
them in the tape) leaves committed tapes and old cassettes as they are.

The formats read: OpenAI chat (and Ollama) ``role: tool`` messages, Anthropic ``tool_result`` blocks,
OpenAI Responses ``function_call_output`` items, Gemini ``functionResponse`` parts. A call is known by
its id, or (Gemini, Ollama: no id on the wire) by its place among the request's tool results. A body of
another shape has no tool results to read: its mismatch stays a ``cassette_mismatch``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ToolDriftError, render_message

__all__ = ["ToolOutput", "tool_drift", "tool_outputs"]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class ToolOutput:
    """One tool result in a request: the call it answers, and where in the body its content sits."""

    call_id: str  # the call's id, or ``#n`` (its place among the results) for a format without ids
    name: str
    arguments: Any
    path: Path
    content: Any


def tool_outputs(body: Any) -> list[ToolOutput]:
    """The tool results ``body`` (a request body as data) carries, in order; none for another shape."""
    if not isinstance(body, dict):
        return []
    if isinstance(body.get("messages"), list):
        return list(_from_messages(body["messages"]))
    if isinstance(body.get("input"), list):
        return list(_from_responses(body["input"]))
    if isinstance(body.get("contents"), list):
        return list(_from_gemini(body["contents"]))
    return []


def _from_messages(messages: list[Any]) -> Iterator[ToolOutput]:
    """OpenAI chat and Ollama (``role: tool``), Anthropic (``tool_use`` / ``tool_result`` blocks)."""
    calls: dict[str, tuple[str, Any]] = {}
    ordered: list[tuple[str, Any]] = []
    count = 0
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or []:
            call = call if isinstance(call, dict) else {}
            function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
            found = (str(function.get("name") or ""), function.get("arguments"))
            ordered.append(found)
            if call.get("id"):
                calls[str(call["id"])] = found
        content = message.get("content")
        if message.get("role") == "tool":
            count += 1
            call_id = str(message.get("tool_call_id") or f"#{count}")
            name, arguments = calls.get(call_id) or (ordered[count - 1] if count <= len(ordered) else ("", None))
            yield ToolOutput(call_id, str(message.get("tool_name") or name), arguments, ("messages", index, "content"),
                             content)
        elif isinstance(content, list):
            for block_index, block in enumerate(content):
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    calls[str(block.get("id"))] = (str(block.get("name") or ""), block.get("input"))
                elif block.get("type") == "tool_result":
                    call_id = str(block.get("tool_use_id") or "")
                    name, arguments = calls.get(call_id, ("", None))
                    yield ToolOutput(call_id, name, arguments, ("messages", index, "content", block_index, "content"),
                                     block.get("content"))


def _from_responses(items: list[Any]) -> Iterator[ToolOutput]:
    """OpenAI Responses: ``function_call`` and ``function_call_output`` items of ``input``."""
    calls: dict[str, tuple[str, Any]] = {}
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            calls[str(item.get("call_id"))] = (str(item.get("name") or ""), item.get("arguments"))
        elif item.get("type") == "function_call_output":
            call_id = str(item.get("call_id") or "")
            name, arguments = calls.get(call_id, ("", None))
            yield ToolOutput(call_id, name, arguments, ("input", index, "output"), item.get("output"))


def _from_gemini(contents: list[Any]) -> Iterator[ToolOutput]:
    """Gemini: ``functionCall`` and ``functionResponse`` parts, paired by order (the wire has no ids)."""
    calls: list[tuple[str, Any]] = []
    count = 0
    for index, turn in enumerate(contents):
        parts = turn.get("parts") if isinstance(turn, dict) else None
        for part_index, part in enumerate(parts if isinstance(parts, list) else []):
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("functionCall"), dict):
                calls.append((str(part["functionCall"].get("name") or ""), part["functionCall"].get("args")))
            elif isinstance(part.get("functionResponse"), dict):
                count += 1
                response = part["functionResponse"]
                arguments = calls[count - 1][1] if count <= len(calls) else None
                yield ToolOutput(str(response.get("id") or f"#{count}"), str(response.get("name") or ""), arguments,
                                 ("contents", index, "parts", part_index, "functionResponse", "response"),
                                 response.get("response"))


def _without_results(body: Any, outputs: list[ToolOutput]) -> Any:
    """``body`` with the content of each tool result blanked: what must be equal for a drift to be the tools'."""
    blank = copy.deepcopy(body)
    for output in outputs:
        place = blank
        for part in output.path[:-1]:
            place = place[part]
        place[output.path[-1]] = None
    return blank


def _readable(content: Any) -> Any:
    """A result as a diff shows it best: JSON text as its data, anything else as it is."""
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def tool_drift(recorded: Any, now: Any, *, step: str, turn: int, recording: str,
               path: str | None = None) -> ToolDriftError | None:
    """The first tool result where ``now`` (the request sent) and ``recorded`` (the closest recording, both
    bodies as data) differ, as a ``tool_drift`` error, when tool results are *all* they differ in.

    ``turn`` is the model turn of the request: the results that differ answer the turn before it (the
    earlier ones were in that turn's request, which matched).
    """
    from .._core.diffs import path_diff

    mine, theirs = tool_outputs(now), tool_outputs(recorded)
    if not mine or [o.call_id for o in mine] != [o.call_id for o in theirs]:
        return None
    if _without_results(now, mine) != _without_results(recorded, theirs):
        return None
    for number, (real, was) in enumerate(zip(mine, theirs, strict=True)):
        if real.content == was.content:
            continue
        call = sum(1 for earlier in mine[:number + 1] if earlier.name == real.name)
        where = f"step '{step}', turn {max(turn - 1, 1)}, call {call} of '{real.name}' in the step ({real.call_id})"
        arguments = real.arguments
        if isinstance(arguments, str):
            arguments = _readable(arguments)
        lines = path_diff({"result": _readable(was.content)}, {"result": _readable(real.content)})
        return ToolDriftError(render_message(
            f"Tool '{real.name}' ran for real and returned something else than its recording ({where}): the "
            "replay stops here, instead of the next model turn's cassette mismatch.",
            [("arguments", json.dumps(arguments, sort_keys=True)), ("recording", recording)],
            details=["  recorded -> real:", *(f"    {line}" for line in lines)],
            hint="if the tool's new result is intended, re-record the test with --agentloom-record; "
                 "otherwise the tool changed: fix it"), path=path)
    return None
