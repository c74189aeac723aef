"""What a cassette's response body may be: a size once decompressed, and a depth, checked when it is read.

A cassette can arrive in a pull request, so its bodies are untrusted input. vcrpy hands a replayed body to
the HTTP client as stored, and the client decompresses a ``content-encoding: gzip`` (or ``deflate``) body
whole: a few kilobytes that inflate to gigabytes end in ``MemoryError``. The SDK then parses the JSON with
a parser that recurses, so 100,000 nested brackets end in ``RecursionError``, which looks like a bug in
the provider (``provider_crashed``). :func:`body_problem` finds both before anything is replayed:
compressed bodies are inflated piece by piece and stopped at :data:`MAX_BODY_BYTES`, and JSON bodies
(JSON, NDJSON, server-sent events) are scanned for nesting deeper than :data:`MAX_BODY_DEPTH`, all
counted in bytes and levels, so the answer never depends on the machine.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

from .._core.inflate import MAX_BODY_BYTES, inflate
from .._core.json_io import MAX_JSON_DEPTH, nested_deeper_than

__all__ = ["MAX_BODY_BYTES", "MAX_BODY_DEPTH", "body_problem"]


MAX_BODY_DEPTH = MAX_JSON_DEPTH
"""Deepest nesting of a JSON body (the limit of every JSON and YAML file the package reads)."""

_JSON_TYPES = ("json", "event-stream")  # application/json, application/x-ndjson, text/event-stream


def body_problem(body: bytes, headers: Mapping[str, Sequence[str]]) -> str | None:
    """Why a response body cannot be replayed (``"... bytes once decompressed ..."``), or ``None`` if it can."""
    data: bytes | bytearray = body
    for encoding in reversed(_encodings(headers)):  # the last one listed was applied last
        try:
            inflated = _inflate(data, encoding)
        except zlib.error as exc:  # not valid data of its encoding
            return f"is not valid {encoding} data ({exc})"
        if inflated is None:
            return None  # an encoding the client does not decode either: it reaches the SDK as it is
        data = inflated
        if len(data) > MAX_BODY_BYTES:
            return f"inflates to more than {MAX_BODY_BYTES:,} bytes ({encoding}: {len(body):,} bytes as stored)"
    if len(data) > MAX_BODY_BYTES:
        return f"is {len(data):,} bytes, over the limit of {MAX_BODY_BYTES:,}"
    if _too_deep(data, headers):
        return f"is JSON nested more than {MAX_BODY_DEPTH} levels deep"
    return None


def _too_deep(data: bytes | bytearray, headers: Mapping[str, Sequence[str]]) -> bool:
    if data.count(b"[") + data.count(b"{") <= MAX_BODY_DEPTH:  # the usual body: two counts in C
        return False
    return _is_json(headers, data) and nested_deeper_than(data.decode("utf-8", errors="replace"), MAX_BODY_DEPTH)


def _encodings(headers: Mapping[str, Sequence[str]]) -> list[str]:
    values = next((values for name, values in headers.items() if name.lower() == "content-encoding"), [])
    names = [part.strip().lower() for value in values for part in str(value).split(",")]
    return [name for name in names if name and name != "identity"]


def _is_json(headers: Mapping[str, Sequence[str]], data: bytes | bytearray) -> bool:
    values = next((values for name, values in headers.items() if name.lower() == "content-type"), [])
    content_type = " ".join(str(value) for value in values).lower()
    return any(kind in content_type for kind in _JSON_TYPES) or data[:1] in (b"{", b"[")


def _inflate(data: bytes | bytearray, encoding: str) -> bytearray | None:
    """``data`` decompressed, stopped one byte past :data:`MAX_BODY_BYTES`; ``None`` for an encoding not ours
    (``br`` too: the HTTP clients decode it only when brotli is installed, and then as they please)."""
    if encoding == "br":
        return None
    return inflate(data, encoding, MAX_BODY_BYTES)
