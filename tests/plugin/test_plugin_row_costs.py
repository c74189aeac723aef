"""What the per-row shortcuts of the plugin keep: merged markers kept per sequence of marks, the
``agentloom_tools`` fixture found per module and class, and the report hook's fast path."""

from __future__ import annotations

from pathlib import Path

import pytest

SCRIPTED = 'provider=agentloom.scripted(classify="question", reply="ok")'


def test_a_row_with_marks_of_its_own_gets_them_and_its_neighbours_do_not(triage: pytest.Pytester) -> None:
    """Rows of one function share its marks, and their merge; a row's own mark makes another merge."""
    triage.makepyfile(test_rows=f"""
        import pytest

        @pytest.mark.agentloom("flow.yaml", model="gpt-4o-mini")
        @pytest.mark.parametrize("row", [
            "plain",
            pytest.param("own", marks=pytest.mark.agentloom(state={{"ticket": "from row"}}, budget_usd=2.0)),
            "plain again",
        ])
        def test_row(agentloom, row):
            result = agentloom.run({SCRIPTED})
            assert result.state["ticket"] == ("from row" if row == "own" else "")
            own = {{"budget_usd": 2.0}} if row == "own" else {{}}
            assert agentloom._defaults["config"] == {{"model": "gpt-4o-mini", **own}}
    """)
    triage.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=3)


def test_merged_markers_follow_the_mark_objects(pytester: pytest.Pytester) -> None:
    """The session's merge is kept per sequence of mark objects: the same marks on another test (a shared
    module mark) reuse it, another mark or another order of marks merges again."""
    pytester.makeconftest("""
        import pytest
        from pytest_agentloom.testing._session import SESSION_KEY

        def pytest_collection_finish(session):
            agentloom = session.config.stash[SESSION_KEY].settings
            merged = {item.name: agentloom.merged_markers(item) for item in session.items}
            lines = [f"{name} {merged[name].get('state')} {merged[name]['config']}" for name in sorted(merged)]
            lines.append(f"shared: {merged['test_a'] is merged['test_b']}")
            lines.append(f"own: {merged['test_a'] is merged['test_c']}")
            (session.config.rootpath / "merged.txt").write_text("\\n".join(lines))
    """)
    pytester.makepyfile(test_marks="""
        import pytest

        pytestmark = pytest.mark.agentloom(state={"n": 1})

        def test_a():
            pass

        def test_b():
            pass

        @pytest.mark.agentloom(state={"n": 2}, model="m")
        def test_c():
            pass
    """)
    pytester.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=3)
    assert (pytester.path / "merged.txt").read_text().split("\n") == [
        "test_a {'n': 1} {}", "test_b {'n': 1} {}", "test_c {'n': 2} {'model': 'm'}", "shared: True", "own: False"]


def test_marks_of_equal_value_on_two_tests_are_merged_apart(pytester: pytest.Pytester) -> None:
    """The merges are kept by the mark objects themselves, never by their value or a bare id: two tests with
    equal marks of their own get equal merges, each its own; rows of one of them share theirs."""
    pytester.makeconftest("""
        from pytest_agentloom.testing._session import SESSION_KEY

        def pytest_collection_finish(session):
            settings = session.config.stash[SESSION_KEY].settings
            merged = [settings.merged_markers(item) for item in session.items]
            same = [a is b for a, b in zip(merged, merged[1:])]
            (session.config.rootpath / "merged.txt").write_text(f"{merged[0] == merged[2]} {same}")
    """)
    pytester.makepyfile(test_equal="""
        import pytest

        @pytest.mark.agentloom(state={"n": 1})
        @pytest.mark.parametrize("row", [1, 2])
        def test_a(row):
            pass

        @pytest.mark.agentloom(state={"n": 1})
        def test_b():
            pass
    """)
    pytester.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=3)
    assert (pytester.path / "merged.txt").read_text() == "True [True, False]"


def test_a_bad_marker_names_each_test_it_is_on(pytester: pytest.Pytester) -> None:
    """A failed merge is not kept: every test with the bad marker fails, naming itself."""
    pytester.makepyfile(test_bad="""
        import pytest

        pytestmark = pytest.mark.agentloom(budgit=1)

        def test_one(agentloom):
            pass

        def test_two(agentloom):
            pass
    """)
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*unexpected keyword 'budgit' on test_bad.py::test_one*",
                                 "*unexpected keyword 'budgit' on test_bad.py::test_two*"])


TOOL_FLOW = "name: f\nsteps:\n  - {id: t, type: tool, tool_name: t, output: out}\n"


def test_agentloom_tools_overrides_are_found_per_module_and_class(pytester: pytest.Pytester) -> None:
    """A module's or a class's override of ``agentloom_tools`` counts for its tests only."""
    pytester.makefile(".yaml", flow=TOOL_FLOW)
    plain = """
        def test_plain(agentloom):
            assert agentloom.run("flow.yaml", tools={"t": lambda: "run"}).state["out"] == "run"
    """
    pytester.makepyfile(test_a_plain=plain)
    pytester.makepyfile(test_b_module="""
        import pytest

        @pytest.fixture
        def agentloom_tools():
            return {"t": lambda: "module"}

        def test_module(agentloom):
            assert agentloom.run("flow.yaml").state["out"] == "module"
    """)
    pytester.makepyfile(test_c_class="""
        import pytest

        class TestOverride:
            @pytest.fixture
            def agentloom_tools(self):
                return {"t": lambda: "class"}

            def test_class(self, agentloom):
                assert agentloom.run("flow.yaml").state["out"] == "class"

        class TestPlain:
            def test_plain(self, agentloom):
                assert agentloom.run("flow.yaml", tools={"t": lambda: "run"}).state["out"] == "run"
    """ + plain)
    pytester.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=5)


def test_the_plugins_own_agentloom_tools_gives_no_tools_and_can_be_taken_or_parametrized(
        pytester: pytest.Pytester) -> None:
    """No override: the plugin's fixture gives no tools (read-only, once per session); a test that takes it
    gets it, and a test that parametrizes it directly gets its parameter."""
    pytester.makefile(".yaml", flow=TOOL_FLOW)
    pytester.makepyfile(test_tools="""
        import pytest

        def test_not_taken(agentloom):
            assert agentloom.run("flow.yaml", tools={"t": lambda: 1}).state["out"] == 1

        def test_taken(agentloom, agentloom_tools):
            assert agentloom_tools == {}
            with pytest.raises(TypeError):  # shared by every test of the session: read-only
                agentloom_tools["t"] = lambda: "mine"

        @pytest.mark.parametrize("agentloom_tools", [{"t": lambda: "param"}])
        def test_parametrized(agentloom, agentloom_tools):
            assert agentloom.run("flow.yaml").state["out"] == "param"
    """)
    pytester.runpytest_inprocess("-p", "no:randomly", "--setup-show").assert_outcomes(passed=3)


def test_report_fast_path_still_fails_unused_replies_and_keeps_failed_records(triage: pytest.Pytester) -> None:
    """A row that used no cassette skips the cassette's end; its scripted replies are still checked, and a
    failing test still writes its held run records."""
    triage.makepyfile(test_fast="""
        import pytest

        def test_unused_reply(agentloom):
            agentloom.run("flow.yaml", provider=agentloom.scripted(classify="question", reply="ok", extra="x"))

        def test_no_harness_use():
            pass

        def test_fails(agentloom):
            result = agentloom.run("flow.yaml", provider=agentloom.scripted(classify="question", reply="ok"))
            open("records.txt", "w").write(str(agentloom._records.folder))
            assert result.status.value == "failed"
    """)
    result = triage.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*step 'extra': 1 of 1 scripted reply never used*"])
    assert list(Path((triage.path / "records.txt").read_text()).glob("*.json"))


def test_settings_read_from_the_markers_follow_each_merge(triage: pytest.Pytester) -> None:
    """The snapshot folder, the missing-key mode and the cassette matching are worked out once per merge of
    marks: a test or a row with a marker of its own gets its own, the others the ini's."""
    triage.makeini("[pytest]\nagentloom_snapshot_dir = from_ini\n")
    triage.makepyfile(test_settings="""
        import pytest

        def test_unmarked(agentloom):
            assert agentloom.snapshot_dir.parent.name == "from_ini"
            assert agentloom._missing_keys == "error"

        @pytest.mark.agentloom(snapshot_dir="from_marker", missing_template_keys="warn",
                               cassette_ignore=["metadata.id"])
        def test_marked(agentloom):
            assert agentloom.snapshot_dir.parent.name == "from_marker"
            assert agentloom._missing_keys == "warn"
            assert agentloom._cassette.matching[0] == ("metadata.id",)

        @pytest.mark.parametrize("row", ["plain", pytest.param("own", marks=pytest.mark.agentloom(
            snapshot_dir="from_row"))])
        def test_rows(agentloom, row):
            assert agentloom.snapshot_dir.parent.name == ("from_row" if row == "own" else "from_ini")
            assert agentloom._cassette.matching[0] == ()
    """)
    triage.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=4)
    triage.runpytest_inprocess("-p", "no:randomly", "--agentloom-snapshot-dir=from_cli", "-k", "unmarked",
                               ).assert_outcomes(failed=1)


def test_a_rows_workflow_path_follows_its_workflow(tmp_path: Path) -> None:
    from pytest_agentloom.testing._scenarios.table import Scenario

    table = tmp_path / "tables" / "cases.yaml"
    row = Scenario(id="r", source=table, line=1, workflow="flow.yaml")
    neighbour = Scenario(id="n", source=table, line=2, workflow="flow.yaml")
    assert row.workflow_path() == tmp_path / "tables" / "flow.yaml"
    assert row.workflow_path() is neighbour.workflow_path()  # one path object for the rows of a table
    row.workflow = "../other.yaml"
    assert row.workflow_path() == tmp_path / "tables" / "../other.yaml"
    row.workflow = None
    assert row.workflow_path() is None


def test_a_rows_text_script_gives_the_replies_from_data_would() -> None:
    from pytest_agentloom.providers._scripted import Scripted
    from pytest_agentloom.testing._scenarios.table import Scenario

    for script in ({"a": "x", "b": ["y", "z"]}, {"a": {"text": "x", "input_tokens": 3}, "b": ["y"]}, {"a": []}):
        row = Scenario(id="r", source=Path("t.yaml"), line=1, script=script)
        made, expected = row.provider(), Scripted.from_data(script)
        assert made is not None
        assert made._script == expected._script
        assert made.unused() == expected.unused()
