"""Scripts written as data: the one reading of replies in YAML or JSON.

``agentloom run --script FILE`` and the ``script`` of a scenario table row
both map a step id to a reply or a list of replies, each one of:

========================================================= =================================
``"text"``                                                a reply with that text
``{text: ..., input_tokens: ..., output_tokens: ...,``    a reply with usage and more
``reasoning_tokens: ..., finish_reason: ..., model: ...,``
``cost: ..., reasoning: ..., refusal: ...}``
``{text: ..., chunks: [...] | 5 | words,``                a streamed reply, its delays, a break
``chunk_delay: ..., break_after: ...}``
``{error: 429, message: ...}``                            a provider error (``null``: no status)
``{tool_call: name, arguments: {...}, id: ...,``          a call of one tool (with usage and cost)
``input_tokens: ..., output_tokens: ..., cost: ...}``
``{embedding: [[0.1, 0.2], ...], input_tokens: ...}``     an ``embed`` step's vectors
``{misbehave: repeats, tool: ..., arguments: {...}}``     a model going wrong on purpose
(``never_finishes`` takes ``vary``: the argument set to the turn)
========================================================= =================================

(``misbehave`` is one of :data:`MISBEHAVIOURS`.) A form that is none of these
raises :class:`ScriptDataError`, which says where (``classify[1].tool_call``)
and what the form takes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .._core.suggest import did_you_mean
from ..errors import ScriptDataError, UsageError
from . import _misbehaving as misbehaving
from ._replies import Reply, embedding, error, reply, tool_call

__all__ = ["MISBEHAVIOURS", "REPLY_KEYS", "ScriptDataError", "replies_from_data", "reply_from_data"]

REPLY_KEYS: dict[str, tuple[str, ...]] = {
    "text": ("text", "input_tokens", "output_tokens", "reasoning_tokens", "finish_reason", "model", "cost",
             "reasoning", "refusal", "chunks", "chunk_delay", "break_after"),
    "error": ("error", "message"),
    "tool_call": ("tool_call", "arguments", "id", "input_tokens", "output_tokens", "cost"),
    "embedding": ("embedding", "input_tokens", "model", "cost"),
    "misbehave": ("misbehave", "tool", "arguments", "raw_arguments", "text", "vary"),
}
MISBEHAVIOURS = ("never_finishes", "repeats", "calls_unknown_tool", "invalid_call", "claims_done")
_NEEDS_TOOL = ("never_finishes", "repeats", "invalid_call")


def replies_from_data(data: Any, *, where: str = "script") -> dict[str, Reply | list[Reply]]:
    """Step id -> reply (or list of replies), each read with :func:`reply_from_data`."""
    if not isinstance(data, Mapping):
        raise ScriptDataError(f"expected a mapping of step id to replies, got {type(data).__name__}", where=where,
                              hint="write one key per step: {classify: bug, answer: [first, second]}")
    replies: dict[str, Reply | list[Reply]] = {}
    for step_id, value in data.items():
        at = f"{where}.{step_id}"
        if isinstance(value, list):
            replies[str(step_id)] = [reply_from_data(item, where=f"{at}[{index}]") for index, item in enumerate(value)]
        else:
            replies[str(step_id)] = reply_from_data(value, where=at)
    return replies


def reply_from_data(item: Any, *, where: str = "reply") -> Reply:
    """One reply from its data form (see the module's table)."""
    if isinstance(item, str):
        return item
    if not isinstance(item, Mapping):
        raise ScriptDataError(f"a scripted reply must be a string or a mapping (got {item!r})", where=where,
                              hint="use 'text', {text: ..., input_tokens: ...}, {error: 429} or "
                                   "{tool_call: name, arguments: {}}")
    kind = next((key for key in ("error", "tool_call", "embedding", "misbehave") if key in item), "text")
    _check_keys(item, kind, where)
    if kind == "error":
        return _error(item, where)
    if kind == "tool_call":
        return _tool_call(item, where)
    if kind == "embedding":
        return _embedding(item, where)
    if kind == "misbehave":
        return _misbehaving(item, where)
    try:
        return reply(**{str(key): value for key, value in item.items()})
    except UsageError as exc:
        if (stream := getattr(exc, "stream_argument", None)) is None:
            raise ScriptDataError(f"not a valid reply ({exc})", where=where) from None
        name, value, accepted, fix = stream  # a stream key: named where it is, in the script's own words
        raise ScriptDataError(f"'{name}' got {value!r}; it takes {accepted}", where=f"{where}.{name}",
                              hint=fix) from None
    except (TypeError, ValueError) as exc:
        raise ScriptDataError(f"not a valid reply ({exc})", where=where) from None


def _check_keys(item: Mapping[str, Any], kind: str, where: str) -> None:
    allowed = REPLY_KEYS[kind]
    for key in item:
        if key not in allowed:
            hint = did_you_mean(str(key), allowed) or did_you_mean(str(key), [k for k in REPLY_KEYS if k != kind])
            raise ScriptDataError(f"unknown key '{key}' in a {kind} reply", where=f"{where}.{key}",
                                  hint=(hint + " " if hint else "") + f"a {kind} reply takes: {', '.join(allowed)}.")


def _arguments(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    arguments = item.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        raise ScriptDataError("'arguments' must be a mapping", where=f"{where}.arguments")
    return dict(arguments)


def _error(item: Mapping[str, Any], where: str) -> Reply:
    status = item["error"]
    if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
        raise ScriptDataError(f"'error' must be an HTTP status number or null (got {status!r})", where=f"{where}.error")
    return error(status, str(item.get("message", "")))


def _tool_call(item: Mapping[str, Any], where: str) -> Reply:
    call_id = {"call_id": str(item["id"])} if "id" in item else {}
    made = tool_call(str(item["tool_call"]), **call_id, **_arguments(item, where))
    if not any(key in item for key in ("input_tokens", "output_tokens", "cost")):
        return made
    try:  # the call's usage and cost, as a text reply carries them (an agent's budget counts them)
        usage = reply(input_tokens=item.get("input_tokens", 0), output_tokens=item.get("output_tokens", 0),
                      cost=item.get("cost"))
    except (TypeError, ValueError) as exc:
        raise ScriptDataError(f"not a valid tool call reply ({exc})", where=where) from None
    return dataclasses.replace(made, usage=usage.usage, cost=usage.cost)


def _embedding(item: Mapping[str, Any], where: str) -> Reply:
    vectors = item["embedding"]
    if not isinstance(vectors, list) or not all(isinstance(vector, list) for vector in vectors):
        raise ScriptDataError("'embedding' must be a list of vectors (lists of numbers)", where=f"{where}.embedding")
    try:
        return embedding(vectors, input_tokens=int(item.get("input_tokens", 0)), model=item.get("model"),
                         cost=item.get("cost"))
    except (TypeError, ValueError) as exc:
        raise ScriptDataError(f"not a valid embedding ({exc})", where=f"{where}.embedding") from None


def _misbehaving(item: Mapping[str, Any], where: str) -> Reply:
    kind = item["misbehave"]
    if kind not in MISBEHAVIOURS:
        hint = did_you_mean(str(kind), MISBEHAVIOURS)
        raise ScriptDataError(f"unknown misbehaviour {kind!r}", where=f"{where}.misbehave",
                              hint=(hint + " " if hint else "") + f"use one of: {', '.join(MISBEHAVIOURS)}.")
    if kind in _NEEDS_TOOL and "tool" not in item:
        raise ScriptDataError(f"misbehaviour '{kind}' needs 'tool'", where=f"{where}.tool")
    arguments = _arguments(item, where)
    if kind == "claims_done":
        return misbehaving.claims_done(item["text"]) if "text" in item else misbehaving.claims_done()
    if kind == "calls_unknown_tool":
        return misbehaving.calls_unknown_tool(item.get("tool", "delete_all_records"), **arguments)
    if kind == "invalid_call":
        raw = {"raw_arguments": item["raw_arguments"]} if "raw_arguments" in item else {}
        return misbehaving.invalid_call(item["tool"], **raw)
    if kind == "never_finishes" and "vary" in item:  # the argument that takes the turn's number
        return misbehaving.never_finishes(item["tool"], vary=str(item["vary"]), **arguments)
    made: Reply = getattr(misbehaving, kind)(item["tool"], **arguments)
    return made
