"""A JSON text written with sorted keys stays sorted once a secret in a key is replaced.

The engine sends a tool's result to the model as JSON with sorted keys. When a tool keys its result by a
secret, the recording holds the keys sorted by the *secret* and then scrubbed, while a replay (whose tool
tape already holds the marker) sorts by the *marker*: the same result, two key orders, and the replayed
request no longer matches its recording. Sorting again after the replacement gives both the order of the
scrubbed keys, so record and replay write the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["resorted"]

#: how the engine and the HTTP clients write JSON: the engine's tool results, then compact bodies
_STYLES: tuple[dict[str, Any], ...] = (
    {"ensure_ascii": False}, {"ensure_ascii": True},
    {"ensure_ascii": False, "separators": (",", ":")}, {"ensure_ascii": True, "separators": (",", ":")},
)


def resorted(original: str, replaced: str) -> str:
    """``replaced`` (``original`` with secrets replaced) with its keys sorted again, when ``original`` is a
    JSON object or array written with sorted keys in one of the usual styles; else ``replaced`` unchanged.

    Only text a replacement changed is parsed, so the cost falls on the rare strings that held a secret.
    """
    if replaced == original or original[:1] not in "{[" or original[-1:] not in "}]":
        return replaced
    try:
        data = json.loads(original)
        for style in _STYLES:
            if json.dumps(data, sort_keys=True, **style) == original:
                return json.dumps(json.loads(replaced), sort_keys=True, **style)
    except (ValueError, RecursionError):  # not JSON, too deep to walk, or made invalid by a replacement
        return replaced
    return replaced
