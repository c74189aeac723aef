"""The private names _core/compat.py uses are still there as it expects; when they are not, a clear error."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from pytest_agentloom._core import compat
from pytest_agentloom.errors import UsageError

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_pytests_runtestprotocol_takes_an_item_log_and_nextitem() -> None:
    """Fails loudly when pytest moves, renames or changes ``_pytest.runner.runtestprotocol``."""
    import _pytest.runner

    assert compat._runtestprotocol() is _pytest.runner.runtestprotocol


@pytest.mark.slow  # a pytester session
def test_a_test_runs_twice_with_fresh_function_fixtures_and_its_reports_are_not_logged(
        pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import pytest
        from pytest_agentloom._core.compat import run_protocol

        made = []

        @pytest.fixture
        def fresh():
            made.append(object())
            return made[-1]

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_protocol(item, nextitem):
            first = run_protocol(item, nextitem=item.parent)  # the module's fixtures stay up
            assert [report.when for report in first] == ["setup", "call", "teardown"]
            assert all(report.passed for report in first)
            return None  # pytest's own protocol runs it again, and logs that run
    """)
    pytester.makepyfile("""
        seen = []

        def test_twice(fresh):
            assert fresh not in seen
            seen.append(fresh)
    """)
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1)


def test_without_a_runtestprotocol_of_that_shape_nothing_runs_and_the_error_says_why(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import _pytest.runner

    def changed(item: object) -> list[object]:
        raise AssertionError("must not run")

    monkeypatch.setattr(_pytest.runner, "runtestprotocol", changed)
    with pytest.raises(UsageError, match=rf"pytest {pytest.__version__} does not have as pytest-agentloom expects"):
        compat.run_protocol(object(), nextitem=None)


def test_pyproject_bounds_pytest_above_and_the_installed_one_is_within() -> None:
    dependencies = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    requirement = next(Requirement(line) for line in dependencies if Requirement(line).name == "pytest")
    assert any(spec.operator == "<" for spec in requirement.specifier)
    assert requirement.specifier.contains(pytest.__version__)
