"""The agentloom and agentloom_scenarios markers: registered, merged closest first, validated."""

from __future__ import annotations

import pytest


def test_markers_raise_no_warning_under_strict_markers(triage: pytest.Pytester) -> None:
    triage.makefile(".yaml", table="- id: a\n  workflow: flow.yaml\n  script: {classify: hi, reply: ok}\n")
    triage.makepyfile(test_strict="""
        import pytest

        @pytest.mark.agentloom(workflow="flow.yaml", budget_usd=1.0)
        def test_marked(agentloom):
            pass

        @pytest.mark.agentloom_scenarios("table.yaml")
        def test_rows(agentloom, scenario):
            pass
    """)
    result = triage.runpytest_inprocess("--strict-markers", "-W", "error::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=2)


def test_unknown_marker_keyword_errors_listing_the_allowed_ones(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_bad="""
        import pytest

        @pytest.mark.agentloom(workflow="flow.yaml", budget=1.0)
        def test_bad(agentloom):
            pass
    """)
    result = triage.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "*@pytest.mark.agentloom got an unexpected keyword 'budget' on test_bad.py::test_bad.",
        "*allowed keywords: before_record_response, budget_usd, *model, *provider, *snapshot_dir, *snapshot_requests, "
        "state, *tools, workflow",
        "*How to fix: did you mean 'budget_usd'? use agentloom(workflow=None, *, tools=None,*",
    ])


def test_marker_argument_of_the_wrong_type_names_it(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_bad="""
        import pytest

        @pytest.mark.agentloom(tools="file_bug")
        def test_bad():
            pass
    """)
    result = triage.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    assert ("argument 'tools' must be a dict or list of tools (got 'file_bug' that is a str) "
            "on test_bad.py::test_bad") in result.stdout.str()


def test_module_class_and_test_markers_merge_closest_first(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_merge="""
        import pytest

        pytestmark = pytest.mark.agentloom("flow.yaml", budget_usd=5.0, state={"ticket": "from module"})

        @pytest.mark.agentloom(budget_usd=0.5)
        class TestTriage:
            def test_class_wins_over_module(self, agentloom):
                result = agentloom.run(provider=agentloom.scripted(classify="question", reply="ok"))
                assert result.state["ticket"] == "from module"
                assert agentloom._defaults["config"] == {"budget_usd": 0.5}

            @pytest.mark.agentloom(state={"ticket": "from test"})
            def test_test_wins_over_class(self, agentloom):
                result = agentloom.run(provider=agentloom.scripted(classify="question", reply="ok"))
                assert result.state["ticket"] == "from test"
    """)
    triage.runpytest_inprocess().assert_outcomes(passed=2)


def test_marker_config_sets_a_budget_that_run_arguments_override(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_budget="""
        import pytest
        from pytest_agentloom import reply

        SCRIPT = {"classify": reply("question", cost=0.02), "reply": "ok"}

        @pytest.mark.agentloom(workflow="flow.yaml", budget_usd=0.01)
        def test_budget_from_marker(agentloom):
            result = agentloom.run(provider=agentloom.scripted(SCRIPT, allow_unused=True))  # stops before reply
            result.assert_status("budget_exceeded", "budget_exceeded")

        @pytest.mark.agentloom(workflow="flow.yaml", budget_usd=0.01)
        def test_run_argument_wins(agentloom):
            result = agentloom.run(provider=agentloom.scripted(SCRIPT), budget_usd=1.0)
            result.assert_status("success")
    """)
    triage.runpytest_inprocess().assert_outcomes(passed=2)


@pytest.mark.slow
def test_agentloom_scenarios_needs_one_path_and_the_scenario_fixture(triage: pytest.Pytester) -> None:
    triage.makefile(".yaml", table="- id: a\n  workflow: flow.yaml\n")
    triage.makepyfile(test_rows="""
        import pytest

        @pytest.mark.agentloom_scenarios("table.yaml")
        def test_rows(agentloom):
            pass
    """)
    result = triage.runpytest_inprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*a test marked agentloom_scenarios must take the 'scenario' fixture.*"])


def test_a_marker_added_by_a_fixture_before_the_harness_is_made_counts(triage: pytest.Pytester) -> None:
    """Setup merges the markers first; the harness merges them again when the markers are not the same."""
    triage.makepyfile(test_added="""
        import pytest

        @pytest.fixture
        def from_fixture(request):
            request.node.add_marker(pytest.mark.agentloom(state={"ticket": "from fixture"}))

        @pytest.mark.agentloom("flow.yaml", state={"ticket": "from test"})
        def test_marker_of_the_test(agentloom):
            result = agentloom.run(provider=agentloom.scripted(classify="question", reply="ok"))
            assert result.state["ticket"] == "from test"

        @pytest.mark.agentloom("flow.yaml")
        def test_marker_of_a_fixture(from_fixture, agentloom):
            result = agentloom.run(provider=agentloom.scripted(classify="question", reply="ok"))
            assert result.state["ticket"] == "from fixture"
            agentloom._defaults["config"]["budget_usd"] = 1.0  # the harness's own copy: nothing kept between uses

        @pytest.mark.agentloom("flow.yaml")
        def test_defaults_are_each_callers_own(request, agentloom):
            settings = request.config.stash[__import__("pytest_agentloom").plugin.SESSION_KEY].settings
            settings.defaults(request.node)["config"]["budget_usd"] = 1.0
            assert settings.defaults(request.node)["config"] == {}
    """)
    triage.runpytest_inprocess().assert_outcomes(passed=3)


def test_settings_read_once_per_session_keep_their_precedence(pytester: pytest.Pytester) -> None:
    """Command line, then a test's marker, then ini: the same answers with the session's cache of the first and
    the last (the harness reads several settings per test), and each test's marker still counts."""
    pytester.makeini("[pytest]\nagentloom_missing_template_keys = error\nagentloom_snapshot_dir = from_ini\n")
    pytester.makeconftest("""
        from pytest_agentloom.testing._session import SESSION_KEY

        def pytest_sessionfinish(session):
            agentloom = session.config.stash[SESSION_KEY].settings
            seen = []
            for marker in ({}, {"snapshot_dir": "from_marker", "missing_template_keys": "warn"}, {}):
                keys = ("snapshot_dir", "missing_template_keys")
                seen.append(" ".join(str(agentloom.setting(key, marker)) for key in keys))
            (session.config.rootpath / "seen.txt").write_text("\\n".join(seen))
    """)
    pytester.makepyfile("def test_nothing(): pass")
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
    assert (pytester.path / "seen.txt").read_text().split("\n") == [
        "from_ini error", "from_marker warn", "from_ini error"]
    pytester.runpytest_inprocess("--agentloom-snapshot-dir=from_cli").assert_outcomes(passed=1)
    assert (pytester.path / "seen.txt").read_text().split("\n") == [
        "from_cli error", "from_cli warn", "from_cli error"]
