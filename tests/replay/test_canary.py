"""The canary: one secret of each shape, planted everywhere, found nowhere.

Seven secrets go into one workflow: a short one, a long one (with spaces, so YAML could fold it), a
multi-line one, a passphrase the provider streams back word by word, a token a tool uses as a dictionary
key, an API key in the environment (which ``printenv`` would print) and a password in the provider's base
URL. The workflow runs under pytest while recording (cassette, tool recording, snapshot, checkpoints,
run records), again in replay, through ``agentloom resume``, and through the CLI (``run --stream``
while recording, ``resume --json``, ``run --json --replay``, ``runs --json``). Every file any of them
wrote and everything they printed is searched for every secret, in every form a file could hold it:
zero hits.

(Duplicate YAML keys, which could switch a key's redaction off, are refused by the YAML reader of
issue 16; that case joins this test once it lands.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.replay.helpers import Project
from tests.servers.fake_llm import FakeLLMServer, text

SHORT = "Zq#7"
LONG = "long-canary " + " ".join(f"w{index:03d}q" for index in range(70))
MULTI_LINE = ("-----BEGIN CANARY KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIB\n"
              "q9Xf3kPzL0mNw8RtYbH2sVj4cUe6aGdKo1iT5WlZnMxQrE\n-----END CANARY KEY-----")
PASSPHRASE = "quokka marmalade zeppelin fjordwalker"
KEYED_TOKEN = "tok-canary-keyed-5d6e7f"
ENV_KEY = "sk-canary-env-9a8b7c6d5e4f"
URL_PASSWORD = "urlpass-canary-3c2b1a"
SALT = "canary-salt"

FLOW = """\
name: canary
config:
  model: gpt-4o-mini
  provider: openai
  stream: true
  checkpoint: true
  sandbox: {allowed_commands: [printenv]}
state_schema:
  pin: {redact: true}
  long_secret: {redact: true}
  pem: {redact: true}
  passphrase: {redact: true}
  session_token: {redact: true}
state: {pin: "", long_secret: "", pem: "", passphrase: "", session_token: ""}
steps:
  - {id: environment, type: tool, tool_name: shell_command, tool_args: {command: printenv}, output: env_dump}
  - id: keyed
    type: tool
    tool_name: keyed_lookup
    tool_args: {token: state.session_token, pem: state.pem, long: state.long_secret}
    output: lookup
  - id: say
    type: llm_call
    depends_on: [environment, keyed]
    prompt: "Repeat {state.passphrase} and {state.pin}; the environment was {state.env_dump}"
    output: said
  - {id: gate, type: approval_gate, message: "Ship it?", depends_on: [say]}
"""

TOOLS = """\
from pytest_agentloom import tool


@tool(side_effects=True)
def keyed_lookup(token: str, pem: str, long: str) -> dict:
    '''Look a session up: the answer is keyed by the token itself.'''
    return {token: {"owner": "ann", "pem_lines": pem.count("\\n") + 1, "long_words": len(long.split())}}


TOOLS = [keyed_lookup]
"""

TEST_FILE = f"""\
from canary_tools import TOOLS

STATE = {{"pin": {SHORT!r}, "long_secret": {LONG!r}, "pem": {MULTI_LINE!r}, "passphrase": {PASSPHRASE!r},
         "session_token": {KEYED_TOKEN!r}}}


def test_canary(agentloom):
    result = agentloom.run("canary.yaml", state=STATE, tools=TOOLS)
    assert result.status == "paused", result.steps
    print(result.to_json())
    agentloom.assert_snapshot(result)
    resumed = agentloom.resume(result, approve=True)
    assert resumed.status == "success", resumed.steps
    print(resumed.to_json())
    agentloom.assert_snapshot(resumed)
    assert resumed.record_path.is_file()  # held records are written once read: both are searched below
"""


def reply_text() -> str:
    return f"You said {PASSPHRASE} and {SHORT}; key {ENV_KEY}."


def forms(secret: str) -> list[str]:
    """What to search for: the secret as written and JSON-escaped, and each of its lines and words long enough
    to be its own (a folded, wrapped or split copy leaves those behind)."""
    found = {secret, json.dumps(secret)[1:-1]}
    found.update(line for line in secret.splitlines() if len(line) >= 8)
    if "\n" not in secret:
        found.update(word for word in secret.split() if len(word) >= 5 and word != "long-canary")
    return sorted(found)


SECRETS = [SHORT, LONG, MULTI_LINE, PASSPHRASE, KEYED_TOKEN, ENV_KEY, URL_PASSWORD]


def hits(sources: dict[str, str]) -> list[str]:
    return [f"{name}: {form!r}" for name, text_ in sources.items() for secret in SECRETS for form in forms(secret)
            if form in text_]


def read_all(folder: Path) -> dict[str, str]:
    return {str(path): path.read_text(encoding="utf-8", errors="replace")
            for path in sorted(folder.rglob("*")) if path.is_file() and "__pycache__" not in path.parts}


def planted(project_path: Path) -> None:
    (project_path / "canary.yaml").write_text(FLOW)
    (project_path / "canary_tools.py").write_text(TOOLS)
    (project_path / ".agentloom").mkdir(exist_ok=True)
    (project_path / ".agentloom" / "salt").write_text(SALT + "\n")


def url_with_password(server: FakeLLMServer) -> str:
    return server.openai_base_url.replace("http://", f"http://canary-user:{URL_PASSWORD}@", 1)


def test_no_secret_of_any_shape_reaches_a_file_or_an_output_under_pytest(project: Project) -> None:
    planted(project.path)
    project.pytester.makepyfile(test_planted=TEST_FILE)
    project.pytester.syspathinsert()
    project.live()
    project.monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    project.monkeypatch.setenv("OPENAI_BASE_URL", url_with_password(project.server))
    project.server.plan("openai", text(reply_text()))
    # each run's temporary folder (checkpoints, run records) inside the project, where it is searched
    recorded = project.run("--agentloom-record", "--agentloom-update-snapshots", "-s", "test_planted.py",
                           f"--basetemp={project.path / 'tmp-record'}")
    recorded.assert_outcomes(passed=1)
    cassette = project.cassette("test_planted.py/test_canary.yaml").read_text()
    assert "<REDACTED:sha256=" in cassette and "data: " in cassette  # a streamed reply was recorded
    request = project.server.requests_for("openai")[0]
    assert PASSPHRASE in json.dumps(request.json)  # the provider did get the real values
    project.offline()
    replayed = project.run("-s", "test_planted.py", f"--basetemp={project.path / 'tmp-replay'}")
    replayed.assert_outcomes(passed=1)
    sources = {name: text_ for name, text_ in read_all(project.path).items()
               if not name.endswith("test_planted.py")}  # the test that plants them holds them, as it should
    for kind in ("snapshots", "tmp-record", "tmp-replay", ".tools.yaml"):
        assert any(kind in name for name in sources), kind
    assert sum(1 for name in sources if name.endswith(".json")) >= 4  # checkpoints and run records, both runs
    for label, run in (("record", recorded), ("replay", replayed)):
        sources[f"{label} stdout"] = run.stdout.str()
        sources[f"{label} stderr"] = run.stderr.str()
    assert "\n".join(hits(sources)) == ""


def agentloom(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_no_secret_of_any_shape_reaches_a_file_or_an_output_of_the_cli(tmp_path: Path, fake_server) -> None:
    planted(tmp_path)
    base = {key: value for key, value in os.environ.items()
            if not key.startswith(("OPENAI_", "ANTHROPIC_", "AGENTLOOM_")) and key != "CI"}
    root = str(Path(__file__).resolve().parents[2])
    base.update(PYTHONPATH=os.pathsep.join([str(tmp_path), root]), AGENTLOOM_RUNS_DIR=str(tmp_path / "runs"))
    live = {**base, "OPENAI_API_KEY": ENV_KEY, "OPENAI_BASE_URL": url_with_password(fake_server)}
    state = [f"--state=pin={SHORT}", f"--state=long_secret={LONG}", f"--state=pem={MULTI_LINE}",
             f"--state=passphrase={PASSPHRASE}", f"--state=session_token={KEYED_TOKEN}"]
    tools = "--tools=canary_tools:TOOLS"
    fake_server.plan("openai", text(reply_text()))
    outputs = {}
    streamed = agentloom(tmp_path, live, "run", "canary.yaml", "--stream", "--run-id", "cli-live", *state, tools,
                         "--record", "cli.cassette.yaml")
    assert streamed.returncode == 4, streamed.stdout + streamed.stderr  # paused at the gate
    assert "<REDACTED:sha256=" in streamed.stdout and "<SCRUBBED>" in streamed.stdout  # streamed, redacted
    outputs["run --stream --record"] = streamed
    outputs["resume --json"] = agentloom(tmp_path, live, "resume", "cli-live", "--approve", "--json", tools)
    assert outputs["resume --json"].returncode == 0, outputs["resume --json"].stderr
    replayed = agentloom(tmp_path, base, "run", "canary.yaml", "--json", "--run-id", "cli-replay", *state, tools,
                         "--replay", "cli.cassette.yaml")
    assert replayed.returncode == 4, replayed.stdout + replayed.stderr
    outputs["run --json --replay"] = replayed
    outputs["runs --json"] = agentloom(tmp_path, base, "runs", "--json")
    sources = read_all(tmp_path)
    assert any(name.endswith("cli-live.json") for name in sources)  # checkpoints and records were written
    for label, done in outputs.items():
        sources[f"{label} stdout"] = done.stdout
        sources[f"{label} stderr"] = done.stderr
    assert "\n".join(hits(sources)) == ""


@pytest.mark.parametrize("secret", SECRETS)
def test_the_search_finds_each_secret_where_it_is(secret: str) -> None:
    """The search itself: every shape is found when present as written, escaped or folded."""
    import yaml

    assert hits({"plain": f"x {secret} y"}) and hits({"json": json.dumps({"v": secret})})
    assert hits({"yaml": yaml.safe_dump({"v": secret}, width=40)})
