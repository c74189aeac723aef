"""Whether a session runs every test its files hold: the items collected against the items kept.

pytest's own narrowing (``-k``, ``-m``, ``--lf``, node ids) is read from its options, and a plugin that
deselects through ``pytest_deselected`` (pytest-split) is counted there. But a plugin may also drop items
in its ``pytest_collection_modifyitems`` without telling anyone (pytest-shard keeps one shard of them;
a conftest may filter too). So :class:`SelectionWatch` wraps every implementation of that hook: it notes
the node ids collected from the files before any plugin changes the list, and how many items are gone
after all of them ran. A session that lost any item is *partial*: it reports no file unused and deletes
none, whatever removed the items.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

__all__ = ["SelectionWatch"]


class SelectionWatch:
    """A plugin object (registered by the session): what ``pytest_collection_modifyitems`` took away."""

    def __init__(self) -> None:
        #: the node ids collected from the files, before any plugin changed the list (``None``: no collection)
        self.collected_ids: list[str] | None = None
        #: the test files of those items (a shard's report and the unused reports judge the whole suite's)
        self.collected_paths: set[Path] = set()
        self.removed = 0  # items the plugins dropped, deselected or not

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Generator[None, None, None]:
        before = [item.nodeid for item in items]
        self.collected_paths.update(item.path for item in items)
        try:
            return (yield)
        finally:
            self.collected_ids = before
            kept = {item.nodeid for item in items}
            self.removed += max(len(before) - len(items), len(set(before) - kept))
