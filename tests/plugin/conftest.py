"""Shared pieces for the plugin's pytester tests: a small triage workflow written into each test's folder."""

from __future__ import annotations

import pytest

# pytester's in-process runs forget every module first imported during the run; import the slow ones
# here so that each inner run does not pay for them again (deepdiff: snapshot diffs; hypothesis: its
# pytest plugin imports it in the terminal summary).
try:
    import deepdiff  # noqa: F401
    import hypothesis  # noqa: F401
except ImportError:  # pragma: no cover - optional speed-up only
    pass

# The package's exports are lazy, so the plugin alone no longer imports the engine or pydantic. Import them
# here: otherwise the first inner run imports them, pytester drops them afterwards, and the next inner run
# builds the engine's models against a second copy of pydantic's modules (private attributes then break).
import pytest_agentloom.engine._entry.run_workflow
import pytest_agentloom.engine._format.loader
import pytest_agentloom.testing._harness
import pytest_agentloom.testing._judge.judge
import pytest_agentloom.testing._judge.verdicts
import pytest_agentloom.testing._output_checks
import pytest_agentloom.testing._scenarios.table  # noqa: F401

TRIAGE = """\
name: triage
state:
  ticket: ""
steps:
  - id: classify
    type: llm_call
    model: gpt-4o-mini
    prompt: "Classify: {state.ticket}"
    output: category
  - id: route
    type: router
    depends_on: [classify]
    conditions:
      - expression: "category == 'bug'"
        target: file_bug
    default: reply
  - id: file_bug
    type: tool
    tool_name: file_bug
    tool_args: {title: "{state.ticket}"}
    output: bug_id
  - id: reply
    type: llm_call
    model: gpt-4o-mini
    prompt: "Reply to: {state.ticket}"
    output: answer
"""

TOOLS_CONFTEST = """\
import pytest

@pytest.fixture
def agentloom_tools():
    return {"file_bug": lambda title: "BUG-" + str(len(title))}
"""


@pytest.fixture
def triage(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester folder holding ``flow.yaml`` (the triage workflow) and a conftest registering its tool."""
    pytester.makefile(".yaml", flow=TRIAGE)
    pytester.makeconftest(TOOLS_CONFTEST)
    return pytester


@pytest.fixture
def triage_text() -> str:
    return TRIAGE
