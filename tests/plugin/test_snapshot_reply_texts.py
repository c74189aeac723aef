"""A structured output is stored once in a snapshot: the parsed value in the state, not also its reply's JSON
text under ``state.steps`` (which made a changed field two hunks). Files written with the text still pass and
are rewritten by update. Through the snapshot session itself, on real files (and real git for the hunks)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agentloom import Scripted, VirtualClock, load_workflow, run_workflow
from pytest_agentloom.testing._snapshots.compare import SnapshotSession, dump_yaml, snapshot_data

FLOW = """\
name: classify
config: {model: gpt-4o-mini}
state: {ticket: "My invoice is wrong"}
steps:
  - id: classify
    type: llm_call
    prompt: "Classify: {state.ticket}"
    response_schema:
      type: json_schema
      schema:
        type: object
        properties: {intent: {type: string}, urgency: {type: string}}
        required: [intent, urgency]
    output: classification
"""


@pytest.fixture(scope="module")
def workflow(tmp_path_factory: pytest.TempPathFactory) -> object:
    path = tmp_path_factory.mktemp("flow") / "classify.yaml"
    path.write_text(FLOW)
    return load_workflow(path)


@pytest.fixture
def run(workflow: object) -> object:
    return lambda intent="billing": _run(workflow, intent)


def _run(workflow: object, intent: str) -> object:
    reply = json.dumps({"intent": intent, "urgency": "low"})
    return run_workflow(workflow,  # type: ignore[arg-type]
                        provider=Scripted({"classify": reply}), clock=VirtualClock(),
                        runs_dir=False)


def _as_written_before(result: object) -> str:
    """The file the plugin wrote before this rule: the reply's text kept under ``state.steps.classify``."""
    data = snapshot_data(result)  # type: ignore[arg-type]
    state = dict(data["state"])
    state["steps"] = {"classify": {"output": result.state["steps"]["classify"]["output"],  # type: ignore[attr-defined]
                                   "status": "success"}}
    return dump_yaml({**data, "state": {key: state[key] for key in sorted(state)}})


def test_the_reply_text_of_a_structured_output_is_not_stored(run: Any) -> None:
    result = run()
    assert result.state["steps"]["classify"]["output"] == '{"intent": "billing", "urgency": "low"}'  # type: ignore[attr-defined]
    text = dump_yaml(snapshot_data(result))  # type: ignore[arg-type]
    assert text.count("billing") == 1, text
    assert "steps" not in yaml.safe_load(text)["state"]


def test_a_changed_field_is_one_hunk_in_git_diff(tmp_path: Path, run: Any) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    path = tmp_path / "snap.yaml"
    SnapshotSession(create=True).assert_match(path, run(), label="s", nodeid="t")
    before = tmp_path / "before.yaml"
    shutil.copy(path, before)
    SnapshotSession(update=True).assert_match(path, run("refund"), label="s", nodeid="t")
    diff = subprocess.run(["git", "diff", "--no-index", "--no-color", str(before), str(path)],
                          capture_output=True, text=True, check=False).stdout
    assert len(re.findall(r"^@@ ", diff, re.MULTILINE)) == 1, diff
    assert [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        "-    intent: billing", "+    intent: refund"]


def test_a_file_written_with_the_reply_text_still_passes_and_is_left_as_it_is(tmp_path: Path, run: Any) -> None:
    path = tmp_path / "snap.yaml"
    old = _as_written_before(run())
    path.write_text(old)
    session = SnapshotSession()
    session.assert_match(path, run(), label="s", nodeid="t")
    assert path.read_text() == old and not session.written


def test_update_rewrites_such_a_file_without_the_reply_text(tmp_path: Path, run: Any) -> None:
    path = tmp_path / "snap.yaml"
    path.write_text(_as_written_before(run()))
    session = SnapshotSession(update=True)
    session.assert_match(path, run(), label="s", nodeid="t")
    assert session.migrated == {str(path)}
    assert path.read_text() == dump_yaml(snapshot_data(run()))  # type: ignore[arg-type]


def test_a_changed_run_against_such_a_file_shows_the_change_once(tmp_path: Path, run: Any) -> None:
    path = tmp_path / "snap.yaml"
    path.write_text(_as_written_before(run()))
    with pytest.raises(AssertionError) as failure:
        SnapshotSession().assert_match(path, run("refund"), label="s", nodeid="t")
    message = str(failure.value)
    assert message.count("refund") == 1 and "(1 difference" in message, message
    assert "state.steps" not in message
