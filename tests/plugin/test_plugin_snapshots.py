"""Golden snapshots through pytester: create, compare, update, unused report and deletion, file format."""

from __future__ import annotations

import pytest
import yaml

TESTS = """
import pytest

@pytest.mark.parametrize("ticket", ["crash", "how do I log in?"])
def test_triage(agentloom, ticket):
    category = "bug" if ticket == "crash" else "question"
    script = {"classify": category, "reply": "Line one.\\nLine two."}
    provider = agentloom.scripted(script, allow_unused=True)  # one branch of the two is taken
    result = agentloom.run("flow.yaml", state={"ticket": ticket}, provider=provider)
    agentloom.assert_snapshot(result)

def test_two_snapshots(agentloom):
    first = agentloom.run("flow.yaml", state={"ticket": "a"}, provider=agentloom.scripted(classify="bug"))
    agentloom.assert_snapshot(first)
    agentloom.assert_snapshot(first, name="again")
    agentloom.assert_snapshot(first)
"""

EXPECTED_FILES = [
    "__agentloom_snapshots__/test_snap/test_triage[crash].yaml",
    "__agentloom_snapshots__/test_snap/test_triage[how_do_I_log_in_]-38ef6dc87c.yaml",
    "__agentloom_snapshots__/test_snap/test_two_snapshots.2.yaml",
    "__agentloom_snapshots__/test_snap/test_two_snapshots.again.yaml",
    "__agentloom_snapshots__/test_snap/test_two_snapshots.yaml",
]


def files(pytester: pytest.Pytester) -> list[str]:
    return sorted(p.relative_to(pytester.path).as_posix()
                  for p in pytester.path.rglob("__agentloom_snapshots__/**/*.yaml"))


@pytest.fixture
def snap(triage: pytest.Pytester) -> pytest.Pytester:
    triage.makepyfile(test_snap=TESTS)
    return triage


def test_missing_snapshot_fails_with_the_update_command(snap: pytest.Pytester) -> None:
    result = snap.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=3)
    text = result.stdout.str()
    assert (
        "E       AssertionError: Snapshot 'test_triage[crash]' does not exist: "
        "__agentloom_snapshots__/test_snap/test_triage[crash].yaml\n"
        "E       How to fix: run this to write it, then review and commit the file:\n"
        "E         pytest --agentloom-create-snapshots 'test_snap.py::test_triage[crash]'"
    ) in text
    assert files(snap) == []


def test_update_writes_then_plain_run_passes(snap: pytest.Pytester) -> None:
    result = snap.runpytest_inprocess("--agentloom-update-snapshots")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*= agentloom =*", "agentloom: 5 snapshots created:",
                                 *[f"  {name}" for name in EXPECTED_FILES]])
    assert files(snap) == EXPECTED_FILES
    again = snap.runpytest_inprocess()
    again.assert_outcomes(passed=3)
    assert "agentloom:" not in again.stdout.str()
    assert not list(snap.path.rglob("*.tmp"))


def test_file_format_is_versioned_ordered_and_uses_literal_blocks(snap: pytest.Pytester) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    text = (snap.path / EXPECTED_FILES[1]).read_text()
    keys = [line.split(":")[0] for line in text.splitlines() if line and not line.startswith(" ")]
    assert keys == ["format_version", "workflow", "status", "reason", "failed_step", "state", "steps", "requests",
                    "usage", "cost_usd"]
    assert text.startswith("format_version: 2\nworkflow: triage\nstatus: success\nreason: completed\n")
    assert "  answer: |-\n    Line one.\n    Line two.\n" in text
    data = yaml.safe_load(text)
    assert data["steps"]["reply"] == {"status": "success", "output_in": "state.answer", "finish_reason": "stop"}
    assert "steps" not in data["state"]  # each output once: the engine's state.steps copy is not repeated
    assert data["steps"]["file_bug"] == {"status": "skipped", "output": None, "error_code": "not_chosen"}
    assert data["usage"] == {"input_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0}
    bug = yaml.safe_load((snap.path / EXPECTED_FILES[0]).read_text())
    assert bug["steps"]["file_bug"]["tool_calls"] == [{"tool": "file_bug", "args": {"title": "crash"}, "ok": True}]


def test_mismatch_shows_a_sorted_path_diff_and_the_update_command(snap: pytest.Pytester) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    snap.makeconftest('import pytest\n\n@pytest.fixture\ndef agentloom_tools():\n'
                      '    return {"file_bug": lambda title: "JIRA-7"}\n')
    result = snap.runpytest_inprocess("-k", "crash")
    result.assert_outcomes(passed=0, failed=1)
    text = result.stdout.str()
    assert (
        "E       AssertionError: Snapshot 'test_triage[crash]' does not match "
        "__agentloom_snapshots__/test_snap/test_triage[crash].yaml (1 difference, stored -> now):\n"
        "E         state.bug_id (output of step file_bug): 'BUG-5' -> 'JIRA-7'\n"
        "E       How to fix: if the change is intended, run:\n"
        "E         pytest --agentloom-update-snapshots 'test_snap.py::test_triage[crash]'"
    ) in text
    snap.runpytest_inprocess("-k", "crash", "--agentloom-update-snapshots").assert_outcomes(passed=1)
    snap.runpytest_inprocess("-k", "crash").assert_outcomes(passed=1)


def test_added_and_removed_keys_are_named(snap: pytest.Pytester) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    path = snap.path / EXPECTED_FILES[0]
    data = yaml.safe_load(path.read_text())
    data["state"]["old_key"] = 1
    del data["state"]["bug_id"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = snap.runpytest_inprocess("-k", "crash")
    result.stdout.fnmatch_lines([
        "*(2 differences, stored -> now):",
        "E         state.bug_id (output of step file_bug): added 'BUG-5'",
        "E         state.old_key: removed 1",
    ])


def test_unknown_format_version_says_how_to_rewrite(snap: pytest.Pytester) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    path = snap.path / EXPECTED_FILES[0]
    path.write_text(path.read_text().replace("format_version: 2", "format_version: 99"))
    result = snap.runpytest_inprocess("-k", "crash")
    result.stdout.fnmatch_lines(["E       AssertionError: Snapshot 'test_triage?crash?' has format_version 99, "
                                 "this plugin writes 2: *"])


def test_unused_snapshots_are_reported_on_a_full_run_only_and_deleted_with_update(snap: pytest.Pytester) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    stale = snap.path / "__agentloom_snapshots__" / "test_snap" / "test_removed.yaml"
    gone_module = snap.path / "__agentloom_snapshots__" / "test_gone" / "test_x.yaml"
    for path in (stale, gone_module):
        path.parent.mkdir(exist_ok=True)
        path.write_text("format_version: 1\n")
    result = snap.runpytest_inprocess()
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([
        "agentloom: 2 snapshot files unused:",
        "  __agentloom_snapshots__/test_gone/test_x.yaml",
        "  __agentloom_snapshots__/test_snap/test_removed.yaml",
        "How to fix: delete them, or run: pytest --agentloom-update-snapshots",
        "(unused snapshots fail the run; --agentloom-warn-unused-snapshots only reports them)",
    ], consecutive=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # like syrupy: every test passed, the run did not
    # a narrowed run cannot know: no report, nothing deleted
    for narrowed in (["-k", "crash"], ["test_snap.py::test_two_snapshots"], ["test_snap.py"]):
        out = snap.runpytest_inprocess("--agentloom-update-snapshots", *narrowed).stdout.str()
        assert "snapshot files unused" not in out and "files deleted" not in out
    assert stale.exists() and gone_module.exists()
    result = snap.runpytest_inprocess("--agentloom-update-snapshots")
    result.stdout.fnmatch_lines(["agentloom: 2 snapshot files deleted:"])
    assert files(snap) == EXPECTED_FILES
    assert not gone_module.parent.exists()


def test_snapshots_of_failed_or_skipped_tests_are_not_reported_unused(snap: pytest.Pytester) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    snap.makepyfile(test_snap=TESTS.replace("def test_two_snapshots(agentloom):",
                                            "def test_two_snapshots(agentloom):\n    pytest.skip('later')"))
    result = snap.runpytest_inprocess()
    result.assert_outcomes(passed=2, skipped=1)
    assert "snapshot files unused" not in result.stdout.str()


def test_snapshot_names_are_safe_for_file_systems(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_names="""
        import pytest

        # the long id is given explicitly: pytest 9.2 shortens long auto-generated string ids on its own
        @pytest.mark.parametrize("odd", ["a/b\\\\c:d*e?", pytest.param("x" * 300, id="x" * 300)])
        def test_odd(agentloom, odd):
            result = agentloom.run("flow.yaml", provider=agentloom.scripted(classify="bug"))
            agentloom.assert_snapshot(result, name="we:ird/name")
    """)
    triage.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=2)
    names = sorted(p.name for p in triage.path.rglob("__agentloom_snapshots__/**/*.yaml"))
    assert names[0] == "test_odd[a_b__c_d_e_]-de305801f1.we_ird_name-dd8b52fbae.yaml"  # pytest escapes the backslash
    assert len(names[1]) < 160 and names[1].startswith("test_odd[xxxx")
    triage.runpytest_inprocess().assert_outcomes(passed=2)


def test_snapshots_of_a_module_that_no_longer_snapshots_are_reported(snap: pytest.Pytester) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    snap.makepyfile(test_snap="def test_plain():\n    pass\n")
    result = snap.runpytest_inprocess()
    result.stdout.fnmatch_lines(["agentloom: 5 snapshot files unused:"])


def test_unused_snapshots_only_warn_with_the_option_or_ini_key(snap: pytest.Pytester) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    (snap.path / "__agentloom_snapshots__" / "test_snap" / "test_removed.yaml").write_text("format_version: 1\n")
    result = snap.runpytest_inprocess("--agentloom-warn-unused-snapshots")
    result.stdout.fnmatch_lines(["agentloom: 1 snapshot file unused:"])
    assert result.ret == pytest.ExitCode.OK and "fail the run" not in result.stdout.str()
    snap.makeini("[pytest]\nagentloom_warn_unused_snapshots = true\n")
    result = snap.runpytest_inprocess()
    result.stdout.fnmatch_lines(["agentloom: 1 snapshot file unused:"])
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.parametrize(
    "args",
    [["-x"], ["--maxfail=1"], ["--collect-only"], ["--ignore=test_snap.py"], ["--ignore-glob=*_snap.py"]],
    ids=["x", "maxfail", "collect-only", "ignore", "ignore-glob"],
)
def test_a_run_that_stops_early_or_skips_a_module_neither_reports_nor_deletes(
    snap: pytest.Pytester, args: list[str]
) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    # a first test that fails: with -x the snapshot tests never run; test_other also keeps the folder collected
    snap.makepyfile(test_aaa="def test_first():\n    assert False\n", test_other="def test_other():\n    pass\n")
    result = snap.runpytest_inprocess("-p", "no:randomly", "--agentloom-update-snapshots", *args)
    assert "snapshot file" not in result.stdout.str()
    assert files(snap) == EXPECTED_FILES


NO_BODY_OPTIONS = [["--setup-plan"], ["--setup-only"], ["--fixtures"], ["--fixtures-per-test"], ["--collect-only"],
                   ["--co"], ["--markers"], ["-k", "crash"], ["--deselect", "test_snap.py::test_two_snapshots"]]


@pytest.mark.parametrize("update", [False, True], ids=["plain", "update"])
@pytest.mark.parametrize("args", NO_BODY_OPTIONS, ids=lambda args: " ".join(args))
@pytest.mark.slow
def test_a_session_that_runs_no_test_body_never_judges_or_deletes_snapshots(
    snap: pytest.Pytester, args: list[str], update: bool
) -> None:
    snap.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=3)
    stale = snap.path / "__agentloom_snapshots__" / "test_snap" / "test_removed.yaml"
    stale.write_text("format_version: 1\n")
    flags = ["--agentloom-update-snapshots"] if update else []
    result = snap.runpytest_inprocess("-p", "no:randomly", *flags, *args)
    out = result.stdout.str()
    assert "snapshot file" not in out, out
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
    assert files(snap) == sorted([*EXPECTED_FILES, "__agentloom_snapshots__/test_snap/test_removed.yaml"])
