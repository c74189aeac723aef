"""What changed between a test's replayed runs and its live runs, read from their facts (:mod:`.trace_facts`).

A test's side (``replay`` or ``live``) is plain data: its ``outcome``, the
``failure`` headline when it failed, ``runs`` (the facts of every run the
``agentloom`` fixture made, in order) and, live only, ``snapshots``: each
snapshot the live run wrote, ``same``, ``changed`` or ``new`` against the
committed one. Runs are paired by position (the test's first run with its first
run); each pair is compared fact by fact, and every difference becomes one line
of a :class:`TestDrift`. Tokens and cost are numbers with deltas and always
shown; a difference in them counts as a change too.

Each step's output is compared by its method (:mod:`.output_compare`; the live
side's ``output_methods``, else the default). The test's **verdict** follows:
``regression`` when its behaviour moved (outcome, number of runs, termination,
route, tool calls, step statuses, agent stops, schema validity, error codes) or
an output is beyond its method's threshold; ``benign`` when only outputs within
threshold, snapshots, tokens or cost changed; ``identical`` when nothing did.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._settings.drift_outputs import OutputMethods, parse_methods
from .output_compare import compare_output

__all__ = ["VERDICTS", "TestDrift", "compare_test", "signed"]

_RUN_PREFIX = re.compile(r"^run \d+: ")
#: The verdicts, mildest first.
VERDICTS = ("identical", "benign", "regression")

_LISTS = (("route", "route"), ("tools", "tool calls"))
_TABLES = (("steps", "step"), ("stops", "agent stop"), ("schema", "schema"), ("errors", "error"))


@dataclass
class TestDrift:
    """The drift of one test: its outcome on each side, the changes (one line each) and the numbers."""

    __test__ = False

    nodeid: str
    replay_outcome: str
    live_outcome: str
    changes: list[str] = field(default_factory=list)
    tokens: tuple[int, int] = (0, 0)  # replay, live
    cost_usd: tuple[float, float] = (0.0, 0.0)
    live_failure: str = ""
    provider_problems: list[str] = field(default_factory=list)  # failed live model calls, step: message
    regressions: list[str] = field(default_factory=list)  # the changes that make the verdict a regression

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    @property
    def verdict(self) -> str:
        """``identical``, ``benign`` or ``regression`` (see the module docs)."""
        return "regression" if self.regressions else "benign" if self.changes else "identical"

    def reasons(self) -> str:
        """What made a regression, by the label of each change: ``route, tool calls, output reply``."""
        labels = dict.fromkeys(_RUN_PREFIX.sub("", line).split(": ", 1)[0] for line in self.regressions)
        return ", ".join(labels)

    def _add(self, line: str, *, regression: bool) -> None:
        self.changes.append(line)
        if regression:
            self.regressions.append(line)

    def numbers(self) -> str:
        """``tokens 120 -> 134 (+14) · cost $0.000120 -> $0.000150 (+$0.000030)``."""
        (t0, t1), (c0, c1) = self.tokens, self.cost_usd
        return (f"tokens {t0} -> {t1} ({signed(t1 - t0)}) · cost ${c0:.6f} -> ${c1:.6f} "
                f"({signed(c1 - c0, money=True)})")


def compare_test(nodeid: str, replay: Mapping[str, Any], live: Mapping[str, Any],
                 methods: OutputMethods | None = None) -> TestDrift:
    """The drift of one test from the facts of its two sides; outputs compared by ``methods`` (else by the
    live side's ``output_methods``, else by the default method)."""
    if methods is None:
        methods = parse_methods(live.get("output_methods"), "the drift facts' output_methods")
    old_runs, new_runs = list(replay.get("runs", ())), list(live.get("runs", ()))
    drift = TestDrift(nodeid, str(replay.get("outcome", "unknown")), str(live.get("outcome", "unknown")),
                      tokens=(_tokens(old_runs), _tokens(new_runs)), cost_usd=(_cost(old_runs), _cost(new_runs)),
                      live_failure=str(live.get("failure", "")))
    if drift.replay_outcome != drift.live_outcome:
        drift._add(f"outcome: {drift.replay_outcome} -> {drift.live_outcome}", regression=True)
    if len(old_runs) != len(new_runs):
        drift._add(f"runs: {len(old_runs)} -> {len(new_runs)}", regression=True)
    for number, (old, new) in enumerate(zip(old_runs, new_runs, strict=False), start=1):
        prefix = f"run {number}: " if max(len(old_runs), len(new_runs)) > 1 else ""
        for line in _run_changes(old, new):
            drift._add(prefix + line, regression=True)
        for line, regression in _output_changes(old, new, methods):
            drift._add(prefix + line, regression=regression)
    for run in new_runs:
        drift.provider_problems += [f"{step}: {message}" for step, message in sorted(run.get("messages", {}).items())]
    for path, state in sorted(live.get("snapshots", {}).items()):
        if state != "same":  # what a snapshot holds is judged by the facts above: its change alone is benign
            drift._add(f"snapshot {path}: {state}", regression=False)
    if drift.tokens[0] != drift.tokens[1] or round(drift.cost_usd[0] - drift.cost_usd[1], 8):
        drift._add(drift.numbers(), regression=False)
    return drift


def _output_changes(old: Mapping[str, Any], new: Mapping[str, Any],
                    methods: OutputMethods) -> list[tuple[str, bool]]:
    """Each step with an output on both sides whose output differs: the line, and whether it regresses (a step
    with an output on one side only shows already, by its status)."""
    before, after = old.get("outputs", {}), new.get("outputs", {})
    measured = new.get("scores", {})  # what a model said, for the methods that ask one (see .output_scores)
    lines = []
    for step in sorted(set(before) & set(after)):
        method = methods.for_step(step)
        verdict = compare_output(method, before[step], after[step], measured.get(step))
        if not verdict.same:
            lines.append((f"output {step}: {verdict.detail}", not verdict.benign))
    return lines


def _run_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    lines = []
    if (old["status"], old["reason"]) != (new["status"], new["reason"]):
        lines.append(f"termination: {old['status']} ({old['reason']}) -> {new['status']} ({new['reason']})")
    for key, label in _LISTS:
        if old[key] != new[key]:
            lines.append(f"{label}: {_listed(old[key])} -> {_listed(new[key])}")
    for key, label in _TABLES:
        for name in sorted(set(old[key]) | set(new[key])):
            before, after = old[key].get(name, "—"), new[key].get(name, "—")
            if before != after:
                lines.append(f"{label} {name}: {before} -> {after}")
    return lines


def _listed(items: list[str]) -> str:
    return "; ".join(items) if items else "(none)"


def _tokens(runs: list[Mapping[str, Any]]) -> int:
    return sum(sum(run["tokens"].values()) for run in runs)


def _cost(runs: list[Mapping[str, Any]]) -> float:
    return round(sum(run["cost_usd"] for run in runs), 8)


def signed(value: float, *, money: bool = False) -> str:
    """``+14``, ``-3``, ``±0``; with ``money``, ``+$0.000030``."""
    if not round(value, 8):
        return "±0" if not money else "±$0"
    sign = "+" if value > 0 else "-"
    return f"{sign}${abs(value):.6f}" if money else f"{sign}{abs(value):g}"
