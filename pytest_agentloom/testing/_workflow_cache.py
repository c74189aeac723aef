"""Workflows loaded once per test process: the rows of a scenario table share their workflow's load.

Each row of a table runs its workflow through ``agentloom.run(path)``, and loading
a file (YAML, the models, the graph and template checks, the subworkflow
children) cost about half a row's time when every row loaded it again. A loaded
:class:`~pytest_agentloom.engine._format.model.Workflow` cannot be changed (its models are
frozen, its lists and dicts read-only), so the cache gives every caller the same
object, and what runs work out once per workflow object
(:meth:`~pytest_agentloom.engine._format.model.Workflow.memoized`: the definition's hash,
the run's shape) is worked out once per file.

An entry is the workflow and the texts of the files it was built from (its own
and its subworkflow children's). It is used only while every one of those files
holds exactly that text, read again on each use: an edit is always seen, even one
of the same length within the file system's timestamp granularity, and nothing
else (no modification time, no object identity) decides. A file that cannot be
read, or a text that does not load, is loaded again by the loader, which names the
problem; failed loads are not kept. With ``AGENTLOOM_SPEEDUPS=0``
(:mod:`pytest_agentloom._core.speedups`) nothing is kept: every call loads the file.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._core.files import resolved
from .._core.speedups import speedups_on
from .._core.yaml_io import DEFAULT_LIMITS, read_text_capped
from ..engine._format.loader import load_workflow, load_workflow_read

if TYPE_CHECKING:
    from ..engine._format.model import Workflow

__all__ = ["WorkflowCache", "load_cached"]

#: Entries kept per process, one per workflow file; the least recently used goes first.
MAX_ENTRIES = 256


@dataclass(frozen=True)
class _Entry:
    workflow: Workflow
    texts: tuple[tuple[Path, str], ...]  # every file the workflow was built from, with the text it was built from

    def is_current(self) -> bool:
        """Whether every file still holds the text the workflow was built from."""
        for path, text in self.texts:
            try:
                if _read(path) != text:
                    return False
            except (OSError, ValueError):  # gone, unreadable, a directory now: loading again explains it
                return False
        return True


class WorkflowCache:
    """Loaded workflows by resolved path, used while their files hold the texts they were built from."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Path, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def load(self, path: str | Path) -> Workflow:
        """The workflow at ``path``, as :func:`~pytest_agentloom.engine._format.loader.load_workflow` gives it: the
        same object for every call while the files are unchanged."""
        if not speedups_on():
            return load_workflow(path)
        try:
            key = resolved(path if isinstance(path, Path) else Path(path))
        except (OSError, ValueError, RuntimeError):  # a NUL, a symlink loop: the loader names the problem
            return load_workflow(path)
        entry = self._entries.get(key)
        if entry is not None and entry.is_current():
            self._entries.move_to_end(key)
            return entry.workflow
        self._entries.pop(key, None)
        workflow, texts = load_workflow_read(path)  # as given: errors name the path the caller gave
        self._entries[key] = _Entry(workflow, tuple(texts.items()))
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return workflow


def _read(path: Path) -> str:
    return read_text_capped(path, max_bytes=DEFAULT_LIMITS.max_bytes, what="workflow file")


_PROCESS_CACHE = WorkflowCache()


def load_cached(path: str | Path) -> Workflow:
    """Load through the cache this test process shares (every harness of a session, and pytester's inline runs:
    entries are checked against the files, so a stale one is never used)."""
    return _PROCESS_CACHE.load(path)
