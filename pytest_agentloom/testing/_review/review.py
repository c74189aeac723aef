"""What a session keeps for workflow coverage and the review report, and what it does with it at the end.

Collection is on only when one of ``--agentloom-cov``, ``--agentloom-cov-fail-under``,
``--agentloom-cov-report`` or ``--agentloom-report`` (or its ini key) asks for it, so a
plain run pays nothing. Each run the ``agentloom`` fixture finishes reaches
:meth:`Review.observe`: it adds to the :class:`~.coverage.CoverageMap` and, for the
report, keeps the run's timeline under the test's node id. An xdist worker sends
both with its used snapshots; the controller adds them up, reads every test's
outcome from the reports it receives, and writes the files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import render_message
from .._settings.option_table import read_setting

if TYPE_CHECKING:
    import pytest

    from ...engine._format.model import Workflow
    from ...engine._outcome.result import WorkflowResult
    from .._live.drift_diff import TestDrift
    from .coverage import CoverageMap

__all__ = ["Review", "ReviewSettings"]

#: A finished run, as the harness reports it: the workflow, its result and the provider it ran with.
Observer = Callable[["Workflow", "WorkflowResult", Any, int], None]
_FAILURE_LINES = 60
_WORKER_LINE = re.compile(r"^\[gw\d+\] .* -- Python ")


@dataclass(frozen=True)
class ReviewSettings:
    """The coverage and report options, checked once at the start of the session."""

    show_table: bool
    fail_under: float | None
    json_path: Path | None
    report_path: Path | None
    #: a shard's report (``--agentloom-shard-report``) carries the runs and outcomes for ``agentloom combine``
    for_shard: bool = False

    @property
    def enabled(self) -> bool:
        return self.show_table or self.fail_under is not None or self.json_path is not None or self.keeps_runs

    @property
    def keeps_runs(self) -> bool:
        """Whether each test's runs and outcome are kept: the report shows them, a shard report carries them."""
        return self.report_path is not None or self.for_shard

    @classmethod
    def from_config(cls, config: pytest.Config) -> ReviewSettings:
        """Read the options; a bad value is a ``pytest.UsageError`` naming the option and the fix."""
        import pytest

        here = Path(config.invocation_params.dir)
        fail_under = _fail_under(read_setting(config, "cov_fail_under"))
        json_path = _json_target(read_setting(config, "cov_report"), here)
        report_path = _report_target(read_setting(config, "report"), here)
        problem = next((p for p in (fail_under, json_path, report_path) if isinstance(p, str)), None)
        problem = problem or _not_ours(json_path, "--agentloom-cov-report", '"format": "agentloom-coverage/')
        problem = problem or _not_ours(report_path, "--agentloom-report", "agentloom review report")
        if problem is not None:
            raise pytest.UsageError(problem)
        return cls(bool(read_setting(config, "cov")), fail_under, json_path, report_path,  # type: ignore[arg-type]
                   for_shard=read_setting(config, "shard_report") not in (None, ""))

    @classmethod
    def for_combine(cls, cov_report: str | None, report: str | None, fail_under: str | None,
                    here: Path) -> ReviewSettings:
        """``agentloom combine``'s options, checked as the pytest options are (a ``UsageError`` names the fix)."""
        from ...errors import UsageError

        limit = _fail_under(fail_under)
        json_path = _json_target(cov_report, here)
        report_path = _report_target(report, here)
        problem = next((p for p in (limit, json_path, report_path) if isinstance(p, str)), None)
        problem = problem or _not_ours(json_path, "--cov-report", '"format": "agentloom-coverage/')
        problem = problem or _not_ours(report_path, "--report", "agentloom review report")
        if problem is not None:
            raise UsageError(problem.replace("--agentloom-cov-fail-under", "--fail-under"))
        return cls(False, limit, json_path, report_path)  # type: ignore[arg-type]


class Review:
    """The session's coverage map, the runs of each test and each test's outcome."""

    def __init__(self, settings: ReviewSettings, rootdir: Path) -> None:
        from .coverage import CoverageMap  # imported only when asked for: it builds the engine's models

        self.settings = settings
        self.coverage: CoverageMap = CoverageMap(rootdir)
        self.runs: dict[str, list[dict[str, Any]]] = {}  # node id -> its runs' timelines (report only)
        self.outcomes: dict[str, dict[str, Any]] = {}  # node id -> outcome and failure text (controller)
        self.partial = False  # a worker died: its runs are missing
        self.drift: list[TestDrift] | None = None  # set at the end of a drift check: the report shows it
        self.repetitions: list[dict[str, str]] | None = None  # set at the end of a live session with repetitions

    def observer(self, nodeid: str) -> Observer:
        """The callback a test's harness calls after each run (with the gateway fallbacks seen before it)."""

        from .coverage import gateway_fallbacks
        from .timeline import run_timeline

        def observe(workflow: Workflow, result: WorkflowResult, provider: Any, fallbacks_before: int) -> None:
            fallbacks = gateway_fallbacks(provider)[fallbacks_before:]
            key = self.coverage.add_run(workflow, result, fallbacks)
            if self.settings.keeps_runs:
                self.runs.setdefault(nodeid, []).append(run_timeline(result, key))

        return observe

    def add_report(self, report: pytest.TestReport) -> None:
        """Keep a test's outcome: its call's, or an error or skip in setup or teardown."""
        if not self.settings.keeps_runs:
            return
        known = self.outcomes.get(report.nodeid)
        if report.when == "call" or (report.when == "setup" and not report.passed) or (
                report.when == "teardown" and report.failed):
            outcome = report.outcome if report.when == "call" or report.skipped else "error"
            if known is not None and known["outcome"] in ("failed", "error"):
                return
            text = _failure_text(report.longreprtext) if report.failed else ""
            self.outcomes[report.nodeid] = {"outcome": outcome, "failure": text}

    def outcome_listener(self) -> _OutcomeListener:
        """A plugin object whose ``pytest_runtest_logreport`` feeds :meth:`add_report` (on the controller)."""
        return _OutcomeListener(self)

    # -- xdist --------------------------------------------------------------------------------------------

    def to_wire(self, *, outcomes: bool = False) -> dict[str, Any]:
        """What a worker sends (``outcomes``: and what a shard report carries, the outcomes read here too)."""
        wire = {"coverage": self.coverage.to_wire(), "runs": self.runs}
        if outcomes:
            wire["outcomes"] = self.outcomes
        return wire

    def merge(self, wire: Mapping[str, Any] | None, *, died: bool = False) -> None:
        """Add a worker's or a shard's share (see :meth:`to_wire`): each test ran in one of them only."""
        if died:
            self.partial = True
        if not wire:
            return
        self.coverage.merge(wire.get("coverage", {}))
        for nodeid, runs in wire.get("runs", {}).items():
            self.runs.setdefault(nodeid, []).extend(runs)
        self.outcomes.update(wire.get("outcomes", {}))

    # -- the end of the session ---------------------------------------------------------------------------

    def fails(self) -> bool:
        limit = self.settings.fail_under
        return limit is not None and self.coverage.branch_percent() < limit

    def write_files(self) -> list[Path]:
        """Write the JSON map and the report (atomically); returns the files written."""
        from ..._core.files import write_text_atomic

        written = []
        if self.settings.json_path is not None:
            write_text_atomic(self.settings.json_path, self.coverage.to_json())
            written.append(self.settings.json_path)
        path = self.settings.report_path
        if path is not None:
            from .report import render_report

            write_text_atomic(path, render_report(self, html=path.suffix.lower() == ".html"))
            written.append(path)
        return written

    def summary_lines(self, written: Iterable[Path]) -> list[str]:
        lines: list[str] = []
        if self.settings.show_table or self.fails():
            lines.append("agentloom workflow coverage:")
            lines += ["  " + line for line in self.coverage.table_lines()]
        if self.partial:
            lines.append("agentloom: a worker died; its runs are missing from the coverage")
        if self.fails():
            lines.append(f"agentloom: FAIL branch coverage {self.coverage.branch_percent():g}% is below "
                         f"--agentloom-cov-fail-under={self.settings.fail_under:g}")
        lines += [f"agentloom: wrote {path}" for path in written]
        return lines


class _OutcomeListener:
    """Registered with pytest's plugin manager: hands each test report to the review."""

    def __init__(self, review: Review) -> None:
        self.review = review

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.review.add_report(report)


def _not_ours(path: Any, option: str, mark: str) -> str | None:
    """Refuse to replace a file that is not one this option wrote before: a typo must never cost a file."""
    if not isinstance(path, Path) or not path.exists():
        return None
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4096] if path.is_file() else ""
    except OSError:
        head = ""
    if mark in head:
        return None
    return (render_message(f"{option}: {path} exists and is not a report this option wrote; it is left as it is.",
                           hint=f"give {option} another path, or move that file away."))


def _failure_text(text: str) -> str:
    """A failure's last lines, without the ``[gw0] linux -- Python ...`` line xdist puts first (it names a
    worker, which changes from run to run)."""
    lines = text.splitlines()
    if lines and _WORKER_LINE.match(lines[0]):
        lines = lines[1:]
        while lines and not lines[0].strip():
            lines = lines[1:]
    return "\n".join(lines[-_FAILURE_LINES:])


def _fail_under(value: Any) -> float | str | None:
    if value in (None, ""):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if not 0 <= number <= 100:
        return (render_message(
                "--agentloom-cov-fail-under (ini agentloom_cov_fail_under) must be a percentage from 0 to 100, "
                f"got {value!r}.",
                hint="--agentloom-cov-fail-under=80"))
    return number


def _json_target(value: Any, here: Path) -> Path | str | None:
    if value in (None, ""):
        return None
    kind, sep, path = str(value).partition(":")
    if kind != "json" or not sep or not path:
        return (render_message(f"--agentloom-cov-report (ini agentloom_cov_report) takes json:PATH, got {value!r}.",
                               hint="--agentloom-cov-report=json:coverage-agentloom.json"))
    return here / Path(path).expanduser()


def _report_target(value: Any, here: Path) -> Path | str | None:
    if value in (None, ""):
        return None
    path = Path(str(value)).expanduser()
    if path.suffix.lower() not in (".html", ".md"):
        return (render_message(
                f"--agentloom-report (ini agentloom_report) writes PATH.html or PATH.md, got {value!r}.",
                hint="--agentloom-report=agentloom-report.html (or .md for a pull-request comment)"))
    return here / path
