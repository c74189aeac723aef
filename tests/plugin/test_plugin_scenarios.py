"""Scenario tables in YAML, JSON Lines and CSV: parametrised tests, all mismatches in one failure, bad tables."""

from __future__ import annotations

import json

import pytest

ROWS = [
    {"id": "bug", "workflow": "flow.yaml", "state": {"ticket": "crash"}, "script": {"classify": "bug"},
     "expect": {"status": "success", "sequence": ["classify", "route", "file_bug"],
                "steps": {"reply": "skipped"}, "tool_calls": [["file_bug", {"title": "crash"}]],
                "state": {"bug_id": "BUG-5", "steps": {"file_bug": {"status": "success"}}}}},
    {"id": "question-after-429", "workflow": "flow.yaml", "state": {"ticket": "how?"},
     "script": {"classify": [{"error": 429}, {"text": "question", "input_tokens": 7, "output_tokens": 1}],
                "reply": "Like this."},
     "config": {"budget_usd": 5},
     "expect": {"status": "success", "reason": "completed", "outputs": {"reply": "Like this."},
                "sequence": ["classify", "route", "reply"]}},
]

TEST_FILE = """
import pytest

@pytest.mark.agentloom_scenarios("{table}")
def test_rows(agentloom, scenario):
    result = scenario.run(agentloom)
    scenario.check(result, agentloom)
    assert result.steps["classify"].attempts == (2 if scenario.id == "question-after-429" else 1)
"""


def write_csv(path, rows) -> None:
    import csv

    columns = ["id", "workflow", "state", "script", "config", "expect"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([row.get(c, "") if c in ("id", "workflow") else (json.dumps(row[c]) if c in row else "")
                             for c in columns])


@pytest.mark.parametrize("table", ["rows.yaml", "rows.jsonl", "rows.csv"])
def test_every_format_parametrises_the_test_by_row_id(triage: pytest.Pytester, table: str) -> None:
    import yaml

    path = triage.path / table
    if table.endswith(".yaml"):
        path.write_text(yaml.safe_dump(ROWS, sort_keys=False))
    elif table.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n\n")
    else:
        write_csv(path, ROWS)
    triage.makepyfile(test_table=TEST_FILE.format(table=table))
    result = triage.runpytest_inprocess("-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_table.py::test_rows?bug? PASSED*",
                                 "*test_table.py::test_rows?question-after-429? PASSED*"])


def test_check_reports_every_mismatch_of_a_row_at_once(triage: pytest.Pytester) -> None:
    triage.makefile(".yaml", rows="""
- id: wrong
  workflow: flow.yaml
  state: {ticket: crash}
  script: {classify: question, reply: hi}
  expect:
    status: success
    reason: completed
    steps: {file_bug: success}
    sequence: [classify, route, file_bug]
    tool_calls: [file_bug]
    outputs: {reply: hello}
    state: {category: bug, extra: 1}
""")
    triage.makepyfile(test_table=TEST_FILE.format(table="rows.yaml"))
    result = triage.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E       AssertionError: Scenario 'wrong' (rows.yaml:1): 6 expectations failed",
        "E         - steps.file_bug: expected 'success', got 'skipped'",
        "E         - sequence: expected ?'classify', 'route', 'file_bug'?, got ?'classify', 'route', 'reply'?",
        "E         - tool_calls: expected ?file_bug?, got ??",
        "E         - outputs.reply: expected 'hello', got 'hi'",
        "E         - state.category: expected 'bug', got 'question'",
        "E         - state.extra: missing (expected 1)",
        "E       Trace:",
        "E         [  3] t=0 step_start classify type='llm_call'",
    ])
    # the two expectations that hold are not listed
    assert "- status:" not in result.stdout.str() and "- reason:" not in result.stdout.str()


def test_rows_can_take_the_workflow_from_the_agentloom_marker(triage: pytest.Pytester) -> None:
    triage.mkdir("tables")
    (triage.path / "tables" / "rows.jsonl").write_text(
        json.dumps({"id": "q", "script": {"classify": "q", "reply": "ok"}, "expect": {"status": "success"}}) + "\n"
    )
    triage.makepyfile(test_default="""
        import pytest

        @pytest.mark.agentloom(workflow="flow.yaml")
        @pytest.mark.agentloom_scenarios("tables/rows.jsonl")
        def test_rows(agentloom, scenario):
            scenario.check(scenario.run(agentloom))
    """)
    triage.runpytest_inprocess().assert_outcomes(passed=1)


def test_snapshot_expectation_uses_the_row_id(triage: pytest.Pytester) -> None:
    triage.makefile(".yaml", rows="- id: snap\n  workflow: flow.yaml\n  script: {classify: bug}\n"
                                  "  expect: {snapshot: true}\n")
    triage.makepyfile(test_table=TEST_FILE.format(table="rows.yaml").replace("assert result", "# "))
    result = triage.runpytest_inprocess()
    result.stdout.fnmatch_lines(["E         - snapshot: Snapshot 'test_rows?snap?' does not exist: *"])
    triage.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=1)
    assert (triage.path / "__agentloom_snapshots__" / "test_table" / "test_rows[snap].yaml").is_file()
    triage.runpytest_inprocess().assert_outcomes(passed=1)



def test_rows_share_one_load_of_the_workflow_which_nobody_can_change(triage: pytest.Pytester) -> None:
    """The workflow is loaded once for the table (a cache per process), and every row gets the same object: a
    row that tries to change it gets an error and changes nothing for the rows after it; an edited file is
    read again."""
    rows = [{"id": f"row-{n}", "workflow": "flow.yaml", "state": {"ticket": "crash"}, "script": {"classify": "bug"},
             "expect": {"status": "success", "sequence": ["classify", "route", "file_bug"]}} for n in range(3)]
    (triage.path / "rows.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    triage.makepyfile(test_table="""
        import pytest

        from pytest_agentloom import UsageError

        SEEN = []

        @pytest.mark.agentloom_scenarios("rows.jsonl")
        def test_rows(agentloom, scenario):
            mine = agentloom.load("flow.yaml")
            SEEN.append(mine)
            assert (SEEN[0] is SEEN[-1]) == (scenario.id != "row-2")  # one object until the file is edited
            assert mine.steps[0].prompt == ("Sort: {state.ticket}" if scenario.id == "row-2" else
                                            "Classify: {state.ticket}")
            assert mine.state == {"ticket": ""} and mine.compiled.conditions
            for change in (lambda: setattr(mine.steps[0], "prompt", "changed by " + scenario.id),
                           lambda: mine.state.__setitem__("ticket", "changed"),
                           lambda: mine.compiled.conditions.clear()):
                with pytest.raises(UsageError, match="How to fix: "):
                    change()
            result = scenario.run(agentloom)
            scenario.check(result, agentloom)
            assert result.sent_requests["classify"][0]["messages"][-1]["content"].endswith(": crash")
            if scenario.id == "row-1":  # the next row reads the edited file
                path = agentloom.path("flow.yaml")
                path.write_text(path.read_text().replace("Classify:", "Sort:"))
    """)
    triage.runpytest_inprocess().assert_outcomes(passed=3)


BAD_TABLES = [
    ("rows.yaml", "- id: a\n  workflow: flow.yaml\n- id: a\n  workflow: flow.yaml\n",
     ["Invalid scenario table: duplicate id 'a' (first used on line 1)", "  file: *rows.yaml:3", "  row: a",
      "  field: id", "How to fix: give every row its own id."]),
    ("rows.yaml", "- id: a\n  workflow: flow.yaml\n  expcet: {status: success}\n",
     ["Invalid scenario table: unknown key 'expcet'", "  file: *rows.yaml:1", "  row: a", "  field: expcet",
      "How to fix: did you mean 'expect'? known keys: id, description, workflow, state, script, *expect."]),
    ("rows.yaml", "- id: a\n  workflow: flow.yaml\n  expect: {stauts: success}\n",
     ["Invalid scenario table: unknown key 'expect.stauts'", "*", "*", "  field: expect.stauts",
      "How to fix: did you mean 'status'? *"]),
    ("rows.yaml", "- id: a\n  state: {}\n",
     ["Invalid scenario table: the row has no 'workflow'", "  file: *rows.yaml:1", "  row: a", "  field: workflow",
      "How to fix: add 'workflow: <path to the workflow file>'*"]),
    ("rows.yaml", "- workflow: flow.yaml\n",
     ["Invalid scenario table: the row has no 'id'", "  file: *rows.yaml:1", "  row: #1", "  field: id", "*"]),
    ("rows.yaml", "- id: a\n  workflow: flow.yaml\n  expect: {status: succes}\n",
     ["Invalid scenario table: 'expect.status' must be one of success, *", "*", "*", "  field: expect.status",
      "How to fix: did you mean 'success'?"]),
    ("rows.yaml", "- id: a\n  workflow: flow.yaml\n  script: {classify: [ok, {eror: 429}]}\n",
     ["Invalid scenario table: unknown key 'eror' in a text reply", "*", "*", "  field: script.classify?1?.eror",
      "How to fix: *"]),
    ("rows.yaml", "- id: a\n  workflow: flow.yaml\n  config: {budget: 1}\n",
     ["Invalid scenario table: unknown key 'config.budget'", "*", "*", "  field: config.budget",
      "How to fix: did you mean 'budget_usd'? *"]),
    ("rows.jsonl", '{"id": "a", "workflow": "flow.yaml"}\n{"id": "b", \n',
     ["Invalid scenario table: line is not valid JSON: *", "  file: *rows.jsonl:2"]),
    ("rows.csv", 'id,workflow,state\na,flow.yaml,"{not json}"\n',
     ["Invalid scenario table: cell is not valid JSON: *", "  file: *rows.csv:2", "  row: a", "  field: state",
      "How to fix: CSV cells other than id, workflow and description hold JSON*"]),
    ("rows.txt", "id: a\n", ["Invalid scenario table: unknown table format '.txt'", "*"]),
    ("missing.yaml", None, ["Invalid scenario table: the file does not exist", "  file: *missing.yaml", "*"]),
]


@pytest.mark.parametrize(("name", "content", "lines"), BAD_TABLES, ids=[str(i) for i in range(len(BAD_TABLES))])
@pytest.mark.slow
def test_bad_tables_fail_collection_naming_file_row_and_field(
    triage: pytest.Pytester, name: str, content: str | None, lines: list[str]
) -> None:
    if content is not None:
        (triage.path / name).write_text(content)
    triage.makepyfile(test_table=TEST_FILE.format(table=name))
    result = triage.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ERROR collecting test_table.py*", *lines])
    assert "Traceback" not in result.stdout.str()
