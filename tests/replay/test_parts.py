"""The parts of record/replay, one at a time: modes, serializer, scrubbing, matchers, the package surface."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from vcr.request import Request

import pytest_agentloom.replay as replay
from pytest_agentloom.errors import CassetteFormatError, UsageError
from pytest_agentloom.replay.matchers import body, body_diff, method, url
from pytest_agentloom.replay.modes import RecordMode, parse_record_mode
from pytest_agentloom.replay.scrub import SCRUBBED, SECRET_HEADERS, Scrubber, api_keys_from_env
from pytest_agentloom.replay.serializer import dumps, loads, read_cassette, write_atomic


def make_request(payload: object, uri: str = "https://api.openai.com/v1/chat/completions",
                 headers: dict[str, str] | None = None) -> Request:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Request("POST", uri, raw, headers or {"content-type": "application/json"})


# -- modes ------------------------------------------------------------------------------------------------


def test_record_modes_are_vcrpys_names() -> None:
    assert [mode.value for mode in RecordMode] == ["none", "once", "new_episodes", "all"]
    assert parse_record_mode("NEW-EPISODES") is RecordMode.NEW_EPISODES
    assert not RecordMode.NONE.records and RecordMode.ONCE.records


def test_a_bad_record_mode_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match=r"^record mode must be one of none, once, new_episodes, all \(got 'any'\)"):
        parse_record_mode("any")


# -- serializer -------------------------------------------------------------------------------------------


def sample() -> tuple[list[Request], list[dict[str, object]]]:
    req = make_request({"model": "m", "messages": [{"role": "user", "content": "hi\nthere"}]})
    sse = b'data: {"x": 1}\n\ndata: [DONE]\n\n'
    responses = [{"status": {"code": 200, "message": "OK"},
                  "headers": {"content-type": ["text/event-stream"]}, "body": {"string": sse}}]
    return [req], responses


def test_bodies_are_stored_as_data_and_text_and_read_back() -> None:
    requests, responses = sample()
    text = dumps(None, requests, responses)
    assert text.startswith("# pytest-agentloom cassette (format 1)")
    assert "      json:\n        model: m\n" in text  # structured, not an escaped string
    assert "      text: |" in text and '        data: {"x": 1}\n' in text  # a literal block
    assert text.endswith("        data: [DONE]\n\n")  # no "..." document end marker
    provenance, loaded_requests, loaded_responses = loads(text)
    assert provenance is None
    assert json.loads(loaded_requests[0].body) == json.loads(requests[0].body)
    assert loaded_responses[0]["body"]["string"] == responses[0]["body"]["string"]
    assert loaded_responses[0]["status"] == {"code": 200, "message": "OK"}


def test_binary_bodies_round_trip_as_base64() -> None:
    requests, responses = sample()
    responses[0]["body"] = {"string": b"\xff\x00\x01"}
    responses[0]["headers"] = {"content-type": ["application/octet-stream"]}
    text = dumps(None, requests, responses)
    assert "base64: /wAB" in text
    assert loads(text)[2][0]["body"]["string"] == b"\xff\x00\x01"


@pytest.mark.parametrize(("content", "headline"), [
    ("format_version: 9\ninteractions: []\n",
     "Cassette c.yaml has format_version 9; this version of pytest-agentloom reads format_version 1."),
    ("interactions: [\n", "Cassette c.yaml is not valid YAML: *"),
    ("- just a list\n", "Cassette c.yaml is not a pytest-agentloom cassette (no 'interactions' list)."),
    ("format_version: 1\ninteractions: [{request: {}}]\n", "Cassette c.yaml: interaction 1 is malformed*"),
])
def test_unreadable_cassettes_say_how_to_re_record(content: str, headline: str) -> None:
    import fnmatch

    with pytest.raises(CassetteFormatError) as caught:
        loads(content, path="c.yaml")
    assert fnmatch.fnmatch(str(caught.value).splitlines()[0], headline)
    assert "How to fix: delete c.yaml and re-record it with --agentloom-record." in str(caught.value)


def test_writes_are_atomic_and_leave_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "c.yaml"
    write_atomic(target, "format_version: 1\ninteractions: []\n")
    write_atomic(target, "format_version: 1\ninteractions: []\n# second\n")
    assert [p.name for p in target.parent.iterdir()] == ["c.yaml"]
    assert read_cassette(target) is not None and read_cassette(tmp_path / "missing.yaml") is None


# -- scrubbing --------------------------------------------------------------------------------------------


def test_secret_headers_and_the_key_parameter_never_survive() -> None:
    headers = {name: "s3cret-value" for name in SECRET_HEADERS}
    headers |= {"Content-Type": "application/json", "X-Stainless-OS": "Linux", "anthropic-version": "2023-06-01"}
    uri = "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?alt=sse&key=AIzaSECRET"
    scrubbed = Scrubber().request(make_request({"a": 1}, uri, headers))
    assert dict(scrubbed.headers) == {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    assert scrubbed.uri.endswith(f"?alt=sse&key={SCRUBBED}")
    assert {"authorization", "x-api-key", "api-key", "x-goog-api-key", "openai-organization",
                              "openai-project", "anthropic-organization-id", "cookie", "set-cookie",
                              "x-request-id", "request-id"} <= SECRET_HEADERS


def test_responses_keep_only_what_a_replay_needs_and_are_decompressed() -> None:
    response = {
        "status": {"code": 429, "message": "Too Many Requests"},
        "headers": {"Content-Type": ["application/json"], "Content-Encoding": ["gzip"], "Set-Cookie": ["a=b"],
                    "x-request-id": ["req_1"], "retry-after": ["2"], "x-ratelimit-remaining-requests": ["0"]},
        "body": {"string": gzip.compress(b'{"error": {"message": "slow down"}}')},
    }
    scrubbed = Scrubber().response(response)
    assert scrubbed["headers"] == {"content-type": ["application/json"], "retry-after": ["2"],
                                   "x-ratelimit-remaining-requests": ["0"]}
    assert scrubbed["body"]["string"] == b'{"error": {"message": "slow down"}}'


def test_secrets_are_replaced_in_json_as_data_and_in_streams_as_text() -> None:
    secret = 'pa"ss\\wörd-1'
    scrubber = Scrubber(secrets=[secret], marker=lambda value: "<REDACTED:sha256=0123456789abcdef>")
    req = scrubber.request(make_request({"messages": [{"content": f"token {secret}!"}]}))
    assert json.loads(req.body) == {"messages": [{"content": "token <REDACTED:sha256=0123456789abcdef>!"}]}
    stream = ("data: " + json.dumps({"delta": f"echo {secret}"}) + "\n\n").encode()
    out = scrubber.response({"status": {"code": 200, "message": "OK"},
                             "headers": {"content-type": ["text/event-stream"]}, "body": {"string": stream}})
    escaped = json.dumps(secret)[1:-1].encode()  # as it appears inside the stream's JSON
    assert escaped not in out["body"]["string"]
    assert out["body"]["string"] == b'data: {"delta": "echo <REDACTED:sha256=0123456789abcdef>"}\n\n'


def test_api_keys_from_the_environment_are_scrubbed_everywhere() -> None:
    keys = api_keys_from_env({"OPENAI_API_KEY": "sk-abcdefgh123", "MY_API_KEY": "short", "HOME": "/root"})
    assert keys == ["sk-abcdefgh123"]
    scrubber = Scrubber(api_keys=keys)
    assert scrubber.text("Bearer sk-abcdefgh123") == f"Bearer {SCRUBBED}"


# -- matchers ---------------------------------------------------------------------------------------------


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
    assert many[-1] == "... and 18 more differences" and len(many) == 3


# -- the package surface ----------------------------------------------------------------------------------


def test_all_is_sorted_and_exported() -> None:
    assert replay.__all__ == sorted(replay.__all__)
    for name in replay.__all__:
        assert getattr(replay, name) is not None


def test_importing_replay_loads_no_heavy_module() -> None:
    import subprocess
    import sys

    code = ("import sys, pytest_agentloom.replay; "
            "print(sorted(m for m in ('vcr', 'deepdiff', 'openai', 'anthropic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_file_and_iterator_bodies_are_read_as_bytes() -> None:
    import io

    from_file = Scrubber().request(Request("POST", "http://x/v1/a", io.BytesIO(b'{"a": 1}'), {}))
    from_iter = Scrubber().request(Request("POST", "http://x/v1/a", iter([b'{"a":', b" 1}"]), {}))
    body(from_file, make_request({"a": 1}))
    body(from_iter, make_request({"a": 1}))
