"""The agentloom fixture: paths relative to the test file, virtual clock, derived run ids, overrides, tmp folder."""

from __future__ import annotations

import pytest


def test_load_and_run_are_relative_to_the_test_file(triage: pytest.Pytester) -> None:
    sub = triage.mkpydir("sub")
    (sub / "flow.yaml").write_text((triage.path / "flow.yaml").read_text())
    (sub / "test_relative.py").write_text(
        "def test_relative(agentloom):\n"
        "    workflow = agentloom.load('flow.yaml')\n"
        "    assert workflow.source == agentloom.test_dir / 'flow.yaml'\n"
        "    result = agentloom.run('flow.yaml', state={'ticket': 'x'},\n"
        "                           provider=agentloom.scripted(classify='q', reply='ok'))\n"
        "    result.assert_steps('classify', 'route', 'reply')\n"
    )
    triage.runpytest_inprocess("sub").assert_outcomes(passed=1)


def test_runs_use_a_virtual_clock_and_a_run_id_derived_from_the_node_id(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_ids="""
        from pytest_agentloom import error, reply
        from pytest_agentloom.engine import derived_run_id

        def test_ids(agentloom, request):
            script = {"classify": [error(429), error(503), "bug"]}
            first = agentloom.run("flow.yaml", state={"ticket": "a"}, provider=agentloom.scripted(script))
            second = agentloom.run("flow.yaml", state={"ticket": "a"}, provider=agentloom.scripted(script))
            assert first.run_id == derived_run_id(request.node.nodeid)
            assert second.run_id == derived_run_id(request.node.nodeid, "2")
            # backoff of 1s then 2s passed on the virtual clock, instantly
            assert [e.time for e in first.trace.events("step_end", step="classify")] == [3.0]
            assert agentloom.results == [first, second]
    """)
    triage.runpytest_inprocess("--durations=1").assert_outcomes(passed=1)


def test_same_test_gives_the_same_result_byte_for_byte(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_same="""
        import pathlib

        def test_same(agentloom):
            result = agentloom.run("flow.yaml", state={"ticket": "a"}, provider=agentloom.scripted(classify="bug"))
            out = pathlib.Path(agentloom.test_dir, "out.json")
            if out.exists():
                assert out.read_text() == result.to_json()
            out.write_text(result.to_json())
    """)
    triage.runpytest_inprocess().assert_outcomes(passed=1)
    triage.runpytest_inprocess().assert_outcomes(passed=1)


def test_config_overrides_apply_to_one_run_only(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_overrides="""
        def test_overrides(agentloom):
            workflow = agentloom.load("flow.yaml")
            script = {"classify": "question", "reply": "ok"}
            result = agentloom.run(workflow, provider=agentloom.scripted(script), model="gpt-4o", timeout=30)
            assert workflow.config.model is None and workflow.config.timeout is None
            provider = agentloom.scripted(script)
            agentloom.run(workflow, provider=provider)
            assert provider.requests[0].model == "gpt-4o-mini"
    """)
    triage.runpytest_inprocess().assert_outcomes(passed=1)


def test_unknown_config_override_fails_naming_the_field(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_bad_override="""
        import pytest
        from pydantic import ValidationError

        def test_bad(agentloom):
            agentloom.run("flow.yaml", provider=agentloom.scripted(), budget=1)

        def test_bad_value(agentloom):
            with pytest.raises(ValidationError, match="budget_usd"):
                agentloom.run("flow.yaml", provider=agentloom.scripted(), budget_usd="a lot")
    """)
    result = triage.runpytest_inprocess()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "E*pytest_agentloom.errors.UsageError: agentloom.run() got an unexpected keyword 'budget' in "
        "test_bad_override.py::test_bad: it is no workflow config field.",
        "E*  config fields: model, provider, budget_usd, *",
        "E*How to fix: did you mean 'budget_usd'? pass config fields as keywords, e.g. "
        "agentloom.run(path, budget_usd=0.01).",
    ])


def test_run_without_provider_says_how_to_pass_one(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_no_provider="""
        def test_no_provider(agentloom):
            agentloom.run("flow.yaml")
    """)
    result = triage.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    # the default provider (AgentloomHarness._default_provider) may replay a cassette; without one the
    # failure says how to pass a provider
    result.stdout.fnmatch_lines([
        "E       pytest_agentloom.errors.CassetteNotFoundError: Test test_no_provider.py::test_no_provider "
        "has no cassette to replay: cassettes/test_no_provider.py/test_no_provider.yaml does not exist.",
        f"E         looked for: {triage.path}/cassettes/test_no_provider.py/test_no_provider.yaml",
        f"E         resolved against: {triage.path} (the rootdir)",
        "E         record mode: none (replay only)",
        "E         note: * holds no pytest.ini, pyproject.toml, tox.ini or setup.cfg, so pytest may have guessed "
        "the rootdir: run pytest from the project's folder or pass --rootdir",
        "E       How to fix: record it once against live providers (API keys needed), then commit the file:",
        "E         pytest test_no_provider.py::test_no_provider --agentloom-record",
        "E       or give the run a provider, e.g. "
        "agentloom.run(path, provider=agentloom.scripted(step_id='reply text')).",
    ])


def test_run_without_workflow_says_where_to_give_one(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_no_workflow="def test_it(agentloom):\n    agentloom.run()\n")
    result = triage.runpytest_inprocess()
    result.stdout.fnmatch_lines(["E*UsageError: agentloom.run() got no workflow in test_no_workflow.py::test_it."])


def test_tmp_path_is_per_test_and_the_cwd_stays_clean(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_tmp="""
        import os

        def test_a(agentloom, tmp_path):
            assert agentloom.tmp_path == tmp_path
            assert agentloom.run_dir.parent == tmp_path
            assert agentloom.tmp_path != os.getcwd()

        def test_b(agentloom):
            agentloom.run("flow.yaml", provider=agentloom.scripted(classify="q", reply="ok"))
    """)
    before = sorted(p.name for p in triage.path.iterdir())
    triage.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)
    after = sorted(p.name for p in triage.path.iterdir() if p.name != "__pycache__" and not p.name.startswith("."))
    assert after == before


def test_tools_from_run_marker_and_fixture_merge(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_tools="""
        import pytest

        def test_fixture_tool(agentloom):
            result = agentloom.run("flow.yaml", state={"ticket": "abc"}, provider=agentloom.scripted(classify="bug"))
            result.assert_output("file_bug", "BUG-3")

        @pytest.mark.agentloom(tools={"file_bug": lambda title: "from marker"})
        def test_marker_beats_fixture(agentloom):
            result = agentloom.run("flow.yaml", provider=agentloom.scripted(classify="bug"))
            result.assert_output("file_bug", "from marker")

        @pytest.mark.agentloom(tools={"file_bug": lambda title: "from marker"})
        def test_run_beats_marker(agentloom):
            result = agentloom.run("flow.yaml", provider=agentloom.scripted(classify="bug"),
                                   tools={"file_bug": lambda title: "from run"})
            result.assert_output("file_bug", "from run")
    """)
    triage.runpytest_inprocess().assert_outcomes(passed=3)


def test_fixture_docstrings_show_in_pytest_fixtures(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--fixtures")
    result.stdout.fnmatch_lines([
        "agentloom_tools ?session scope? -- *plugin.py:*", "*Tools given to every run*",
        "agentloom -- *plugin.py:*", "*A per-test harness*",
        "scenario -- *", "*The row of a scenario table*",
    ])
