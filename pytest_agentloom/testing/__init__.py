"""The pytest side of pytest-agentloom: the harness behind the fixture, output checks, scenario tables,
judged verdicts, snapshots and the drift comparison.

``pytest_agentloom.plugin`` holds the hooks and fixtures and hands the work to the modules of this
package, which are internal (``_harness``, ``_session``, and the rooms ``_snapshots``, ``_scenarios``,
``_judge``, ``_live``, ``_review``, ``_settings``); what a test or a script may import is listed here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

#: The one list of this package's public names, by the module each is defined in (imported on first use).
#: ``__all__`` and the names a type checker sees (below) come from it; tests/test_public_api.py checks both.
_EXPORTS = {
    "._harness": ("AgentloomHarness",),
    "._judge.verdict": ("Verdict",),
    "._live.drift_diff": ("TestDrift", "compare_test"),
    "._live.trace_facts": ("run_facts",),
    "._output_checks": ("assert_contains", "assert_json_schema", "assert_matches", "assert_similar", "similarity"),
    "._scenarios.table": ("Scenario", "load_table"),
    "._snapshots.compare": ("SnapshotSession",),
    "..errors": ("ScenarioTableError",),
}
__getattr__, __dir__, __all__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:
    from ..errors import ScenarioTableError as ScenarioTableError
    from ._harness import AgentloomHarness as AgentloomHarness
    from ._judge.verdict import Verdict as Verdict
    from ._live.drift_diff import TestDrift as TestDrift
    from ._live.drift_diff import compare_test as compare_test
    from ._live.trace_facts import run_facts as run_facts
    from ._output_checks import assert_contains as assert_contains
    from ._output_checks import assert_json_schema as assert_json_schema
    from ._output_checks import assert_matches as assert_matches
    from ._output_checks import assert_similar as assert_similar
    from ._output_checks import similarity as similarity
    from ._scenarios.table import Scenario as Scenario
    from ._scenarios.table import load_table as load_table
    from ._snapshots.compare import SnapshotSession as SnapshotSession
