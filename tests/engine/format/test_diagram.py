"""The workflow drawn: layers as columns, dependency and router edges, coverage marks, escaping."""

from __future__ import annotations

import html
import re

import pytest

from pytest_agentloom.engine._format.diagram import Edge, Marks, edges, layers, to_ascii, to_mermaid, to_svg
from pytest_agentloom.engine._format.loader import parse_workflow

DIAMOND = """\
name: diamond
steps:
  - {id: start, type: llm_call, prompt: p}
  - {id: left, type: llm_call, prompt: p, depends_on: [start]}
  - {id: right, type: llm_call, prompt: p, depends_on: [start]}
  - {id: join, type: llm_call, prompt: p, depends_on: [right, left]}
  - id: pick
    type: router
    depends_on: [join]
    default: other
    conditions:
      - expression: "x == '<a|b>'"
        target: done
      - {target: done, expression: "y == 1"}
  - {id: done, type: llm_call, prompt: p}
  - {id: other, type: llm_call, prompt: p}
"""


@pytest.fixture
def diamond():
    return parse_workflow(DIAMOND)


def test_layers_follow_the_engine_and_keep_file_order(diamond) -> None:
    assert layers(diamond) == [["start"], ["left", "right"], ["join"], ["pick"], ["done", "other"]]


def test_edges_join_the_conditions_of_one_target(diamond) -> None:
    assert edges(diamond)[-2:] == [Edge("pick", "done", "x == '<a|b>' or y == 1", ("x == '<a|b>'", "y == 1")),
                                   Edge("pick", "other", "default", default=True)]
    assert Edge("right", "join") in edges(diamond) and not Edge("right", "join").is_branch


def test_mermaid_escapes_labels_and_colours_by_marks(diamond) -> None:
    marks = Marks({"start": "covered", "pick": "partial", "other": "missed"}, frozenset({("pick", "other")}))
    text = to_mermaid(diamond, marks)
    assert "  n4 ==>|\"x == '#lt;a#124;b#gt;' or y == 1\"| n5" in text
    assert '  n4 -.->|"default"| n6' in text
    assert "  class n0 covered\n" in text and "  class n4 partial\n" in text and "  class n6 missed\n" in text
    assert to_mermaid(diamond, marks) == text  # the same input draws the same bytes


def test_ascii_names_the_branch_never_taken(diamond) -> None:
    text = to_ascii(diamond, Marks({"other": "missed"}, frozenset({("pick", "other")})))
    assert "layer 2: [ left : llm_call ]  [ right : llm_call ]" in text
    assert "  pick ==> other  otherwise (no condition holds) (never taken)" in text
    assert "[ other : llm_call (missed) ]" in text


def test_svg_inlined_in_a_page_names_no_namespace_url(diamond) -> None:
    assert 'xmlns="http://www.w3.org/2000/svg"' in to_svg(diamond)
    inline = to_svg(diamond, standalone=False)
    assert "http" not in inline and inline.count('class="node') == 7
    assert "<title>when x == &#x27;&lt;a|b&gt;&#x27; or y == 1</title>" in inline  # the branch in words
    assert ">x == &#x27;&lt;a|b&gt;&#x27; or y == 1</tspan>" in inline  # and written out, no hover needed


def test_svg_writes_long_branch_labels_in_full_and_spaces_the_columns_for_them(diamond) -> None:
    long = "classification.intent == 'billing_dispute' and classification.confidence > 0.8"
    flow = diamond.model_copy(update={"steps": [
        step.model_copy(update={"conditions": [step.conditions[0].model_copy(update={"expression": long})]})
        if step.type == "router" else step for step in diamond.steps]})
    drawn = to_svg(flow, standalone=False)
    lines = re.findall(r'<tspan x="[\d.]+" y="[\d.]+">([^<]*)</tspan>', drawn)
    assert html.unescape(" ".join(lines[:3])) == long  # wrapped at spaces, nothing cut
    assert max(len(line) for line in lines) <= 36
    assert "…" not in drawn
