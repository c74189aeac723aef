"""YAML-only tests: ``test_*.agentloom.yaml`` files collected as one item per row, with row locations."""

from __future__ import annotations

import pytest

TABLE = """\
- id: bug
  workflow: flow.yaml
  state: {ticket: crash}
  script: {classify: bug}
  expect: {status: success, sequence: [classify, route, file_bug]}

- id: broken
  workflow: flow.yaml
  state: {ticket: hi}
  script: {classify: question, reply: hello}
  expect:
    status: failed
    outputs: {reply: bye}
"""


def test_rows_are_items_and_failures_point_at_the_row(triage: pytest.Pytester) -> None:
    (triage.path / "test_triage.agentloom.yaml").write_text(TABLE)
    result = triage.runpytest_inprocess("-v", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "test_triage.agentloom.yaml::bug PASSED*",
        "test_triage.agentloom.yaml::broken FAILED*",
    ])
    result.stdout.fnmatch_lines([
        "*_ scenario broken _*",
        "Scenario 'broken' (test_triage.agentloom.yaml:7): 2 expectations failed",
        "  - status: expected 'failed', got 'success'",
        "  - outputs.reply: expected 'bye', got 'hello'",
        "Trace:",
    ])
    assert "def run_row" not in result.stdout.str()  # no Python traceback for a YAML test


def test_collect_only_lists_rows_and_reportinfo_gives_the_row_line(triage: pytest.Pytester) -> None:
    (triage.path / "test_triage.agentloom.yaml").write_text(TABLE)
    items, _ = triage.inline_genitems()
    assert [item.name for item in items] == ["bug", "broken"]
    assert [item.location[1] for item in items] == [0, 6]
    assert items[1].reportinfo()[2] == "scenario broken"


@pytest.mark.slow
def test_other_yaml_files_are_not_collected_and_the_glob_is_configurable(triage: pytest.Pytester) -> None:
    (triage.path / "rows.yaml").write_text(TABLE)
    (triage.path / "check_triage.yaml").write_text(TABLE)
    result = triage.runpytest_inprocess()
    result.assert_outcomes()
    triage.makeini("[pytest]\nagentloom_scenario_glob = check_*.yaml\n")
    triage.runpytest_inprocess().assert_outcomes(passed=1, failed=1)
    triage.runpytest_inprocess("--agentloom-scenario-glob=nothing_*.yaml").assert_outcomes()


def test_bad_yaml_only_table_fails_collection_with_the_row_and_field(triage: pytest.Pytester) -> None:
    (triage.path / "test_bad.agentloom.yaml").write_text("- id: a\n  workflow: flow.yaml\n  scirpt: {}\n")
    result = triage.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR collecting test_bad.agentloom.yaml*",
        "Invalid scenario table: unknown key 'scirpt'",
        "  file: *test_bad.agentloom.yaml:1",
        "  row: a",
        "  field: scirpt",
        "How to fix: did you mean 'script'? *",
    ])


def test_yaml_rows_get_fixture_overrides_and_snapshots(triage: pytest.Pytester) -> None:
    (triage.path / "test_snap.agentloom.yaml").write_text(
        "- id: snap\n  workflow: flow.yaml\n  state: {ticket: abc}\n  script: {classify: bug}\n"
        "  expect: {snapshot: true, outputs: {file_bug: BUG-3}}\n"
    )
    triage.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=1)
    assert (triage.path / "__agentloom_snapshots__" / "test_snap" / "snap.yaml").is_file()
    triage.runpytest_inprocess().assert_outcomes(passed=1)


def test_row_without_script_uses_the_default_provider(triage: pytest.Pytester) -> None:
    (triage.path / "test_noscript.agentloom.yaml").write_text("- id: a\n  workflow: flow.yaml\n")
    result = triage.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*provider=agentloom.scripted(step_id='reply text')*"])
