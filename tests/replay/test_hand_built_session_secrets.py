"""A cassette session built by hand (``cassette.wrap(provider)``, then ``run_workflow``) scrubs the run's redacted
values without being told them: the run it serves is found from the engine, not from the caller.

Before, only ``CassetteSession.add_run`` (which the ``agentloom`` fixture and the CLI call) told the session a
run's secrets, so the module's own recipe recorded a redacted state value into the cassette, once per request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentloom import VirtualClock, resume_workflow, run_workflow
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.providers import OpenAIProvider
from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode
from tests.servers.fake_llm import text

pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")  # the gate is the point

SECRET = "canary-secret-7f3a9c"
OTHER = "second-canary-41d2e8"
KEY = "sk-test-0000000000000000"

FLOW = """\
name: support
state_schema: {api_token: {redact: true}}
state: {ticket: "", api_token: ""}
steps:
  - {id: classify, type: llm_call, model: gpt-4o-mini, prompt: "auth {state.api_token}: {state.ticket}",
     output: category}
  - {id: answer, type: llm_call, model: gpt-4o-mini, depends_on: [classify],
     prompt: "auth {state.api_token}: answer the {state.category}", output: reply}
"""


def _record(path: Path, fake_server, tokens: list[str]) -> str:
    workflow = parse_workflow(FLOW)
    fake_server.plan("openai", *[text("bug") for _ in range(2 * len(tokens))])
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL)) as cassette:
        provider = cassette.wrap(OpenAIProvider(api_key=KEY, base_url=fake_server.openai_base_url))
        for token in tokens:  # one provider, several runs: each run's values are scrubbed
            result = run_workflow(workflow, state={"ticket": "Printer on fire", "api_token": token},
                                  provider=provider, clock=VirtualClock(), runs_dir=False)
            assert result.ok, result.steps
    return path.read_text()


def test_a_hand_built_session_scrubs_each_runs_redacted_values(tmp_path: Path, fake_server) -> None:
    cassette = _record(tmp_path / "flow.yaml", fake_server, [SECRET, OTHER])
    sent = " ".join(str(request.json) for request in fake_server.requests_for("openai"))
    assert SECRET in sent and OTHER in sent  # the model was sent the real values
    assert SECRET not in cassette and OTHER not in cassette
    assert cassette.count("<REDACTED") >= 4  # each of the four requests kept a marker in the value's place


def test_the_hand_built_recording_replays_with_the_same_values(tmp_path: Path, fake_server) -> None:
    path = tmp_path / "flow.yaml"
    _record(path, fake_server, [SECRET])
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE)) as cassette:
        provider = cassette.wrap(OpenAIProvider(base_url="http://127.0.0.1:9/v1"))
        result = run_workflow(parse_workflow(FLOW), state={"ticket": "Printer on fire", "api_token": SECRET},
                              provider=provider, clock=VirtualClock(), runs_dir=False)
    assert result.ok and result.state["reply"] == "bug"


def test_a_resumed_run_is_noted_too(tmp_path: Path, fake_server) -> None:
    flow = FLOW.replace("  - {id: answer,", "  - {id: gate, type: approval_gate, depends_on: [classify], "
                                           "message: Go?}\n  - {id: answer,").replace(
        "depends_on: [classify],\n     prompt", "depends_on: [gate],\n     prompt")
    workflow = parse_workflow(flow)
    fake_server.plan("openai", text("bug"), text("done"))
    path = tmp_path / "flow.yaml"
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL)) as cassette:
        provider = cassette.wrap(OpenAIProvider(api_key=KEY, base_url=fake_server.openai_base_url))
        paused = run_workflow(workflow, state={"ticket": "t", "api_token": SECRET}, provider=provider,
                              clock=VirtualClock(), runs_dir=False, checkpoint_dir=tmp_path / "checkpoints")
        assert paused.status == "paused", paused.steps
        # the resume puts the redacted value back: the session learns it from the resumed run itself
        resumed = resume_workflow(paused, decision="approve", state={"api_token": OTHER}, provider=provider,
                                  clock=VirtualClock(), runs_dir=False)
        assert resumed.ok, resumed.steps
    cassette_text = path.read_text()
    assert SECRET not in cassette_text and OTHER not in cassette_text
