"""Repetitions of a live session: each agentloom test runs N times and passes on a pass rate.

Under ``--agentloom-live`` every test that uses the ``agentloom`` fixture (so scenario rows
and YAML-only tests too) goes through :func:`run_repetitions` instead of pytest's own
protocol: setup, call and teardown run once per repetition, with fresh function-scoped
fixtures each time (the fixtures of the module, class and session are kept between
repetitions), and pytest hears of one test with one aggregated report. The test passes when
at least ``min_pass_rate`` of its repetitions pass. A repetition whose setup fails or skips, or that
skips counts as a repetition that did not pass; when no repetition got past its setup, or every one
skipped, the test is reported as the first repetition was (an error or a skip).

What each repetition's runs did (termination reason, output, tokens, cost) reaches a
:class:`RepetitionLog` through the harness's observer, the way workflow coverage collects
runs; an xdist worker sends its log with its used snapshots and the controller merges them.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from ..._core.plain import to_plain
from ...errors import render_message
from .._settings.option_table import pass_rate, read_setting_from, repeat_count
from .._test_cassette import WRITTEN_PROPERTY, ReplaySettings
from .repetition_stats import RepetitionStats

if TYPE_CHECKING:
    from ...engine._format.model import Workflow
    from ...engine._outcome.result import WorkflowResult

__all__ = ["REPETITION_KEY", "Plan", "RepetitionLog", "kept_repetitions", "repetition_plan", "run_repetitions"]

_SHOWN_OUTPUTS = 5
_OUTPUT_WIDTH = 60


@dataclass(frozen=True)
class Plan:
    """How often a test runs and the fraction of its repetitions that must pass, with where each came from."""

    repeat: int
    min_pass_rate: float
    rate_from: str = "default"
    early_stop: bool = False  # stop once the outcome is decided (--agentloom-repeat-early-stop)

    @property
    def passes_needed(self) -> int:
        return max(1, math.ceil(self.min_pass_rate * self.repeat - 1e-9))

    def decided(self, outcomes: list[str]) -> str | None:
        """Why no further repetition can change the verdict (``None`` while one still can)."""
        passes, left = outcomes.count("passed"), self.repeat - len(outcomes)
        if not left:
            return None
        if passes >= self.passes_needed:
            return f"{passes} passes reach the {self.passes_needed} needed"
        if passes + left < self.passes_needed:
            return f"{passes} passes and {left} left cannot reach the {self.passes_needed} needed"
        return None


def repetition_plan(config: pytest.Config, marker: Mapping[str, Any]) -> Plan:
    """A test's plan: command line, then its ``agentloom`` marker, then ini, then 1 run at rate 1.0.

    Raises ``ValueError`` naming the flag, marker argument or ini key of a bad value.
    """
    repeat, repeat_from = read_setting_from(config, "repeat", marker)
    rate, rate_from = read_setting_from(config, "min_pass_rate", marker)
    return Plan(1 if repeat is None else repeat_count(repeat, repeat_from),
                1.0 if rate is None else pass_rate(rate, rate_from), rate_from,
                early_stop=bool(read_setting_from(config, "repeat_early_stop")[0]))


def kept_repetitions(replay: ReplaySettings, item: pytest.Item) -> int:
    """How many repetitions of ``item`` were kept (``<test>/1.yaml``, ``2.yaml``, ... with no gap)."""
    count = 0
    while replay.repetition_path(item, count + 1).is_file():
        count += 1
    return count


class RepetitionLog:
    """Per repeated test: each repetition's outcome and what its runs did, as plain data (sent by xdist workers)."""

    def __init__(self) -> None:
        self.tests: dict[str, dict[str, Any]] = {}
        self.current: dict[str, str] = {}  # node id -> the outcome so far of its repetition in progress

    def start(self, nodeid: str, plan: Plan) -> None:
        self.tests[nodeid] = {
            "repeat": plan.repeat, "min_pass_rate": plan.min_pass_rate, "rate_from": plan.rate_from,
            "outcomes": [], "reasons": {}, "outputs": {}, "runs": 0, "input_tokens": 0, "output_tokens": 0,
            "cost_usd": 0.0, "cassettes": [], "stopped_early": "",
        }

    def observer(self, nodeid: str) -> Callable[[Workflow, WorkflowResult, Any, int], None]:
        """The callback the test's harness calls after each run (the signature of the coverage observer)."""

        def observe(workflow: Workflow, result: WorkflowResult, provider: Any, fallbacks_before: int) -> None:
            entry = self.tests.get(nodeid)
            if entry is None:
                return
            entry["runs"] += 1
            _bump(entry["reasons"], result.reason.value)
            _bump(entry["outputs"], run_output(result))
            entry["input_tokens"] += result.usage["input_tokens"]
            entry["output_tokens"] += result.usage["output_tokens"]
            entry["cost_usd"] = round(entry["cost_usd"] + result.cost_usd, 10)

        return observe

    def end_repetition(self, nodeid: str, outcome: str, cassettes: list[str]) -> None:
        entry = self.tests[nodeid]
        entry["outcomes"].append(outcome)
        entry["cassettes"].extend(cassettes)

    def begin_repetition(self, nodeid: str) -> None:
        self.current[nodeid] = "passed"

    def hear(self, nodeid: str, report: pytest.TestReport) -> None:
        """A phase's report of the repetition in progress (its outcome so far, read when it may stop early)."""
        if nodeid in self.current and not report.passed and self.current[nodeid] != "failed":
            self.current[nodeid] = "failed" if report.failed else "skipped"

    def current_outcome(self, nodeid: str) -> str:
        return self.current.get(nodeid, "passed")

    def stop_early(self, nodeid: str, why: str) -> None:
        self.tests[nodeid]["stopped_early"] = why

    # -- xdist --------------------------------------------------------------------------------------------

    def to_wire(self) -> dict[str, Any]:
        return self.tests

    def merge(self, wire: Mapping[str, Any] | None) -> None:
        self.tests.update(wire or {})  # each test runs on one worker

    # -- the terminal summary -----------------------------------------------------------------------------

    def summary_lines(self) -> list[str]:
        if not self.tests:
            return []
        lines = ["agentloom live repetitions:"]
        for nodeid, entry in sorted(self.tests.items()):
            lines += _test_lines(nodeid, entry)
        return lines


def _test_lines(nodeid: str, entry: Mapping[str, Any]) -> list[str]:
    outcomes = entry["outcomes"]
    passes, done = outcomes.count("passed"), len(outcomes)
    rate = passes / done if done else 0.0
    plan = Plan(entry["repeat"], entry["min_pass_rate"])
    verdict = "passed" if passes >= plan.passes_needed else "FAILED"
    if done and outcomes.count("skipped") == done:
        verdict = "skipped"
    stopped = entry.get("stopped_early", "")
    if stopped:
        verdict += f" (stopped early after {done} of {plan.repeat}: {stopped})"
    elif done < plan.repeat:  # interrupted (Ctrl-C, a crash): the repetitions that did not run count as failed
        verdict += f" (interrupted after {done} of {plan.repeat})"
    lines = [f"  {nodeid}: {passes}/{plan.repeat} passed ({rate:.0%}; needs {plan.passes_needed}, "
             f"min pass rate {plan.min_pass_rate:g}): {verdict}"]
    if done:
        lines.append("    repetitions: " + " ".join(_mark(outcome) for outcome in outcomes))
        lines.append("    statistics: " + RepetitionStats.of(outcomes).line())
    lines.append(f"    termination reasons: {_counted(entry['reasons'], quote=False) or 'no run finished'}")
    if entry["outputs"]:
        lines.append(f"    outputs: {_counted(entry['outputs'], quote=True)}")
    tokens = entry["input_tokens"] + entry["output_tokens"]
    lines.append(f"    tokens: {tokens} (in {entry['input_tokens']}, out {entry['output_tokens']}), "
                 f"cost ${entry['cost_usd']:.6f}, over {entry['runs']} run{'s' if entry['runs'] != 1 else ''}")
    if entry["cassettes"]:
        lines.append("    cassettes: " + ", ".join(entry["cassettes"]))
    return lines


def _mark(outcome: str) -> str:
    return {"passed": ".", "failed": "F", "skipped": "s"}.get(outcome, "?")


def _counted(counts: Mapping[str, int], *, quote: bool) -> str:
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown = [f"{_short(value) if quote else value} x{count}" for value, count in ranked[:_SHOWN_OUTPUTS]]
    if len(ranked) > _SHOWN_OUTPUTS:
        shown.append(f"... {len(ranked) - _SHOWN_OUTPUTS} more")
    return ", ".join(shown)


def _short(text: str) -> str:
    return repr(text if len(text) <= _OUTPUT_WIDTH else text[:_OUTPUT_WIDTH - 3] + "...")


def run_output(result: WorkflowResult) -> str:
    """What a run answered, for counting distinct outputs: the output of its last step that succeeded."""
    done = [step for step in result.steps.values() if step.status.value == "success"]
    if not done:
        return f"(no output: {result.reason.value})"
    value = to_plain(done[-1].output)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return " ".join(text.split())


def _bump(table: dict[str, int], key: str) -> None:
    table[key] = table.get(key, 0) + 1


# -- the protocol --------------------------------------------------------------------------------------------

#: The repetition in progress of an item (1, 2, ...), read by the harness for the repetition's cassette.
REPETITION_KEY = pytest.StashKey[int]()


def run_repetitions(item: pytest.Item, nextitem: pytest.Item | None, plan: Plan, log: RepetitionLog) -> None:
    """Run ``item`` ``plan.repeat`` times and log one test: a setup, the aggregated call, the last teardown.

    Between repetitions only the test's own node is torn down (the "next item" its teardown is told of is
    the test's parent, whose fixtures stay), so function-scoped fixtures are fresh and wider ones are kept;
    the last repetition's teardown gets the real next item. Every repetition runs, even after a skip or a
    setup error, unless the plan stops early: then each repetition's teardown decides, from the outcome so far,
    whether the verdict is decided, and if so tears down to the real next item (see :class:`_NextOrParent`).
    """
    from ..._core.compat import run_protocol  # pytest's own protocol, as rerun plugins use it

    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    log.start(item.nodeid, plan)
    done: list[list[pytest.TestReport]] = []
    outcomes: list[str] = []
    for number in range(1, plan.repeat + 1):
        item.stash[REPETITION_KEY] = number
        log.begin_repetition(item.nodeid)
        keep: Any = item.parent if number < plan.repeat else nextitem
        if plan.early_stop and number < plan.repeat:
            keep = _NextOrParent(item, nextitem, lambda: plan.decided([*outcomes, log.current_outcome(item.nodeid)]))
        reports = run_protocol(item, nextitem=keep)
        outcomes.append(_outcome(reports))
        log.end_repetition(item.nodeid, outcomes[-1], _written(reports))
        done.append(reports)
        if isinstance(keep, _NextOrParent) and keep.why is not None:  # torn down to the next item: stop here
            log.stop_early(item.nodeid, keep.why)
            break
    for report in _aggregated(item, done, plan):
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


class _NextOrParent:
    """The "next item" a repetition's teardown is told of when the repetitions may stop early: asked at teardown
    (after the call's report, which the log has heard), it stands for the real next item once the verdict is
    decided, so that everything the next item does not need is torn down as usual; otherwise for the test's
    parent, whose fixtures stay for the next repetition. ``why`` keeps the decision it gave."""

    def __init__(self, item: pytest.Item, nextitem: pytest.Item | None, decided: Callable[[], str | None]) -> None:
        self._parent, self._next, self._decided = item.parent, nextitem, decided
        self.why: str | None = None

    def _target(self) -> Any:
        self.why = self._decided()
        return self._next if self.why is not None else self._parent

    def __bool__(self) -> bool:
        return self._target() is not None

    def listchain(self) -> list[Any]:
        target = self._target()
        return list(target.listchain()) if target is not None else []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)


def _outcome(reports: list[pytest.TestReport]) -> str:
    if any(report.failed for report in reports):
        return "failed"
    return "skipped" if any(report.skipped for report in reports) else "passed"


def _written(reports: list[pytest.TestReport]) -> list[str]:
    return [str(value) for report in reports for name, value in report.user_properties if name == WRITTEN_PROPERTY]


def _aggregated(item: pytest.Item, done: list[list[pytest.TestReport]], plan: Plan) -> list[pytest.TestReport]:
    """One setup, one call and one teardown report for the whole set of repetitions.

    When no repetition got past its setup, or every one skipped, the first repetition's reports are the
    test's (an error or a skip, as pytest would report it once).
    """
    outcomes = [_outcome(reports) for reports in done]
    ran = [reports for reports in done if reports[0].passed and len(reports) > 2]
    if not ran or all(outcome == "skipped" for outcome in outcomes):
        return done[0]
    passes = outcomes.count("passed")
    calls = [reports[1] for reports in ran]
    failed = [(number, reports) for number, reports in enumerate(done, 1) if outcomes[number - 1] != "passed"]
    base = next((call for call in calls if call.passed), calls[0])
    call = copy.copy(base)
    call.duration = sum(report.duration for report in calls)
    call.user_properties = [prop for reports in done for report in reports for prop in report.user_properties]
    call.sections = list(base.sections)
    if passes >= plan.passes_needed:
        call.outcome, call.longrepr = "passed", None
    else:
        call.outcome = "failed"
        call.longrepr = _failure_text(item, outcomes, plan, failed)
    return [ran[0][0], call, done[-1][-1]]


def _failure_text(item: pytest.Item, outcomes: list[str], plan: Plan,
                  failed: list[tuple[int, list[pytest.TestReport]]]) -> str:
    passes, ran = outcomes.count("passed"), len(outcomes)
    early = f" of {plan.repeat} (stopped early: the other {plan.repeat - ran} could not reach it)" \
        if ran < plan.repeat else ""
    lines = [
        f"agentloom: {passes} of {ran} repetitions of {item.nodeid} passed ({passes / ran:.0%}); "
        f"the minimum pass rate {plan.min_pass_rate:g} ({plan.rate_from}) needs {plan.passes_needed}{early}.",
        "  repetitions: " + " ".join(f"{number}:{outcome}" for number, outcome in enumerate(outcomes, 1)),
    ]
    for number, reports in failed:
        report = next((report for report in reports if report.failed or report.skipped), reports[-1])
        text = str(report.longreprtext).strip().splitlines()
        lines.append(f"--- repetition {number} ({report.when} {report.outcome}) ---")
        lines += text[-30:] if number == failed[0][0] else text[-3:]
    return render_message(
        lines[0], details=lines[1:],
        hint="make the workflow or its prompts more reliable, or lower the bar on purpose: "
        "--agentloom-min-pass-rate, @pytest.mark.agentloom(min_pass_rate=...) or ini agentloom_min_pass_rate. "
        "To study a failure, record the repetitions (--agentloom-record-repetitions) and replay one "
        "(--agentloom-replay-repetition=K).",
    )

