"""Cassettes and tool tapes no test used, and a shard's report, as a feature of the session.

On a run of the whole suite (the snapshot feature decides, see
:meth:`~.._snapshots.feature.SnapshotFeature.selected_whole_suite`), the cassette and tool tape files that no
test opened are listed and fail the run, like unused snapshots: ``--agentloom-warn-unused-cassettes`` only
lists them, ``--agentloom-prune-cassettes`` deletes them. A test that failed with no cassette next to an
unused one gets a ``git mv`` hint: a renamed test keeps its recording. ``--agentloom-shard-report=PATH``
writes what this session used and measured (see :mod:`.shard_report`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..._core.files import write_text_atomic
from ...errors import render_message
from .._feature import Feature
from .._settings.option_table import read_setting
from .cassettes import CassetteUsage
from .shard_report import FORMAT, plugin_version, relative_paths, suite_id

if TYPE_CHECKING:
    from .._review.feature import ReviewFeature
    from .._snapshots.feature import SnapshotFeature
    from .._test_cassette import ReplaySettings

__all__ = ["UsageFeature"]


class UsageFeature(Feature):
    """The session's cassette usage (its unused report) and its shard report."""

    def __init__(self, config: pytest.Config, replay: ReplaySettings, snapshots: SnapshotFeature,
                 review: ReviewFeature | None, *, judged: bool) -> None:
        self.config = config
        self._replay = replay
        self._snapshots = snapshots
        self._review = review
        self._judged = judged  # live and drift sessions judge no committed cassette
        self.is_worker = hasattr(config, "workerinput")
        rootdir = Path(config.rootpath)
        self.usage = CassetteUsage(rootdir, CassetteUsage(rootdir, "").relative(replay.cassette_dir))
        self.warn_unused = bool(read_setting(config, "warn_unused_cassettes"))
        self.prune = bool(read_setting(config, "prune_cassettes"))
        shard = read_setting(config, "shard_report")
        self.shard_path = None if shard in (None, "") else Path(config.invocation_params.dir) / os.fspath(shard)
        self.ran: set[str] = set()  # the tests set up here (a shard report only)
        self.suite: tuple[str, int] | None = None  # the hash and count of the test ids collected from the files
        self.unused: list[Path] = []
        self.renames: list[str] = []
        self.deleted = False
        self.wrote: Path | None = None

    def collected(self, items: list[pytest.Item], errors: int) -> None:
        watch = self._snapshots.watch
        self.usage.collect(watch.collected_paths | {item.path for item in items})
        if self.shard_path is not None:  # the suite's identity, for agentloom combine
            ids = watch.collected_ids if watch.collected_ids is not None else [item.nodeid for item in items]
            self.suite = (suite_id(ids), len(set(ids)))

    def after_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        if when == "setup" and self.shard_path is not None:
            self.ran.add(report.nodeid)
        if report.outcome != "passed" and self._judged:
            cassette = self._replay.cassette_path(item)
            claimed = str(cassette) in self._replay.owners
            self.usage.protect(cassette, missing=claimed and report.failed and not cassette.is_file())

    def to_wire(self, session: pytest.Session | None) -> dict[str, Any]:
        self.usage.use(self._replay.owners)
        data: dict[str, Any] = {"cassettes": self.usage.to_wire()}
        if self.shard_path is not None:
            data["shard"] = {"ran": sorted(self.ran), "suite": list(self.suite) if self.suite else None}
        return data

    def merge(self, data: Mapping[str, Any], *, died: bool) -> None:
        self.usage.merge(data.get("cassettes", {}))
        shard = data.get("shard") or {}
        self.ran.update(shard.get("ran", ()))
        if shard.get("suite") and self.suite is None:
            self.suite = (str(shard["suite"][0]), int(shard["suite"][1]))

    # -- end of session -----------------------------------------------------------------------------------

    def finish(self, session: pytest.Session | None) -> tuple[pytest.ExitCode, ...]:
        """Write the shard report; find the unused cassettes and tapes of a whole run (they fail it)."""
        if self.is_worker or not self._judged:
            return ()
        self.usage.use(self._replay.owners)
        if self.shard_path is not None:
            self._write_shard_report(session)
        if not self._snapshots.selected_whole_suite(session):
            return ()
        self.unused = self.usage.unused()
        self.renames = self.usage.rename_hints(self.unused)
        if self.unused and self.prune:
            self.usage.delete(self.unused)
            self.deleted = True
            return ()
        return (pytest.ExitCode.OK,) if self.unused and not self.warn_unused else ()

    def _write_shard_report(self, session: pytest.Session | None) -> None:
        assert self.shard_path is not None
        rootdir = self.usage.rootdir
        snapshots = self._snapshots.snapshots
        suite, tests = self.suite or (suite_id(()), 0)
        document = {
            "format": FORMAT,
            "plugin_version": plugin_version(),
            "suite": {"sha256": suite, "tests": tests},
            "ran": sorted(self.ran),
            "narrowed": not self._snapshots.selected_whole_suite(session, removed_ok=True),
            "snapshots": {"used": relative_paths(rootdir, snapshots.used),
                          "roots": relative_paths(rootdir, snapshots.roots),
                          "protected": relative_paths(rootdir, snapshots.protected)},
            "cassettes": {"cassette_dir": self.usage.cassette_dir, **self.usage.to_wire()},
            "review": self._review.review.to_wire(outcomes=True) if self._review is not None else None,
        }
        write_text_atomic(self.shard_path, json.dumps(document, indent=1, sort_keys=True) + "\n")
        self.wrote = self.shard_path

    def summary_lines(self, stats: Mapping[str, list[Any]]) -> list[str]:
        lines: list[str] = []
        if self.unused:
            count = len(self.unused)
            verb = "deleted" if self.deleted else "unused"
            lines += render_message(
                f"agentloom: {count} cassette file{'s' if count != 1 else ''} {verb} (cassettes and tool tapes no "
                "test used):", details=[f"  {_relative(path)}" for path in self.unused],
                hint=None if self.deleted else "delete them, or run: pytest --agentloom-prune-cassettes",
            ).splitlines()
            if self.renames and not self.deleted:
                lines += ["agentloom: a test that failed with no cassette may be a renamed one; to keep its "
                          "recording, run:", *self.renames]
            if not self.deleted and not self.warn_unused:
                lines.append("(unused cassettes fail the run; --agentloom-warn-unused-cassettes only reports them)")
        if self.wrote is not None:
            lines.append(f"agentloom: wrote the shard report {_relative(self.wrote)}")
        return lines


def _relative(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
