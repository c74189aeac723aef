"""A session that runs only part of the suite (a shard, a filter) reports no file unused and deletes none."""

from __future__ import annotations

import importlib

import pytest

TESTS = """
import pytest

@pytest.mark.parametrize("n", range(4))
def test_many(agentloom, n):
    result = agentloom.run("flow.yaml", state={"ticket": "t" * n}, provider=agentloom.scripted(classify="bug"))
    agentloom.assert_snapshot(result)
"""

DROPPING_CONFTEST = """

def pytest_collection_modifyitems(items):
    items[:] = items[:2]  # drops the others without reporting them deselected
"""


def snapshot_files(pytester: pytest.Pytester) -> list[str]:
    return sorted(p.name for p in pytester.path.rglob("__agentloom_snapshots__/**/*.yaml"))


@pytest.fixture
def suite(triage: pytest.Pytester) -> pytest.Pytester:
    triage.makepyfile(test_many=TESTS)
    triage.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=4)
    assert len(snapshot_files(triage)) == 4
    return triage


# both plugins load through their entry points (installed by the dev extra; tox's test extra has neither)
@pytest.mark.parametrize(("plugin", "shard"), [("pytest_shard", ["--num-shards", "2", "--shard-id", "0"]),
                                               ("pytest_split", ["--splits", "2", "--group", "1"])],
                         ids=["pytest-shard", "pytest-split"])
def test_a_shard_reports_nothing_unused_and_deletes_nothing(suite: pytest.Pytester, plugin: str,
                                                            shard: list[str]) -> None:
    importlib.import_module(plugin)
    result = suite.runpytest_inprocess(*shard)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert "snapshot file" not in result.stdout.str()
    result = suite.runpytest_inprocess(*shard, "--agentloom-update-snapshots")
    assert result.ret == pytest.ExitCode.OK and "snapshot file" not in result.stdout.str()
    assert len(snapshot_files(suite)) == 4


def test_a_conftest_that_drops_items_silently_makes_the_session_partial(suite: pytest.Pytester) -> None:
    conftest = suite.path / "conftest.py"
    conftest.write_text(conftest.read_text() + DROPPING_CONFTEST)
    result = suite.runpytest_inprocess("--agentloom-update-snapshots")
    result.assert_outcomes(passed=2)
    assert "snapshot file" not in result.stdout.str()
    assert len(snapshot_files(suite)) == 4


def test_the_whole_suite_still_reports_unused_snapshots(suite: pytest.Pytester) -> None:
    (suite.path / "__agentloom_snapshots__" / "test_many" / "test_gone.yaml").write_text("format_version: 1\n")
    result = suite.runpytest_inprocess()  # pytest-shard and pytest-split installed, not asked to shard
    result.stdout.fnmatch_lines(["agentloom: 1 snapshot file unused:"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_shard_narrowed_by_more_than_its_plugin_makes_the_combine_judge_nothing(
        suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from pytest_agentloom.cli import main

    importlib.import_module("pytest_shard")

    suite.runpytest_inprocess("--num-shards", "2", "--shard-id", "0", "--agentloom-shard-report=s0.json")
    suite.runpytest_inprocess("--num-shards", "2", "--shard-id", "1", "-k", "not 3", "--agentloom-shard-report=s1.json")
    first, second = (json.loads((suite.path / name).read_text()) for name in ("s0.json", "s1.json"))
    assert first["narrowed"] is False and second["narrowed"] is True
    assert first["suite"] == second["suite"] and first["suite"]["tests"] == 4
    monkeypatch.chdir(suite.path)
    capsys.readouterr()
    assert main(["combine", "s0.json", "s1.json"]) == 1
    assert ("agentloom combine: some shards ran less than their share (-k, -m, node ids, -x, an interruption or a "
            "collection error): unused files are not judged.\n  s1.json\n") in capsys.readouterr().out
