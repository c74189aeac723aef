"""Snapshots as a feature of the session: which files the run used, created, updated, and left unused.

The unused report needs to know whether the whole suite ran, so this feature also keeps what narrowed the
run (deselection, collection errors, tests whose body did not run) and sends it from each xdist worker.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ...errors import render_message
from .._feature import NO_BODY_OPTIONS, Feature
from .._selection import SelectionWatch
from .._settings.option_table import read_setting
from .compare import SnapshotSession, sanitize
from .shape import FORMAT_VERSION

__all__ = ["SnapshotFeature", "module_name"]


class SnapshotFeature(Feature):
    """The session's snapshot files, and the "was the whole suite selected?" question they need."""

    def __init__(self, config: pytest.Config, snapshot_dir: Callable[[pytest.Item], str], *,
                 judged: bool, recording: bool = False) -> None:
        self.config = config
        self._snapshot_dir = snapshot_dir  # a test's snapshot_dir setting (from its markers: see ._test_settings)
        #: (snapshot_dir setting, test file) -> the snapshot root (as text) and the module's folder in it
        self._folders: dict[tuple[str, Path], tuple[str, Path]] = {}
        self._judged = judged  # live and drift sessions judge no committed snapshot
        self.update = bool(read_setting(config, "update_snapshots"))
        self.warn_unused = bool(read_setting(config, "warn_unused_snapshots"))
        # a recording session writes the snapshots it lacks: the test then passes, and its recording is kept
        create = recording or bool(read_setting(config, "create_snapshots"))
        self.snapshots = SnapshotSession(update=self.update, create=create, recording=recording)
        self.is_worker = hasattr(config, "workerinput")
        self.deselected_count = 0
        self.watch = SelectionWatch()  # items any plugin dropped in pytest_collection_modifyitems
        self.collection_errors = 0
        self.set_up: set[str] = set()  # node ids whose setup phase happened in this process
        self.bodies_ran: set[str] = set()  # node ids whose test body ran (a "call" phase)
        self.not_set_up: set[str] = set()  # node ids whose setup failed or skipped (their snapshots are kept)
        self.narrowed_workers = 0  # workers that ran less than their share, or died
        self.narrowed_beyond_removal = 0  # of those, the ones narrowed by more than dropped items
        self.unused: list[Path] = []  # set at the end of the session (see finish)
        self.deleted = False

    def location(self, item: pytest.Item, snapshot_dir: str | None = None) -> tuple[Path, str]:
        """A test's snapshot folder (``<dir>/<module>``) and file stem (``<test>[<param>]``); ``snapshot_dir`` is
        its setting, when the caller has it. Its root is noted for the unused report.

        Raises :class:`~pytest_agentloom.errors.MarkerError` (a ``ValueError``) when the test's marker is bad.
        """
        setting = self._snapshot_dir(item) if snapshot_dir is None else snapshot_dir
        root, module_folder = self._folder(setting, item.path)
        self.snapshots.roots.add(root)
        parts = item.nodeid.split("::")[1:]
        return module_folder, sanitize(".".join(parts) or item.name)

    def _folder(self, setting: str, test_file: Path) -> tuple[str, Path]:
        """The snapshot root (as text) and the test module's folder in it, worked out once per test file and
        setting: the rows of a table share both."""
        known = self._folders.get((setting, test_file))
        if known is None:
            folder = Path(setting)
            root = folder if folder.is_absolute() else test_file.parent / folder
            known = self._folders[setting, test_file] = (str(root), root / module_name(test_file))
        return known

    def configure(self, config: pytest.Config) -> None:
        config.pluginmanager.register(self.watch, "agentloom-selection")

    def deselected(self, count: int) -> None:
        self.deselected_count += count

    def collected(self, items: list[pytest.Item], errors: int) -> None:
        """Note collection errors, and the default snapshot folder of every folder holding tests.

        A folder whose tests no longer take snapshots still has its old files checked for the unused report.
        The snapshots of a test module that exists but was not collected (``--ignore``, ``collect_ignore``)
        are kept out of it: nothing is known about them.
        """
        self.collection_errors = errors
        folder = Path(os.fspath(read_setting(self.config, "snapshot_dir")))
        test_dirs: dict[Path, set[Path]] = {}  # snapshot root -> the folders of the tests that use it
        modules: set[Path] = set()
        # the test files collected before any plugin dropped items: a shard judges no other shard's module
        for path in self.watch.collected_paths | {item.path for item in items}:
            root = folder if folder.is_absolute() else path.parent / folder
            test_dirs.setdefault(root, set()).add(path.parent)
            modules.add(root / module_name(path))
        for root, dirs in test_dirs.items():
            if not root.is_dir():
                continue
            self.snapshots.roots.add(str(root))
            for module_dir in sorted(root.iterdir()):
                if module_dir.is_dir() and module_dir not in modules and _has_test_file(dirs, module_dir.name):
                    self.snapshots.protect(module_dir, folder=True)

    def after_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        """Remember which tests ran their body; keep a failed or skipped test's snapshots out of the unused
        report."""
        if when == "call":
            self.bodies_ran.add(report.nodeid)
        elif when == "setup":
            self.set_up.add(report.nodeid)
            if not report.passed:
                self.not_set_up.add(report.nodeid)
        if report.outcome != "passed":
            try:
                folder, name = self.location(item)
            except ValueError:
                return
            self.snapshots.protect(folder / name)

    # -- end of session -----------------------------------------------------------------------------------

    def selected_whole_suite(self, session: pytest.Session | None = None, *, removed_ok: bool = False) -> bool:
        """True when nothing narrowed the run: no -k/-m, no deselection, no node ids or files, no --lf,
        no option that runs no test body (--collect-only, --setup-plan, --setup-only, --fixtures, ...),
        no item dropped by a plugin (pytest-shard, a conftest's filter: see :mod:`.._selection`),
        and every selected test ran (no -x/--maxfail stop, no interruption).

        ``removed_ok``: whether this session ran all of *its share*, the items a plugin (a shard's) kept: its
        shard report then counts towards a whole suite, once ``agentloom combine`` has every shard's.
        """
        option = self.config.option
        if getattr(option, "keyword", "") or getattr(option, "markexpr", ""):
            return False
        if any(getattr(option, name, False) for name in NO_BODY_OPTIONS) or not self.ran_every_body(session):
            return False
        if session is not None and _stopped_early(session):
            return False
        if getattr(option, "lf", False) or getattr(option, "stepwise", False) or getattr(option, "failedfirst", False):
            return False
        if self.collection_errors or (not removed_ok and (self.deselected_count or self.watch.removed)):
            return False
        for arg in self.config.args:
            if "::" in arg or not Path(self.config.invocation_params.dir, arg).is_dir():
                return False
        return not (self.narrowed_workers if not removed_ok else self.narrowed_beyond_removal)

    def ran_every_body(self, session: pytest.Session | None) -> bool:
        """Whether every test set up here went on to run its body (unless its setup failed or skipped), and,
        outside an xdist worker, whether every collected test was set up.

        Options that run no test body are not all known in advance (plugins add their own): a test that
        reached neither its call nor a failed setup means this session cannot judge snapshots. An xdist
        worker runs only its share of the collected tests, so it answers for the tests it set up; the
        controller collects none and merges the workers' answers.
        """
        if any(nodeid not in self.bodies_ran and nodeid not in self.not_set_up for nodeid in self.set_up):
            return False
        items = session.items if session is not None and not self.is_worker else []
        return all(item.nodeid in self.set_up for item in items)

    def to_wire(self, session: pytest.Session | None) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.snapshots.to_wire())
        stopped = session is not None and bool(session.shouldfail or session.shouldstop)
        beyond_removal = self.collection_errors or stopped or not self.ran_every_body(session)
        data["narrowed"] = bool(beyond_removal or self.deselected_count or self.watch.removed)
        data["narrowed_beyond_removal"] = bool(beyond_removal)
        return data

    def merge(self, data: Mapping[str, Any], *, died: bool) -> None:
        self.snapshots.merge(dict(data))
        if data.get("narrowed"):
            self.narrowed_workers += 1
        if died or data.get("narrowed_beyond_removal"):
            self.narrowed_beyond_removal += 1

    def finish(self, session: pytest.Session | None) -> tuple[pytest.ExitCode, ...]:
        """Find the unused snapshot files (deleting them under the update flag); they fail a full run.

        Like syrupy, unused snapshots fail a full run, unless ``--agentloom-warn-unused-snapshots``.
        """
        return (pytest.ExitCode.OK,) if self._fails(session) else ()

    def _fails(self, session: pytest.Session | None) -> bool:
        if self.is_worker or not self._judged:  # live/drift: no committed snapshot judged
            return False
        if self.snapshots.clashes:  # two tests on two xdist workers used one file: fail, whatever was selected
            return True
        if not self.selected_whole_suite(session):
            return False
        self.unused = self.snapshots.unused()
        if self.unused and self.update:
            for path in self.unused:
                path.unlink(missing_ok=True)
                if path.parent.is_dir() and not any(path.parent.iterdir()):
                    path.parent.rmdir()  # the folder of a test module that is gone
            self.deleted = True
            return False
        return bool(self.unused) and not self.warn_unused

    def summary_lines(self, stats: Mapping[str, list[Any]]) -> list[str]:
        lines = []
        if self.snapshots.clashes:
            lines += render_message(
                "agentloom: FileNameClashError: tests on different xdist workers used the same snapshot file (it "
                "holds whichever wrote last):", details=[f"  {clash}" for clash in sorted(self.snapshots.clashes)],
                hint="give one of them another parameter id, snapshot name or snapshot_dir.").splitlines()
        for verb, paths in (("created", self.snapshots.created), ("updated", self.snapshots.updated)):
            if paths:
                lines.append(f"agentloom: {len(paths)} snapshot{'s' if len(paths) != 1 else ''} {verb}:")
                lines += [f"  {_relative(Path(path))}" for path in sorted(paths)]
        if self.snapshots.migrated:
            count = len(self.snapshots.migrated)
            lines.append(f"agentloom: {count} snapshot{'s' if count != 1 else ''} rewritten in format_version "
                         f"{FORMAT_VERSION} (each output stored once; review and commit them):")
            lines += [f"  {_relative(Path(path))}" for path in sorted(self.snapshots.migrated)]
        if self.unused:
            verb = "deleted" if self.deleted else "unused"
            lines += render_message(
                f"agentloom: {len(self.unused)} snapshot file{'s' if len(self.unused) != 1 else ''} {verb}:",
                details=[f"  {_relative(path)}" for path in self.unused],
                hint=None if self.deleted else "delete them, or run: pytest --agentloom-update-snapshots",
            ).splitlines()
            if not self.deleted and not self.warn_unused:
                lines.append("(unused snapshots fail the run; --agentloom-warn-unused-snapshots only reports them)")
        return lines


def module_name(path: Path) -> str:
    """The snapshot folder name of a test file: test_x.py and test_x.agentloom.yaml -> test_x."""
    return sanitize(path.name.split(".")[0])


def _has_test_file(folders: set[Path], module: str) -> bool:
    """Whether one of ``folders`` holds a test file (.py or YAML table) whose snapshot folder is ``module``."""
    return any(
        path.suffix in (".py", ".yaml", ".yml") and module_name(path) == module and path.is_file()
        for folder in folders for path in folder.iterdir()
    )


def _stopped_early(session: pytest.Session) -> bool:
    """-x/--maxfail, an interruption or an internal error: some selected tests may not have run."""
    status = getattr(session, "exitstatus", pytest.ExitCode.OK)
    return bool(session.shouldfail or session.shouldstop) or status not in (
        pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


def _relative(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
