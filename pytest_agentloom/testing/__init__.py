"""The pytest side of pytest-agentloom: the harness behind the fixture, snapshots, scenario tables.

``pytest_agentloom.plugin`` holds the hooks and fixtures and hands the work to
these modules; ``harness``, ``scenarios`` and ``snapshots`` import no pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from ..errors import ScenarioTableError
    from .harness import AgentloomHarness
    from .scenarios import Scenario, load_table
    from .snapshots import SnapshotSession

__all__ = ["AgentloomHarness", "Scenario", "ScenarioTableError", "SnapshotSession", "load_table"]

_EXPORTS = {
    "AgentloomHarness": ".harness",
    "Scenario": ".scenarios",
    "ScenarioTableError": "..errors",
    "load_table": ".scenarios",
    "SnapshotSession": ".snapshots",
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
