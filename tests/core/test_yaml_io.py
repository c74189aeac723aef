"""The YAML reader gives PyYAML's safe data or a named error, the same with its speed-ups off
(``AGENTLOOM_SPEEDUPS=0``) and on libyaml's parser or PyYAML's own, and no text crashes it.

The reader's refusals one by one (duplicate keys, alias bombs, loops, sizes, every file type read through
it) are in ``tests/reliability/test_yaml_reader.py``; these are the properties that hold across inputs.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agentloom._core import yaml_io
from pytest_agentloom._core.speedups import ENV_VAR
from pytest_agentloom._core.yaml_io import YamlLimits, load_yaml, load_yaml_items
from pytest_agentloom.errors import YamlReadError

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

class _PythonLoader(yaml.SafeLoader):
    """PyYAML's own parser, as the reader uses it where PyYAML was built without libyaml."""


@pytest.fixture(params=["libyaml", "python"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each parser the reader may be given: libyaml's, and PyYAML's own (PyYAML built without libyaml)."""
    if request.param == "python":
        monkeypatch.setattr(yaml_io, "_Loader", _PythonLoader)
    yield request.param


def outcome(text: str, limits: YamlLimits = yaml_io.DEFAULT_LIMITS) -> tuple[str, str]:
    """``("data", repr)`` or ``("error", message)`` for ``text``."""
    try:
        return "data", repr(load_yaml(text, file="f.yaml", limits=limits))
    except YamlReadError as exc:
        return "error", str(exc)


def both_ways(text: str, monkeypatch: pytest.MonkeyPatch, limits: YamlLimits = yaml_io.DEFAULT_LIMITS) -> Any:
    """Assert the reader says the same with its speed-ups on and off, and that data is PyYAML's own."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    fast = outcome(text, limits)
    with monkeypatch.context() as off:
        off.setenv(ENV_VAR, "0")
        plain = outcome(text, limits)
    assert fast == plain
    if fast[0] == "data":
        assert fast[1] == repr(yaml.load(text, Loader=yaml_io._Loader))  # PyYAML's safe loader, on the same parser
        return load_yaml(text)
    return None


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
                    st.sampled_from(["yes", "No", "~", "0x1F", "1_000", "1:20", ".inf", "-.nan", "2001-12-14", "<<"]))
# Keys leave NaN out: a dict can hold two NaN keys (NaN equals nothing), and their dump is one key written
# twice, which the reader refuses as every repeated key (PyYAML would keep one of them)
keys = scalars.filter(lambda key: key == key)
values: st.SearchStrategy[Any] = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=25)


@SETTINGS
@given(value=values, flow=st.booleans())
def test_dumped_data_reads_back_as_pyyaml_reads_it(value: Any, flow: bool, parser: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    shared = [value, value]  # the same object twice: the dumper writes an anchor and an alias
    data = both_ways(yaml.safe_dump(shared, default_flow_style=flow, allow_unicode=True), monkeypatch)
    if isinstance(value, dict | list) and value:
        assert data[0] is data[1]  # one object per anchor, as PyYAML builds it


PIECES = [*"[]{}&*!|>-:?,#'\" \n", *string.ascii_letters[:4], "&a ", "*a", "<<: ", "!!str ", "!!int ", "!!binary ",
          "!!set ", "? ", "1", "0.5", "null", "true", "---\n", "...\n", "  ", "- ", "k: ", "\ufeff"]


@SETTINGS
@given(text=st.lists(st.sampled_from(PIECES), max_size=60).map("".join))
def test_any_text_reads_as_pyyaml_reads_it_or_is_refused_the_same_way(text: str, parser: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    both_ways(text, monkeypatch)


@pytest.mark.parametrize("text", [
    "base: &b {x: 1}\nmore:\n  <<: *b\n  y: 2\n",  # a merge key
    "base: &b {x: 1, y: 1}\nmore: {<<: [*b, {z: 3}], y: 2, list: *b}\n",
    "? [a, b]\n: c\n",  # a complex key (unhashable: refused as PyYAML refuses it)
    "when: 2001-12-14\nat: 2001-12-14 21:59:43.10 -5\n",  # timestamps
    "data: !!binary aGVsbG8=\n",
    "s: !!set {a, b}\no: !!omap [{a: 1}, {b: 2}]\np: !!pairs [{a: 1}, {a: 2}]\n",
    "s: !!str 1\ni: !!int '2'\nf: !!float '3'\nn: !!null ''\n",
    "x: !custom 1\n",
    "1: a\n1.5: b\nnull: c\ntrue: d\n",  # keys that are not strings
    "a: &x 1\nb: *x\n",  # an aliased scalar
    "",
    "# only a comment\n",
    "just text\n",
])
def test_every_kind_of_document_reads_as_pyyaml_reads_it(text: str, parser: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    both_ways(text, monkeypatch)


def test_an_anchor_is_one_shared_object(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for speedups in ("1", "0"):
        monkeypatch.setenv(ENV_VAR, speedups)
        data = load_yaml("a: &x {k: [1, 2]}\nb: *x\nc: [*x]\nd: {<<: *x, e: *x}\n")
        assert data["a"] is data["b"] is data["c"][0] is data["d"]["e"]
        assert data["d"] == {"k": [1, 2], "e": {"k": [1, 2]}}


def test_limits_are_the_same_with_speedups_off(parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join(['*' + chr(97 + n)] * 10)}]\n" for n in range(6))
    assert both_ways(bomb, monkeypatch) is None
    assert both_ways("[" * 201 + "]" * 201, monkeypatch) is None
    assert both_ways("a: &a 1\nb: [*a, *a, *a]\n", monkeypatch, YamlLimits(max_aliases=2)) is None
    assert both_ways("a: &a 1\nb: [*a, *a]\n", monkeypatch, YamlLimits(max_aliases=2)) == {"a": 1, "b": [1, 1]}


HOSTILE = {
    "block lists": "- " * 100_000 + "x",
    "flow lists": "[" * 100_000,
    "closed flow lists": "[" * 100_000 + "]" * 100_000,
    "flow maps": "{a: " * 100_000,
    "block maps": "".join("  " * level + "a:\n" for level in range(1_500)),
    "anchored lists": "".join(f"&a{level} [" for level in range(50_000)),
    "lists under a key": "x: " + "[" * 100_000 + "]" * 100_000,
    "compact lists in a map": "k:\n" + "  - " * 5_000 + "x\n",
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_deep_nesting_is_a_named_error_never_a_crash(text: str, parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for speedups in ("1", "0"):
        monkeypatch.setenv(ENV_VAR, speedups)
        with pytest.raises(YamlReadError) as info:
            load_yaml(text, file="deep.yaml")
        assert info.value.problem == "the data is nested more than 200 levels deep"
        assert info.value.line is not None


@pytest.mark.parametrize("depth", [200, 201])
def test_nesting_is_counted_alike_by_both_parsers(depth: int, parser: str) -> None:
    for text in ("[" * depth + "]" * depth, "- " * depth + "x", "{a: " * depth + "1" + "}" * depth):
        if depth == 200:
            assert load_yaml(text) == yaml.load(text, Loader=yaml_io._Loader)
        else:
            with pytest.raises(YamlReadError, match="nested more than 200 levels deep"):
                load_yaml(text)


@pytest.mark.parametrize(("text", "problem", "line"), [
    ("a: *nowhere\n", "the alias *nowhere refers to no anchor", 1),
    ("state: &s {self: *s}", "the alias *s refers to a value that contains it (a loop)", 1),
    ("a: 1\nb: 2\na: 3\n", "the key 'a' appears twice in one mapping (first on line 1)", 3),
    ("one\n---\ntwo\n", "the file holds more than one YAML document", 2),
    ("a: [\n", "invalid YAML: ", 2),
])
def test_refusals_name_the_problem_and_line(text: str, problem: str, line: int, parser: str) -> None:
    with pytest.raises(YamlReadError) as info:
        load_yaml(text, file="f.yaml")
    assert info.value.problem.startswith(problem)
    assert info.value.line == line


@SETTINGS
@given(items=st.lists(values, min_size=1, max_size=6), flow=st.booleans(), blank=st.integers(0, 2))
def test_a_lists_item_lines_are_where_its_items_start(items: Any, flow: bool, blank: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A scenario table's rows: the line each starts on, as libyaml's own node tree gives it."""
    copies = [yaml.safe_load(yaml.safe_dump(item)) for item in items]  # no object twice: no anchors
    text = yaml.safe_dump(copies, default_flow_style=flow, allow_unicode=True)
    text = text.replace("\n- ", "\n" * (1 + blank) + "- ")
    expected = [node.start_mark.line + 1 for node in yaml.compose(text, Loader=yaml.CSafeLoader).value]
    for speedups in ("1", "0"):
        monkeypatch.setenv(ENV_VAR, speedups)
        data, lines = load_yaml_items(text)
        assert repr(data) == repr(yaml.safe_load(text))
        assert lines == expected


def test_item_lines_of_any_document() -> None:
    assert load_yaml_items("- id: a\n\n- id: b\n  <<: {x: 1}\n") == ([{"id": "a"}, {"id": "b", "x": 1}], [1, 3])
    assert load_yaml_items("id: a\n") == ({"id": "a"}, None)
    assert load_yaml_items("") == (None, None)
