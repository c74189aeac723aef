"""Judged assertions: a model grades a text against a rubric, and the answer is a :class:`Verdict`.

The judge is a one-step workflow (step id ``judge``, an ``llm_call`` with a
``response_schema``) run on the test's provider, so its request is scripted,
recorded and replayed exactly like a workflow step's: a ``Scripted`` provider
answers it from ``judge=...`` replies, ``--agentloom-record`` sends it live and
writes it to the test's cassette, and a plain ``pytest`` replays it offline.

What is judged (:func:`judged_text`): a string as it is; a
:class:`~pytest_agentloom.engine._outcome.result.WorkflowResult` by its *final output*,
the output of the last step in the workflow file's order that succeeded and has
an output (or of ``step=``). A value that is not a string is judged as its JSON
(sorted keys), so the same output always gives the same judged text.

The model answers ``{"score": <0..1>, "reason": "..."}``; the verdict passes
when ``score >= threshold``. An answer of another shape fails closed
(:class:`~pytest_agentloom.errors.JudgeError`, code ``invalid_judge_answer``):
the judge is asked once, never re-asked, so a replay asks exactly what was recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..._core.plain import to_plain
from ...errors import HINT_PREFIX, ErrorCode, JudgeError, UsageError, render_message
from .verdict import Verdict, shorten, verdict_key

if TYPE_CHECKING:
    from ...engine._format.model import Workflow
    from ...engine._outcome.result import WorkflowResult
    from .verdicts import VerdictCall

__all__ = [
    "JUDGE_STEP",
    "VERDICT_SCHEMA",
    "JudgeAsk",
    "check_judge_arguments",
    "final_step",
    "judge_workflow",
    "judged_text",
    "verdict_from_run",
]

#: The step id of the judge's call: a ``Scripted`` provider answers it from ``judge=...`` replies.
JUDGE_STEP = "judge"

#: The shape of the judge's answer, sent as the step's ``response_schema``.
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}

_SYSTEM_PROMPT = (
    "You grade a text against a rubric. Read the rubric, then the text, and decide how well the text meets "
    "the rubric. Answer with a score from 0 (does not meet it at all) to 1 (meets it fully) and a reason of "
    "one or two sentences that names what decided the score."
)
_PROMPT = "Rubric:\n{state.rubric}\n\nText to grade:\n{state.text}"


@dataclass
class JudgeAsk:
    """One judge call, ready to run: its workflow and run options, and what the verdict will say it judged."""

    workflow: Workflow
    options: dict[str, Any]
    label: str
    model: str
    rubric: str
    text: str
    judged_from: str
    threshold: float
    record_command: str | None = None
    call: VerdictCall | None = None  # its verdict snapshot, when it keeps one

    def hashes(self) -> dict[str, Any]:
        return verdict_key(self.model, self.rubric, self.text)

    def verdict(self, result: WorkflowResult) -> Verdict:
        __tracebackhide__ = True
        return verdict_from_run(result, label=f"'{self.label}'", model=self.model, rubric=self.rubric, text=self.text,
                                judged_from=self.judged_from, threshold=self.threshold,
                                record_command=self.record_command)


def check_judge_arguments(rubric: Any, model: Any, threshold: Any) -> None:
    """Refuse a rubric, model or threshold the judge cannot use, naming the argument and the fix."""
    __tracebackhide__ = True
    if not isinstance(rubric, str) or not rubric.strip():
        raise UsageError(render_message(
                f"agentloom.judge() needs a rubric: a non-empty str, got {rubric!r}.",
                hint="say what a good answer does, e.g. rubric='Apologises and offers a refund.'"))
    if not isinstance(model, str) or not model.strip():
        raise UsageError(render_message(f"agentloom.judge() needs model=: the judge model's name, got {model!r}.",
                                        hint="pass the model that grades, e.g. model='gpt-4o-mini'."))
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise UsageError(render_message(
                f"agentloom.judge() got threshold={threshold!r}: it must be a number from 0 to 1 "
                "(a verdict passes when its score is at least the threshold).",
                hint="e.g. threshold=0.7."))


def judged_text(value: Any, step: str | None = None) -> tuple[str, str]:
    """The text a judge reads from ``value`` and where it came from (see the module docs)."""
    __tracebackhide__ = True
    from ...engine._outcome.result import StepStatus, WorkflowResult

    if isinstance(value, WorkflowResult):
        return _result_text(value, step, StepStatus.SUCCESS)
    if step is not None:
        raise UsageError(render_message(
                f"step={step!r} only applies to a WorkflowResult; got {type(value).__name__}.",
                hint="pass the result itself, or leave step= out to judge the text."))
    if isinstance(value, str):
        return value, "the text passed"
    raise UsageError(
        render_message(f"Cannot judge a {type(value).__name__}: a judge reads a str or a WorkflowResult.",
                       hint="pass the text, a result (judged by its final output), or result with step='<id>'.")
    )


def _result_text(result: WorkflowResult, step: str | None, success: Any) -> tuple[str, str]:
    __tracebackhide__ = True
    where = f"run of '{result.workflow}'"
    if step is not None:
        if step not in result.steps:
            from ..._core.suggest import did_you_mean

            hint = did_you_mean(step, list(result.steps))
            raise UsageError(render_message(f"Cannot judge step '{step}': the {where} has no such step "
                                            f"(steps: {', '.join(result.steps)}).",
                                            hint=f"{hint or 'name one of them.'}"))
        chosen = result.steps[step]
        if chosen.status is not success:
            raise UsageError(render_message(
                    f"Cannot judge step '{step}' of the {where}: it ended {chosen.status.value}, with no "
                    "output.",
                    hint="judge a step that succeeded, or check the run first "
                         "(result.assert_status('success'))."))
        return _as_text(chosen.output), f"step '{step}' of the {where}"
    final = final_step(result)
    if final is not None:
        return _as_text(result.steps[final].output), f"step '{final}' of the {where}"
    raise UsageError(render_message(
            f"Cannot judge the {where} (status {result.status.value}): no step succeeded with an output.",
            hint="check the run first (result.assert_status('success'))."))


def final_step(result: WorkflowResult) -> str | None:
    """The id of the step whose output is the result's final output: the last, in the workflow file's order,
    that succeeded with an output (``None`` when no step did)."""
    for step_id in reversed(list(result.steps)):
        candidate = result.steps[step_id]
        if candidate.status.value == "success" and candidate.output is not None:
            return step_id
    return None


def _as_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(to_plain(output), sort_keys=True, ensure_ascii=False)


def judge_workflow(model: str, provider_name: str | None = None) -> Workflow:
    """The one-step workflow that asks ``model`` for a verdict (the rubric and text go in its state)."""
    __tracebackhide__ = True
    from ...engine._format.loader import parse_data

    config: dict[str, Any] = {"retry": {"max_retries": 0}}
    if provider_name:
        config["provider"] = provider_name
    step = {
        "id": JUDGE_STEP, "type": "llm_call", "model": model, "system_prompt": _SYSTEM_PROMPT, "prompt": _PROMPT,
        "response_schema": {"type": "json_schema", "name": "verdict", "schema": VERDICT_SCHEMA},
        "output": "verdict",
    }
    data = {"name": "agentloom-judge", "state": {"rubric": "", "text": ""}, "config": config, "steps": [step]}
    return parse_data(data, file="<agentloom.judge>")


def verdict_from_run(result: WorkflowResult, *, label: str, model: str, rubric: str, text: str, judged_from: str,
                     threshold: float, record_command: str | None) -> Verdict:
    """The verdict of a judge run, or :class:`JudgeError` naming the judge call when it gave none."""
    __tracebackhide__ = True
    step = result.steps.get(JUDGE_STEP)
    if step is not None and step.status.value == "success" and isinstance(step.output, dict):
        score, reason = step.output.get("score"), step.output.get("reason")
        if isinstance(score, (int, float)) and not isinstance(score, bool) and isinstance(reason, str):
            return Verdict(score=float(score), passed=float(score) >= threshold, reason=reason, threshold=threshold,
                           model=model, rubric=rubric, judged=text, judged_from=judged_from)
    invalid = step is not None and step.error_code == ErrorCode.INVALID_OUTPUT
    problem = (step.error if step is not None else None) or f"the judge run ended {result.status.value}"
    context = [("model", model), ("rubric", shorten(rubric, 120)), ("judged", judged_from)]
    if invalid:
        again = f" re-record it ({record_command})," if record_command else ""
        hint = (f"the judge must answer one JSON object {{\"score\": <0..1>, \"reason\": \"...\"}}:{again} "
                "use a model that follows JSON output, or script the judge with "
                "agentloom.scripted(judge='{\"score\": 0.9, \"reason\": \"...\"}').")
        message = render_message(f"Judge {label} gave no usable verdict: its answer is not a score and a reason.",
                                 context, details=[f"  problem: {_first_line(problem)}"], hint=hint)
        raise JudgeError(message, code=ErrorCode.INVALID_JUDGE_ANSWER)
    message = render_message(f"Judge {label} could not be asked: its model call failed.", context,
                             details=[f"  {line}" for line in problem.splitlines()])
    raise JudgeError(message, code=ErrorCode.JUDGE_FAILED)


def _first_line(text: str) -> str:
    """The problem itself: the first line, without the step's own hint (the judge's hint replaces it)."""
    first = text.splitlines()[0] if text else text
    return first.split(f" {HINT_PREFIX}")[0]
