"""A JSON text written with sorted keys stays sorted once a secret in a key is replaced.

The engine sends a tool's result to the model as JSON with sorted keys. When a tool keys its result by a
secret, the recording holds the keys sorted by the *secret* and then scrubbed, while a replay (whose tool
tape already holds the marker) sorts by the *marker*: the same result, two key orders, and the replayed
request no longer matches its recording. Sorting again after the replacement gives both the order of the
scrubbed keys, so record and replay write the same bytes.

The same holds for such a JSON text pasted inside other text (``"Summarise {state.found}"`` where a tool
returned ``json.dumps(..., sort_keys=True)``): each sorted JSON object or array found inside the text is
sorted again after its own replacement, and the text around it replaced as usual.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["resorted"]

#: how the engine and the HTTP clients write JSON: the engine's tool results, then compact bodies
_STYLES: tuple[dict[str, Any], ...] = (
    {"ensure_ascii": False}, {"ensure_ascii": True},
    {"ensure_ascii": False, "separators": (",", ":")}, {"ensure_ascii": True, "separators": (",", ":")},
)
#: how many ``{``/``[`` of a text are tried as the start of an embedded JSON text: a bound on the cost of a
#: text full of braces (one that holds more keeps the order of the ones past it: the secret is replaced anyway)
_MAX_STARTS = 256
_DECODER = json.JSONDecoder()

Span = tuple[int, int, dict[str, Any]]


def resorted(original: str, replaced: str, replace: Callable[[str], str] | None = None) -> str:
    """``replaced`` (``original`` with secrets replaced) with its keys sorted again, when ``original`` is a
    JSON object or array written with sorted keys in one of the usual styles; else, when ``replace`` (what
    made ``replaced``) is given, with each such JSON text inside ``original`` sorted again; else
    ``replaced`` unchanged.

    Only text a replacement changed is parsed, so the cost falls on the rare strings that held a secret.
    """
    if replaced == original:
        return replaced
    style = _sorted_style(original) if original[:1] in "{[" and original[-1:] in "}]" else None
    if style is not None:
        return _sorted_again(replaced, style)
    if replace is None or ("{" not in original and "[" not in original):
        return replaced
    spans = _embedded(original)
    if not spans:
        return replaced
    pieces, at = [], 0
    for start, end, found in spans:
        pieces.append(replace(original[at:start]))
        span = original[start:end]
        new = replace(span)
        pieces.append(_sorted_again(new, found) if new != span else span)
        at = end
    pieces.append(replace(original[at:]))
    result = "".join(pieces)
    # a value that straddled a span's edge is left whole by the pieces: then the plain replacement is kept
    return result if replace(result) == result else replaced


def _sorted_style(text: str) -> dict[str, Any] | None:
    """The style ``text`` is written in, when it is a JSON object or array with sorted keys."""
    try:
        data = json.loads(text)
        return next((style for style in _STYLES if json.dumps(data, sort_keys=True, **style) == text), None)
    except (ValueError, RecursionError):  # not JSON, or too deep to walk
        return None


def _sorted_again(text: str, style: dict[str, Any]) -> str:
    try:
        return json.dumps(json.loads(text), sort_keys=True, **style)
    except (ValueError, RecursionError):  # made invalid by a replacement
        return text


def _embedded(text: str) -> list[Span]:
    """The JSON objects and arrays with sorted keys inside ``text``, outermost first, left to right."""
    spans: list[Span] = []
    at, tries = 0, 0
    while tries < _MAX_STARTS:
        starts = [found for found in (text.find("{", at), text.find("[", at)) if found >= 0]
        if not starts:
            break
        start, tries = min(starts), tries + 1
        try:
            data, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            at = start + 1
            continue
        span = text[start:end]
        style = next((style for style in _STYLES if isinstance(data, dict | list) and data
                      and json.dumps(data, sort_keys=True, **style) == span), None)
        if style is None:
            at = start + 1
            continue
        spans.append((start, end, style))
        at = end
    return spans
