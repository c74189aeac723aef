"""The request index finds exactly what vcrpy's scan over every matcher finds, in the same order."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from vcr.matchers import requests_match
from vcr.request import Request

from pytest_agentloom.replay._match_index import RequestIndex
from pytest_agentloom.replay._matchers import DEFAULT_MATCH_ON, resolve_matchers

HOSTS = ["http://127.0.0.1:8011", "https://api.openai.com"]
PATHS = ["/v1/chat/completions", "/v1/chat/completions/", "/v1/messages", "/"]
QUERIES = ["", "?a=1&b=2", "?b=2&a=1", "?a=", "?a", "?key=<SCRUBBED>"]
METHODS = ["POST", "post", "GET"]
MESSAGES = [
    [{"role": "user", "content": "hi"}],
    [{"role": "user", "content": "hi", "name": "ann"}],
    [{"role": "user", "content": "hi", "name": "bob"}],
    [{"role": "user", "content": "key <REDACTED:sha256=aaaa>"}],
    [{"role": "user", "content": "key <REDACTED:sha256=bbbb>"}],
]


def _json_body(messages: list[dict[str, Any]], model: str, user: str | None, compact: bool) -> bytes:
    data: dict[str, Any] = {"model": model, "messages": messages}
    if user is not None:
        data["user"] = user
    if compact:
        return json.dumps(data, separators=(",", ":")).encode()
    return json.dumps(dict(reversed(list(data.items()))), indent=1).encode()  # another key order and spacing


bodies = st.one_of(
    st.builds(_json_body, st.sampled_from(MESSAGES), st.sampled_from(["m1", "m2"]),
              st.sampled_from([None, "u1", "u2"]), st.booleans()),
    st.sampled_from([b"", b"not json", b"\xff\xfe", b"[1, 2]", b"[1,2]", b"null", b"{}"]),
)
requests = st.builds(lambda method, host, path, query, body, tag: Request(
    method, host + path + query, body, {"content-type": "application/json", "x-tag": tag}),
    st.sampled_from(METHODS), st.sampled_from(HOSTS), st.sampled_from(PATHS), st.sampled_from(QUERIES), bodies,
    st.sampled_from(["a", "b"]))


def same_tag(request: Request, recorded: Request) -> bool:
    """A custom matcher that answers with a bool, as vcrpy allows."""
    return bool(request.headers.get("x-tag") == recorded.headers.get("x-tag"))


def no_first_user(request: Request, recorded: Request) -> None:
    """A custom matcher that raises, as ours do."""
    if b'"user": "u1"' in (recorded.body or b""):
        raise AssertionError("recorded for u1")


MATCH_ONS: list[tuple[Any, ...]] = [
    DEFAULT_MATCH_ON, ("method", "url"), ("body",), (*DEFAULT_MATCH_ON, same_tag),
    (same_tag, "url", no_first_user), (same_tag,), (),
]
IGNORES: list[tuple[str, ...]] = [(), ("messages[*].name",), ("model", "messages.0.name")]


def scan(request: Request, recorded: list[Request], matchers: list[Any]) -> list[int]:
    """vcrpy's own lookup: every matcher against every recording."""
    return [position for position, stored in enumerate(recorded) if requests_match(request, stored, matchers)]


@settings(max_examples=150, deadline=None)
@given(st.lists(requests, max_size=25), st.lists(requests, min_size=1, max_size=6),
       st.sampled_from(MATCH_ONS), st.sampled_from(IGNORES))
def test_the_index_finds_what_the_scan_finds(recorded: list[Request], asked: list[Request],
                                            match_on: tuple[Any, ...], ignore: tuple[str, ...]) -> None:
    matchers = resolve_matchers(match_on, ignore)
    index = RequestIndex(matchers)
    data = [(request, {"n": position}) for position, request in enumerate(recorded)]
    for request in asked:
        assert list(index.matches(request, data)) == scan(request, recorded, matchers)


@settings(max_examples=60, deadline=None)
@given(st.lists(requests, min_size=2, max_size=20), requests, st.integers(min_value=0, max_value=19))
def test_the_index_follows_appends_and_insertions(recorded: list[Request], asked: Request, at: int) -> None:
    matchers = resolve_matchers(DEFAULT_MATCH_ON)
    index = RequestIndex(matchers)
    data = [(request, {}) for request in recorded[:1]]
    list(index.matches(asked, data))
    data.extend((request, {}) for request in recorded[1:])  # vcrpy appends
    assert list(index.matches(asked, data)) == scan(asked, [r for r, _ in data], matchers)
    data.insert(min(at, len(data)), (asked, {}))  # a request recorded with no response goes where it was sent
    index.invalidate()
    assert list(index.matches(asked, data)) == scan(asked, [r for r, _ in data], matchers)
