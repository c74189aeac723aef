"""Hostile response bodies in a cassette (a gzip bomb, 100,000 nested brackets, 50 MB) are a named format error.

A cassette can arrive in a pull request. Before these checks a gzip bomb was inflated whole on replay
(``MemoryError``) and a deeply nested body crashed the SDK's parser (``provider_crashed``, "a bug").
"""

from __future__ import annotations

import base64
import json
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agentloom.errors import CassetteFormatError, ErrorCode
from pytest_agentloom.replay._body_limits import MAX_BODY_BYTES, MAX_BODY_DEPTH, body_problem
from pytest_agentloom.replay._cassette_file import loads

REPLY = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}


def compressed(size: int, wbits: int) -> bytes:
    """``size`` zero bytes compressed with ``wbits`` (31 gzip, 15 zlib, -15 raw deflate), built a MiB at a time."""
    packer = zlib.compressobj(6, zlib.DEFLATED, wbits)
    chunk = b"\0" * (1 << 20)
    parts = [packer.compress(chunk) for _ in range(size >> 20)]
    return b"".join([*parts, packer.flush()])


def cassette(body: dict[str, Any], headers: dict[str, list[str]] | None = None, *, count: int = 2) -> str:
    """A cassette of ``count`` interactions whose last response has ``body`` and ``headers``."""
    interaction = {
        "request": {"method": "POST", "url": "http://127.0.0.1:9/v1/chat/completions",
                    "headers": {"content-type": ["application/json"]}, "body": {"json": {"model": "m"}}},
        "response": {"status": 200, "reason": "OK", "headers": {"content-type": ["application/json"]},
                     "body": {"json": REPLY}},
    }
    last = json.loads(json.dumps(interaction))
    last["response"]["headers"].update(headers or {})
    last["response"]["body"] = body
    document = {"format_version": 1, "interactions": [interaction] * (count - 1) + [last]}
    return yaml.safe_dump(document, width=10**9)


def refused(text: str) -> CassetteFormatError:
    with pytest.raises(CassetteFormatError) as info:
        loads(text, path="cassettes/test_x.yaml")
    assert info.value.code == ErrorCode.CASSETTE_FORMAT
    message = str(info.value)
    assert message.startswith("Cassette cassettes/test_x.yaml: the response body of interaction 2 ")
    assert "delete cassettes/test_x.yaml and re-record it with --agentloom-record" in message
    return info.value


@pytest.mark.parametrize(("encoding", "wbits"), [("gzip", 31), ("x-gzip", 31), ("deflate", 15), ("deflate", -15)])
def test_a_compression_bomb_stops_at_the_cap_without_inflating_it(encoding: str, wbits: int) -> None:
    bomb = compressed(128 << 20, wbits)  # 128 MiB of zeros in about 128 KB
    text = cassette({"base64": base64.b64encode(bomb).decode()}, {"content-encoding": [encoding]})

    tracemalloc.start()
    try:
        error = refused(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert f"inflates to more than {MAX_BODY_BYTES:,} bytes ({encoding}: {len(bomb):,} bytes as stored)" in str(error)
    assert peak < MAX_BODY_BYTES * 5 // 4  # counted bytes: the cap and a piece, never the 128 MiB


def test_a_compressed_body_under_the_cap_replays_as_stored() -> None:
    body = zlib.compress(json.dumps(REPLY).encode(), wbits=31)
    _, _, responses = loads(cassette({"base64": base64.b64encode(body).decode()}, {"content-encoding": ["gzip"]}))
    assert responses[1]["body"]["string"] == body and responses[1]["headers"]["content-encoding"] == ["gzip"]


def test_a_body_that_is_not_what_its_encoding_says_is_refused() -> None:
    error = refused(cassette({"text": "plainly not gzip"}, {"content-encoding": ["gzip"]}))
    assert "is not valid gzip data" in str(error)


def test_an_encoding_no_client_decodes_is_left_to_the_client() -> None:
    assert body_problem(b"\x00\x01", {"content-encoding": ["zstd-from-the-future"]}) is None


@pytest.mark.parametrize(("body", "content_type"), [
    ({"text": "[" * 100_000 + "]" * 100_000}, "application/json"),
    ({"text": "data: " + '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n\n"}, "text/event-stream"),
    ({"base64": base64.b64encode(b"[" * 300 + b"]" * 300).decode()}, "application/octet-stream"),
])
def test_a_body_nested_past_the_limit_is_refused(body: dict[str, Any], content_type: str) -> None:
    error = refused(cassette(body, {"content-type": [content_type]}))
    assert f"is JSON nested more than {MAX_BODY_DEPTH} levels deep" in str(error)


def test_brackets_in_text_that_is_not_json_are_only_text() -> None:
    assert body_problem(b"a" + b"[" * 5000, {"content-type": ["text/plain"]}) is None
    assert body_problem(json.dumps({"text": "[" * 5000}).encode(), {"content-type": ["application/json"]}) is None


def test_a_50_mb_json_body_is_refused_by_its_size() -> None:
    huge = json.dumps({**REPLY, "padding": ["a" * 1000] * 50_000}).encode()  # as loads() hands it over
    assert body_problem(huge, {"content-type": ["application/json"]}) == (
        f"is {len(huge):,} bytes, over the limit of {MAX_BODY_BYTES:,}")
    assert body_problem(huge[: MAX_BODY_BYTES], {"content-type": ["application/json"]}) is None  # at the cap: read


def test_the_example_cassette_with_a_bomb_in_it_fails_closed_when_the_session_opens(tmp_path: Path) -> None:
    from pytest_agentloom.replay import CassetteConfig, CassetteSession, RecordMode

    source = (Path(__file__).resolve().parents[2] / "cassettes" / "examples" / "support_triage"
              / "test_example_triage_recorded.py" / "test_question_is_answered.yaml")
    document = yaml.safe_load(source.read_text())
    response = document["interactions"][0]["response"]
    response["headers"]["content-encoding"] = ["gzip"]
    response["body"] = {"base64": base64.b64encode(compressed(64 << 20, 31)).decode()}
    path = tmp_path / "bomb.yaml"
    path.write_text(yaml.safe_dump(document, width=10**9))
    with pytest.raises(CassetteFormatError, match="interaction 1 inflates to more than"):
        CassetteSession(CassetteConfig(path=path, mode=RecordMode.NONE)).open()
