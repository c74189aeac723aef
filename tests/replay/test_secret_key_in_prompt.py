"""A secret used as a dictionary key, in a dict pasted into a prompt's text, gives the same bytes on record and
replay: the request a replay sends matches the one recorded (no ``cassette_mismatch``)."""

from __future__ import annotations

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import text

TOKEN = "tok-canary-keyed-5d6e7f"

FLOW = """\
name: keyed
config: {model: gpt-4o-mini}
state_schema: {session_token: {redact: true}}
state: {session_token: ""}
steps:
  - {id: lookup, type: tool, tool_name: keyed_lookup, tool_args: {token: state.session_token}, output: found}
  - id: say
    type: llm_call
    depends_on: [lookup]
    prompt: "Summarise {state.found} and {state.found!r}."
    output: said
"""

TEST_FILE = f"""\
import json

from pytest_agentloom import tool


@tool(side_effects=%s)
def keyed_lookup(token: str) -> dict:
    '''Sessions keyed by the token itself, between two other keys.'''
    found = {{"zeta": 1, token: {{"owner": "ann", "zz": 2, "aa": 3}}, "alpha": [{{token: True, "b": 0}}], "mid": 4}}
    return found if %s else json.dumps(found, sort_keys=True)


def test_keyed(agentloom):
    result = agentloom.run("keyed.yaml", state={{"session_token": {TOKEN!r}}}, tools=[keyed_lookup])
    assert result.status == "success", result.steps
"""


@pytest.mark.parametrize("as_text", [False, True], ids=["dict", "sorted JSON text"])
@pytest.mark.parametrize("side_effects", [True, False], ids=["taped tool", "tool that runs again"])
def test_a_secret_key_in_a_dict_in_prompt_text_replays(project: Project, side_effects: bool, as_text: bool) -> None:
    project.path.joinpath("keyed.yaml").write_text(FLOW)
    project.pytester.makepyfile(test_keyed=TEST_FILE % (side_effects, not as_text))
    project.live()
    project.server.plan("openai", text("summarised"))
    project.run("--agentloom-record", "test_keyed.py").assert_outcomes(passed=1)
    cassette = project.cassette("test_keyed.py/test_keyed.yaml").read_text()
    assert TOKEN not in cassette and "<REDACTED:sha256=" in cassette
    project.offline()
    replayed = project.run("test_keyed.py")
    replayed.assert_outcomes(passed=1)


def test_a_sorted_json_text_inside_other_text_is_sorted_again_after_its_secret_is_replaced() -> None:
    import json

    from pytest_agentloom._redaction.redactor import Redactor

    redactor = Redactor(["token"], salt="s")
    inner = {"zeta": 1, TOKEN: {"aa": 3}, "alpha": 2}
    recorded = redactor.redact_text(f"Summarise {json.dumps(inner, sort_keys=True)} please.", [TOKEN])
    marker = redactor.marker(TOKEN)
    replayed_inner = json.dumps({"zeta": 1, marker: {"aa": 3}, "alpha": 2}, sort_keys=True)
    assert recorded == f"Summarise {replayed_inner} please."
    assert TOKEN not in recorded


def test_json_text_that_was_not_sorted_keeps_its_order() -> None:
    from pytest_agentloom._redaction.redactor import Redactor

    redactor = Redactor(["token"], salt="s")
    text = f'Keep {{"zeta": 1, "{TOKEN}": 2}} as it is.'
    assert redactor.redact_text(text, [TOKEN]) == f'Keep {{"zeta": 1, "{redactor.marker(TOKEN)}": 2}} as it is.'
