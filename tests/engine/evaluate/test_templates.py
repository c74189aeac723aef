"""Templates: rendering rules, missing keys, brace errors and the narrower tool_args rules."""

from __future__ import annotations

import copy
import logging
import re
import unicodedata
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from pytest_agentloom.engine._evaluate.templates import (
    check_template,
    has_placeholder,
    missing_key_message,
    render,
    render_args,
    template_fields,
)
from pytest_agentloom.errors import StepError, TemplateError

LOGGER = "pytest_agentloom.templates"


class _Profile(BaseModel):
    name: str
    age: int


STATE: dict[str, Any] = {
    "question": "What changed in the last release?",
    "items": [{"id": 1, "name": "Item A"}, {"id": 2, "name": "Item B"}],
    "numbers": [1, 2, 3],
    "limits": {"max_words": 120},
    "score": 0.8712,
    "steps": {"classify": {"output": "bug", "status": "success"}},
    "name": "alice",
    "user_id": 42,
    "total": 3.14159,
    "token": "s3cr3t",
    "nothing": None,
    "profile": _Profile(name="Ada", age=36),
    "limits.max_words": 80,
}


def _render(template: str, state: dict[str, Any] | None = None) -> str:
    """Render with a hook that fails the test if a missing-key warning is not expected."""
    return render(template, STATE if state is None else state, on_missing=_unexpected_missing)


def _unexpected_missing(name: str) -> None:
    raise AssertionError(f"unexpected missing key {name}")


# --------------------------------------------------------------------------- what templates render


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param("{state.question}", "What changed in the last release?", id="state-key"),
        pytest.param("{state.limits.max_words}", "120", id="key-inside-dict"),
        pytest.param("{state.items[0].name}", "Item A", id="list-item-key"),
        pytest.param("{state.items[-1]}", "{'id': 2, 'name': 'Item B'}", id="negative-index"),
        pytest.param("{state.score:.2f}", "0.87", id="format-spec"),
        pytest.param("{state.numbers}", "[1, 2, 3]", id="whole-list"),
        pytest.param("{state.limits}", "{'max_words': 120}", id="whole-dict"),
        pytest.param("{state.steps.classify.output}", "bug", id="step-output"),
        pytest.param("{question}", "What changed in the last release?", id="bare-top-level-key"),
        pytest.param("{{ and }}", "{ and }", id="doubled-braces"),
    ],
)
def test_documented_template_table(template: str, expected: str) -> None:
    assert _render(template) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param(
            "Q: {state.question} ({state.user_id})", "Q: What changed in the last release? (42)", id="mixed"
        ),
        pytest.param("{state[items][0][name]}", "Item A", id="bracket-form"),
        pytest.param("{state[limits.max_words]}", "80", id="bracket-key-with-dot"),
        pytest.param("{state.name!r}", "'alice'", id="conversion-r"),
        pytest.param("{state.name!s}", "alice", id="conversion-s"),
        pytest.param("{state.question!a:.4}", "'Wha", id="conversion-then-spec"),
        pytest.param("{state.name:>7}", "  alice", id="align-spec"),
        pytest.param("{state.user_id:05d}", "00042", id="int-spec"),
        pytest.param("{state.nothing}", "None", id="none-is-present"),
        pytest.param("{state.profile.name}", "Ada", id="pydantic-field"),
        pytest.param("{limits.max_words}", "120", id="bare-dotted-path"),
        pytest.param("{items[1].name}", "Item B", id="bare-indexed-path"),
        pytest.param("{total:.2f}", "3.14", id="bare-with-spec"),
        pytest.param("{name!r}", "'alice'", id="bare-with-conversion"),
        pytest.param("no fields at all", "no fields at all", id="plain-text"),
        pytest.param("", "", id="empty"),
        pytest.param("{{state.name}}", "{state.name}", id="escaped-field-is-text"),
        pytest.param('{{"label": "{state.name}"}}', '{"label": "alice"}', id="json-with-doubled-braces"),
    ],
)
def test_render_more_forms(template: str, expected: str) -> None:
    assert _render(template) == expected


def test_render_accepts_any_mapping() -> None:
    assert render("{state.a}", MappingProxyType({"a": 1})) == "1"


def test_render_does_not_treat_a_state_key_called_state_specially() -> None:
    assert _render("{state.a}", {"state": {"a": "nested"}, "a": "top"}) == "top"


# --------------------------------------------------------------------------- missing keys


@pytest.mark.parametrize(
    ("template", "expected", "reported"),
    [
        pytest.param("[{state.absent}]", "[]", ["state.absent"], id="absent-key"),
        pytest.param("[{state.a.b.c.d}]", "[]", ["state.a.b.c.d"], id="deep-path"),
        pytest.param("[{state.limits.absent}]", "[]", ["state.limits.absent"], id="absent-inside-dict"),
        pytest.param("[{state.absent:.2f}]", "[]", ["state.absent"], id="with-spec"),
        pytest.param("[{state.absent:>10}]", "[]", ["state.absent"], id="with-width"),
        pytest.param("[{state.absent!r:>10}]", "[]", ["state.absent"], id="with-conversion"),
        pytest.param("[{state.items[2]}]", "[]", ["state.items[2]"], id="index-past-end"),
        pytest.param("[{state.items[-3].name}]", "[]", ["state.items[-3].name"], id="negative-past-start"),
        pytest.param("[{state.name.first}]", "[]", ["state.name.first"], id="through-a-string"),
        pytest.param("[{state.numbers.x}]", "[]", ["state.numbers.x"], id="key-on-a-list"),
        pytest.param("[{state.profile.email}]", "[]", ["state.profile.email"], id="model-unknown-field"),
        pytest.param("{state.x}{state.y}{state.x}", "", ["state.x", "state.y", "state.x"], id="each-use"),
    ],
)
def test_missing_state_values_render_empty(template: str, expected: str, reported: list[str]) -> None:
    seen: list[str] = []
    assert render(template, STATE, on_missing=seen.append) == expected
    assert seen == reported


def test_missing_state_value_logs_the_documented_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert render("Hi {state.name_typo}!", STATE) == "Hi !"
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        (LOGGER, logging.WARNING, "Template variable 'state.name_typo' not found, rendering as empty.")
    ]


def test_no_warning_is_logged_when_a_hook_is_given(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        render("{state.absent}", STATE, on_missing=lambda name: None)
    assert caplog.records == []


def test_missing_key_message_wording() -> None:
    assert (
        missing_key_message("state.name") == "Template variable 'state.name' not found, rendering as empty."
    )


@pytest.mark.parametrize(
    "template",
    [
        pytest.param("{name_typo}", id="bare-absent"),
        pytest.param("{limits.absent}", id="bare-absent-inside-dict"),
        pytest.param("{items[5]}", id="bare-index-past-end"),
        pytest.param("{name_typo!r}", id="bare-with-conversion"),
        pytest.param("{name_typo:>10}", id="bare-with-spec"),
        pytest.param("{name_typo!r:>10}", id="bare-with-conversion-and-spec"),
        pytest.param("{0}", id="positional"),
        pytest.param("{0.real}", id="positional-attribute"),
        pytest.param("{}", id="empty-field"),
        pytest.param("{:>3}", id="empty-field-with-spec"),
        pytest.param("{a..b}", id="unparsable-path"),
        pytest.param("{ name }", id="spaces-around-name"),
        pytest.param("{state}", id="bare-word-state"),
    ],
)
def test_other_fields_stay_as_written(template: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert render(template, STATE) == template
    assert caplog.records == []


def test_positional_field_is_not_a_state_key() -> None:
    assert _render("{0}", {"0": "zero"}) == "{0}"


def test_left_fields_keep_surrounding_text() -> None:
    assert _render("Dear {recipient}, re: {state.question}") == (
        "Dear {recipient}, re: What changed in the last release?"
    )


def test_lookups_are_byte_for_byte() -> None:
    composed = unicodedata.normalize("NFC", "café")
    decomposed = unicodedata.normalize("NFD", "café")
    seen: list[str] = []
    assert render("{state." + composed + "}", {composed: "ok"}) == "ok"
    assert render("{state." + decomposed + "}", {composed: "ok"}, on_missing=seen.append) == ""
    assert seen == ["state." + decomposed]


# --------------------------------------------------------------------------- template errors


@pytest.mark.parametrize(
    ("template", "message"),
    [
        pytest.param(
            'Return JSON like {"label": "x"}',
            "Prompt template error: Invalid format specifier ' \"x\"' for object of type 'str'",
            id="undoubled-json",
        ),
        pytest.param(
            "a } b", "Prompt template error: Single '}' encountered in format string", id="single-close"
        ),
        pytest.param(
            "ends with {", "Prompt template error: Single '{' encountered in format string", id="single-open"
        ),
        pytest.param(
            "{state.items[0}", "Prompt template error: expected '}' before end of string", id="unclosed-field"
        ),
        pytest.param(
            "{state.name!rr}",
            "Prompt template error: expected ':' after conversion specifier",
            id="long-conversion",
        ),
        pytest.param(
            "{state.name!z}", "Prompt template error: Unknown conversion specifier z", id="bad-conversion"
        ),
        pytest.param(
            "{state.name:.2f}",
            "Prompt template error: Unknown format code 'f' for object of type 'str'",
            id="spec-wrong-for-str",
        ),
        pytest.param(
            "{state.numbers:d}",
            "Prompt template error: unsupported format string passed to list.__format__",
            id="spec-on-list",
        ),
        pytest.param(
            "{name:.2f}",
            "Prompt template error: Unknown format code 'f' for object of type 'str'",
            id="bare-spec-wrong-for-str",
        ),
        pytest.param(
            "{state.user_id:,_}",
            "Prompt template error: Cannot specify both ',' and '_'.",
            id="two-groupings",
        ),
        pytest.param(
            "{state.a:{state.b}}",
            "Prompt template error: Invalid format specifier '{state.b}' for object of type 'str'",
            id="nested-field-in-spec",
        ),
    ],
)
def test_template_errors_carry_pythons_message(template: str, message: str) -> None:
    with pytest.raises(TemplateError) as info:
        _render(template)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "template",
    [
        pytest.param('{"label": "x"}', id="unknown-bare-name"),
        pytest.param("{state.absent: bad}", id="missing-state-value"),
        pytest.param("{absent:bad}", id="field-left-as-written"),
        pytest.param("{0:bad}", id="positional"),
        pytest.param("{:bad}", id="empty-field"),
    ],
)
def test_spec_grammar_is_checked_even_when_nothing_is_rendered(template: str) -> None:
    with pytest.raises(TemplateError, match=r"^Prompt template error: Invalid format specifier"):
        render(template, {}, on_missing=lambda name: None)


@pytest.mark.parametrize(
    ("template", "message"),
    [
        pytest.param(
            "{state.}",
            "Prompt template error: field {state.} is not a valid state path"
            " (invalid state path '': the path is empty)",
            id="empty-path",
        ),
        pytest.param(
            "{state.a..b}",
            "Prompt template error: field {state.a..b} is not a valid state path"
            " (invalid state path 'a..b': empty key at position 2)",
            id="double-dot",
        ),
        pytest.param(
            "{state[]}",
            "Prompt template error: field {state[]} is not a valid state path"
            " (invalid state path '[]': empty brackets at position 0)",
            id="empty-brackets",
        ),
    ],
)
def test_malformed_state_path_is_a_template_error(template: str, message: str) -> None:
    with pytest.raises(TemplateError) as info:
        render(template, STATE)
    assert str(info.value) == message


def test_template_error_is_a_non_retryable_step_error() -> None:
    with pytest.raises(TemplateError) as info:
        render("}", {})
    assert isinstance(info.value, StepError)
    assert info.value.code == "template_error"
    assert info.value.retryable is False


@pytest.mark.parametrize(
    "spec",
    [
        ">10",
        "*^9",
        "\n<3",
        "+.3e",
        "-",
        " d",
        ",d",
        "_x",
        "08.3f",
        "z.1f",
        "#x",
        "%",
        "=+10",
        ".3",
        "10",
        "c",
    ],
)
def test_valid_spec_grammar_passes_the_static_check(spec: str) -> None:
    check_template(f"{{state.x:{spec}}}")


# --------------------------------------------------------------------------- check_template / template_fields


@pytest.mark.parametrize(
    "template",
    [
        pytest.param("{state.absent:.2f} {unknown} {0} {} {{x}}", id="missing-and-untouched-are-fine"),
        pytest.param("{state.name:.2f}", id="type-mismatch-needs-state"),
        pytest.param("plain", id="plain"),
    ],
)
def test_check_template_accepts(template: str) -> None:
    check_template(template)


@pytest.mark.parametrize(
    "template",
    [
        pytest.param('Return JSON like {"label": "x"}', id="undoubled-json"),
        pytest.param("}", id="single-close"),
        pytest.param("{", id="single-open"),
        pytest.param("{x!q}", id="bad-conversion"),
        pytest.param("{state.a..b}", id="bad-state-path"),
    ],
)
def test_check_template_rejects(template: str) -> None:
    with pytest.raises(TemplateError, match=r"^Prompt template error: "):
        check_template(template)


def test_template_fields_lists_names_once_in_order() -> None:
    template = "{state.b:>3} {a} {state.b!r} {{lit}} {} {state.items[0].name}"
    assert template_fields(template) == ["state.b", "a", "state.items[0].name"]


def test_template_fields_reports_parse_errors() -> None:
    with pytest.raises(TemplateError):
        template_fields("{")


# --------------------------------------------------------------------------- properties

_NO_BRACES = st.text(st.characters(exclude_characters="{}"))


@given(_NO_BRACES)
def test_text_without_braces_renders_unchanged(text: str) -> None:
    assert render(text, STATE) == text


@given(st.text(st.characters()))
def test_doubled_braces_round_trip(text: str) -> None:
    escaped = text.replace("{", "{{").replace("}", "}}")
    assert render(escaped, STATE) == text
    check_template(escaped)


@given(st.text(st.characters(exclude_characters="{}")))
def test_missing_state_renders_empty_whatever_the_key(key: str) -> None:
    template = "<{state[" + key.replace("[", "").replace("]", "") + "x]}>"
    seen: list[str] = []
    assert render(template, {}, on_missing=seen.append) == "<>"
    assert len(seen) == 1


# --------------------------------------------------------------------------- tool_args


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            "https://api.example.com/users/{state.user_id}",
            "https://api.example.com/users/42",
            id="url-rendered",
        ),
        pytest.param("Total: {total:.2f}", "Total: 3.14", id="bare-with-spec-rendered"),
        pytest.param('{"k": [1, 2, 3], "v": true}', '{"k": [1, 2, 3], "v": true}', id="json-unchanged"),
        pytest.param(
            "<style>.x { color: red; }</style>", "<style>.x { color: red; }</style>", id="css-unchanged"
        ),
        pytest.param("Bearer {state.token}", "Bearer s3cr3t", id="state-placeholder"),
        pytest.param("{state[token]}", "s3cr3t", id="state-bracket-placeholder"),
        pytest.param("{name}", "alice", id="bare-name"),
        pytest.param("{name!r}", "'alice'", id="bare-conversion"),
        pytest.param("{limits.max_words}", "120", id="bare-dotted"),
        pytest.param("{items[0].name}", "Item A", id="bare-indexed"),
        pytest.param('{{"user": "{state.name}"}}', '{"user": "alice"}', id="mixed-with-doubled-braces"),
        pytest.param("{x: 1}", "{x: 1}", id="space-after-colon-unchanged"),
        pytest.param("function f() { return 1; }", "function f() { return 1; }", id="code-unchanged"),
        pytest.param("}{", "}{", id="broken-braces-without-placeholder"),
        pytest.param("{unknown}", "{unknown}", id="unknown-bare-name-kept"),
        pytest.param("no braces", "no braces", id="plain"),
        pytest.param("", "", id="empty"),
    ],
)
def test_tool_arg_strings(value: str, expected: str) -> None:
    assert render_args(value, STATE) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("{state.x}", True, id="state-dot"),
        pytest.param("{state[x]}", True, id="state-bracket"),
        pytest.param("prefix {state.", True, id="state-dot-even-unclosed"),
        pytest.param("{name}", True, id="name"),
        pytest.param("{name!r}", True, id="name-conversion-r"),
        pytest.param("{name!s}", True, id="name-conversion-s"),
        pytest.param("{name!a}", True, id="name-conversion-a"),
        pytest.param("{name:.2f}", True, id="name-spec"),
        pytest.param("{name:}", True, id="name-empty-spec"),
        pytest.param("{a.b[0].c}", True, id="dotted-indexed-name"),
        pytest.param("{{name}}", True, id="doubled-still-a-template"),
        pytest.param("{name: .2f}", False, id="space-after-colon"),
        pytest.param("{name:\t1}", False, id="tab-after-colon"),
        pytest.param("{ name }", False, id="spaces-in-braces"),
        pytest.param('{"name": 1}', False, id="quoted-key"),
        pytest.param("{}", False, id="empty-braces"),
        pytest.param("{0}", False, id="positional"),
        pytest.param("{1abc}", False, id="not-an-identifier"),
        pytest.param("{name!x}", False, id="unknown-conversion"),
        pytest.param("state.x", False, id="no-braces"),
    ],
)
def test_has_placeholder(text: str, expected: bool) -> None:
    assert has_placeholder(text) is expected


def test_documented_tool_args_example() -> None:
    tool_args = {
        "url": "https://api.example.com/users/{state.user_id}",
        "summary": "Total: {total:.2f}",
        "payload": '{"k": [1, 2, 3], "v": true}',
        "style": "<style>.x { color: red; }</style>",
        "items": "state.items",
        "headers": {"Authorization": "Bearer {state.token}"},
        "body": {"value": '{"query": "{state.q}"}', "template": False},
    }
    assert render_args(tool_args, STATE) == {
        "url": "https://api.example.com/users/42",
        "summary": "Total: 3.14",
        "payload": '{"k": [1, 2, 3], "v": true}',
        "style": "<style>.x { color: red; }</style>",
        "items": [{"id": 1, "name": "Item A"}, {"id": 2, "name": "Item B"}],
        "headers": {"Authorization": "Bearer s3cr3t"},
        "body": '{"query": "{state.q}"}',
    }


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("state.items", STATE["items"], id="whole-list"),
        pytest.param("state.limits", {"max_words": 120}, id="whole-dict"),
        pytest.param("state.user_id", 42, id="int-stays-int"),
        pytest.param("state.nothing", None, id="none-stays-none"),
        pytest.param("state.items[1].name", "Item B", id="nested-path"),
        pytest.param("state.steps.classify.output", "bug", id="step-output"),
        pytest.param(["state.numbers"], [[1, 2, 3]], id="inside-a-list"),
        pytest.param({"a": {"b": "state.score"}}, {"a": {"b": 0.8712}}, id="nested-mapping"),
    ],
)
def test_whole_value_passes_the_value_itself(value: Any, expected: Any) -> None:
    assert render_args(value, STATE) == expected


def test_whole_value_is_a_copy() -> None:
    state = copy.deepcopy(STATE)
    rendered = render_args({"items": "state.items"}, state)
    rendered["items"][0]["name"] = "changed"
    rendered["items"].append("more")
    assert state["items"] == STATE["items"]


@pytest.mark.parametrize(
    ("value", "where", "message"),
    [
        pytest.param(
            {"items": "state.missing"},
            "tool_args",
            "tool_args 'items': state key 'missing' does not exist",
            id="top",
        ),
        pytest.param(
            {"a": {"b": ["x", "state.limits.absent"]}},
            "tool_args",
            "tool_args 'a.b[1]': state key 'limits.absent' does not exist",
            id="nested",
        ),
        pytest.param(
            {"n": "state.items[9]"},
            "tool_args",
            "tool_args 'n': state key 'items[9]' does not exist",
            id="index",
        ),
        pytest.param(
            "state.missing", "input", "input: state key 'missing' does not exist", id="bare-value-where"
        ),
        pytest.param(
            {"x": "state.items and more"},
            "tool_args",
            "tool_args 'x': state key 'items and more' does not exist",
            id="starts-with-state-dot",
        ),
        pytest.param(
            {"x": "state."},
            "tool_args",
            "tool_args 'x': 'state.' is not a valid state path (invalid state path '': the path is empty)",
            id="invalid-path",
        ),
    ],
)
def test_whole_value_missing_fails_without_retry(value: Any, where: str, message: str) -> None:
    with pytest.raises(StepError) as info:
        render_args(value, STATE, where=where)
    assert str(info.value) == message
    assert info.value.code == "missing_state_key"
    assert info.value.retryable is False
    assert not isinstance(info.value, TemplateError)


def test_template_placeholders_at_any_depth() -> None:
    value = {
        "headers": {"Authorization": "Bearer {state.token}"},
        "list": [{"q": "{state.name}"}, ["{name}"]],
    }
    assert render_args(value, STATE) == {
        "headers": {"Authorization": "Bearer s3cr3t"},
        "list": [{"q": "alice"}, ["alice"]],
    }


def test_mixed_string_with_literal_braces_fails() -> None:
    with pytest.raises(TemplateError) as info:
        render_args({"body": '{"user": "{state.name}"}'}, STATE)
    assert str(info.value) == (
        "Prompt template error: Invalid format specifier ' \"{state.name}\"' for object of type 'str'"
        " (in tool_args 'body')"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            {"value": '{"query": "{state.q}"}', "template": False},
            '{"query": "{state.q}"}',
            id="json-literal",
        ),
        pytest.param({"value": "state.items", "template": False}, "state.items", id="state-dot-literal"),
        pytest.param({"value": "}{ broken", "template": False}, "}{ broken", id="broken-braces-literal"),
        pytest.param(
            {"value": {"nested": "{state.name}"}, "template": False},
            {"nested": "{state.name}"},
            id="no-recursion",
        ),
        pytest.param(
            [{"value": "{state.name}", "template": False}], ["{state.name}"], id="literal-inside-list"
        ),
        pytest.param(
            {"value": "{state.name}", "template": True},
            {"value": "alice", "template": True},
            id="template-true-is-an-ordinary-dict",
        ),
        pytest.param(
            {"value": "{state.name}", "template": False, "other": 1},
            {"value": "alice", "template": False, "other": 1},
            id="extra-key-is-an-ordinary-dict",
        ),
        pytest.param(
            {"value": "{state.name}", "template": 0},
            {"value": "alice", "template": 0},
            id="falsy-but-not-false",
        ),
        pytest.param({"template": False}, {"template": False}, id="template-key-alone"),
    ],
)
def test_literal_marker(value: Any, expected: Any) -> None:
    assert render_args(value, STATE) == expected


def test_literal_value_is_a_copy() -> None:
    inner = {"keep": ["me"]}
    rendered = render_args({"value": inner, "template": False}, STATE)
    assert rendered == inner
    assert rendered is not inner


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(5, 5, id="int"),
        pytest.param(1.5, 1.5, id="float"),
        pytest.param(True, True, id="bool"),
        pytest.param(None, None, id="none"),
        pytest.param(("a", "{name}"), ["a", "alice"], id="tuple-becomes-list"),
        pytest.param({"n": 1, "flag": False}, {"n": 1, "flag": False}, id="dict-of-scalars"),
        pytest.param({1: "{name}"}, {1: "alice"}, id="non-string-key"),
    ],
)
def test_non_strings_pass_through(value: Any, expected: Any) -> None:
    assert render_args(value, STATE) == expected


def test_render_args_returns_new_containers() -> None:
    original = {"a": [1, {"b": 2}]}
    rendered = render_args(original, STATE)
    assert rendered == original
    assert rendered is not original
    assert rendered["a"] is not original["a"]
    assert rendered["a"][1] is not original["a"][1]


def test_render_args_missing_placeholder_renders_empty_and_reports(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []
    assert render_args({"q": "x{state.absent}y"}, STATE, on_missing=seen.append) == {"q": "xy"}
    assert seen == ["state.absent"]
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        render_args({"q": "{state.absent}"}, STATE)
    assert [r.getMessage() for r in caplog.records] == [missing_key_message("state.absent")]


def test_render_args_names_the_argument_in_template_errors() -> None:
    with pytest.raises(TemplateError) as info:
        render_args({"a": [{"b": "{state.name:.2f}"}]}, STATE, where="input")
    assert str(info.value) == (
        "Prompt template error: Unknown format code 'f' for object of type 'str' (in input 'a[0].b')"
    )


def test_render_args_does_not_render_keys() -> None:
    assert render_args({"{state.name}": "v"}, STATE) == {"{state.name}": "v"}


# --------------------------------------------------------------------------- the string fast path


class _Tagged(str):
    """A str subclass whose __format__ differs: it must not take the plain-string path."""

    def __format__(self, spec: str) -> str:
        return f"<{self!s}>"


@pytest.mark.parametrize(
    ("template", "state", "expected"),
    [
        pytest.param("{state.x}", {"x": "plain"}, "plain", id="string-as-it-is"),
        pytest.param("{state.x!r}", {"x": "plain"}, "'plain'", id="conversion-still-applies"),
        pytest.param("{state.x:>7}", {"x": "plain"}, "  plain", id="spec-still-applies"),
        pytest.param("{state.x}", {"x": _Tagged("t")}, "<t>", id="str-subclass-formats-itself"),
        pytest.param("{state.x}", {"x": 7}, "7", id="non-string"),
    ],
)
def test_a_field_renders_as_format_would(template: str, state: dict[str, Any], expected: str) -> None:
    assert render(template, state) == expected == template.replace("state.", "").format(**state)


def test_a_string_value_too_long_to_render_is_refused_like_any_value() -> None:
    too_long = "a" * (10_000_000 - 1)  # its length as text is counted with two quotes, as for any string
    message = "value of {state.x} would be longer than 10,000,000 characters as text"
    with pytest.raises(TemplateError, match=re.escape(message)):
        render("{state.x}", {"x": too_long})
    assert len(render("{state.x}", {"x": too_long[:-1]})) == 10_000_000 - 2


def test_one_template_renders_each_state_it_is_given() -> None:
    """The parsed template (and its fields' paths) is kept; what it reads is the state of each call."""
    assert [render("Go on from {state.r[0]}", {"r": [value]}) for value in ("a", "b")] == ["Go on from a",
                                                                                          "Go on from b"]
    assert render("Go on from {state.r[0]}", {"r": []}, on_missing=lambda name: None) == "Go on from "
