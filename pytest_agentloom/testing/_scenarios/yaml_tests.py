"""YAML-only tests: a file such as ``test_triage.agentloom.yaml`` is a scenario table collected by pytest.

Each row becomes a :class:`ScenarioItem`, a regular pytest function item whose
body runs the row and checks it, so fixtures (``agentloom``, ``tmp_path``, and
an ``agentloom_tools`` override in ``conftest.py``) work as in Python tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ...errors import AgentloomError, ScenarioTableError
from .table import Scenario, load_table

__all__ = ["SCENARIO_KEY", "ScenarioFile", "ScenarioItem"]

SCENARIO_KEY = pytest.StashKey[Scenario]()


class ScenarioFile(pytest.File):
    """A ``test_*.agentloom.yaml`` table: one test item per row."""

    def collect(self) -> Iterator[ScenarioItem]:
        for scenario in load_table(self.path):
            yield ScenarioItem.from_scenario(self, scenario)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, ScenarioTableError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ScenarioItem(pytest.Function):
    """One row of a YAML-only table, reported at the row's line."""

    @classmethod
    def from_scenario(cls, parent: ScenarioFile, scenario: Scenario) -> ScenarioItem:
        def run_row(agentloom: Any) -> None:
            __tracebackhide__ = True
            scenario.check(scenario.run(agentloom), agentloom)

        run_row.__name__ = f"scenario_{scenario.id}"
        item = cls.from_parent(parent, name=scenario.id, callobj=run_row)
        item.stash[SCENARIO_KEY] = scenario
        return item

    @property
    def scenario(self) -> Scenario:
        return self.stash[SCENARIO_KEY]

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.scenario.line - 1, f"scenario {self.scenario.id}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, (AssertionError, AgentloomError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)
