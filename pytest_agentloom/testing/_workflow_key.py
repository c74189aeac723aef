"""A workflow's name in what the plugin keeps per workflow: the coverage map, the drift facts, the report.

Below both coverage (:mod:`~pytest_agentloom.testing._review.coverage`) and the drift check
(:mod:`~pytest_agentloom.testing._live.drift`), which name workflows alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine._format.model import Workflow

__all__ = ["workflow_key"]


def workflow_key(workflow: Workflow, rootdir: Path) -> str:
    """A workflow's name in the map: its file relative to the rootdir, or ``<name>`` for one built in code."""
    source = workflow.source
    if source is None:
        return f"<{workflow.name}>"
    try:
        return Path(source).resolve().relative_to(rootdir.resolve()).as_posix()
    except ValueError:
        return Path(source).resolve().as_posix()
