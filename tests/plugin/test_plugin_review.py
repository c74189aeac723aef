"""Snapshots and messages that review well: diffs that show the change, requests, volatile values, modes."""

from __future__ import annotations

import pytest
import yaml

LETTER = ("Dear customer, thank you for reaching out about your order. We have looked into it and the parcel "
          "left our warehouse on Monday; it should reach you within {} working days.")

DRAFT = """\
name: drafter
state: {ticket: ""}
steps:
  - id: draft
    type: llm_call
    model: gpt-4o-mini
    temperature: 0.2
    prompt: "{prompt}"
    output: reply
"""

TEST = f"""
import os

LETTER = {LETTER!r}

def test_draft(agentloom):
    days = os.environ.get("DAYS", "three")
    result = agentloom.run("draft.yaml", state={{"ticket": "Where is my order?"}},
                           provider=agentloom.scripted(draft=LETTER.format(days)))
    agentloom.assert_snapshot(result)
"""


@pytest.fixture
def draft(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", draft=DRAFT.replace("{prompt}", "Draft a reply to: {state.ticket}"))
    pytester.makepyfile(test_draft=TEST)
    return pytester


SNAPSHOT = "__agentloom_snapshots__/test_draft/test_draft.yaml"


def test_a_change_at_the_end_of_a_long_reply_is_shown_once_in_a_window(draft: pytest.Pytester,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    draft.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    monkeypatch.setenv("DAYS", "four")
    result = draft.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        f"E       AssertionError: Snapshot 'test_draft' does not match {SNAPSHOT} (1 difference, stored -> now):",
        "E         state.reply (output of step draft): strings differ at character 156 "
        "(length 174 -> 173):",
        "E             - ...y; it should reach you within three working days.'",
        "E             + ...y; it should reach you within four working days.'",
        "E" + " " * 48 + "^",  # under the first letter that differs
        "E       How to fix: if the change is intended, run:",
        "E         pytest --agentloom-update-snapshots test_draft.py::test_draft",
    ], consecutive=True)
    assert "state.steps.draft.output" not in result.stdout.str()


def test_the_requests_sent_are_in_the_snapshot_so_a_prompt_change_shows(draft: pytest.Pytester) -> None:
    draft.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    data = yaml.safe_load((draft.path / SNAPSHOT).read_text())
    assert data["requests"] == {"draft": [{
        "turn": 1, "model": "gpt-4o-mini", "params": {"temperature": 0.2},
        "messages": [{"role": "user", "content": "Draft a reply to: Where is my order?"}],
    }]}
    first = (draft.path / SNAPSHOT).read_bytes()
    draft.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=1)
    assert (draft.path / SNAPSHOT).read_bytes() == first  # byte-identical across runs
    draft.makefile(".yaml", draft=DRAFT.replace("{prompt}", "Draft a short reply to: {state.ticket}"))
    result = draft.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E         requests.draft[0].messages[0].content: 'Draft a reply to: Where is my order?' -> "
        "'Draft a short reply to: Where is my order?'",
    ])


@pytest.mark.parametrize("how", ["call", "marker", "ini"])
def test_requests_can_be_left_out_per_call_marker_or_ini(draft: pytest.Pytester, how: str) -> None:
    if how == "call":
        draft.makepyfile(test_draft=TEST.replace("assert_snapshot(result)", "assert_snapshot(result, requests=False)"))
    elif how == "marker":
        draft.makepyfile(test_draft="import pytest\npytestmark = pytest.mark.agentloom(snapshot_requests=False)\n"
                         + TEST)
    else:
        draft.makeini("[pytest]\nagentloom_snapshot_requests = false\n")
    draft.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    assert "requests" not in yaml.safe_load((draft.path / SNAPSHOT).read_text())


VOLATILE = """
import re
import uuid

import pytest
from pytest_agentloom import reply

def test_ids(agentloom):
    ticket_id = str(uuid.uuid4())
    result = agentloom.run("draft.yaml", state={"ticket": ticket_id},
                           provider=agentloom.scripted(draft=reply("ok", input_tokens=len(ticket_id) * 3)))
    agentloom.assert_snapshot(result, exclude=["requests"], matchers={
        "state.ticket": re.compile(r"[0-9a-f-]{36}"), "usage.input_tokens": int, "cost_usd": float})
"""


def test_volatile_values_are_excluded_or_written_as_placeholders(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", draft=DRAFT.replace("{prompt}", "Draft a reply to: {state.ticket}"))
    pytester.makepyfile(test_ids=VOLATILE)
    pytester.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    text = (pytester.path / "__agentloom_snapshots__/test_ids/test_ids.yaml").read_text()
    data = yaml.safe_load(text)
    assert data["state"]["ticket"] == "<str matching /[0-9a-f-]{36}/>"
    assert data["usage"]["input_tokens"] == "<any int>" and data["cost_usd"] == "<any float>"
    assert "requests" not in data
    pytester.runpytest_inprocess().assert_outcomes(passed=1)  # a new uuid every run: still equal
    pytester.makepyfile(test_ids=VOLATILE.replace("str(uuid.uuid4())", "'not-an-id'"))
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E         state.ticket: '<str matching /[0-9a-f-]{36}/>' -> 'not-an-id'"])


def test_a_snapshot_path_that_reaches_nothing_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", draft=DRAFT.replace("{prompt}", "Draft: {state.ticket}"))
    pytester.makepyfile(test_typo="""
        def test_typo(agentloom):
            result = agentloom.run("draft.yaml", provider=agentloom.scripted(draft="ok"))
            agentloom.assert_snapshot(result, exclude=["steps.*.ouptut.id"])
    """)
    result = pytester.runpytest_inprocess("--agentloom-create-snapshots")
    result.stdout.fnmatch_lines(["*UsageError: snapshot exclude path 'steps.*.ouptut.id' reaches nothing*"])


def test_marker_and_ini_give_default_exclude_and_matchers(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", draft=DRAFT.replace("{prompt}", "Draft: {state.ticket}"))
    pytester.makeini("[pytest]\nagentloom_snapshot_matchers =\n    state.ticket: /T-[0-9]+/\n"
                     "agentloom_snapshot_exclude =\n    requests\n")
    pytester.makepyfile(test_defaults="""
        import pytest

        def test_ini(agentloom):
            result = agentloom.run("draft.yaml", state={"ticket": "T-1"}, provider=agentloom.scripted(draft="ok"))
            agentloom.assert_snapshot(result)

        @pytest.mark.agentloom(snapshot_exclude=["state.ticket"], snapshot_matchers={"steps.draft.output": str})
        def test_marker(agentloom):
            result = agentloom.run("draft.yaml", state={"ticket": "T-1"}, provider=agentloom.scripted(draft="ok"))
            agentloom.assert_snapshot(result)

        def test_ini_again(agentloom):  # after a marked test: the unmarked tests' options are not the marker's
            result = agentloom.run("draft.yaml", state={"ticket": "T-1"}, provider=agentloom.scripted(draft="ok"))
            agentloom.assert_snapshot(result)
    """)
    pytester.runpytest_inprocess("-p", "no:randomly", "--agentloom-create-snapshots").assert_outcomes(passed=3)
    folder = pytester.path / "__agentloom_snapshots__/test_defaults"
    assert (folder / "test_ini_again.yaml").read_text() == (folder / "test_ini.yaml").read_text()
    ini = yaml.safe_load((pytester.path / "__agentloom_snapshots__/test_defaults/test_ini.yaml").read_text())
    assert ini["state"]["ticket"] == "<str matching /T-[0-9]+/>" and "requests" not in ini
    marker = yaml.safe_load((pytester.path / "__agentloom_snapshots__/test_defaults/test_marker.yaml").read_text())
    assert "ticket" not in marker["state"] and "requests" in marker  # the marker's lists replace the ini's
    # a matcher on a step's output covers the state key it wrote, and the snapshot holds the value once
    assert marker["state"]["reply"] == "<any str>" and marker["steps"]["draft"]["output_in"] == "state.reply"
    assert "steps" not in marker["state"] and "output" not in marker["steps"]["draft"]


def test_create_writes_only_missing_snapshots_and_update_rewrites_changed_ones(
        draft: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = draft.runpytest_inprocess("--agentloom-create-snapshots")
    result.stdout.fnmatch_lines(["agentloom: 1 snapshot created:", f"  {SNAPSHOT}"])
    monkeypatch.setenv("DAYS", "four")
    result = draft.runpytest_inprocess("--agentloom-create-snapshots")
    result.assert_outcomes(failed=1)  # a changed snapshot is not rewritten by create
    assert "three working days" in (draft.path / SNAPSHOT).read_text()
    result = draft.runpytest_inprocess("--agentloom-update-snapshots")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["agentloom: 1 snapshot updated:", f"  {SNAPSHOT}"])
    assert "four working days" in (draft.path / SNAPSHOT).read_text()


def test_verbose_shows_the_whole_values(draft: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    draft.runpytest_inprocess("--agentloom-create-snapshots").assert_outcomes(passed=1)
    monkeypatch.setenv("DAYS", "four")
    result = draft.runpytest_inprocess("-vv")
    result.stdout.fnmatch_lines([f"E         state.reply (output of step draft): "
                                 f"{LETTER.format('three')!r} -> {LETTER.format('four')!r}"])
