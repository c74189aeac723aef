"""The drift check (``pytest --agentloom-drift=DIR``): each recorded test runs replayed, then live, and the
report says what changed between the two at the trace level.

1. **Start** (:meth:`DriftSettings.from_config`): the scratch folder ``DIR`` is
   refused when it lies inside the cassette folder or a snapshot folder, holds
   the cassette folder, or is a folder with files that a drift check did not
   make; the flags that record (``--agentloom-record``, ``--agentloom-record-mode``)
   and the other live mode (``--agentloom-live`` and its repetition cassettes) are
   refused with it; under ``CI=true`` the flag must be typed on the command line, as
   for recording.
2. **Collection** (:meth:`Drift.select`): only tests that use the ``agentloom``
   fixture and have a committed cassette are kept; the others are deselected
   and named in the summary.
3. **Each kept test runs twice** (:meth:`Drift.replay_first`): first replayed
   from its committed cassette (record mode ``none``, snapshots compared, and
   written only as the snapshot flags say, as in a plain replay; this run's
   reports are not logged), then live: record mode
   ``all`` into ``DIR/cassettes/...`` (kept when the test fails: that is the
   recording to study), snapshots written to
   ``DIR/snapshots/...`` (mirroring their committed paths). The live run is the
   test's result in pytest's output.
4. **Facts** of every run (:mod:`.trace_facts`) are kept per test and side; an
   xdist worker sends them to the controller, which compares them
   (:mod:`.drift_diff`) and prints the summary; ``--agentloom-report`` adds the
   drift to the review report.

Nothing under the cassette folder is ever opened for writing, nor a committed
snapshot folder unless a snapshot flag asks the replayed side to (its golden
snapshots, and the verdicts of its ``judge`` comparisons: :mod:`.drift_verdicts`):
the live side's paths all start with ``DIR``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._redaction.api_keys import redact_api_keys
from ...errors import HINT_PREFIX, DriftError, ErrorCode, RecordingRefusedError, render_message
from ...replay._modes import RecordMode
from .._settings.drift_outputs import OutputMethods
from .._settings.option_table import read_setting, read_setting_from
from .._snapshots.compare import DRIFT_VERDICT, SnapshotSession
from .._test_cassette import ReplaySettings, refuse_under_ci
from .drift_diff import VERDICTS, TestDrift, compare_test

if TYPE_CHECKING:
    import pytest

    from ...engine._format.model import Workflow
    from ...engine._outcome.result import WorkflowResult
    from .drift_verdicts import DriftVerdicts

__all__ = ["MARKER_FILE", "Drift", "DriftSettings"]

#: The file that marks a folder as a drift check's scratch folder (one a later check may write into again).
MARKER_FILE = ".agentloom-drift"
REPLAY, LIVE = "replay", "live"
_DRIFT_FLAG = ("--agentloom-drift",)
_REFUSED_WITH = ("record", "record_mode", "live", "record_repetitions", "replay_repetition")


FAIL_ON = ("never", "regression", "benign")


@dataclass(frozen=True)
class DriftSettings:
    """The scratch folder of a drift check, and what fails it, checked once at the start of the session."""

    folder: Path
    fail_on: str = "never"  # the mildest verdict that fails the session (never: only failing tests do)

    @classmethod
    def from_config(cls, config: pytest.Config, replay: ReplaySettings,
                    env: Mapping[str, str] | None = None) -> DriftSettings | None:
        """``None`` without ``--agentloom-drift``; a ``pytest.UsageError`` for a folder or flag it refuses."""
        import pytest

        value = read_setting(config, "drift")
        if value in (None, ""):
            return None
        refuse_under_ci(
            config, env, flags=_DRIFT_FLAG, error=RecordingRefusedError,
            headline="The drift check (--agentloom-drift) is refused under CI=true: the flag does not come from the "
                     "command line itself (addopts or PYTEST_ADDOPTS set it).",
            hint="remove the flag from addopts/PYTEST_ADDOPTS so CI replays, or, to call live providers in CI on "
                 "purpose, type it on the command line: pytest --agentloom-drift=DIR ... (or agentloom drift)")
        folder = (Path(config.invocation_params.dir) / Path(str(value)).expanduser()).resolve()
        problem = _conflicting_flags(config) or _folder_problem(folder, replay.cassette_dir.resolve(), config)
        if problem is not None:
            raise pytest.UsageError(str(DriftError(problem, code=ErrorCode.DRIFT_FOLDER_REFUSED)))
        return cls(folder, fail_on=_fail_on(config))

    def prepare(self) -> None:
        """Make the folder, mark it as ours and keep it out of version control (``.gitignore`` with ``*``)."""
        from ..._core.files import write_text_atomic

        self.folder.mkdir(parents=True, exist_ok=True)
        for name, text in ((MARKER_FILE, "a scratch folder of pytest --agentloom-drift; safe to delete\n"),
                           (".gitignore", "*\n")):
            if not (self.folder / name).is_file():
                write_text_atomic(self.folder / name, text)


def _fail_on(config: pytest.Config) -> str:
    """``--agentloom-drift-fail-on`` (or its ini key), checked; ``drift_outputs`` outside markers checked too."""
    import pytest

    from .._settings.drift_outputs import parse_methods

    value, source = read_setting_from(config, "drift_fail_on")
    mode = str(value or "never").strip().lower()
    if mode == "change":
        mode = "benign"
    if mode not in FAIL_ON:
        raise pytest.UsageError(render_message(
            f"{source} must be one of never, regression or benign (got {value!r}).",
            hint="e.g. --agentloom-drift-fail-on=regression: a test whose behaviour or an output beyond its "
                 "threshold moved fails the session; benign also fails on outputs within it."))
    outputs, source = read_setting_from(config, "drift_outputs")
    try:
        parse_methods(outputs, source)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return mode


def _conflicting_flags(config: pytest.Config) -> str | None:
    given = [name for name in _REFUSED_WITH if read_setting(config, name) not in (None, False, "", "none")]
    if not given:
        return None
    flags = ", ".join("--agentloom-" + name.replace("_", "-") for name in given)
    return render_message(
        f"--agentloom-drift cannot be combined with {flags}: the drift check runs each test replayed, then live, "
        "itself, and never writes a committed cassette.",
        hint="run the drift check alone; to adopt what it found, use agentloom drift --adopt TEST, or re-record "
             "in a separate run (pytest --agentloom-record).")


def _folder_problem(folder: Path, cassettes: Path, config: pytest.Config) -> str | None:
    hint = "give --agentloom-drift a folder of its own, e.g. --agentloom-drift=.agentloom/drift/run-1"
    if _inside(folder, cassettes) or _inside(cassettes, folder):
        return render_message(f"--agentloom-drift={folder} overlaps the cassette folder {cassettes}: live "
                              "recordings could replace committed cassettes.", hint=hint)
    snapshot_dir = Path(os.fspath(read_setting(config, "snapshot_dir")))
    if snapshot_dir.is_absolute() and (_inside(folder, snapshot_dir) or _inside(snapshot_dir, folder)):
        return render_message(f"--agentloom-drift={folder} overlaps the snapshot folder {snapshot_dir}.", hint=hint)
    if not snapshot_dir.is_absolute() and snapshot_dir.name in folder.parts:
        return render_message(f"--agentloom-drift={folder} lies inside a snapshot folder ({snapshot_dir.name}).",
                              hint=hint)
    if folder.exists() and not folder.is_dir():
        return render_message(f"--agentloom-drift={folder} is a file, not a folder.", hint=hint)
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MARKER_FILE).is_file():
        return render_message(f"--agentloom-drift={folder} holds files a drift check did not write; they are left "
                              "as they are.", hint=hint)
    return None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class Drift:
    """The facts of both sides of every compared test, and the live side's cassette and snapshot settings."""

    def __init__(self, settings: DriftSettings, replay: ReplaySettings) -> None:
        self.settings = settings
        self.rootdir = replay.rootdir
        self.live_replay = ReplaySettings(rootdir=replay.rootdir, cassette_dir=settings.folder / "cassettes",
                                          mode=RecordMode.ALL, owners=replay.owners, keep_failed=True)
        self.replay_cassettes = replay
        self.live_snapshots = SnapshotSession(update=True)
        self.phase: dict[str, str] = {}
        self.sides: dict[str, dict[str, dict[str, Any]]] = {}  # node id -> replay/live -> outcome, runs, ...
        self.compared: list[str] = []  # selected tests with a committed cassette
        self.not_compared: list[str] = []  # selected tests with no committed cassette
        self.partial = False  # a worker died: some tests' facts are missing
        self.methods: dict[str, dict[str, str]] = {}  # node id -> its output methods (plain data)
        #: node id -> its live runs still to compare by a model: replayed facts, live facts, provider, workflow
        self._to_score: dict[str, list[tuple[dict[str, Any], dict[str, Any], Any, Workflow]]] = {}
        #: the session's snapshots, which the replayed side compares (and writes under the snapshot flags)
        self.committed_snapshots: SnapshotSession | None = None
        self._snapshot_places: dict[str, tuple[Path, str]] = {}  # node id -> its committed snapshot folder, stem

    # -- collection and the two runs of a test --------------------------------------------------------------

    def select(self, items: list[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
        """The tests to compare (agentloom fixture and a committed cassette), and the rest."""
        keep, drop = [], []
        for item in items:
            uses_fixture = "agentloom" in getattr(item, "fixturenames", ())
            if uses_fixture and self.replay_cassettes.cassette_path(item).is_file():
                keep.append(item)
                self.compared.append(item.nodeid)
            else:
                drop.append(item)
                if uses_fixture:
                    self.not_compared.append(item.nodeid)
        return keep, drop

    def replay_first(self, item: pytest.Item) -> None:
        """Run ``item`` replayed, its reports not logged; the protocol that follows runs it live."""
        from ..._core.compat import run_protocol

        self.phase[item.nodeid] = REPLAY
        try:  # torn down to the test's own fixtures: those of its module, class and session stay up
            run_protocol(item, nextitem=_SameParents(item))
        finally:
            self.phase[item.nodeid] = LIVE

    def side(self, nodeid: str) -> dict[str, Any]:
        phase = self.phase.get(nodeid, LIVE)
        side = self.sides.setdefault(nodeid, {}).setdefault(phase, {"outcome": "not run", "runs": []})
        if phase == LIVE and nodeid in self.methods:
            side["output_methods"] = self.methods[nodeid]
        return side

    def compare_outputs_by(self, nodeid: str, methods: OutputMethods) -> None:
        """How this test's outputs are compared (its marker, else the ini or flag); kept with its live facts."""
        self.methods[nodeid] = methods.to_wire()

    def is_live(self, nodeid: str) -> bool:
        return self.phase.get(nodeid, LIVE) == LIVE

    def note_snapshot_place(self, nodeid: str, folder: Path, name: str) -> None:
        """Where the test's committed snapshots are (its replayed run's folder and file stem): its ``judge``
        comparisons' verdicts are kept beside them (:mod:`.drift_verdicts`)."""
        self._snapshot_places[nodeid] = (folder, name)

    def observer(self, nodeid: str) -> Callable[[Workflow, WorkflowResult, Any, int], None]:
        """The callback a test's harness calls after each run: it keeps the run's facts on the current side."""
        from .._workflow_key import workflow_key
        from .trace_facts import run_facts

        def observe(workflow: Workflow, result: WorkflowResult, provider: Any, fallbacks_before: int) -> None:
            facts, runs = run_facts(result, workflow_key(workflow, self.rootdir)), self.side(nodeid)["runs"]
            replayed = self.sides[nodeid].get(REPLAY, {}).get("runs", [])
            if self.is_live(nodeid) and len(runs) < len(replayed):  # the run it pairs with ran replayed before
                self._to_score.setdefault(nodeid, []).append((replayed[len(runs)], facts, provider, workflow))
            runs.append(facts)

        return observe

    def _ask_scores(self, item: pytest.Item) -> None:
        """The model calls of the ``embedding`` and ``judge`` comparisons of the test's live runs, kept in their
        facts (see :mod:`.output_scores`); asked once the test's call is over and its live cassette written."""
        from .._settings.drift_outputs import ASKING_METHODS, parse_methods
        from .output_scores import ask_scores

        pending = self._to_score.pop(item.nodeid, [])
        methods = parse_methods(self.methods.get(item.nodeid), "drift_outputs")
        if not any(method.kind in ASKING_METHODS for method in (methods.default, *dict(methods.per_step).values())):
            return
        session, kept = None, self._kept_verdicts(item.nodeid)
        try:
            for number, (old, new, provider, workflow) in enumerate(pending, start=1):
                if getattr(provider, "session", None) is not None:  # the test's cassette, closed by now
                    session = session or self._comparison_cassette(item)
                    provider = self._through(session, workflow)
                name = workflow.config.provider if workflow.config.provider != "mock" else None
                ask_scores(methods, old, new, provider, provider_name=name, run_id=f"{item.nodeid}#{number}",
                           kept=kept, run=number)
        finally:
            if session is not None:
                session.close(keep=True)

    def _kept_verdicts(self, nodeid: str) -> DriftVerdicts | None:
        """The test's judge verdict snapshots: the replayed side's beside its committed snapshots, the live side's
        under ``DIR/snapshots`` (``None`` when its replayed run told no snapshot folder)."""
        from .._snapshots.compare import SnapshotOptions
        from .._snapshots.per_test import TestSnapshots
        from .drift_verdicts import DriftVerdicts

        place = self._snapshot_places.get(nodeid)
        if place is None or self.committed_snapshots is None:
            return None
        folder, name = place
        replayed = TestSnapshots(nodeid, folder, name, self.committed_snapshots, SnapshotOptions())
        live = TestSnapshots(nodeid, self.snapshot_dir(folder), name, self.live_snapshots, SnapshotOptions())
        passed = self.sides.get(nodeid, {}).get(REPLAY, {}).get("outcome") == "passed"
        return DriftVerdicts(nodeid, replayed, live, replay_passed=passed)

    def _comparison_cassette(self, item: pytest.Item) -> Any:
        """Where the comparison calls are recorded: ``DIR/comparisons/<test file>/<test>.yaml``, beside the live
        cassettes and not among them, so that adopting a live recording never brings them into a committed
        cassette (whose plain replay would find them unused)."""
        from ...replay._cassette import CassetteConfig, CassetteSession

        relative = self.live_replay.cassette_path(item).relative_to(self.live_replay.cassette_dir)
        config = CassetteConfig(path=self.settings.folder / "comparisons" / relative, mode=RecordMode.ALL,
                                test_id=item.nodeid, root=self.rootdir)
        return CassetteSession(config).open()

    @staticmethod
    def _through(session: Any, workflow: Workflow) -> Any:
        from ...providers._factory import default_gateway

        session.add_run(workflow)
        return session.wrap(default_gateway(workflow.config))

    def snapshot_dir(self, committed: Path) -> Path:
        """Where the live side writes a snapshot folder: its committed path, under ``DIR/snapshots``."""
        try:
            relative = committed.resolve().relative_to(self.rootdir.resolve())
        except ValueError:
            relative = Path("_outside_rootdir", *committed.resolve().parts[1:])
        return self.settings.folder / "snapshots" / relative

    def note_report(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """Keep a side's outcome (and failure headline); after the live call, name a failed live provider."""
        side = self.side(item.nodeid)
        if report.when == "call" or (report.when == "setup" and not report.passed):
            side["outcome"] = report.outcome if report.when == "call" or report.skipped else "error"
            side["failure"] = _headline(report) if report.failed else ""
        if report.when == "call" and self.is_live(item.nodeid):
            self._ask_scores(item)
            side["snapshots"] = self._snapshot_states(item.nodeid)
            side["files"] = self._live_files(item)
            problems = [f"  step '{step}': {message}" for run in side["runs"]
                        for step, message in sorted(run.get("messages", {}).items())]
            if problems and report.failed:
                report.longrepr = "DriftError: " + str(_unavailable(item.nodeid, problems))
                side["failure"] = "live provider unavailable"

    def _live_files(self, item: pytest.Item) -> list[list[str]]:
        """What ``agentloom drift --adopt`` would copy for this test: ``[scratch path, committed path]`` pairs
        (relative to the scratch folder and the rootdir) of its live cassette, tool tape and changed snapshots."""
        from ...replay._tool_tape import tape_path

        live, committed = self.live_replay.cassette_path(item), self.replay_cassettes.cassette_path(item)
        pairs = [(live, committed), (tape_path(live), tape_path(committed))]
        scratch = self.settings.folder / "snapshots"
        for path_text, owner in sorted(self.live_snapshots.owners.items()):
            path = Path(path_text)
            if owner == item.nodeid and _inside(path, scratch):
                pairs.append((path, self.rootdir / path.relative_to(scratch)))
        files = []
        for source, target in pairs:
            try:
                shown = [source.relative_to(self.settings.folder).as_posix(),
                         target.resolve().relative_to(self.rootdir.resolve()).as_posix()]
            except ValueError:  # a cassette folder outside the rootdir: not adoptable (docs say so)
                continue
            if source.is_file():
                files.append(shown)
        return files

    def _snapshot_states(self, nodeid: str) -> dict[str, str]:
        """Each snapshot the live run wrote: ``same``, ``changed`` or ``new`` against the committed file."""
        scratch = self.settings.folder / "snapshots"
        states = {}
        for path_text, owner in sorted(self.live_snapshots.owners.items()):
            path = Path(path_text)
            if owner != nodeid or not _inside(path, scratch) or f".{DRIFT_VERDICT}." in path.name:
                continue  # a judge verdict's change is the output line's (it is adopted all the same)
            committed = self.rootdir / path.relative_to(scratch)
            shown = committed.relative_to(self.rootdir).as_posix()
            if not committed.is_file():
                states[shown] = "new"
            else:
                same = path.is_file() and path.read_bytes() == committed.read_bytes()
                states[shown] = "same" if same else "changed"
        return states

    # -- xdist and the end ----------------------------------------------------------------------------------

    def to_wire(self) -> dict[str, Any]:
        return {"sides": self.sides, "compared": self.compared, "not_compared": self.not_compared}

    def merge(self, wire: Mapping[str, Any] | None, *, died: bool = False) -> None:
        self.partial = self.partial or died
        if not wire:
            return
        for nodeid, sides in wire.get("sides", {}).items():
            self.sides.setdefault(nodeid, {}).update(sides)
        self.compared = sorted({*self.compared, *wire.get("compared", ())})
        self.not_compared = sorted({*self.not_compared, *wire.get("not_compared", ())})

    def results(self) -> list[TestDrift]:
        return [compare_test(nodeid, sides.get(REPLAY, {}), sides.get(LIVE, {}))
                for nodeid, sides in sorted(self.sides.items())]

    def failing(self) -> list[TestDrift]:
        """The tests whose verdict fails the session by ``--agentloom-drift-fail-on`` (none with ``never``)."""
        if self.settings.fail_on == "never":
            return []
        least = VERDICTS.index(self.settings.fail_on)
        return [result for result in self.results() if VERDICTS.index(result.verdict) >= least]

    def write_manifest(self) -> None:
        """``DIR/drift.json``: per compared test, how its live run ended, its verdict and its live files (what
        ``agentloom drift --adopt`` reads)."""
        from .adopt import write_manifest

        tests = {result.nodeid: {"outcome": result.live_outcome, "verdict": result.verdict,
                                 "files": self.sides[result.nodeid].get(LIVE, {}).get("files", [])}
                 for result in self.results()}
        if tests:
            write_manifest(self.settings.folder, self.rootdir.resolve(), tests)

    def nothing_compared(self) -> str | None:
        """The error text when no test was compared (none selected had a committed cassette), else ``None``."""
        if self.compared or self.sides:
            return None
        cassettes = self.replay_cassettes.cassette_dir
        return str(DriftError(render_message(
            f"The drift check has nothing to compare: no selected test has a committed cassette in {cassettes}.",
            details=[f"  no cassette: {nodeid}" for nodeid in self.not_compared[:10]],
            hint="record the tests once against live providers and commit the cassettes "
                 "(pytest --agentloom-record), then run the drift check again."),
            code=ErrorCode.DRIFT_NOTHING_TO_COMPARE))


def _unavailable(nodeid: str, problems: list[str]) -> DriftError:
    """The failure of a live run whose model calls got no answer, naming each step's provider problem."""
    explained = any(HINT_PREFIX in problem for problem in problems)  # a missing key says which to export
    return DriftError(render_message(
        f"The live run of {nodeid} got no answer from a provider.", details=problems,
        hint=None if explained else "check the provider's base URL variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, "
        "GOOGLE_GEMINI_BASE_URL, OLLAMA_HOST, AGENTLOOM_GENERIC_OPENAI_BASE_URL) points at a server that answers, "
        "and its API key variable is set; a replay needs neither."), code=ErrorCode.LIVE_PROVIDER_UNAVAILABLE)


class _SameParents:
    """What pytest's teardown reads of the next item (``listchain``): ``item``'s parents, so that tearing down
    after the replayed run ends only the test's own fixtures before it runs again live."""

    def __init__(self, item: pytest.Item) -> None:
        self._chain = item.listchain()[:-1]

    def listchain(self) -> list[Any]:
        return list(self._chain)


def _headline(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or report.longreprtext.strip().splitlines()[-1:] or [""]
    first = text if isinstance(text, str) else text[0]
    return redact_api_keys(first.splitlines()[0] if first else "")[:300]
