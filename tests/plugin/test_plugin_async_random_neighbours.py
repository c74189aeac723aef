"""pytest-asyncio and pytest-randomly in the same project as ours: async tests await the fixture's runs, and a
shuffled order (or another seed) changes no outcome and no byte of a snapshot.

Both plugins change how every test of a session runs, so they are not in the suite's own environments; ``tox -e
neighbours`` installs them and runs this file (``AGENTLOOM_NEIGHBOURS`` makes a missing plugin a failure there).
The inner sessions load them explicitly (``-p asyncio`` / ``-p randomly``) and leave the other one out.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts pytest sessions in subprocesses


def _plugin(module: str) -> None:
    if os.environ.get("AGENTLOOM_NEIGHBOURS"):
        importlib.import_module(module)  # tox -e neighbours: the plugin must be there
    else:
        pytest.importorskip(module, reason="tox -e neighbours installs it")


ASYNC_TESTS = """\
import pytest

@pytest.mark.asyncio
async def test_awaits_a_run(agentloom):
    result = await agentloom.arun("flow.yaml", state={"ticket": "crash"},
                                  provider=agentloom.scripted(classify="bug"))
    assert result.state["bug_id"] == "BUG-5" and result in agentloom.results
    agentloom.assert_snapshot(result)

@pytest.mark.asyncio
async def test_calls_the_sync_api_inside_the_loop(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "hello"},
                           provider=agentloom.scripted(classify="question", reply="Hi!"))
    assert result.state["answer"] == "Hi!"

def test_a_plain_test_beside_them(agentloom):
    result = agentloom.run("flow.yaml", state={"ticket": "crash"}, provider=agentloom.scripted(classify="bug"))
    assert result.ok
"""


@pytest.mark.parametrize("mode", ["strict", "auto"])
def test_pytest_asyncio_runs_async_tests_that_use_the_fixture(triage: pytest.Pytester, mode: str) -> None:
    _plugin("pytest_asyncio")
    triage.makepyfile(test_async=ASYNC_TESTS)
    args = ("-p", "asyncio", "-p", "no:randomly", "-p", "no:cacheprovider", "-o", f"asyncio_mode={mode}",
            "-o", "asyncio_default_fixture_loop_scope=function", "-W", "error::pytest.PytestUnraisableExceptionWarning")
    created = triage.runpytest_subprocess(*args, "--agentloom-create-snapshots")
    created.assert_outcomes(passed=3)
    replayed = triage.runpytest_subprocess(*args)
    replayed.assert_outcomes(passed=3)
    assert "Exception ignored" not in replayed.stderr.str() + replayed.stdout.str()


SHUFFLED_TESTS = """\
import random

import pytest

TICKETS = ["crash", "hello", "slow page", "login fails", "refund?"]

@pytest.mark.parametrize("ticket", TICKETS)
def test_each_ticket(agentloom, ticket):
    label = "bug" if len(ticket) % 2 else "question"
    result = agentloom.run("flow.yaml", state={"ticket": ticket},
                           provider=agentloom.scripted(classify=label, reply="Thanks!", allow_unused=True))
    agentloom.assert_snapshot(result)

def test_reads_the_reseeded_random(agentloom):
    random.random()  # pytest-randomly reseeds it before each test: nothing of ours may depend on it
    result = agentloom.run("flow.yaml", state={"ticket": "crash"}, provider=agentloom.scripted(classify="bug"))
    agentloom.assert_snapshot(result)
"""

TABLE = """\
- id: bug-row
  workflow: flow.yaml
  state: {ticket: crash}
  script: {classify: bug}
  expect: {status: success, snapshot: true}
- id: question-row
  workflow: flow.yaml
  state: {ticket: hello}
  script: {classify: question, reply: "Hi!"}
  expect: {status: success, snapshot: true}
"""


def _snapshots(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("__agentloom_snapshots__/**/*")) if p.is_file()}


def test_pytest_randomly_shuffles_without_changing_outcomes_or_snapshots(triage: pytest.Pytester) -> None:
    _plugin("pytest_randomly")
    triage.makepyfile(test_shuffled=SHUFFLED_TESTS)
    (triage.path / "test_rows.agentloom.yaml").write_text(TABLE)
    base = ("-p", "randomly", "-p", "no:asyncio", "-p", "no:cacheprovider", "-v")
    created = triage.runpytest_subprocess(*base, "--randomly-seed=1", "--agentloom-create-snapshots")
    created.assert_outcomes(passed=8)
    written = _snapshots(triage.path)
    assert len(written) == 8
    orders = []
    for seed in ("2", "3"):
        replayed = triage.runpytest_subprocess(*base, f"--randomly-seed={seed}")
        replayed.assert_outcomes(passed=8)
        assert f"--randomly-seed={seed}" in replayed.stdout.str()  # the plugin was loaded and shuffled
        orders.append([line.split(" ")[0] for line in replayed.stdout.lines if " PASSED" in line])
        assert _snapshots(triage.path) == written  # no snapshot rewritten, byte for byte
    assert orders[0] != orders[1]  # the two seeds really ran the tests in other orders
