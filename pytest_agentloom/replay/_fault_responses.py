"""The HTTP answer to an injected fault (providers/_faults.py), in the wire format of the provider asked.

A status fault is answered with the error body that provider really sends for that status, so its SDK
raises its own error class (``RateLimitError``, ``InternalServerError``, Anthropic's overloaded error) and
our adapters translate it as they translate a live one. The provider is told by the request's URL path,
as the cassette matches it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["fault_response"]

_REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
            409: "Conflict", 413: "Payload Too Large", 422: "Unprocessable Entity", 429: "Too Many Requests",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout", 529: "Overloaded"}
_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                    529: "overloaded_error"}
_GOOGLE_STATUSES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
                    500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
_OPENAI_TYPES = {429: ("requests", "rate_limit_exceeded"), 400: ("invalid_request_error", None)}


def fault_response(path: str, status: int, message: str) -> dict[str, Any]:
    """A vcrpy response dict: ``status`` with the provider's error body for a request to ``path``."""
    body: dict[str, Any]
    if path.endswith("/messages"):  # Anthropic
        body = {"type": "error", "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message}}
    elif ":generateContent" in path or ":streamGenerateContent" in path or ":embedContent" in path:  # Google
        body = {"error": {"code": status, "message": message, "status": _GOOGLE_STATUSES.get(status, "UNKNOWN")}}
    elif path.startswith("/api/"):  # Ollama's own API
        body = {"error": message}
    else:  # OpenAI and the servers that speak its API
        kind, code = _OPENAI_TYPES.get(status, ("server_error", None))
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    headers = {"content-type": ["application/json"]}
    if status in (429, 529):
        headers["retry-after"] = ["0"]
    return {"status": {"code": status, "message": _REASONS.get(status, "Error")}, "headers": headers,
            "body": {"string": json.dumps(body).encode()}}
