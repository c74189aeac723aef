"""The pytest plugin, registered through the ``pytest11`` entry point as ``agentloom``.

Hooks, options and fixtures only: each hook hands its work to the
:class:`~pytest_agentloom.testing._session.AgentloomSession` kept under
``config.stash[SESSION_KEY]`` (its features), or to its two parts that serve tests: ``settings`` (what
a test's markers, the ini and the command line say) and ``harnesses`` (the ``agentloom`` fixture's factory).
``pytest -p no:agentloom`` turns it all off.
Loading this module imports neither the provider SDKs nor deepdiff.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pytest

from .errors import MarkerError, ScenarioTableError, render_message
from .testing._folders import folder_for_test
from .testing._session import SESSION_KEY, AgentloomSession
from .testing._settings.option_table import MARKER_SIGNATURE, add_options
from .testing._tracebacks import hide_our_frames

if TYPE_CHECKING:  # imported where used, so that loading the plugin stays cheap
    from .testing._harness import AgentloomHarness
    from .testing._scenarios.table import Scenario

__all__ = ["SESSION_KEY"]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER_SIGNATURE}: defaults for the agentloom fixture in this test, class or module."
    )
    config.addinivalue_line(
        "markers", "agentloom_scenarios(path): run the test once per row of a scenario table (YAML, JSONL, CSV)."
    )
    config.stash[SESSION_KEY] = AgentloomSession(config)
    config.stash[SESSION_KEY].configure()  # each feature's own (the review report's outcome listener)
    if config.getoption("agentloom_full_trace", default=False):
        config.option.fulltrace = True  # frames marked __tracebackhide__ are shown too: everything
    from .engine._persist.records import use_test_runs_dir

    # a run the test starts through the engine's API (run_workflow, aresume_workflow) without runs_dir writes
    # its record and checkpoint to a temporary folder of the session, never to ./agentloom_runs
    config.stash[_RUNS_BEFORE] = use_test_runs_dir(_session_runs_dir())


def pytest_unconfigure(config: pytest.Config) -> None:
    """The event loop the session's runs shared is closed here, while threads can still start (its default
    executor is shut down by one): at interpreter exit, Python 3.12+ refuses new threads."""
    from .engine._entry.sync import close_runner
    from .engine._persist.records import use_test_runs_dir

    close_runner()
    use_test_runs_dir(config.stash.get(_RUNS_BEFORE, None))


#: the default records folder before this session set its own (see pytest_configure)
_RUNS_BEFORE = pytest.StashKey[Any]()


def _session_runs_dir() -> Callable[[], Path]:
    """A folder made in the system's temporary folder the first time a run writes to it, then kept."""
    made: list[Path] = []

    def folder() -> Path:
        if not made:
            import tempfile

            made.append(Path(tempfile.mkdtemp(prefix="agentloom-test-runs-")).resolve())
        return made[0]

    return folder


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    settings = parent.config.stash[SESSION_KEY].settings
    if file_path.suffix in (".yaml", ".yml") and settings.is_scenario_file(file_path):
        from .testing._scenarios.yaml_tests import ScenarioFile

        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("agentloom_scenarios")
    if marker is None:
        return
    if len(marker.args) != 1 or marker.kwargs:
        pytest.fail(f"{metafunc.definition.nodeid}: use @pytest.mark.agentloom_scenarios('path/to/table.yaml') "
                    f"with exactly one path (got args={marker.args!r}, kwargs={marker.kwargs!r}).", pytrace=False)
    if "scenario" not in metafunc.fixturenames:
        pytest.fail(render_message(f"{metafunc.definition.nodeid}: a test marked agentloom_scenarios must take the "
                                   "'scenario' fixture.", hint="def test_x(agentloom, scenario): ..."), pytrace=False)
    from .testing._scenarios.table import load_table

    default = metafunc.definition.get_closest_marker("agentloom")
    workflow = (default.kwargs.get("workflow") or (default.args[0] if default.args else None)) if default else None
    base = metafunc.definition.path.parent
    try:
        rows = load_table(base / marker.args[0], default_workflow=_relative_to(workflow, base, marker.args[0]))
    except ScenarioTableError as exc:
        problem = str(exc)
    else:
        # direct: each row is the test's ``scenario`` argument as it is, with no fixture to set up per row
        metafunc.parametrize("scenario", rows, ids=[row.id for row in rows])
        return
    pytest.fail(problem, pytrace=False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    drop = config.stash[SESSION_KEY].select(items)  # the drift check compares only recorded agentloom tests
    if drop:
        config.hook.pytest_deselected(items=drop)


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        items[0].config.stash[SESSION_KEY].deselected(len(items))


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[SESSION_KEY].collected(session.items, errors=session.testsfailed)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Under ``--agentloom-live``: run each agentloom test its number of repetitions, reported as one test.
    Under ``--agentloom-drift``: run the test replayed first; pytest's own protocol then runs it live."""
    return item.config.stash[SESSION_KEY].protocol(item, nextitem)


def pytest_runtest_setup(item: pytest.Item) -> None:
    settings = item.config.stash[SESSION_KEY].settings
    try:
        settings.merged_markers(item)  # a test with no agentloom marker merges nothing: {"config": {}}
    except MarkerError as exc:
        message = str(exc)
    else:
        return
    pytest.fail(message, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # before pytest prints the frames: no run's raw state in any of them, and a user's mistake shows the
    # user's lines only (--agentloom-full-trace keeps them all, for a bug in agentloom)
    if call.excinfo is not None and not item.config.getoption("agentloom_full_trace", default=False):
        hide_our_frames(call.excinfo)
    report = yield
    item.config.stash[SESSION_KEY].after_report(item, call.when, report)
    return report


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any, right: Any) -> list[str] | None:
    if not _is_ours(left) and not _is_ours(right) and not (isinstance(left, dict) and isinstance(right, dict)):
        return None
    from .testing._snapshots.assertrepr import explain_comparison

    return explain_comparison(op, left, right, verbose=config.get_verbosity())


def _is_ours(value: Any) -> bool:
    return type(value).__module__.startswith("pytest_agentloom.")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Each feature's end of session: a worker sends its data; the controller writes files and may fail the run."""
    session.config.stash[SESSION_KEY].finish(session)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: a worker finished; merge what it sent into the controller's features."""
    node.config.stash[SESSION_KEY].transport.receive(node, error)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lines = config.stash[SESSION_KEY].summary_lines(terminalreporter.stats)
    if lines:
        terminalreporter.section("agentloom")
        for line in lines:
            terminalreporter.write_line(line)


# -- fixtures ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def agentloom_tools() -> Mapping[str, Callable[..., Any]] | list[Any]:
    """Tools given to every run of the ``agentloom`` fixture. Override it in a conftest.py to register yours:
    a dict of name -> callable, or a list of ``@tool`` functions (the forms ``agentloom.run(tools=...)`` takes).
    """
    # no tools, once per session and read-only: set up for every test (function scope), it cost a scenario
    # table's row 3% more instructions
    return MappingProxyType({})


@pytest.fixture
def agentloom(request: pytest.FixtureRequest, agentloom_tools: Any) -> AgentloomHarness:
    """A per-test harness: ``load(path)``, ``run(workflow, state=, provider=, tools=, **config)``,
    ``scripted(...)`` and ``assert_snapshot(result)``. Runs use a virtual clock and a run id derived
    from the test id; files they write go under ``agentloom.tmp_path`` (the test's ``tmp_path`` when it
    takes one, else a fresh folder of its own beside it, made when first needed: see :mod:`.testing._folders`).
    Tools given to every run come from the ``agentloom_tools`` fixture.
    """
    harnesses = request.config.stash[SESSION_KEY].harnesses
    folder, exists = folder_for_test(request, request.fixturenames)
    return harnesses.build(request.node, folder, agentloom_tools, folder_exists=exists)


@pytest.fixture
def scenario(request: pytest.FixtureRequest) -> Scenario:
    """The row of a scenario table this test runs (``@pytest.mark.agentloom_scenarios(path)``).

    ``scenario.run(agentloom)`` runs it; ``scenario.check(result, agentloom)`` checks every expectation.
    """
    from .testing._scenarios.yaml_tests import SCENARIO_KEY

    stashed = request.node.stash.get(SCENARIO_KEY, None)  # a row of a YAML-only table file
    if stashed is None:  # a marked test's rows are its direct parameters: this fixture is not asked for them
        pytest.fail("the 'scenario' fixture needs @pytest.mark.agentloom_scenarios('table.yaml') on the test.",
                    pytrace=False)
    return stashed


def _relative_to(workflow: Any, test_dir: Path, table: str) -> str | None:
    """A marker's workflow (relative to the test file) re-expressed relative to the table's folder."""
    if workflow is None:
        return None
    import os

    absolute = (test_dir / Path(workflow)).resolve()
    return os.path.relpath(absolute, (test_dir / table).resolve().parent)
