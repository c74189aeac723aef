"""One test's snapshots: its folder and file stem, its options, the count that names unnamed snapshots."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .compare import SnapshotOptions, SnapshotSession, sanitize

__all__ = ["TestSnapshots"]


@dataclass(slots=True)
class TestSnapshots:
    """What the harness hands snapshot calls to; built by the session for each test that takes the fixture.

    ``folder`` is the test's snapshot folder (``<dir>/<module>``), ``name`` its file stem (``<test>[<param>]``),
    ``options`` the defaults of its markers and ini; under ``live`` (``--agentloom-live``) nothing is compared.
    """

    __test__ = False

    nodeid: str
    folder: Path
    name: str
    session: SnapshotSession
    options: SnapshotOptions
    live: bool = False
    count: int = 0  # unnamed snapshots so far

    def path(self, name: str | None = None) -> Path:
        """The file a snapshot called ``name`` lives in (without counting it as a use)."""
        stem = self.name if name is None else f"{self.name}.{sanitize(name)}"
        return self.folder / f"{stem}.yaml"

    def check(self, result: Any, name: str | None, *, exclude: Iterable[str], matchers: Mapping[str, Any] | None,
              requests: bool | None) -> None:
        """Compare ``result`` with its golden file (see ``AgentloomHarness.assert_snapshot``)."""
        __tracebackhide__ = True
        if self.live:
            return
        if name is None:
            self.count += 1
            if self.count > 1:
                name = str(self.count)
        label = self.name if name is None else f"{self.name}.{name}"
        defaults = self.options
        exclude, matchers = tuple(exclude), dict(matchers or {})
        options = SnapshotOptions(
            requests=defaults.requests if requests is None else requests,
            exclude=(*defaults.exclude, *exclude), matchers={**defaults.matchers, **matchers},
            strict_paths=(*exclude, *matchers), verbose=defaults.verbose,
        )
        path = self.path(name)
        if not path.exists():  # left in the old default folder? Then it is moved, not written again beside it
            from .old_folder import old_snapshot_message

            moved = old_snapshot_message(path, label)
            if moved is not None:
                raise AssertionError(moved)
        self.session.assert_match(path, result, label=label, nodeid=self.nodeid, options=options)
