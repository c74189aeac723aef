"""State paths: parsing, reading with MISSING, and strict output writes."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from pytest_agentloom._core.state_paths import (
    MISSING,
    OutputPathError,
    Segment,
    format_path,
    get_path,
    parse_path,
    set_path,
)
from pytest_agentloom.errors import StepError

# --------------------------------------------------------------------------- parse_path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("question", ("question",), id="plain-key"),
        pytest.param("report.summary", ("report", "summary"), id="dotted"),
        pytest.param("items[0].name", ("items", 0, "name"), id="index-then-key"),
        pytest.param("items[-1]", ("items", -1), id="negative-index"),
        pytest.param("a[key]", ("a", "key"), id="bracket-key"),
        pytest.param("a[0][1]", ("a", 0, 1), id="two-indexes"),
        pytest.param("[0]", (0,), id="leading-bracket"),
        pytest.param("[limits.max_words]", ("limits.max_words",), id="bracket-key-with-dot"),
        pytest.param("a.0", ("a", "0"), id="dotted-digits-stay-a-key"),
        pytest.param("a[1.5]", ("a", "1.5"), id="non-integer-bracket-is-key"),
        pytest.param("steps.classify.output", ("steps", "classify", "output"), id="steps-output"),
        pytest.param("café.naïve", ("café", "naïve"), id="unicode-keys"),
    ],
)
def test_parse_path_valid(text: str, expected: tuple[Segment, ...]) -> None:
    assert parse_path(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "invalid state path '': the path is empty", id="empty"),
        pytest.param("a..b", "invalid state path 'a..b': empty key at position 2", id="double-dot"),
        pytest.param(".a", "invalid state path '.a': empty key at position 0", id="leading-dot"),
        pytest.param("a.", "invalid state path 'a.': empty key at position 2", id="trailing-dot"),
        pytest.param("a.[0]", "invalid state path 'a.[0]': empty key at position 2", id="dot-before-bracket"),
        pytest.param("a[0", "invalid state path 'a[0': '[' at position 1 is never closed", id="unclosed"),
        pytest.param("a[]", "invalid state path 'a[]': empty brackets at position 1", id="empty-brackets"),
        pytest.param(
            "a]",
            "invalid state path 'a]': unexpected ']' at position 1; expected '.' or '['",
            id="stray-close",
        ),
        pytest.param(
            "a[0]b",
            "invalid state path 'a[0]b': unexpected 'b' at position 4; expected '.' or '['",
            id="text-after-bracket",
        ),
        pytest.param(
            "a[b[c]]", "invalid state path 'a[b[c]]': '[' inside brackets at position 3", id="nested-bracket"
        ),
    ],
)
def test_parse_path_rejects_malformed_text(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_path(text)
    assert str(info.value) == message


# --------------------------------------------------------------------------- format_path


@pytest.mark.parametrize(
    ("segments", "text"),
    [
        pytest.param(("items", 0, "name"), "items[0].name", id="index-then-key"),
        pytest.param(("report", "summary"), "report.summary", id="dotted"),
        pytest.param(("items", -1), "items[-1]", id="negative"),
        pytest.param((0, "a"), "[0].a", id="leading-index"),
        pytest.param(("limits.max_words",), "[limits.max_words]", id="key-with-dot"),
        pytest.param((), "", id="empty"),
    ],
)
def test_format_path(segments: tuple[Segment, ...], text: str) -> None:
    assert format_path(segments) == text


_KEY = st.text(st.characters(exclude_characters="[]"), min_size=1)
_SEGMENTS = st.lists(st.one_of(_KEY, st.integers(-1000, 1000)), min_size=1, max_size=6)


@given(_SEGMENTS)
def test_format_then_parse_round_trips(segments: list[Segment]) -> None:
    assert parse_path(format_path(segments)) == tuple(segments)


# --------------------------------------------------------------------------- get_path


class _User(BaseModel):
    name: str
    tags: list[str] = []


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")

    known: int = 1


STATE: dict[str, Any] = {
    "question": "Why?",
    "limits": {"max_words": 120},
    "items": [{"id": 1, "name": "Item A"}, {"id": 2, "name": "Item B"}],
    "user": "alice",
    "count": 3,
    "nothing": None,
    "numbered": {1: "one"},
    "pair": ("x", "y"),
    "model": _User(name="Ada", tags=["math"]),
    "loose": _Loose.model_validate({"extra_field": "kept"}),
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("question", "Why?", id="top-level"),
        pytest.param("limits.max_words", 120, id="nested-key"),
        pytest.param("items[0].name", "Item A", id="list-item-key"),
        pytest.param("items[-1].id", 2, id="negative-index"),
        pytest.param("items[-2].id", 1, id="negative-index-first"),
        pytest.param("nothing", None, id="none-is-a-value"),
        pytest.param("numbered[1]", "one", id="int-key-on-dict"),
        pytest.param("pair[1]", "y", id="tuple-index"),
        pytest.param("model.name", "Ada", id="model-field"),
        pytest.param("model.tags[0]", "math", id="model-field-then-index"),
        pytest.param("loose.extra_field", "kept", id="model-extra"),
        pytest.param("loose.known", 1, id="model-declared-field"),
    ],
)
def test_get_path_finds_values(path: str, expected: Any) -> None:
    assert get_path(STATE, parse_path(path)) == expected


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("absent", id="absent-key"),
        pytest.param("limits.absent.deeper", id="absent-at-depth"),
        pytest.param("items[2]", id="index-past-end"),
        pytest.param("items[-3]", id="negative-past-start"),
        pytest.param("user.name", id="through-a-string"),
        pytest.param("count.x", id="through-an-int"),
        pytest.param("nothing.x", id="through-none"),
        pytest.param("items.name", id="key-on-list"),
        pytest.param("limits[0]", id="int-key-absent-on-dict"),
        pytest.param("user[0]", id="string-is-not-indexed"),
        pytest.param("model.missing", id="model-unknown-field"),
        pytest.param("model[0]", id="int-on-model"),
        pytest.param("model.model_config", id="model-class-attribute-is-not-a-field"),
    ],
)
def test_get_path_returns_missing(path: str) -> None:
    assert get_path(STATE, parse_path(path)) is MISSING


def test_missing_has_a_readable_repr() -> None:
    assert repr(MISSING) == "MISSING"


def test_missing_survives_deepcopy() -> None:
    assert copy.deepcopy(MISSING) is MISSING


# --------------------------------------------------------------------------- set_path


def _state() -> dict[str, Any]:
    return {
        "user": "alice",
        "report": {"title": "T"},
        "items": [{"id": 1, "name": "A"}, {"id": 2}],
        "grid": [[1, 2], [3, 4]],
        "count": 3,
    }


@pytest.mark.parametrize(
    ("path", "check_path", "value"),
    [
        pytest.param("answer", "answer", 42, id="new-top-level-key"),
        pytest.param("user", "user", "bob", id="replace-top-level"),
        pytest.param("report.summary", "report.summary", "S", id="into-existing-dict"),
        pytest.param("draft.summary", "draft.summary", "S", id="creates-missing-dict"),
        pytest.param("a.b.c", "a.b.c", 1, id="creates-several-levels"),
        pytest.param("items[0]", "items[0]", {"id": 9}, id="replace-list-item"),
        pytest.param("items[0].name", "items[0].name", "Z", id="key-in-list-item"),
        pytest.param("items[1].name", "items[1].name", "new", id="new-key-in-list-item"),
        pytest.param("items[-1].name", "items[1].name", "last", id="negative-index"),
        pytest.param("items[0].meta.tag", "items[0].meta.tag", "t", id="creates-dict-in-list-item"),
        pytest.param("grid[1][0]", "grid[1][0]", 30, id="nested-lists"),
    ],
)
def test_set_path_writes(path: str, check_path: str, value: Any) -> None:
    state = _state()
    set_path(state, parse_path(path), value)
    assert get_path(state, parse_path(check_path)) == value


def test_set_path_keeps_sibling_keys() -> None:
    state = _state()
    set_path(state, parse_path("report.summary"), "S")
    assert state["report"] == {"title": "T", "summary": "S"}


def test_set_path_creates_plain_dicts() -> None:
    state: dict[str, Any] = {}
    set_path(state, parse_path("report.summary"), "S")
    assert state == {"report": {"summary": "S"}}


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param(
            "user.name",
            "cannot write output 'user.name': 'user' holds a str, not a mapping",
            id="through-string",
        ),
        pytest.param(
            "count.x.y",
            "cannot write output 'count.x.y': 'count' holds an int, not a mapping",
            id="through-int",
        ),
        pytest.param(
            "items[2]",
            "cannot write output 'items[2]': "
            "index 2 is out of range for 'items' (a list of 2); lists never grow",
            id="index-past-end",
        ),
        pytest.param(
            "items[-3].name",
            "cannot write output 'items[-3].name': index -3 is out of range for 'items' (a list of 2);"
            " lists never grow",
            id="negative-past-start",
        ),
        pytest.param(
            "items.name",
            "cannot write output 'items.name': 'items' holds a list, not a mapping",
            id="key-on-list",
        ),
        pytest.param(
            "report[0]",
            "cannot write output 'report[0]': "
            "'report' is a mapping, so it takes a key, not the list index [0]",
            id="index-on-dict",
        ),
        pytest.param(
            "[0]",
            "cannot write output '[0]': the state is a mapping, so it takes a key, not the list index [0]",
            id="index-on-root",
        ),
        pytest.param(
            "draft.parts[0]",
            "cannot write output 'draft.parts[0]': "
            "'draft.parts' does not exist, so there is no list to index with [0]",
            id="index-below-created-dict",
        ),
        pytest.param(
            "items[0].id.x",
            "cannot write output 'items[0].id.x': 'items[0].id' holds an int, not a mapping",
            id="through-value-in-list-item",
        ),
    ],
)
def test_set_path_refuses_and_leaves_state_untouched(path: str, message: str) -> None:
    state = _state()
    before = copy.deepcopy(state)
    with pytest.raises(OutputPathError) as info:
        set_path(state, parse_path(path), "value")
    assert str(info.value) == message
    assert state == before


def test_set_path_does_not_leave_half_created_dicts() -> None:
    state: dict[str, Any] = {}
    with pytest.raises(OutputPathError):
        set_path(state, parse_path("a.b.c[0]"), 1)
    assert state == {}


def test_set_path_rejects_empty_path() -> None:
    with pytest.raises(OutputPathError) as info:
        set_path({}, (), 1)
    assert str(info.value) == "cannot write output '': the path is empty"


def test_output_path_error_is_a_non_retryable_step_error() -> None:
    with pytest.raises(OutputPathError) as info:
        set_path({"user": "alice"}, ("user", "name"), 1)
    error = info.value
    assert isinstance(error, StepError)
    assert error.code == "output_path"
    assert error.retryable is False
    assert error.path == "user.name"
    assert error.reason == "'user' holds a str, not a mapping"


def test_set_path_does_not_write_into_models() -> None:
    state: dict[str, Any] = {"model": _User(name="Ada")}
    with pytest.raises(OutputPathError) as info:
        set_path(state, ("model", "name"), "Bob")
    assert "'model' holds a _User, not a mapping" in str(info.value)
    assert state["model"].name == "Ada"
