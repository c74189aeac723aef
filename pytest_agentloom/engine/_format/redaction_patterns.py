"""Which parts of a workflow are secret, and the redactor a run of it uses.

The redaction package (:mod:`pytest_agentloom._redaction`) is built from plain settings; this module reads
them from a workflow: its ``state_schema`` keys marked ``redact: true`` (and its subworkflows'), the
environment's patterns, its steps' output paths, and the folder its salt is looked for from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..._redaction.redactor import Redactor, env_patterns

if TYPE_CHECKING:
    from .model import Workflow

__all__ = ["child_redactor", "redaction_patterns", "redactor_for"]


def _own_patterns(workflow: Workflow) -> list[str]:
    """``workflow``'s ``redact: true`` keys, then its subworkflows' (a child's secret stays one in the parent)."""
    own = [key for key, schema in workflow.state_schema.items() if schema.redact]
    for child in workflow.compiled.children.values():
        own.extend(_own_patterns(child))
    return own


def _key_variables(workflow: Workflow) -> list[str]:
    """The variables ``workflow`` (and its subworkflows) names as holding provider keys (``api_key_env``):
    their values are scrubbed whatever the variables are called."""
    names = [settings.api_key_env for settings in workflow.config.providers.values() if settings.api_key_env]
    for child in workflow.compiled.children.values():
        names.extend(_key_variables(child))
    return names


_Parts = tuple[tuple[str, ...], Path | None, dict[str, str | None], tuple[str, ...]]


def _parts(workflow: Workflow, inherited: tuple[str, ...], from_env: tuple[str, ...]) -> _Parts:
    """A redactor's patterns, the folder its salt is looked for from and the steps' outputs: worked out once
    per workflow object (a workflow given another ``source`` starts a new memo), inherited and
    environment patterns (see :func:`redactor_for`)."""
    made: dict[tuple[tuple[str, ...], tuple[str, ...]], _Parts] = workflow.memoized("redactor_parts", dict)
    key = (inherited, from_env)
    parts = made.get(key)
    if parts is None:
        patterns = (*inherited, *_own_patterns(workflow), *from_env)
        outputs = {step.id: step.output for step in workflow.steps}
        source = workflow.source
        parts = made[key] = (patterns, source.parent if source is not None else None, outputs,
                             tuple(_key_variables(workflow)))
    return parts


def redactor_for(
    workflow: Workflow,
    *,
    env: Mapping[str, str] | None = None,
    salt: bytes | str | None = None,
    inherited: Iterable[str] = (),
) -> Redactor:
    """Patterns of ``workflow``'s ``state_schema``, the environment, and a parent's ``inherited`` ones.

    Every run builds one of these, and the harness another for the requests it notes, so what
    comes from the definition (its patterns, its steps' outputs, the folder the salt is looked for
    from: a workflow given another ``source`` starts a new memo) is worked out once per workflow
    object and per set of environment patterns; what the environment holds (its patterns, its API
    keys) is read again on every call, and each redactor reads its own salt, so nothing a variable
    or the salt file changes is kept.
    """
    patterns, start, outputs, key_variables = _parts(workflow, tuple(inherited), env_patterns(env))
    return Redactor(patterns, salt=salt, salt_start=start, step_outputs=outputs, env=env,
                    key_variables=key_variables)


def redaction_patterns(workflow: Workflow, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The patterns :func:`redactor_for` would give ``workflow``'s redactor, without building it: with
    none, nothing in a state is secret (``secret_values`` is empty), so a caller may stop there."""
    return _parts(workflow, (), env_patterns(env))[0]


def child_redactor(parent: Redactor, workflow: Workflow) -> Redactor:
    """The redactor of a subworkflow: its own patterns plus every pattern of the parent run, whose
    environment and salt it shares."""
    patterns, start, outputs, key_variables = _parts(workflow, parent.patterns, env_patterns(parent.env))
    return parent.with_definition(patterns, salt_start=start, step_outputs=outputs, key_variables=key_variables)
