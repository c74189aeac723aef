"""How a drift check reads: terminal lines, and the drift section of the review report (Markdown and HTML).

Tests are in node id order and every line comes from the facts alone, so the
same two sides give the same bytes whatever order the tests or workers ran in.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from .drift_diff import VERDICTS, TestDrift, signed

if TYPE_CHECKING:
    from .drift import Drift

__all__ = ["drift_html", "drift_markdown", "summary_lines", "verdict_text"]


def _verdicts(results: list[TestDrift]) -> str:
    counts = {verdict: sum(1 for result in results if result.verdict == verdict) for verdict in reversed(VERDICTS)}
    return ", ".join(f"{count} {verdict}" for verdict, count in counts.items())


def verdict_text(result: TestDrift) -> str:
    """``regression (route, output reply)``, ``benign`` or ``identical``."""
    return f"regression ({result.reasons()})" if result.regressions else result.verdict


_verdict = verdict_text


def _totals(results: list[TestDrift]) -> str:
    changed = sum(1 for result in results if result.changed)
    tokens = [sum(r.tokens[i] for r in results) for i in (0, 1)]
    cost = [round(sum(r.cost_usd[i] for r in results), 8) for i in (0, 1)]
    return (f"{len(results)} test{'s' if len(results) != 1 else ''} compared (replay -> live): {changed} changed, "
            f"{len(results) - changed} unchanged ({_verdicts(results)}) · tokens {tokens[0]} -> {tokens[1]} "
            f"({signed(tokens[1] - tokens[0])})"
            f" · cost ${cost[0]:.6f} -> ${cost[1]:.6f} ({signed(cost[1] - cost[0], money=True)})")


def summary_lines(drift: Drift) -> list[str]:
    """The terminal summary: totals, then each test with its changes (or "no change"), then what was not run."""
    nothing = drift.nothing_compared()
    if nothing is not None:
        return [f"agentloom drift: DriftError: {line}" if i == 0 else line
                for i, line in enumerate(nothing.splitlines())]
    results = drift.results()
    lines = [f"agentloom drift: {_totals(results)}", f"  scratch folder (live cassettes and snapshots): "
                                                      f"{drift.settings.folder}"]
    for result in results:
        if not result.changed:
            lines.append(f"  {result.nodeid}: identical, no change ({result.numbers()})")
            continue
        lines.append(f"  {result.nodeid}: {result.replay_outcome} -> {result.live_outcome}, "
                     f"{len(result.changes)} change{'s' if len(result.changes) != 1 else ''}: {_verdict(result)}")
        lines += [f"    {change}" for change in result.changes]
    failing = drift.failing()
    if failing:
        lines.append(f"agentloom drift: the session fails (--agentloom-drift-fail-on={drift.settings.fail_on}): "
                     f"{len(failing)} test{'s' if len(failing) != 1 else ''} at or beyond it:")
        lines += [f"  {result.nodeid}: {_verdict(result)}" for result in failing]
    if drift.not_compared:
        lines.append(f"agentloom drift: {len(drift.not_compared)} test(s) not compared (no committed cassette; "
                     "record them with pytest --agentloom-record):")
        lines += [f"  {nodeid}" for nodeid in drift.not_compared]
    if drift.partial:
        lines.append("agentloom drift: a worker died; the tests it ran are missing from the comparison")
    return lines


def drift_markdown(results: list[TestDrift]) -> list[str]:
    out = ["", "## Drift (replay -> live)", "", f"**{_totals(results)}**", "",
           "| test | outcome | verdict | changes | tokens | cost |", "| --- | --- | --- | ---: | ---: | ---: |"]
    for result in results:
        (t0, t1), (c0, c1) = result.tokens, result.cost_usd
        out.append(f"| `{_cell(result.nodeid)}` | {result.replay_outcome} -> {result.live_outcome} | "
                   f"{_cell(_verdict(result))} | {len(result.changes) or 'no change'} | "
                   f"{t0} -> {t1} ({signed(t1 - t0)}) | "
                   f"${c0:.6f} -> ${c1:.6f} ({signed(c1 - c0, money=True)}) |")
    for result in results:
        out += ["", f"### `{result.nodeid}`", ""]
        out += [f"- {_cell(change)}" for change in result.changes] or ["- no change"]
    return out


def drift_html(results: list[TestDrift]) -> str:
    rows = "".join(
        f"<tr class=\"{'changed' if r.changed else 'same'}\"><td><code>{_h(r.nodeid)}</code></td>"
        f"<td>{_h(r.replay_outcome)} → {_h(r.live_outcome)}</td><td class=\"verdict {r.verdict}\">"
        f"{_h(_verdict(r))}</td><td>{len(r.changes) or 'no change'}</td>"
        f"<td>{r.tokens[0]} → {r.tokens[1]} ({signed(r.tokens[1] - r.tokens[0])})</td>"
        f"<td>${r.cost_usd[0]:.6f} → ${r.cost_usd[1]:.6f} ({signed(r.cost_usd[1] - r.cost_usd[0], money=True)})</td>"
        "</tr>" for r in results)
    details = "".join(
        f"<article class=\"drift-test {'changed' if r.changed else 'same'}\"><h3><code>{_h(r.nodeid)}</code></h3>"
        + ("<ul>" + "".join(f"<li>{_h(change)}</li>" for change in r.changes) + "</ul>" if r.changed
           else "<p class=\"no-change\">no change</p>")
        + "</article>" for r in results)
    return (f"<section id=\"drift\"><h2>Drift (replay → live)</h2><p class=\"totals\">{_h(_totals(results))}</p>"
            "<table class=\"drift\"><thead><tr><th>test</th><th>outcome</th><th>verdict</th><th>changes</th>"
            "<th>tokens</th>"
            f"<th>cost</th></tr></thead><tbody>{rows}</tbody></table>{details}</section>")


def _h(value: object) -> str:
    return html.escape(str(value))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
