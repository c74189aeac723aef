"""Run records held in memory until someone may read them: the handle a result keeps on its record.

It lives beside the result (not with the records' format in :mod:`~pytest_agentloom.engine._persist.records`)
because a :class:`~.result.WorkflowResult` holds one: the result must not import the layer that writes files.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..._core.files import write_json_atomic

__all__ = ["HeldRecords"]


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
            write_json_atomic(self.folder / name, make())

    def release(self) -> None:
        """Write every record held so far, and each later one as soon as it comes."""
        self._held = False
        pending, self._pending = self._pending, []
        for name, make in pending:
            write_json_atomic(self.folder / name, make())
