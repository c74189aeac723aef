"""The shape of one feature of the plugin's session: what it does in each pytest hook, in one object.

:class:`~._session.AgentloomSession` is a short composition: it builds the feature objects a session asks
for (``features``), and each plugin hook asks each feature in that order. A feature overrides only the hooks
it needs; the session keeps, per hook, only the features that override it, so a hook no feature uses costs
nothing per test (three reports of every row of a scenario table go through :meth:`Feature.check_call` and
:meth:`Feature.after_report`).

Adding a feature means adding one object: subclass :class:`Feature` in the room of ``testing/`` it belongs to,
override the hooks it needs, and add it to the list ``AgentloomSession._features`` builds (``None`` when the
session does not ask for it). Its terminal lines, its exit status, its share of the data an xdist worker
sends to the controller and its per-test work then come from it alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

__all__ = ["NO_BODY_OPTIONS", "Feature", "Observer", "overrides"]

#: what a harness tells of each finished run: the workflow, its result, the provider and the gateway
#: fallbacks it had taken before the run
Observer = Callable[..., None]

#: pytest options (their ``dest``) under which no test body runs: such a session judges no snapshot and repeats
#: no test
NO_BODY_OPTIONS = ("collectonly", "setuponly", "setupplan", "showfixtures", "show_fixtures_per_test",
                   "markers", "version", "help")


class Feature:
    """One feature's share of the session; every hook does nothing unless a subclass overrides it."""

    def configure(self, config: pytest.Config) -> None:
        """``pytest_configure``, after the session is built (register a plugin object, ...)."""

    def select(self, items: list[pytest.Item]) -> list[pytest.Item]:
        """``pytest_collection_modifyitems``: the items this feature deselects (the others are kept, in order)."""
        return []

    def deselected(self, count: int) -> None:
        """``pytest_deselected``: ``count`` more items were deselected, by anyone."""

    def collected(self, items: list[pytest.Item], errors: int) -> None:
        """``pytest_collection_finish``: the collected items and the number of collection errors."""

    def protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        """``pytest_runtest_protocol`` (tryfirst): ``True`` when this feature ran the test itself."""
        return None

    def check_call(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """A test's call report, before any feature reads its outcome: a check may fail it here."""

    def after_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        """Each phase's report of each test, after every check (its outcome is final)."""

    def observer(self, nodeid: str) -> Observer | None:
        """What hears each finished run of the test ``nodeid`` (``None``: this feature does not listen)."""
        return None

    def to_wire(self, session: pytest.Session | None) -> dict[str, Any]:
        """An xdist worker's data for the controller: entries of the one mapping the worker sends (most
        features put theirs under one key of their own)."""
        return {}

    def merge(self, data: Mapping[str, Any], *, died: bool) -> None:
        """The controller: one worker's whole mapping (``died``: the worker died, what it did is partly unknown)."""

    def finish(self, session: pytest.Session | None) -> tuple[pytest.ExitCode, ...]:
        """``pytest_sessionfinish`` on the controller: the exit statuses this feature turns into a failure."""
        return ()

    def summary_lines(self, stats: Mapping[str, list[Any]]) -> list[str]:
        """This feature's lines of the terminal summary's ``agentloom`` section (``stats``: every report)."""
        return []


def overrides(feature: Feature, hook: str) -> bool:
    """Whether ``feature`` does something in ``hook`` (the session skips the features that do not)."""
    return getattr(type(feature), hook) is not getattr(Feature, hook)
