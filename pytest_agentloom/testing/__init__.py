"""The pytest side of pytest-agentloom: the harness behind the fixture, snapshots, scenario tables.

``pytest_agentloom.plugin`` holds the hooks and fixtures and hands the work to
these modules; ``harness``, ``scenarios`` and ``snapshots`` import no pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from ..errors import ScenarioTableError
    from ._harness import AgentloomHarness
    from ._scenarios.table import Scenario, load_table
    from ._snapshots.compare import SnapshotSession

__all__ = ["AgentloomHarness", "Scenario", "ScenarioTableError", "SnapshotSession", "load_table"]

_EXPORTS = {
    "AgentloomHarness": "._harness",
    "Scenario": "._scenarios.table",
    "ScenarioTableError": "..errors",
    "load_table": "._scenarios.table",
    "SnapshotSession": "._snapshots.compare",
}
__getattr__, __dir__ = attach(__name__, _EXPORTS)
