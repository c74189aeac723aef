"""Every corrupted file a user keeps is a named error that names the file, says what is wrong and how to fix it,
and leaves the file as it was: snapshots, tool tapes, cassettes, scenario tables, checkpoints, the salt."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import run_workflow
from pytest_agentloom._redaction.salt import load_salt
from pytest_agentloom.engine._entry.resume_workflow import resume_workflow
from pytest_agentloom.errors import ArtifactError, CassetteFormatError, CheckpointError, ScenarioTableError
from pytest_agentloom.replay._cassette_file import loads, read_cassette
from pytest_agentloom.replay._tool_tape import ToolTape
from pytest_agentloom.testing._scenarios.table import load_table

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")


def kept(path: Path) -> Callable[[], None]:
    """Remember ``path``'s bytes; the returned check fails if they changed."""
    before = path.read_bytes() if path.is_file() else None

    def check() -> None:
        assert (path.read_bytes() if path.is_file() else None) == before, f"{path} was modified"

    return check


# -- snapshots -------------------------------------------------------------------------------------------------

BAD_SNAPSHOTS = {
    "invalid YAML": (b"format_version: 1\nstatus: [success\n", "invalid YAML: "),
    "non-UTF-8": (b"format_version: 1\nstatus: caf\xe9\n", "is not UTF-8 text"),
    "a duplicate key": (b"format_version: 1\nstatus: a\nstatus: b\n", "appears twice"),
}


@pytest.mark.parametrize("case", BAD_SNAPSHOTS)
def test_a_corrupted_snapshot_is_a_named_error_and_is_kept(tmp_path: Path, snapshot_run, case: str) -> None:
    body, problem = BAD_SNAPSHOTS[case]
    path = tmp_path / "snap.yaml"
    path.write_bytes(body)
    unchanged = kept(path)
    session, result = snapshot_run(update=False)
    with pytest.raises(ArtifactError) as info:
        session.assert_match(path, result, label="snap", nodeid="t.py::test_x")
    message = str(info.value)
    assert message.startswith("Snapshot ") and "snap.yaml cannot be used: " in message and problem in message
    assert "How to fix: run pytest --agentloom-update-snapshots 't.py::test_x'" in message
    assert info.value.code == "corrupted_file"
    unchanged()


@pytest.mark.parametrize("case", BAD_SNAPSHOTS)
def test_updating_snapshots_repairs_a_corrupted_one(tmp_path: Path, snapshot_run, case: str) -> None:
    path = tmp_path / "snap.yaml"
    path.write_bytes(BAD_SNAPSHOTS[case][0])
    session, result = snapshot_run(update=True)
    session.assert_match(path, result, label="snap", nodeid="t.py::test_x")
    assert str(path) in session.written
    snapshot_run(update=False)[0].assert_match(path, result, label="snap", nodeid="t.py::test_x")  # matches now


def test_a_snapshot_that_is_a_directory_is_named_even_when_updating(tmp_path: Path, snapshot_run) -> None:
    path = tmp_path / "snap.yaml"
    path.mkdir()
    for update in (False, True):
        session, result = snapshot_run(update=update)
        with pytest.raises(ArtifactError, match=r"snap\.yaml cannot be used: it is a directory") as info:
            session.assert_match(path, result, label="snap", nodeid="t.py::test_x")
        assert "How to fix: remove the directory" in str(info.value)
    assert path.is_dir()


@pytest.mark.slow
def test_the_update_flag_repairs_an_invalid_snapshot_through_pytest(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", flow="name: f\nsteps:\n  - {id: s, type: llm_call, model: m, prompt: hi, output: o}\n")
    pytester.makepyfile(test_snap="""
        from pytest_agentloom import Scripted

        def test_x(agentloom):
            agentloom.assert_snapshot(agentloom.run("flow.yaml", provider=Scripted({"s": "hi"})))
    """)
    snapshot = pytester.path / "__agentloom_snapshots__" / "test_snap" / "test_x.yaml"
    snapshot.parent.mkdir(parents=True)
    snapshot.write_text("status: [broken\n")
    failed = pytester.runpytest_inprocess("-p", "no:randomly")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*ArtifactError: Snapshot __agentloom_snapshots__/test_snap/test_x.yaml cannot be "
                                 "used: invalid YAML: *"])
    assert snapshot.read_text() == "status: [broken\n"
    pytester.runpytest_inprocess("-p", "no:randomly", "--agentloom-update-snapshots").assert_outcomes(passed=1)
    pytester.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=1)


# -- tool tapes ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "problem"), [
    (b"calls: [1,\n", "invalid YAML: "),
    (b"- 1\n- 2\n", "it holds a list, not a mapping with 'format_version' and 'calls'"),
    (b"\xff\xfe", "is not UTF-8 text"),
    (b"format_version: 1\ncalls: {a: 1}\n", "'calls' is a dict, not a list"),
    (b"format_version: 1\ncalls: [7]\n", "call 1 is not a mapping with a 'tool' name"),
    (b"format_version: 1\ncalls: [{tool: t, arguments: [1], result: 1}]\n", "call 1: 'arguments' is not a mapping"),
    (b"format_version: 1\ncalls: [{tool: t, error: boom}]\n", "call 1: 'error' is not a mapping"),
    (b"format_version: 1\ncalls: [{tool: t}]\n", "call 1 has neither 'result' nor 'error'"),
])
def test_a_corrupted_tool_tape_is_a_named_error(tmp_path: Path, body: bytes, problem: str) -> None:
    path = tmp_path / "t.tools.yaml"
    path.write_bytes(body)
    unchanged = kept(path)
    with pytest.raises(ArtifactError) as info:
        ToolTape(path, recording=False)
    message = str(info.value)
    assert message.startswith(f"Tool recording {path} cannot be used: ") and problem in message
    assert "How to fix: re-record the test with --agentloom-record" in message
    unchanged()


def test_a_tool_tape_that_is_a_directory_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "t.tools.yaml").mkdir()
    assert ToolTape(tmp_path / "t.tools.yaml", recording=False).entries == []  # as if absent: nothing recorded yet


# -- cassettes -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "problem"), [
    ("format_version: 1\ninteractions:\n- request: {method: POST, url: 'http://x/v1', headers: [a, b]}\n"
     "  response: {status: 200, body: {text: hi}}\n",
     "interaction 1 is malformed (TypeError: 'headers' must be a mapping of names to values, got a list)"),
    ("format_version: 1\ninteractions:\n- request: {method: POST, url: 'http://x/v1'}\n"
     "  response: {status: 200, headers: [a, b], body: {text: hi}}\n", "'headers' must be a mapping"),
    ("format_version: 1\ninteractions: {a: 1}\n", "is not a pytest-agentloom cassette"),
    ("format_version: 1\ninteractions: [7]\n", "interaction 1 is malformed"),
])
def test_a_malformed_cassette_is_a_cassette_format_error(text: str, problem: str) -> None:
    with pytest.raises(CassetteFormatError) as info:
        loads(text, path="c.yaml")
    assert problem in str(info.value) and "How to fix: delete c.yaml and re-record it" in str(info.value)


def test_an_unreadable_cassette_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "latin1.yaml").write_bytes(b"format_version: 1\nx: caf\xe9\n")
    (tmp_path / "folder.yaml").mkdir()
    for name, problem in [("latin1.yaml", "is not UTF-8 text"), ("folder.yaml", "is a directory")]:
        with pytest.raises(CassetteFormatError, match=f"Cassette .*{name} cannot be read: the cassette {problem}"):
            read_cassette(tmp_path / name)


# -- scenario tables -------------------------------------------------------------------------------------------

BAD_TABLES = [
    ("latin1.yaml", b"- id: a\n  state: {x: \"caf\xe9\"}\n", "the table is not UTF-8 text", None),
    ("deep.yaml", b"- id: a\n  state: {x: " + b"[" * 5000 + b"]" * 5000 + b"}\n", "nested more than 200", 2),
    ("deep.jsonl", b'{"id": "a", "state": {"x": ' + b"[" * 100000 + b"]" * 100000 + b"}}\n",
     "line is not valid JSON: the data is nested more than 200 levels deep", 1),
    ("deep.csv", b'id,state\na,"{""x"": ' + b"[" * 1000 + b"]" * 1000 + b'}"\n', "nested more than 200", 2),
    ("big.csv", b'id,state\na,"' + b"x" * 200_000 + b'"\n', "the CSV cannot be read: a cell is larger than 128 KB", 2),
    ("twice.csv", b'id,state,state\na,{},"{""x"": 1}"\n', "the header names the column 'state' twice", 1),
    ("bomb.yaml", b"- id: a\n  state: {}\n  x: &a [1,1,1,1,1,1,1,1,1,1]\n  y: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
     b"  z: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n  w: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
     b"  v: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n  u: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
     "aliases stand for more than", 8),
    ("dup.jsonl", b'{"id": "a", "state": {}, "state": {"x": 1}}\n', "the key 'state' appears twice", 1),
    ("surrogate.jsonl", b'{"id": "a", "state": {"x": "\\ud800"}}\n', "lone surrogate", 1),
]


@pytest.mark.parametrize(("name", "body", "problem", "line"), BAD_TABLES, ids=[case[0] for case in BAD_TABLES])
def test_a_bad_scenario_table_is_a_named_error(tmp_path: Path, name: str, body: bytes, problem: str,
                                               line: int | None) -> None:
    path = tmp_path / name
    path.write_bytes(body)
    unchanged = kept(path)
    with pytest.raises(ScenarioTableError) as info:
        load_table(path, default_workflow="f.yaml")
    message = str(info.value)
    assert message.startswith("Invalid scenario table: ") and problem in message, message
    assert f"file: {path}" + (f":{line}" if line else "") in message
    unchanged()


# -- checkpoints -----------------------------------------------------------------------------------------------

GATE = """\
name: release
state: {service: billing}
steps:
  - {id: gate, type: approval_gate, message: "Ship it?", output: decision}
  - {id: after, type: tool, tool_name: noop, depends_on: [gate], output: r}
"""

TAMPERED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "state is a list": lambda d: d.update(state=[1]),
    "steps is a list": lambda d: d.update(steps=[1]),
    "a step is not a mapping": lambda d: d["steps"].update(gate="x"),
    "a step's status is unknown": lambda d: d["steps"]["gate"].update(status="weird"),
    "workflow is missing": lambda d: d.pop("workflow"),
    "workflow is a string": lambda d: d.update(workflow="x"),
    "definition is a list": lambda d: d["workflow"].update(definition=[1]),
    "run_id is a number": lambda d: d.update(run_id=7),
    "completed_steps is a mapping": lambda d: d.update(completed_steps={"a": 1}),
    "completed_steps holds a number": lambda d: d.update(completed_steps=[1]),
    "pending_approval is a string": lambda d: d.update(pending_approval="x"),
    "pending_approval lacks its clock": lambda d: d["pending_approval"].pop("clock"),
    "resumes is text": lambda d: d.update(resumes="many"),
    "status is a number": lambda d: d.update(status=3),
}


@pytest.fixture(scope="module")
def paused_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("paused")
    (folder / "release.yaml").write_text(GATE)
    result = run_workflow(folder / "release.yaml", checkpoint_dir=folder / "checkpoints", runs_dir=False,
                          run_id="r1", tools={"noop": lambda: "done"}, redaction_salt="s")
    assert result.status.value == "paused"
    return folder / "checkpoints" / "r1.json"


@pytest.mark.parametrize("case", TAMPERED)
def test_a_tampered_checkpoint_is_a_checkpoint_error_and_is_kept(tmp_path: Path, paused_checkpoint: Path,
                                                                case: str) -> None:
    shutil.copy(paused_checkpoint.parent.parent / "release.yaml", tmp_path / "release.yaml")
    data = json.loads(paused_checkpoint.read_text())
    data["workflow"]["file"] = str(tmp_path / "release.yaml")
    TAMPERED[case](data)
    path = tmp_path / "r1.json"
    path.write_text(json.dumps(data))
    unchanged = kept(path)
    with pytest.raises(CheckpointError) as info:
        resume_workflow(path, decision="approved", tools={"noop": lambda: "done"}, runs_dir=False,
                        redaction_salt="s")
    assert str(path) in str(info.value) and "How to fix: " in str(info.value), str(info.value)
    unchanged()


def test_the_untampered_checkpoint_resumes(tmp_path: Path, paused_checkpoint: Path) -> None:
    shutil.copy(paused_checkpoint, tmp_path / "r1.json")
    result = resume_workflow(tmp_path / "r1.json", decision="approved", tools={"noop": lambda: "done"},
                             runs_dir=False, redaction_salt="s")
    assert result.status.value == "success"


@pytest.mark.parametrize("edit", [
    lambda p: p.write_text(p.read_text().replace('"status": "paused"', '"status": ["paused"]', 1)),
    lambda p: p.write_text("{not json"),
    lambda p: p.write_text('{"kind": "a", "kind": "b"}'),
])
@pytest.mark.slow
def test_resume_of_a_tampered_checkpoint_exits_8_on_the_command_line(tmp_path: Path, cli, edit: Any) -> None:
    (tmp_path / "release.yaml").write_text(GATE.replace("tool_name: noop", "tool_name: file_read"))
    assert cli("run", "release.yaml", "--run-id", "r1").returncode == 4
    path = tmp_path / "agentloom_runs" / "checkpoints" / "r1.json"
    edit(path)
    unchanged = kept(path)
    done = cli("resume", "r1", "--approve")
    assert done.returncode == 8, done.stderr
    assert "CheckpointError" in done.stderr and "Traceback" not in done.stderr
    unchanged()


# -- the salt --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("make", "problem"), [
    (lambda path: path.write_bytes(b"\xff\xfe\n"), "is not UTF-8 text"),
    (lambda path: path.mkdir(), "is a directory"),
    (lambda path: path.write_text("x" * 10_000), "is 10,000 bytes, over the limit of 4,096"),
])
def test_an_unusable_salt_file_is_named_and_kept(tmp_path: Path, make: Any, problem: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentloom").mkdir()
    salt = tmp_path / ".agentloom" / "salt"
    make(salt)
    unchanged = kept(salt)
    with pytest.raises(ArtifactError) as info:
        load_salt(tmp_path, env={})
    message = str(info.value)
    assert message.startswith(f"The redaction salt {salt} cannot be used: the salt file {problem}")
    assert f"How to fix: delete {salt} to have a new salt made" in message
    unchanged()


# -- run records -----------------------------------------------------------------------------------------------


def test_unreadable_run_records_are_skipped_not_a_crash(tmp_path: Path) -> None:
    import os

    from pytest_agentloom.engine._persist.records import list_records

    good = {"kind": "agentloom.run_record", "run_id": "r1", "started_at": "2026-01-01T00:00:00Z"}
    (tmp_path / "r1.json").write_text(json.dumps(good))
    (tmp_path / "deep.json").write_text('{"kind": "agentloom.run_record", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tmp_path / "latin1.json").write_bytes(b'{"kind": "caf\xe9"}')
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "folder.json").mkdir()
    assert [record["run_id"] for record in list_records(tmp_path)] == ["r1"]
