"""``provider: mock``: replies read from a responses file, the format upstream ``agentloom`` records.

A workflow whose ``config.provider`` is ``mock`` runs against :class:`MockProvider`
instead of a model (``run_workflow`` without ``provider=``, the ``agentloom``
fixture, ``agentloom run``). Its settings are upstream's, under ``config``:

- ``responses_file``: a JSON or YAML mapping, relative to the workflow file's
  folder (upstream reads it from the current directory). Keys starting with
  ``_`` (``_version``) are ignored. An entry is found by the step id (a child
  step of a subworkflow by ``<parent step>/<child step>``, then by its own id),
  else by the SHA-256 of the request's messages as upstream 0.4 recorded them.
  An entry holds ``content``, and optionally ``model``, ``provider``,
  ``usage`` (``prompt_tokens``, ``completion_tokens``), ``cost_usd``,
  ``finish_reason``, ``latency_ms``, ``tool_calls`` (``id``, ``name``,
  ``arguments``) or ``embeddings``; a plain string is its ``content``. A list
  of entries is played one per call, the last one repeating.
- ``default_response``: the text of a call the file has no entry for.
  Without it such a call fails its step (code ``script_exhausted``, never
  retried), as a :class:`~._scripted.Scripted` provider does: never a canned reply.
- ``latency_model`` (``constant``, ``normal``, ``replay``) and ``latency_ms``:
  each call sleeps on the step's clock, so under a virtual clock latency is
  virtual too. ``normal`` draws from a normal distribution seeded by the step
  id and call number (repeatable); ``replay`` uses the entry's own
  ``latency_ms`` when it has one.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from .._core.clock import current_clock
from .._core.types import EmbedRequest, EmbedResponse, LLMRequest, LLMResponse, ToolCall, Usage, emit_text
from ..errors import DataReadError, ScriptError, WorkflowError, render_message

__all__ = ["MockProvider", "prompt_hash"]

LatencyModel = Literal["constant", "normal", "replay"]


def prompt_hash(request: LLMRequest) -> str:
    """Upstream 0.4's key for a call: SHA-256 of the JSON of its ``role``/``content`` messages."""
    messages = [{"role": message.role, "content": message.content} for message in request.messages]
    return hashlib.sha256(json.dumps(messages, sort_keys=True, default=str).encode()).hexdigest()


class MockProvider:
    """Replies from recorded entries keyed by step id or prompt hash (see the module docstring)."""

    def __init__(self, responses: Mapping[str, Any] | None = None, *, default_response: str | None = None,
                 latency_model: LatencyModel = "constant", latency_ms: float = 0.0,
                 source: str = "<responses>") -> None:
        self.responses = {key: value for key, value in (responses or {}).items() if not str(key).startswith("_")}
        self.default_response = default_response
        self.latency_model = latency_model
        self.latency_ms = latency_ms
        self.source = source
        self.calls: list[dict[str, Any]] = []  # step_id, matched_by (step_id, prompt_hash or default), turn
        self._turns: dict[str, int] = {}

    @classmethod
    def from_config(cls, config: Any, base_dir: Path) -> MockProvider:
        """The mock a workflow's ``config`` describes; its ``responses_file`` is read now."""
        responses: dict[str, Any] = {}
        source = "<no responses_file>"
        if config.responses_file:
            path = (base_dir / Path(config.responses_file).expanduser()).resolve()
            responses, source = _read(path, config.responses_file), str(path)
        return cls(responses, default_response=config.default_response, latency_model=config.latency_model,
                   latency_ms=config.latency_ms, source=source)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        key, matched_by = self._key(request.step_id, prompt_hash(request))
        if key is None:
            if self.default_response is None:
                raise self._miss(request.step_id)
            entry: dict[str, Any] = {"content": self.default_response}
            matched_by = "default"
        else:
            entry = self._next_entry(key)
        self.calls.append({"step_id": request.step_id, "matched_by": matched_by})
        await self._sleep(request.step_id, entry)
        text = str(entry.get("content") or "")
        if request.stream:
            emit_text(text)
        return LLMResponse(
            text=text, tool_calls=_tool_calls(entry.get("tool_calls")), usage=_usage(entry.get("usage")),
            finish_reason=str(entry.get("finish_reason") or ("tool_calls" if entry.get("tool_calls") else "stop")),
            model=str(entry.get("model") or request.model), provider=str(entry.get("provider") or "mock"),
            cost=float(entry.get("cost_usd") or 0.0),
        )

    async def embed(self, request: EmbedRequest) -> EmbedResponse:
        key, matched_by = self._key(request.step_id, None)
        entry = self._next_entry(key) if key is not None else None
        if entry is None or not isinstance(entry.get("embeddings"), list):
            raise self._miss(request.step_id, what="an 'embeddings' entry")
        self.calls.append({"step_id": request.step_id, "matched_by": matched_by})
        await self._sleep(request.step_id, entry)
        return EmbedResponse(
            vectors=[[float(x) for x in vector] for vector in entry["embeddings"]], usage=_usage(entry.get("usage")),
            model=str(entry.get("model") or request.model), provider=str(entry.get("provider") or "mock"),
            cost=float(entry.get("cost_usd") or 0.0),
        )

    # -- lookup ---------------------------------------------------------------------------------------------

    def _key(self, step_id: str, hashed: str | None) -> tuple[str | None, str]:
        own = step_id.rsplit("/", 1)[-1]
        for key in (step_id, own):
            if key in self.responses:
                return key, "step_id"
        if hashed is not None and hashed in self.responses:
            return hashed, "prompt_hash"
        return None, "none"

    def _next_entry(self, key: str) -> dict[str, Any]:
        value = self.responses[key]
        if isinstance(value, list):
            turn = self._turns.get(key, 0)
            self._turns[key] = turn + 1
            value = value[min(turn, len(value) - 1)] if value else {}
        if isinstance(value, str):
            return {"content": value}
        if not isinstance(value, dict):
            raise ScriptError(render_message(
                    f"mock responses entry {key!r} in {self.source} is a {type(value).__name__}, not a "
                    "mapping with 'content'.",
                    hint="write it as {content: \"...\"}.", inline=True))
        return value

    def _miss(self, step_id: str, what: str = "a reply") -> ScriptError:
        known = ", ".join(sorted(key for key in self.responses if len(key) != 64)) or "none"
        return ScriptError(render_message(
            f"provider: mock has {what} for step '{step_id}' neither by step id nor by prompt hash "
            f"(responses file {self.source}; step ids in it: {known}).",
            hint=f"add an entry keyed '{step_id.rsplit('/', 1)[-1]}' to the responses file, or set "
            "config.default_response.", inline=True,
        ))

    async def _sleep(self, step_id: str, entry: Mapping[str, Any]) -> None:
        milliseconds = self.latency_ms
        if self.latency_model == "replay" and isinstance(entry.get("latency_ms"), int | float):
            milliseconds = float(entry["latency_ms"])
        elif self.latency_model == "normal":
            number = sum(1 for call in self.calls if call["step_id"] == step_id)
            draw = random.Random(f"{step_id}:{number}").gauss(milliseconds, max(0.1 * milliseconds, 1.0))
            milliseconds = max(0.0, draw)
        if milliseconds > 0:
            await current_clock().sleep(milliseconds / 1000.0)


def _read(path: Path, written: str) -> dict[str, Any]:
    from .._core.yaml_io import read_yaml_file

    def refused(problem: str, fix: str) -> WorkflowError:
        return WorkflowError(f"config.responses_file {problem}", file=str(path), field="config.responses_file",
                             hint=fix)

    try:
        data = read_yaml_file(path)  # JSON is YAML too; duplicate keys and alias bombs refused
    except FileNotFoundError:
        raise refused(f"'{written}' does not exist ({path})", "give the path of the recording, relative to "
                      "the workflow file's folder, or remove responses_file and set default_response.") from None
    except (OSError, DataReadError) as exc:
        raise refused(f"'{written}' cannot be read: {exc}", "give a JSON or YAML file of step id -> reply.") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise refused(f"'{written}' holds a {type(data).__name__}, not a mapping",
                      "write a mapping of step id (or prompt hash) -> reply.")
    return {str(key): value for key, value in data.items()}


def _usage(raw: Any) -> Usage:
    raw = raw if isinstance(raw, dict) else {}
    return Usage(input_tokens=int(raw.get("prompt_tokens") or raw.get("input_tokens") or 0),
                 output_tokens=int(raw.get("completion_tokens") or raw.get("output_tokens") or 0))


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    calls = []
    for index, call in enumerate(raw if isinstance(raw, list) else []):
        arguments = call.get("arguments", {})
        calls.append(ToolCall(
            id=str(call.get("id") or f"call_{index + 1}"), name=str(call.get("name")),
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
        ))
    return tuple(calls)
