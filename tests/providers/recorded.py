"""Bodies real providers sent, as recorded by other open-source projects (tests/providers/recordings/README.md).

Each file starts with ``# `` header lines that say where it comes from, ending with the marker line below.
:func:`wire` gives the bytes to serve for one recorded answer: a raw body as recorded, or, for the
formats that stored only the parsed JSON (vcrpy ``parsed_body``, vercel's one-JSON-per-line fixtures),
the wire framing of that API put back around the recorded JSON, which itself is kept as written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent / "recordings"
MARKER = b"# ---- recorded body below (verbatim unless noted above) ----\n"


def raw(name: str) -> bytes:
    """The recorded body of ``name``, without its provenance header."""
    data = (HERE / name).read_bytes()
    _, found, body = data.partition(MARKER)
    assert found, f"{name} has no provenance header"
    return body


def interaction(name: str, index: int = 0) -> dict[str, Any]:
    """One interaction of a vcrpy cassette."""
    return yaml.safe_load(raw(name))["interactions"][index]


def cassette_body(name: str, index: int = 0) -> tuple[int, bytes]:
    """Status and response body of a cassette's interaction, in whichever form the cassette kept it."""
    response = interaction(name, index)["response"]
    status = response["status"]["code"] if isinstance(response["status"], dict) else int(response["status"])
    if "parsed_body" in response:
        return status, json.dumps(response["parsed_body"]).encode()
    body = response["body"]
    if "string" in body:
        text = body["string"]
        return status, text.encode() if isinstance(text, str) else text
    content = body["content"]
    return status, (json.dumps(content) if body.get("type") == "json" else content).encode()


def cassette_request(name: str, index: int = 0) -> Any:
    request = interaction(name, index)["request"]
    if "parsed_body" in request:
        return request["parsed_body"]
    body = request["body"]
    return json.loads(body["string"]) if "string" in body else body["content"]


def json_lines(name: str) -> list[str]:
    return [line for line in raw(name).decode().splitlines() if line.strip()]


def named_events(name: str) -> bytes:
    """A vercel fixture of an API whose SSE names each event (OpenAI Responses, Anthropic): ``event:`` + ``data:``."""
    return "".join(f"event: {json.loads(line)['type']}\ndata: {line}\n\n" for line in json_lines(name)).encode()


def data_events(name: str, *, done: bool = False, crlf: bool = False) -> bytes:
    """A vercel fixture of an API with bare ``data:`` lines (chat completions, with ``[DONE]``; Gemini, CRLF)."""
    end = "\r\n\r\n" if crlf else "\n\n"
    body = "".join(f"data: {line}{end}" for line in json_lines(name))
    return (body + ("data: [DONE]\n\n" if done else "")).encode()
