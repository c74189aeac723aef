"""The pytest side of pytest-agentloom: the harness behind the fixture, snapshots, scenario tables.

``pytest_agentloom.plugin`` holds the hooks and fixtures and hands the work to
these modules; ``harness``, ``scenarios`` and ``snapshots`` import no pytest.
"""

from .harness import AgentloomHarness
from .scenarios import Scenario, ScenarioTableError, load_table
from .snapshots import SnapshotSession

__all__ = ["AgentloomHarness", "Scenario", "ScenarioTableError", "SnapshotSession", "load_table"]
