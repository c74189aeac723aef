"""``agentloom_cassette_max_age`` with ``on_expiry`` warn / fail / re-record, read from the cassette's
``recorded_at`` (which comes from the session's clock: injected here for a fixed time)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode
from tests.replay.helpers import TEST_FILE, Project
from tests.servers.fake_llm import text

LONG_AGO = "2020-01-01T00:00:00Z"


def aged(project: Project, ini: str) -> Path:
    """A recorded cassette whose ``recorded_at`` says it is years old, and ``ini`` lines in pytest.ini."""
    project.live()
    project.server.plan("openai", text("bug"), text("We are on it."))
    project.run("--agentloom-record").assert_outcomes(passed=1)
    cassette = project.cassette()
    cassette.write_text(re.sub(r"recorded_at: .*", f"recorded_at: '{LONG_AGO}'", cassette.read_text(), count=1))
    project.pytester.makeini(f"[pytest]\n{ini}\n")
    return cassette


def test_an_expired_cassette_is_listed_under_warn(project: Project) -> None:
    aged(project, "agentloom_cassette_max_age = 30d")
    project.offline()
    result = project.run()
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "agentloom: 1 cassette older than the max age (agentloom_cassette_max_age), with what on_expiry did:" in out
    assert re.search(r"  cassettes/test_support.py/test_support.yaml \(recorded 2020-01-01T00:00:00Z, \d+ days "
                     r"ago; max age 30d\), warn", out)
    assert "How to fix: re-record them with live providers: pytest test_support.py::test_support --agentloom-record" \
        in out


def test_an_expired_cassette_fails_the_test_under_fail(project: Project) -> None:
    aged(project, "agentloom_cassette_max_age = 4w\nagentloom_cassette_on_expiry = fail")
    project.offline()
    result = project.run()
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "CassetteExpiredError: Test test_support.py::test_support: its cassette is older than its max age: " \
           "cassettes/test_support.py/test_support.yaml (recorded 2020-01-01T00:00:00Z" in out
    assert "max age 4w)." in out
    assert "  pytest test_support.py::test_support --agentloom-record" in out


def test_an_expired_cassette_is_recorded_again_under_re_record(project: Project) -> None:
    cassette = aged(project, "")
    project.pytester.makepyfile(test_support="import pytest\n\n" + TEST_FILE.replace(
        "def test_support", "@pytest.mark.agentloom(cassette_max_age='30d', cassette_on_expiry='re-record')\n"
                            "def test_support"))
    project.server.plan("openai", text("bug"), text("We are on it."))
    result = project.run()  # no record flag: the expired cassette alone asks for it
    result.assert_outcomes(passed=1)
    assert LONG_AGO not in cassette.read_text()
    assert len(project.server.requests) == 4  # recorded twice: once by aged(), once now
    assert "), re-record" in result.stdout.str()
    project.offline()
    fresh = project.run()
    fresh.assert_outcomes(passed=1)
    assert "older than the max age" not in fresh.stdout.str()


def test_re_record_is_refused_under_ci_and_fails_instead(project: Project) -> None:
    aged(project, "agentloom_cassette_max_age = 30d\nagentloom_cassette_on_expiry = re-record")
    project.offline()
    project.monkeypatch.setenv("CI", "true")
    result = project.run()
    result.assert_outcomes(failed=1)
    assert "on_expiry: re-record (re-recording is refused under CI=true)" in result.stdout.str()


def test_a_bad_max_age_names_where_it_came_from(project: Project) -> None:
    aged(project, "agentloom_cassette_max_age = 30 days")
    project.offline()
    result = project.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini agentloom_cassette_max_age must be a positive number and a unit (s, m, h, d, w), got '30 days'." \
        in result.stderr.str()


def test_recorded_at_comes_from_the_injected_clock(tmp_path: Path) -> None:
    from tests.replay.test_cassette import request, run_calls
    from tests.servers.fake_llm import FakeLLMServer

    moment = dt.datetime(2031, 5, 6, 7, 8, 9, tzinfo=dt.UTC)
    with FakeLLMServer() as server:
        server.plan("openai", text("hi"))
        from pytest_agentloom.providers import OpenAIProvider

        session = CassetteSession(CassetteConfig(path=tmp_path / "c.yaml", mode=RecordMode.ALL, clock=lambda: moment))
        with session:
            run_calls(session, OpenAIProvider(api_key="sk-test", base_url=server.openai_base_url), [request("x")])
    assert "recorded_at: '2031-05-06T07:08:09Z'" in (tmp_path / "c.yaml").read_text()


@pytest.mark.parametrize("value", ["0d", "-1h", "d", "12"])
def test_an_age_needs_a_positive_number_and_a_unit(value: str) -> None:
    from pytest_agentloom.errors import UsageError
    from pytest_agentloom.testing._settings.option_table import parse_age

    with pytest.raises(UsageError, match="must be a positive number and a unit"):
        parse_age(value, "ini agentloom_cassette_max_age")
