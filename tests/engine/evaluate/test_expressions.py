"""Tests for the safe router-expression language in ``pytest_agentloom.engine._evaluate.expressions``."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentloom.engine._evaluate.expressions import (
    EvaluationError,
    Expression,
    ExpressionSyntaxError,
    compile_expression,
)
from pytest_agentloom.errors import AgentloomError, UsageError

STATE: dict[str, Any] = {
    "category": "bug",
    "title": "  Crash On Start  ",
    "count": 3,
    "ratio": 0.5,
    "flag": True,
    "nothing": None,
    "tags": ["ui", "crash"],
    "steps": {"classify": {"output": "BUG", "score": 7}},
    "_approval": {"approved": True},
    "nested": {"list": [{"name": "first"}, {"name": "last"}]},
    "number_text": "42",
}


def run(text: str, state: dict[str, Any] | None = None) -> Any:
    """Compile and evaluate in one go, against the shared STATE by default."""
    return compile_expression(text).evaluate(STATE if state is None else state)


# --------------------------------------------------------------------------- allowed constructs

ALLOWED: list[tuple[str, str, Any]] = [
    # literals and displays
    ("str-literal", "'bug'", "bug"),
    ("int-literal", "42", 42),
    ("float-literal", "1.5", 1.5),
    ("bool-literals", "True", True),
    ("none-literal", "None", None),
    ("list-display", "[1, 'a', None]", [1, "a", None]),
    ("tuple-display", "(1, count)", (1, 3)),
    ("set-display", "{1, 2, 2}", {1, 2}),
    ("dict-display", "{'a': count, 'b': [1]}", {"a": 3, "b": [1]}),
    ("empty-dict", "{}", {}),
    # names and lookups
    ("bare-name", "category", "bug"),
    ("state-name", "state.category", "bug"),
    ("state-subscript", "state['category']", "bug"),
    ("nested-attribute", "steps.classify.output", "BUG"),
    ("mixed-lookup", "steps['classify'].score", 7),
    ("list-index", "tags[0]", "ui"),
    ("negative-index", "tags[-1]", "crash"),
    ("index-then-key", "nested.list[-1].name", "last"),
    ("underscore-key", "_approval.approved", True),
    ("underscore-via-state", "state._approval['approved']", True),
    ("string-index", "category[0]", "b"),
    ("computed-key", "steps[{'x': 'classify'}['x']].score", 7),
    # comparisons
    ("eq", "category == 'bug'", True),
    ("ne", "category != 'bug'", False),
    ("lt", "count < 5", True),
    ("le", "count <= 3", True),
    ("gt", "ratio > 1", False),
    ("ge", "count >= 4", False),
    ("in-list", "'ui' in tags", True),
    ("not-in-list", "'db' not in tags", True),
    ("in-string", "'ras' in title", True),
    ("in-dict", "'classify' in steps", True),
    ("is-none", "nothing is None", True),
    ("is-not-none", "category is not None", True),
    ("chained-true", "1 < count < 5", True),
    ("chained-false", "1 < count < 2", False),
    ("eq-mixed-types", "category == 1", False),
    # boolean logic returns operands like Python
    ("and-true", "flag and category", "bug"),
    ("and-false", "nothing and category", None),
    ("or-first", "category or 'x'", "bug"),
    ("or-fallback", "nothing or 'default'", "default"),
    ("or-all-false", "0 or ''", ""),
    ("not", "not flag", False),
    ("not-missing", "not missing", True),
    ("and-short-circuit", "False and None < 1", False),
    ("or-short-circuit", "True or 1 / 0", True),
    # arithmetic and unary
    ("neg", "-count", -3),
    ("pos", "+ratio", 0.5),
    ("add", "count + 1", 4),
    ("sub", "count - 5", -2),
    ("mul", "count * ratio", 1.5),
    ("div", "count / 2", 1.5),
    ("floordiv", "count // 2", 1),
    ("mod", "count % 2", 1),
    ("str-concat", "category + '!'", "bug!"),
    ("str-repeat", "'ab' * 2", "abab"),
    ("list-concat", "tags + ['x']", ["ui", "crash", "x"]),
    # conditional expression
    ("ifexp-true", "'hot' if count > 2 else 'cold'", "hot"),
    ("ifexp-false", "'hot' if count > 5 else 'cold'", "cold"),
    # string methods
    ("lower", "steps.classify.output.lower()", "bug"),
    ("upper", "category.upper()", "BUG"),
    ("strip", "title.strip()", "Crash On Start"),
    ("lstrip", "title.lstrip()", "Crash On Start  "),
    ("rstrip", "title.rstrip()", "  Crash On Start"),
    ("startswith", "category.startswith('b')", True),
    ("endswith", "category.endswith('x')", False),
    ("casefold", "'ÄB'.casefold()", "äb"),
    ("title", "'a b'.title()", "A B"),
    ("capitalize", "category.capitalize()", "Bug"),
    ("replace", "category.replace('u', 'a')", "bag"),
    ("split", "'a,b'.split(',')", ["a", "b"]),
    ("split-no-args", "title.split()", ["Crash", "On", "Start"]),
    ("count", "'banana'.count('a')", 3),
    ("find", "category.find('g')", 2),
    ("isdigit", "number_text.isdigit()", True),
    ("isalpha", "category.isalpha()", True),
    ("isnumeric", "category.isnumeric()", False),
    ("method-chain", "title.strip().lower().startswith('crash')", True),
    ("method-on-literal-compare", "steps.classify.output.lower() == 'bug'", True),
    # builtins
    ("len", "len(tags)", 2),
    ("str", "str(count)", "3"),
    ("int", "int(number_text) + 1", 43),
    ("float", "float('2.5')", 2.5),
    ("bool", "bool(tags)", True),
    ("abs", "abs(-count)", 3),
    ("min-args", "min(count, 1)", 1),
    ("max-iterable", "max([1, count, 2])", 3),
    ("len-of-method", "len(category.upper())", 3),
    # whitespace around the text (YAML block scalars) is ignored
    ("surrounding-whitespace", "\n  category == 'bug'\n", True),
    ("parenthesised-multiline", "(category == 'bug'\n and count > 1)", True),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in ALLOWED], ids=[c[0] for c in ALLOWED])
def test_allowed_construct_evaluates_like_python(text: str, expected: Any) -> None:
    result = run(text)
    assert result == expected
    assert type(result) is type(expected)


# --------------------------------------------------------------------------- missing data is None

MISSING: list[tuple[str, str, Any]] = [
    ("missing-name", "missing", None),
    ("missing-state-key", "state.missing", None),
    ("missing-subscript", "state['missing']", None),
    ("missing-nested", "steps.absent.output", None),
    ("missing-deep", "missing.a.b.c", None),
    ("index-out-of-range", "tags[5]", None),
    ("negative-out-of-range", "tags[-3]", None),
    ("str-key-on-list", "tags['x']", None),
    ("attribute-on-list", "tags.first", None),
    ("attribute-on-str", "category.lower", None),
    ("attribute-on-int", "count.real", None),
    ("subscript-on-int", "count[0]", None),
    ("subscript-on-none", "nothing[0]", None),
    ("method-on-missing", "state.missing.lower()", None),
    ("method-on-missing-compare", "state.missing.lower() == 'x'", False),
    ("method-chain-on-missing", "missing.strip().lower()", None),
    ("missing-equals-none", "missing == None", True),
    ("missing-is-none", "steps.classify.absent is None", True),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in MISSING], ids=[c[0] for c in MISSING])
def test_missing_data_evaluates_to_none(text: str, expected: Any) -> None:
    assert run(text) is expected


def test_attribute_access_never_uses_getattr() -> None:
    obj = SimpleNamespace(secret="s3cret")
    assert run("thing.secret", {"thing": obj}) is None


def test_state_name_shadows_a_state_key_called_state() -> None:
    state = {"state": "inner", "x": 1}
    assert run("state", state) is state


def test_builtin_names_are_state_keys_when_not_called() -> None:
    assert run("len", {"len": "a key"}) == "a key"


def test_evaluate_accepts_any_mapping() -> None:
    from types import MappingProxyType

    assert run("a.b", MappingProxyType({"a": MappingProxyType({"b": 1})})) == 1  # type: ignore[arg-type]


# --------------------------------------------------------------------------- refused at compile time

REJECTED: list[tuple[str, str, str]] = [
    ("call-open", "open('x')", "function calls are not allowed (only string methods lower, upper"),
    ("call-snippet", "open('x')", "'open(...)' at column 1"),
    ("call-eval", "eval('1')", "function calls are not allowed"),
    ("call-of-call", "len(x)(1)", "function calls are not allowed"),
    ("call-subscript", "x['f']()", "function calls are not allowed"),
    ("method-not-allowed", "category.format(1)", "method .format() is not allowed"),
    ("method-join", "','.join(tags)", "method .join() is not allowed"),
    ("keyword-args", "category.split(sep=',')", "keyword arguments are not allowed"),
    ("builtin-keyword", "max(tags, key=len)", "keyword arguments are not allowed"),
    ("starred-call-arg", "max(*tags)", "starred expressions (*x) are not allowed"),
    ("starred-list", "[*tags]", "starred expressions (*x) are not allowed"),
    ("lambda", "lambda: 1", "lambda expressions are not allowed"),
    ("list-comprehension", "[t for t in tags]", "comprehensions are not allowed"),
    ("set-comprehension", "{t for t in tags}", "comprehensions are not allowed"),
    ("dict-comprehension", "{t: 1 for t in tags}", "comprehensions are not allowed"),
    ("generator", "max(t for t in tags)", "generator expressions are not allowed"),
    ("walrus", "(x := 1)", "assignment expressions (:=) are not allowed"),
    ("f-string", "f'{category}'", "f-strings are not allowed"),
    ("power", "2 ** 100", "the ** operator is not allowed"),
    ("bit-and", "count & 1", "operator '&' is not allowed"),
    ("bit-or", "count | 1", "operator '|' is not allowed"),
    ("bit-xor", "count ^ 1", "operator '^' is not allowed"),
    ("lshift", "1 << 100", "operator '<<' is not allowed"),
    ("rshift", "count >> 1", "operator '>>' is not allowed"),
    ("matmul", "a @ b", "operator '@' is not allowed"),
    ("invert", "~count", "operator '~' is not allowed"),
    ("dunder-attribute", "category.__class__", "dunder attributes are not allowed: 'category.__class__'"),
    ("dunder-deep", "x.__class__.__mro__", "dunder attributes are not allowed"),
    ("dunder-name", "__builtins__", "dunder names are not allowed"),
    ("dunder-method", "category.__len__()", "method .__len__() is not allowed"),
    ("dict-unpacking", "{**steps}", "dict unpacking (**) is not allowed"),
    ("slice", "tags[0:1]", "slices are not allowed"),
    ("bytes", "b'x'", "bytes literals are not allowed"),
    ("complex", "1j", "complex literals are not allowed"),
    ("ellipsis", "...", "'...' is not allowed"),
    ("await", "await x", "await is not allowed"),
    ("column-reported", "count > 1 and open(1)", "'open(...)' at column 15"),
    ("column-in-characters", "'é' == __x__", "at column 8"),
    ("syntax-error", "category ==", "invalid expression syntax: invalid syntax"),
    ("unclosed-paren", "(category", "invalid expression syntax: '(' was never closed at column 1"),
    ("statement", "x = 1", "invalid expression syntax"),
    ("empty", "   ", "expression is empty"),
    ("too-deep", " + ".join(["a"] * 150), "nested too deeply"),
]


@pytest.mark.parametrize(("text", "fragment"), [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_rejected_construct_raises_syntax_error(text: str, fragment: str) -> None:
    with pytest.raises(ExpressionSyntaxError) as info:
        compile_expression(text)
    assert fragment in str(info.value)


def test_syntax_error_carries_column_and_expression() -> None:
    with pytest.raises(ExpressionSyntaxError) as info:
        compile_expression("a and b.__dict__")
    assert info.value.column == 7
    assert info.value.expression == "a and b.__dict__"
    assert info.value.code == "invalid_expression"


def test_errors_are_value_errors_and_agentloom_errors() -> None:
    for cls in (ExpressionSyntaxError, EvaluationError):
        assert issubclass(cls, ValueError)
        assert issubclass(cls, AgentloomError)


def test_compile_rejects_non_string() -> None:
    with pytest.raises(UsageError):
        compile_expression(42)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- runtime failures

RUNTIME_ERRORS: list[tuple[str, str, str]] = [
    ("none-lt-int", "nothing < 1", "'<' not supported between instances of 'NoneType' and 'int'"),
    ("str-lt-int", "'a' < 1", "'<' not supported"),
    ("missing-gt-int", "missing > 0", "'>' not supported"),
    ("method-on-int", "count.lower()", ".lower() needs a string, got int"),
    ("method-on-list", "tags.upper()", ".upper() needs a string, got list"),
    ("method-bad-arg", "category.startswith(1)", "startswith"),
    ("div-zero", "count / 0", "division by zero"),
    ("mod-zero", "count % 0", "modulo by zero"),
    ("str-plus-int", "category + 1", "can only concatenate str"),
    ("neg-str", "-category", "bad operand type"),
    ("len-of-missing", "len(missing)", "has no len()"),
    ("int-of-text", "int(category)", "invalid literal for int()"),
    ("min-empty", "min([])", "empty"),
    ("in-missing", "'a' in missing", "not iterable"),
    ("unhashable-key", "steps[[1]]", "unhashable type"),
    ("unhashable-set", "{[1]}", "unhashable type"),
    ("string-format", "'%s' % category", "string formatting with % is not supported"),
    ("repeat-bomb", "'x' * 1000000000", "result would be longer than"),
    ("list-repeat-bomb", "1000000000 * [0]", "result would be longer than"),
]


@pytest.mark.parametrize(
    ("text", "fragment"), [c[1:] for c in RUNTIME_ERRORS], ids=[c[0] for c in RUNTIME_ERRORS]
)
def test_runtime_failure_raises_evaluation_error(text: str, fragment: str) -> None:
    with pytest.raises(EvaluationError) as info:
        run(text)
    message = str(info.value)
    assert fragment in message
    assert f"router expression {text!r}" in message
    assert info.value.expression == text


def test_evaluate_rejects_non_mapping_state() -> None:
    with pytest.raises(UsageError):
        compile_expression("x").evaluate(["x"])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- names()

NAMES: list[tuple[str, str, set[str]]] = [
    ("bare-names", "steps.classify.output == category", {"steps", "category"}),
    ("state-attribute", "state.category == 'bug'", {"category"}),
    ("state-subscript", "state['_approval'].approved", {"_approval"}),
    ("builtin-not-a-key", "len(tags) > count", {"tags", "count"}),
    ("method-receiver", "title.lower()", {"title"}),
    ("literal-only", "1 < 2", set()),
    ("whole-state", "state", set()),
    ("computed-state-key", "state[category]", {"category"}),
    ("inner-keys-ignored", "steps.classify['output']", {"steps"}),
    ("every-branch", "a if b else c or d", {"a", "b", "c", "d"}),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in NAMES], ids=[c[0] for c in NAMES])
def test_names_lists_top_level_state_keys(text: str, expected: set[str]) -> None:
    assert compile_expression(text).names() == expected


# --------------------------------------------------------------------------- the Expression object


def test_expression_is_frozen_and_compares_by_source() -> None:
    expression = compile_expression("  category == 'bug' ")
    assert isinstance(expression, Expression)
    assert expression.source == "category == 'bug'"
    assert expression == compile_expression("category == 'bug'")
    assert "category == 'bug'" in repr(expression)
    with pytest.raises(dataclasses.FrozenInstanceError):
        expression.source = "x"  # type: ignore[misc]


def test_expression_is_reusable_across_states() -> None:
    expression = compile_expression("x > 1")
    assert expression.evaluate({"x": 2}) is True
    assert expression.evaluate({"x": 0}) is False


# --------------------------------------------------------------------------- property: integers

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@given(
    first=st.integers(),
    links=st.lists(st.tuples(st.sampled_from(sorted(_OPS)), st.integers()), min_size=1, max_size=4),
)
def test_integer_comparisons_match_python(first: int, links: list[tuple[str, int]]) -> None:
    text = "x0" + "".join(f" {op} x{i + 1}" for i, (op, _) in enumerate(links))
    values = [first, *(value for _, value in links)]
    state = {f"x{i}": value for i, value in enumerate(values)}
    expected = all(_OPS[op](values[i], values[i + 1]) for i, (op, _) in enumerate(links))
    assert compile_expression(text).evaluate(state) is expected


@given(left=st.integers(), op=st.sampled_from(sorted(_OPS)), right=st.integers())
def test_integer_literal_comparisons_match_python(left: int, op: str, right: int) -> None:
    assert compile_expression(f"{left} {op} {right}").evaluate({}) is _OPS[op](left, right)
