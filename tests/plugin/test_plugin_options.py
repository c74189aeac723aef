"""Options and ini keys: --help, precedence (command line, then marker, then ini), turning the plugin off."""

from __future__ import annotations

import pytest

SNAPSHOT_TEST = """
import pytest

{marker}
def test_one(agentloom):
    result = agentloom.run("flow.yaml", state={{"ticket": "crash"}}, provider=agentloom.scripted(classify="bug"))
    agentloom.assert_snapshot(result)
"""


def test_help_lists_every_option_in_the_agentloom_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--help")
    result.stdout.fnmatch_lines([
        "agentloom: test AgentLoom workflows:",
        "*--agentloom-snapshot-dir=VALUE*",
        "*--agentloom-update-snapshots*",
        "*--agentloom-warn-unused-snapshots*",
        "*--agentloom-scenario-glob=VALUE*",
    ])
    result.stdout.fnmatch_lines(["*agentloom_snapshot_dir (string):*", "*agentloom_warn_unused_snapshots (bool):*",
                                 "*agentloom_scenario_glob (string):*"])


def test_markers_are_listed_with_their_signature(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--markers")
    result.stdout.fnmatch_lines([
        "@pytest.mark.agentloom(workflow=None, *, tools=None, state=None, snapshot_dir=None, **config): *",
        "@pytest.mark.agentloom_scenarios(path): *",
    ])


@pytest.mark.parametrize(
    ("ini", "marker", "cli", "expected"),
    [
        (None, None, None, "__agentloom_snapshots__"),
        ("from_ini", None, None, "from_ini"),
        ("from_ini", "from_marker", None, "from_marker"),
        ("from_ini", "from_marker", "from_cli", "from_cli"),
        (None, None, "from_cli", "from_cli"),
    ],
)
def test_snapshot_dir_precedence_is_cli_then_marker_then_ini(
    triage: pytest.Pytester, ini: str | None, marker: str | None, cli: str | None, expected: str
) -> None:
    if ini:
        triage.makeini(f"[pytest]\nagentloom_snapshot_dir = {ini}\n")
    mark = f"@pytest.mark.agentloom(snapshot_dir={marker!r})" if marker else ""
    triage.makepyfile(test_precedence=SNAPSHOT_TEST.format(marker=mark))
    args = ["--agentloom-update-snapshots", *([f"--agentloom-snapshot-dir={cli}"] if cli else [])]
    triage.runpytest_inprocess(*args).assert_outcomes(passed=1)
    assert (triage.path / expected / "test_precedence" / "test_one.yaml").is_file()
    written = sorted(p.relative_to(triage.path).as_posix() for p in triage.path.rglob("test_one.yaml"))
    assert written == [f"{expected}/test_precedence/test_one.yaml"]


def test_ini_in_pyproject_toml_is_read(triage: pytest.Pytester) -> None:
    triage.makepyprojecttoml('[tool.pytest.ini_options]\nagentloom_snapshot_dir = "golden"\n')
    triage.makepyfile(test_toml=SNAPSHOT_TEST.format(marker=""))
    triage.runpytest_inprocess("--agentloom-update-snapshots").assert_outcomes(passed=1)
    assert (triage.path / "golden" / "test_toml" / "test_one.yaml").is_file()


def test_p_no_agentloom_turns_the_plugin_off(triage: pytest.Pytester) -> None:
    triage.makepyfile(test_off="def test_one(agentloom):\n    pass\n")
    result = triage.runpytest_inprocess("-p", "no:agentloom")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'agentloom' not found*"])
    assert "--agentloom" not in triage.runpytest_inprocess("-p", "no:agentloom", "--help").stdout.str()
