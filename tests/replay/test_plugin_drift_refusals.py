"""The drift check fails closed: flags and folders that could cost a committed file, CI, nothing to compare,
and a live provider that cannot answer. After each, every committed file is byte for byte what it was."""

from __future__ import annotations

import pytest

from tests.replay.drift_project import committed, drift, fake_recording, plan_bug, record
from tests.replay.helpers import CANARY_KEY, Project
from tests.servers.fake_llm import text


@pytest.mark.parametrize("flag", ["--agentloom-record", "--agentloom-record-mode=new_episodes", "--agentloom-live"])
def test_flags_that_record_are_refused_with_it(project: Project, flag: str) -> None:
    fake_recording(project)
    project.live()
    before = committed(project)
    plan_bug(project, category="question")
    result = drift(project, flag)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--agentloom-drift cannot be combined with {flag.partition('=')[0]}: the drift "
                                 "check runs each test replayed, then live, itself, and never writes a committed "
                                 "cassette.*"])
    assert committed(project) == before
    assert project.server.requests == []


@pytest.mark.parametrize(("folder", "says"), [
    ("cassettes/drift", "overlaps the cassette folder"),
    (".", "overlaps the cassette folder"),
    ("__agentloom_snapshots__/drift", "lies inside a snapshot folder (__agentloom_snapshots__)"),
    ("mine", "holds files a drift check did not write; they are left as they are."),
    ("mine/notes.txt", "is a file, not a folder."),
])
def test_a_scratch_folder_that_could_cost_a_file_is_refused(project: Project, folder: str, says: str) -> None:
    fake_recording(project)
    (project.path / "mine").mkdir()
    (project.path / "mine/notes.txt").write_text("my notes\n")
    before = committed(project)
    result = drift(project, folder=folder)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--agentloom-drift=* {says}*", "How to fix: give --agentloom-drift a folder "
                                                                   "of its own*"])
    assert committed(project) == before


def test_under_ci_the_flag_must_be_typed_on_the_command_line(project: Project) -> None:
    fake_recording(project)
    project.monkeypatch.setenv("CI", "true")
    project.monkeypatch.setenv("PYTEST_ADDOPTS", "--agentloom-drift=.agentloom/drift/ci")
    refused = project.run()
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*The drift check (--agentloom-drift) is refused under CI=true*",
                                  "How to fix: *type it on the command line: pytest --agentloom-drift=DIR*"])
    assert not (project.path / ".agentloom/drift/ci").exists() and project.server.requests == []
    project.monkeypatch.delenv("PYTEST_ADDOPTS")
    typed = drift(project, "--collect-only", folder=".agentloom/drift/ci")  # typed: asked for on purpose
    assert typed.ret == pytest.ExitCode.OK, typed.stderr.str()
    assert (project.path / ".agentloom/drift/ci/.agentloom-drift").is_file()


def test_nothing_to_compare_says_so_and_how_to_record(project: Project) -> None:
    project.live()
    result = drift(project)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "agentloom drift: DriftError: The drift check has nothing to compare: no selected test has a committed "
        f"cassette in {project.path}/cassettes.",
        "  no cassette: test_support.py::test_support",
        "How to fix: record the tests once against live providers and commit the cassettes (pytest "
        "--agentloom-record), then run the drift check again.",
    ])
    assert project.server.requests == []


def test_a_missing_api_key_names_the_variable_without_a_traceback(project: Project) -> None:
    record(project)
    before = committed(project)
    project.monkeypatch.delenv("OPENAI_API_KEY")
    result = drift(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "DriftError: The live run of test_triage.py::test_triage got no answer from a provider.",
        "  step 'classify': provider 'openai' has no API key: neither the constructor nor OPENAI_API_KEY sets one.*",
        "How to fix: export OPENAI_API_KEY=*",
    ])
    output = result.stdout.str()
    assert "Traceback" not in output and "def test_triage" not in output and "assert result.status" not in output
    assert committed(project) == before


def test_an_unreachable_provider_names_it_and_its_base_url_variable(project: Project) -> None:
    record(project)
    before = committed(project)
    project.monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    result = drift(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "DriftError: The live run of test_triage.py::test_triage got no answer from a provider.",
        "  step 'classify': *connection failed*",
        "How to fix: check the provider's base URL variable (OPENAI_BASE_URL, *) points at a server that answers, "
        "and its API key variable is set; a replay needs neither.",
    ])
    assert "Traceback" not in result.stdout.str() and CANARY_KEY not in result.stdout.str()
    assert committed(project) == before


@pytest.mark.xdist
def test_under_xdist_both_sides_of_every_test_meet_in_the_report(project: Project) -> None:
    record(project)
    for path in ("test_triage.py", "cassettes/test_triage.py/test_triage.yaml",
                 "__agentloom_snapshots__/test_triage/test_triage.yaml"):  # a second test with the same recording
        copy = project.path / path.replace("test_triage", "test_triage_again", 1)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes((project.path / path).read_bytes())
    before = committed(project)
    # Two workers take the server's replies in whatever order their calls arrive: a classify call may get the
    # reply planned for the other test's last call. Every reply is the same, so every order gives both tests
    # the same run (the question route: classify, then reply).
    for _ in range(4):
        project.server.plan("openai", text('{"category": "question"}', input_tokens=10, output_tokens=3))
    result = drift(project, "-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "agentloom drift: 2 tests compared (replay -> live): 2 changed, 0 unchanged*",
        "  test_triage.py::test_triage: passed -> passed, * changes: regression (*)",
        "    route: route -> investigate -> route -> reply",
        "  test_triage_again.py::test_triage: passed -> passed, * changes: regression (*)",
        "    route: route -> investigate -> route -> reply",
    ])
    assert committed(project) == before
