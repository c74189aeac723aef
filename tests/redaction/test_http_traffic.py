"""Scrubbing: what a recorded request and response keep, and every secret they lose."""

from __future__ import annotations

import gzip
import json

from vcr.request import Request

from pytest_agentloom._redaction.http_traffic import API_KEY_MARKER, SECRET_HEADERS, HttpRedactor, api_keys_from_env
from pytest_agentloom.replay._matchers import body
from tests.replay.helpers import make_request


def test_secret_headers_and_the_key_parameter_never_survive() -> None:
    headers = {name: "s3cret-value" for name in SECRET_HEADERS}
    headers |= {"Content-Type": "application/json", "X-Stainless-OS": "Linux", "anthropic-version": "2023-06-01"}
    uri = "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?alt=sse&key=AIzaSECRET"
    scrubbed = HttpRedactor().request(make_request({"a": 1}, uri, headers))
    assert dict(scrubbed.headers) == {"content-type": "application/json", "anthropic-version": "2023-06-01"}
    assert scrubbed.uri.endswith(f"?alt=sse&key={API_KEY_MARKER}")
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
    scrubbed = HttpRedactor().response(response)
    assert scrubbed["headers"] == {"content-type": ["application/json"], "retry-after": ["2"],
                                   "x-ratelimit-remaining-requests": ["0"]}
    assert scrubbed["body"]["string"] == b'{"error": {"message": "slow down"}}'


def test_secrets_are_replaced_in_json_as_data_and_in_streams_as_text() -> None:
    secret = 'pa"ss\\wörd-1'
    scrubber = HttpRedactor(secrets=[secret], marker=lambda value: "<REDACTED:sha256=0123456789abcdef>")
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
    scrubber = HttpRedactor(api_keys=keys)
    assert scrubber.text("Bearer sk-abcdefgh123") == f"Bearer {API_KEY_MARKER}"


def test_file_and_iterator_bodies_are_read_as_bytes() -> None:
    import io

    from_file = HttpRedactor().request(Request("POST", "http://x/v1/a", io.BytesIO(b'{"a": 1}'), {}))
    from_iter = HttpRedactor().request(Request("POST", "http://x/v1/a", iter([b'{"a":', b" 1}"]), {}))
    body(from_file, make_request({"a": 1}))
    body(from_iter, make_request({"a": 1}))


def _sse(*texts: str) -> bytes:
    events = [json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]}) for text in texts]
    return "".join(f"data: {event}\n\n" for event in events).encode() + b"data: [DONE]\n\n"


def test_a_secret_split_across_stream_events_is_replaced_in_what_they_add_up_to() -> None:
    secret = "correct horse battery staple canary"
    scrubber = HttpRedactor(secrets=[secret], marker=lambda value: "<REDACTED:sha256=0123456789abcdef>")
    body = _sse("The passphrase is correct ", "horse ", "battery ", "staple canary", ". Twice: ", secret, "!")
    out = scrubber.response({"status": {"code": 200, "message": "OK"},
                             "headers": {"Content-Type": ["text/event-stream"]}, "body": {"string": body}})
    text = out["body"]["string"].decode()
    for word in ("horse", "battery", "staple", "canary"):
        assert word not in text
    deltas = [json.loads(line[6:])["choices"][0]["delta"]["content"] for line in text.split("\n")
              if line.startswith("data: {")]
    assert "".join(deltas) == ("The passphrase is <REDACTED:sha256=0123456789abcdef>. Twice: "
                               "<REDACTED:sha256=0123456789abcdef>!")
    assert len(deltas) == 7 and text.endswith("data: [DONE]\n\n")  # the same events, none dropped


def test_ndjson_streams_and_anthropic_events_are_joined_the_same_way() -> None:
    scrubber = HttpRedactor(api_keys=["sk-ant-canary-0123456789"])
    ndjson = b'{"message":{"content":"key sk-ant-"}}\n{"message":{"content":"canary-0123456789 end"}}\n'
    out = scrubber.body(ndjson, "application/x-ndjson")
    assert out == b'{"message":{"content":"key <SCRUBBED>"}}\n{"message":{"content":" end"}}\n'
    sse = (b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"sk-ant-can"}}\n\n'
           b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"ary-0123456789"}}\n\n')
    assert b"ary-0123" not in scrubber.body(sse, "text/event-stream")
    untouched = b'data: {"delta": {"text": "nothing secret"}}\n\n'
    assert scrubber.body(untouched, "text/event-stream") == untouched  # unchanged events keep their bytes


def test_credentials_in_a_base_url_never_reach_the_recorded_url() -> None:
    from vcr.request import Request

    request = Request("POST", "http://proxy-user:canary-url-pass-0123@127.0.0.1:9/v1/chat/completions?key=abc",
                      b"{}", {"Content-Type": "application/json"})
    scrubbed = HttpRedactor().request(request)
    assert scrubbed.uri == f"http://127.0.0.1:9/v1/chat/completions?key={API_KEY_MARKER}"


def test_a_request_with_nothing_to_scrub_comes_back_as_it_is() -> None:
    loaded = Request("POST", "https://api.openai.com/v1/chat/completions", b'{"a": 1}',
                     {"content-type": "application/json"})
    assert HttpRedactor().request(loaded) is loaded  # a recording read back: vcrpy scrubs each one it loads
    for other in (Request("POST", "https://u:p@proxy/v1/chat", b"{}", {"content-type": "application/json"}),
                  Request("POST", "https://x/v1?key=abc", b"{}", {}),
                  Request("POST", "https://x/v1", b"{}", {"Content-Type": "application/json"}),
                  Request("POST", "https://x/v1", b"{}", {"authorization": "Bearer sk"})):
        scrubbed = HttpRedactor().request(other)
        assert scrubbed is not other
        assert HttpRedactor().request(scrubbed) is scrubbed  # and what it gives is clean
    keyed = HttpRedactor(api_keys=["sk-canary-0123456789"])
    assert keyed.request(loaded) is not loaded  # with values to replace, always a scrubbed copy
