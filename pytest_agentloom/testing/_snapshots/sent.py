"""What a run sent to its provider, for snapshots: a prompt change must show in review.

:class:`SentRequests` wraps the provider of one ``agentloom.run``: it notes
each request and passes it on unchanged. :func:`sent_data` turns the notes into
the ``requests`` part of a snapshot: per step id (in the file's order, a
subworkflow's ``parent/child`` steps after their parent, so parallel steps give
the same file whatever finished first), one entry per turn with the
model, the params that shape the answer, the tool names and the messages. A
retry that sent the same request again is listed once. Secret values of the
run's state (``redact: true`` keys) are replaced by their markers, as in
every other file the plugin writes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._core.plain import to_plain
from ..._core.types import EmbedRequest, EmbedResponse, LLMRequest, LLMResponse
from ..._redaction.redactor import Redactor

if TYPE_CHECKING:
    from ..._core.types import Provider
    from ...engine._format.model import Workflow
    from ...engine._outcome.result import WorkflowResult

__all__ = ["SentLog", "SentRequests", "sent_data"]


class SentRequests:
    """A provider that notes every request before handing it to ``inner``; other attributes are ``inner``'s."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.sent: list[LLMRequest | EmbedRequest] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.sent.append(request)
        return await self.inner.complete(request)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.inner, name)
        if name == "embed" and callable(value):
            return self._embedder(value)
        return value

    def _embedder(self, embed: Callable[[EmbedRequest], Any]) -> Callable[[EmbedRequest], Any]:
        async def noted(request: EmbedRequest) -> EmbedResponse:
            self.sent.append(request)
            return await embed(request)  # type: ignore[no-any-return]

        return noted


class SentLog:
    """What each run of one test sent, given to its result as ``sent_requests`` (its snapshot's ``requests``).

    A resumed run's snapshot holds what was sent before its pause too, and replaces the secrets that only the
    unredacted states of the runs before it hold: so each result's requests and states are kept with it,
    found again by the result itself (``is``: results are not hashable, and two may be equal).
    """

    def __init__(self) -> None:
        self._runs: list[tuple[WorkflowResult, list[Any], list[Any]]] = []

    def note(self, result: WorkflowResult, sent: SentRequests, workflow: Workflow) -> None:
        """A run's result and what its run sent."""
        result.sent_requests = functools.partial(sent_data, sent.sent, workflow, result.unredacted_state)
        self._runs.append((result, sent.sent, [result.unredacted_state]))

    def note_resumed(self, result: WorkflowResult, resumed: WorkflowResult, sent: SentRequests,
                     workflow: Workflow | None) -> None:
        """A resumed run: what ``result`` (the run it resumed) had sent before the pause, then what it sent."""
        before, states = next(((sent_before, kept) for run, sent_before, kept in reversed(self._runs)
                               if run is result), ([], []))
        requests = [*before, *sent.sent]
        resumed.sent_requests = functools.partial(sent_data, requests, workflow, resumed.unredacted_state, states)
        self._runs.append((resumed, requests, [*states, resumed.unredacted_state]))


def _entry(request: LLMRequest | EmbedRequest) -> dict[str, Any]:
    if isinstance(request, EmbedRequest):
        return {"model": request.model, "texts": list(request.texts)}
    entry: dict[str, Any] = {"turn": request.turn, "model": request.model}
    params = {key: to_plain(request.params[key]) for key in sorted(request.params)}
    if request.tool_choice is not None:
        params["tool_choice"] = to_plain(request.tool_choice)
    if request.thinking is not None:
        params["thinking"] = to_plain(request.thinking)
    if params:
        entry["params"] = params
    if request.tools:
        entry["tools"] = [tool.name for tool in request.tools]
    entry["messages"] = [to_plain(message.to_dict()) for message in request.messages]
    return entry


def sent_data(sent: list[LLMRequest | EmbedRequest], workflow: Workflow | None = None,
              state: Mapping[str, Any] | None = None,
              earlier_states: Sequence[Mapping[str, Any] | None] = ()) -> dict[str, list[dict[str, Any]]] | None:
    """The ``requests`` part of a snapshot (see the module docs); ``state`` is the run's unredacted state.

    A resumed run's ``sent`` starts with what was sent before its pause, whose secrets only the unredacted
    states of the runs before it hold (the resumed run starts from the redacted checkpoint):
    ``earlier_states`` are those, so their values are replaced too.

    ``None`` when nothing was sent: a run without model calls has no ``requests`` key.
    """
    if not sent:
        return None
    by_step: dict[str, list[dict[str, Any]]] = {}
    for request in sent:
        entries = by_step.setdefault(request.step_id, [])
        entry = _entry(request)
        if not entries or entries[-1] != entry:  # a retry sends the same request again
            entries.append(entry)
    order = {step.id: index for index, step in enumerate(workflow.steps)} if workflow is not None else {}
    ranked = sorted(by_step, key=lambda step: (order.get(step.split("/")[0], len(order)), step))
    data = {step: by_step[step] for step in ranked}
    from ...engine._format.redaction_patterns import redaction_patterns, redactor_for

    # API keys are scrubbed whatever the patterns (a tool result holding one is sent on to the model);
    # the secret values of the states (this run's, and those of the runs before a pause) only when a
    # pattern marks some
    redactor = redactor_for(workflow) if workflow is not None else Redactor()
    patterned = workflow is not None and bool(redaction_patterns(workflow))
    found = {value: None for each in (state, *earlier_states) if patterned and each is not None
             for value in redactor.secret_values(each)}
    secrets = sorted(found, key=len, reverse=True)
    if not secrets and not redactor.api_keys:
        return data
    return redactor.redact_strings(data, secrets)  # type: ignore[no-any-return]
