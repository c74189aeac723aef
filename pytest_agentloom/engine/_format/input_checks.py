"""A subworkflow's ``input`` keys must be keys its child uses: a typo there is caught at load.

A child given by ``workflow:`` starts from its own ``state:`` with the rendered ``input`` laid over it,
so an input key the child neither declares in ``state:`` nor reads in any step (``topik`` for ``topic``)
reaches nothing: the child's prompt renders its default, or an empty text, and the run goes on. The
loader refuses such a key, naming the parent's ``input`` key and the closest key the child does use.
(A child given by upstream's ``workflow_path``/``workflow_inline`` starts from the parent's whole
state, and its ``input`` may carry keys for its own children: those are not checked.)
"""

from __future__ import annotations

import re

from ..._core.suggest import did_you_mean
from ...errors import WorkflowError
from .model import SubworkflowStep, Workflow
from .reads import step_reads

__all__ = ["check_inputs"]


def check_inputs(step: SubworkflowStep, child: Workflow, file: str) -> list[WorkflowError]:
    """A problem for each ``input`` key of ``step`` that ``child`` neither declares nor reads."""
    if step.inherits_state or not step.input:
        return []
    used = _keys_used(child) | set(step.return_keys or ())  # a key handed back is passed through on purpose
    problems = []
    for key in step.input:
        if key in used:
            continue
        hint = did_you_mean(key, sorted(used))
        problems.append(WorkflowError(
            f"Subworkflow step '{step.id}' passes input '{key}', which {step.child_name} neither declares in its "
            "'state:' nor reads in any step",
            file=file, step_id=step.id, field=f"input.{key}",
            hint=(hint + " " if hint else "") + "rename the key to one the child uses "
                 f"({', '.join(sorted(used)) or 'it uses none'}), or remove it.",
        ))
    return problems


def _keys_used(child: Workflow) -> set[str]:
    """The top-level keys ``child`` declares (``state:``), reads (its steps' templates, ``state.`` paths and
    conditions, its agents' instructions) or writes into (an ``output`` such as ``items[0]``)."""
    used = set(child.state)
    for step in child.steps:
        used |= {_head(path) for path in step_reads(step, child)}
        if step.output and _head(step.output) != step.output:  # writes into the value (items[0]): uses it
            used.add(_head(step.output))
    for agent in child.agents.values():
        used |= {_head(name) for name in _template_keys(agent.instructions or "")}
    return used


def _head(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def _template_keys(text: str) -> set[str]:
    from .._evaluate.templates import template_fields

    try:
        names = template_fields(text)
    except Exception:  # a broken template is a load error of its own
        return set()
    return {name.removeprefix("state.") for name in names}
