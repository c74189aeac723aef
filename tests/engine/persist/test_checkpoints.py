"""Redaction through whole runs, checkpoints, resume and run records.

A canary secret goes into every run here; the last tests search every file
the runs wrote for it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, reply, resume_workflow, run_workflow
from pytest_agentloom._redaction.redactor import make_marker
from pytest_agentloom.engine._persist.checkpoints import (
    CheckpointError,
    find_checkpoint,
    list_checkpoints,
    load_checkpoint,
)
from pytest_agentloom.engine._persist.records import list_records

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

SALT = "checkpoint-tests"
CANARY = "sk-canary-91b2c3d4e5"
NESTED_CANARY = "pw-canary-0a1b2c3d"
WALL = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def m(value: Any) -> str:
    return make_marker(value, salt=SALT.encode())


FLOW = f"""\
name: support
config: {{model: gpt-4o-mini, checkpoint: {{checkpoint}}}}
state:
  api_key: {CANARY}
  db: {{host: db.local, password: {NESTED_CANARY}}}
  question: Why is the invoice wrong?
  max_tokens: 99
state_schema:
  api_key: {{redact: true}}
  "db.password": {{redact: true}}
  "*token*": {{redact: true}}
steps:
  - id: lookup
    type: tool
    tool_name: lookup
    tool_args: {{key: "{{state.api_key}}", q: "{{state.question}}", api_key: state.api_key}}
    output: record
  - id: answer
    type: llm_call
    depends_on: [lookup]
    prompt: "Answer {{state.question}} using {{state.record}} (auth {{state.api_key}})"
    max_tokens: 50
    output: answer
  - id: fetch_token
    type: tool
    tool_name: fetch_token
    depends_on: [answer]
    output: session_token
"""


def flow(tmp_path: Path, *, checkpoint: bool = True) -> Path:
    path = tmp_path / "flow.yaml"
    path.write_text(FLOW.replace("{checkpoint}", str(checkpoint).lower()))
    return path


def tools(seen: list[Any] | None = None) -> dict[str, Any]:
    def lookup(key: str, q: str, api_key: str) -> dict[str, str]:
        if seen is not None:
            seen.append(key)
        return {"customer": "ACME", "echo": f"looked up with {key}"}

    return {"lookup": lookup, "fetch_token": lambda: "tok-abcdef-123456"}


def provider() -> Scripted:
    return Scripted({"answer": reply("The invoice double-counts VAT.", input_tokens=12, output_tokens=7)})


def run(tmp_path: Path, **kwargs: Any):
    kwargs.setdefault("tools", tools())
    kwargs.setdefault("provider", provider())
    return run_workflow(flow(tmp_path, checkpoint=kwargs.pop("checkpoint", True)), clock=VirtualClock(),
                        run_id="run-cp", runs_dir=tmp_path / "runs", redaction_salt=SALT,
                        wall_clock=lambda: WALL, **kwargs)


# -- redaction through a run -------------------------------------------------------------------------------


def test_result_state_outputs_and_json_are_redacted(tmp_path):
    seen: list[Any] = []
    result = run(tmp_path, tools=tools(seen))
    assert result.ok
    assert seen == [CANARY]  # the state in memory stays plain: the tool got the real key
    assert result.state["api_key"] == m(CANARY)
    assert result.state["db"] == {"host": "db.local", "password": m(NESTED_CANARY)}
    assert result.state["record"]["echo"] == f"looked up with {m(CANARY)}"
    assert result.state["session_token"] == m("tok-abcdef-123456")  # output key matches *token*
    assert result.state["steps"]["fetch_token"]["output"] == m("tok-abcdef-123456")
    assert result.steps["fetch_token"].output == m("tok-abcdef-123456")
    assert result.state["max_tokens"] == m(99)  # a state key of the workflow's own is its data: it matches
    text = result.to_json()
    assert CANARY not in text and NESTED_CANARY not in text and "tok-abcdef-123456" not in text
    assert result.unredacted_state is not None and result.unredacted_state["api_key"] == CANARY
    assert "unredacted_state" not in text and CANARY not in repr(result)


def test_env_patterns_apply_to_every_run(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTLOOM_REDACT_STATE_KEYS", "question, db.host")
    result = run(tmp_path, checkpoint=False)
    assert result.state["question"] == m("Why is the invoice wrong?")
    assert result.state["db"] == {"host": m("db.local"), "password": m(NESTED_CANARY)}
    assert result.state["api_key"] == m(CANARY)  # the file's own patterns still apply


def test_token_glob_leaves_agentloom_fields_alone(tmp_path):
    result = run(tmp_path)
    assert result.steps["answer"].input_tokens == 12 and result.steps["answer"].output_tokens == 7
    assert result.usage == {"input_tokens": 12, "output_tokens": 7, "reasoning_tokens": 0}
    definition = result.checkpoint["workflow"]["definition"]
    assert definition["steps"][1]["max_tokens"] == 50
    call = result.trace.events("provider_call")[0]
    assert call.data["input_tokens"] == 12
    record = json.loads(result.record_path.read_text())
    assert record["usage"]["input_tokens"] == 12


def test_tool_call_arguments_in_the_trace_are_redacted(tmp_path):
    result = run(tmp_path)
    args = result.trace.calls(tool="lookup")[0].data["args"]
    assert args == {"key": m(CANARY), "q": "Why is the invoice wrong?", "api_key": m(CANARY)}


def test_prompts_sent_to_the_model_carry_the_secret_but_saved_data_does_not(tmp_path):
    scripted = provider()
    result = run(tmp_path, provider=scripted)
    assert CANARY in scripted.requests[0].messages[0]["content"]  # what the model got
    assert CANARY not in json.dumps(result.trace.to_list())


def test_captured_prompts_in_the_trace_are_scrubbed_of_secret_values(tmp_path):
    path = flow(tmp_path)
    path.write_text(path.read_text().replace("config: {model: gpt-4o-mini,", "config: {capture_prompts: true, "
                                                                            "model: gpt-4o-mini,"))
    scripted = provider()
    result = run_workflow(path, tools=tools(), provider=scripted, clock=VirtualClock(), runs_dir=False,
                          redaction_salt=SALT, checkpoint_dir=tmp_path / "cps")
    prompt = result.trace.events("prompt")[0]
    assert prompt.step_id == "answer"
    assert prompt.data["messages"][0]["content"].endswith(f"(auth {m(CANARY)})")
    assert CANARY in scripted.requests[0].messages[0]["content"]  # the model itself got the real value
    assert CANARY not in result.to_json() and CANARY not in (tmp_path / "cps" / f"{result.run_id}.json").read_text()


# -- checkpoints -------------------------------------------------------------------------------------------


def test_checkpoint_is_saved_after_each_layer_and_at_the_end(tmp_path):
    result = run(tmp_path)
    saves = [e.data["status"] for e in result.trace.events("checkpoint_saved")]
    assert saves == ["running", "running", "running", "success"]
    saved = load_checkpoint(result.checkpoint_path)
    assert saved.status == "success"
    assert saved.completed_steps == ("lookup", "answer", "fetch_token")
    assert saved.saved_at == "2026-01-01T00:00:00.000000Z"
    assert set(saved.to_document()) >= {"format_version", "workflow", "state", "steps", "completed_steps", "status",
                                        "paused_step", "run_id"}
    assert saved.workflow.file == str(tmp_path / "flow.yaml")
    assert saved.workflow.hash is not None and saved.workflow.hash.startswith("sha256:")


def test_checkpoint_dir_argument_turns_checkpoints_on(tmp_path):
    folder = tmp_path / "cps"
    result = run(tmp_path, checkpoint=False, checkpoint_dir=folder)
    assert result.checkpoint_path == folder / "run-cp.json"
    assert [c["run_id"] for c in list_checkpoints(folder)] == ["run-cp"]


def test_config_checkpoint_dir_is_relative_to_the_workflow_file(tmp_path):
    path = flow(tmp_path)
    path.write_text(path.read_text().replace("checkpoint: true", "checkpoint: true, checkpoint_dir: saved"))
    result = run_workflow(path, tools=tools(), provider=provider(), clock=VirtualClock(), run_id="r",
                          runs_dir=False, redaction_salt=SALT)
    assert result.checkpoint_path == tmp_path / "saved" / "r.json"
    assert result.record_path is None


def test_without_checkpointing_nothing_is_saved(tmp_path):
    result = run(tmp_path, checkpoint=False)
    assert result.checkpoint is None and result.checkpoint_path is None
    assert not (tmp_path / "runs" / "checkpoints").exists()


def test_checkpoint_writes_are_atomic_no_temporary_files_left(tmp_path):
    run(tmp_path)
    leftovers = [p.name for p in (tmp_path / "runs").rglob("*") if p.name.startswith(".")]
    assert leftovers == []


def test_unknown_format_version_says_how_to_fix(tmp_path):
    result = run(tmp_path)
    doc = json.loads(result.checkpoint_path.read_text())
    doc["format_version"] = 99
    result.checkpoint_path.write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match="format_version 99") as info:
        load_checkpoint(result.checkpoint_path)
    assert "How to fix" in str(info.value)


# -- resume ------------------------------------------------------------------------------------------------


def interrupted(tmp_path: Path) -> Path:
    """A checkpoint as a crash after the first layer would leave it."""
    result = run(tmp_path)
    doc = json.loads(result.checkpoint_path.read_text())
    doc.update(status="running", reason=None, completed_steps=["lookup"])
    del doc["steps"]["answer"], doc["steps"]["fetch_token"], doc["state"]["steps"]["answer"]
    del doc["state"]["steps"]["fetch_token"], doc["state"]["answer"], doc["state"]["session_token"]
    result.checkpoint_path.write_text(json.dumps(doc))
    return result.checkpoint_path


def test_resume_skips_completed_steps_and_warns_about_redacted_reads(tmp_path, caplog):
    path = interrupted(tmp_path)
    scripted = provider()
    with caplog.at_level(logging.WARNING, logger="pytest_agentloom.resume"):
        result = resume_workflow(path, provider=scripted, tools=tools(), clock=VirtualClock(),
                                 runs_dir=tmp_path / "runs", redaction_salt=SALT)
    assert result.ok
    assert result.trace.step_ids() == ["answer", "fetch_token"]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2
    assert "step 'answer' reads state key 'api_key', which the checkpoint holds redacted" in warnings[0]
    assert "--state api_key=" in warnings[0]
    # 'record' holds text that was scrubbed of the secret, so reading it is flagged as well
    assert "step 'answer' reads state key 'record'" in warnings[1]
    assert m(CANARY) in scripted.requests[0].messages[0]["content"]  # the step got the marker
    assert result.trace.events("run_resume")[0].data["warnings"] == [w.split(": ", 1)[1] for w in warnings]


def test_resume_state_puts_the_value_back_and_silences_the_warning(tmp_path, caplog):
    path = interrupted(tmp_path)
    scripted = provider()
    with caplog.at_level(logging.WARNING, logger="pytest_agentloom.resume"):
        result = resume_workflow(path, provider=scripted, tools=tools(), clock=VirtualClock(),
                                 runs_dir=tmp_path / "runs", redaction_salt=SALT, state={"api_key": CANARY})
    assert result.ok
    assert [r.getMessage() for r in caplog.records if "'api_key'" in r.getMessage()] == []
    assert CANARY in scripted.requests[0].messages[0]["content"]
    assert result.state["api_key"] == m(CANARY)
    assert CANARY not in path.read_text()


def test_resume_by_run_id_finds_the_checkpoint(tmp_path):
    interrupted(tmp_path)
    assert find_checkpoint("run-cp", runs_dir=tmp_path / "runs") == tmp_path / "runs" / "checkpoints" / "run-cp.json"
    with pytest.raises(CheckpointError, match="No checkpoint for run 'nope'"):
        find_checkpoint("nope", runs_dir=tmp_path / "runs")
    result = resume_workflow("run-cp", provider=provider(), tools=tools(), clock=VirtualClock(),
                             runs_dir=tmp_path / "runs", redaction_salt=SALT, state={"api_key": CANARY})
    assert result.ok


def test_resume_refuses_a_changed_workflow_file(tmp_path):
    path = interrupted(tmp_path)
    (tmp_path / "flow.yaml").write_text((tmp_path / "flow.yaml").read_text().replace("Answer", "Reply to"))
    with pytest.raises(CheckpointError, match="changed since run 'run-cp' was saved"):
        resume_workflow(path, provider=provider(), tools=tools(), runs_dir=False, redaction_salt=SALT)


# -- run records -------------------------------------------------------------------------------------------


def test_every_run_writes_a_record_without_state(tmp_path):
    result = run(tmp_path, checkpoint=False)
    record = json.loads(result.record_path.read_text())
    assert result.record_path == tmp_path / "runs" / "run-cp.json"
    assert record["run_id"] == "run-cp"
    assert record["started_at"] == "2026-01-01T00:00:00.000000Z"
    assert record["workflow"]["name"] == "support"
    assert record["workflow"]["hash"].startswith("sha256:")
    assert record["status"] == "success" and record["reason"] == "completed"
    assert record["models"] == ["gpt-4o-mini"]
    assert record["providers"] == ["scripted"]
    assert record["usage"] == {"input_tokens": 12, "output_tokens": 7, "reasoning_tokens": 0, "total_tokens": 19}
    assert record["steps_executed"] == ["lookup", "answer", "fetch_token"]
    assert record["duration_seconds"] == 0.0
    assert "agentloom_version" in record and "cost_usd" in record
    assert "state" not in record and "ACME" not in result.record_path.read_text()
    assert [r["run_id"] for r in list_records(tmp_path / "runs")] == ["run-cp"]


def test_runs_dir_false_writes_no_record_and_env_var_picks_the_folder(tmp_path, monkeypatch):
    plain = run_workflow(flow(tmp_path, checkpoint=False), tools=tools(), provider=provider(), runs_dir=False,
                         redaction_salt=SALT)
    assert plain.record_path is None
    monkeypatch.setenv("AGENTLOOM_RUNS_DIR", str(tmp_path / "from-env"))
    env = run_workflow(flow(tmp_path, checkpoint=False), tools=tools(), provider=provider(), redaction_salt=SALT,
                       run_id="e")
    assert env.record_path == tmp_path / "from-env" / "e.json"


# -- the canary --------------------------------------------------------------------------------------------


def test_canary_secret_is_in_no_file_any_run_wrote(tmp_path):
    run(tmp_path)
    resume_workflow(interrupted(tmp_path), provider=provider(), tools=tools(), clock=VirtualClock(),
                    runs_dir=tmp_path / "runs", redaction_salt=SALT, state={"api_key": CANARY})
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "flow.yaml"]
    assert len(written) >= 3
    for path in written:
        text = path.read_text()
        for secret in (CANARY, NESTED_CANARY, "tok-abcdef-123456"):
            assert secret not in text, f"{secret} found in {path} at {text.find(secret)}"


def _widened(path: Path) -> dict[str, Any]:
    """The checkpoint at ``path`` edited to do more than the workflow allows: a step added, the sandbox off."""
    doc = json.loads(path.read_text())
    definition = doc["workflow"]["definition"]
    definition.setdefault("config", {})["sandbox"] = {"enabled": False}
    definition["steps"].append({"id": "injected", "type": "tool", "tool_name": "shell_command",
                                "tool_args": {"command": "touch pwned"}, "depends_on": ["fetch_token"]})
    path.write_text(json.dumps(doc))
    return doc


def test_resume_never_runs_the_definition_saved_in_the_checkpoint(tmp_path):
    path = interrupted(tmp_path)
    _widened(path)
    (tmp_path / "flow.yaml").unlink()
    with pytest.raises(CheckpointError, match="is not there, and a checkpoint's saved definition is never run") as err:
        resume_workflow(path, provider=provider(), tools=tools(), clock=VirtualClock(), runs_dir=False,
                        redaction_salt=SALT)
    assert "--workflow FILE" in str(err.value)
    assert not any(tmp_path.rglob("pwned"))


def test_resume_with_the_file_runs_the_file_not_the_widened_definition(tmp_path):
    path = interrupted(tmp_path)
    _widened(path)
    result = resume_workflow(path, provider=provider(), tools=tools(), clock=VirtualClock(), runs_dir=False,
                             redaction_salt=SALT)
    assert result.ok and "injected" not in result.steps and not any(tmp_path.rglob("pwned"))
    doc = json.loads(path.read_text())
    doc["workflow"]["file"] = None  # a checkpoint that names no file cannot be resumed on its own either
    path.write_text(json.dumps({**doc, "status": "running"}))
    with pytest.raises(CheckpointError, match="has no file \\(it was built in Python\\)"):
        resume_workflow(path, provider=provider(), tools=tools(), runs_dir=False, redaction_salt=SALT)
    resumed = resume_workflow(path, provider=provider(), tools=tools(), clock=VirtualClock(), runs_dir=False,
                              redaction_salt=SALT, workflow=tmp_path / "flow.yaml")  # named by the caller: fine
    assert resumed.status.value == "success"


@pytest.mark.parametrize("run_id", ["../../../x", "/tmp/x", "a/b", "..", "", "x" * 129, 7, None])
def test_a_checkpoint_whose_run_id_could_name_a_path_is_refused_before_anything_is_written(tmp_path, run_id):
    path = interrupted(tmp_path)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "run_id": run_id}))
    before = sorted(p for p in tmp_path.parent.rglob("*") if p.is_file())
    with pytest.raises(CheckpointError, match="not a valid run id"):
        resume_workflow(path, provider=provider(), tools=tools(), clock=VirtualClock(), runs_dir=tmp_path / "runs",
                        redaction_salt=SALT)
    assert sorted(p for p in tmp_path.parent.rglob("*") if p.is_file()) == before


@pytest.mark.parametrize(("field", "value", "named"), [
    ("resumes", "1/../../x", "resumes"), ("state", ["x"], "state"), ("steps", "x", "steps"),
    ("completed_steps", "lookup", "completed_steps"), ("elapsed_seconds", "1", "elapsed_seconds"),
    ("workflow", {"name": "support", "hash": 1, "file": None}, "workflow.hash"),
])
def test_a_malformed_checkpoint_field_is_a_checkpoint_error_not_a_traceback(tmp_path, field, value, named):
    path = interrupted(tmp_path)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, field: value}))
    with pytest.raises(CheckpointError, match=f"is malformed: '{named}' must be"):
        resume_workflow(path, provider=provider(), tools=tools(), runs_dir=False, redaction_salt=SALT)


def test_run_ids_that_name_paths_are_refused_where_they_come_in(tmp_path):
    from pytest_agentloom.errors import UsageError

    with pytest.raises(UsageError, match="not a valid run id"):
        run_workflow(flow(tmp_path), tools=tools(), provider=provider(), run_id="../escape", runs_dir=tmp_path,
                     redaction_salt=SALT)
    with pytest.raises(CheckpointError, match="not a valid run id"):
        find_checkpoint("../../etc/passwd", checkpoint_dir=tmp_path)
    assert not (tmp_path.parent / "escape.json").exists()


def test_a_run_record_cannot_point_resume_at_another_runs_checkpoint(tmp_path):
    run(tmp_path, checkpoint=False, checkpoint_dir=tmp_path / "runs" / "elsewhere")
    record_path = tmp_path / "runs" / "run-cp.json"
    record = json.loads(record_path.read_text())
    (tmp_path / "runs" / "elsewhere" / "run-cp.json").rename(tmp_path / "runs" / "elsewhere" / "other.json")
    record_path.write_text(json.dumps({**record, "checkpoint": "elsewhere/other.json"}))
    with pytest.raises(CheckpointError, match="No checkpoint for run 'run-cp'"):
        find_checkpoint("run-cp", runs_dir=tmp_path / "runs")


def test_record_names_its_checkpoint_relative_to_the_runs_folder_and_resume_finds_it(tmp_path):
    inside = run(tmp_path, checkpoint=False, checkpoint_dir=tmp_path / "runs" / "elsewhere")
    record = json.loads(inside.record_path.read_text())
    assert record["checkpoint"] == "elsewhere/run-cp.json"  # no temporary folder in the record
    assert find_checkpoint("run-cp", runs_dir=tmp_path / "runs") == tmp_path / "runs" / "elsewhere" / "run-cp.json"
    outside = run_workflow(flow(tmp_path), tools=tools(), provider=provider(), clock=VirtualClock(), run_id="o",
                           runs_dir=tmp_path / "runs", checkpoint_dir=tmp_path / "out", redaction_salt=SALT)
    assert json.loads(outside.record_path.read_text())["checkpoint"] == str(tmp_path / "out" / "o.json")


def test_an_in_memory_result_resumes_with_the_workflow_that_ran_never_its_checkpoints_copy(tmp_path):
    from pytest_agentloom.engine._format.loader import parse_workflow

    workflow = parse_workflow("name: mem\nsteps:\n  - {id: gate, type: approval_gate, message: 'ok?'}\n")
    paused = run_workflow(workflow, provider=provider(), clock=VirtualClock(), runs_dir=False,
                          checkpoint_dir=tmp_path / "cp", redaction_salt=SALT)
    assert paused.status.value == "paused" and paused.checkpoint is not None
    paused.checkpoint["workflow"]["definition"]["steps"].append(
        {"id": "injected", "type": "tool", "tool_name": "shell_command", "tool_args": {"command": "touch pwned"},
         "depends_on": ["gate"]})
    paused.checkpoint_path = None  # the document in memory is what gets resumed
    resumed = resume_workflow(paused, decision="approved", provider=provider(), clock=VirtualClock(),
                              runs_dir=False, redaction_salt=SALT)
    assert resumed.ok and list(resumed.steps) == ["gate"]
