"""YAML-only tests: a file such as ``test_triage.agentloom.yaml`` is a scenario table collected by pytest.

Each row becomes a :class:`ScenarioItem`, a regular pytest function item whose
body runs the row and checks it, so fixtures (``agentloom``, ``tmp_path``, and
an ``agentloom_tools`` override in ``conftest.py``) work as in Python tests.

The file is a :class:`pytest.Module` whose object is an empty module of its own (never imported from the
YAML file), so that a module-scoped fixture has its node: pytest-recording's autouse ``vcr`` fixture asks
for ``vcr_cassette_dir`` (module scope), which errored "Could not obtain a node for scope Scope.Module" on
every row of a plain ``pytest.File``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ...errors import AgentloomError, ScenarioTableError
from .table import Scenario, load_table

__all__ = ["SCENARIO_KEY", "ScenarioFile", "ScenarioItem"]

SCENARIO_KEY = pytest.StashKey[Scenario]()


class ScenarioFile(pytest.Module):
    """A ``test_*.agentloom.yaml`` table: one test item per row, in a module scope of its own."""

    def collect(self) -> Iterator[ScenarioItem]:  # type: ignore[override]
        self.obj = _empty_module(self)  # before anything asks: pytest.Module would import the path as Python
        for scenario in load_table(self.path):
            yield ScenarioItem.from_scenario(self, scenario)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, ScenarioTableError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


def _users(entry: Any) -> bool:
    """Whether a traceback entry is of the user's code rather than pytest's or pluggy's."""
    parts = Path(str(entry.path)).parts
    return "_pytest" not in parts and "pluggy" not in parts


def _empty_module(node: pytest.Module) -> ModuleType:
    """The table's module object: empty (no fixtures, no marks), named and placed as the file."""
    module = ModuleType(node.path.name.removesuffix(node.path.suffix).replace(".", "_"))
    module.__file__ = str(node.path)
    return module


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
        if self.config.getoption("agentloom_full_trace", default=False):
            return super().repr_failure(excinfo)  # a bug in agentloom: every frame
        if isinstance(excinfo.value, (AssertionError, AgentloomError)):
            return str(excinfo.value)
        if not any(_users(entry) for entry in excinfo.traceback):
            # every frame left is pytest's: the row's own (and the engine's) are hidden, as they hold its state
            return (f"{excinfo.exconly()}\n(raised while running scenario '{self.scenario.id}': agentloom's frames "
                    "are left out of tracebacks, as they hold the run's state)")
        return super().repr_failure(excinfo)
