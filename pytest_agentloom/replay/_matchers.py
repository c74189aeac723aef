"""Request matchers: plain functions of (request, recorded) that raise ``AssertionError`` with a reason.

They raise explicitly instead of using ``assert``: pytest rewrites the asserts
of plugin packages, and vcrpy calls every matcher against every recording on
each lookup, so a rewritten assert would build an explanation for each miss.

A replayed request is matched against the cassette's recorded ones by every
matcher of ``match_on``, in order (default: ``method``, ``url``, ``body``):

- ``method``: the HTTP method.
- ``url``: the path and the query parameters (in any order). Scheme, host and
  port are *not* compared, so a cassette recorded against a local or proxy
  server (``OPENAI_BASE_URL=http://127.0.0.1:8011/v1``) replays with the
  default base URL and no environment at all.
- ``body``: JSON bodies compared as data: key order and whitespace don't
  matter, fields of :data:`IGNORED_BODY_FIELDS` are left out, and any two
  ``<REDACTED:sha256=…>`` markers compare equal. Other bodies compare as bytes.

Identical requests (a tool loop, a retried call) each match the first
recording not yet played, so they replay in recorded order.

``ignore`` paths (``metadata.trace_id``, ``messages[*].name``; see
:mod:`.._core.patterns`) are left out of the ``body`` comparison and of the
mismatch diff. :data:`MATCHERS` is the registry of matchers by name; add your
own function there, or name it ``module:function``, to use it in ``match_on``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from .._core.diffs import diff_report, path_diff
from .._core.patterns import DROP, edit_path, split_path
from .._redaction.policy import POLICY
from ..errors import render_message

if TYPE_CHECKING:
    from vcr.request import Request

__all__ = [
    "DEFAULT_MATCH_ON",
    "IGNORED_BODY_FIELDS",
    "MATCHERS",
    "body",
    "body_data",
    "body_diff",
    "body_difference_count",
    "index_key",
    "matcher_names",
    "method",
    "resolve_matchers",
    "url",
]

#: Top-level JSON body fields that identify the caller rather than the call (they may differ between
#: the machine that recorded and the one that replays); never compared.
IGNORED_BODY_FIELDS: tuple[str, ...] = ("user", "metadata")


def method(request: Request, recorded: Request) -> None:
    """Same HTTP method."""
    if request.method.upper() != recorded.method.upper():
        raise AssertionError(f"method {request.method} != {recorded.method}")


def _path(request: Request) -> str:
    path = request.parsed_uri.path or "/"
    return path.rstrip("/") or "/"


def url(request: Request, recorded: Request) -> None:
    """Same path and query parameters; scheme, host and port are not compared."""
    mine, theirs = _path(request), _path(recorded)
    if mine != theirs:
        raise AssertionError(f"path {mine} != {theirs}")
    query_mine = sorted(parse_qsl(request.parsed_uri.query, keep_blank_values=True))
    query_theirs = sorted(parse_qsl(recorded.parsed_uri.query, keep_blank_values=True))
    if query_mine != query_theirs:
        raise AssertionError(f"query {query_mine} != {query_theirs}")


@functools.lru_cache(maxsize=512)
def _normalised(raw: bytes, ignore: tuple[str, ...] = ()) -> tuple[str, Any] | None:
    """The canonical JSON text of a body (for equality) and its data (for diffs); ``None`` if not JSON."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(data, dict):
        data = {key: value for key, value in data.items() if key not in IGNORED_BODY_FIELDS}
    for path in ignore:
        data, _ = edit_path(data, split_path(path), lambda _value: DROP)
    data = _unify_markers(data)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")), data


def _unify_markers(value: Any) -> Any:
    if isinstance(value, str):
        return POLICY.same_in_replay(value)  # the redaction policy's rule: any two markers match
    if isinstance(value, dict):
        return {key: _unify_markers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unify_markers(item) for item in value]
    return value


def _raw(request: Request) -> bytes:
    value = request.body
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value
    return bytes(request.body_bytes or b"")  # a file or an iterator, materialised by vcrpy


def body_data(request: Request, ignore: tuple[str, ...] = ()) -> Any:
    """The body as the ``body`` matcher sees it: normalised JSON data, else the text (or bytes)."""
    raw = _raw(request)
    parsed = _normalised(raw, ignore)
    if parsed is not None:
        return parsed[1]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def body(request: Request, recorded: Request, ignore: tuple[str, ...] = ()) -> None:
    """Same body: JSON compared as data (see the module docs), anything else byte for byte."""
    mine, theirs = _raw(request), _raw(recorded)
    if mine == theirs:
        return
    left, right = _normalised(mine, ignore), _normalised(theirs, ignore)
    if left is not None and right is not None:
        # no diff here: vcrpy runs matchers against every recording on every lookup; the mismatch error
        # computes one diff, against the closest recording only
        if left[0] != right[0]:
            raise AssertionError("JSON body differs")
        return
    raise AssertionError("body differs (not JSON, compared as bytes)")


MATCHERS: dict[str, Callable[[Any, Any], None]] = {"method": method, "url": url, "body": body}
DEFAULT_MATCH_ON: tuple[str, ...] = ("method", "url", "body")


def resolve_matchers(names: Sequence[str | Callable[[Any, Any], None]],
                     ignore: Sequence[str] = ()) -> list[Callable[[Any, Any], None]]:
    """Matcher functions for names of :data:`MATCHERS` or ``module:function`` (functions pass through).

    With ``ignore``, the ``body`` matcher leaves those paths out.
    """
    out = []
    for name in names:
        if callable(name):
            out.append(name)
        elif name == "body" and ignore:
            out.append(_BodyIgnoring(tuple(ignore)))
        elif name in MATCHERS:
            out.append(MATCHERS[name])
        elif isinstance(name, str) and ":" in name:
            out.append(_imported(name))
        else:
            from ..errors import UsageError

            raise UsageError(render_message(f"unknown matcher {name!r}.",
                                            hint=f"use one of {', '.join(sorted(MATCHERS))}, "
                                                 "a function, or 'module:function' naming one."))
    return out


@dataclasses.dataclass(frozen=True)
class _BodyIgnoring:
    """The ``body`` matcher leaving the paths ``ignore`` out: a value (equal for equal paths), so that
    :func:`index_key` reads the paths off the matcher itself instead of a registry of matchers."""

    ignore: tuple[str, ...]
    __name__ = "body"  # vcrpy and our messages name the matcher

    def __call__(self, request: Request, recorded: Request) -> None:
        body(request, recorded, self.ignore)


# -- index keys --------------------------------------------------------------------------------------------


def _method_key(request: Request) -> str:
    return request.method.upper()  # type: ignore[no-any-return]


def _url_key(request: Request) -> tuple[str, tuple[tuple[str, str], ...]]:
    return _path(request), tuple(sorted(parse_qsl(request.parsed_uri.query, keep_blank_values=True)))


def _body_key(request: Request, ignore: tuple[str, ...] = ()) -> tuple[str, Any]:
    raw = _raw(request)
    parsed = _normalised(raw, ignore)
    return ("raw", raw) if parsed is None else ("json", parsed[0])


def index_key(matcher: Callable[[Any, Any], Any]) -> Callable[[Request], Any] | None:
    """For a built-in matcher, a function of one request such that two requests have equal keys exactly when
    the matcher passes for them (what :mod:`._match_index` buckets recordings by); ``None`` for any other matcher.

    ``body``: equal raw bytes are equal JSON texts, and a JSON body never equals a non-JSON one byte for
    byte, so (kind, canonical text or bytes) is the key.
    """
    if matcher is method:
        return _method_key
    if matcher is url:
        return _url_key
    if matcher is body:
        return _body_key
    if isinstance(matcher, _BodyIgnoring):
        return functools.partial(_body_key, ignore=matcher.ignore)
    return None


def _imported(name: str) -> Callable[[Any, Any], None]:
    import importlib

    from ..errors import UsageError

    module, _, attribute = name.partition(":")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise UsageError(render_message(f"matcher {name!r} cannot be imported ({exc}).",
                                        hint="name a function as "
                                             "'package.module:function', importable from the rootdir.")) from None
    if not callable(found):
        raise UsageError(f"matcher {name!r} is not a function (got {type(found).__name__}).")
    return found  # type: ignore[no-any-return]


def matcher_names(names: Sequence[Any], ignore: Sequence[str] = ()) -> str:
    """How a mismatch message names the matching: ``method, url, body (ignoring metadata.id), mine``."""
    shown = []
    for name in names:
        text = name if isinstance(name, str) else getattr(name, "__name__", repr(name))
        if text == "body" and ignore:
            text += f" (ignoring {', '.join(ignore)})"
        shown.append(text)
    return ", ".join(shown)


# -- diffs -------------------------------------------------------------------------------------------------


def body_diff(recorded: Any, requested: Any, *, limit: int = 12) -> list[str]:
    """Lines ``body.path: recorded -> requested``, sorted by path, at most ``limit`` (see :mod:`.._core.diffs`)."""
    return path_diff(recorded, requested, root="body", limit=limit, width=70)


def body_difference_count(recorded: Any, requested: Any) -> int:
    """How many places of two bodies differ (to find the closest recording), without rendering them."""
    return diff_report(recorded, requested, limit=1).count
