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


@pytest.mark.slow
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


def test_a_test_without_tmp_path_gets_a_fresh_folder_of_its_own_and_pytest_makes_none(
    triage: pytest.Pytester,
) -> None:
    """pytest numbers each tmp_path by listing the whole base folder: the harness makes its own when it can."""
    write_rows(triage, 3)
    triage.makepyfile(test_table="""
        import json
        import pytest

        SEEN = []

        @pytest.mark.agentloom_scenarios("rows.jsonl")
        def test_rows(agentloom, scenario, tmp_path_factory):
            result = scenario.run(agentloom)
            scenario.check(result, agentloom)
            base = tmp_path_factory.getbasetemp()
            assert agentloom.tmp_path.is_dir() and agentloom.tmp_path.parent == base / "agentloom"
            assert agentloom.tmp_path.name.startswith("test_rows_" + scenario.id.replace("-", "_") + "_-")
            assert agentloom.run_dir.parent == agentloom.tmp_path
            assert result.record_path.parent == agentloom.run_dir
            assert json.loads(result.record_path.read_text())["run_id"] == result.run_id
            assert agentloom.tmp_path not in SEEN
            SEEN.append(agentloom.tmp_path)
            made = sorted(path.name for path in base.iterdir() if not path.name.startswith("."))
            assert made == ["agentloom"]  # and no tmp_path folder

        def test_with_tmp_path(agentloom, tmp_path):
            assert agentloom.tmp_path == tmp_path and agentloom.run_dir.parent == tmp_path
    """)
    triage.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=4)


def summary(result: pytest.RunResult) -> list[str]:
    """The ``-rA`` short summary's outcome and node id of each test, sorted."""
    return sorted(" ".join(line.split()[:2]) for line in result.outlines
                  if line.startswith(("PASSED ", "FAILED ", "ERROR ")))


@pytest.mark.xdist
def test_the_same_ids_and_outcomes_serially_and_under_xdist(triage: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    write_rows(triage, 6)
    with (triage.path / "rows.jsonl").open("a") as table:  # one row that fails, naming the file and row
        table.write(json.dumps({"id": "wrong", "workflow": "flow.yaml", "script": {"classify": "q", "reply": "a"},
                                "expect": {"outputs": {"reply": "b"}}}) + "\n")
    triage.makepyfile(test_table="""
        import pytest

        @pytest.mark.agentloom_scenarios("rows.jsonl")
        def test_rows(agentloom, scenario):
            scenario.check(scenario.run(agentloom), agentloom)
    """)
    (triage.path / "test_more.agentloom.yaml").write_text(
        "".join(f"- id: y{n}\n  workflow: flow.yaml\n  script: {{classify: q, reply: r}}\n"
                f"  expect: {{outputs: {{reply: r}}}}\n" for n in range(4)))
    fast = ("-p", "no:hypothesispytest", "-p", "no:benchmark", "-p", "no:anyio", "-rA")
    serial = triage.runpytest_inprocess(*fast)
    parallel = triage.runpytest_subprocess(*fast, "-n", "2")
    serial.assert_outcomes(passed=10, failed=1)
    parallel.assert_outcomes(passed=10, failed=1)
    assert summary(serial) == summary(parallel)
    assert "FAILED test_table.py::test_rows[wrong]" in summary(serial)
    for result in (serial, parallel):
        result.stdout.fnmatch_lines(["*Scenario 'wrong' (rows.jsonl:7): 1 expectation failed*"])
