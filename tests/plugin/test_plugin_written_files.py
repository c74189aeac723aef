"""What a test's runs write is the same, byte for byte, every time the test runs (in tests, time is virtual)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FLOW = """\
name: release
config: {checkpoint: true}
state: {api_key: sk-canary-determinism-77, service: billing}
state_schema: {api_key: {redact: true}}
steps:
  - {id: plan, type: tool, tool_name: plan, tool_args: {service: "{state.service}"}, output: plan}
  - {id: gate, type: approval_gate, depends_on: [plan], message: "Ship?", output: decision}
  - {id: ship, type: tool, tool_name: plan, depends_on: [gate], tool_args: {service: shipped}, output: result}
"""

TEST = """\
import os
import shutil
from pathlib import Path

TOOLS = {"plan": lambda service: "plan for " + service}

def test_release(agentloom):
    paused = agentloom.run("flow.yaml", tools=TOOLS)
    assert paused.status.value == "paused"
    agentloom.resume(paused, approve=True)
    shutil.copytree(agentloom.tmp_path, os.environ["COPY_WRITTEN_TO"])
"""


def _tree(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file()}


def test_two_runs_of_a_test_write_byte_identical_checkpoints_and_records(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AGENTLOOM_REDACTION_SALT", raising=False)
    for name in ("AGENTLOOM_RUNS_DIR", "AGENTLOOM_CHECKPOINT_DIR"):
        monkeypatch.delenv(name, raising=False)
    pytester.makefile(".yaml", flow=FLOW)
    pytester.makepyfile(test_release=TEST)
    trees = []
    for attempt in ("first", "second"):  # separate sessions, separate temporary folders
        monkeypatch.setenv("COPY_WRITTEN_TO", str(pytester.path / f"written-{attempt}"))
        pytester.runpytest("-p", "no:randomly", "--basetemp", str(pytester.path / f"tmp-{attempt}")).assert_outcomes(
            passed=1)
        trees.append(_tree(pytester.path / f"written-{attempt}"))
    first, second = trees
    assert sorted(first) == sorted(second)
    assert any(name.startswith("runs/checkpoints/") for name in first)
    assert sum(1 for name in first if name.startswith("runs/") and "/" not in name[5:]) == 2  # run + resume records
    for name in first:
        assert first[name] == second[name], f"{name} differs between two runs of the same test"
    checkpoint = json.loads(next(data for name, data in first.items() if name.startswith("runs/checkpoints/")))
    assert checkpoint["saved_at"].startswith("2026-01-01T00:00:")
    assert b"sk-canary-determinism-77" not in b"".join(first.values())
    records = [json.loads(data) for name, data in first.items() if name.startswith("runs/") and "/" not in name[5:]]
    assert {record["started_at"] for record in records} == {"2026-01-01T00:00:00.000000Z"}
    assert {record["checkpoint"] for record in records} == {f"checkpoints/{checkpoint['run_id']}.json"}


SNAPSHOT_TEST = """\
import pytest

@pytest.mark.parametrize("who", ["ana", "bo"])
def test_leak(agentloom, who):
    agentloom.snapshot_path().parent.mkdir(parents=True, exist_ok=True)
    agentloom.snapshot_path().write_text("state: {key: only-in-the-snapshot-" + who + "}\\n")
    agentloom.snapshot_path("named").write_text("note: only-in-named-" + who + "\\n")
    with pytest.raises(AssertionError) as info:
        agentloom.assert_no_secrets("only-in-the-snapshot-" + who, "only-in-named-" + who)
    message = str(info.value)
    assert "in 2 place(s)" in message
    assert "test_leak[" + who + "].yaml: 'only…' at line 1, column 14" in message
    assert "test_leak[" + who + "].named.yaml: 'only…' at line 1, column 7" in message
    agentloom.assert_no_secrets("only-in-the-snapshot-" + ("bo" if who == "ana" else "ana"))  # not its files
"""


def test_assert_no_secrets_searches_the_snapshots_of_a_parametrized_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_leak=SNAPSHOT_TEST)
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=2)
