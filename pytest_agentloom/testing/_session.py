"""State the plugin keeps for one pytest session, under ``config.stash[SESSION_KEY]``.

The hooks in :mod:`pytest_agentloom.plugin` stay a few lines each and call the
methods here. Nothing in this class needs a running test to be exercised.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._live.repetitions import REPETITION_KEY, Plan, RepetitionLog, repetition_plan
from ._review.review import Review, ReviewSettings
from ._settings.option_table import marker_defaults, read_setting
from ._snapshots.compare import SnapshotOptions, SnapshotSession, sanitize
from ._test_cassette import ReplaySettings, ReplaySummary, TestCassette

if TYPE_CHECKING:
    from ._harness import AgentloomHarness
    from ._live.drift import Drift
    from ._review.review import Observer

__all__ = ["CASSETTE_KEY", "SESSION_KEY", "AgentloomSession"]

WIRE_KEY = "agentloom_snapshots"


class AgentloomSession:
    """Settings, the snapshot bookkeeping and the "was the whole suite selected?" question."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._known_settings: dict[str, tuple[Any, str]] = {}  # command line and ini: read once (see setting)
        self._unmarked_snapshot_options: SnapshotOptions | None = None
        #: merged markers by the ids of the marks merged, with those marks (see merged_markers)
        self._merged: dict[tuple[int, ...], _Marked] = {}
        self.update_snapshots = bool(read_setting(config, "update_snapshots"))
        self.warn_unused = bool(read_setting(config, "warn_unused_snapshots"))
        self.scenario_glob = str(read_setting(config, "scenario_glob"))
        self.snapshots = SnapshotSession(update=self.update_snapshots,
                                         create=bool(read_setting(config, "create_snapshots")))
        self.deselected = 0
        self.collection_errors = 0
        self.set_up: set[str] = set()  # node ids whose setup phase happened in this process
        self.bodies_ran: set[str] = set()  # node ids whose test body ran (a "call" phase)
        self.not_set_up: set[str] = set()  # node ids whose setup failed or skipped (their snapshots are kept)
        self.worker_reports: list[dict[str, Any]] = []
        self.is_worker = hasattr(config, "workerinput")
        self.unused: list[Path] = []  # set at the end of the session (see finish)
        self.deleted = False
        self.replay = ReplaySettings.from_config(config)  # cassettes: folder and record mode (refused under CI)
        review = ReviewSettings.from_config(config)  # workflow coverage and the review report, when asked for
        self.review = Review(review, Path(config.rootpath)) if review.enabled else None
        self.review_written: list[Path] = []
        self.drift = _drift(config, self.replay)  # --agentloom-drift: each recorded test replayed, then live
        #: what each test's repetitions did, in a live session (see :mod:`._live.repetitions`)
        self.repetitions = RepetitionLog() if self.live else None
        #: whether anything observes the harness's runs (see observer); none does in most sessions
        self._observed = any(log is not None for log in (self.review, self.repetitions, self.drift))

    @property
    def live(self) -> bool:
        """``--agentloom-live``: tests call live providers, keep no cassette and compare no snapshot."""
        return self.replay.live.live

    # -- per test -----------------------------------------------------------------------------------------

    def defaults(self, item: pytest.Item) -> dict[str, Any]:
        """The merged ``agentloom`` markers of ``item`` (raises MarkerError on a bad argument), the caller's own."""
        return _own_copy(self.merged_markers(item))

    def merged_markers(self, item: pytest.Item) -> dict[str, Any]:
        """The merged ``agentloom`` markers of ``item``, shared: callers must not change it (see :meth:`defaults`)."""
        return self._marked(item).merged

    def _marked(self, item: pytest.Item) -> _Marked:
        """The merge of ``item``'s ``agentloom`` markers, and the settings the harness reads from it.

        Setup checks them and the fixture uses them, for every row of a table, whose rows share their
        function's mark objects: so the merge is kept per *sequence of mark objects* (the key holds their
        ids, the entry holds the marks themselves, so no id is reused while it is kept). A row's own marks
        (``pytest.param(marks=...)``) or a mark a fixture adds (``add_marker``) make another sequence,
        merged on its own. A bad marker raises each time, naming the test it is on.
        """
        marks = tuple(item.iter_markers("agentloom"))
        key = tuple(map(id, marks))
        known = self._merged.get(key)
        if known is None:
            if len(self._merged) >= _MAX_MERGED:
                self._merged.clear()
            # no marks, nothing to merge: and merging would import the engine's models for a session of
            # tests that never use the plugin
            merged = marker_defaults(marks, where=item.nodeid) if marks else {"config": {}}
            known = self._merged[key] = _Marked(marks, merged)
        return known

    def _settings(self, marked: _Marked) -> _MarkedSettings:
        """What a harness reads from the markers and the command line or ini, worked out once per merge (the
        command line and ini do not change while tests run; see :meth:`setting`)."""
        if marked.settings is None:
            merged = marked.merged
            marked.settings = _MarkedSettings(
                snapshot_dir=os.fspath(self.setting("snapshot_dir", merged)), matching=self.matching(merged),
                snapshot_options=self.snapshot_options(merged),
                missing_template_keys=str(self.setting("missing_template_keys", merged)),
            )
        return marked.settings

    def setting(self, name: str, defaults: dict[str, Any]) -> Any:
        """A setting of one test (command line, then its markers' ``defaults``, then ini), for the harness."""
        return read_setting(self.config, name, defaults, known=self._known_settings)

    def snapshot_location(self, item: pytest.Item) -> tuple[Path, str]:
        """This test's snapshot folder (``<dir>/<module>``) and file stem (``<test>[<param>]``)."""
        return self._snapshot_location(item, self._settings(self._marked(item)).snapshot_dir)

    def _snapshot_location(self, item: pytest.Item, setting: str) -> tuple[Path, str]:
        root, module_folder = _snapshot_folder(setting, item.path)
        self.snapshots.roots.add(root)
        parts = item.nodeid.split("::")[1:]
        return module_folder, sanitize(".".join(parts) or item.name)

    def harness(self, item: pytest.Item, tmp_path: Path, tools: Any = None, *,
                folder_exists: bool = True) -> AgentloomHarness:
        marked = self._marked(item)
        settings = self._settings(marked)
        defaults = _own_copy(marked.merged)
        if tools:
            from ..tools._registry import tools_by_name

            defaults["tools"] = {**tools_by_name(tools), **defaults.get("tools", {})}
        snapshot_dir, snapshot_name = self._snapshot_location(item, settings.snapshot_dir)
        replay, snapshots = self.replay, self.snapshots
        if self.drift is not None and self.drift.is_live(item.nodeid):  # the live side writes under DIR only
            replay, snapshots = self.drift.live_replay, self.drift.live_snapshots
            snapshot_dir = self.drift.snapshot_dir(snapshot_dir)
        cassette = item.stash[CASSETTE_KEY] = TestCassette(replay, item, matching=settings.matching,
                                                           repetition=item.stash.get(REPETITION_KEY, None))
        from ._harness import AgentloomHarness

        harness = item.stash[HARNESS_KEY] = AgentloomHarness(
            nodeid=item.nodeid, test_dir=item.path.parent, tmp_path=tmp_path, snapshot_dir=snapshot_dir,
            snapshot_name=snapshot_name, snapshots=snapshots, defaults=defaults, cassette=cassette,
            observer=self.observer(item.nodeid) if self._observed else None,
            snapshot_options=settings.snapshot_options, missing_template_keys=settings.missing_template_keys,
            live=self.live, hold_records=not folder_exists,
        )
        return harness

    def observer(self, nodeid: str) -> Observer | None:
        """What the harness tells of each finished run: workflow coverage, in a live session the repetitions'
        summary, in a drift check the facts of each side (each only when collected)."""
        review = self.review if self.drift is None or self.drift.is_live(nodeid) else None  # drift: live side only
        observers = [log.observer(nodeid) for log in (review, self.repetitions, self.drift) if log is not None]
        if len(observers) < 2:
            return observers[0] if observers else None

        def observe(*run: Any) -> None:
            for each in observers:
                each(*run)

        return observe

    def repetition_plan(self, item: pytest.Item) -> Plan | None:
        """How often a test of a live session runs; ``None`` for a test that is no agentloom test, or whose
        marker is bad (pytest then runs it once and its setup reports the marker's error)."""
        if not self.live or "agentloom" not in getattr(item, "fixturenames", ()):
            return None
        if any(getattr(self.config.option, name, False) for name in _NO_BODY_OPTIONS):
            return None  # --setup-only, --setup-plan...: no body runs, so nothing to repeat
        try:
            return repetition_plan(self.config, self.defaults(item))
        except ValueError:  # MarkerError included
            return None

    def snapshot_options(self, defaults: dict[str, Any]) -> SnapshotOptions:
        """A test's snapshot defaults: marker, then ini (see :mod:`._settings.option_table`), ``-vv`` for diffs.

        The same for every test whose markers set none of them (worked out once for those).
        """
        if any(key in defaults for key in _SNAPSHOT_KEYS):
            return self._snapshot_options(defaults)
        if self._unmarked_snapshot_options is None:
            self._unmarked_snapshot_options = self._snapshot_options(defaults)
        return self._unmarked_snapshot_options

    def _snapshot_options(self, defaults: dict[str, Any]) -> SnapshotOptions:
        matchers = self.setting("snapshot_matchers", defaults)
        if not isinstance(matchers, dict) and matchers:  # ini lines (none: no matchers, and no import for them)
            from ._snapshots.volatile import matchers_from_lines

            matchers = matchers_from_lines(matchers, "ini agentloom_snapshot_matchers")
        return SnapshotOptions(
            requests=bool(self.setting("snapshot_requests", defaults)),
            exclude=tuple(self.setting("snapshot_exclude", defaults)), matchers=dict(matchers),
            verbose=self.config.get_verbosity(),
        )

    def matching(self, defaults: dict[str, Any]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        """A test's cassette matching additions: body paths to ignore and extra matchers (marker, then ini)."""
        ignore = tuple(self.setting("cassette_ignore", defaults))
        return ignore, tuple(self.setting("cassette_matchers", defaults))

    def after_report(self, item: pytest.Item, when: str, report: pytest.TestReport) -> None:
        """Each phase's report (setup, call, teardown) of every test, in order: what the
        ``pytest_runtest_makereport`` wrapper does after pytest made it.

        The call's report gets the cassette's and the replies' checks (which may fail it); a failed or skipped
        phase keeps the test's records and snapshots; the drift check notes the report after those checks;
        teardown drops the harness. Most phases need none of it but the bookkeeping: a cassette that no run
        opened has nothing to finish (unless a judge call left verdicts to write), a harness that watched no
        scripted provider has no unused replies; this runs three times for each row of a table.
        """
        self.note_report(report)
        stash = item.stash
        harness = stash.get(HARNESS_KEY, None)
        if when == "call":
            cassette = stash.get(CASSETTE_KEY, None)
            if cassette is not None and (cassette.session is not None
                                         or (harness is not None and harness.has_verdict_book)):
                self.finish_cassette(item, report)  # nothing to finish for a cassette no run opened
            if harness is not None and harness.has_scripted:
                self.finish_replies(item, report)
        if report.outcome != "passed":  # failed or skipped
            self.test_did_not_pass(item)
        if self.drift is not None:  # after the cassette's and replies' checks, which may fail the test
            self.drift.note_report(item, report)
        if when == "teardown":  # after a failed teardown has kept the test's run records
            self.forget(item)

    def finish_replies(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """After a test's call that passed: scripted replies no request used fail it (see the harness)."""
        harness = item.stash.get(HARNESS_KEY, None)
        if harness is None or not report.passed:
            return
        failure = harness.unused_replies_message()
        if failure is not None:
            report.outcome = "failed"
            report.longrepr = failure

    def forget(self, item: pytest.Item) -> None:
        """After a test's teardown: drop its harness and cassette, which hold every result of its runs.

        Items live until the session ends, so what their stash holds adds up: a 1,000-row table kept
        1,000 harnesses with their results, traces and states, and every full garbage collection
        walked them all.
        """
        if HARNESS_KEY in item.stash:
            del item.stash[HARNESS_KEY]
        if CASSETTE_KEY in item.stash:
            item.stash[CASSETTE_KEY].release()  # a run after the call (in a fixture's teardown) opened it again
            del item.stash[CASSETTE_KEY]

    def finish_cassette(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """After a test's call: write its cassette when recording, flag it if stale, fail on unused interactions."""
        cassette = item.stash.get(CASSETTE_KEY, None)
        if cassette is None:
            return
        failure, properties = cassette.finish(passed=report.passed)
        harness = item.stash.get(HARNESS_KEY, None)
        if harness is not None:  # verdicts a recording refreshed are written with the cassette, or not at all
            harness.finish_verdicts(passed=report.passed)
        report.user_properties.extend(properties)
        if failure is not None:
            report.outcome = "failed"
            report.longrepr = failure

    def cassette_summary_lines(self, stats: dict[str, list[Any]]) -> list[str]:
        """Terminal summary lines about cassettes, read from every report (those of xdist workers too)."""
        summary = ReplaySummary()
        for reports in stats.values():
            for report in reports:
                summary.add_report(report)
        return summary.lines(self.drift.live_replay.mode if self.drift is not None else self.replay.mode)

    def collected(self, items: list[pytest.Item], *, errors: int) -> None:
        """Note collection errors, and the default snapshot folder of every folder holding tests.

        A folder whose tests no longer take snapshots still has its old files checked for the unused report.
        The snapshots of a test module that exists but was not collected (``--ignore``, ``collect_ignore``)
        are kept out of it: nothing is known about them.
        """
        self.collection_errors = errors
        folder = Path(os.fspath(read_setting(self.config, "snapshot_dir")))
        test_dirs: dict[Path, set[Path]] = {}  # snapshot root -> the folders of the tests that use it
        modules: set[Path] = set()
        for item in items:
            root = folder if folder.is_absolute() else item.path.parent / folder
            test_dirs.setdefault(root, set()).add(item.path.parent)
            modules.add(root / _module_name(item.path))
        for root, dirs in test_dirs.items():
            if not root.is_dir():
                continue
            self.snapshots.roots.add(str(root))
            for module_dir in sorted(root.iterdir()):
                if module_dir.is_dir() and module_dir not in modules and _has_test_file(dirs, module_dir.name):
                    self.snapshots.protect(module_dir, folder=True)

    def note_report(self, report: pytest.TestReport) -> None:
        """Remember which tests ran their body, to know whether the session may judge snapshots."""
        if report.when == "call":
            self.bodies_ran.add(report.nodeid)
        elif report.when == "setup":
            self.set_up.add(report.nodeid)
            if not report.passed:
                self.not_set_up.add(report.nodeid)

    def test_did_not_pass(self, item: pytest.Item) -> None:
        """Write a failed or skipped test's run records (held until then), keep its snapshots out of the
        unused report."""
        harness = item.stash.get(HARNESS_KEY, None)
        if harness is not None:
            harness.keep_records()
        try:
            folder, name = self.snapshot_location(item)
        except ValueError:
            return
        self.snapshots.protect(folder / name)

    def is_scenario_file(self, path: Path) -> bool:
        return fnmatch.fnmatch(path.name, self.scenario_glob)

    # -- end of session -----------------------------------------------------------------------------------

    def selected_whole_suite(self, session: pytest.Session | None = None) -> bool:
        """True when nothing narrowed the run: no -k/-m, no deselection, no node ids or files, no --lf,
        no option that runs no test body (--collect-only, --setup-plan, --setup-only, --fixtures, ...),
        and every selected test ran (no -x/--maxfail stop, no interruption).
        """
        option = self.config.option
        if getattr(option, "keyword", "") or getattr(option, "markexpr", ""):
            return False
        if any(getattr(option, name, False) for name in _NO_BODY_OPTIONS) or not self.ran_every_body(session):
            return False
        if session is not None and _stopped_early(session):
            return False
        if getattr(option, "lf", False) or getattr(option, "stepwise", False) or getattr(option, "failedfirst", False):
            return False
        if self.deselected or self.collection_errors:
            return False
        for arg in self.config.args:
            if "::" in arg or not Path(self.config.invocation_params.dir, arg).is_dir():
                return False
        return not any(report.get("narrowed") for report in self.worker_reports)

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

    def to_wire(self, session: pytest.Session | None = None) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.snapshots.to_wire())
        stopped = session is not None and bool(session.shouldfail or session.shouldstop)
        narrowed = self.deselected or self.collection_errors or stopped or not self.ran_every_body(session)
        data["narrowed"] = bool(narrowed)
        if self.review is not None:
            data["review"] = self.review.to_wire()
        if self.repetitions is not None:
            data["repetitions"] = self.repetitions.to_wire()
        if self.drift is not None:
            data["drift"] = self.drift.to_wire()
        return data

    def add_worker_report(self, data: dict[str, Any], *, died: bool = False) -> None:
        self.worker_reports.append(data)
        self.snapshots.merge(data)
        if self.review is not None:
            self.review.merge(data.get("review"), died=died)
        if self.repetitions is not None:
            self.repetitions.merge(data.get("repetitions"))
        if self.drift is not None:
            self.drift.merge(data.get("drift"), died=died)

    def finish_review(self) -> bool:
        """Write the coverage JSON and the report; True if the branch coverage is below the bar."""
        if self.review is None or self.is_worker:
            return False
        if self.drift is not None:
            self.review.drift = self.drift.results()  # the report gets a drift section
        self.review_written = self.review.write_files()
        return self.review.fails()

    def finish_drift(self) -> bool:
        """True when the drift check must fail the session: it compared nothing, or a worker died."""
        if self.drift is None or self.is_worker:
            return False
        return self.drift.nothing_compared() is not None or self.drift.partial

    def drift_lines(self) -> list[str]:
        if self.drift is None or self.is_worker:
            return []
        from ._live.drift_report import summary_lines

        return summary_lines(self.drift)

    def review_lines(self) -> list[str]:
        return self.review.summary_lines(self.review_written) if self.review is not None else []

    def repetition_lines(self) -> list[str]:
        return self.repetitions.summary_lines() if self.repetitions is not None else []

    def finish(self, session: pytest.Session | None = None) -> bool:
        """Find the unused snapshot files (deleting them under the update flag); True if they fail the run.

        Like syrupy, unused snapshots fail a full run, unless ``--agentloom-warn-unused-snapshots``.
        """
        if self.is_worker or self.live or self.drift is not None:  # live/drift: no committed snapshot judged
            return False
        if self.snapshots.clashes:  # two tests on two xdist workers used one file: fail, whatever was selected
            return True
        if not self.selected_whole_suite(session):
            return False
        self.unused = self.snapshots.unused()
        if self.unused and self.update_snapshots:
            for path in self.unused:
                path.unlink(missing_ok=True)
                if path.parent.is_dir() and not any(path.parent.iterdir()):
                    path.parent.rmdir()  # the folder of a test module that is gone
            self.deleted = True
            return False
        return bool(self.unused) and not self.warn_unused

    def summary_lines(self, unused: list[Path], deleted: bool) -> list[str]:
        lines = []
        if self.snapshots.clashes:
            lines.append("agentloom: FileNameClashError: tests on different xdist workers used the same snapshot "
                         "file (it holds whichever wrote last):")
            lines += [f"  {clash}" for clash in sorted(self.snapshots.clashes)]
            lines.append("How to fix: give one of them another parameter id, snapshot name or snapshot_dir.")
        for verb, paths in (("created", self.snapshots.created), ("updated", self.snapshots.updated)):
            if paths:
                lines.append(f"agentloom: {len(paths)} snapshot{'s' if len(paths) != 1 else ''} {verb}:")
                lines += [f"  {_relative(Path(path))}" for path in sorted(paths)]
        if unused:
            verb = "deleted" if deleted else "unused"
            lines.append(f"agentloom: {len(unused)} snapshot file{'s' if len(unused) != 1 else ''} {verb}:")
            lines += [f"  {_relative(path)}" for path in unused]
            if not deleted:
                lines.append("How to fix: delete them, or run: pytest --agentloom-update-snapshots")
                if not self.warn_unused:
                    lines.append("(unused snapshots fail the run; --agentloom-warn-unused-snapshots only reports them)")
        return lines


#: pytest options (their ``dest``) under which no test body runs: such a session never judges snapshots.
_NO_BODY_OPTIONS = ("collectonly", "setuponly", "setupplan", "showfixtures", "show_fixtures_per_test",
                    "markers", "version", "help")


def _drift(config: pytest.Config, replay: ReplaySettings) -> Drift | None:
    """The drift check's state when ``--agentloom-drift`` asks for it (its folder made and marked)."""
    if read_setting(config, "drift") in (None, ""):
        return None
    from ._live.drift import Drift, DriftSettings

    settings = DriftSettings.from_config(config, replay)
    if settings is None:
        return None
    settings.prepare()
    return Drift(settings, replay)


def _module_name(path: Path) -> str:
    """The snapshot folder name of a test file: test_x.py and test_x.agentloom.yaml -> test_x."""
    return sanitize(path.name.split(".")[0])


def _has_test_file(folders: set[Path], module: str) -> bool:
    """Whether one of ``folders`` holds a test file (.py or YAML table) whose snapshot folder is ``module``."""
    return any(
        path.suffix in (".py", ".yaml", ".yml") and _module_name(path) == module and path.is_file()
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


SESSION_KEY = pytest.StashKey[AgentloomSession]()
CASSETTE_KEY = pytest.StashKey[TestCassette]()  # the cassette of a test that used the agentloom fixture
#: the marker keywords :meth:`AgentloomSession.snapshot_options` reads
_SNAPSHOT_KEYS = ("snapshot_matchers", "snapshot_requests", "snapshot_exclude")


@functools.lru_cache(maxsize=1024)
def _snapshot_folder(setting: str, test_file: Path) -> tuple[str, Path]:
    """The snapshot root (as text) and the test module's folder in it, worked out once per test file and
    setting: the rows of a table share both."""
    folder = Path(setting)
    root = folder if folder.is_absolute() else test_file.parent / folder
    return str(root), root / _module_name(test_file)


HARNESS_KEY = pytest.StashKey["AgentloomHarness"]()  # the agentloom fixture's object of a test that used it


@dataclass
class _Marked:
    """The merge of one sequence of ``agentloom`` marks (kept with them: see ``AgentloomSession._marked``)."""

    marks: tuple[Any, ...]
    merged: dict[str, Any]
    settings: _MarkedSettings | None = None


@dataclass(frozen=True)
class _MarkedSettings:
    """The settings a harness reads that depend on the markers only (and the command line and ini)."""

    snapshot_dir: str
    matching: tuple[tuple[str, ...], tuple[Any, ...]]
    snapshot_options: SnapshotOptions
    missing_template_keys: str


def _own_copy(merged: dict[str, Any]) -> dict[str, Any]:
    """A merge of markers that the caller may add to, and add to its ``config`` (the kept merge is shared)."""
    return {**merged, "config": dict(merged["config"])}


#: how many merged marker sequences a session keeps (one per marked test function, in most suites)
_MAX_MERGED = 4096
