"""Plain-HTTP plumbing for the providers that have no SDK here (Ollama, Gemini): httpx errors in one place."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from ..errors import MidStreamError, ProviderError, UnusableResponseError

__all__ = ["HTTPStatusFailure", "error_detail", "http_errors", "iter_sse_data", "nested_too_deeply", "tried"]


class HTTPStatusFailure(Exception):
    """Raised inside :func:`http_errors` when a response has an error status; carries its body."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body


@contextlib.contextmanager
def http_errors(provider: str, *, streaming_started: list[bool] | None = None) -> Iterator[None]:
    """Translate httpx errors and error statuses to :class:`ProviderError`, most specific first."""
    import httpx

    def error(message: str, status: int | None) -> ProviderError:
        kind = MidStreamError if streaming_started and streaming_started[0] else ProviderError
        return kind(f"{provider}: {message}", status=status, provider=provider)

    try:
        yield
    except HTTPStatusFailure as exc:
        raise error(error_detail(exc.body), exc.status) from exc
    except httpx.HTTPStatusError as exc:
        raise error(error_detail(exc.response.content), exc.response.status_code) from exc
    except httpx.TimeoutException as exc:
        raise error(f"request{tried(exc)} timed out ({exc!r})", None) from exc
    except httpx.TransportError as exc:
        raise error(f"connection failed{tried(exc)} ({exc!r})", None) from exc
    except httpx.HTTPError as exc:
        raise error(f"HTTP error ({exc!r})", None) from exc
    except json.JSONDecodeError as exc:
        raise error(f"the reply is not valid JSON ({exc})", 200) from exc
    except RecursionError as exc:
        raise nested_too_deeply(provider) from exc


def nested_too_deeply(provider: str) -> UnusableResponseError:
    """The error of a reply whose JSON nests deeper than the parser's recursion limit (a hostile server's).

    Python's JSON parser, and so every SDK's, recurses: such a reply raises ``RecursionError``, which would
    otherwise read as a bug in the provider (``provider_crashed``). The same request gets the same reply, so
    it is not retried.
    """
    return UnusableResponseError(f"{provider}: the reply's JSON is nested too deeply to read (a server that "
                                 "sends this is not an LLM API)", status=200, provider=provider)


def tried(exc: BaseException) -> str:
    """`` to POST https://host/path``: the request that got no answer, found on ``exc`` or what it wraps
    (httpx and the SDKs keep it), else ``""``. The query and any user info are left out: keys travel there.
    """
    from urllib.parse import urlsplit, urlunsplit

    seen: set[int] = set()  # id()s within this call: ``exc`` holds every exception of its chain meanwhile
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        try:
            request = getattr(current, "request", None)
        except RuntimeError:  # httpx: an error raised without its request
            request = None
        if request is not None and getattr(request, "url", None) is not None:
            parts = urlsplit(str(request.url))
            host = parts.hostname or ""
            netloc = f"[{host}]" if ":" in host else host
            netloc += f":{parts.port}" if parts.port else ""
            return f" to {request.method} {urlunsplit((parts.scheme, netloc, parts.path, '', ''))}"
        current = current.__cause__ or current.__context__
    return ""


def error_detail(body: bytes) -> str:
    """The message of an error body in any of the shapes providers use, else the body's start."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace") or "empty error body"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        kind = error.get("status") or error.get("type")
        message = error.get("message", "")
        return f"{kind}: {message}" if kind else str(message)
    return json.dumps(data)[:200]


async def iter_sse_data(lines: AsyncIterator[str]) -> AsyncIterator[Any]:
    """The JSON payloads of ``data:`` lines of a server-sent event stream."""
    async for line in lines:
        line = line.strip()
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload and payload != "[DONE]":
            yield json.loads(payload)
