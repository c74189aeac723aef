"""Property tests: whatever the input, the loader, the YAML and JSON readers, templates, expressions and
scenario tables either succeed or raise their named error, within hypothesis' deadline.

Each property runs a bounded number of examples (``EXAMPLES``) so the suite stays fast; the deadline is generous
because two cores are shared, and a hang or a blow-up would miss it by orders of magnitude.
"""

from __future__ import annotations

import string
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentloom.engine._evaluate.expressions import EvaluationError, ExpressionSyntaxError, compile_expression
from pytest_agentloom.engine._evaluate.templates import render
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.errors import ScenarioTableError, TemplateError, WorkflowError
from pytest_agentloom.testing._scenarios.table import load_table

pytestmark = pytest.mark.slow

EXAMPLES = 150
BOUNDED = settings(max_examples=EXAMPLES, deadline=10_000, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

VALID = """\
name: triage
config: {model: gpt-4o-mini, retry: {max_retries: 2, backoff_multiplier: 2}}
state: {ticket: "hello", items: [1, 2], limits: {max: 3}}
state_schema: {ticket: {redact: false}}
steps:
  - id: classify
    type: llm_call
    prompt: "Classify {state.ticket:>10} {state.items[0]}"
    output: category
  - id: route
    type: router
    depends_on: [classify]
    conditions:
      - {expression: "category.lower() == 'bug' and len(items) > 1", target: act}
    default: act
  - {id: act, type: tool, tool_name: echo, tool_args: {x: state.limits}, output: done}
"""

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=30))
values: st.SearchStrategy[Any] = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                     st.dictionaries(st.text(max_size=10), inner, max_size=5)), max_leaves=30)
KEYS = ["name", "steps", "state", "config", "id", "type", "prompt", "output", "depends_on", "conditions",
        "expression", "target", "default", "tool_name", "tool_args", "retry", "workflow", "model", "agents",
        "state_schema", "timeout", "conversation", "llm_call", "tool", "router", "subworkflow", "agent"]
workflowish: st.SearchStrategy[Any] = st.recursive(
    st.one_of(scalars, st.sampled_from(KEYS)),
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)),
    max_leaves=40)
YAML_PIECES = [*"[]{}&*!|>-:?,#'\"%@` \n\t", *string.ascii_letters[:6], "\\u00e9", "\0", "\\ud800", "é", "<<"]


def joined(pieces: list[str], max_size: int) -> st.SearchStrategy[str]:
    """Texts made of ``pieces`` (which may be longer than one character)."""
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


YAML_TEXT = joined(YAML_PIECES, 200)


def mutate(text: str, edits: list[tuple[int, str, int]]) -> str:
    """Insert or delete characters at positions of ``text``."""
    for position, insert, delete in edits:
        where = position % (len(text) + 1)
        text = text[:where] + insert + text[where + delete:]
    return text


# -- YAML, JSON and the workflow loader ----------------------------------------------------------------------


@BOUNDED
@given(st.one_of(YAML_TEXT.map(lambda text: ("f.yaml", text)), st.text(max_size=200).map(lambda t: ("f.json", t))))
def test_the_yaml_and_json_readers_read_or_name_the_problem(case: tuple[str, str]) -> None:
    from pytest_agentloom._core.json_io import load_json  # here: bench/properties_census.py runs the other
    from pytest_agentloom._core.yaml_io import load_yaml  # properties against checkouts that lack these
    from pytest_agentloom.errors import JsonReadError, YamlReadError

    file, text = case
    reader, error = (load_yaml, YamlReadError) if file.endswith(".yaml") else (load_json, JsonReadError)
    try:
        reader(text, file=file)
    except error as exc:
        assert exc.file == file and exc.problem


@BOUNDED
@given(workflowish)
def test_any_yaml_document_loads_or_is_a_workflow_error(data: Any) -> None:
    text = yaml.safe_dump({"name": "x", "steps": data} if not isinstance(data, dict) else data)
    try:
        parse_workflow(text)
    except WorkflowError as exc:
        assert str(exc).strip()


@BOUNDED
@given(st.lists(st.tuples(st.integers(0, 10_000), joined(YAML_PIECES, 4), st.integers(0, 3)),
                min_size=1, max_size=4))
def test_a_mutated_workflow_loads_or_is_a_workflow_error(edits: list[tuple[int, str, int]]) -> None:
    try:
        parse_workflow(mutate(VALID, edits))
    except WorkflowError as exc:
        assert str(exc).strip()


@BOUNDED
@given(joined(YAML_PIECES, 300))
def test_any_text_loads_or_is_a_workflow_error(text: str) -> None:
    try:
        parse_workflow(text)
    except WorkflowError as exc:
        assert str(exc).strip()


# -- templates -------------------------------------------------------------------------------------------------

template_pieces = st.one_of(
    joined([*"{}:!<>^=.[]0123456789srax ,_-#%", "state", "x", "items"], 6),
    st.sampled_from(["{state.x}", "{state.items[0]}", "{x!r}", "{state.x:>20}", "{state.n:,.2f}", "{state.x:^9999}",
                     "{state.missing}", "{{", "}}", "{state.items}", "{state.x:>99999999}", "{state.deep}"]),
)


@BOUNDED
@given(st.lists(template_pieces, max_size=8), values)
def test_a_template_renders_or_is_a_template_error(pieces: list[str], x: Any) -> None:
    state = {"x": x, "items": [x, 1], "n": 3.5, "deep": [[x] * 300] * 300}
    try:
        text = render("".join(pieces), state, on_missing=lambda name: None)
    except TemplateError as exc:
        assert str(exc).startswith("Prompt template error: ")
    else:
        assert isinstance(text, str)


# -- expressions -----------------------------------------------------------------------------------------------

atoms = st.one_of(
    st.sampled_from(["x", "items", "state.x", "state['items']", "missing", "None", "True", "''", "'a'", "'ab' * 3",
                     "1", "-2", "2.5", "[1, 2]", "{'a': 1}", "(1, 'b')", "100000", "'a' * 100000", "[1] * 100000"]),
    st.integers(-10**6, 10**6).map(str),
    st.text(string.ascii_letters, max_size=5).map(repr),
)


def combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "//", "%", "==", "<", "in", "and", "or", "!="]),
                       inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
    method = st.tuples(inner, st.sampled_from(["lower", "upper", "strip", "split", "replace", "count", "find"]),
                       st.lists(inner, max_size=2)).map(lambda t: f"{t[0]}.{t[1]}({', '.join(t[2])})")
    call = st.tuples(st.sampled_from(["len", "str", "int", "float", "bool", "abs", "min", "max"]),
                     st.lists(inner, max_size=2)).map(lambda t: f"{t[0]}({', '.join(t[1])})")
    other = st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})")
    index = st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]")
    return st.one_of(binary, method, call, other, index, inner.map(lambda e: f"not {e}"))


expressions = st.recursive(atoms, combine, max_leaves=12)


@BOUNDED
@given(expressions, values)
def test_an_expression_evaluates_or_is_an_evaluation_error(text: str, x: Any) -> None:
    try:
        compiled = compile_expression(text)
    except ExpressionSyntaxError:
        return
    try:
        compiled.evaluate({"x": x, "items": [x, "a", 2]})
    except EvaluationError as exc:
        assert exc.expression == compiled.source


@BOUNDED
@given(joined([*"()[]{}'\"+-*/%.,:=<>!x1 _", "and", "lambda", "state", "__class__"], 60))
def test_any_text_compiles_or_is_refused(text: str) -> None:
    try:
        compile_expression(text)
    except ExpressionSyntaxError as exc:
        assert exc.expression in (text, text.strip()) and str(exc)


# -- scenario tables -------------------------------------------------------------------------------------------

rows = st.lists(st.dictionaries(st.sampled_from(["id", "workflow", "state", "script", "expect", "config", "resume",
                                                 "x"]), values, max_size=5), max_size=4)


def table_error_or_rows(suffix: str, body: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"t{suffix}"
        path.write_bytes(body)
        try:
            load_table(path, default_workflow="f.yaml")
        except ScenarioTableError as exc:
            assert exc.file == path


@BOUNDED
@given(rows)
def test_a_yaml_table_of_any_rows_loads_or_is_a_table_error(data: list[dict[str, Any]]) -> None:
    table_error_or_rows(".yaml", yaml.safe_dump(data).encode())


@BOUNDED
@given(st.binary(max_size=200), st.sampled_from([".yaml", ".jsonl", ".csv"]))
def test_any_bytes_as_a_table_load_or_are_a_table_error(body: bytes, suffix: str) -> None:
    table_error_or_rows(suffix, body)


@BOUNDED
@given(st.lists(st.lists(st.text(st.sampled_from(list('{}[]",:1a\n\r\\ ')), max_size=12), min_size=1, max_size=4),
                min_size=1, max_size=4))
def test_any_csv_loads_or_is_a_table_error(cells: list[list[str]]) -> None:
    header = "id,state,expect\n"
    lines = [",".join('"' + cell.replace('"', '""') + '"' for cell in row) for row in cells]
    table_error_or_rows(".csv", (header + "\n".join(lines)).encode())
