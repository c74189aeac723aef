"""The facts of one run that a drift check compares: what a reviewer asks when a model's behaviour moves.

Read from the (redacted) result after the run, like the coverage map: nothing is
asked of the engine while it runs. One run's facts are plain data, in trace
order where order means something:

- ``status`` and ``reason``: how the run ended (the termination reason);
- ``steps``: each step's final status (``success``, ``failed``, ``skipped``,
  ``paused``), so a step run or skipped on one side only shows;
- ``route``: each router's choice, ``<router> -> <target>``;
- ``tools``: each tool call, ``<tool>(<arguments as canonical JSON>)``, with
  ``failed`` appended when the tool raised;
- ``stops``: each agent step's stop reason;
- ``schema``: each structured output's validity, ``valid`` or ``invalid: <problem>``
  (an ``llm_call`` with ``response_schema``: its last reply; an agent with
  ``output_schema``: its last answer check, once one answer did not fit);
- ``errors``: the error code of each failed step (not of those skipped after it), and ``messages`` the error text
  of a failed model call (to say which provider could not be reached);
- ``outputs``: each successful step's output as text (a structured one as canonical JSON), routers left out
  (their choice is in ``route``), compared by :mod:`.output_compare`;
- ``tokens`` (input, output, reasoning) and ``cost_usd``.

Strings are scrubbed of the environment's API keys before they are kept.
"""

from __future__ import annotations

import json
from typing import Any

from ..._redaction.api_keys import redact_api_keys
from ...engine._outcome.result import WorkflowResult

__all__ = ["PROVIDER_FAILURES", "run_facts"]

#: Error codes of a model call that never got an answer: no key, no connection, a status from the provider.
PROVIDER_FAILURES = ("missing_credentials", "provider_error", "provider_misconfigured", "no_route")
_ARGS_SHOWN = 200
_OUTPUT_KEPT = 20_000  # enough to judge an answer by; a longer one is compared by its start


def run_facts(result: WorkflowResult, workflow_key: str) -> dict[str, Any]:
    """The facts of one finished (or paused) run of ``workflow_key`` (see the module docs)."""
    facts: dict[str, Any] = {
        "workflow": workflow_key, "status": result.status.value, "reason": result.reason.value,
        "steps": {step_id: step.status.value for step_id, step in sorted(result.steps.items())},
        "route": [], "tools": [], "stops": {}, "schema": {}, "errors": {}, "messages": {}, "outputs": {},
        "tokens": {"input": 0, "output": 0, "reasoning": 0},
        "cost_usd": round(result.cost_usd, 8),
    }
    for key, value in result.usage.items():
        name = key.removesuffix("_tokens")
        if name in facts["tokens"]:
            facts["tokens"][name] = int(value)
    for event in result.trace:
        _read_event(facts, event.kind, event.step_id or "", event.data)
    routers = {event.step_id for event in result.trace if event.kind == "router_choice"}
    for step_id, step in sorted(result.steps.items()):
        if step.status.value == "success" and step.output is not None and step_id not in routers:
            facts["outputs"][step_id] = _output_text(step.output)
        if step.error_code and step.status.value == "failed":  # a skipped step's code repeats why: not a change
            facts["errors"][step_id] = step.error_code
            if step.error_code in PROVIDER_FAILURES and step.error:
                facts["messages"][step_id] = redact_api_keys(step.error)[:600]
    return facts


def _read_event(facts: dict[str, Any], kind: str, step: str, data: dict[str, Any]) -> None:
    if kind == "router_choice":
        facts["route"].append(f"{step} -> {data.get('target')}")
    elif kind == "tool_call":
        call = f"{data.get('tool')}({_arguments(data.get('args'))})"
        facts["tools"].append(call if data.get("ok", True) else f"{call} failed")
    elif kind == "agent_stop":
        facts["stops"][step] = str(data.get("reason"))
    elif kind == "provider_call" and "valid" in data:
        facts["schema"][step] = "valid" if data["valid"] else f"invalid: {_short(data.get('problem'))}"
    elif kind == "agent_check" and data.get("about") == "answer":  # an agent without output_schema checks too
        if data.get("code") == "invalid_output":
            facts["schema"][step] = f"invalid: {_short(data.get('detail'))}"
        elif data.get("code") == "ok" and step in facts["schema"]:
            facts["schema"][step] = "valid"


def _output_text(output: Any) -> str:
    text = output if isinstance(output, str) else json.dumps(output, sort_keys=True, ensure_ascii=False, default=str)
    return redact_api_keys(text)[:_OUTPUT_KEPT]


def _arguments(args: Any) -> str:
    text = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str, separators=(", ", ": "))
    text = redact_api_keys(text)
    return text if len(text) <= _ARGS_SHOWN else text[:_ARGS_SHOWN] + "…"


def _short(text: Any) -> str:
    return redact_api_keys(str(text or "?")).splitlines()[0][:160] if text else "?"
