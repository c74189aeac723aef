"""Run records held in memory until someone may read them: the handle a result keeps on its record.

It lives beside the result (not with the records' format in :mod:`~pytest_agentloom.engine._persist.records`)
because a :class:`~.result.WorkflowResult` holds one: the result must not import the layer that writes files.
So :func:`write_record_file`, the one writer of record files, lives here too: a record never replaces a
file agentloom did not write (``--run-id package --runs-dir .`` must not cost a ``package.json``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..._core.files import write_json_atomic
from ...errors import UsageError, render_message

__all__ = ["RECORD_KIND", "HeldRecords", "check_record_target", "write_record_file"]

#: the ``kind`` of every run record: how a file agentloom wrote is told from one it did not
RECORD_KIND = "agentloom.run_record"
_MARK = f'"kind": "{RECORD_KIND}"'
_HEAD = 4_096  # records are written with sorted keys: "kind" comes within the first few hundred bytes


def check_record_target(path: Path) -> None:
    """Refuse (:class:`~pytest_agentloom.errors.UsageError`) when ``path`` holds something but a run record.

    A missing file is fine, and so is an earlier record (a run written again under its id). Anything
    else (a file without the record's mark, a folder, a link) is left as it is, as
    ``--agentloom-report`` leaves a file it did not write.
    """
    if not os.path.lexists(path):
        return
    head = ""
    if not os.path.islink(path) and os.path.isfile(path):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                head = handle.read(_HEAD)
        except OSError:
            head = ""
    if _MARK in head:
        return
    raise UsageError(render_message(
        f"the run record {path} would replace a file that is not a run record agentloom wrote; it is left as it is.",
        hint="give the run another id (--run-id, run_id=) or another records folder (--runs-dir, runs_dir=, "
             "AGENTLOOM_RUNS_DIR), or move that file away."))


def write_record_file(path: Path, record: dict[str, Any]) -> Path:
    """Write ``record`` to ``path`` (atomically), unless ``path`` holds a file agentloom did not write."""
    check_record_target(path)
    return write_json_atomic(path, record)


class HeldRecords:
    """Run records kept in memory until someone may read them, then written into ``folder``.

    The ``agentloom`` fixture's runs give their records to one. Most tests pass without
    anyone looking at their run folder, and making that folder and writing a file into it
    was a fifth of what a scenario-table row cost. So records wait here until
    :meth:`release`: when the test reads the folder or a result's ``record_path``, or fails.
    From then on each record is written as soon as its run ends. ``held=False`` writes
    every record at once (a test that took pytest's ``tmp_path`` sees the folder anyway).
    """

    def __init__(self, folder: Path, *, held: bool = True) -> None:
        self.folder = folder
        self._held = held
        self._pending: list[tuple[str, Callable[[], dict[str, Any]]]] = []

    def __repr__(self) -> str:
        return f"<HeldRecords {str(self.folder)!r}: {len(self._pending)} held>"

    def __deepcopy__(self, memo: dict[int, Any]) -> HeldRecords:
        return self  # a handle on files to be written, not a value: a copied result writes the same files

    def add(self, name: str, make: Callable[[], dict[str, Any]]) -> None:
        """Keep the record ``make`` builds, to be written as ``name`` (once released: write it now).

        A held record is not even built until it is written: most never are.
        """
        if self._held:
            self._pending.append((name, make))
        else:
            write_record_file(self.folder / name, make())

    def release(self) -> None:
        """Write every record held so far, and each later one as soon as it comes."""
        self._held = False
        pending, self._pending = self._pending, []
        for name, make in pending:
            write_record_file(self.folder / name, make())
