"""Workflows loaded once per test process: the rows of a scenario table share their workflow's load.

Each row of a table runs its workflow through ``agentloom.run(path)``, and loading
a file (YAML, the models, the graph and template checks, the subworkflow
children) cost about half a row's time when every row loaded it again. The cache
keeps one checked :class:`~pytest_agentloom.engine.model.Workflow` per resolved
path and gives every caller its own deep copy (unpickled from bytes made once, which
is several times faster than ``copy.deepcopy`` of the models), so a run, a tool or
a test that changes the workflow it got can never change what another run gets.

An entry is used only while every file it was built from (the workflow's and its
subworkflow children's) holds the very text the loader read. A file's modification
time and size alone would miss an edit of the same length within the file system's
timestamp granularity (a test that rewrites a workflow and runs it again in the same
millisecond), so a file is read again and compared on each use until it has
*settled*: its text was found unchanged at a moment well after (:data:`SETTLED_NS`)
its last change (modification and status-change times). From then on, a ``stat``
that shows the same device, inode, size and both times is enough, as git trusts an
index entry that is not "racily clean": any later write moves the times on (and
``os.utime`` cannot put the status-change time back), a file replaced by another
changes the inode. Reading a file on every row cost a fifth of what loading the
copy costs. A file that cannot be read drops the entry, and loading it again
raises the loader's own error, naming the file, as without the cache. Failed loads
are not kept.

The harness's ``agentloom.run("flow.yaml")`` takes no copy at all
(:meth:`WorkflowCache.load_shared`): the engine never changes a workflow, and the
harness hands the kept one to nothing the test can reach, so each row of a table
neither unpickles its own copy nor works out again what a run works out once per
workflow object (the definition's dump and hash, the run's shape:
:meth:`~pytest_agentloom.engine.model.Workflow.memoized`). A copy handed to a test
(:meth:`WorkflowCache.load`, which the test may change before running it) starts
with an empty memo.
"""

from __future__ import annotations

import os
import pickle
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.files import resolved
from ..core.yaml_io import DEFAULT_LIMITS, read_text_capped
from ..engine.loader import load_workflow, load_workflow_read

if TYPE_CHECKING:
    from ..engine.model import Workflow

__all__ = ["WorkflowCache", "load_cached", "load_shared"]

#: Entries kept per process; the least recently used goes first (a big suite's many small test workflows).
MAX_ENTRIES = 256
#: How long after its last change a file's text must have been found unchanged before a ``stat`` is trusted
#: alone: well over any file system's timestamp granularity (FAT's is two seconds, ext4's a clock tick).
SETTLED_NS = 3_000_000_000


@dataclass
class _Entry:
    workflow: Workflow
    texts: dict[Path, str]  # every file the workflow was built from -> the text it was built from
    pickled: bytes | None  # the workflow pickled, when it can be: unpickling is ~3x faster than a deep copy
    #: files whose text was found unchanged well after their last change -> their ``stat`` then
    settled: dict[Path, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, workflow: Workflow, texts: dict[Path, str]) -> _Entry:
        try:
            pickled: bytes | None = pickle.dumps(workflow, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):  # something in it that pickle cannot take
            pickled = None
        return cls(workflow, texts, pickled)

    def copy(self) -> Workflow:
        """A copy that shares no mutable part with the cached workflow or any other copy."""
        if self.pickled is not None:
            copied: Workflow = pickle.loads(self.pickled)  # bytes this process made: no untrusted input
            return copied
        return self.workflow.model_copy(deep=True)

    def is_current(self) -> bool:
        """Whether every file still holds the text the workflow was built from (see the module's docs)."""
        for path, text in self.texts.items():
            try:
                status = os.stat(path)  # before reading: a change made meanwhile shows at the next use
                signature = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
                if self.settled.get(path) == signature:
                    continue
                if read_text_capped(path, max_bytes=DEFAULT_LIMITS.max_bytes, what="workflow file") != text:
                    return False
            except (OSError, ValueError):  # gone, unreadable, a directory now: load again, which explains it
                return False
            if time.time_ns() - max(status.st_mtime_ns, status.st_ctime_ns) > SETTLED_NS:
                self.settled[path] = signature
        return True


class WorkflowCache:
    """Checked workflows by resolved path, each handed out as a fresh deep copy (see the module doc)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Path, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, path: object) -> bool:
        """Whether a workflow loaded from ``path`` is kept (current or not)."""
        return isinstance(path, (str, Path)) and Path(path).expanduser().resolve() in self._entries

    def load(self, path: str | Path) -> Workflow:
        """The workflow at ``path``, as :func:`~pytest_agentloom.engine.loader.load_workflow` gives it."""
        entry = self._entry(path)
        return entry.copy() if isinstance(entry, _Entry) else entry

    def load_shared(self, path: str | Path) -> Workflow:
        """The workflow kept for ``path`` itself, not a copy: only for a run that nothing can change it
        through (the engine never changes a workflow; the ``agentloom`` fixture hands it to nothing the test
        can reach), where a copy per run was pure cost. What runs work out for it (:meth:`~pytest_agentloom.
        engine.model.Workflow.memoized`) is kept on it for the next run; copies (:meth:`load`) start empty."""
        entry = self._entry(path)
        return entry.workflow if isinstance(entry, _Entry) else entry

    def _entry(self, path: str | Path) -> _Entry | Workflow:
        """The current entry of ``path`` (loading the file when there is none), or the workflow loaded
        without the cache when ``path`` cannot even be resolved."""
        try:
            key = resolved(path if isinstance(path, Path) else Path(path))
        except (OSError, ValueError, RuntimeError):  # a NUL, a symlink loop: the loader names the problem
            return load_workflow(path)
        entry = self._entries.get(key)
        if entry is None or not entry.is_current():
            self._entries.pop(key, None)
            workflow, texts = load_workflow_read(path)  # as given: errors name the path the caller gave
            entry = self._entries[key] = _Entry.of(workflow, texts)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
        return entry


_PROCESS_CACHE = WorkflowCache()


def load_cached(path: str | Path) -> Workflow:
    """Load through the cache this test process shares (every harness of a session, and pytester's inline runs:
    entries are checked against the files, so a stale one is never used)."""
    return _PROCESS_CACHE.load(path)


def load_shared(path: str | Path) -> Workflow:
    """:meth:`WorkflowCache.load_shared` on the cache this test process shares: the kept workflow itself."""
    return _PROCESS_CACHE.load_shared(path)
