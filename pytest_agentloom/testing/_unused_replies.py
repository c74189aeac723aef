"""Scripted replies that no request used: a test that passed with some fails (the harness's own check).

A test's scripted providers are watched by its harness; at the end of a passed call, replies left over mean
the workflow did less than the script says, which a passing test would otherwise hide. A provider made with
``allow_unused=True`` keeps its leftovers on purpose (a branch not taken).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import UnusedRepliesError, render_message
from ..providers._scripted import Scripted

__all__ = ["unused_replies_message"]


def unused_replies_message(nodeid: str, providers: Iterable[Scripted]) -> str | None:
    """Why the test ``nodeid`` fails although it passed: the replies of ``providers`` no request used (or
    ``None``)."""
    lines = []
    for provider in providers:
        if getattr(provider, "allow_unused", False):
            continue
        for step, left in sorted(provider.unused().items()):
            total = provider.script_length(step)
            lines.append(f"  step '{step}': {left} of {total} scripted repl{'y' if total == 1 else 'ies'} never used")
    if not lines:
        return None
    return str(UnusedRepliesError(render_message(
        f"Test {nodeid} passed, but its scripted provider kept replies that no request used: "
        "the workflow did less than the script says.", details=lines,
        hint="remove the replies the workflow does not need, or keep them on purpose with "
             "agentloom.scripted(..., allow_unused=True) (Scripted(..., allow_unused=True)).",
    )))
