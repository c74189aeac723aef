"""Reading JSON we did not write ourselves (checkpoints, scenario rows and cells): strict and bounded.

Python's ``json`` keeps the last of two equal keys, raises ``RecursionError`` on
deeply nested arrays and ``ValueError`` on a number of more than 4,300 digits.
:func:`load_json` turns each into a :class:`~pytest_agentloom.errors.JsonReadError`
naming the file, and refuses duplicate keys as :mod:`.yaml_io` does for YAML.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import JsonReadError

__all__ = ["MAX_JSON_DEPTH", "load_json", "nested_deeper_than"]

MAX_JSON_DEPTH = 200
"""Deepest nesting accepted (YAML files have the same limit)."""


def load_json(text: str, *, file: str = "<json>", max_chars: int = 64 * 1024 * 1024) -> Any:
    """The value of ``text``; raise :class:`JsonReadError` for invalid JSON, a duplicate key or deep nesting."""
    if len(text) > max_chars:
        raise JsonReadError(f"the JSON is {len(text):,} characters, over the limit of {max_chars:,}", file=file,
                            hint="keep large data out of this file.")
    if nested_deeper_than(text, MAX_JSON_DEPTH):
        raise JsonReadError(f"the data is nested more than {MAX_JSON_DEPTH} levels deep", file=file,
                            hint="flatten the data.")
    try:
        data = json.loads(text, object_pairs_hook=lambda pairs: _refuse_duplicates(pairs, file))
        if _SURROGATE_ESCAPE.search(text):  # "\ud800" alone reads as a string no file can be written with
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        return data
    except UnicodeEncodeError:
        raise JsonReadError("a string holds a lone surrogate escape (such as \\ud800), which is not text",
                            file=file, hint="remove the escape, or write the character it was meant to be.") from None
    except json.JSONDecodeError as exc:
        raise JsonReadError(f"invalid JSON: {exc.msg}", file=file, line=exc.lineno, column=exc.colno,
                            hint="fix the JSON syntax.") from None
    except JsonReadError:
        raise
    except (ValueError, RecursionError) as exc:  # a number over Python's digit limit
        raise JsonReadError(f"a value cannot be read: {exc}", file=file,
                            hint="write long numbers as strings.") from None


def _refuse_duplicates(pairs: list[tuple[str, Any]], file: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise JsonReadError(f"the key {key!r} appears twice in one object", file=file,
                                hint="keep one; a repeated key silently replaces the first.")
        result[key] = value
    return result


def nested_deeper_than(text: str, limit: int) -> bool:
    """Whether brackets outside strings nest deeper than ``limit``: a cheap pass, without recursion, before a
    parser that recurses (Python's, an SDK's) meets the text. A text with few brackets costs one count."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _BRACKETS.finditer(_STRINGS.sub("", text)):
        depth += 1 if match.group() in "[{" else -1
        if depth > limit:
            return True
    return False


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")
