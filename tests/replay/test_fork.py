"""``agentloom.fork(at=STEP, then=...)``: a recorded run replayed up to a step, then answered by another provider
or model; the two runs compared as a drift check compares them; nothing written."""

from __future__ import annotations

import json

from tests.replay.drift_project import committed, record
from tests.replay.helpers import Project
from tests.servers.fake_llm import text

FORK_TEST = """
import json
import os

from pytest_agentloom import Scripted, tool


@tool
def lookup(ticket: int) -> str:
    \"\"\"Read a ticket.\"\"\"
    return f"ticket {ticket}: printer on fire"


STATE = {"ticket": "Printer on fire", "api_token": os.environ["CANARY_SECRET"]}


def test_triage(agentloom):
    BODY
"""

SCRIPTED = """fork = agentloom.fork("triage.yaml", STATE, tools=[lookup], at="investigate",
                          then=Scripted({"investigate": "Completely different answer text."}))
    assert fork.recorded.state["summary"] == "A printer fire."
    assert fork.forked.state["summary"] == "Completely different answer text."
    assert fork.forked.steps["classify"].output == fork.recorded.steps["classify"].output  # the replayed prefix
    assert fork.verdict == "regression"
    open(os.environ["FORK_OUT"], "w").write(json.dumps(fork.changes))"""

LIVE = """fork = agentloom.fork("triage.yaml", STATE, tools=[lookup], at="investigate", model="gpt-4.1")
    assert fork.forked.state["summary"] == "The live model says: paper jam."
    open(os.environ["FORK_OUT"], "w").write(json.dumps(fork.changes))"""


def _fork_test(project: Project, body: str) -> None:
    project.pytester.makepyfile(test_triage=FORK_TEST.replace("BODY", body))
    project.monkeypatch.setenv("FORK_OUT", str(project.path.parent / f"{project.path.name}-changes.json"))


def _changes(project: Project) -> list[str]:
    return list(json.loads((project.path.parent / f"{project.path.name}-changes.json").read_text()))


def test_a_fork_replays_up_to_the_step_and_compares_what_the_other_provider_did(project: Project) -> None:
    record(project)
    _fork_test(project, SCRIPTED)
    project.offline()
    before = committed(project)

    result = project.run()

    result.assert_outcomes(passed=1)
    changes = _changes(project)
    assert changes[:2] == ['tool calls: lookup({"ticket": 7}) -> (none)',
                           "output investigate: 'A printer fire.' -> 'Completely different answer text.' "
                           "(similarity 0.00 < 0.6)"]
    assert committed(project) == before  # no cassette, snapshot or record written




def test_a_fork_onto_another_model_sends_only_the_forked_requests_live(project: Project) -> None:
    record(project)
    _fork_test(project, LIVE)
    project.live()
    project.server.plan("openai", text("The live model says: paper jam."))
    before = committed(project)

    result = project.run()

    result.assert_outcomes(passed=1)
    assert len(project.server.requests) == 1  # classify was replayed; only the agent's turn went live
    sent = json.loads(project.server.requests[0].body)
    assert sent["model"] == "gpt-4.1"
    assert "output investigate: 'A printer fire.' -> 'The live model says: paper jam.' (similarity 0.00 < 0.6)" \
        in _changes(project)
    assert committed(project) == before


def test_a_fork_names_a_missing_step_and_refuses_to_record(project: Project) -> None:
    record(project)
    _fork_test(project, 'agentloom.fork("triage.yaml", STATE, tools=[lookup], at="investigat", then=Scripted({}))')
    project.offline()
    missing = project.run()
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*agentloom.fork(at='investigat') in test_triage.py::test_triage: the workflow "
                                  "has no step 'investigat'.*", "*did you mean 'investigate'?*"])
    _fork_test(project, 'agentloom.fork("triage.yaml", STATE, tools=[lookup], at="investigate", then=Scripted({}))')
    recording = project.run("--agentloom-record")
    recording.assert_outcomes(failed=1)
    recording.stdout.fnmatch_lines(["*forks a recorded run: it needs a cassette, replayed.*"])
