"""The agent example runs green as it would for a user: ``pytest examples/agent_triage``."""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "agent_triage"


@pytest.mark.slow
def test_the_triage_example_reaches_every_termination_reason(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(str(EXAMPLE), "-p", "no:cacheprovider", "-q", "-rA")
    result.assert_outcomes(passed=15)
    for reason in ("done", "step_budget", "time_budget", "cost_budget", "repeated_call", "stuck", "needs_approval",
                   "denied", "cancelled"):
        result.stdout.fnmatch_lines([f"PASSED *test_agent_triage.agentloom.yaml::{reason}*"])
