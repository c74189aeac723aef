"""The keyword options of a run, written once for ``run_workflow``, ``resume_workflow`` and their async twins.

The public functions take ``**options: Unpack[RunOptions]`` (or
``ResumeOptions``): type checkers and editors see every keyword, and a keyword
that is none of them is refused with a "did you mean" instead of being ignored.
:func:`prepare` turns the options into what a :class:`~.._run.loop.Run` needs, the
same way for a fresh run and a resumed one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..._core.clock import Clock, RunIdSource, SystemClock
from ..._core.suggest import did_you_mean
from ..._core.types import Provider
from ...errors import UsageError, render_message
from ...tools._builtins import run_tools
from ...tools._registry import tools_by_name
from .._format.model import Workflow
from .._outcome.held_records import HeldRecords

__all__ = ["Prepared", "ResumeOptions", "RunOptions", "check_options", "prepare"]


class RunOptions(TypedDict, total=False):
    """What every run (fresh or resumed, sync or async) may be given; all optional, all keyword-only."""

    #: adds or replaces top-level keys of the file's ``state:`` (on resume: of the checkpoint's state)
    state: Mapping[str, Any] | None
    #: the model provider; tests pass ``Scripted({...})``
    provider: Provider | None
    #: tool name -> sync or async callable, or a list of ``@tool`` functions and tool classes
    tools: Mapping[str, Callable[..., Any]] | list[Any] | None
    #: the run's clock; a ``VirtualClock`` makes every run byte-identical (real time by default)
    clock: Clock | None
    #: the run id, or a function that makes one (derived from the workflow and the inputs by default)
    run_id: str | RunIdSource | None
    #: turns checkpointing on (as ``config.checkpoint`` does), saving there
    checkpoint_dir: str | Path | None
    #: where the run record goes (``False``: none; the ``agentloom`` fixture gives a
    #: :class:`~.._persist.records.HeldRecords`)
    runs_dir: str | Path | bool | HeldRecords | None
    #: keys the redaction markers (the project's ``.agentloom/salt`` by default)
    redaction_salt: bytes | str | None
    #: dates checkpoints and records (``time.time`` by default)
    wall_clock: Callable[[], float] | None
    #: the environment variables to read settings from (``os.environ`` by default)
    env: Mapping[str, str] | None


class ResumeOptions(RunOptions, total=False):
    """A resume's options: a run's, and the decision and the workflow to resume with."""

    #: settles the step the run paused at: ``"approved"``/``True``, ``"rejected"``/``False`` or ``"cancelled"``
    decision: str | bool | None
    #: the workflow to resume with, instead of reloading the checkpoint's file
    workflow: Workflow | str | Path | None


def check_options(options: Mapping[str, Any], allowed: type, where: str) -> None:
    """Refuse a keyword the ``allowed`` TypedDict doesn't list, and a ``state`` or ``provider`` of the wrong kind."""
    known = allowed.__annotations__  # a TypedDict's own keys and those it inherits, in order
    for key in options:
        if key not in known:
            names = list(known)
            hint = did_you_mean(key, names)
            headline = f"{where}() got an unexpected keyword argument '{key}'."
            raise UsageError(render_message(headline, hint=hint, inline=True) if hint
                             else f"{headline} It takes: {', '.join(names)}.")
    state = options.get("state")
    if state is not None and not isinstance(state, Mapping):
        raise UsageError(f"state must map top-level state keys to values, got {type(state).__name__}")
    provider = options.get("provider")
    if provider is not None and not callable(getattr(provider, "complete", None)):
        raise UsageError(
            render_message(f"provider must have an async complete(request) method, got {type(provider).__name__}.",
                           hint="pass provider=Scripted({...}) or a provider from pytest_agentloom.providers.",
                                inline=True)
        )


@dataclass(frozen=True)
class Prepared:
    """What a run needs besides its hooks: the initial state, the provider, the tools and the clock."""

    state: dict[str, Any]
    provider: Provider | None
    tools: Mapping[str, Callable[..., Any]]
    clock: Clock


def prepare(workflow: Workflow, base_state: Mapping[str, Any], options: RunOptions) -> Prepared:
    """The run's inputs: ``base_state`` with ``state=`` laid over it, the run's tools, its clock.

    The state is a new top-level dict holding the same values, not copies: the run copies what it
    writes through (:meth:`~.._run.loop.Run._own_path`), and the result holds a copy of the final state.
    """
    tools = tools_by_name(options.get("tools"))
    initial = {**base_state, **(options.get("state") or {})}
    return Prepared(
        state=initial, provider=options.get("provider") or mock_provider(workflow),
        tools=run_tools(workflow.config.sandbox, workflow.base_dir, tools),
        clock=options.get("clock") or SystemClock(),
    )


def mock_provider(workflow: Workflow) -> Provider | None:
    """``config.provider: mock``: the replies of its ``responses_file`` (providers/_mock.py); else no provider."""
    if workflow.config.provider != "mock":
        return None
    from ...providers._mock import MockProvider

    return MockProvider.from_config(workflow.config, workflow.base_dir)
