"""The ``agentloom`` command, run as a real subprocess (``python -m pytest_agentloom.cli``).

Each subprocess costs an interpreter start, so one run checks a whole table
where it can. Runs happen in ``tmp_path`` (records and checkpoints land there)
with a fixed redaction salt.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agentloom._redaction.redactor import make_marker
from pytest_agentloom.cli import _STATUS_EXIT, EXIT_CODES, parse_state_value
from pytest_agentloom.engine._outcome.result import RunStatus

SALT = "cli-tests"
CANARY = "sk-canary-cli-5d6e7f"

TOOLS = """\
def echo(**kwargs):
    return kwargs

def ship(service):
    return f"shipped {service}"

def boom():
    raise RuntimeError("disk full")

TOOLS = {"echo": echo, "ship": ship, "boom": boom}
"""

ECHO = """\
name: echo
state: {api_key: default-key}
state_schema: {api_key: {redact: true}}
steps:
  - {id: show, type: tool, tool_name: echo, tool_args: {key: state.api_key, text: "key={state.api_key}"}, output: shown}
"""

GATED = f"""\
name: release
state: {{api_key: {CANARY}, service: billing}}
state_schema: {{api_key: {{redact: true}}}}
steps:
  - {{id: gate, type: approval_gate, message: "Ship it?", output: decision}}
  - id: route
    type: router
    depends_on: [gate]
    conditions: [{{expression: "decision == 'approved'", target: ship}}]
    default: stop
  - {{id: ship, type: tool, tool_name: ship, tool_args: {{service: "{{state.service}}"}}, output: result}}
  - {{id: stop, type: tool, tool_name: echo, output: result}}
"""


@pytest.fixture
def cli(tmp_path: Path):
    (tmp_path / "cli_tools.py").write_text(TOOLS)

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
               "AGENTLOOM_REDACTION_SALT": SALT}  # read at each call, so monkeypatch.setenv reaches it
        for name in ("AGENTLOOM_RUNS_DIR", "AGENTLOOM_CHECKPOINT_DIR", "AGENTLOOM_REDACT_STATE_KEYS"):
            env.pop(name, None)
        return subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)

    return call


def write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text)
    return name


# -- --state parsing (docs/cli.md: The agentloom command): the table ----------------------------------------------

STATE_TABLE = [
    ("items", "[1, 2, 3]", [1, 2, 3]),
    ("obj", '{"a": 1}', {"a": 1}),
    ("quoted", '"hello"', "hello"),
    ("int", "42", 42),
    ("neg", "-3.5", -3.5),
    ("exp", "1e3", 1000.0),
    ("yes", "true", True),
    ("no", "false", False),
    ("nothing", "null", None),
    ("question", "Is Python 3.14 supported?", "Is Python 3.14 supported?"),
    ("broken", "[1, 2", "[1, 2"),
    ("numberish", "42abc", "42abc"),
    ("version", "3.14.1", "3.14.1"),
    ("truthy", "trueish", "trueish"),
    ("word", "True", "True"),
    ("empty", "", ""),
    ("eq", "a=b", "a=b"),
    ("limits.max_words", "80", 80),
    ("nan", "[NaN]", "[NaN]"),  # Python's json reads NaN and Infinity; JSON doesn't, so these stay strings
    ("inf", "-Infinity", "-Infinity"),
    ("spaced", " 42", " 42"),  # doesn't start like JSON
]


@pytest.mark.parametrize(("key", "raw", "expected"), STATE_TABLE)
def test_parse_state_value_table(key, raw, expected):
    assert parse_state_value(raw) == expected


def test_state_table_through_the_command_line(cli, tmp_path):
    flow = write(tmp_path, "echo.yaml", ECHO)
    args = [arg for key, raw, _ in STATE_TABLE for arg in ("--state", f"{key}={raw}")]
    done = cli("run", flow, "--tools", "cli_tools", "--json", "--no-record", *args)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)["state"]
    for key, _, expected in STATE_TABLE:
        assert shown[key] == expected, key
    assert "limits" not in shown  # the key is taken as written, dots included


def test_state_without_equals_is_a_usage_error(cli, tmp_path):
    done = cli("run", write(tmp_path, "echo.yaml", ECHO), "--state", "just_a_key")
    assert done.returncode == EXIT_CODES["usage_error"] == 2
    assert "--state needs key=value, got 'just_a_key'" in done.stderr


# -- --json and redaction -------------------------------------------------------------------------------------


def test_json_prints_the_redacted_result(cli, tmp_path):
    flow = write(tmp_path, "echo.yaml", ECHO)
    done = cli("run", flow, "--tools", "cli_tools", "--json", "--state", f"api_key={CANARY}", "--run-id", "r1",
               "--checkpoint")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    marker = make_marker(CANARY, salt=SALT.encode())
    assert result["state"]["api_key"] == marker
    assert result["state"]["shown"] == {"key": marker, "text": f"key={marker}"}
    assert result["status"] == "success" and result["run_id"] == "r1"
    assert CANARY not in done.stdout + done.stderr
    record = tmp_path / "agentloom_runs" / "r1.json"
    assert json.loads(record.read_text())["status"] == "success"
    assert CANARY not in record.read_text()
    checkpoint = json.loads((tmp_path / "agentloom_runs" / "checkpoints" / "r1.json").read_text())
    assert checkpoint["status"] == "success" and checkpoint["state"]["api_key"] == marker  # --checkpoint
    assert CANARY not in json.dumps(checkpoint)


def test_model_flag_changes_only_config_model(cli, tmp_path):
    flow = write(tmp_path, "ask.yaml", """\
name: ask
config: {model: base-model}
steps:
  - {id: a, type: llm_call, prompt: hi}
  - {id: b, type: llm_call, model: own-model, prompt: hi}
""")
    script = write(tmp_path, "script.yaml", "a: one\nb: two\n")
    done = cli("run", flow, "--script", script, "--model", "cli-model", "--json", "--no-record")
    assert done.returncode == 0, done.stderr
    steps = json.loads(done.stdout)["steps"]
    assert (steps["a"]["model"], steps["b"]["model"]) == ("cli-model", "own-model")


# -- validate -------------------------------------------------------------------------------------------------


def test_validate_reports_every_problem_with_file_step_and_field(cli, tmp_path):
    fields = write(tmp_path, "fields.yaml", """\
name: bad
steps:
  - {id: a, type: llm_call, promt: hi}
  - {id: b, type: tool}
""")
    graph = write(tmp_path, "graph.yaml", """\
name: bad
steps:
  - {id: a, type: tool, tool_name: t, depends_on: [nope]}
  - {id: c, type: router, conditions: [{expression: "x ==", target: a}]}
""")
    done = cli("validate", fields, graph)
    assert done.returncode == EXIT_CODES["invalid_workflow"] == 3
    err = done.stderr
    assert "fields.yaml: 2 problems" in err and "graph.yaml: 2 problems" in err
    assert "Unknown key 'promt'" in err and "did you mean 'prompt'?" in err
    assert "Missing required key 'tool_name'" in err
    assert "step: a" in err and "step: b" in err and "step: c" in err
    assert "field: depends_on[0]" in err and "field: conditions[0].expression" in err
    assert "depends on unknown step 'nope'" in err
    assert str(tmp_path / "fields.yaml") in err and str(tmp_path / "graph.yaml") in err


def test_validate_reports_problems_of_every_kind_in_one_file_together(cli, tmp_path):
    mixed = write(tmp_path, "mixed.yaml", """\
name: bad
steps:
  - {id: a, type: llm_call, promt: hi}
  - {id: b, type: tool}
  - {id: c, type: frobnicate}
  - {id: d, type: tool, tool_name: t, depends_on: [nope]}
  - {id: e, type: router, conditions: [{expression: "x ==", target: a}]}
  - {id: f, type: llm_call, prompt: "Hello {state.name"}
""")
    done = cli("validate", mixed)
    assert done.returncode == EXIT_CODES["invalid_workflow"] == 3
    err = done.stderr
    assert "mixed.yaml: 6 problems" in err
    expected = [
        ("Unknown step type 'frobnicate'", "c", "type"),
        ("Unknown key 'promt'", "a", "promt"),
        ("Missing required key 'tool_name'", "b", "tool_name"),
        ("Step 'd' depends on unknown step 'nope'", "d", "depends_on[0]"),
        ("Router expression not allowed", "e", "conditions[0].expression"),
        ("Prompt template error", "f", "prompt"),
    ]
    blocks = re.split(r"\n  (?=\d+\. )", err)[1:]  # one block per numbered problem
    for number, (words, step, field) in enumerate(expected, 1):
        block = next(b for b in blocks if b.startswith(f"{number}. "))
        assert words in block and f"step: {step}" in block and f"field: {field}" in block, block
        assert f"file: {tmp_path / 'mixed.yaml'}" in block


@pytest.mark.slow
def test_validate_accepts_a_good_file_and_fails_on_any_bad_one(cli, tmp_path):
    good = write(tmp_path, "good.yaml", GATED)
    assert cli("validate", good).returncode == 0
    missing = cli("validate", good, "missing.yaml")
    assert missing.returncode == 3
    assert "Workflow file not found: missing.yaml" in missing.stderr


@pytest.mark.slow
def test_run_of_an_invalid_workflow_exits_3(cli, tmp_path):
    done = cli("run", write(tmp_path, "bad.yaml", "name: x\nsteps: []\n"))
    assert done.returncode == 3
    assert "invalid workflow" in done.stderr


# -- pause, resume, runs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("flag", "ending"), [("--approve", "shipped billing"), ("--reject", {})])
@pytest.mark.slow
def test_paused_run_exits_4_and_resume_finishes_it(cli, tmp_path, flag, ending):
    flow = write(tmp_path, "release.yaml", GATED)
    paused = cli("run", flow, "--tools", "cli_tools", "--run-id", "rel-1")
    assert paused.returncode == EXIT_CODES["paused"] == 4, paused.stderr
    assert "agentloom resume rel-1 --approve" in paused.stdout
    listed = cli("runs", "--json")
    assert [(r["run_id"], r["status"], r["paused_step"]) for r in json.loads(listed.stdout)] == [
        ("rel-1", "paused", "gate")]
    checkpoint = tmp_path / "agentloom_runs" / "checkpoints" / "rel-1.json"
    assert CANARY not in checkpoint.read_text()
    done = cli("resume", "rel-1", flag, "--tools", "cli_tools", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["state"]["result"] == ending
    assert result["state"]["_approval"] == {"gate": "approved" if flag == "--approve" else "rejected"}
    assert json.loads(cli("runs", "--json").stdout)[0]["status"] == "success"
    again = cli("resume", "rel-1", "--approve", "--tools", "cli_tools")
    assert again.returncode == EXIT_CODES["setup_error"] == 8
    assert "only paused or interrupted runs can be resumed" in again.stderr


@pytest.mark.slow
def test_resume_warns_about_redacted_keys_and_state_restores(cli, tmp_path):
    flow = write(tmp_path, "release.yaml", GATED.replace('{service: "{state.service}"}',
                                                        '{service: "{state.service}-{state.api_key}"}'))
    assert cli("run", flow, "--tools", "cli_tools", "--run-id", "rel-2").returncode == 4
    warned = cli("resume", "rel-2", "--approve", "--tools", "cli_tools", "--json", "--no-record")
    assert warned.returncode == 0
    assert "step 'ship' reads state key 'api_key'" in warned.stderr
    assert "agentloom resume --state api_key=" in warned.stderr
    assert cli("run", flow, "--tools", "cli_tools", "--run-id", "rel-3").returncode == 4
    restored = cli("resume", "rel-3", "--approve", "--tools", "cli_tools", "--state", f"api_key={CANARY}")
    assert restored.returncode == 0
    assert "reads state key 'api_key'" not in restored.stderr


@pytest.mark.slow
def test_resume_of_an_unknown_run_exits_8(cli, tmp_path):
    done = cli("resume", "run-nope", "--approve")
    assert done.returncode == 8
    assert "No checkpoint for run 'run-nope'" in done.stderr


@pytest.mark.slow
def test_runs_with_nothing_saved(cli, tmp_path):
    done = cli("runs")
    assert done.returncode == 0 and "no checkpointed runs" in done.stdout


# -- exit codes -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_failed_run_exits_1(cli, tmp_path):
    flow = write(tmp_path, "boom.yaml", "name: boom\nsteps: [{id: x, type: tool, tool_name: boom}]\n")
    done = cli("run", flow, "--tools", "cli_tools")
    assert done.returncode == EXIT_CODES["failed"] == 1
    assert "x: failed" in done.stdout and "disk full" in done.stdout


@pytest.mark.slow
def test_budget_exceeded_exits_5(cli, tmp_path):
    flow = write(tmp_path, "spend.yaml", """\
name: spend
config: {model: m, budget_usd: 0.5}
steps:
  - {id: a, type: llm_call, prompt: one}
  - {id: b, type: llm_call, prompt: two, depends_on: [a]}
""")
    script = write(tmp_path, "script.yaml", "a: {text: first, cost: 1.0}\nb: second\n")
    done = cli("run", flow, "--script", script, "--json")
    assert done.returncode == EXIT_CODES["budget_exceeded"] == 5, done.stderr
    assert json.loads(done.stdout)["reason"] == "budget_exceeded"


def test_run_timeout_exits_6(cli, tmp_path):
    # config.timeout is checked between layers on the run's clock (real time here): 1 µs has passed after layer 1
    flow = write(tmp_path, "slow.yaml", """\
name: slow
config: {timeout: 0.000001}
steps:
  - {id: a, type: tool, tool_name: echo, output: first}
  - {id: b, type: tool, tool_name: echo, depends_on: [a], output: second}
""")
    done = cli("run", flow, "--tools", "cli_tools", "--json", "--no-record")
    assert done.returncode == EXIT_CODES["timeout"] == 6, done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["reason"]) == ("timeout", "timeout")
    assert result["steps"]["b"]["status"] == "skipped"


def test_the_docs_exit_code_table_matches_the_code():
    readme = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    table = readme.split("| exit code | meaning |", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        code, meaning = (cell.strip() for cell in line.strip().strip("|").split("|", 1))
        rows[int(code)] = meaning
    words = {"success": "success", "failed": "failed", "usage_error": "usage error",
             "invalid_workflow": "invalid workflow", "paused": "paused", "budget_exceeded": "budget exceeded",
             "timeout": "timeout", "cancelled": "cancelled", "setup_error": "could not start"}
    assert sorted(rows) == sorted(EXIT_CODES.values())
    for name, code in EXIT_CODES.items():
        assert words[name] in rows[code], (name, code, rows[code])
    import pytest_agentloom.cli as cli_module

    for name, code in EXIT_CODES.items():  # the module's own table says the same
        assert f"\n{code}     " in cli_module.__doc__, name


def test_exit_codes_are_distinct_and_cover_every_status():
    assert len(set(EXIT_CODES.values())) == len(EXIT_CODES)
    assert set(_STATUS_EXIT) == set(RunStatus)
    assert _STATUS_EXIT[RunStatus.TIMEOUT] == EXIT_CODES["timeout"] == 6


@pytest.mark.slow
def test_llm_step_without_any_provider_setup_fails_clearly(cli, tmp_path):
    flow = write(tmp_path, "ask.yaml", "name: ask\nconfig: {model: gpt-4o-mini}\nsteps: [{id: a, type: llm_call, "
                                      "prompt: hi}]\n")
    env_free = cli("run", flow, "--no-record", "--provider", "no-such-provider")
    assert env_free.returncode == EXIT_CODES["setup_error"] == 8
    assert "no-such-provider" in env_free.stderr and "How to fix" in env_free.stderr


@pytest.mark.slow
def test_replay_of_a_missing_cassette_fails_with_how_to_record(cli, tmp_path):
    flow = write(tmp_path, "ask.yaml", "name: ask\nconfig: {model: gpt-4o-mini}\nsteps: [{id: a, type: llm_call, "
                                      "prompt: hi}]\n")
    done = cli("run", flow, "--replay", "missing.cassette.yaml", "--no-record")
    assert done.returncode == 8
    assert "missing.cassette.yaml" in done.stderr


@pytest.mark.slow
def test_help_lists_the_exit_codes(cli):
    done = cli("--help")
    assert done.returncode == 0
    assert "exit codes: 0 success, 1 failed, 2 usage_error, 3 invalid_workflow, 4 paused" in " ".join(
        done.stdout.split())


# -- --record and --replay against a fake provider on 127.0.0.1 ------------------------------------------------


@pytest.mark.slow
def test_record_then_replay_offline_reproduces_the_run(cli, tmp_path, monkeypatch):
    from tests.servers.fake_llm import FakeLLMServer, text

    flow = write(tmp_path, "ask.yaml", f"""\
name: ask
config: {{model: gpt-4o-mini, provider: openai}}
state: {{api_key: {CANARY}, question: "Why?"}}
state_schema: {{api_key: {{redact: true}}}}
steps:
  - {{id: a, type: llm_call, prompt: "Answer {{state.question}} (key {{state.api_key}})"}}
""")
    provider_key = "sk-provider-key-for-recording-0000"
    with FakeLLMServer() as server:
        server.plan("openai", text("Because.", input_tokens=9, output_tokens=2))
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", provider_key)
        recorded = cli("run", flow, "--record", "ask.cassette.yaml", "--json", "--no-record")
        sent = server.requests_for("openai")
    assert recorded.returncode == 0, recorded.stderr
    assert CANARY in json.dumps(sent[0].json)  # the model got the real value...
    cassette = (tmp_path / "ask.cassette.yaml").read_text()
    assert CANARY not in cassette and provider_key not in cassette  # ...the cassette never does
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: replay must not call out
    replayed = cli("run", flow, "--replay", "ask.cassette.yaml", "--json", "--no-record")
    assert replayed.returncode == 0, replayed.stderr
    first, again = json.loads(recorded.stdout), json.loads(replayed.stdout)
    assert again["steps"]["a"]["output"] == first["steps"]["a"]["output"] == "Because."
    assert again["usage"] == first["usage"]


@pytest.mark.slow
def test_a_replay_that_leaves_recorded_tool_calls_unused_fails(cli, tmp_path, monkeypatch):
    from tests.servers.fake_llm import FakeLLMServer, text

    flow = write(tmp_path, "note.yaml", """\
name: note
config: {model: gpt-4o-mini, provider: openai, sandbox: {writable_paths: [out]}}
steps:
  - {id: a, type: llm_call, prompt: "Say hi"}
  - {id: w, type: tool, tool_name: file_write, tool_args: {path: out/note.txt, content: hi}, depends_on: [a]}
""")
    with FakeLLMServer() as server:
        server.plan("openai", text("hi"))
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-key-for-recording-0000")
        recorded = cli("run", flow, "--record", "note.cassette.yaml", "--json", "--no-record")
    assert recorded.returncode == 0, recorded.stderr
    tape = tmp_path / "note.cassette.tools.yaml"
    assert "file_write" in tape.read_text()
    tape.write_text(tape.read_text() + "- tool: file_write\n  arguments: {path: out/other.txt, content: x}\n"
                    "  result: {}\n")
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    replayed = cli("run", flow, "--replay", "note.cassette.yaml", "--json", "--no-record")
    assert replayed.returncode == EXIT_CODES["setup_error"], replayed.stderr
    assert "did not make 1 of the 2 recorded tool calls with side effects" in replayed.stderr
    assert '"path": "out/other.txt"' in replayed.stderr
    assert "How to fix: if the change is intended, re-record the test: agentloom run" in replayed.stderr


@pytest.mark.slow
def test_script_files_take_every_form_scenario_tables_take(cli, tmp_path):
    # one reading of scripts (Scripted.from_data): an error reply, retried, then a reply with usage
    flow = write(tmp_path, "retry.yaml", """\
name: retry
config: {model: m, retry: {max_retries: 2, backoff_seconds: 0}}
steps:
  - {id: a, type: llm_call, prompt: one, output: answer}
""")
    script = write(tmp_path, "script.yaml", "a: [{error: 503}, {text: fine, input_tokens: 3}]\n")
    done = cli("run", flow, "--script", script, "--json", "--no-record")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["state"]["answer"] == "fine" and result["steps"]["a"]["attempts"] == 2


@pytest.mark.slow
def test_a_bad_script_reply_is_a_usage_error_naming_where_it_is(cli, tmp_path):
    flow = write(tmp_path, "one.yaml",
                 "name: one\nconfig: {model: m}\nsteps:\n  - {id: a, type: llm_call, prompt: hi}\n")
    script = write(tmp_path, "script.yaml", "a: [fine, {txt: typo}]\n")
    done = cli("run", flow, "--script", script, "--no-record")
    assert done.returncode == 2
    assert "--script script.yaml.a[1].txt: unknown key 'txt' in a text reply" in done.stderr
    assert "did you mean 'text'?" in done.stderr
