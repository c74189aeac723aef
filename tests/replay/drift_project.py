"""The drift check's pytester project: a triage workflow recorded against the fake server, then run live again.

The workflow has what a drift report speaks of: a structured output (``classify``), a router, an agent with a
tool (``investigate``) and a plain call (``reply``). :func:`record` commits a recording where the ticket is a bug
(the agent looks it up); the live side is then planned to differ (or not) by each test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentloom.testing._secrets_scan import check_no_secrets
from tests.replay.helpers import CANARY_KEY, CANARY_SECRET, Project
from tests.servers.fake_llm import text, tool_calls

TRIAGE = """\
name: triage
state_schema:
  api_token: {redact: true}
state: {ticket: "", api_token: ""}
agents:
  reader: {model: gpt-4o-mini, tools: [lookup], max_tokens: 200}
steps:
  - id: classify
    type: llm_call
    model: gpt-4o-mini
    prompt: "Classify (auth {state.api_token}): {state.ticket}"
    response_schema:
      type: json_schema
      schema: {type: object, properties: {category: {type: string}}, required: [category]}
    output: verdict
  - id: route
    type: router
    depends_on: [classify]
    conditions:
      - expression: "verdict.category == 'bug'"
        target: investigate
    default: reply
  - {id: investigate, type: agent, agent: reader, prompt: "Look into {state.ticket}", output: summary}
  - {id: reply, type: llm_call, model: gpt-4o-mini, prompt: "Reply to: {state.ticket}", output: answer}
"""

TRIAGE_TEST = """\
import os

from pytest_agentloom import tool


@tool
def lookup(ticket: int) -> str:
    \"\"\"Read a ticket.\"\"\"
    return f"ticket {ticket}: printer on fire"


def test_triage(agentloom):
    result = agentloom.run("triage.yaml", tools=[lookup],
                           state={"ticket": "Printer on fire", "api_token": os.environ["CANARY_SECRET"]})
    assert result.status == "success", result.steps
    agentloom.assert_snapshot(result)
"""


def plan_bug(project: Project, *, category: str = "bug", ticket: int = 7, tokens: int = 10,
             answer: str = "A printer fire.") -> None:
    """The replies of a run where the ticket is classified ``category`` (a bug: the agent looks it up and
    answers ``answer``)."""
    project.server.plan("openai", text(f'{{"category": "{category}"}}', input_tokens=tokens, output_tokens=3))
    if category == "bug":
        project.server.plan("openai", tool_calls(("lookup", {"ticket": ticket})), text(answer))
    else:
        project.server.plan("openai", text("We will call you."))


#: The first recording of this process, by file: later projects get the same files (the server's address put
#: right), so the suite pays for one recording, not one per test.
_RECORDED: dict[str, str] = {}
_FILES = ("cassettes/test_triage.py/test_triage.yaml", "__agentloom_snapshots__/test_triage/test_triage.yaml",
          ".agentloom/salt")  # the salt: the redacted secret's marker in the requests and snapshot depends on it


def record(project: Project) -> None:
    """Record the test (a bug), with its snapshot: the committed files a drift check must leave alone."""
    project.pytester.makefile(".yaml", triage=TRIAGE)
    project.pytester.makepyfile(test_triage=TRIAGE_TEST)
    (project.path / "test_support.py").unlink()
    project.live()
    if not _RECORDED:
        plan_bug(project)
        project.run("--agentloom-record", "--agentloom-create-snapshots").assert_outcomes(passed=1)
        _RECORDED.update({name: (project.path / name).read_text() for name in _FILES})
        _RECORDED["url"] = project.server.url
    else:
        for name in _FILES:
            (project.path / name).parent.mkdir(parents=True, exist_ok=True)
            (project.path / name).write_text(_RECORDED[name].replace(_RECORDED["url"], project.server.url))
    project.server.reset()


def fake_recording(project: Project) -> None:
    """The triage test with a cassette and a snapshot written by hand: enough for checks made before any test runs."""
    project.pytester.makefile(".yaml", triage=TRIAGE)
    project.pytester.makepyfile(test_triage=TRIAGE_TEST)
    (project.path / "test_support.py").unlink()
    for path in ("cassettes/test_triage.py/test_triage.yaml", "__agentloom_snapshots__/test_triage/test_triage.yaml"):
        (project.path / path).parent.mkdir(parents=True)
        (project.path / path).write_text(f"# committed {path}\n")


def committed(project: Project) -> dict[str, bytes]:
    """Every file of the project outside the scratch folders, by path: compared byte for byte after a check.

    ``__pycache__`` is Python's (pytest's rewritten test modules, written unless PYTHONDONTWRITEBYTECODE is set,
    as under tox), not the project's.
    """
    return {path.relative_to(project.path).as_posix(): path.read_bytes() for path in project.files()
            if not {".agentloom", "scratch", "__pycache__"} & set(path.parts)}


def drift(project: Project, *args: str, folder: str = ".agentloom/drift/check") -> pytest.RunResult:
    return project.run(f"--agentloom-drift={folder}", *args)


def assert_no_secret_in(folder: Path) -> None:
    """Neither the canary API key nor the redacted state value in any file under ``folder``."""
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert files, folder
    check_no_secrets([CANARY_KEY, CANARY_SECRET], files, {})  # raw, JSON-escaped, URL-encoded and base64 forms
