"""Every field of a checkpoint is type-checked before a resume: a tampered type exits 8 naming the field."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom.cli import main

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

FLOW = """\
name: tampered
steps:
  - {id: first, type: tool, tool_name: echo, output: echoed}
  - {id: gate, type: approval_gate, depends_on: [first], message: "Go on?", output: decision}
  - id: route
    type: router
    depends_on: [gate]
    conditions: [{expression: "decision == 'approved'", target: done}]
    default: done
  - {id: done, type: approval_gate, message: "Done?"}
"""

FREE = re.compile(r"state\.(?!steps($|\.[^.]+$))|steps\.[^.]+\.output$|workflow\.(definition|overrides)\."
                  r"|pending_approval\.detail\.")
"""Paths whose values the engine never interprets: the state's own keys, outputs, the saved definition's insides."""
CHECKED_ELSEWHERE = ("kind", "format_version", "run_id")  # refused before the fields: tests in test_checkpoints.py


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real checkpoint: a run paused at a gate after a tool step."""
    folder = tmp_path_factory.mktemp("paused")
    (folder / "flow.yaml").write_text(FLOW)
    result = run_workflow(folder / "flow.yaml", tools={"echo": lambda: "hi"}, clock=VirtualClock(), run_id="held",
                          runs_dir=folder / "runs")
    assert result.status.value == "paused" and result.checkpoint_path is not None
    document: dict[str, Any] = json.loads(Path(result.checkpoint_path).read_text())
    return document


def checked_paths(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every (path, value) of the document a resume reads, in the notation the errors use."""
    if path and FREE.match(path):
        return
    if path and not path.startswith(CHECKED_ELSEWHERE):
        yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from checked_paths(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from checked_paths(item, f"{path}[{index}]")


def kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


OTHER_TYPES = st.one_of(st.text(max_size=5), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False),
                        st.booleans(), st.lists(st.integers(), max_size=2),
                        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def put(document: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``document`` with ``value`` at ``path`` (``a.b[0].c``)."""
    changed = copy.deepcopy(document)
    parts = path.replace("[", ".[").split(".")
    target: Any = changed
    for part in parts[:-1]:
        target = target[int(part[1:-1])] if part.startswith("[") else target[part]
    last = parts[-1]
    if last.startswith("["):
        target[int(last[1:-1])] = value
    else:
        target[last] = value
    return changed


def resume(tmp_path: Path, document: dict[str, Any]) -> tuple[int, str]:
    """``agentloom resume <file> --approve`` on ``document``: the exit code and what it printed to stderr."""
    path = tmp_path / "checkpoint.json"
    path.write_text(json.dumps(document))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["resume", str(path), "--approve", "--runs-dir", str(tmp_path / "runs")])
    return code, err.getvalue()


def test_the_real_checkpoint_has_the_fields_the_test_mutates(paused: dict[str, Any]) -> None:
    paths = dict(checked_paths(paused))
    for expected in ("status", "workflow", "workflow.hash", "state", "state.steps", "state.steps.first", "steps",
                     "steps.first", "steps.first.attempts", "steps.first.cost_usd", "completed_steps[0]",
                     "pending_approval", "pending_approval.clock", "elapsed_seconds", "resumes", "saved_at"):
        assert expected in paths, sorted(paths)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_field_of_another_type_exits_8_naming_the_field(paused: dict[str, Any], tmp_path: Path,
                                                          data: st.DataObject) -> None:
    paths = [(path, value) for path, value in checked_paths(paused) if value is not None]
    path, original = data.draw(st.sampled_from(paths), label="field")
    value = data.draw(OTHER_TYPES.filter(lambda new: kind(new) != kind(original)), label="value")

    code, err = resume(tmp_path, put(paused, path, value))

    assert code == 8, err
    assert "CheckpointError" in err and "is malformed" in err, err
    assert f"'{path}'" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("path", ["status", "workflow", "pending_approval.step_id", "pending_approval.clock",
                                  "steps.first.step_id", "steps.first.status", "steps.first.attempts",
                                  "steps.first.input_tokens", "steps.first.cost_usd", "completed_steps[0]",
                                  "state.steps", "state.steps.first"])
def test_a_required_field_set_to_null_or_removed_exits_8_naming_it(paused: dict[str, Any], tmp_path: Path,
                                                                   path: str) -> None:
    code, err = resume(tmp_path, put(paused, path, None))
    assert code == 8 and f"'{path}'" in err, err
    if "[" not in path:
        parent, _, name = path.rpartition(".")
        removed = copy.deepcopy(paused)
        holder = removed
        for part in parent.split(".") if parent else []:
            holder = holder[part]
        if name in ("status", "workflow", "step_id", "clock"):
            del holder[name]
            code, err = resume(tmp_path, removed)
            assert code == 8 and f"'{path}' is missing" in err, err


def test_the_issue_s_tampered_state_steps_exits_8_not_a_type_error(paused: dict[str, Any], tmp_path: Path) -> None:
    code, err = resume(tmp_path, put(paused, "state.steps", "x"))
    assert code == 8
    assert "'state.steps' must be a mapping of step ids to their output and status (got text)" in err


@pytest.mark.parametrize(("path", "value", "problem"), [
    ("steps.first.step_id", "gate", "'steps.first.step_id' must be 'first', the step it is saved under"),
    ("steps.first.status", "exploded", "'steps.first.status' must be one of"),
    ("resumes", -1, "'resumes' must be a whole number (0 or more) or null (got a number)"),
    ("steps.first.attempts", 1.5, "'steps.first.attempts' must be a whole number"),
    ("steps.first.attempts", True, "'steps.first.attempts' must be a whole number (0 or more) (got true/false)"),
])
def test_values_of_the_right_json_type_but_unusable_are_refused_too(paused: dict[str, Any], tmp_path: Path,
                                                                    path: str, value: Any, problem: str) -> None:
    code, err = resume(tmp_path, put(paused, path, value))
    assert code == 8 and problem in err, err


def test_the_untampered_checkpoint_resumes(paused: dict[str, Any], tmp_path: Path) -> None:
    code, err = resume(tmp_path, paused)
    assert code == 4, err  # paused again, at the second gate
