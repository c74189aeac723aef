"""The agent loop: the model proposes, code checks, budgets are checked before every spend.

One step of the loop is one model call. Before it, the loop stops on the
first budget that is used up (``max_steps`` model calls, ``max_seconds`` on
the run's clock, ``max_cost_usd`` as a worst case: spent so far, plus the next
request's input estimate, plus its whole output allowance).

The reply is a proposal. A reply without tool calls proposes a final answer,
which ends the loop as ``done`` if it is not empty, with ``require_evidence``
comes after at least one successful tool run (else ``unsupported_answer``: a
claim of being done that nothing supports), and, with an ``output_schema``,
parses and fits it. Each tool call is checked in code, in
this order, and the first failing check gives its code:

============== =====================================================================
``not_allowed`` the tool is outside the agent's allowlist, or doesn't exist (same answer)
``invalid_json`` the arguments aren't a JSON object
``invalid_arguments`` the arguments don't fit the tool's parameters
``repeated_call`` the same tool with the same arguments already ran: the loop stops
``needs_approval`` the tool is in ``approval_required``: the run pauses
``ok``          the tool runs
============== =====================================================================

Rejections and tool results go back to the model as observations. A step in
which nothing ran successfully (every call rejected or failed, or the answer
refused) counts towards ``max_stuck``; a step with a successful tool run
resets the count.

Every stop has one of the names in :data:`STOP_REASONS`, written as the step's
``finish_reason`` and as an ``agent_stop`` trace event. A budget stop fails the
step unless the agent sets ``on_budget: succeed``; ``done`` succeeds;
``needs_approval`` pauses the run; the others fail the step (``cancelled``
cancels the run).

The trace gets one event per decision: ``agent_proposal``, ``agent_check``
(with its ``code``), ``tool_call`` (a tool that ran), ``agent_observation``
and ``agent_stop``, plus a ``provider_call`` per model call for tokens and cost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._core.types import LLMRequest, LLMResponse, Message, ToolCall, ToolSpec, Usage
from ...errors import AgentStopped, StepError, render_message
from ...tools._registry import Tool
from ...tools._schema import validate_against
from .._evaluate.templates import render
from .._format.fallbacks import fallbacks_of
from .._format.model import AgentDefinition, AgentStep, RetryPolicy, ToolDeclaration
from .._outcome.pricing import cost_of
from .._outcome.step_context import StepContext, StepOutcome
from .fallback import with_fallbacks
from .refusal import refusals_raise
from .retry import call_with_retries
from .tool_loop import declared_tools, execute_call, parse_arguments

__all__ = [
    "BUDGET_REASONS",
    "CHECK_CODES",
    "DEFAULT_OUTPUT_ALLOWANCE",
    "STOP_REASONS",
    "AgentLoop",
    "AgentPaused",
    "AgentSnapshot",
    "AgentStopped",
    "estimate_tokens",
]

STOP_REASONS = (
    "done", "step_budget", "time_budget", "cost_budget", "repeated_call", "stuck", "needs_approval", "denied",
    "cancelled",
)
BUDGET_REASONS = frozenset({"step_budget", "time_budget", "cost_budget"})
CHECK_CODES = (
    "ok", "not_allowed", "invalid_json", "invalid_arguments", "repeated_call", "needs_approval", "empty_answer",
    "unsupported_answer", "invalid_output",
)
DEFAULT_OUTPUT_ALLOWANCE = 4096  # tokens assumed for a reply when the agent sets no max_tokens
_SHOWN = 300  # characters of a proposal or observation kept in a trace event


@dataclass
class AgentSnapshot:
    """Everything the loop needs to go on later: saved in the checkpoint when the run pauses."""

    messages: list[Message] = field(default_factory=list)
    steps: int = 0
    seen: list[str] = field(default_factory=list)
    stuck: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    elapsed: float = 0.0
    last_text: str = ""
    pending: list[ToolCall] = field(default_factory=list)  # the call awaiting approval, then the reply's rest
    progress: bool = False  # whether a tool ran successfully in the current step
    succeeded: int = 0  # successful tool runs of the whole loop: the evidence require_evidence asks for

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": [message.model_dump(mode="json") for message in self.messages],
            "steps": self.steps, "seen": list(self.seen), "stuck": self.stuck,
            "usage": self.usage.model_dump(), "cost_usd": self.cost_usd, "elapsed": self.elapsed,
            "last_text": self.last_text, "pending": [call.model_dump() for call in self.pending],
            "progress": self.progress, "succeeded": self.succeeded,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentSnapshot:
        return cls(
            messages=[Message.model_validate(item) for item in data.get("messages", [])],
            steps=int(data.get("steps", 0)), seen=list(data.get("seen", [])), stuck=int(data.get("stuck", 0)),
            usage=Usage.model_validate(data.get("usage", {})), cost_usd=float(data.get("cost_usd", 0.0)),
            elapsed=float(data.get("elapsed", 0.0)), last_text=str(data.get("last_text", "")),
            pending=[ToolCall.model_validate(item) for item in data.get("pending", [])],
            progress=bool(data.get("progress", False)), succeeded=int(data.get("succeeded", 0)),
        )


@dataclass
class AgentPaused:
    """The loop stopped at a call that needs approval; ``snapshot`` holds the pending call."""

    snapshot: AgentSnapshot
    call: ToolCall


def estimate_tokens(request: LLMRequest) -> int:
    """A rough input size: one token per four characters, plus a few per message and the tool specs."""
    chars = 0
    for message in request.messages:
        chars += len(message.content or "") + sum(len(call.name) + len(call.arguments) for call in message.tool_calls)
        chars += 16  # role, name and framing
    chars += sum(len(json.dumps(spec.model_dump(), sort_keys=True)) for spec in request.tools)
    return max(1, chars // 4)


def fingerprint(name: str, arguments: Mapping[str, Any]) -> str:
    """The same tool with the same arguments, whatever their order or spacing, gives the same text."""
    return f"{name}:{json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(',', ':'))}"


class AgentLoop:
    """One agent step's loop. :meth:`run` starts it; :meth:`resume` continues it after a pause."""

    def __init__(self, step: AgentStep, ctx: StepContext, agent: AgentDefinition,
                 first_messages: tuple[Message, ...] | None = None) -> None:
        self.step = step
        self.first_messages = first_messages  # a conversation's turns, instead of instructions + prompt
        self.ctx = ctx
        self.agent = agent
        self.model = agent.model or ctx.workflow.config.model or ""
        if not self.model:
            raise StepError(
                render_message(f"agent '{step.agent}' of step '{step.id}' has no model.",
                               hint="set 'model' on the agent "
                                    "or 'config.model'.", inline=True), code="no_model",
            )
        if ctx.provider is None:
            raise StepError(render_message("no provider was given for this run.",
                                           hint="pass provider=Scripted({...}).", inline=True),
                            code="no_provider")
        self.specs, self.tools = self._tools()
        self.snapshot = AgentSnapshot()
        self.start = ctx.clock.now()
        self.answered_by: tuple[str | None, str | None] = (None, None)

    # -- setup ----------------------------------------------------------------------------------------

    def _tools(self) -> tuple[tuple[ToolSpec, ...], dict[str, Tool]]:
        registry = self.ctx.tools
        declared = [item if isinstance(item, ToolDeclaration) else ToolDeclaration(name=item)
                    for item in self.agent.tools]
        missing = [item.name for item in declared if item.name not in registry]
        if missing:
            raise StepError(
                render_message(
                    f"agent '{self.step.agent}' lists tool(s) that are not registered: {', '.join(missing)}.",
                    hint="register them (run_workflow(tools=[...]) or the agentloom fixture), or remove them "
                         "from the agent's 'tools:'.", inline=True), code="unknown_tool",
            )
        return declared_tools(declared, registry)

    def _first_messages(self) -> list[Message]:
        state, missing = self.ctx.state, self.ctx.missing_key
        messages = []
        if self.agent.instructions:
            messages.append(Message(role="system", content=render(self.agent.instructions, state, on_missing=missing)))
        messages.append(Message(role="user", content=render(self.step.prompt, state, on_missing=missing)))
        return messages

    # -- entry points ---------------------------------------------------------------------------------

    async def run(self) -> StepOutcome | AgentPaused:
        first = list(self.first_messages) if self.first_messages is not None else self._first_messages()
        self.snapshot = AgentSnapshot(messages=first)
        return await self._loop()

    async def resume(self, snapshot: AgentSnapshot, decision: str | None) -> StepOutcome | AgentPaused:
        """Continue after a pause: ``approved`` runs the pending call, ``rejected`` stops as ``denied``."""
        self.snapshot = snapshot
        self.start = self.ctx.clock.now() - snapshot.elapsed
        self.ctx.usage, self.ctx.cost_usd = snapshot.usage, snapshot.cost_usd  # spent before the pause
        call, rest = snapshot.pending[0], snapshot.pending[1:]
        if decision is None:
            self._event("agent_waiting", call_id=call.id, tool=call.name)
            return self._pause(call, rest)
        self._event("agent_decision", call_id=call.id, tool=call.name, decision=decision)
        if decision == "rejected":
            return self._stop("denied", f"the call to '{call.name}' was rejected by a person")
        if decision == "cancelled":
            return self._stop("cancelled", "the run was cancelled while the call waited for approval")
        snapshot.pending = []
        arguments, _ = parse_arguments(call.arguments)
        await self._execute(call, arguments or {})
        outcome = await self._calls(rest)
        if outcome is not None:
            return outcome
        stopped = self._after_step()
        if stopped is not None:
            return stopped
        return await self._loop()

    # -- the loop -------------------------------------------------------------------------------------

    async def _loop(self) -> StepOutcome | AgentPaused:
        while True:
            request = self._request()
            reason = self._over_budget(request)
            if reason:
                return self._stop(reason, self._budget_message(reason))
            self.snapshot.steps += 1
            self.snapshot.progress = False
            response = await self._call(request.model_copy(update={"turn": self.snapshot.steps}))
            text = response.text or ""
            self.snapshot.last_text = text
            calls = list(response.tool_calls)
            self._event("agent_proposal", text=text[:_SHOWN],
                        calls=[{"id": c.id, "tool": c.name, "args": c.arguments[:_SHOWN]} for c in calls])
            if not calls:
                done = self._answer(text)
                if done is not None:
                    return done
            else:
                blocks = response.thinking_blocks if request.thinking is not None else ()  # Anthropic wants them
                self.snapshot.messages.append(Message(role="assistant", content=text or None, tool_calls=tuple(calls),
                                                      thinking_blocks=blocks))
                outcome = await self._calls(calls)
                if outcome is not None:
                    return outcome
            stopped = self._after_step()
            if stopped is not None:
                return stopped

    def _request(self) -> LLMRequest:
        """The next call: the agent's settings, its thinking (the step's, else the agent's) on every turn, and
        an ``output_schema`` sent natively (``response_format``, mapped by each adapter) beside the tools."""
        params: dict[str, Any] = {}
        if self.agent.max_tokens is not None:
            params["max_tokens"] = self.agent.max_tokens
        if self.agent.temperature is not None:
            params["temperature"] = self.agent.temperature
        if self.agent.output_schema is not None:
            name = re.sub(r"[^A-Za-z0-9_-]", "_", self.step.agent)[:64] or "output"
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": name, "schema": dict(self.agent.output_schema), "strict": False}}
        thinking = self.step.thinking if self.step.thinking is not None else self.agent.thinking
        return LLMRequest(
            step_id=self.step.id, model=self.model, messages=tuple(self.snapshot.messages), params=params,
            tools=self.specs, tool_choice="auto" if self.specs else None, stream=False,
            provider=self.ctx.workflow.config.provider, turn=self.snapshot.steps + 1,
            thinking=thinking if thinking is not None and thinking.enabled else None,
        )

    def _over_budget(self, request: LLMRequest) -> str | None:
        agent, snap = self.agent, self.snapshot
        if snap.steps >= agent.max_steps:
            return "step_budget"
        if agent.max_seconds is not None and self._elapsed() >= agent.max_seconds:
            return "time_budget"
        if agent.max_cost_usd is not None:
            allowance = agent.max_tokens or DEFAULT_OUTPUT_ALLOWANCE
            worst = cost_of(self.model, Usage(input_tokens=estimate_tokens(request), output_tokens=allowance)) or 0.0
            if snap.cost_usd + worst > agent.max_cost_usd:
                return "cost_budget"
        return None

    def _budget_message(self, reason: str) -> str:
        agent, snap = self.agent, self.snapshot
        if reason == "step_budget":
            return f"max_steps ({agent.max_steps}) model calls made"
        if reason == "time_budget":
            return f"max_seconds ({agent.max_seconds:g}) reached after {self._elapsed():g}s"
        return (f"the next call could take spend past max_cost_usd ({agent.max_cost_usd:g}); "
                f"spent ${snap.cost_usd:.6f}")

    def _elapsed(self) -> float:
        return self.ctx.clock.now() - self.start

    async def _call(self, request: LLMRequest) -> LLMResponse:
        """One model call, retried per the step's retry policy (the loop itself is never re-run)."""
        provider = self.ctx.provider
        assert provider is not None

        chain = fallbacks_of(self.step, self.ctx.workflow.config, request.model)
        call_model = refusals_raise(self.ctx, with_fallbacks(self.ctx, chain, provider.complete))

        async def attempt_call(attempt: int) -> LLMResponse:
            return await call_model(request.model_copy(update={"attempt": attempt}))

        def give_up(error: Exception, attempt: int, policy: RetryPolicy, retryable: bool) -> StepError:
            return StepError(f"{error} (model call {self.snapshot.steps}, attempt {attempt})",
                             code=getattr(error, "code", "provider_error"))

        policy = self.ctx.retry_policy(self.step.retry)
        response, attempt = await call_with_retries(self.ctx, policy, self.step.timeout, attempt_call, give_up=give_up)
        self._count(response, attempt)
        return response

    def _count(self, response: LLMResponse, attempt: int) -> None:
        model = response.model or self.model
        cost = response.cost if response.cost is not None else cost_of(model, response.usage)
        snap = self.snapshot
        snap.usage = snap.usage + response.usage
        snap.cost_usd = round(snap.cost_usd + (cost or 0.0), 10)
        self.ctx.usage, self.ctx.cost_usd = snap.usage, snap.cost_usd
        self.answered_by = (model, response.provider)
        self.ctx.event(
            "provider_call", attempt, turn=snap.steps, model=model, provider=response.provider,
            input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens,
            reasoning_tokens=response.usage.reasoning_tokens, **response.usage.cache_counts(),
            finish_reason=response.finish_reason,
            cost_usd=cost or 0.0, priced=cost is not None, tool_calls=[call.name for call in response.tool_calls],
        )

    # -- checking proposals ---------------------------------------------------------------------------

    def _answer(self, text: str) -> StepOutcome | None:
        """A final answer: ``done`` if it holds up, else a rejection the model reads."""
        why: str | None
        if not text.strip():
            code, why, value = "empty_answer", "the reply has neither tool calls nor an answer", None
        elif self.agent.require_evidence and not self.snapshot.succeeded:
            code, value = "unsupported_answer", None
            why = "no tool has run successfully yet, so nothing supports this answer (require_evidence)"
        elif self.agent.output_schema is not None:
            value, why = _parse_output(text, self.agent.output_schema)
            code = "ok" if why is None else "invalid_output"
        else:
            code, why, value = "ok", None, text
        self._event("agent_check", about="answer", code=code, **({"detail": why} if why else {}))
        if code == "ok":
            return self._stop("done", "final answer", value=value)
        observation = f"Rejected ({code}): {why}. Answer again, or call a tool."
        self.snapshot.messages.append(Message(role="assistant", content=text))
        self.snapshot.messages.append(Message(role="user", content=observation))
        self._event("agent_observation", ok=False, text=observation[:_SHOWN])
        return None

    def _check(self, call: ToolCall) -> tuple[str, str, dict[str, Any] | None]:
        """The code of one proposed call, a line for the model, and the parsed arguments."""
        tool = self.tools.get(call.name)
        if tool is None:  # outside the allowlist or nonexistent: the same answer either way
            return "not_allowed", "that is not a tool you can use", None
        arguments, problem = parse_arguments(call.arguments)
        if arguments is None:
            return "invalid_json", problem or "invalid arguments", None
        parameters = next(spec.parameters for spec in self.specs if spec.name == call.name)
        problems = validate_against(parameters, arguments)
        if problems:
            return "invalid_arguments", "; ".join(problems), arguments
        if fingerprint(call.name, arguments) in self.snapshot.seen:
            return "repeated_call", f"'{call.name}' already ran with these arguments", arguments
        if call.name in self.agent.approval_required:
            return "needs_approval", f"'{call.name}' needs a person's approval", arguments
        return "ok", "", arguments

    async def _calls(self, calls: list[ToolCall]) -> StepOutcome | AgentPaused | None:
        """Check and run a reply's calls in order; stop or pause as soon as one says so."""
        for index, call in enumerate(calls):
            code, why, arguments = self._check(call)
            self._event("agent_check", about="call", call_id=call.id, tool=call.name, code=code,
                        **({"detail": why} if why else {}))
            if code == "repeated_call":
                return self._stop("repeated_call", f"{why} (call {call.id})")
            if code == "needs_approval":
                return self._pause(call, calls[index + 1:])
            if code == "ok":
                await self._execute(call, arguments or {})
            else:
                self._observe(call, False, f"Rejected ({code}): {why}.")
        return None

    async def _execute(self, call: ToolCall, arguments: dict[str, Any]) -> None:
        self.snapshot.seen.append(fingerprint(call.name, arguments))
        run = await execute_call(call, self.tools, unknown_message="that is not a tool you can use",
                                 turn=self.snapshot.steps)
        self.ctx.event("tool_call", self.ctx.attempts or 1, turn=self.snapshot.steps, call_id=call.id,
                       tool=call.name, args=arguments, ok=run.ok, **({} if run.ok else {"code": run.code}))
        if run.ok:
            self.snapshot.progress = True
            self.snapshot.succeeded += 1
        self._observe(call, run.ok, run.content)

    def _observe(self, call: ToolCall, ok: bool, text: str) -> None:
        self.snapshot.messages.append(Message(role="tool", content=text, tool_call_id=call.id, name=call.name))
        self._event("agent_observation", call_id=call.id, tool=call.name, ok=ok, text=text[:_SHOWN])

    def _after_step(self) -> StepOutcome | None:
        snap = self.snapshot
        snap.stuck = 0 if snap.progress else snap.stuck + 1
        if snap.stuck >= self.agent.max_stuck:
            return self._stop("stuck", f"{snap.stuck} steps in a row without a successful tool run or answer")
        return None

    # -- stopping -------------------------------------------------------------------------------------

    def _event(self, event: str, **data: Any) -> None:
        self.ctx.event(event, None, step=self.snapshot.steps, **data)

    def _pause(self, call: ToolCall, rest: list[ToolCall]) -> AgentPaused:
        self.snapshot.pending = [call, *rest]
        self.snapshot.elapsed = self._elapsed()
        self._event("agent_stop", reason="needs_approval", call_id=call.id, tool=call.name)
        return AgentPaused(self.snapshot, call)

    def _stop(self, reason: str, why: str, *, value: Any = None) -> StepOutcome:
        snap = self.snapshot
        self._event("agent_stop", reason=reason, detail=why)
        model, provider = self.answered_by
        if reason == "done" or (reason in BUDGET_REASONS and self.agent.on_budget == "succeed"):
            return StepOutcome(
                value=value if reason == "done" else snap.last_text, attempts=max(self.ctx.attempts, 1),
                finish_reason=reason, usage=snap.usage, cost_usd=snap.cost_usd, model=model, provider=provider,
            )
        hint = {
            "step_budget": "raise max_steps, or set on_budget: succeed to keep the last reply",
            "time_budget": "raise max_seconds, or set on_budget: succeed",
            "cost_budget": "raise max_cost_usd (or lower max_tokens), or set on_budget: succeed",
            "repeated_call": "the model asked for a call that already ran; check the tool's result is useful",
            "stuck": "check the tools and instructions; raise max_stuck to allow more failed steps",
        }.get(reason)
        message = f"agent '{self.step.agent}' stopped: {reason} ({why})"
        raise AgentStopped(render_message(f"{message}.", hint=f"{hint}.", inline=True) if hint else message,
                           reason=reason,
                           usage=snap.usage, cost_usd=snap.cost_usd)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def _parse_output(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """The JSON of a final answer (whole, fenced, or its first ``{...}``), checked against ``schema``."""
    candidates = [text.strip()]
    candidates += [match.strip() for match in _FENCE.findall(text)]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{"): text.rindex("}") + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        problems = validate_against(schema, value)
        return (value, None) if not problems else (None, "the answer does not fit output_schema: "
                                                   + "; ".join(problems))
    return None, "the answer is not JSON, and output_schema needs a JSON value"
