"""``--agentloom-record-repetitions`` and ``--agentloom-replay-repetition``: a flaky live run, kept and replayed."""

from __future__ import annotations

import pytest
import yaml

from tests.replay.helpers import Project
from tests.replay.test_plugin_tool_tape import setup as mail_project
from tests.servers.fake_llm import text, tool_calls

GOOD = (text("bug"), text("We are on it."))
BAD = (text("bug"), text("Nope."))


def test_each_repetition_is_recorded_scrubbed_and_replays_on_its_own(project: Project) -> None:
    project.live()
    committed = project.cassette()
    committed.parent.mkdir(parents=True)
    committed.write_text("the committed cassette: a live run leaves it alone\n")
    project.server.plan("openai", *GOOD, *BAD, *GOOD)

    recorded = project.run("--agentloom-live", "--agentloom-repeat=3", "--agentloom-min-pass-rate=0.6",
                           "--agentloom-record-repetitions")

    recorded.assert_outcomes(passed=1)
    folder = project.path / "cassettes" / "test_support.py" / "test_support"
    assert sorted(path.name for path in folder.iterdir()) == ["1.yaml", "2.yaml", "3.yaml"]  # the failed one too
    assert committed.read_text() == "the committed cassette: a live run leaves it alone\n"
    second = yaml.safe_load((folder / "2.yaml").read_text())
    assert second["interactions"][1]["response"]["body"]["json"]["choices"][0]["message"]["content"] == "Nope."
    project.assert_no_canaries()  # neither the API key nor the redacted state value reached any file
    recorded.stdout.fnmatch_lines([
        "agentloom: 3 cassettes recorded (record mode all):",
        "*",
        "  test_support.py::test_support: 2/3 passed (67%; needs 2, min pass rate 0.6): passed",
        "*",
        "    cassettes: cassettes/test_support.py/test_support/1.yaml, cassettes/test_support.py/test_support/2.yaml, "
        "cassettes/test_support.py/test_support/3.yaml",
    ])

    project.offline()
    project.run("--agentloom-replay-repetition=1").assert_outcomes(passed=1)
    failing = project.run("--agentloom-replay-repetition=2")  # the flaky answer, replayed with no key or network
    failing.assert_outcomes(failed=1)
    failing.stdout.fnmatch_lines(["E       AssertionError: assert 'Nope.' == 'We are on it.'"])
    assert committed.read_text() == "the committed cassette: a live run leaves it alone\n"

    missing = project.run("--agentloom-replay-repetition=4")
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines([
        "*CassetteNotFoundError: Test test_support.py::test_support has no cassette to replay: "
        "cassettes/test_support.py/test_support/4.yaml does not exist.",
        "*",
        "*  pytest test_support.py::test_support --agentloom-live --agentloom-repeat=4 --agentloom-record-repetitions",
    ])


def test_without_the_flag_a_live_run_records_no_repetition(project: Project) -> None:
    project.live()
    project.server.plan("openai", *GOOD, *GOOD)
    result = project.run("--agentloom-live", "--agentloom-repeat=2")
    result.assert_outcomes(passed=1)
    assert not (project.path / "cassettes").exists()
    assert "cassettes:" not in result.stdout.str()


@pytest.mark.slow
def test_side_effect_tools_run_live_and_each_repetition_keeps_its_tool_tape(project: Project) -> None:
    outbox, _ = mail_project(project)
    project.live()
    plan = (tool_calls(("send_email", {"to": "ana@example.org"})), text("Emailed Ana."))
    project.server.plan("openai", *plan)
    project.run("test_mail.py", "--agentloom-live").assert_outcomes(passed=1)
    assert outbox.read_text() == "ana@example.org\n"  # live: the tool ran for real, as when recording
    assert not (project.path / "cassettes").exists()  # and no tool tape was written

    project.server.plan("openai", *plan, *plan)
    project.run("test_mail.py", "--agentloom-live", "--agentloom-repeat=2",
                "--agentloom-record-repetitions").assert_outcomes(passed=1)
    folder = project.path / "cassettes" / "test_mail.py" / "test_mail"
    assert sorted(path.name for path in folder.iterdir()) == ["1.tools.yaml", "1.yaml", "2.tools.yaml", "2.yaml"]
    assert outbox.read_text() == "ana@example.org\n" * 3

    project.offline()
    project.run("test_mail.py", "--agentloom-replay-repetition=2").assert_outcomes(passed=1)
    assert outbox.read_text() == "ana@example.org\n" * 3  # replayed from repetition 2's tape, not sent again


def _summary(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    start = lines.index("agentloom live repetitions:")
    return [line for line in lines[start + 1:start + 4]]


def test_replaying_every_kept_repetition_gives_the_live_outcomes_and_statistics_again(project: Project) -> None:
    project.live()
    project.server.plan("openai", *GOOD, *BAD, *GOOD)
    live = project.run("--agentloom-live", "--agentloom-repeat=3", "--agentloom-min-pass-rate=0.6",
                       "--agentloom-record-repetitions")
    live.assert_outcomes(passed=1)

    project.offline()
    replayed = project.run("--agentloom-replay-repetitions", "--agentloom-min-pass-rate=0.6")

    replayed.assert_outcomes(passed=1)
    assert _summary(replayed) == _summary(live) == [
        "  test_support.py::test_support: 2/3 passed (67%; needs 2, min pass rate 0.6): passed",
        "    repetitions: . F .",
        "    statistics: pass rate 0.67 (95% CI 0.21-0.94) · flaky",
    ]
    strict = project.run("--agentloom-replay-repetitions")  # the default bar, 1.0: the kept failure fails it
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(["*2 of 3 repetitions of test_support.py::test_support passed (67%)*"])


def test_replaying_every_repetition_is_refused_with_live_or_one_repetition(project: Project) -> None:
    for args, message in ((["--agentloom-live"], "*--agentloom-live cannot be combined with "
                                                  "--agentloom-replay-repetition(s)*"),
                          (["--agentloom-replay-repetition=2"], "*--agentloom-replay-repetition=K and "
                                                                "--agentloom-replay-repetitions cannot be combined*")):
        result = project.run("--agentloom-replay-repetitions", *args)
        assert result.ret == 4
        result.stderr.fnmatch_lines([message])
