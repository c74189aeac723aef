"""A provider built in Python has its key scrubbed exactly as ``config.providers.*.api_key_env`` is.

``OpenAIProvider(api_key_env="TEAM_KEY")`` reads its key from a variable whose name no policy marks, and
``OpenAIProvider(api_key="sk-...")`` is given it outright. The reply and a tool repeat both keys, so without
the provider noting them (providers/_common.key_setting) they reach the cassette, the tool tape, the
snapshot, the checkpoint, the report, the junit XML and the terminal. Every file written is searched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import text

TEAM_KEY = "team-canary-3f9a1b7c5d"  # TEAM_KEY: a name no *_KEY/_TOKEN rule marks as a credential
EXPLICIT = "sk-explicit-canary-8e2d4c6a"

FLOW = """\
name: keyed
config: {model: gpt-4o-mini, checkpoint: true}
steps:
  - {id: look, type: tool, tool_name: lookup, output: found}
  - {id: say, type: llm_call, depends_on: [look], prompt: "Summarise {state.found}", output: said}
  - {id: gate, type: approval_gate, depends_on: [say], message: "Ship?"}
"""

TEST_FILE = f"""\
import os

from pytest_agentloom import tool
from pytest_agentloom.providers import OpenAIProvider


SHOWN = []


@tool(side_effects=True)
def lookup() -> str:
    '''Look the key up (a tool that prints what it should not).'''
    return "key: " + SHOWN[-1]


def check(agentloom, provider, key):
    SHOWN.append(key)
    result = agentloom.run("keyed.yaml", provider=provider, tools=[lookup])
    assert result.status == "paused", result.steps
    print(result.to_json())
    print(result.state)
    agentloom.assert_snapshot(result)


def test_by_variable(agentloom):
    provider = OpenAIProvider(api_key_env="TEAM_KEY", base_url=os.environ.get("FAKE_URL"))
    check(agentloom, provider, os.environ["TEAM_KEY"])


def test_by_value(agentloom):
    check(agentloom, OpenAIProvider(api_key={EXPLICIT!r}, base_url=os.environ.get("FAKE_URL")), {EXPLICIT!r})
"""


def read_all(folder: Path) -> dict[str, str]:
    return {str(path): path.read_text(encoding="utf-8", errors="replace") for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts and path.name != "test_keyed.py"}


def found(sources: dict[str, str]) -> list[str]:
    forms = {secret_form for secret in (TEAM_KEY, EXPLICIT) for secret_form in (secret, json.dumps(secret)[1:-1])}
    return [f"{name}: {form}" for name, body in sources.items() for form in sorted(forms) if form in body]


def test_keys_of_providers_built_in_python_reach_no_file_and_no_output(project: Project) -> None:
    project.path.joinpath("keyed.yaml").write_text(FLOW)
    project.pytester.makepyfile(test_keyed=TEST_FILE)
    project.monkeypatch.setenv("TEAM_KEY", TEAM_KEY)
    project.monkeypatch.setenv("FAKE_URL", project.server.openai_base_url)
    project.server.plan("openai", text(f"Noted {TEAM_KEY}."), text(f"Noted {EXPLICIT}."))
    # providers built in the test go through its cassette (recorded here), as the default gateway does
    ran = project.run("-s", "-vv", "test_keyed.py", "--agentloom-report=report.html", "--junitxml=junit.xml",
                      "--agentloom-update-snapshots", "--agentloom-record", f"--basetemp={project.path / 'tmp'}")
    ran.assert_outcomes(passed=2)
    sent = json.dumps([request.json for request in project.server.requests_for("openai")])
    assert EXPLICIT in sent and TEAM_KEY in sent  # the model did get them (the tool's result): they are real
    auth = [request.headers.get("authorization") for request in project.server.requests_for("openai")]
    assert auth == [f"Bearer {TEAM_KEY}", f"Bearer {EXPLICIT}"]
    sources = read_all(project.path)
    for kind in ("snapshots", "checkpoints", "report.html", "junit.xml", "test_by_variable.yaml",
                 "test_by_value.tools.yaml"):
        assert any(kind in name for name in sources), (kind, sorted(sources))
    sources["stdout"], sources["stderr"] = ran.stdout.str(), ran.stderr.str()
    assert "<SCRUBBED>" in sources["stdout"]
    assert "\n".join(found(sources)) == ""


def test_a_cassette_scrubs_the_key_of_a_provider_built_inside_its_session(tmp_path: Path, fake_server,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_agentloom.providers import OpenAIProvider
    from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode
    from tests.replay.test_cassette import request as ask
    from tests.replay.test_cassette import run_calls

    monkeypatch.setenv("TEAM_KEY", TEAM_KEY)
    fake_server.plan("openai", text(f"Noted {TEAM_KEY}."), text(f"Noted {EXPLICIT}."))
    path = tmp_path / "c.yaml"
    with CassetteSession(CassetteConfig(path=path, mode=RecordMode.ALL)) as session:
        by_variable = OpenAIProvider(api_key_env="TEAM_KEY", base_url=fake_server.openai_base_url)
        by_value = OpenAIProvider(api_key=EXPLICIT, base_url=fake_server.openai_base_url)
        answers = [*run_calls(session, by_variable, [ask(model="gpt-4o-mini")]),
                   *run_calls(session, by_value, [ask("again", model="gpt-4o-mini")])]
    assert [answer.text for answer in answers] == [f"Noted {TEAM_KEY}.", f"Noted {EXPLICIT}."]
    cassette = path.read_text()
    assert "<SCRUBBED>" in cassette
    assert found({str(path): cassette}) == []
