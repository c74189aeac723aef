"""What must hold for every run, whatever the model answered: the checks behind :func:`assert_invariants`.

A generated script makes the model misbehave on purpose (errors, refusals, storms of tool calls, JSON that
does not fit). A workflow may then fail a step, but only in one of the ways it documents; these checks
name what must never happen (docs/fuzzing.md: Invariants). Each returns a list of problems, one line
each, so a test can assert on one or on all of them; none imports hypothesis.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..engine import WorkflowResult
from ..engine._format.model import AgentStep, LLMCallStep, ToolStep, Workflow
from ..engine._format.redaction_patterns import redactor_for
from ._sandbox_check import check_sandbox
from ._steps import all_steps

__all__ = ["DEFECT_CODES", "DOCUMENTED_ENDINGS", "INVARIANTS", "assert_invariants", "check_budget", "check_caps",
           "check_no_defects", "check_no_secrets", "check_sandbox", "check_termination", "check_tool_policy",
           "invariant_problems"]

#: the (status, termination reason) pairs a run may end with (docs/errors.md: Termination reasons)
DOCUMENTED_ENDINGS = frozenset({
    ("success", "completed"), ("failed", "step_failed"), ("paused", "awaiting_approval"),
    ("budget_exceeded", "budget_exceeded"), ("timeout", "timeout"), ("cancelled", "cancelled"),
})

#: step error codes no model's answer excuses: the workflow (or the test around it) is wrong, whatever it said
DEFECT_CODES = {
    "router_no_match": "a router matched no condition and has no default",
    "expression_error": "a router condition failed to evaluate",
    "expression_budget": "a router condition worked too long",
    "template_error": "a template failed to render",
    "missing_template_key": "a template read a key the state does not have",
    "missing_state_key": "a step read a key the state does not have",
    "output_path": "a step's output path could not be written",
    "no_model": "a model step has no model",
    "no_provider": "the run had no provider",
    "unknown_tool": "a step declares a tool that is not registered",
    "unknown_agent": "a step names an agent that is not defined",
    "provider_crashed": "the provider raised something other than a provider error",
    "invalid_script": "the script itself was wrong",
    "script_exhausted": "a step asked the model more often than the script's cap (no loop cap stopped it)",
}


def _text(value: Any) -> str:
    return str(value.value if hasattr(value, "value") else value)


def check_termination(result: WorkflowResult) -> list[str]:
    """The run ended with a documented (status, reason) pair, and its trace has one ``run_end`` saying so
    (only a checkpoint's save may follow it)."""
    ending = (_text(result.status), _text(result.reason))
    problems = [] if ending in DOCUMENTED_ENDINGS else [f"the run ended {ending[0]}/{ending[1]}, an undocumented "
                                                       "ending"]
    kinds = [event.kind for event in result.trace.events() if event.kind != "checkpoint_saved"]
    ends = result.trace.events("run_end")
    if kinds[-1:] != ["run_end"] or len(ends) != 1:
        problems.append("the trace does not end with one run_end")
    elif (_text(ends[0].data.get("status")), _text(ends[0].data.get("reason"))) != ending:
        problems.append(f"the trace's run_end says {ends[0].data.get('status')}/{ends[0].data.get('reason')}")
    return problems


def check_no_defects(result: WorkflowResult) -> list[str]:
    """No step failed with a :data:`DEFECT_CODES` code (each one a bug no model answer excuses)."""
    return [f"step '{step_id}' failed with {step.error_code} ({DEFECT_CODES[step.error_code]}): {_headline(step.error)}"
            for step_id, step in result.steps.items() if step.error_code in DEFECT_CODES]


def _headline(error: str | None) -> str:
    return (error or "").splitlines()[0] if error else ""


def check_caps(result: WorkflowResult) -> list[str]:
    """Every agent step made at most its ``max_steps`` model calls per attempt."""
    workflow = _workflow(result)
    problems = []
    for step_id, owner, step in all_steps(workflow) if workflow is not None else ():
        if isinstance(step, AgentStep) and step.agent in owner.agents:  # a subworkflow's agent is its own file's
            cap = owner.agents[step.agent].max_steps
            calls: dict[int, int] = {}
            for event in result.trace.events("provider_call", step=step_id):
                attempt = event.attempt or 1
                calls[attempt] = calls.get(attempt, 0) + 1
            problems += [f"agent step '{step_id}' made {count} model calls in attempt {attempt}, over its "
                         f"max_steps {cap}" for attempt, count in sorted(calls.items()) if count > cap]
    return problems


def check_budget(result: WorkflowResult) -> list[str]:
    """No layer started once the run's spend had reached ``config.budget_usd`` (the budget is checked before a
    layer, so the last layer may overspend: docs/architecture.md)."""
    workflow = _workflow(result)
    budget = workflow.config.budget_usd if workflow is not None else None
    if budget is None:
        return []
    spent, problems = 0.0, []
    for event in result.trace.events():
        if event.kind == "provider_call":
            spent += float(event.data.get("cost_usd") or 0.0)
        elif event.kind == "layer_start" and spent >= budget:
            problems.append(f"layer {event.data.get('layer')} started with ${spent:.6f} spent, at or over "
                            f"budget_usd {budget}")
    return problems


def check_no_secrets(result: WorkflowResult, secrets: Iterable[str] = ()) -> list[str]:
    """No redacted value (of the run's state or the file's, or one of ``secrets``) appears in what the run
    shows: its JSON, its trace lines, its state and its step errors."""
    workflow = _workflow(result)
    found = set(secrets)
    if workflow is not None:
        redactor = redactor_for(workflow)
        found.update(redactor.secret_values(result.unredacted_state or {}))
        found.update(redactor.secret_values(workflow.state))
    if not found:
        return []
    shown = {"the result's JSON": result.to_json(), "the trace": result.trace.lines(), "the state": repr(result.state),
             "the step errors": "\n".join(step.error or "" for step in result.steps.values())}
    return [f"a redacted value ({len(secret)} characters, starting {secret[:2]!r}) appears in {where}"
            for secret in sorted(found) for where, text in shown.items() if secret and secret in text]


def check_tool_policy(result: WorkflowResult) -> list[str]:
    """Every tool that ran was one its step offers (an agent's allowlist, an ``llm_call``'s ``tools``, a tool
    step's ``tool_name``), and no tool in an agent's ``approval_required`` ran in a run that was not resumed."""
    workflow = _workflow(result)
    if workflow is None:
        return []
    problems = []
    for event in result.trace.events("tool_call"):
        if not event.data.get("ok"):
            continue
        tool = event.data.get("tool")
        allowed, gated = _offered(workflow, event.step_id)
        if allowed is not None and tool not in allowed:
            problems.append(f"step '{event.step_id}' ran tool '{tool}', which it does not offer")
        if tool in gated and result.resumed_from is None:
            problems.append(f"step '{event.step_id}' ran '{tool}' (approval_required) without an approval")
    return problems


def _offered(workflow: Workflow, step_id: str | None) -> tuple[set[str] | None, set[str]]:
    """The tools a step may run and those that need an approval first (``None``: a step this check can't read);
    a subworkflow's step by its ``<parent step>/<child step>`` id, read in the child's own file."""
    owner, step = next(((owner, step) for found, owner, step in all_steps(workflow) if found == step_id),
                       (workflow, None))
    if isinstance(step, AgentStep) and step.agent in owner.agents:
        agent = owner.agents[step.agent]
        return set(agent.tool_names()), set(agent.approval_required)
    if isinstance(step, LLMCallStep):
        return {declared.name for declared in step.tools}, set()
    if isinstance(step, ToolStep):
        return {step.tool_name}, set()
    return None, set()


def _workflow(result: WorkflowResult) -> Workflow | None:
    return result.ran_workflow if isinstance(result.ran_workflow, Workflow) else None


#: every check :func:`assert_invariants` runs, by name, in order
INVARIANTS: dict[str, Callable[[WorkflowResult], list[str]]] = {
    "termination": check_termination, "defects": check_no_defects, "caps": check_caps, "budget": check_budget,
    "secrets": check_no_secrets, "tool_policy": check_tool_policy, "sandbox": check_sandbox,
}


def invariant_problems(result: WorkflowResult, *, secrets: Iterable[str] = ()) -> list[str]:
    """Every problem every invariant finds in ``result`` (empty: all hold)."""
    problems: list[str] = []
    for name, check in INVARIANTS.items():
        found = check_no_secrets(result, secrets) if name == "secrets" else check(result)
        problems += [f"{name}: {problem}" for problem in found]
    return problems


def assert_invariants(result: WorkflowResult, *, secrets: Iterable[str] = ()) -> None:
    """Fail (``AssertionError``) with every broken invariant, one per line; ``secrets`` adds raw values that must
    never be shown besides the run's redacted ones."""
    problems = invariant_problems(result, secrets=secrets)
    if problems:
        raise AssertionError(f"run {result.run_id} of '{result.workflow}' ended {_text(result.status)}/"
                             f"{_text(result.reason)} and breaks {len(problems)} invariant(s):\n  "
                             + "\n  ".join(problems))
