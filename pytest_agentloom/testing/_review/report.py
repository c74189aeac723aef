"""The review report of a session (``--agentloom-report``): Markdown for a pull request, or one HTML page.

Both say the same: the session's totals (tests, runs, tokens, cost), each
workflow's coverage drawn as its graph (layers as columns, nodes coloured by
coverage, router branches never taken dashed), and per test its outcome, each
run's status and timeline on its virtual clock, its tokens and cost, and the
failure (a snapshot diff included) when it failed. A drift check adds its
comparison of each test's replayed and live runs (:mod:`.._live.drift_report`).

The HTML page is self-contained: styles inline, graphs and timelines as inline
SVG, no script, no font and no address of any server, so it opens from a CI
artifact with no network. Nothing in either depends on the wall clock or on the
order in which tests or workers finished: the same session writes the same bytes.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...engine._format import diagram
from ...errors import AgentloomError
from .._live.drift_report import drift_html, drift_markdown
from .._live.repetition_report import repetition_html, repetition_markdown
from .coverage import never_reached_text

if TYPE_CHECKING:
    from ...engine._format.model import Workflow
    from .._live.drift_diff import TestDrift
    from .coverage import CoverageMap, WorkflowCoverage

__all__ = ["ReportSource", "render_report"]


class ReportSource(Protocol):
    """What the report is made of: a :class:`~.review.Review` at the end of a session (which calls
    :func:`render_report`, so this module names what it reads instead of importing it)."""

    @property
    def coverage(self) -> CoverageMap: ...
    @property
    def runs(self) -> dict[str, list[dict[str, Any]]]: ...
    @property
    def outcomes(self) -> dict[str, dict[str, Any]]: ...
    @property
    def drift(self) -> list[TestDrift] | None: ...
    @property
    def repetitions(self) -> list[dict[str, str]] | None: ...

_TITLE = "agentloom review report"


def render_report(review: ReportSource, *, html: bool) -> str:
    """The report of ``review``'s session, as an HTML page or as Markdown."""
    return _Report(review).html() if html else _Report(review).markdown()


class _Report:
    """The numbers and drawings both formats share, computed once."""

    def __init__(self, review: ReportSource) -> None:
        self.review = review
        self.coverage = review.coverage
        self.tests = sorted(review.runs.items())
        runs = [run for _, test_runs in self.tests for run in test_runs]
        outcomes = [self._outcome(nodeid) for nodeid, _ in self.tests]
        self.totals = {
            "tests": len(self.tests),
            "outcomes": {name: outcomes.count(name) for name in sorted(set(outcomes))},
            "runs": len(runs),
            "tokens": sum(run["tokens"] for run in runs),
            "cost_usd": round(sum(run["cost_usd"] for run in runs), 6),
        }

    def _outcome(self, nodeid: str) -> str:
        return str(self.review.outcomes.get(nodeid, {}).get("outcome", "unknown"))

    def _failure(self, nodeid: str) -> str:
        return str(self.review.outcomes.get(nodeid, {}).get("failure", ""))

    def _workflows(self) -> list[tuple[str, WorkflowCoverage, Workflow | None]]:
        rootdir = self.coverage.rootdir
        return [(key, entry, _load(rootdir, key)) for key, entry in sorted(self.coverage.workflows.items())]

    def _totals_line(self) -> str:
        outcomes = ", ".join(f"{count} {name}" for name, count in self.totals["outcomes"].items())
        cov = self.coverage.totals()
        return (f"{self.totals['tests']} tests ({outcomes or 'none'}) · {self.totals['runs']} runs · "
                f"{self.totals['tokens']} tokens · ${self.totals['cost_usd']:.6f} · "
                f"steps {_fraction(cov['steps'])} · branches {_fraction(cov['branches'])}")

    # -- Markdown -----------------------------------------------------------------------------------------

    def markdown(self) -> str:
        out = [f"# {_TITLE}", "", f"**{self._totals_line()}**", "", "## Workflow coverage", "",
               "| workflow | runs | steps | branches | never reached |", "| --- | ---: | ---: | ---: | --- |"]
        workflows = self._workflows()
        for key, entry, _ in workflows:
            summary = entry.summary()
            out.append(f"| `{key}` | {entry.data['runs']} | {_fraction(summary['steps'])} | "
                       f"{_fraction(summary['branches'])} | {_cell(', '.join(summary['never_reached']) or '—')} |")
        for key, entry, workflow in workflows:
            summary = entry.summary()
            out += ["", f"### `{key}`", ""]
            for title, level, marks in _levels(entry, workflow):
                if title:
                    out += [f"{title}:", ""]
                out += ["```mermaid", diagram.to_mermaid(level, marks).rstrip("\n"), "```", ""]
            out.append(f"- reached: {', '.join(summary['reasons_reached']) or 'nothing'}")
            out.append(f"- never reached: {never_reached_text(summary)}")
            if summary["agent_stops_never_reached"]:
                out.append(f"- agent stops never reached: {', '.join(summary['agent_stops_never_reached'])}")
        out += ["", "## Tests", "", "| test | status | runs | tokens | cost |", "| --- | --- | --- | ---: | ---: |"]
        for nodeid, runs in self.tests:
            shown = "<br>".join(f"{run['name']}: {run['status']} ({run['reason']}, {run['duration']:g}s)"
                                for run in runs)
            out.append(f"| `{_cell(nodeid)}` | {self._outcome(nodeid)} | {_cell(shown)} | "
                       f"{sum(r['tokens'] for r in runs)} | ${sum(r['cost_usd'] for r in runs):.6f} |")
        failed = [(nodeid, self._failure(nodeid)) for nodeid, _ in self.tests if self._failure(nodeid)]
        if failed:
            out += ["", "## Failures"]
            for nodeid, text in failed:
                fence = "~~~~" if "```" in text else "```"
                out += ["", f"<details><summary><code>{html.escape(nodeid)}</code></summary>", "",
                        f"{fence}text", text, fence, "", "</details>"]
        if self.review.drift is not None:
            out += drift_markdown(self.review.drift)
        if self.review.repetitions:
            out += repetition_markdown(self.review.repetitions)
        return "\n".join(out) + "\n"

    # -- HTML ---------------------------------------------------------------------------------------------

    def html(self) -> str:
        body = [f"<header><h1>{_TITLE}</h1><p class=\"totals\">{_h(self._totals_line())}</p></header>",
                "<section id=\"coverage\"><h2>Workflow coverage</h2>", _LEGEND, self._coverage_table()]
        for number, (key, entry, workflow) in enumerate(self._workflows(), start=1):
            body.append(self._workflow_html(key, entry, workflow, f"workflow-{number}"))
        body.append("</section><section id=\"tests\"><h2>Tests</h2>")
        body += [self._test_html(nodeid, runs) for nodeid, runs in self.tests]
        body.append("</section>")
        if self.review.drift is not None:
            body.append(drift_html(self.review.drift))
        if self.review.repetitions:
            body.append(repetition_html(self.review.repetitions))
        return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{_TITLE}</title>\n"
                f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n")

    def _coverage_table(self) -> str:
        rows = ["<table class=\"coverage\"><thead><tr><th>workflow</th><th>runs</th><th>steps</th><th>branches</th>"
                "<th>never reached</th></tr></thead><tbody>"]
        for key, entry in sorted(self.coverage.workflows.items()):
            summary = entry.summary()
            rows.append(f"<tr><td><code>{_h(key)}</code></td><td>{entry.data['runs']}</td>"
                        f"<td>{_fraction(summary['steps'])}</td><td>{_fraction(summary['branches'])}</td>"
                        f"<td>{_h(', '.join(summary['never_reached']) or '—')}</td></tr>")
        rows.append("</tbody></table>")
        return "".join(rows)

    def _workflow_html(self, key: str, entry: WorkflowCoverage, workflow: Workflow | None, anchor: str) -> str:
        summary = entry.summary()
        graph = "<p class=\"note\">(no graph: the workflow was built in code or its file no longer loads)</p>"
        if workflow is not None:
            graph = "".join(
                (f"<p class=\"child\">{_h(title)}:</p>" if title else "")
                + diagram.to_svg(level, marks, standalone=False, id_prefix=f"{anchor}-{number}")
                for number, (title, level, marks) in enumerate(_levels(entry, workflow)))
        stops = summary["agent_stops_never_reached"]
        return (f"<article class=\"workflow\" id=\"{anchor}\">"
                f"<h3><code>{_h(key)}</code> ({_h(entry.data['workflow'])})</h3>"
                f"<div class=\"graph\">{graph}</div>"
                f"<p><b>reached:</b> {_h(', '.join(summary['reasons_reached']) or 'nothing')}</p>"
                f"<p><b>never reached:</b> {_h(never_reached_text(summary))}</p>"
                + (f"<p><b>agent stops never reached:</b> {_h(', '.join(stops))}</p>" if stops else "")
                + "</article>")

    def _test_html(self, nodeid: str, runs: list[dict[str, Any]]) -> str:
        outcome = self._outcome(nodeid)
        parts = [f"<article class=\"test outcome-{_h(outcome)}\"><h3><code>{_h(nodeid)}</code> "
                 f"<span class=\"badge\">{_h(outcome)}</span></h3>",
                 f"<p>{sum(r['tokens'] for r in runs)} tokens · ${sum(r['cost_usd'] for r in runs):.6f}</p>"]
        for run in runs:
            parts.append(f"<div class=\"run\"><p><code>{_h(run['workflow'])}</code> · {_h(run['status'])} "
                         f"({_h(run['reason'])}) · {run['duration']:g}s on the virtual clock · {run['tokens']} tokens"
                         f" · ${run['cost_usd']:.6f}</p>{_timeline_svg(run)}</div>")
        failure = self._failure(nodeid)
        if failure:
            parts.append(f"<details class=\"failure\" open><summary>failure</summary><pre>{_h(failure)}</pre>"
                         "</details>")
        parts.append("</article>")
        return "".join(parts)


def _levels(entry: WorkflowCoverage, workflow: Workflow | None,
            prefix: str = "") -> list[tuple[str, Workflow, diagram.Marks]]:
    """The graphs of a workflow file: the workflow itself, then each subworkflow child (titled by its step)."""
    if workflow is None:
        return []
    title = f"subworkflow step {prefix.rstrip('/')}" if prefix else ""
    levels = [(title, workflow, diagram.Marks(entry.step_marks(prefix), entry.missed_edges(workflow, prefix)))]
    for step in workflow.steps:
        child = workflow.compiled.children.get(step.id)
        if child is not None:
            levels += _levels(entry, child, f"{prefix}{step.id}/")
    return levels


def _load(rootdir: Path, key: str) -> Workflow | None:
    """The workflow file behind a coverage key, for drawing; None for one built in code or gone."""
    if key.startswith("<"):
        return None
    from ...engine._format.loader import load_workflow

    path = Path(key) if Path(key).is_absolute() else rootdir / key
    try:
        return load_workflow(path)
    except (AgentloomError, OSError):
        return None


_ROW_H, _LABEL_W, _TRACK_W = 22, 190, 560
_BAR_COLOURS = {"success": "#43a047", "failed": "#e53935", "paused": "#fb8c00", "skipped": "#b0bec5",
                "running": "#90a4ae"}
_MARK_COLOURS = {"retry": "#6a1b9a", "fallback": "#c62828", "tool": "#1565c0", "pause": "#ef6c00"}


def _timeline_svg(run: dict[str, Any]) -> str:
    """Steps as bars on the run's clock (one row each), retries, tool calls and pauses as marks on them.

    A run that took no virtual time (scripted, replayed) would put every bar at 0: it is drawn on the
    order of its trace's events instead, so the steps still read in the order they ran, retries beside them.
    """
    steps = run["steps"]
    duration = max(run["duration"], max((s["end"] for s in steps), default=0.0))
    in_order = not duration and "events" in run
    span = (run["events"] if in_order else duration) or 1.0
    height = (len(steps) + 1) * _ROW_H + 8
    width = _LABEL_W + _TRACK_W + 90
    rows = {step["step"]: index for index, step in enumerate(steps)}

    def x(time: float) -> float:
        return round(_LABEL_W + _TRACK_W * time / span, 2)

    def bar_x(step: dict[str, Any]) -> tuple[float, float]:
        return (x(step["first"] - 1), x(step["last"])) if in_order else (x(step["start"]), x(step["end"]))

    parts = [f"<svg class=\"timeline\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" "
             f"role=\"img\" aria-label=\"timeline of {_h(run['run_id'])}\">"]
    for step in steps:
        y = rows[step["step"]] * _ROW_H + 4
        start, end = bar_x(step)
        colour = _BAR_COLOURS.get(step["status"], "#90a4ae")
        tip = f"{step['step']}: {step['status']}, {step['start']:g}s to {step['end']:g}s, attempts {step['attempts']}"
        parts.append(f"<text class=\"step-label\" x=\"4\" y=\"{y + 14}\">{_h(step['step'][:28])}</text>"
                     f"<rect class=\"bar {_h(step['status'])}\" x=\"{start}\" y=\"{y + 3}\" "
                     f"width=\"{max(end - start, 3):.2f}\" height=\"{_ROW_H - 8}\" rx=\"3\" fill=\"{colour}\">"
                     f"<title>{_h(tip)}</title></rect>")
        if step["attempts"] > 1:  # retries show without hovering
            parts.append(f"<text class=\"attempts\" x=\"{max(end, start + 3) + 6}\" y=\"{y + 14}\">"
                         f"{step['attempts']} attempts</text>")
    for mark in run["marks"]:
        if mark["step"] not in rows:
            continue
        y = rows[mark["step"]] * _ROW_H + 4 + _ROW_H // 2
        colour = _MARK_COLOURS.get(mark["kind"], "#000000")
        where = x(mark["order"] - 0.5) if in_order else x(mark["time"])
        parts.append(f"<circle class=\"mark {mark['kind']}\" cx=\"{where}\" cy=\"{y}\" r=\"4\" "
                     f"fill=\"{colour}\" stroke=\"#ffffff\"><title>{_h(mark['label'])} at {mark['time']:g}s</title>"
                     "</circle>")
    axis_y = len(steps) * _ROW_H + 12
    parts.append(f"<line x1=\"{_LABEL_W}\" y1=\"{axis_y - 6}\" x2=\"{_LABEL_W + _TRACK_W}\" y2=\"{axis_y - 6}\" "
                 "stroke=\"#90a4ae\"/>"
                 + (f"<text class=\"axis\" x=\"{_LABEL_W}\" y=\"{axis_y + 8}\">in the order they ran: no virtual "
                    "time passed</text>" if in_order else
                    f"<text class=\"axis\" x=\"{_LABEL_W}\" y=\"{axis_y + 8}\">0s</text>"
                    f"<text class=\"axis\" x=\"{_LABEL_W + _TRACK_W}\" y=\"{axis_y + 8}\" text-anchor=\"end\">"
                    f"{duration:g}s{' (no virtual time passed)' if not duration else ''}</text>") + "</svg>")
    return "".join(parts)


def _h(value: Any) -> str:
    return html.escape(str(value))


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _fraction(part: dict[str, Any]) -> str:
    return f"{part['reached']}/{part['total']} ({part['percent']:g}%)"


_LEGEND = ("<p class=\"legend\"><span class=\"key covered\">ran, every branch taken</span>"
           "<span class=\"key partial\">ran, a branch never taken</span><span class=\"key failed\">only failed</span>"
           "<span class=\"key missed\">never ran</span> · dashed arrows: router branches never taken</p>")

_CSS = (
    "body{font-family:system-ui,sans-serif;margin:24px;color:#1b1b1b;background:#fafafa}"
    "h1{font-size:1.5em}h2{border-bottom:1px solid #cfd8dc;padding-bottom:4px}h3{font-size:1.05em}"
    "table{border-collapse:collapse}td,th{border:1px solid #cfd8dc;padding:4px 8px;text-align:left}"
    "article{background:#fff;border:1px solid #e0e0e0;border-radius:6px;padding:8px 14px;margin:12px 0}"
    ".graph,.run{overflow-x:auto}svg.agentloom-graph{max-width:100%;height:auto}"
    ".badge{font-size:.8em;padding:1px 6px;border-radius:8px;background:#eceff1}"
    ".outcome-passed .badge{background:#d7f0dc}.outcome-failed .badge,.outcome-error .badge{background:#f9d6d5}"
    ".drift tr.changed td:first-child{border-left:4px solid #fb8c00}.drift-test.same{opacity:.75}"
    ".outcome-skipped .badge{background:#fff1c2}pre{background:#263238;color:#eceff1;padding:8px;overflow-x:auto}"
    ".timeline text{font-size:11px;fill:#37474f}.legend .key{display:inline-block;padding:1px 8px;margin-right:6px;"
    "border-radius:4px;border:1px solid #90a4ae}"
    + "".join(f".legend .{name}{{background:{fill};border-color:{stroke}}}"
              for name, (fill, stroke) in diagram.MARK_CLASSES.items())
)
