"""Conversations kept in the state, continued by ``llm_call`` steps (docs/running-workflows.md: Conversations).

A step with ``conversation: state.chat`` reads the conversation under that key,
adds its turn, trims to the budget, sends the whole conversation, and hands
back the conversation with the model's reply added, which the runner writes
together with ``output`` when (and only when) the step succeeds.

Its shape in the state (and how it is read) is in
:mod:`~pytest_agentloom.engine._format.conversation_state`.

Decisions this module makes where the AgentLoom 0.5 format leaves room:

* The budget is checked against an estimate: a quarter token per character of
  content, plus :data:`MESSAGE_OVERHEAD` per message and a little for a name.
  A step's speaker instructions and the summary (sent as a system message)
  count in it; the tail of the conversation the model must answer (the new
  user turn, or the last message without a prompt) is never trimmed.
* "A budget too small to hold the new user turn" means the new user turn
  alone is over ``token_budget``: the step fails before any call.
* With a ``speaker``, the assistant turns of *other* speakers are sent as user
  turns carrying their name, so the model doesn't take them for its own; and
  such a turn may end the conversation of a step without a prompt.
* ``drop_pairs`` drops whole exchanges: a user turn with the replies that
  follow it, up to the next user turn.

Everything here but :func:`open_turn` (which may call the model for a summary)
is a pure function of its arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..._core.state_paths import get_path, parse_path
from ..._core.types import LLMRequest, Message, Usage
from ...errors import ProviderError, StepError, render_message
from .._evaluate.templates import render
from .._format.conversation_state import Conversation, conversation_key, read_conversation
from .._outcome.pricing import cost_of

__all__ = [
    "MESSAGE_OVERHEAD",
    "Trimmed",
    "Turn",
    "close_turn",
    "estimate_tokens",
    "open_turn",
    "summary_message",
    "trim",
    "wire_messages",
]

MESSAGE_OVERHEAD = 4  # tokens per message for its role and framing, in the estimate
SUMMARY_INSTRUCTIONS = (
    "You keep a running summary of a conversation. Merge the summary so far with the messages given, and "
    "answer with the new summary only: short plain text that keeps names, facts, decisions and open questions."
)


# -- counting and trimming ---------------------------------------------------------------------------------


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """A rough token count: about one per four characters, plus a little for the role and the name."""
    content = message.get("content") or ""
    tokens = (len(content) + 3) // 4 + MESSAGE_OVERHEAD
    name = message.get("name")
    if name:
        tokens += (len(name) + 3) // 4 + 1
    return tokens


def summary_message(summary: str) -> dict[str, Any]:
    """How the summary is sent (and counted): a system message after the conversation's own."""
    return {"role": "system", "content": f"Summary of the earlier conversation:\n{summary}"}


def _leading_system(messages: Sequence[Mapping[str, Any]]) -> int:
    count = 0
    while count < len(messages) and messages[count]["role"] == "system":
        count += 1
    return count


@dataclass(frozen=True)
class Trimmed:
    """What trimming kept, and what it took out (oldest first), for the budget it was given."""

    kept: tuple[dict[str, Any], ...]
    removed: tuple[dict[str, Any], ...] = ()
    over_budget: bool = False


def trim(
    messages: Sequence[dict[str, Any]], *, budget: int | None, policy: str = "drop_oldest",
    fixed_tokens: int = 0, keep_last: int = 1,
) -> Trimmed:
    """Make ``messages`` fit ``budget``, dropping from the oldest after the leading system messages.

    ``fixed_tokens`` is what is sent besides the messages and can't be trimmed
    (the summary, a speaker's instructions); the last ``keep_last`` messages
    are the turn being answered and stay too. When the leading system messages
    and ``fixed_tokens`` alone reach the budget, nothing is removed.
    ``summarize_oldest`` removes like ``drop_oldest``: the caller folds what
    was removed into the summary.
    """
    messages = tuple(messages)
    total = fixed_tokens + sum(estimate_tokens(message) for message in messages)
    if budget is None or total <= budget:
        return Trimmed(kept=messages)
    head = _leading_system(messages)
    floor = fixed_tokens + sum(estimate_tokens(message) for message in messages[:head])
    if floor >= budget:
        return Trimmed(kept=messages, over_budget=True)
    end = max(head, len(messages) - keep_last)  # messages[head:end] may go
    cut = head
    while total > budget and cut < end:
        step = _pair_length(messages, cut, end) if policy == "drop_pairs" else 1
        total -= sum(estimate_tokens(message) for message in messages[cut:cut + step])
        cut += step
    return Trimmed(kept=messages[:head] + messages[cut:], removed=messages[head:cut], over_budget=total > budget)


def _pair_length(messages: Sequence[Mapping[str, Any]], start: int, end: int) -> int:
    """A user turn and the replies after it, up to the next user turn (never past ``end``)."""
    stop = start + 1
    while stop < end and messages[stop]["role"] != "user":
        stop += 1
    return stop - start


# -- the messages sent ---------------------------------------------------------------------------------------


def wire_messages(
    messages: Sequence[Mapping[str, Any]], *, summary: str | None = None, speaker: str | None = None,
    speaker_system: str | None = None,
) -> tuple[Message, ...]:
    """The request's messages: leading system messages, the summary, a speaker's instructions, the turns.

    With a speaker, another speaker's assistant turns go as user turns under their name.
    """
    head = _leading_system(messages)
    sent = [_message(message) for message in messages[:head]]
    if summary:
        sent.append(_message(summary_message(summary)))
    if speaker_system is not None:
        sent.append(Message(role="system", content=speaker_system))
    for message in messages[head:]:
        wire = _message(message)
        if speaker is not None and wire.role == "assistant" and wire.name not in (None, speaker):
            wire = wire.model_copy(update={"role": "user"})
        sent.append(wire)
    return tuple(sent)


def _message(message: Mapping[str, Any]) -> Message:
    return Message(role=message["role"], content=message.get("content"), name=message.get("name"),
                   tool_call_id=message.get("tool_call_id"))


def _transcript(messages: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for message in messages:
        who = message.get("name") or message["role"]
        lines.append(f"{who}: {message.get('content') or ''}")
    return "\n".join(lines)


# -- one step's turn ------------------------------------------------------------------------------------------


@dataclass
class Turn:
    """A step's turn in progress: what to send, and the conversation to store once the reply is in."""

    key: str
    conversation: Conversation
    messages: tuple[Message, ...]
    speaker: str | None = None
    usage: Usage = field(default_factory=Usage)  # the summary call's, if one was made
    cost_usd: float = 0.0


async def open_turn(step: Any, ctx: Any, model: str) -> Turn:
    """Read the step's conversation, add its turn, trim it (summarising if asked) and build the request.

    Fails the step at once (``StepError``) on a malformed conversation, a step
    without a prompt whose conversation doesn't end with a turn to answer, or
    a budget the new user turn alone is over.
    """
    key = conversation_key(step.conversation)
    try:
        conversation = read_conversation(get_path(ctx.state, parse_path(key)))
    except ValueError as exc:
        raise StepError(
            render_message(
                f"llm_call '{step.id}': the conversation at state.{key} is not valid: {exc}.",
                hint="give it "
                     "'messages' (each with role system, user, assistant or tool, and content), and optionally "
                     "token_budget, trim_policy and summary.",
                     inline=True), code="conversation_invalid", retryable=False,
        ) from None
    speaker = getattr(step, "speaker", None)
    messages = list(conversation.messages)
    system = render(step.system_prompt, ctx.state, on_missing=ctx.missing_key) if step.system_prompt else None
    speaker_system = system if speaker is not None else None
    if system is not None and speaker is None and not _leading_system(messages):
        messages.insert(0, {"role": "system", "content": system})
    if step.prompt is not None:
        user = {"role": "user", "content": render(step.prompt, ctx.state, on_missing=ctx.missing_key)}
        budget = conversation.token_budget
        if budget is not None and estimate_tokens(user) > budget:
            raise StepError(
                render_message(
                    f"llm_call '{step.id}': the new user turn takes about {estimate_tokens(user)} tokens, over the "
                    f"conversation's token_budget of {budget}; the provider was not called.",
                    hint="raise "
                         f"token_budget in state.{key}, or shorten the prompt.", inline=True),
                code="conversation_budget", retryable=False,
            )
        messages.append(user)
    elif not _answerable(messages, speaker):
        last = messages[-1]["role"] if messages else None
        ending = "is empty" if last is None else f"ends with a{'n' if last == 'assistant' else ''} {last} turn"
        raise StepError(
            render_message(f"llm_call '{step.id}' has no prompt, and the conversation at state.{key} {ending}; "
                           "the provider was not called.",
                           hint="add a prompt, or run this step after one that adds a user turn.", inline=True),
            code="conversation_no_user_turn", retryable=False,
        )
    turn = Turn(key=key, conversation=conversation, messages=(), speaker=speaker)
    summary = conversation.summary
    fixed = _fixed_tokens(summary, speaker_system)
    trimmed = trim(messages, budget=conversation.token_budget, policy=conversation.trim_policy, fixed_tokens=fixed)
    if trimmed.removed:
        ctx.event("conversation_trimmed", key=f"state.{key}", policy=conversation.trim_policy,
                  removed=len(trimmed.removed), over_budget=trimmed.over_budget)
    elif trimmed.over_budget:
        ctx.event("conversation_over_budget", key=f"state.{key}", policy=conversation.trim_policy)
    if trimmed.removed and conversation.trim_policy == "summarize_oldest":
        summary = await _summarize(step, ctx, model, turn, summary, trimmed.removed)
    turn.conversation = replace(conversation, messages=trimmed.kept, summary=summary)
    turn.messages = wire_messages(trimmed.kept, summary=summary, speaker=speaker, speaker_system=speaker_system)
    return turn


def _answerable(messages: Sequence[Mapping[str, Any]], speaker: str | None) -> bool:
    if not messages:
        return False
    last = messages[-1]
    if last["role"] in ("user", "tool"):
        return True
    return speaker is not None and last["role"] == "assistant" and last.get("name") not in (None, speaker)


def _fixed_tokens(summary: str | None, speaker_system: str | None) -> int:
    tokens = estimate_tokens(summary_message(summary)) if summary else 0
    if speaker_system is not None:
        tokens += estimate_tokens({"role": "system", "content": speaker_system})
    return tokens


async def _summarize(step: Any, ctx: Any, model: str, turn: Turn, summary: str | None,
                     removed: Sequence[Mapping[str, Any]]) -> str:
    """Fold ``removed`` into the summary with one call to the step's model; plain text if that call fails."""
    transcript = _transcript(removed)
    body = (f"Summary so far:\n{summary}\n\n" if summary else "") + f"Messages to fold in:\n{transcript}"
    request = LLMRequest(
        step_id=step.id, model=model, provider=ctx.workflow.config.provider, stream=False,
        messages=(Message(role="system", content=SUMMARY_INSTRUCTIONS), Message(role="user", content=body)),
    )
    fallback = f"{summary}\n{transcript}" if summary else transcript
    try:
        response = await ctx.provider.complete(request)
    except (ProviderError, ConnectionError, TimeoutError) as exc:
        ctx.event("conversation_summary", ok=False, error=str(exc), folded=len(removed))
        return fallback
    answered_by = response.model or model
    cost = response.cost if response.cost is not None else cost_of(answered_by, response.usage)
    turn.usage, turn.cost_usd = response.usage, cost or 0.0
    ctx.usage = ctx.usage + response.usage  # a step that fails later still spent it
    ctx.cost_usd += cost or 0.0
    ctx.event(
        "conversation_summary", ok=bool(response.text.strip()), folded=len(removed), model=answered_by,
        provider=response.provider, input_tokens=response.usage.input_tokens,
        output_tokens=response.usage.output_tokens, reasoning_tokens=response.usage.reasoning_tokens,
        cost_usd=cost or 0.0, priced=cost is not None,
    )
    return response.text.strip() or fallback


def agent_turn(step: Any, agent: Any) -> Any:
    """An agent step seen as a conversation step: the agent's name is its speaker, its instructions its own."""
    from types import SimpleNamespace

    return SimpleNamespace(id=step.id, conversation=step.conversation, prompt=step.prompt,
                           system_prompt=agent.instructions, speaker=step.agent)


def close_turn(turn: Turn, outcome: Any, *, spend_counted: bool, text: str | None = None) -> Any:
    """The step's outcome with the reply added to the conversation, as a write the runner applies.

    Only the final text goes in: a structured reply as the model wrote it
    (``outcome.raw``), a tool loop's last reply. ``spend_counted`` says the
    outcome's usage already includes the summary call (the tool loop and
    structured output total the step's calls themselves). ``text``, when given, is the reply as written.
    """
    if text is None:
        text = outcome.raw if outcome.raw is not None else outcome.value
    reply: dict[str, Any] = {"role": "assistant", "content": text if isinstance(text, str) else str(text)}
    if turn.speaker is not None:
        reply["name"] = turn.speaker
    conversation = replace(turn.conversation, messages=(*turn.conversation.messages, reply))
    writes = {**outcome.writes, turn.key: conversation.to_state()}
    if spend_counted:
        return replace(outcome, writes=writes)
    return replace(outcome, writes=writes, usage=outcome.usage + turn.usage,
                   cost_usd=round(outcome.cost_usd + turn.cost_usd, 10))
