"""A workflow drawn as a graph: Mermaid for pull requests, plain text for terminals, SVG for pages.

The layout is the engine's own: a step sits in the column of its layer (one
past the deepest step it waits for, router edges included, as in
:func:`~pytest_agentloom.engine._format.graph.dependency_graph`), and steps of one
column keep the order of the file. Edges are the ``depends_on`` lists and each
router's branches, labelled with the condition (or ``default``).

Coverage colours come in as :class:`Marks` (a class name per step, the router
branches never taken), so this module knows nothing about tests. Every output
is a pure function of the workflow and the marks: the same input draws the
same bytes.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field

from .graph import dependency_graph
from .model import RouterStep, SubworkflowStep, Workflow

__all__ = ["MARK_CLASSES", "Edge", "Marks", "edges", "layers", "to_ascii", "to_mermaid", "to_svg"]

#: The colour of each mark a node may carry: fill and stroke.
MARK_CLASSES: dict[str, tuple[str, str]] = {
    "covered": ("#d7f0dc", "#2e7d32"),   # ran, and every branch it owns was taken
    "partial": ("#fff1c2", "#b7791f"),   # a router that ran with a branch never taken
    "failed": ("#f9d6d5", "#c62828"),    # ran, and only ever failed
    "missed": ("#eceff1", "#78909c"),    # never ran
}
_LABEL_LIMIT = 40


@dataclass(frozen=True)
class Edge:
    """One arrow: ``source`` runs before ``target``; ``label`` is a router branch's condition."""

    source: str
    target: str
    label: str | None = None
    #: a branch's conditions in full, and whether it is the router's ``default`` too
    conditions: tuple[str, ...] = ()
    default: bool = False

    @property
    def is_branch(self) -> bool:
        return self.label is not None

    @property
    def when(self) -> str:
        """A branch in words, conditions in full: ``when a == 1``, ``otherwise (no condition holds)``, or
        ``when a == 1, or otherwise``."""
        if not self.conditions:
            return "otherwise (no condition holds)"
        return f"when {' or '.join(self.conditions)}" + (", or otherwise" if self.default else "")


@dataclass(frozen=True)
class Marks:
    """What to colour: a :data:`MARK_CLASSES` name per step id, and the router branches never taken."""

    nodes: Mapping[str, str] = field(default_factory=dict)
    missed_edges: frozenset[tuple[str, str]] = frozenset()


def layers(workflow: Workflow) -> list[list[str]]:
    """The steps by column: a step's column is one past the deepest step it depends on."""
    graph = dependency_graph(workflow)
    depth: dict[str, int] = {}

    def depth_of(step_id: str, seen: frozenset[str] = frozenset()) -> int:
        if step_id not in depth:
            deps = [dep for dep in graph.get(step_id, []) if dep in graph and dep not in seen]
            depth[step_id] = 1 + max((depth_of(dep, seen | {step_id}) for dep in deps), default=-1)
        return depth[step_id]

    columns: list[list[str]] = []
    for step in workflow.steps:
        column = depth_of(step.id)
        while len(columns) <= column:
            columns.append([])
        columns[column].append(step.id)
    return columns


def edges(workflow: Workflow) -> list[Edge]:
    """Dependencies in file order, then each router's branches (conditions of one target joined by ``or``)."""
    found: list[Edge] = []
    branch_pairs: set[tuple[str, str]] = set()
    for step in workflow.steps:
        if isinstance(step, RouterStep):
            labels: dict[str, list[str]] = {}
            for condition in step.conditions:
                labels.setdefault(condition.target, []).append(condition.expression)
            if step.default is not None:
                labels.setdefault(step.default, []).append("default")
            for target, texts in labels.items():
                conditions = tuple(text for text in texts if text != "default")
                found.append(Edge(step.id, target, _short(" or ".join(texts)), conditions,
                                  default=target == step.default))
                branch_pairs.add((step.id, target))
    plain = [Edge(dep, step.id) for step in workflow.steps for dep in dict.fromkeys(step.depends_on)
             if (dep, step.id) not in branch_pairs]
    return plain + found


def _short(text: str) -> str:
    return text if len(text) <= _LABEL_LIMIT else text[: _LABEL_LIMIT - 1] + "…"


def _caption(workflow: Workflow, step_id: str) -> str:
    step = workflow.step(step_id)
    if isinstance(step, SubworkflowStep):
        return f"subworkflow: {step.workflow}"
    return step.type


# -- Mermaid -------------------------------------------------------------------------------------------------


def to_mermaid(workflow: Workflow, marks: Marks | None = None) -> str:
    """A Mermaid ``flowchart LR``: nodes ``n0, n1, ...`` in file order, router branches dotted and labelled."""
    ids = {step.id: f"n{index}" for index, step in enumerate(workflow.steps)}
    lines = ["flowchart LR"]
    for column, step_ids in enumerate(layers(workflow), start=1):
        lines.append(f"  subgraph L{column}[\"layer {column}\"]")
        lines.append("    direction TB")
        for step_id in step_ids:
            label = f"{_mermaid_text(step_id)}<br/><small>{_mermaid_text(_caption(workflow, step_id))}</small>"
            shape = ("{{", "}}") if isinstance(workflow.step(step_id), RouterStep) else ("[", "]")
            lines.append(f"    {ids[step_id]}{shape[0]}\"{label}\"{shape[1]}")
        lines.append("  end")
    missed = marks.missed_edges if marks else frozenset()
    for edge in edges(workflow):
        source, target = ids[edge.source], ids[edge.target]
        if edge.label is None:
            lines.append(f"  {source} --> {target}")
        else:
            arrow = "-.->" if (edge.source, edge.target) in missed else "==>"
            lines.append(f"  {source} {arrow}|\"{_mermaid_text(edge.label)}\"| {target}")
    if marks is not None:
        for name, (fill, stroke) in MARK_CLASSES.items():
            lines.append(f"  classDef {name} fill:{fill},stroke:{stroke},color:#1b1b1b")
        by_class: dict[str, list[str]] = {}
        for step in workflow.steps:
            mark = marks.nodes.get(step.id)
            if mark in MARK_CLASSES:
                by_class.setdefault(mark, []).append(ids[step.id])
        for name, nodes in by_class.items():
            lines.append(f"  class {','.join(nodes)} {name}")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Text safe inside a quoted Mermaid label: quotes and markup characters as entity codes."""
    return (text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
            .replace("|", "#124;"))


# -- plain text ----------------------------------------------------------------------------------------------


def to_ascii(workflow: Workflow, marks: Marks | None = None) -> str:
    """Boxes by layer, one line of boxes per layer, then every edge: readable in any terminal or log."""
    out = [f"workflow: {workflow.name}"]
    for column, step_ids in enumerate(layers(workflow), start=1):
        boxes = []
        for step_id in step_ids:
            mark = marks.nodes.get(step_id) if marks else None
            boxes.append(f"[ {step_id} : {_caption(workflow, step_id)}{f' ({mark})' if mark else ''} ]")
        out.append(f"layer {column}: " + "  ".join(boxes))
    drawn = edges(workflow)
    if drawn:
        out.append("edges:")
    missed = marks.missed_edges if marks else frozenset()
    for edge in drawn:
        if edge.label is None:
            out.append(f"  {edge.source} --> {edge.target}")
        else:
            never = " (never taken)" if (edge.source, edge.target) in missed else ""
            out.append(f"  {edge.source} ==> {edge.target}  {edge.when}{never}")
    return "\n".join(out) + "\n"


# -- SVG -----------------------------------------------------------------------------------------------------

_NODE_W, _NODE_H, _COL_GAP, _ROW_GAP, _PAD = 170, 46, 130, 26, 20
#: a branch label is written out in full, wrapped at this many characters a line, at most _LABEL_LINES lines
#: stacked above its arrow's end (more: the last line ends in "…", the whole condition in its tooltip)
_LABEL_WRAP, _LABEL_LINES, _LABEL_LINE_H = 36, 4, 12
_CHAR_W = 6.2  # the width of one character of a 10px sans-serif label, generously: columns are spaced by it


def to_svg(workflow: Workflow, marks: Marks | None = None, *, standalone: bool = True,
           id_prefix: str = "agentloom") -> str:
    """An SVG drawing: layers as columns, arrows from each step's right side to the next's left side.

    ``standalone`` adds the XML namespace a ``.svg`` file needs; an SVG inlined in an HTML page
    goes without it, so the page names no URL at all. ``id_prefix`` keeps the element ids of several
    drawings in one page apart.
    """
    arrow = f"{id_prefix}-arrow"
    columns = layers(workflow)
    drawn = edges(workflow)
    lefts = _column_lefts(columns, drawn)
    place: dict[str, tuple[int, int]] = {}
    for column, step_ids in enumerate(columns):
        for row, step_id in enumerate(step_ids):
            place[step_id] = (lefts[column], _PAD + 18 + row * (_NODE_H + _ROW_GAP))
    width = (lefts[-1] + _NODE_W + _PAD) if columns else _PAD * 2
    height = _PAD * 2 + 18 + max((len(c) for c in columns), default=0) * (_NODE_H + _ROW_GAP)
    namespace = ' xmlns="http://www.w3.org/2000/svg"' if standalone else ""
    parts = [
        f'<svg{namespace} class="agentloom-graph" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="workflow {html.escape(workflow.name)}">',
        f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#546e7a"/></marker></defs>',
        '<style>text{font-family:sans-serif;font-size:12px;fill:#1b1b1b}.caption{font-size:10px;fill:#455a64}'
        '.edge{fill:none;stroke:#546e7a;stroke-width:1.4}.branch{stroke:#1565c0;stroke-width:2}'
        '.missed-branch{stroke:#b0bec5;stroke-dasharray:5 4}.edge-label{font-size:10px;fill:#1565c0;'
        'paint-order:stroke;stroke:#ffffff;stroke-width:3px;stroke-linejoin:round}</style>',
    ]
    for column, x in enumerate(lefts):
        parts.append(f'<text class="caption" x="{x}" y="{_PAD + 6}">layer {column + 1}</text>')
    missed = marks.missed_edges if marks else frozenset()
    for edge in drawn:  # labels after every arrow, so no arrow is drawn over a label
        parts.append(_svg_edge(edge, place, (edge.source, edge.target) in missed, arrow))
    parts += [_svg_label(edge, place) for edge in drawn if edge.label is not None]
    for step_id, (x, y) in place.items():
        mark = marks.nodes.get(step_id) if marks else None
        fill, stroke = MARK_CLASSES.get(mark or "", ("#ffffff", "#546e7a"))
        rounded = 4 if isinstance(workflow.step(step_id), RouterStep) else 10
        parts.append(
            f'<g class="node{f" {mark}" if mark else ""}" data-step="{html.escape(step_id)}">'
            f'<rect x="{x}" y="{y}" width="{_NODE_W}" height="{_NODE_H}" rx="{rounded}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
            f'<text x="{x + 10}" y="{y + 19}">{html.escape(_short(step_id))}</text>'
            f'<text class="caption" x="{x + 10}" y="{y + 36}">'
            f'{html.escape(_short(_caption(workflow, step_id)))}</text></g>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _svg_edge(edge: Edge, place: Mapping[str, tuple[int, int]], never_taken: bool, arrow: str) -> str:
    sx, sy = place[edge.source]
    tx, ty = place[edge.target]
    x1, y1 = sx + _NODE_W, sy + _NODE_H // 2
    x2, y2 = tx, ty + _NODE_H // 2
    bend = max((x2 - x1) // 2, 30)
    kind = "edge" if edge.label is None else ("edge missed-branch" if never_taken else "edge branch")
    return (f'<path class="{kind}" d="M {x1} {y1} C {x1 + bend} {y1}, {x2 - bend} {y2}, {x2} {y2}" '
            f'marker-end="url(#{arrow})"/>')


def _label_lines(edge: Edge) -> list[str]:
    """A branch's label in full (``category == 'bug' or otherwise``), wrapped at spaces into short lines."""
    text = " or ".join(edge.conditions) + (" or otherwise" if edge.default and edge.conditions else "")
    lines: list[str] = []
    for word in (text or "otherwise").split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= _LABEL_WRAP:
            lines[-1] += " " + word
        else:
            lines.append(word)
    if len(lines) > _LABEL_LINES:
        lines = [*lines[: _LABEL_LINES - 1], lines[_LABEL_LINES - 1][: _LABEL_WRAP - 1] + "…"]
    return lines


def _label_width(edge: Edge) -> float:
    return max((len(line) for line in _label_lines(edge)), default=0) * _CHAR_W


def _column_lefts(columns: list[list[str]], drawn: list[Edge]) -> list[int]:
    """Each column's left edge: the gap before a column is wide enough for the longest label ending there."""
    column_of = {step_id: index for index, step_ids in enumerate(columns) for step_id in step_ids}
    needed = [0.0] * len(columns)
    for edge in drawn:
        if edge.label is not None and edge.target in column_of:
            needed[column_of[edge.target]] = max(needed[column_of[edge.target]], _label_width(edge) + 40)
    lefts, x = [], _PAD
    for index in range(len(columns)):
        if index:
            x += _NODE_W + max(_COL_GAP, round(needed[index]))
        lefts.append(x)
    return lefts


def _svg_label(edge: Edge, place: Mapping[str, tuple[int, int]]) -> str:
    """The label, right-aligned just before the target box, its lines stacked upward from above the arrow."""
    tx, ty = place[edge.target]
    x, y = tx - 8, ty + _NODE_H // 2 - 6
    lines = _label_lines(edge)
    spans = "".join(f'<tspan x="{x}" y="{y - (len(lines) - 1 - index) * _LABEL_LINE_H}">{html.escape(line)}</tspan>'
                    for index, line in enumerate(lines))
    return (f'<text class="edge-label" data-edge="{html.escape(edge.source)}-{html.escape(edge.target)}" '
            f'text-anchor="end"><title>{html.escape(edge.when)}</title>{spans}</text>')
