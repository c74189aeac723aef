"""Two shards of a suite, each under ``-n 2``, then ``agentloom combine``: the whole suite's unused files,
coverage and review report, the same bytes as one unsharded run writes."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from pytest_agentloom.cli import main

importlib.import_module("xdist")
importlib.import_module("pytest_shard")

pytestmark = pytest.mark.xdist

FAST = ("-p", "no:hypothesispytest", "-p", "no:benchmark", "-p", "no:anyio", "-p", "no:randomly")

TESTS = """
import pytest

@pytest.mark.parametrize("n", range(6))
def test_many(agentloom, n):
    result = agentloom.run("flow.yaml", state={"ticket": "t" * n}, provider=agentloom.scripted(classify="bug"))
    agentloom.assert_snapshot(result)
"""

SHARDS = {
    "pytest-shard": [["--num-shards", "2", "--shard-id", "0"], ["--num-shards", "2", "--shard-id", "1"]],
    "pytest-split": [["--splits", "2", "--group", "1"], ["--splits", "2", "--group", "2"]],
}


def combine(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()  # what the inner pytest runs printed
    status = main(["combine", *args])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


@pytest.fixture
def suite(triage: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """Six snapshot tests and a two-row table, their snapshots written, plus a stale snapshot and cassette."""
    triage.makepyfile(test_many=TESTS)
    (triage.path / "test_rows.agentloom.yaml").write_text(
        "- id: a\n  workflow: flow.yaml\n  script: {classify: bug}\n  expect: {snapshot: true}\n"
        "- id: b\n  workflow: flow.yaml\n  script: {classify: bug}\n  expect: {snapshot: true}\n"
    )
    triage.runpytest_subprocess(*FAST, "--agentloom-update-snapshots").assert_outcomes(passed=8)
    (triage.path / "__agentloom_snapshots__" / "test_many" / "test_gone.yaml").write_text("format_version: 1\n")
    stale = triage.path / "cassettes" / "test_many.py" / "test_gone.yaml"
    stale.parent.mkdir(parents=True)
    stale.write_text("format_version: 1\ninteractions: []\n")
    monkeypatch.chdir(triage.path)
    return triage


def run_shards(suite: pytest.Pytester, plugin: str) -> list[str]:
    names = []
    for number, shard in enumerate(SHARDS[plugin]):
        name = f"shard-{number}.json"
        result = suite.runpytest_subprocess(*FAST, "-n", "2", *shard, f"--agentloom-shard-report={name}")
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        assert "file unused" not in result.stdout.str()  # a shard cannot know
        result.stdout.fnmatch_lines([f"agentloom: wrote the shard report {name}"])
        names.append(name)
    return names


def test_combined_shards_write_what_one_unsharded_run_writes(suite: pytest.Pytester,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    whole = suite.runpytest_subprocess(*FAST, "-n", "2", "--agentloom-report=whole.html",
                                       "--agentloom-cov-report=json:whole.json")
    whole.stdout.fnmatch_lines(["agentloom: 1 snapshot file unused:", "agentloom: 1 cassette file unused *"])
    suite.runpytest_subprocess(*FAST, "-n", "2", "--agentloom-report=whole.md").assert_outcomes(passed=8)
    shards = run_shards(suite, "pytest-shard")
    for shard in shards:  # what a shard holds: paths relative to the rootdir, no absolute path of this machine
        assert str(suite.path) not in Path(shard).read_text()

    status, out = combine(capsys, *shards, "--report", "combined.html", "--cov-report", "json:combined.json")
    assert status == 1, out
    assert out.splitlines()[:5] == [
        "agentloom combine: 2 shard reports, 8 of 8 tests run",
        "agentloom: 1 snapshot file unused:",
        "  __agentloom_snapshots__/test_many/test_gone.yaml",
        "agentloom: 1 cassette file unused:",
        "  cassettes/test_many.py/test_gone.yaml",
    ]
    assert (suite.path / "combined.html").read_bytes() == (suite.path / "whole.html").read_bytes()
    assert (suite.path / "combined.json").read_bytes() == (suite.path / "whole.json").read_bytes()
    status, out = combine(capsys, *shards, "--report", "combined.md", "--warn-unused")
    assert status == 0, out
    assert (suite.path / "combined.md").read_bytes() == (suite.path / "whole.md").read_bytes()

    status, out = combine(capsys, *shards, "--warn-unused", "--fail-under", "60")  # no test takes the reply branch
    assert status == 1 and "agentloom: FAIL branch coverage 50% is below --agentloom-cov-fail-under=60" in out
    assert combine(capsys, *shards, "--warn-unused", "--fail-under", "50")[0] == 0

    status, out = combine(capsys, shards[0])
    assert status == 1 and "did not run in any shard): unused files are not judged." in out

    status, out = combine(capsys, *shards, "--delete-unused")
    assert status == 0, out
    assert not (suite.path / "__agentloom_snapshots__" / "test_many" / "test_gone.yaml").exists()
    assert not (suite.path / "cassettes" / "test_many.py").exists()  # the folder it left empty
    assert len(list(suite.path.rglob("__agentloom_snapshots__/**/*.yaml"))) == 8
    assert combine(capsys, *shards)[0] == 0


def test_pytest_split_groups_combine_to_the_whole_suite(suite: pytest.Pytester,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    importlib.import_module("pytest_split")
    shards = run_shards(suite, "pytest-split")
    status, out = combine(capsys, *shards)
    assert status == 1
    assert "8 of 8 tests run" in out and "1 snapshot file unused" in out and "1 cassette file unused" in out


def test_combine_refuses_files_of_another_version_or_suite(suite: pytest.Pytester,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    shards = run_shards(suite, "pytest-shard")
    data = json.loads(Path(shards[1]).read_text())
    Path("other.json").write_text(json.dumps({**data, "suite": {"sha256": "0" * 64, "tests": 3}}))
    status, out = combine(capsys, shards[0], "other.json")
    assert status == 8
    assert ("ArtifactError: Shard report other.json cannot be used: it comes from another suite than the files "
            "before it (its tests differ)") in out
    Path("old.json").write_text(json.dumps({**data, "plugin_version": "0.0.1"}))
    status, out = combine(capsys, shards[0], "old.json")
    assert status == 8 and "pytest-agentloom 0.0.1 wrote it, this is" in out
    Path("junk.json").write_text('{"format": "something-else"}')
    status, out = combine(capsys, "junk.json")
    assert status == 8 and "its format is 'something-else'" in out
