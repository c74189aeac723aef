"""Big scenario tables: what the speed work must not change (ids, outcomes, files) and what it must hold."""

from __future__ import annotations

import json

import pytest

RELEASE_CONFTEST = """
import gc
import weakref

import pytest

HARNESSES = []


@pytest.fixture(autouse=True)
def _watch(request):
    if "agentloom" in request.fixturenames:
        HARNESSES.append(weakref.ref(request.getfixturevalue("agentloom")))


def pytest_sessionfinish(session):
    gc.collect()
    alive = sum(ref() is not None for ref in HARNESSES)
    (session.config.rootpath / "alive.txt").write_text(f"{alive} of {len(HARNESSES)}")
"""


def write_rows(pytester: pytest.Pytester, count: int) -> None:
    rows = [{"id": f"row-{n}", "workflow": "flow.yaml", "state": {"ticket": f"t{n}"}, "script": {"classify": "q",
             "reply": f"answer {n}"}, "expect": {"status": "success", "outputs": {"reply": f"answer {n}"}}}
            for n in range(count)]
    (pytester.path / "rows.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")


def test_a_finished_test_keeps_no_harness_alive(triage: pytest.Pytester) -> None:
    """Items live to the end of the session: a harness (every result of its runs) must not live with them."""
    write_rows(triage, 5)
    (triage.path / "conftest.py").write_text((triage.path / "conftest.py").read_text() + RELEASE_CONFTEST)
    triage.makepyfile(test_table="""
        import pytest

        @pytest.mark.agentloom_scenarios("rows.jsonl")
        def test_rows(agentloom, scenario):
            scenario.check(scenario.run(agentloom), agentloom)
    """)
    triage.runpytest_inprocess().assert_outcomes(passed=5)
    assert (triage.path / "alive.txt").read_text() == "0 of 5"
