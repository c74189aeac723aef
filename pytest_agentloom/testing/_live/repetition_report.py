"""The live repetitions in the review report (``--agentloom-live --agentloom-report``): a table of each test's
repetitions, its verdict, its statistics (:mod:`.repetition_stats`) and its label, in node id order."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from .repetition_stats import RepetitionStats

__all__ = ["repetition_html", "repetition_markdown", "repetition_rows"]


def repetition_rows(tests: Mapping[str, Mapping[str, Any]]) -> list[dict[str, str]]:
    """One row per repeated test, from a :class:`~.repetitions.RepetitionLog`'s plain data."""
    from .repetitions import Plan

    rows = []
    for nodeid, entry in sorted(tests.items()):
        outcomes = list(entry["outcomes"])
        plan = Plan(entry["repeat"], entry["min_pass_rate"])
        passes = outcomes.count("passed")
        stats = RepetitionStats.of(outcomes)
        rows.append({"test": nodeid, "passed": f"{passes}/{plan.repeat}",
                     "verdict": "passed" if passes >= plan.passes_needed else "failed",
                     "repetitions": " ".join({"passed": ".", "failed": "F", "skipped": "s"}.get(o, "?")
                                             for o in outcomes),
                     "statistics": stats.line(), "label": stats.label})
    return rows


def repetition_markdown(rows: list[dict[str, str]]) -> list[str]:
    out = ["", "## Live repetitions", "", "| test | passed | verdict | label | statistics |",
           "| --- | ---: | --- | --- | --- |"]
    out += [f"| `{_cell(row['test'])}` | {row['passed']} | {row['verdict']} | {row['label']} | "
            f"{_cell(row['statistics'])} |" for row in rows]
    return out


def repetition_html(rows: list[dict[str, str]]) -> str:
    body = "".join(
        f"<tr class=\"{html.escape(row['label'].replace(' ', '-'))}\"><td><code>{html.escape(row['test'])}</code>"
        f"</td><td>{row['passed']}</td><td>{row['verdict']}</td><td>{html.escape(row['label'])}</td>"
        f"<td>{html.escape(row['statistics'])}</td></tr>" for row in rows)
    return ("<section id=\"repetitions\"><h2>Live repetitions</h2><table class=\"repetitions\"><thead><tr>"
            "<th>test</th><th>passed</th><th>verdict</th><th>label</th><th>statistics</th></tr></thead>"
            f"<tbody>{body}</tbody></table></section>")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
