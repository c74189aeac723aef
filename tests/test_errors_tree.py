"""The error tree has a handful of branches, and moving a class under one changed nothing a user catches."""

from __future__ import annotations

import inspect

import pytest

from pytest_agentloom import errors
from pytest_agentloom.errors import (
    AgentloomError,
    CassetteMismatchError,
    DataFileError,
    DefinitionError,
    OutcomeError,
    ReplayError,
    RunError,
    StepError,
    UsageError,
)

BRANCHES = {DefinitionError, DataFileError, RunError, ReplayError, OutcomeError, UsageError}
CLASSES = [value for value in vars(errors).values()
           if inspect.isclass(value) and issubclass(value, AgentloomError) and value is not AgentloomError]

# What a user may already catch, per class: the built-in bases each had before the branches came.
BUILTIN_BASES = {
    "WorkflowError": ValueError, "ScenarioTableError": ValueError, "MarkerError": ValueError,
    "CheckpointError": ValueError, "ExpressionSyntaxError": ValueError, "EvaluationError": ValueError,
    "ScriptDataError": ValueError, "DataReadError": ValueError, "YamlReadError": ValueError,
    "JsonReadError": ValueError, "ArtifactError": ValueError, "UsageError": TypeError,
    "UnusedRepliesError": AssertionError, "UnusedInteractionsError": AssertionError,
    "VerdictStaleError": AssertionError, "MissingTemplateKeyWarning": UserWarning,
}


def test_the_base_has_only_the_branches_as_direct_children() -> None:
    direct = {cls for cls in CLASSES if AgentloomError in cls.__bases__}
    assert direct == BRANCHES


def test_every_error_sits_under_exactly_one_branch() -> None:
    for cls in CLASSES:
        if cls in BRANCHES:
            continue
        under = [branch.__name__ for branch in BRANCHES if issubclass(cls, branch)]
        assert len(under) == 1, f"{cls.__name__} is under {under}"


@pytest.mark.parametrize("name", sorted(BUILTIN_BASES))
def test_each_error_keeps_the_builtin_base_users_catch(name: str) -> None:
    assert issubclass(getattr(errors, name), BUILTIN_BASES[name])


def test_a_cassette_mismatch_is_a_replay_error_that_is_never_retried() -> None:
    error = CassetteMismatchError("no recording left\n  detail", reason="body", path="c.yaml", step_id="s")
    assert isinstance(error, ReplayError) and not isinstance(error, StepError)
    assert error.retryable is False
    assert error.code == "cassette_mismatch"
    assert (error.path, error.headline, error.step_id, error.reason) == ("c.yaml", "no recording left", "s", "body")
    assert CassetteMismatchError in errors.STEP_FAILURES


def test_the_errors_page_names_each_branch() -> None:
    from pathlib import Path

    page = (Path(errors.__file__).resolve().parent.parent / "docs" / "errors.md").read_text(encoding="utf-8")
    section = page.split("\n## ", 1)[0]  # the page's opening, before its first section (Error codes)
    for branch in BRANCHES:
        assert f"`{branch.__name__}`" in section
