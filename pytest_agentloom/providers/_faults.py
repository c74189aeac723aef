"""Fault injection: one model call (or tool call) of a run answered by a fault, everything else as it was.

A fault is written ``TARGET=KIND`` (docs/resilience.md):

- ``TARGET`` is a step id (its first model call), ``step#N`` (the step's Nth model call: retries and
  agent turns count), or ``tool:NAME`` / ``tool:NAME#N`` (the Nth call of a tool); a bare name that is
  a tool of the run and no step is a tool too.
- ``KIND`` for a model call: an HTTP status (``429``, ``500``, ``503``, ``529``, any 400-599),
  ``timeout``, ``malformed_json``, ``refusal``, ``truncated`` or ``stream_break@N``; for a tool call:
  ``timeout`` or ``error``.

Why here, at the provider seam: the engine's retry, fallback, refusal and budget rules then run on the
fault as they would on a real one. Over a cassette a status or a timeout is answered by the HTTP layer
(``replay/_cassette.py`` reads :data:`pending_fault`), built as the provider's own error response, so the
SDK raises its real error; the recording the fault stood in for is not used up, so the retry that
follows replays it. A reply fault (``malformed_json``, ``refusal``, ``truncated``, ``stream_break``)
changes the reply the call got. Each fault leaves a ``fault_injected`` trace event on its step.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from .._core.step_notes import note
from .._core.suggest import did_you_mean
from .._core.types import LLMRequest, LLMResponse, Provider, text_listener
from ..errors import MidStreamError, ProviderError, UsageError, render_message

__all__ = ["MODEL_KINDS", "TOOL_KINDS", "Fault", "FaultingProvider", "PendingFault", "check_faults",
           "parse_faults", "pending_fault", "tool_faults"]

MODEL_KINDS = ("timeout", "malformed_json", "refusal", "truncated", "stream_break@N", "an HTTP status (429, 500, "
               "503, 529, ...)")
TOOL_KINDS = ("timeout", "error")
_NAMED_KINDS = ("timeout", "malformed_json", "refusal", "truncated", "stream_break", "error")
_SPEC = re.compile(r"^(?P<tool>tool:)?(?P<name>[^#=\s]+)(?:#(?P<call>\d+))?=(?P<kind>\S+)$")
_EXAMPLE = "e.g. classify#1=429, draft=malformed_json, tool:lookup=timeout"


@dataclass(frozen=True)
class Fault:
    """One parsed fault: what it targets (``name``, the ``call``-th call) and what it is."""

    spec: str
    name: str
    call: int
    kind: str  # status, timeout, malformed_json, refusal, truncated, stream_break, error
    tool: bool = False  # True: a tool (``tool:`` or resolved by :func:`check_faults`)
    status: int | None = None
    at: int = 0  # stream_break@N: characters let through
    source: str = ""

    @property
    def target(self) -> str:
        return f"{'tool:' if self.tool else ''}{self.name}#{self.call}"

    @property
    def label(self) -> str:
        return str(self.status) if self.kind == "status" else (
            f"stream_break@{self.at}" if self.kind == "stream_break" else self.kind)


def parse_faults(specs: str | Iterable[str] | None, source: str) -> tuple[Fault, ...]:
    """``specs`` (one string, or several; a string may hold several, one a line or comma-separated) as faults.

    A spec that is not ``TARGET=KIND``, or a kind nobody knows, is a :class:`UsageError` naming ``source``.
    """
    if specs is None:
        return ()
    items = [specs] if isinstance(specs, str) else list(specs)
    faults: list[Fault] = []
    for item in items:
        if not isinstance(item, str):
            raise _refused(f"{source}: a fault is a string TARGET=KIND, got {item!r}.",
                                            hint=_EXAMPLE)
        for text in re.split(r"[,\n]", item):
            if text.strip():
                faults.append(_parse_one(text.strip(), source))
    return tuple(faults)


def _parse_one(text: str, source: str) -> Fault:
    match = _SPEC.match(text)
    if match is None:
        raise _refused(f"{source}: fault '{text}' is not TARGET=KIND.",
                                        hint=f"write step=KIND, step#N=KIND or tool:NAME=KIND ({_EXAMPLE})")
    kind_text, call = match["kind"].lower(), int(match["call"] or 1)
    if call < 1:
        raise _refused(f"{source}: fault '{text}' targets call #{call}; calls count from 1.",
                                        hint=f"write {match['name']}#1=...")
    base = Fault(spec=text, name=match["name"], call=call, kind="", tool=bool(match["tool"]), source=source)
    if kind_text.isdigit():
        status = int(kind_text)
        if not 400 <= status <= 599:
            raise _refused(f"{source}: fault '{text}': HTTP status {status} is no error status.",
                                            hint="inject a status from 400 to 599, e.g. 429, 500, 503, 529")
        return replace(base, kind="status", status=status)
    kind, _, at = kind_text.partition("@")
    if kind == "stream_break":
        if not at.isdigit():
            raise _refused(f"{source}: fault '{text}' needs the characters the stream lets "
                                            "through before it breaks.", hint="write stream_break@20")
        return replace(base, kind=kind, at=int(at))
    if kind not in _NAMED_KINDS or at:
        hint = did_you_mean(kind, _NAMED_KINDS)
        raise _refused(
            f"{source}: fault '{text}' has an unknown kind '{match['kind']}'.",
            [("model call kinds", ", ".join(MODEL_KINDS)), ("tool call kinds", ", ".join(TOOL_KINDS))],
            hint=hint or f"use one of those ({_EXAMPLE})")
    return replace(base, kind=kind)


def check_faults(faults: Sequence[Fault], steps: Mapping[str, bool], tools: Iterable[str],
                 where: str) -> tuple[Fault, ...]:
    """``faults`` checked against a workflow: ``steps`` maps each model step's id to whether it streams,
    ``tools`` names the run's tools. A bare name that is a tool and no step becomes a tool fault. An
    unknown target, or a kind its target cannot take, is a :class:`UsageError` with a "did you mean"."""
    tool_names = sorted(set(tools))
    checked = []
    for fault in faults:
        is_tool = fault.tool or (fault.name not in steps and fault.name in tool_names)
        if is_tool:
            if fault.name not in tool_names:
                raise _unknown(fault, "tool", tool_names, where)
            if fault.kind not in TOOL_KINDS:
                raise _refused(
                    f"{fault.source}: fault '{fault.spec}' in {where}: a tool call can't be '{fault.label}'.",
                    hint=f"inject one of {', '.join(TOOL_KINDS)} into tool '{fault.name}'")
            checked.append(replace(fault, tool=True))
            continue
        if fault.name not in steps:
            raise _unknown(fault, "step", sorted(steps), where, also=tool_names)
        if fault.kind == "error":
            raise _refused(
                f"{fault.source}: fault '{fault.spec}' in {where}: 'error' is a tool call's fault.",
                hint="inject an HTTP status (e.g. 500) into a model call")
        if fault.kind == "stream_break" and not steps[fault.name]:
            raise _refused(
                f"{fault.source}: fault '{fault.spec}' in {where}: step '{fault.name}' does not stream.",
                hint=f"set stream: true on step '{fault.name}' (or config.stream), or inject another kind")
        checked.append(fault)
    return tuple(checked)


def _unknown(fault: Fault, what: str, names: list[str], where: str, also: list[str] | None = None) -> UsageError:
    hint = did_you_mean(fault.name, [*names, *(also or [])])
    shown = ", ".join(names) or "(none)"
    context = [("model steps" if what == "step" else "tools", shown)]
    if also:
        context.append(("tools", ", ".join(also)))
    return _refused(
        f"{fault.source}: fault '{fault.spec}' in {where} targets {what} '{fault.name}', which the workflow "
        f"doesn't have.", context, hint=hint or f"name one of its {what}s")


# -- the HTTP layer's part ----------------------------------------------------------------------------------

@dataclass
class PendingFault:
    """A fault waiting for the next HTTP request of the call (a cassette replay answers it); ``taken`` once
    answered, so a fallback provider in the same call gets its recording."""

    fault: Fault
    taken: bool = False

    def message(self) -> str:
        return f"injected fault {self.fault.spec} ({self.fault.source})"


#: The fault of the model call in progress, for the cassette's HTTP layer (set by :class:`FaultingProvider`).
pending_fault: ContextVar[PendingFault | None] = ContextVar("agentloom_pending_fault", default=None)

_HTTP_KINDS = ("status", "timeout")


@dataclass
class FaultingProvider:
    """``inner`` with ``faults`` injected into the model calls they target (see the module docs).

    ``http``: the inner provider's requests are answered by a cassette that answers :data:`pending_fault`
    (a status or timeout then comes from the SDK's real error); otherwise, or when no request reached it,
    the fault is raised here as the provider error the SDK would have raised.
    """

    inner: Provider
    faults: tuple[Fault, ...]
    http: bool = False
    calls: dict[str, int] = field(default_factory=dict)
    injected: list[Fault] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(getattr(self.inner, "name", "faulting"))

    def __getattr__(self, name: str) -> Any:  # a gateway's fallbacks, a scripted provider's unused replies
        if name in ("inner", "faults", "http", "calls", "injected"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def embed(self, request: Any) -> Any:
        return await self.inner.embed(request)  # type: ignore[attr-defined]  # only when the inner embeds

    async def complete(self, request: LLMRequest) -> LLMResponse:
        number = self.calls[request.step_id] = self.calls.get(request.step_id, 0) + 1
        fault = next((each for each in self.faults
                      if not each.tool and each.name == request.step_id and each.call == number), None)
        if fault is None:
            return await self.inner.complete(request)
        self.injected.append(fault)
        note("fault_injected", target=fault.target, fault=fault.label, spec=fault.spec, source=fault.source,
             turn=request.turn)
        if fault.kind in _HTTP_KINDS:
            return await self._failed_call(fault, request)
        if fault.kind == "stream_break":
            return await self._broken_stream(fault, request)
        return _changed_reply(fault, await self._peeked(fault, request))

    async def _failed_call(self, fault: Fault, request: LLMRequest) -> LLMResponse:
        pending = PendingFault(fault)
        if self.http:
            token = pending_fault.set(pending)
            try:
                await self.inner.complete(request)
            finally:
                pending_fault.reset(token)
        if not pending.taken:  # no cassette answered it: raise what the SDK would have
            if fault.kind == "timeout":
                raise ProviderError(f"the request timed out ({pending.message()})", status=None, provider=self.name)
            raise ProviderError(f"HTTP {fault.status} ({pending.message()})", status=fault.status,
                                provider=self.name)
        raise AssertionError("unreachable: the HTTP layer answered the fault with an error")  # pragma: no cover

    async def _peeked(self, fault: Fault, request: LLMRequest) -> LLMResponse:
        """The reply the call gets, its recording left for a retry (over a cassette)."""
        if not self.http:
            return await self.inner.complete(request)
        token = pending_fault.set(PendingFault(fault))
        try:
            return await self.inner.complete(request)
        finally:
            pending_fault.reset(token)

    async def _broken_stream(self, fault: Fault, request: LLMRequest) -> LLMResponse:
        """The stream's first ``fault.at`` characters reach the listener, then it breaks (``MidStreamError``)."""
        outer = text_listener.get()
        passed: list[str] = []

        def listen(chunk: str) -> None:
            room = fault.at - sum(map(len, passed))
            if room > 0:
                passed.append(chunk[:room])
                if outer is not None:
                    outer(chunk[:room])

        token = text_listener.set(listen)
        try:
            response = await self._peeked(fault, request)
        finally:
            text_listener.reset(token)
        rest = response.text[sum(map(len, passed)):fault.at]
        if rest:  # a provider that does not stream (a scripted one) sent its text at once
            listen(rest)
        raise MidStreamError(f"the stream broke after {len(''.join(passed))} characters "
                             f"(injected fault {fault.spec}, {fault.source})", status=None, provider=self.name)


def _changed_reply(fault: Fault, response: LLMResponse) -> LLMResponse:
    """The reply as the fault makes it: not JSON, a refusal, or cut off at the length limit."""
    text = response.text
    if fault.kind == "malformed_json":
        half = text[: max(1, len(text) // 2)].translate(str.maketrans("", "", "}]"))
        return response.model_copy(update={"text": half + " ...", "tool_calls": ()})
    if fault.kind == "refusal":
        return response.model_copy(update={
            "text": "", "tool_calls": (), "finish_reason": "refusal",
            "refusal": f"I can't help with that. (injected fault {fault.spec})"})
    cut = "max_tokens" if response.finish_reason in ("end_turn", "max_tokens", "stop_sequence") else "length"
    return response.model_copy(update={"text": text[: len(text) // 2], "tool_calls": (), "finish_reason": cut})


# -- tools ----------------------------------------------------------------------------------------------------

def tool_faults(faults: Sequence[Fault]) -> dict[str, Callable[[int], None]]:
    """For each faulted tool, what runs before its ``n``-th call: nothing, or the fault raised
    (``TimeoutError`` or a ``RuntimeError``) with a ``fault_injected`` trace event. The caller (the test
    harness) puts it in front of the tool, which this layer does not know."""
    return {name: _before_call(name, [fault for fault in faults if fault.tool and fault.name == name])
            for name in sorted({fault.name for fault in faults if fault.tool})}


def _before_call(name: str, faults: list[Fault]) -> Callable[[int], None]:
    def before(call: int) -> None:
        for fault in faults:
            if fault.call == call:
                note("fault_injected", target=fault.target, fault=fault.label, spec=fault.spec, source=fault.source)
                text = f"tool '{name}' call {call}: injected fault {fault.spec} ({fault.source})"
                if fault.kind == "timeout":
                    raise TimeoutError(f"timed out ({text})")
                raise RuntimeError(text)

    return before


def _refused(headline: str, context: Sequence[tuple[str, object]] | None = None, *, hint: str) -> UsageError:
    """A :class:`UsageError` that keeps its ``headline`` and ``fix`` apart too, for a scenario table to name
    the row and field in its own form."""
    error = UsageError(render_message(headline, list(context or []), hint=hint))
    error.headline, error.fix = headline, hint  # type: ignore[attr-defined]
    return error
