"""Volatile response fields: what may change between two recordings of the same answer.

A provider gives every response a fresh ``id``, a ``created`` time and a ``system_fingerprint``, and
every HTTP answer a ``date`` and a request id. Re-recording a test whose calls and answers did not
change would still rewrite its cassette for those alone, and bury the real changes of a re-recording
in noise. So a re-recorded interaction that equals the one on disk *but for these fields* keeps the
old one, byte for byte (see ``CassetteSession.write``); any other difference (the text, the usage, a
tool call) writes the new one.

Paths use the syntax of cassette ignores and snapshots (``message.id``, ``output[*].id``); a path
``headers.<name>`` names a response header. Streamed bodies (SSE, NDJSON) are compared event by event,
each event's JSON with the same paths left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._core.patterns import DROP, edit_path, split_path
from ..errors import UsageError, render_message

__all__ = ["DEFAULT_RESPONSE_IGNORE", "ResponseHook", "apply_hook", "same_but_volatile"]

#: The response fields a re-recording may change without rewriting the cassette: ids, creation times and
#: fingerprints of the OpenAI, Anthropic (``message.id`` in a stream), Responses and Gemini APIs, and the
#: date and request-id headers.
DEFAULT_RESPONSE_IGNORE: tuple[str, ...] = (
    "id", "created", "created_at", "system_fingerprint", "message.id", "response.id", "response.created_at",
    "responseId", "headers.date", "headers.x-request-id", "headers.request-id",
)

#: vcrpy's ``before_record_response`` form: the (scrubbed) response dict in, the response to record out.
ResponseHook = Callable[[dict[str, Any]], dict[str, Any]]


def apply_hook(hook: ResponseHook | None, response: dict[str, Any]) -> dict[str, Any]:
    """``hook(response)``, which must give back a response dict (``None`` is refused: a replay needs it)."""
    if hook is None:
        return response
    changed = hook(response)
    if not isinstance(changed, dict):
        name = getattr(hook, "__qualname__", repr(hook))
        raise UsageError(render_message(
            f"before_record_response {name} returned {type(changed).__name__}, not the response to record.",
            hint="return the response dict (changed or not); every request of a replay needs its response."))
    return changed


def same_but_volatile(old: Mapping[str, Any], new: Mapping[str, Any], ignore: Iterable[str]) -> bool:
    """Whether two interactions (as :func:`._cassette_file.interaction_document` gives them) are the same
    request, and the same response but for the fields ``ignore`` names."""
    if old.get("request") != new.get("request"):
        return False
    paths = tuple(ignore)
    return _response_key(old.get("response") or {}, paths) == _response_key(new.get("response") or {}, paths)


def _response_key(response: Mapping[str, Any], paths: tuple[str, ...]) -> Any:
    headers = {name for path in paths if path.lower().startswith("headers.") for name in [path[8:].lower()]}
    body_paths = [split_path(path) for path in paths if not path.lower().startswith("headers.")]
    kept = {name: value for name, value in (response.get("headers") or {}).items() if name.lower() not in headers}
    return (response.get("status"), response.get("reason"), kept, _body_key(response.get("body"), body_paths))


def _body_key(body: Any, paths: list[list[str]]) -> Any:
    if not isinstance(body, dict):
        return body
    if "json" in body:
        return _without(body["json"], paths)
    if "text" in body:
        return [_line_key(line, paths) for line in str(body["text"]).split("\n")]
    return body


def _line_key(line: str, paths: list[list[str]]) -> Any:
    """One line of a stream: an SSE ``data:`` event or an NDJSON line as data without the volatile fields."""
    prefix, payload = ("data: ", line[6:]) if line.startswith("data: ") else ("", line)
    if not payload.lstrip().startswith("{"):
        return line
    try:
        data = json.loads(payload)
    except ValueError:
        return line
    return prefix, _without(data, paths)


def _without(data: Any, paths: list[list[str]]) -> Any:
    for parts in paths:
        data, _ = edit_path(data, parts, lambda _value: DROP)
    return data
