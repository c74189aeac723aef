"""Scrubbing: what never reaches a cassette, applied before anything is written or matched.

Three layers, in order:

1. **Headers.** Only the headers a replay needs are kept (:data:`KEPT_REQUEST_HEADERS`,
   :data:`KEPT_RESPONSE_HEADERS`); everything else is dropped. That removes,
   among others, every header of :data:`SECRET_HEADERS` (``authorization``,
   ``x-api-key``, ``api-key``, ``x-goog-api-key``, ``openai-organization``,
   ``openai-project``, ``anthropic-organization-id``, cookies) and request ids.
2. **URLs.** Credentials in the URL (``http://user:secret@proxy/v1``) are dropped;
   the ``key`` query parameter (Gemini) becomes ``<SCRUBBED>``.
3. **Values.** In bodies (JSON walked as data, SSE/NDJSON as text), every value
   of a state key that the workflow's redaction patterns mark becomes the
   engine's own ``<REDACTED:sha256=…>`` marker. API keys found in the
   environment (``*_API_KEY``, ``*_TOKEN``, ...) or given to the cassette become ``<SCRUBBED>``
   wherever they appear.

The same scrubbing runs on every request at replay time before matching, so a
redacted prompt still matches its recording. Matchers also treat any two
redaction markers as equal, so a replay whose secret differs from the one
recorded (a CI job with a dummy value) still matches.
"""

from __future__ import annotations

import copy
import json
import re
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .._core.inflate import MAX_BODY_BYTES, inflate
from ..errors import UnrecordableResponseError, render_message
from .api_keys import API_KEY_MARKER, api_keys_from_env, replace_each
from .policy import POLICY, RedactionPolicy
from .sorted_json import resorted

if TYPE_CHECKING:
    from vcr.request import Request

__all__ = [
    "API_KEY_MARKER",
    "KEPT_REQUEST_HEADERS",
    "KEPT_RESPONSE_HEADERS",
    "SECRET_HEADERS",
    "SECRET_QUERY_PARAMS",
    "HttpRedactor",
    "api_keys_from_env",
    "redact_data",
]

SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "openai-organization",
    "openai-project", "anthropic-organization-id", "cookie", "set-cookie", "x-request-id", "request-id",
})
SECRET_QUERY_PARAMS = frozenset({"key"})
KEPT_REQUEST_HEADERS = frozenset({"content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta"})
KEPT_RESPONSE_HEADERS = frozenset({"content-type", "retry-after", "retry-after-ms", "x-should-retry"})
KEPT_RESPONSE_HEADER_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")


def redact_data(value: Any, redact: Callable[[str], str]) -> Any:
    """A copy of JSON-like data with ``redact`` applied to every string, keys included.

    Data is scrubbed *before* it is serialised: YAML folds or escapes a long or
    multi-line string, so the serialised text may no longer contain the value.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {redact(key) if isinstance(key, str) else key: redact_data(item, redact) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(item, redact) for item in value]
    return value


def _is_json_body(content_type: str) -> bool:
    base = content_type.split(";")[0].strip().lower()
    return base.endswith("json") and "ndjson" not in base


_EVENT_LINE = re.compile(r"^(data:[ \t]*)?([\[{].*)$")


def redact_stream(text: str, pairs: Sequence[tuple[str, str]]) -> str:
    """A streamed body (SSE ``data:`` lines, NDJSON lines) with each secret replaced in what the events add up to.

    A provider streams a reply token by token, so a secret usually arrives split
    over several events (``"correct horse "``, ``"battery staple"``): no single
    line holds it. The string fields at the same place of each event's JSON (say
    ``choices.0.delta.content``) are joined in order, each secret found in the
    joined text is replaced by its replacement in the event where it starts,
    and the rest of it is cut from the events that held it. Changed events are
    written back as compact JSON; the others keep their bytes.
    """
    lines = text.split("\n")
    events: dict[int, tuple[str, Any]] = {}
    for number, line in enumerate(lines):
        match = _EVENT_LINE.match(line.rstrip("\r"))
        if match is None:
            continue
        try:
            events[number] = (match.group(1) or "", json.loads(match.group(2)))
        except ValueError:
            continue
    pieces: dict[tuple[Any, ...], list[list[Any]]] = {}  # place -> [[line number, container, key, text], ...]
    for number, (_, data) in events.items():
        _collect_strings(data, (), number, pieces)
    changed: set[int] = set()
    for group in pieces.values():
        if len(group) > 1:
            changed.update(_replace_across(group, pairs))
    if not changed:
        return text
    for number in changed:
        prefix, data = events[number]
        ending = "\r" if lines[number].endswith("\r") else ""
        lines[number] = prefix + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + ending
    return "\n".join(lines)


def _collect_strings(value: Any, place: tuple[Any, ...], number: int,
                     pieces: dict[tuple[Any, ...], list[list[Any]]]) -> None:
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(item, str):
            pieces.setdefault((*place, key), []).append([number, value, key, item])
        else:
            _collect_strings(item, (*place, key), number, pieces)


def _replace_across(group: list[list[Any]], pairs: Sequence[tuple[str, str]]) -> set[int]:
    """Replace each secret in the joined texts of ``group`` (edited in place); the line numbers changed."""
    changed: set[int] = set()
    for raw, replacement in pairs:
        joined = "".join(piece[3] for piece in group)
        if raw not in joined:
            continue
        starts, position = [], 0
        for piece in group:
            starts.append(position)
            position += len(piece[3])
        cuts: list[tuple[int, int]] = []
        found = joined.find(raw)
        while found >= 0:
            cuts.append((found, found + len(raw)))
            found = joined.find(raw, found + len(raw))
        for index, piece in enumerate(group):
            begin, end = starts[index], starts[index] + len(piece[3])
            kept, cursor = [], begin
            for cut_start, cut_end in cuts:
                if cut_end <= begin or cut_start >= end:
                    continue
                kept.append(joined[cursor:max(cursor, cut_start)])
                if begin <= cut_start < end:
                    kept.append(replacement)
                cursor = max(cursor, min(cut_end, end))
            kept.append(joined[cursor:end])
            new = "".join(kept)
            if new != piece[3]:
                piece[3] = new
                piece[1][piece[2]] = new
                changed.add(piece[0])
    return changed


def _body_bytes(request: Any) -> bytes | None:
    """A request's body as bytes, whether vcrpy holds it as bytes, a file or an iterator."""
    body = request.body
    if body is None or isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    raw = getattr(request, "body_bytes", None)  # files and iterators, materialised by vcrpy
    return bytes(raw) if raw is not None else None


def _nothing_to_redact(request: Any) -> bool:
    """Whether :meth:`HttpRedactor.request` (with no values to replace) would return a request equal to this one."""
    if not all(name in KEPT_REQUEST_HEADERS for name in request.headers):  # kept names are lower case
        return False
    return isinstance(request.body, bytes | None) and HttpRedactor.url(request.uri) == request.uri


def _keep_response_header(name: str) -> bool:
    return name in KEPT_RESPONSE_HEADERS or name.startswith(KEPT_RESPONSE_HEADER_PREFIXES)


def _decompress(body: bytes, encoding: str, *, live: bool) -> bytes | None:
    """``body`` decoded from ``encoding``, a piece at a time and stopped past :data:`MAX_BODY_BYTES`; ``None`` to
    keep it encoded (an encoding not known here).

    A live response being recorded (``live``) fails closed: a body too large once decompressed, one not of its
    encoding's data, or one of an encoding that cannot be decoded here (``br`` without ``brotli``: stored
    encoded, it could not be scrubbed) is an :class:`~pytest_agentloom.errors.UnrecordableResponseError`.
    A cassette being loaded keeps what it cannot decode encoded, as it was recorded.
    """
    try:
        plain = inflate(body, encoding, MAX_BODY_BYTES)
    except ImportError as exc:
        if live:
            raise _unrecordable(f"its content-encoding is {encoding}, and {exc}: stored encoded, the body could not "
                                "be scrubbed of secrets", "pip install brotli, then record again") from None
        return None
    except zlib.error as exc:
        if live:
            raise _unrecordable(f"its body is not valid {encoding} data ({exc})",
                                "check the provider (or proxy) that sent it, then record again") from None
        raise
    if plain is not None and len(plain) > MAX_BODY_BYTES:
        raise _unrecordable(f"its body inflates to more than {MAX_BODY_BYTES:,} bytes ({encoding}: {len(body):,} "
                            "bytes as sent), over the cassette limit", "record a smaller response (fewer items "
                            "per call), or check the provider (or proxy) that sent it")
    return bytes(plain) if plain is not None else None


def _unrecordable(why: str, fix: str) -> UnrecordableResponseError:
    return UnrecordableResponseError(render_message(f"A live response cannot be recorded: {why}. Nothing was written.",
                                                    hint=fix))


class HttpRedactor:
    """Scrubs requests and responses for one cassette.

    ``secrets`` are raw values to replace by ``marker(value)`` (the engine's
    redaction marker); ``api_keys`` are raw values to replace by ``<SCRUBBED>``.
    """

    def __init__(self, *, secrets: Sequence[str] = (), marker: Callable[[str], str] | None = None,
                 api_keys: Iterable[str] = (), policy: RedactionPolicy = POLICY) -> None:
        self.policy = policy
        self.secrets = sorted({s for s in secrets if s}, key=lambda s: (-len(s), s))
        self._marker = marker
        self.api_keys = sorted({k for k in api_keys if k}, key=lambda k: (-len(k), k))
        self._pairs = self._replacement_pairs()
        self._body_cache: dict[bytes, bytes] = {}

    def _replacement_pairs(self) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        if self.secrets and self._marker is None:
            raise ValueError("HttpRedactor needs marker= to redact secrets")
        for secret in self.secrets:
            pairs.append((secret, self._marker(secret)))  # type: ignore[misc]
        pairs.extend(self.policy.api_key_pairs(self.api_keys))
        # each value as it appears inside a JSON string too (quotes, backslashes, non-ASCII escaped), URL-encoded
        # and base64-encoded
        return self.policy.form_pairs(pairs)

    def with_api_keys(self, keys: Iterable[str]) -> HttpRedactor:
        """This redactor with ``keys`` scrubbed as well (itself when it scrubs them already)."""
        extra = set(keys) - set(self.api_keys)
        if not extra:
            return self
        return HttpRedactor(secrets=self.secrets, marker=self._marker, api_keys=[*self.api_keys, *extra],
                            policy=self.policy)

    @property
    def active(self) -> bool:
        return bool(self._pairs)

    # -- text and data ----------------------------------------------------------------------------------------

    def text(self, value: str) -> str:
        """``value`` with every secret and key replaced, longest first (a JSON text written with sorted keys,
        such as a tool result sent to the model, sorted again after: see :func:`.sorted_json.resorted`)."""
        return resorted(value, replace_each(value, self._pairs), self._replace)

    def _replace(self, value: str) -> str:
        return replace_each(value, self._pairs)

    def data(self, value: Any) -> Any:
        """A copy of JSON data with :meth:`text` applied to every string (keys included)."""
        return redact_data(value, self.text)

    def body(self, body: bytes | None, content_type: str = "") -> bytes | None:
        """A body with secrets replaced: JSON bodies as data (so escaping cannot hide a value), others as text."""
        if not body or not self._pairs:
            return body
        cached = self._body_cache.get(body)
        if cached is not None:
            return cached
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        if not _is_json_body(content_type):  # a stream: a secret may be split across its events
            text = redact_stream(text, self._pairs)
        if not any(raw in text for raw, _ in self._pairs):
            result = text.encode("utf-8")
        else:
            result = self._redact_text_body(text, content_type).encode("utf-8")
        if len(self._body_cache) < 256:
            self._body_cache[body] = result
        return result

    def _redact_text_body(self, text: str, content_type: str) -> str:
        if _is_json_body(content_type):
            try:
                data = json.loads(text)
            except ValueError:
                return self.text(text)
            return json.dumps(self.data(data), ensure_ascii=False, separators=(",", ":"))
        return self.text(text)

    # -- vcrpy hooks ------------------------------------------------------------------------------------------

    def request(self, request: Request) -> Request:
        """``before_record_request``: a scrubbed copy (vcrpy also calls it on each request before matching).

        A request with nothing to scrub (one read from a cassette, when no secret or key is known) comes back
        as it is: the copy would be equal to it, and vcrpy scrubs every recording it loads.
        """
        if not self._pairs and _nothing_to_redact(request):
            return request
        redacted = copy.copy(request)
        headers = {name.lower(): value for name, value in request.headers.items()}
        kept = {name: self.text(str(value)) for name, value in headers.items() if name in KEPT_REQUEST_HEADERS}
        redacted.headers = kept
        redacted.uri = self.text(self.url(request.uri))
        redacted.body = self.body(_body_bytes(request), headers.get("content-type", "application/json"))
        return redacted

    @staticmethod
    def url(url: str) -> str:
        """``url`` without credentials: no ``user:password@`` (a proxy's base URL may carry them) and the value of
        each query parameter of :data:`SECRET_QUERY_PARAMS` replaced."""
        parts = urlsplit(url)
        if "@" in parts.netloc:
            parts = parts._replace(netloc=parts.netloc.rpartition("@")[2])
            url = urlunsplit(parts)
        if not parts.query:
            return url
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if not any(name.lower() in SECRET_QUERY_PARAMS for name, _ in pairs):
            return url
        query = urlencode([(name, POLICY.api_key_marker if name.lower() in SECRET_QUERY_PARAMS else value)
                           for name, value in pairs], safe="<>")
        return urlunsplit(parts._replace(query=query))

    def response(self, response: dict[str, Any], *, live: bool = False) -> dict[str, Any]:
        """``before_record_response``: bodies decompressed, headers cut to the kept ones, secrets replaced.

        ``live``: a response just received, being recorded (not one read from a cassette): a body over
        :data:`~.._core.inflate.MAX_BODY_BYTES` once decompressed, or of an encoding that cannot be
        decoded here, is refused (:class:`~pytest_agentloom.errors.UnrecordableResponseError`)."""
        headers = {str(name).lower(): list(values) if isinstance(values, list | tuple) else [values]
                   for name, values in (response.get("headers") or {}).items()}
        body = (response.get("body") or {}).get("string")
        if isinstance(body, str):
            body = body.encode("utf-8")
        encoding = (headers.get("content-encoding") or [""])[0].strip().lower()
        keep_encoding = False
        if body and encoding and encoding != "identity":
            plain = _decompress(body, encoding, live=live)
            if plain is None:
                keep_encoding = True  # cannot decode it here: keep it encoded, and say how
            else:
                body = plain
        if live and body and len(body) > MAX_BODY_BYTES:
            raise _unrecordable(f"its body is {len(body):,} bytes, over the cassette limit of {MAX_BODY_BYTES:,}",
                                "record a smaller response (fewer items per call)")
        kept = {name: [self.text(str(v)) for v in values] for name, values in headers.items()
                if _keep_response_header(name) or (keep_encoding and name == "content-encoding")}
        content_type = (headers.get("content-type") or [""])[0]
        if not keep_encoding:
            body = self.body(body, content_type)
        return {
            "status": dict(response.get("status") or {"code": 200, "message": "OK"}),
            "headers": kept,
            "body": {"string": body if body is not None else b""},
        }
