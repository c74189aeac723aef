"""What changed between a test's replayed runs and its live runs, read from their facts (:mod:`.trace_facts`).

A test's side (``replay`` or ``live``) is plain data: its ``outcome``, the
``failure`` headline when it failed, ``runs`` (the facts of every run the
``agentloom`` fixture made, in order) and, live only, ``snapshots``: each
snapshot the live run wrote, ``same``, ``changed`` or ``new`` against the
committed one. Runs are paired by position (the test's first run with its first
run); each pair is compared fact by fact, and every difference becomes one line
of a :class:`TestDrift`. Tokens and cost are numbers with deltas and always
shown; a difference in them counts as a change too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TestDrift", "compare_test", "signed"]

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

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def numbers(self) -> str:
        """``tokens 120 -> 134 (+14) · cost $0.000120 -> $0.000150 (+$0.000030)``."""
        (t0, t1), (c0, c1) = self.tokens, self.cost_usd
        return (f"tokens {t0} -> {t1} ({signed(t1 - t0)}) · cost ${c0:.6f} -> ${c1:.6f} "
                f"({signed(c1 - c0, money=True)})")


def compare_test(nodeid: str, replay: Mapping[str, Any], live: Mapping[str, Any]) -> TestDrift:
    """The drift of one test from the facts of its two sides."""
    old_runs, new_runs = list(replay.get("runs", ())), list(live.get("runs", ()))
    drift = TestDrift(nodeid, str(replay.get("outcome", "unknown")), str(live.get("outcome", "unknown")),
                      tokens=(_tokens(old_runs), _tokens(new_runs)), cost_usd=(_cost(old_runs), _cost(new_runs)),
                      live_failure=str(live.get("failure", "")))
    if drift.replay_outcome != drift.live_outcome:
        drift.changes.append(f"outcome: {drift.replay_outcome} -> {drift.live_outcome}")
    if len(old_runs) != len(new_runs):
        drift.changes.append(f"runs: {len(old_runs)} -> {len(new_runs)}")
    for number, (old, new) in enumerate(zip(old_runs, new_runs, strict=False), start=1):
        prefix = f"run {number}: " if max(len(old_runs), len(new_runs)) > 1 else ""
        drift.changes += [prefix + line for line in _run_changes(old, new)]
    for run in new_runs:
        drift.provider_problems += [f"{step}: {message}" for step, message in sorted(run.get("messages", {}).items())]
    for path, state in sorted(live.get("snapshots", {}).items()):
        if state != "same":
            drift.changes.append(f"snapshot {path}: {state}")
    if drift.tokens[0] != drift.tokens[1] or round(drift.cost_usd[0] - drift.cost_usd[1], 8):
        drift.changes.append(drift.numbers())
    return drift


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
