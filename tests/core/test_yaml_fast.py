"""The one-pass reader gives the data the two-pass reader gives, or hands the text over: never other data."""

from __future__ import annotations

import string
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentloom.core.yaml_fast import NOT_PLAIN, plain_data
from pytest_agentloom.core.yaml_io import DEFAULT_LIMITS, YamlLimits, load_yaml, parse_yaml
from pytest_agentloom.errors import YamlReadError

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def one_pass(text: str, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    loader = yaml.CSafeLoader(text) if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader(text)
    try:
        return plain_data(loader, limits)
    finally:
        loader.dispose()


def two_pass(text: str, limits: YamlLimits = DEFAULT_LIMITS) -> tuple[str, Any]:
    try:
        return "data", parse_yaml(text, limits=limits)[0]
    except YamlReadError as exc:
        return "error", str(exc)


def agrees(text: str, limits: YamlLimits = DEFAULT_LIMITS) -> Any:
    """Assert the one-pass answer is the two-pass data (or a hand-over), and that load_yaml says the same."""
    fast, slow = one_pass(text, limits), two_pass(text, limits)
    if fast is not NOT_PLAIN:
        assert slow[0] == "data" and repr(fast) == repr(slow[1])
    try:
        loaded: tuple[str, Any] = "data", load_yaml(text, limits=limits)
    except YamlReadError as exc:
        loaded = "error", str(exc)
    assert repr(loaded) == repr(slow)
    return fast


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
                    st.sampled_from(["yes", "No", "~", "0x1F", "1_000", "1:20", ".inf", "-.nan", "2001-12-14", "<<"]))
values: st.SearchStrategy[Any] = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(scalars, inner, max_size=4)),
    max_leaves=25)


@SETTINGS
@given(values, st.booleans())
def test_dumped_data_reads_back_the_same_both_ways(value: Any, flow: bool) -> None:
    shared = [value, value]  # the same object twice: the dumper writes an anchor and an alias
    agrees(yaml.safe_dump(shared, default_flow_style=flow, allow_unicode=True))


PIECES = [*"[]{}&*!|>-:?,#'\" \n", *string.ascii_letters[:4], "&a ", "*a", "<<: ", "!!str ", "!!int ", "!!binary ",
          "!!set ", "? ", "1", "0.5", "null", "true", "---\n", "...\n", "  ", "- ", "k: "]


@SETTINGS
@given(st.lists(st.sampled_from(PIECES), max_size=60).map("".join))
def test_any_text_reads_the_same_both_ways(text: str) -> None:
    agrees(text)


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n",  # a repeated key
    "base: &b {x: 1}\nmore:\n  <<: *b\n  y: 2\n",  # a merge key
    "? [a, b]\n: c\n",  # a complex key
    "when: 2001-12-14\n",  # a timestamp
    "data: !!binary aGVsbG8=\n",
    "a: &x [1, *x]\n",  # a loop
    "a: *nowhere\n",
    "one\n---\ntwo\n",
    "",
    "a: [\n",
])
def test_what_is_not_plain_is_handed_over(text: str) -> None:
    assert agrees(text) is NOT_PLAIN


def test_limits_are_the_two_pass_limits() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join(['*' + chr(97 + n)] * 10)}]\n" for n in range(6))
    assert agrees(bomb) is NOT_PLAIN
    assert agrees("[" * 300 + "]" * 300) is NOT_PLAIN
    small = YamlLimits(max_aliases=2)
    assert agrees("a: &a 1\nb: [*a, *a, *a]\n", small) is NOT_PLAIN
    assert agrees("a: &a 1\nb: [*a, *a]\n", small) == {"a": 1, "b": [1, 1]}


def test_an_anchor_is_one_shared_object_as_pyyaml_builds_it() -> None:
    data = agrees("a: &x {k: [1, 2]}\nb: *x\nc: [*x]\n")
    assert data["a"] is data["b"] is data["c"][0]


@SETTINGS
@given(st.lists(values, min_size=1, max_size=6), st.booleans(), st.integers(min_value=0, max_value=2))
def test_a_lists_item_lines_are_the_lines_the_node_tree_gives(items: Any, flow: bool, blank: int) -> None:
    """A scenario table's rows are read in one pass; the line each row starts on is the two-pass one."""
    from pytest_agentloom.core.yaml_io import load_yaml_items

    copies = [yaml.safe_load(yaml.safe_dump(item)) for item in items]  # no object twice: no anchors
    text = yaml.safe_dump(copies, default_flow_style=flow, allow_unicode=True)
    text = text.replace("\n- ", "\n" * (1 + blank) + "- ")
    data, lines = load_yaml_items(text)
    expected, root = parse_yaml(text)
    assert repr(data) == repr(expected)
    assert lines == [node.start_mark.line + 1 for node in root.value]


def test_item_lines_come_from_the_two_pass_reader_when_the_text_is_not_plain() -> None:
    from pytest_agentloom.core.yaml_io import load_yaml_items

    text = "- id: a\n\n- id: b\n  <<: {x: 1}\n"  # a merge key: handed over
    assert load_yaml_items(text) == ([{"id": "a"}, {"id": "b", "x": 1}], [1, 3])
    assert load_yaml_items("id: a\n") == ({"id": "a"}, None)
    assert load_yaml_items("") == (None, None)
