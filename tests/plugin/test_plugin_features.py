"""The session is a composition of feature objects: its hooks, its summary and its xdist data come from its
feature list, so adding a feature is adding one object (see ``pytest_agentloom/testing/_feature.py``)."""

from __future__ import annotations

import pytest

EXTENDED = """
import pytest
from pytest_agentloom.testing._feature import Feature
from pytest_agentloom.testing._session import SESSION_KEY, AgentloomSession


class Counting(Feature):
    '''A feature of this test only: it counts reports and runs, and says so in the summary.'''

    def __init__(self):
        self.reports = []
        self.runs = 0
        self.collected_items = 0

    def collected(self, items, errors):
        self.collected_items = len(items)

    def after_report(self, item, when, report):
        self.reports.append(f"{when}:{report.outcome}")

    def observer(self, nodeid):
        def observe(workflow, result, provider, fallbacks_before):
            self.runs += 1
        return observe

    def to_wire(self, session):
        return {"counting": {"reports": self.reports, "runs": self.runs}}

    def merge(self, data, *, died):
        sent = data.get("counting") or {}
        self.reports += sent.get("reports", [])
        self.runs += sent.get("runs", 0)

    def summary_lines(self, stats):
        return [f"counting: {len(self.reports)} reports, {self.runs} runs, {self.collected_items} collected"]


class Extended(AgentloomSession):
    def _features(self):
        return [*super()._features(), Counting()]


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.stash[SESSION_KEY] = Extended(config)
"""

TESTS = """
def test_one(agentloom):
    assert agentloom.run("flow.yaml", provider=agentloom.scripted(classify="question", reply="ok")).ok

def test_two(agentloom):
    agentloom.run("flow.yaml", provider=agentloom.scripted(classify="question", reply="ok"))
    agentloom.run("flow.yaml", provider=agentloom.scripted(classify="question", reply="ok"))
"""


def _extended(triage: pytest.Pytester) -> None:
    conftest = triage.path / "conftest.py"
    conftest.write_text(conftest.read_text() + EXTENDED)
    triage.makepyfile(test_counted=TESTS)


def test_one_more_feature_object_gets_the_hooks_and_a_summary_line(triage: pytest.Pytester) -> None:
    """A feature added to the list hears each report and each run, and its line ends the agentloom section."""
    _extended(triage)
    result = triage.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*= agentloom =*", "counting: 6 reports, 3 runs, 2 collected"])


def test_one_more_feature_object_sends_its_data_from_xdist_workers(triage: pytest.Pytester) -> None:
    """Under xdist the same feature's data comes back from the workers through the session's transport."""
    _extended(triage)
    result = triage.runpytest_subprocess("-p", "no:randomly", "-n", "2")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["counting: 6 reports, 3 runs, 0 collected"])  # the controller collects none


def test_the_session_asks_only_the_features_it_was_asked_for(pytester: pytest.Pytester) -> None:
    """The feature list is what the command line asks for: coverage adds the review feature, and nothing
    else does (a session that asks for nothing has no observer of runs)."""
    pytester.makeconftest("""
        from pytest_agentloom.testing._session import SESSION_KEY

        def pytest_sessionfinish(session):
            features = session.config.stash[SESSION_KEY].features
            (session.config.rootpath / "features.txt").write_text(" ".join(type(f).__name__ for f in features))
    """)
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    plain = "SnapshotFeature UsageFeature JudgeFeature CassetteFeature HarnessFeature"
    pytester.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=1)
    assert (pytester.path / "features.txt").read_text() == plain
    pytester.runpytest_inprocess("-p", "no:randomly", "--agentloom-cov").assert_outcomes(passed=1)
    assert (pytester.path / "features.txt").read_text() == plain + " ReviewFeature"
