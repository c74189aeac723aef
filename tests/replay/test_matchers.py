"""Matching a request with a recording: bodies as data, markers, URLs, and the diff a mismatch shows."""

from __future__ import annotations

import pytest
from vcr.request import Request

from pytest_agentloom.replay._matchers import body, body_diff, method, url
from tests.replay.helpers import make_request


def test_json_bodies_match_as_data() -> None:
    recorded = make_request(b'{"model": "m", "messages": [1, 2]}')
    body(make_request(b'{"messages":[1,2],"model":"m"}'), recorded)  # key order and whitespace
    body(make_request({"model": "m", "messages": [1, 2], "user": "someone"}), recorded)  # ignored field
    with pytest.raises(AssertionError, match=r"^JSON body differs$"):
        body(make_request({"model": "m", "messages": [1, 3]}), recorded)


def test_any_two_redaction_markers_match() -> None:
    recorded = make_request({"content": "key <REDACTED:sha256=aaaaaaaaaaaaaaaa>"})
    body(make_request({"content": "key <REDACTED:sha256=bbbbbbbbbbbbbbbb>"}), recorded)


def test_urls_match_on_path_and_query_but_not_host() -> None:
    recorded = make_request({}, "http://127.0.0.1:8011/v1/chat/completions?b=2&a=1")
    url(make_request({}, "https://api.openai.com/v1/chat/completions?a=1&b=2"), recorded)
    with pytest.raises(AssertionError, match="path /v1/messages != /v1/chat/completions"):
        url(make_request({}, "https://api.anthropic.com/v1/messages"), recorded)
    with pytest.raises(AssertionError):
        method(Request("GET", "http://x/", b"", {}), recorded)


def test_diffs_are_short_sorted_paths() -> None:
    lines = body_diff({"a": 1, "list": [1, 2], "gone": True}, {"a": 2, "list": [1, 2, 3], "new": "x"})
    assert lines == ["body.a: 1 -> 2", "body.gone: removed True", "body.list[2]: added 3",
                     "body.new: added 'x'"]
    many = body_diff({f"k{i}": i for i in range(20)}, {f"k{i}": -i - 1 for i in range(20)}, limit=3)
    assert many[-1] == "... 18 more lines (pytest -vv shows all)" and len(many) == 3
