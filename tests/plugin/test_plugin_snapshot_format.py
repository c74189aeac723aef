"""Snapshot format 2: each output stored once, format-1 files still read and rewritten, matchers that cover
an output's state key, and snapshots of plain values. Through pytester, with real files and real git."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = "__agentloom_snapshots__/test_snap/test_crash.yaml"

TESTS = """
import os

def test_crash(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "crash"}, provider=agentloom.scripted(classify="bug"))
    agentloom.assert_snapshot(result, requests=False)
"""

#: what format 1 (every release before this one) wrote for TESTS: each output three times
FORMAT_1 = """\
format_version: 1
workflow: triage
status: success
reason: completed
failed_step: null
state:
  bug_id: BUG-5
  category: bug
  steps:
    classify:
      output: bug
      status: success
    file_bug:
      output: BUG-5
      status: success
    route:
      output: file_bug
      status: success
  ticket: crash
steps:
  classify:
    status: success
    output: bug
    finish_reason: stop
  route:
    status: success
    output: file_bug
  file_bug:
    status: success
    output: BUG-5
    tool_calls:
    - tool: file_bug
      args:
        title: crash
      ok: true
  reply:
    status: skipped
    output: null
    error_code: not_chosen
usage:
  input_tokens: 0
  output_tokens: 0
  reasoning_tokens: 0
cost_usd: 0.0
"""


@pytest.fixture
def snap(triage: pytest.Pytester) -> pytest.Pytester:
    triage.makepyfile(test_snap=TESTS)
    return triage


def _old_file(pytester: pytest.Pytester, text: str = FORMAT_1) -> Path:
    path = pytester.path / SNAPSHOT
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_each_output_is_stored_once(snap: pytest.Pytester) -> None:
    snap.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    text = (snap.path / SNAPSHOT).read_text()
    assert text.count("BUG-5") == 1 and text.startswith("format_version: 2\n")
    data = yaml.safe_load(text)
    assert "steps" not in data["state"]
    assert data["steps"]["file_bug"] == {"status": "success", "output_in": "state.bug_id",
                                         "tool_calls": [{"tool": "file_bug", "args": {"title": "crash"}, "ok": True}]}
    assert data["steps"]["classify"] == {"status": "success", "output_in": "state.category", "finish_reason": "stop"}
    assert data["steps"]["route"] == {"status": "success", "output": "file_bug"}  # a router writes no state key
    assert data["steps"]["reply"] == {"status": "skipped", "output": None, "error_code": "not_chosen"}


def test_a_one_word_change_is_one_hunk_in_git_diff(triage: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    triage.makepyfile(test_letter="""
        import os

        def test_letter(agentloom):
            letter = "Dear customer,\\nyour parcel left on " + os.environ.get("DAY", "Monday") + ".\\nRegards"
            provider = agentloom.scripted(classify="question", reply=letter)
            result = agentloom.run("flow.yaml", state={"ticket": "where is it?"}, provider=provider)
            agentloom.assert_snapshot(result, requests=False)
    """)
    triage.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    path = triage.path / "__agentloom_snapshots__/test_letter/test_letter.yaml"
    before = triage.path / "before.yaml"
    shutil.copy(path, before)
    monkeypatch.setenv("DAY", "Tuesday")
    triage.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=1)
    diff = subprocess.run(["git", "diff", "--no-index", "--no-color", str(before), str(path)],
                          capture_output=True, text=True, check=False).stdout
    assert len(re.findall(r"^@@ ", diff, re.MULTILINE)) == 1, diff
    assert [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        "-    your parcel left on Monday.", "+    your parcel left on Tuesday."]


def test_a_format_1_file_still_passes_an_unchanged_run_and_is_left_as_it_is(snap: pytest.Pytester) -> None:
    path = _old_file(snap)
    result = snap.runpytest_inprocess()
    result.assert_outcomes(passed=1)
    assert path.read_text() == FORMAT_1 and "rewritten" not in result.stdout.str()


def test_update_rewrites_a_format_1_file_in_format_2_with_a_note(snap: pytest.Pytester) -> None:
    path = _old_file(snap)
    result = snap.runpytest_inprocess("--agentloom-update-snapshots")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "agentloom: 1 snapshot rewritten in format_version 2 (each output stored once; review and commit them):",
        f"  {SNAPSHOT}"])
    assert "snapshot updated" not in result.stdout.str()  # nothing but the format changed
    rewritten = path.read_text()
    assert rewritten.startswith("format_version: 2\n") and rewritten.count("BUG-5") == 1
    assert not list(snap.path.rglob("*.tmp"))
    path.unlink()
    snap.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    assert path.read_text() == rewritten  # the same bytes as a snapshot written fresh
    again = snap.runpytest_inprocess("--agentloom-update-snapshots")
    assert "rewritten" not in again.stdout.str() and "updated" not in again.stdout.str()


def test_a_changed_run_against_a_format_1_file_shows_the_change_once(snap: pytest.Pytester) -> None:
    path = _old_file(snap)
    snap.makeconftest('import pytest\n\n@pytest.fixture\ndef agentloom_tools():\n'
                      '    return {"file_bug": lambda title: "JIRA-7"}\n')
    result = snap.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        f"E       AssertionError: Snapshot 'test_crash' does not match {SNAPSHOT} (1 difference, stored -> now):",
        "E         state.bug_id (output of step file_bug): 'BUG-5' -> 'JIRA-7'",
        "E         (the file is in format 1; --agentloom-update-snapshots rewrites it in format 2, each output "
        "stored once)",
        "E       How to fix: if the change is intended, run:",
    ], consecutive=True)
    assert path.read_text() == FORMAT_1


def test_a_format_1_file_written_with_a_matcher_on_the_output_still_passes(snap: pytest.Pytester) -> None:
    """Format 1 put the placeholder in both ``steps`` copies but not in the state key; the matcher now covers
    that key too, and the old file still compares equal with the unchanged run."""
    old = FORMAT_1.replace("    file_bug:\n      output: BUG-5", "    file_bug:\n      output: <any str>").replace(
        "    status: success\n    output: BUG-5", "    status: success\n    output: <any str>")
    assert old.count("<any str>") == 2
    path = _old_file(snap, old)
    snap.makepyfile(test_snap=TESTS.replace("requests=False)", 'requests=False, matchers={"steps.*.output": str})'))
    snap.runpytest_inprocess().assert_outcomes(passed=1)
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=1)
    data = yaml.safe_load(path.read_text())
    assert data["state"]["bug_id"] == "<any str>" and data["steps"]["file_bug"]["output_in"] == "state.bug_id"


def test_matchers_and_excludes_on_a_step_output_cover_its_state_key(snap: pytest.Pytester,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    snap.makeconftest('import os, pytest\n\n@pytest.fixture\ndef agentloom_tools():\n'
                      '    return {"file_bug": lambda title: {"id": os.environ.get("BUG", "BUG-1"), "at": "now"}}\n')
    snap.makepyfile(test_snap=TESTS.replace(
        "requests=False)", 'requests=False, matchers={"steps.file_bug.output.id": str}, '
                           'exclude=["steps.*.output.at"])'))
    snap.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    data = yaml.safe_load((snap.path / SNAPSHOT).read_text())
    assert data["state"]["bug_id"] == {"id": "<any str>"}
    assert data["steps"]["file_bug"]["output_in"] == "state.bug_id"
    monkeypatch.setenv("BUG", "BUG-2")  # another id: still the same snapshot
    snap.runpytest_inprocess().assert_outcomes(passed=1)


def test_the_docs_matcher_example_passes_when_the_id_changes(pytester: pytest.Pytester) -> None:
    """The ``steps.*.output.id`` example of docs/snapshots.md, run once, then again with another issue id."""
    body = next(block for block in re.findall(r"```python\n(.*?)```", (ROOT / "docs/snapshots.md").read_text(),
                                              re.DOTALL) if "steps.*.output.id" in block)
    shutil.copytree(ROOT / "examples" / "support_triage", pytester.path, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("test_*", "__agentloom_snapshots__", "__pycache__"))
    pytester.makepyfile(test_volatile=body)
    pytester.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text().replace('f"BUG-{sum(map(ord, title)) % 1000}"',
                                                     'f"BUG-{sum(map(ord, title)) % 1000 + 1}"'))
    assert "+ 1}" in conftest.read_text()
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1)


def test_plain_values_are_snapshotted(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_plain="""
        import os
        import pydantic

        class Ticket(pydantic.BaseModel):
            id: str
            tags: list[str]

        def test_values(agentloom):
            word = os.environ.get("WORD", "crash")
            agentloom.assert_snapshot({"ticket": word, "n": 2}, name="dict")
            agentloom.assert_snapshot([1, "two", None], name="list")
            agentloom.assert_snapshot("Line one.\\nLine two.", name="text")
            agentloom.assert_snapshot(Ticket(id="T-" + word, tags=["a"]), name="model",
                                      matchers={"tags[*]": str})
    """)
    pytester.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    folder = pytester.path / "__agentloom_snapshots__/test_plain"
    assert (folder / "test_values.dict.yaml").read_text() == "format_version: 2\nvalue:\n  ticket: crash\n  n: 2\n"
    assert yaml.safe_load((folder / "test_values.list.yaml").read_text())["value"] == [1, "two", None]
    assert "value: |-\n  Line one.\n  Line two.\n" in (folder / "test_values.text.yaml").read_text()
    assert yaml.safe_load((folder / "test_values.model.yaml").read_text())["value"] == {
        "id": "T-crash", "tags": ["<any str>"]}
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
    monkeypatch.setenv("WORD", "hang")
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E       AssertionError: Snapshot 'test_values.dict' does not match "
        "__agentloom_snapshots__/test_plain/test_values.dict.yaml (1 difference, stored -> now):",
        "E         value.ticket: 'crash' -> 'hang'",
    ], consecutive=True)


def test_a_plain_value_path_that_reaches_nothing_is_an_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="""
        def test_value(agentloom):
            agentloom.assert_snapshot({"id": 1}, exclude=["value.id"])
    """)
    result = pytester.runpytest_inprocess("--agentloom-create-snapshots")
    result.stdout.fnmatch_lines(["*UsageError: snapshot exclude path 'value.id' reaches nothing*"])


def _doc_block(after: str) -> str:
    text = (ROOT / "docs/snapshots.md").read_text()
    return text[text.index(after):].split("```text\n", 1)[1].split("```", 1)[0]


def test_the_docs_excerpt_of_a_snapshot_is_the_committed_example() -> None:
    shown = yaml.safe_load(_doc_block("**Each output once.**"))
    committed = yaml.safe_load((ROOT / "examples/support_triage/__agentloom_snapshots__/test_example_triage/"
                                "test_bug_ticket_opens_an_issue.yaml").read_text())
    assert shown["state"] == {key: committed["state"][key] for key in shown["state"]}
    assert shown["steps"] == {step: committed["steps"][step] for step in shown["steps"]}


def test_the_docs_plain_value_example_writes_the_file_shown(pytester: pytest.Pytester) -> None:
    body = next(block for block in re.findall(r"```python\n(.*?)```", (ROOT / "docs/snapshots.md").read_text(),
                                              re.DOTALL) if "def test_plain_values" in block)
    shutil.copytree(ROOT / "examples" / "support_triage", pytester.path, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("test_*", "__agentloom_snapshots__", "__pycache__"))
    pytester.makepyfile(test_docs_plain=body)
    pytester.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    folder = pytester.path / "__agentloom_snapshots__/test_docs_plain"
    assert (folder / "test_plain_values.issue.yaml").read_text() == _doc_block("writes `<test>.issue.yaml`:")
    assert yaml.safe_load((folder / "test_plain_values.order.yaml").read_text())["value"] == [
        "classify", "route", "open_bug"]
