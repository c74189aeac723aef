"""Record with the real secrets, replay in CI with dummies: cassette, tool tape and snapshot all pass.

A team records once with its real helpdesk token and its real provider key (named by ``api_key_env``, a
name no suffix rule knows), commits the files, and CI replays with a dummy token and no key. The secret
has non-ASCII characters, a quote and a backslash; the model echoes it inside a tool call's ``arguments``
(JSON-escaped), a side-effect tool keys its result by it and returns it base64- and URL-encoded, the reply
repeats the key in each form. Every file either run wrote (cassette, tool tape, snapshot, checkpoints, run
records, junit XML, HTML and Markdown reports) and everything they printed is searched for each secret in
every form (raw, JSON-escaped, URL-encoded, base64): none is found, and the replay passes.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import text, tool_calls

TOKEN = 'päss"wört\\canary-42'  # non-ASCII, a quote, a backslash
DUMMY = "dummy-helpdesk-token"
KEY = "sk-team/canary+key=9f8e7d6c"  # "/", "+" and "=" change under URL-encoding
KEY_VARIABLE = "LLM_CRED_FOR_TEAM"  # named by api_key_env; no suffix rule knows it

FLOW = f"""\
name: team
config:
  model: gpt-4o-mini
  provider: openai
  providers: {{openai: {{api_key_env: {KEY_VARIABLE}}}}}
  checkpoint: true
state_schema:
  helpdesk_token: {{redact: true}}
state: {{helpdesk_token: ""}}
steps:
  - id: ticket
    type: tool
    tool_name: create_ticket
    tool_args: {{token: state.helpdesk_token}}
    output: ticket
  - id: ask
    type: llm_call
    depends_on: [ticket]
    prompt: "File the ticket with token {{state.helpdesk_token}}."
    tools: [{{name: create_ticket}}]
    output: answer
"""

TOOLS = """\
import base64
import os
from urllib.parse import quote

from pytest_agentloom import tool


@tool(side_effects=True)
def create_ticket(token: str) -> dict:
    '''Open a helpdesk ticket: the answer is keyed by the token, and echoes it encoded.'''
    return {"id": 7, token: "open", "b64": base64.b64encode(token.encode()).decode(), "url": quote(token, safe=""),
            "key": os.environ.get("LLM_CRED_FOR_TEAM", "")}


TOOLS = [create_ticket]
"""

TEST_FILE = """\
import os

from team_tools import TOOLS


def test_team(agentloom):
    result = agentloom.run("team.yaml", state={"helpdesk_token": os.environ["HELPDESK"]}, tools=TOOLS)
    assert result.status == "success", result.steps
    print(result.to_json())
    agentloom.assert_snapshot(result)
    assert result.record_path.is_file()  # held run records are written once read: searched too
"""


def encoded(secret: str) -> list[str]:
    """Each form a file or an output could hold ``secret`` in."""
    raw = secret.encode()
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
             quote(secret, safe=""), quote_plus(secret), base64.b64encode(raw).decode(),
             base64.urlsafe_b64encode(raw).decode(), base64.b64encode(b"x" + raw).decode()[2:12]}
    return sorted(form for form in forms if form)


def reply(secret: str, key: str) -> str:
    return (f"Filed. Key {key}, {quote(key, safe='')}, {base64.b64encode(key.encode()).decode()}; "
            f"token {quote_plus(secret)} {base64.b64encode(b'user:' + secret.encode()).decode()}.")


def hits(sources: dict[str, str], secrets: list[str]) -> list[str]:
    return [f"{name}: {form!r}" for name, content in sources.items() for secret in secrets
            for form in encoded(secret) if form in content]


def read_all(folder: Path) -> dict[str, str]:
    return {str(path): path.read_text(encoding="utf-8", errors="replace") for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".py"}


@pytest.fixture
def team(project: Project) -> Project:
    project.pytester.makefile(".yaml", team=FLOW)
    project.pytester.makepyfile(team_tools=TOOLS, test_team=TEST_FILE)
    project.pytester.syspathinsert()
    (project.path / ".agentloom").mkdir(exist_ok=True)
    (project.path / ".agentloom" / "salt").write_text("team-salt\n")
    return project


def record(team: Project) -> pytest.RunResult:
    team.monkeypatch.setenv("OPENAI_BASE_URL", team.server.openai_base_url)
    team.monkeypatch.setenv(KEY_VARIABLE, KEY)
    team.monkeypatch.setenv("HELPDESK", TOKEN)
    team.server.plan("openai", tool_calls(("create_ticket", {"token": TOKEN})), text(reply(TOKEN, KEY)))
    return team.run("--agentloom-record", "--agentloom-update-snapshots", "-s", "test_team.py",
                    f"--basetemp={team.path / 'tmp-record'}", f"--junitxml={team.path / 'record.xml'}",
                    f"--agentloom-report={team.path / 'record.html'}")


def test_a_dummy_secret_replays_what_the_real_one_recorded_and_no_form_of_either_is_written(team: Project) -> None:
    recorded = record(team)
    recorded.assert_outcomes(passed=1)
    sent = team.server.requests_for("openai")
    assert len(sent) == 2 and TOKEN in sent[0].json["messages"][0]["content"]  # the provider got the real one
    tape = team.cassette("test_team.py/test_team.tools.yaml").read_text()
    assert tape.count("<REDACTED:sha256=") >= 3, tape  # the argument, the result's key and its encodings

    team.offline()
    team.monkeypatch.delenv(KEY_VARIABLE)
    team.monkeypatch.setenv("HELPDESK", DUMMY)
    replayed = team.run("-s", "test_team.py", f"--basetemp={team.path / 'tmp-replay'}",
                        f"--junitxml={team.path / 'replay.xml'}", f"--agentloom-report={team.path / 'replay.md'}")
    replayed.assert_outcomes(passed=1)

    sources = read_all(team.path)
    for kind in ("snapshots", ".tools.yaml", "cassettes", "tmp-record", "tmp-replay", "record.xml", "replay.xml",
                 "record.html", "replay.md"):
        assert any(kind in name for name in sources), kind
    assert sum(1 for name in sources if name.endswith(".json")) >= 4  # checkpoints and run records, both runs
    for label, run in (("record", recorded), ("replay", replayed)):
        sources[f"{label} stdout"] = run.stdout.str()
        sources[f"{label} stderr"] = run.stderr.str()
    assert "\n".join(hits(sources, [TOKEN, KEY, DUMMY])) == ""


def test_markers_compare_by_digest_when_asked(team: Project) -> None:
    """``AGENTLOOM_SECRET_MARKERS=exact``: a test that must tell two secrets apart sees the dummy differ."""
    record(team).assert_outcomes(passed=1)
    team.offline()
    team.monkeypatch.setenv("HELPDESK", DUMMY)
    team.monkeypatch.setenv("AGENTLOOM_SECRET_MARKERS", "exact")
    failed = team.run("test_team.py")
    failed.assert_outcomes(failed=1)  # the tool step's call is not in the recording: its step fails
    out = failed.stdout.str()  # the agentloom section of the failed test names the step and the miss
    assert "failed step 'ticket' (tool_error)" in out and "ToolReplayMissError" in out
    team.monkeypatch.setenv("HELPDESK", TOKEN)  # the real secret: the same digests, so it passes
    team.run("test_team.py").assert_outcomes(passed=1)


def test_the_search_finds_each_form() -> None:
    for secret in (TOKEN, KEY):
        assert hits({"raw": f"a {secret} b", "json": json.dumps({"v": secret})}, [secret])
        assert hits({"url": quote(secret, safe="")}, [secret]) and hits({"b64": reply(secret, "x")}, [secret])


README_FLOW = """\
name: team
config:
  model: gpt-4o-mini
  provider: openai
  providers: {openai: {api_key_env: TEAM_OPENAI_KEY}}
steps:
  - {id: ask, type: llm_call, prompt: "Hello", output: answer}
"""

README_TEST = """\
def test_readme(agentloom):
    result = agentloom.run("readme.yaml")
    assert result.status == "success", result.steps["ask"].error
"""


def test_a_provider_401_echoing_the_readme_key_leaves_no_copy(team: Project) -> None:
    """The README's ``TEAM_OPENAI_KEY``: a 401 repeating the key fails the test; no file or output keeps it."""
    team.pytester.makefile(".yaml", readme=README_FLOW)
    team.pytester.makepyfile(test_readme=README_TEST)
    team.monkeypatch.setenv("OPENAI_BASE_URL", team.server.openai_base_url)
    team.monkeypatch.setenv("TEAM_OPENAI_KEY", KEY)
    from tests.servers.fake_llm import fail

    team.server.plan("openai", fail(401, f"Incorrect API key provided: {KEY}. Also {quote(KEY, safe='')}."))
    failed = team.run("--agentloom-record", "-vv", "--tb=long", "test_readme.py",
                      f"--basetemp={team.path / 'tmp-record'}", f"--junitxml={team.path / 'record.xml'}",
                      f"--agentloom-report={team.path / 'record.md'}")
    failed.assert_outcomes(failed=1)
    assert "Incorrect API key provided: <SCRUBBED>" in failed.stdout.str()
    sources = read_all(team.path)
    assert any("record.xml" in name for name in sources) and any("record.md" in name for name in sources)
    sources["stdout"], sources["stderr"] = failed.stdout.str(), failed.stderr.str()
    assert "\n".join(hits(sources, [KEY])) == ""
