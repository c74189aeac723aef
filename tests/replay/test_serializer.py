"""The cassette file: bodies as readable data and text, binary as base64, atomic writes, unreadable files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from vcr.request import Request

from pytest_agentloom.errors import CassetteFormatError
from pytest_agentloom.replay._cassette_file import dumps, loads, read_cassette, write_atomic
from tests.replay.helpers import make_request


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
