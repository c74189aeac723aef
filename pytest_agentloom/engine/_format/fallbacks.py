"""Which provider a call goes to first, and which fallbacks follow it, as far as the workflow file says.

Both the run (:mod:`.._calls.fallback`, which hands a failed call down the list) and the load checks
(:func:`.load_checks.check_fallback_shapes`, which refuse a field a fallback's provider has no wire form
for) read the list from here, so the two always agree on it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from .model import AgentStep, FallbackTarget, LLMCallStep, WorkflowConfig

__all__ = ["fallbacks_of", "primary_provider"]


def primary_provider(config: WorkflowConfig, model: str) -> str | None:
    """The provider a call of ``model`` goes to first, as far as the file says (``config.provider``, else the
    gateway's default routes by model name), for ``config.fallbacks`` and the trace."""
    from ...providers._gateway import DEFAULT_ROUTES, PROVIDER_ALIASES

    if config.provider:
        return PROVIDER_ALIASES.get(config.provider, config.provider)
    for pattern, names in DEFAULT_ROUTES:
        if fnmatch.fnmatchcase(model, pattern):
            return names[0]
    return None


def fallbacks_of(step: LLMCallStep | AgentStep, config: WorkflowConfig, model: str) -> Sequence[FallbackTarget]:
    """The step's own ``fallback`` (``[]`` turns them off), else what ``config.fallbacks`` gives its provider."""
    if step.fallback is not None:
        return step.fallback
    if not config.fallbacks:
        return ()
    primary = primary_provider(config, model)
    return config.fallbacks.get(primary, ()) if primary is not None else ()
