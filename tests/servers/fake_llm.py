"""A real HTTP server on 127.0.0.1 that speaks four LLM wire formats, for tests and benchmarks.

Routes (JSON, and streaming where the real API streams):

=========  ==============================================  ==========================
route      path                                            streaming
=========  ==============================================  ==========================
openai     ``POST /v1/chat/completions``                   SSE, ``data: [DONE]``
responses  ``POST /v1/responses``                          SSE, ``response.*`` events
anthropic  ``POST /v1/messages``                           SSE with named events
ollama     ``POST /api/chat``                              NDJSON (the default)
gemini     ``POST /v1beta/models/{model}:generateContent``  ``:streamGenerateContent?alt=sse``
=========  ==============================================  ==========================

Embeddings have routes of their own (``openai_embed``: ``POST /v1/embeddings``,
float or base64 as asked; ``gemini_embed``: ``POST
/v1beta/models/{model}:batchEmbedContents``; ``ollama_embed``: ``POST
/api/embed``). Each text gets a vector derived from its SHA-256 (8 numbers in
[-1, 1], or ``dimensions`` for OpenAI), so the same text always gets the same
vector; a text's token count is its number of words. Plan :func:`fail` or
:func:`drop` on them like any route.

Each route answers from its own queue of planned replies (:func:`text`,
:func:`tool_calls`, :func:`refusal`, :func:`fail`, :func:`drop`, and
:func:`recorded`: a body some real server sent, served byte for byte) and,
once the queue is empty,
with a deterministic default: ``echo: <last user message>``. Ids and
timestamps come from a counter, so two runs get byte-identical bodies.
Every request is recorded (headers and JSON) in :attr:`FakeLLMServer.requests`.

Use it as a context manager from scripts::

    with FakeLLMServer() as server:
        server.plan("openai", text("hello", input_tokens=5, output_tokens=1))
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="x")

or through the ``fake_llm`` fixture of :mod:`tests.servers.plugin`.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "ROUTES",
    "FakeLLMServer",
    "FakeToolCall",
    "Planned",
    "RecordedRequest",
    "cut_stream",
    "drop",
    "fail",
    "fake_vector",
    "recorded",
    "refusal",
    "text",
    "tool_calls",
]

ROUTES = ("openai", "responses", "anthropic", "ollama", "gemini", "openai_embed", "gemini_embed", "ollama_embed")
CREATED_BASE = 1_700_000_000  # a fixed epoch second; each response adds its counter to it


# --------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class FakeToolCall:
    """A tool call the fake model makes: ``arguments`` is a dict, or raw text sent as written."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, sort_keys=True)

    def arguments_dict(self) -> dict[str, Any]:
        if isinstance(self.arguments, str):
            try:
                value = json.loads(self.arguments)
            except ValueError:
                return {"_raw": self.arguments}
            return value if isinstance(value, dict) else {"_value": value}
        return dict(self.arguments)


@dataclass(frozen=True)
class Planned:
    """One planned answer of a route: a reply, an error status, or a dropped connection.

    ``finish_reason`` is written in the route's own vocabulary (``stop``,
    ``end_turn``, ``STOP``); ``None`` picks the route's usual value. ``delay``
    is real seconds the server waits before answering (keep it tiny).
    """

    text: str = ""
    tool_calls: tuple[FakeToolCall, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int = 0
    reasoning: str = ""  # reasoning text, returned where the API returns it and the request asked for it
    finish_reason: str | None = None
    model: str | None = None
    status: int = 200
    error_message: str = ""
    error_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    drop_connection: bool = False
    cut_after: int | None = None  # streaming only: close the connection after this many pieces of the stream
    refusal: str | None = None  # the model refuses, with this text, in the route's own way
    raw_body: bytes | None = None  # served as is, whatever the request (recorded())
    content_type: str = "application/json"


def text(
    content: str,
    *,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    reasoning_tokens: int = 0,
    reasoning: str = "",
    finish_reason: str | None = None,
    model: str | None = None,
    delay: float = 0.0,
) -> Planned:
    """A plain text reply. Token counts default to word counts of the request and the reply.

    ``reasoning`` is the model's reasoning text: Anthropic returns it as a ``thinking`` block (with
    ``thinking`` enabled), Gemini as ``thought`` parts (with ``includeThoughts``), Ollama as
    ``message.thinking`` (with ``think``). OpenAI's chat completions never return it.
    """
    return Planned(
        text=content,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        reasoning_tokens=reasoning_tokens,
        reasoning=reasoning,
        finish_reason=finish_reason,
        model=model,
        delay=delay,
    )


def tool_calls(
    *calls: FakeToolCall | tuple[str, dict[str, Any] | str],
    content: str = "",
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    finish_reason: str | None = None,
) -> Planned:
    """A reply asking for tools: ``tool_calls(("lookup", {"q": "x"}))`` or with :class:`FakeToolCall`."""
    normalized = tuple(call if isinstance(call, FakeToolCall) else FakeToolCall(*call) for call in calls)
    return Planned(
        text=content,
        tool_calls=normalized,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        finish_reason=finish_reason,
    )


def fail(
    status: int, message: str = "", *, error_type: str | None = None, headers: dict[str, str] | None = None
) -> Planned:
    """An error status with the route's own error body (``fail(429)``, ``fail(400, "bad field")``)."""
    return Planned(
        status=status,
        error_message=message or f"fake error {status}",
        error_type=error_type,
        headers=tuple((headers or {}).items()),
    )


def refusal(message: str) -> Planned:
    """The model refuses: chat ``message.refusal`` / ``delta.refusal``, a Responses ``refusal`` part,
    Anthropic ``stop_reason: refusal`` with ``stop_details``. Other routes answer the text."""
    return Planned(text="", refusal=message, output_tokens=len(message.split()))


def recorded(body: bytes | str, *, status: int = 200, content_type: str | None = None,
             headers: dict[str, str] | None = None) -> Planned:
    """A body some real server sent, served byte for byte (``text/event-stream`` when it looks like SSE),
    with ``headers`` (``content-encoding: gzip`` for a body given compressed)."""
    raw = body.encode("utf-8") if isinstance(body, str) else body
    if content_type is None:
        sse = raw.lstrip().startswith((b"data:", b"event:", b":"))
        content_type = "text/event-stream" if sse else "application/json"
    return Planned(status=status, raw_body=raw, content_type=content_type, headers=tuple((headers or {}).items()))


def drop() -> Planned:
    """Close the connection without answering: the client sees a connection error (no status)."""
    return Planned(drop_connection=True)


def cut_stream(content: str, *, after: int = 2) -> Planned:
    """A streamed reply that breaks after ``after`` pieces (events or lines): the body promised more bytes
    than it sends, so the client sees an incomplete body once some text has arrived. A request that
    doesn't stream gets the whole reply."""
    return Planned(text=content, cut_after=after)


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    route: str
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    body: bytes = field(repr=False)

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


# --------------------------------------------------------------------------- server


class _QuietServer(ThreadingHTTPServer):
    """A client that hung up (its SDK timed out, as the timeout tests plan) is no error of the server's.

    ``socketserver`` prints each such failure's traceback from the handler's thread, and Python 3.11's
    traceback module parses source lines with ``ast`` to place its carets: beside a run whose engine
    compiles expressions in the main thread, that tripped CPython 3.11's shared AST recursion counter
    ("SystemError: AST constructor recursion depth mismatch") in the test's own thread.
    """

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            return
        super().handle_error(request, client_address)


class FakeLLMServer:
    """The server: :meth:`start` it (or use ``with``), :meth:`plan` replies, read :attr:`requests`."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        if host not in ("127.0.0.1", "localhost"):
            raise ValueError(f"the fake LLM server only listens on 127.0.0.1 (got host {host!r})")
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._plans: dict[str, deque[Planned]] = defaultdict(deque)
        self._counter = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[RecordedRequest] = []

    # -- lifecycle

    def start(self) -> FakeLLMServer:
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        self._httpd = _QuietServer((self._host, self._port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    # -- addresses

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``: the base URL for Anthropic, Ollama and Gemini clients."""
        if self._httpd is None:
            raise RuntimeError("the fake LLM server is not running; call start() or use it as a context manager")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base_url(self) -> str:
        """The OpenAI SDK's ``base_url`` (it includes ``/v1``)."""
        return f"{self.url}/v1"

    # -- scripting

    def plan(self, route: str, *replies: Planned | str) -> None:
        """Queue replies for ``route`` (one of :data:`ROUTES`); a string is :func:`text`."""
        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r}; routes are {', '.join(ROUTES)}")
        with self._lock:
            for item in replies:
                self._plans[route].append(text(item) if isinstance(item, str) else item)

    def pending(self, route: str | None = None) -> int:
        """How many planned replies are still queued (for one route, or all)."""
        with self._lock:
            if route is not None:
                return len(self._plans[route])
            return sum(len(queue) for queue in self._plans.values())

    def reset(self) -> None:
        """Forget plans, recorded requests and the id counter."""
        with self._lock:
            self._plans.clear()
            self.requests.clear()
            self._counter = 0

    def requests_for(self, route: str) -> list[RecordedRequest]:
        with self._lock:
            return [request for request in self.requests if request.route == route]

    # -- used by the handler

    def _receive(self, request: RecordedRequest) -> tuple[Planned | None, int]:
        with self._lock:
            self.requests.append(request)
            self._counter += 1
            queue = self._plans[request.route]
            return (queue.popleft() if queue else None), self._counter


# --------------------------------------------------------------------------- handler


_GEMINI_PATH = re.compile(
    r"^/v1beta/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent|batchEmbedContents)$"
)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer
    protocol_version = "HTTP/1.0"  # one request per connection; streams end when the socket closes
    server_version = "FakeLLM/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return

    def do_GET(self) -> None:
        self._send_json(404, {"error": {"message": f"no route for GET {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        split = urlsplit(self.path)
        route, model_in_path, stream_in_path = _route_of(split.path)
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        if route is None:
            self._send_json(404, {"error": {"message": f"no route for POST {split.path}", "type": "not_found"}})
            return
        recorded = RecordedRequest(
            route=route,
            method="POST",
            path=split.path,
            query=parse_qs(split.query),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
        )
        planned, counter = self.fake._receive(recorded)
        planned = planned or Planned()
        if planned.delay:
            time.sleep(planned.delay)
        if planned.drop_connection:
            self.close_connection = True
            self.connection.close()
            return
        if planned.raw_body is not None:
            self._send_raw(planned.status, planned.raw_body, planned.content_type, planned.headers)
            return
        try:
            payload = json.loads(body) if body else {}
        except ValueError:
            self._send_json(400, _error_body(route, 400, "request body is not JSON", None))
            return
        refused = _refusal(route, payload, model_in_path)
        if refused:  # a request the real API would refuse, whatever was planned
            self._send_json(400, _error_body(route, 400, refused, None))
            return
        if planned.status >= 400:
            self._send_json(
                planned.status,
                _error_body(route, planned.status, planned.error_message, planned.error_type),
                headers=planned.headers,
            )
            return
        if route.endswith("_embed"):
            self._send_json(200, _embedding_body(route, payload, model_in_path), headers=planned.headers)
            return
        reply = _Reply.build(route, payload, planned, counter, model_in_path)
        builder = _BUILDERS[route]
        streaming = stream_in_path if route == "gemini" else _wants_stream(route, payload)
        if streaming:
            self._send_stream(route, builder.stream(reply, payload), planned.headers, cut_after=planned.cut_after)
        else:
            self._send_json(200, builder.whole(reply), headers=planned.headers)

    # -- writing

    def _send_json(self, status: int, data: Any, headers: tuple[tuple[str, str], ...] = ()) -> None:
        raw = json.dumps(data).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    def _send_raw(self, status: int, raw: bytes, content_type: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(raw)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    def _send_stream(
        self, route: str, pieces: Iterator[str], headers: tuple[tuple[str, str], ...], *, cut_after: int | None = None
    ) -> None:
        self.send_response(200)
        content_type = "application/x-ndjson" if route == "ollama" else "text/event-stream"
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        if cut_after is not None:  # promise a body longer than what is sent, so the cut is an error
            self.send_header("content-length", str(10**7))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        for count, piece in enumerate(pieces):
            if cut_after is not None and count >= cut_after:
                break
            self.wfile.write(piece.encode("utf-8"))
            self.wfile.flush()
        self.close_connection = True


def _route_of(path: str) -> tuple[str | None, str | None, bool]:
    if path == "/v1/chat/completions":
        return "openai", None, False
    if path == "/v1/responses":
        return "responses", None, False
    if path == "/v1/messages":
        return "anthropic", None, False
    if path == "/api/chat":
        return "ollama", None, False
    if path == "/v1/embeddings":
        return "openai_embed", None, False
    if path == "/api/embed":
        return "ollama_embed", None, False
    match = _GEMINI_PATH.match(path)
    if match and match["method"] == "batchEmbedContents":
        return "gemini_embed", match["model"], False
    if match:
        return "gemini", match["model"], match["method"] == "streamGenerateContent"
    return None, None, False


def _refusal(route: str, payload: dict[str, Any], model_in_path: str | None = None) -> str | None:
    """What the real API says about a request it refuses (only the rules the tests rely on)."""
    if route == "responses":
        return _Responses.refused(payload)
    if route == "gemini" and str(model_in_path).startswith("gemini-3"):
        return _unsigned_gemini_call(payload)
    if route != "anthropic" or (payload.get("thinking") or {}).get("type") != "enabled":
        return None
    assistant = [m for m in payload.get("messages") or [] if m.get("role") == "assistant"]
    last = assistant[-1]["content"] if assistant else None
    if isinstance(last, list) and any(block.get("type") == "tool_use" for block in last):
        first = last[0]
        if first.get("type") == "redacted_thinking" and first.get("data"):
            return None
        if first.get("type") == "thinking" and str(first.get("signature", "")).startswith("sig_fake_"):
            return None
        index = len(payload["messages"]) - 1 - payload["messages"][::-1].index(assistant[-1])
        return (f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must start with "
                "a thinking block (preceding the lastmost set of `tool_use` and `tool_result` blocks).")
    return None


def _unsigned_gemini_call(payload: dict[str, Any]) -> str | None:
    """Gemini 3 refuses a model turn whose first function call lost the signature it came with."""
    for index, content in enumerate(payload.get("contents") or []):
        calls = [part for part in content.get("parts") or [] if "functionCall" in part]
        if content.get("role") == "model" and calls and "thoughtSignature" not in calls[0]:
            name = calls[0]["functionCall"].get("name")
            return (f"Function call is missing a thought_signature in functionCall parts. This is required for "
                    f"tools to work correctly, and missing thought_signature may lead to degraded model "
                    f"performance. Additional data, function call `{name}` , position {index + 1}.")
    return None


def _wants_stream(route: str, payload: dict[str, Any]) -> bool:
    if route == "ollama":
        return payload.get("stream", True) is not False  # Ollama streams unless told not to
    return bool(payload.get("stream"))


# --------------------------------------------------------------------------- error bodies

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}
_OPENAI_ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def fake_vector(text: str, dimensions: int = 8) -> list[float]:
    """The vector the fake server gives ``text``: numbers in [-1, 1] from its SHA-256, exact in float32."""
    import hashlib

    numbers: list[float] = []
    block = 0
    while len(numbers) < dimensions:
        digest = hashlib.sha256(f"{block}:{text}".encode()).digest()
        numbers += [(byte - 128) / 128 for byte in digest]
        block += 1
    return numbers[:dimensions]


def _embedding_body(route: str, payload: dict[str, Any], model_in_path: str | None) -> dict[str, Any]:
    """The whole answer of an embeddings route, in that API's shape."""
    import base64
    import struct

    if route == "gemini_embed":
        texts = ["".join(part.get("text", "") for part in item["content"]["parts"]) for item in payload["requests"]]
        return {"embeddings": [{"values": fake_vector(text)} for text in texts]}
    given = payload.get("input")
    texts = [given] if isinstance(given, str) else list(given or [])
    tokens = sum(len(text.split()) for text in texts)
    if route == "ollama_embed":
        return {"model": payload.get("model"), "embeddings": [fake_vector(text) for text in texts],
                "total_duration": 1000, "load_duration": 10, "prompt_eval_count": tokens}
    dimensions = int(payload.get("dimensions") or 8)
    data = []
    for index, text in enumerate(texts):
        vector: Any = fake_vector(text, dimensions)
        if payload.get("encoding_format") == "base64":  # the SDK asks for this by default, and decodes it
            vector = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
        data.append({"object": "embedding", "index": index, "embedding": vector})
    return {"object": "list", "data": data, "model": payload.get("model"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _error_body(route: str, status: int, message: str, error_type: str | None) -> dict[str, Any]:
    route = route.removesuffix("_embed")
    if route == "anthropic":
        kind = error_type or _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if route == "ollama":
        return {"error": message}
    if route == "gemini":
        return {
            "error": {"code": status, "message": message, "status": error_type or _GOOGLE_STATUS.get(status, "UNKNOWN")}
        }
    kind = error_type or _OPENAI_ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": _OPENAI_ERROR_CODES.get(status)}}


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class _Reply:
    """A planned reply made concrete for one request: ids, model, counts and finish reason filled in."""

    id: str
    counter: int
    model: str
    text: str
    tool_calls: tuple[FakeToolCall, ...]
    call_ids: tuple[str, ...]
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    finish_reason: str
    reasoning: str = ""  # empty unless planned and asked for by the request
    refusal: str | None = None
    request: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(
        cls, route: str, payload: dict[str, Any], planned: Planned, counter: int, model_in_path: str | None
    ) -> _Reply:
        model = planned.model or model_in_path or str(payload.get("model") or "fake-model")
        content = planned.text
        if not content and not planned.tool_calls and planned.refusal is None:
            content = f"echo: {_last_user_text(route, payload)}"
        prefix = {"openai": "call_fake_", "responses": "call_fake_", "anthropic": "toolu_fake_",
                  "ollama": "call_fake_", "gemini": "fc_fake_"}
        call_ids = tuple(
            call.id or f"{prefix[route]}{counter:04d}_{index}" for index, call in enumerate(planned.tool_calls)
        )
        finish = planned.finish_reason or _default_finish(route, bool(planned.tool_calls))
        if planned.refusal is not None and route not in ("openai", "responses", "anthropic"):
            content = planned.refusal  # no refusal of its own on the wire: the model just says it
        id_prefix = {"openai": "chatcmpl-fake-", "responses": "resp_fake_", "anthropic": "msg_fake_", "ollama": "",
                     "gemini": "resp-fake-"}
        return cls(
            id=f"{id_prefix[route]}{counter:04d}",
            counter=counter,
            model=model,
            text=content,
            tool_calls=planned.tool_calls,
            call_ids=call_ids,
            input_tokens=planned.input_tokens if planned.input_tokens is not None else _count_words(payload),
            output_tokens=planned.output_tokens if planned.output_tokens is not None else len(content.split()),
            reasoning_tokens=planned.reasoning_tokens,
            finish_reason=finish,
            reasoning=planned.reasoning if _asks_for_reasoning(route, payload) else "",
            refusal=planned.refusal if route in ("openai", "responses", "anthropic") else None,
            request=payload,
        )

    def pieces(self) -> list[str]:
        """The text cut into word-sized chunks that join back exactly."""
        return re.findall(r"\S+\s*|\s+", self.text) or []

    @property
    def created(self) -> int:
        return CREATED_BASE + self.counter


def _asks_for_reasoning(route: str, payload: dict[str, Any]) -> bool:
    """Whether the request turned on what makes this API return reasoning text."""
    if route == "anthropic":
        return (payload.get("thinking") or {}).get("type") in ("enabled", "adaptive")
    if route == "gemini":
        return bool(((payload.get("generationConfig") or {}).get("thinkingConfig") or {}).get("includeThoughts"))
    if route == "ollama":
        return bool(payload.get("think"))
    if route == "responses":
        return bool((payload.get("reasoning") or {}).get("summary"))
    return False


def _default_finish(route: str, has_tools: bool) -> str:
    if route == "openai":
        return "tool_calls" if has_tools else "stop"
    if route == "anthropic":
        return "tool_use" if has_tools else "end_turn"
    if route == "gemini":
        return "STOP"
    return "stop"


def _count_words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, dict):
        return sum(
            _count_words(item)
            for key, item in value.items()
            if key in ("content", "text", "messages", "contents", "parts", "system", "input", "instructions")
        )
    if isinstance(value, list):
        return sum(_count_words(item) for item in value)
    return 0


def _last_user_text(route: str, payload: dict[str, Any]) -> str:
    if route == "responses":
        payload = {"messages": [item for item in _Responses.input_items(payload) if "role" in item]}
    if route == "gemini":
        for content in reversed(payload.get("contents") or []):
            if content.get("role", "user") == "user":
                return " ".join(part.get("text", "") for part in content.get("parts", []) if "text" in part)
        return ""
    for message in reversed(payload.get("messages") or []):
        if message.get("role") != "user":
            continue
        body = message.get("content")
        if isinstance(body, str):
            return body
        if isinstance(body, list):
            return " ".join(part.get("text", "") for part in body if isinstance(part, dict) and "text" in part)
    return ""


def _sse(data: Any, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


class _OpenAI:
    @staticmethod
    def usage(reply: _Reply) -> dict[str, Any]:
        return {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens + reply.reasoning_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens + reply.reasoning_tokens,
            "completion_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
        }

    @staticmethod
    def whole(reply: _Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": reply.refusal}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_text()}}
                for call, call_id in zip(reply.tool_calls, reply.call_ids, strict=True)
            ]
        return {
            "id": reply.id,
            "object": "chat.completion",
            "created": reply.created,
            "model": reply.model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}],
            "usage": _OpenAI.usage(reply),
            "system_fingerprint": "fp_fake",
        }

    @staticmethod
    def stream(reply: _Reply, payload: dict[str, Any]) -> Iterator[str]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": reply.id,
                "object": "chat.completion.chunk",
                "created": reply.created,
                "model": reply.model,
                "system_fingerprint": "fp_fake",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
            }

        if reply.refusal is not None:  # as OpenAI streams it: an empty first piece, then the text
            yield _sse(chunk({"role": "assistant", "content": None, "refusal": ""}))
            for piece in re.findall(r"\S+\s*|\s+", reply.refusal):
                yield _sse(chunk({"refusal": piece}))
        else:
            yield _sse(chunk({"role": "assistant", "content": "", "refusal": None}))
        for piece in reply.pieces():
            yield _sse(chunk({"content": piece}))
        for index, (call, call_id) in enumerate(zip(reply.tool_calls, reply.call_ids, strict=True)):
            head = {"index": index, "id": call_id, "type": "function", "function": {"name": call.name, "arguments": ""}}
            yield _sse(chunk({"tool_calls": [head]}))
            arguments = call.arguments_text()
            for start in range(0, len(arguments), 8):
                part = {"index": index, "function": {"arguments": arguments[start : start + 8]}}
                yield _sse(chunk({"tool_calls": [part]}))
        yield _sse(chunk({}, reply.finish_reason))
        if (payload.get("stream_options") or {}).get("include_usage"):
            last = chunk({})
            last["choices"] = []
            last["usage"] = _OpenAI.usage(reply)
            yield _sse(last)
        yield "data: [DONE]\n\n"


class _Anthropic:
    @staticmethod
    def stop_details(reply: _Reply) -> dict[str, Any] | None:
        if reply.refusal is None:
            return None
        return {"type": "refusal", "category": "cyber", "explanation": reply.refusal}

    @staticmethod
    def blocks(reply: _Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.reasoning:
            signature = f"sig_fake_{reply.counter:04d}"
            blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": signature})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call, call_id in zip(reply.tool_calls, reply.call_ids, strict=True):
            blocks.append({"type": "tool_use", "id": call_id, "name": call.name, "input": call.arguments_dict()})
        return blocks

    @staticmethod
    def whole(reply: _Reply) -> dict[str, Any]:
        return {
            "id": reply.id,
            "type": "message",
            "role": "assistant",
            "model": reply.model,
            "content": _Anthropic.blocks(reply),
            "stop_reason": "refusal" if reply.refusal is not None else reply.finish_reason,
            "stop_sequence": None,
            "stop_details": _Anthropic.stop_details(reply),
            "usage": {
                "input_tokens": reply.input_tokens,
                "output_tokens": reply.output_tokens + reply.reasoning_tokens,
            },
        }

    @staticmethod
    def stream(reply: _Reply, payload: dict[str, Any]) -> Iterator[str]:
        start = {
            "id": reply.id,
            "type": "message",
            "role": "assistant",
            "model": reply.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1},
        }
        yield _sse({"type": "message_start", "message": start}, "message_start")
        index = 0
        if reply.reasoning:
            block = {"type": "thinking", "thinking": "", "signature": ""}
            yield _sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")
            for piece in re.findall(r"\S+\s*|\s+", reply.reasoning):
                delta = {"type": "thinking_delta", "thinking": piece}
                yield _sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")
            delta = {"type": "signature_delta", "signature": f"sig_fake_{reply.counter:04d}"}
            yield _sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")
            yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
            index += 1
        if reply.text:
            yield _sse(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                "content_block_start",
            )
            yield _sse({"type": "ping"}, "ping")
            for piece in reply.pieces():
                delta = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
                yield _sse(delta, "content_block_delta")
            yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
            index += 1
        for call, call_id in zip(reply.tool_calls, reply.call_ids, strict=True):
            block = {"type": "tool_use", "id": call_id, "name": call.name, "input": {}}
            yield _sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")
            arguments = json.dumps(call.arguments_dict())
            for begin in range(0, len(arguments), 8):
                delta = {"type": "input_json_delta", "partial_json": arguments[begin : begin + 8]}
                yield _sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")
            yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
            index += 1
        end = {
            "type": "message_delta",
            "delta": {"stop_reason": "refusal" if reply.refusal is not None else reply.finish_reason,
                      "stop_sequence": None, "stop_details": _Anthropic.stop_details(reply)},
            "usage": {"output_tokens": reply.output_tokens + reply.reasoning_tokens},
        }
        yield _sse(end, "message_delta")
        yield _sse({"type": "message_stop"}, "message_stop")


class _Ollama:
    @staticmethod
    def created_at(reply: _Reply) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(reply.created))

    @staticmethod
    def whole(reply: _Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.reasoning:
            message["thinking"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {"function": {"name": call.name, "arguments": call.arguments_dict()}} for call in reply.tool_calls
            ]
        return {
            "model": reply.model,
            "created_at": _Ollama.created_at(reply),
            "message": message,
            "done": True,
            **_Ollama.final_fields(reply),
        }

    @staticmethod
    def final_fields(reply: _Reply) -> dict[str, Any]:
        return {
            "done_reason": reply.finish_reason,
            "total_duration": 1000,
            "load_duration": 10,
            "prompt_eval_count": reply.input_tokens,
            "prompt_eval_duration": 100,
            "eval_count": reply.output_tokens + reply.reasoning_tokens,
            "eval_duration": 500,
        }

    @staticmethod
    def stream(reply: _Reply, payload: dict[str, Any]) -> Iterator[str]:
        created = _Ollama.created_at(reply)
        for piece in re.findall(r"\S+\s*|\s+", reply.reasoning):  # Ollama streams the thinking first
            line = {
                "model": reply.model,
                "created_at": created,
                "message": {"role": "assistant", "content": "", "thinking": piece},
                "done": False,
            }
            yield json.dumps(line) + "\n"
        for piece in reply.pieces():
            line = {
                "model": reply.model,
                "created_at": created,
                "message": {"role": "assistant", "content": piece},
                "done": False,
            }
            yield json.dumps(line) + "\n"
        last_message: dict[str, Any] = {"role": "assistant", "content": ""}
        if reply.tool_calls:
            last_message["tool_calls"] = [
                {"function": {"name": call.name, "arguments": call.arguments_dict()}} for call in reply.tool_calls
            ]
        final = {
            "model": reply.model,
            "created_at": created,
            "message": last_message,
            "done": True,
            **_Ollama.final_fields(reply),
        }
        yield json.dumps(final) + "\n"


class _Gemini:
    @staticmethod
    def usage(reply: _Reply) -> dict[str, Any]:
        usage = {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens + reply.reasoning_tokens,
        }
        if reply.reasoning_tokens:
            usage["thoughtsTokenCount"] = reply.reasoning_tokens
        return usage

    @staticmethod
    def envelope(reply: _Reply, parts: list[dict[str, Any]], finish: str | None, usage: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        body: dict[str, Any] = {"candidates": [candidate], "modelVersion": reply.model, "responseId": reply.id}
        if usage:
            body["usageMetadata"] = _Gemini.usage(reply)
        return body

    @staticmethod
    def call_parts(reply: _Reply) -> list[dict[str, Any]]:
        """Function calls; Gemini 3 puts a ``thoughtSignature`` beside the first (sent back, or it refuses)."""
        parts: list[dict[str, Any]] = [{"functionCall": {"name": call.name, "args": call.arguments_dict()}}
                                       for call in reply.tool_calls]
        if parts and reply.model.startswith("gemini-3"):
            parts[0]["thoughtSignature"] = f"c2lnX2Zha2Vf{reply.counter:04d}"
        return parts

    @staticmethod
    def whole(reply: _Reply) -> dict[str, Any]:
        thought = [{"text": reply.reasoning, "thought": True}] if reply.reasoning else []
        parts = thought + ([{"text": reply.text}] if reply.text else []) + _Gemini.call_parts(reply)
        return _Gemini.envelope(reply, parts, reply.finish_reason, usage=True)

    @staticmethod
    def stream(reply: _Reply, payload: dict[str, Any]) -> Iterator[str]:
        pieces = reply.pieces()
        if reply.reasoning:  # a thought summary arrives ahead of the answer
            body = _Gemini.envelope(reply, [{"text": reply.reasoning, "thought": True}], None, usage=False)
            yield f"data: {json.dumps(body)}\r\n\r\n"
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1 and not reply.tool_calls
            body = _Gemini.envelope(reply, [{"text": piece}], reply.finish_reason if last else None, usage=last)
            yield f"data: {json.dumps(body)}\r\n\r\n"
        if reply.tool_calls or not pieces:
            body = _Gemini.envelope(reply, _Gemini.call_parts(reply), reply.finish_reason, usage=True)
            yield f"data: {json.dumps(body)}\r\n\r\n"


class _Responses:
    """OpenAI's Responses API, in the shapes of the real recordings under tests/providers/recordings."""

    @staticmethod
    def refused(payload: dict[str, Any]) -> str | None:
        """The real API's answer to the request shapes our tests must never send."""
        if "messages" in payload:
            return "Unrecognized request argument supplied: messages"
        for index, tool in enumerate(payload.get("tools") or []):
            if tool.get("type") == "function" and "name" not in tool:
                return f"Missing required parameter: 'tools[{index}].name'."
        called: set[str] = set()
        for index, item in enumerate(_Responses.input_items(payload)):
            kind = item.get("type")
            if kind == "function_call":
                called.add(item.get("call_id"))
            elif kind == "function_call_output" and item.get("call_id") not in called:
                return f"No tool call found for function call output with call_id {item.get('call_id')}."
            elif kind == "reasoning" and payload.get("store") is False and not item.get("encrypted_content"):
                return (f"Item with id '{item.get('id')}' not found. Items are not persisted when `store` is set "
                        "to false. Try again with `store` set to true, or send the item's encrypted_content.")
            elif kind == "reasoning" and not str(item.get("encrypted_content", "")).startswith("gAAAAA_fake_"):
                return f"input[{index}]: the encrypted content of reasoning item {item.get('id')} is not ours."
        return None

    @staticmethod
    def input_items(payload: dict[str, Any]) -> list[dict[str, Any]]:
        """``input`` as items: a plain string is one user message."""
        given = payload.get("input") or []
        return [{"role": "user", "content": given}] if isinstance(given, str) else list(given)

    @staticmethod
    def usage(reply: _Reply) -> dict[str, Any]:
        output = reply.output_tokens + reply.reasoning_tokens
        return {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
            "total_tokens": reply.input_tokens + output,
        }

    @staticmethod
    def items(reply: _Reply) -> list[dict[str, Any]]:
        """The output items, completed: reasoning (for a reasoning request), message, function calls."""
        items: list[dict[str, Any]] = []
        request = reply.request
        if "reasoning" in request:
            item: dict[str, Any] = {"id": f"rs_fake_{reply.counter:04d}", "type": "reasoning", "summary": []}
            if "reasoning.encrypted_content" in (request.get("include") or []):
                item["encrypted_content"] = f"gAAAAA_fake_{reply.counter:04d}"
            if reply.reasoning:
                item["summary"] = [{"type": "summary_text", "text": reply.reasoning}]
            items.append(item)
        content: list[dict[str, Any]] = []
        if reply.refusal is not None:
            content.append({"type": "refusal", "refusal": reply.refusal})
        elif reply.text:
            content.append({"type": "output_text", "annotations": [], "logprobs": [], "text": reply.text})
        if content:
            items.append({"id": f"msg_fake_{reply.counter:04d}", "type": "message", "status": "completed",
                          "content": content, "role": "assistant"})
        for index, (call, call_id) in enumerate(zip(reply.tool_calls, reply.call_ids, strict=True)):
            items.append({"id": f"fc_fake_{reply.counter:04d}_{index}", "type": "function_call",
                          "status": "completed", "arguments": call.arguments_text(), "call_id": call_id,
                          "name": call.name})
        return items

    @staticmethod
    def response(reply: _Reply, status: str, output: list[dict[str, Any]], usage: bool) -> dict[str, Any]:
        request = reply.request
        return {
            "id": reply.id, "object": "response", "created_at": reply.created, "status": status,
            "background": False, "error": None, "incomplete_details": None,
            "instructions": request.get("instructions"), "max_output_tokens": request.get("max_output_tokens"),
            "model": reply.model, "output": output, "parallel_tool_calls": True, "previous_response_id": None,
            "reasoning": {"effort": (request.get("reasoning") or {}).get("effort"),
                          "summary": (request.get("reasoning") or {}).get("summary")},
            "service_tier": "default", "store": bool(request.get("store", True)),
            "temperature": request.get("temperature", 1.0),
            "text": request.get("text") or {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": request.get("tool_choice", "auto"),
            "tools": [{**tool, "description": tool.get("description")} for tool in request.get("tools") or []],
            "top_p": request.get("top_p", 1.0), "truncation": "disabled",
            "usage": _Responses.usage(reply) if usage else None, "user": None, "metadata": {},
        }

    @staticmethod
    def whole(reply: _Reply) -> dict[str, Any]:
        return _Responses.response(reply, "completed", _Responses.items(reply), usage=True)

    @staticmethod
    def stream(reply: _Reply, payload: dict[str, Any]) -> Iterator[str]:
        counter = iter(range(10**6))

        def event(kind: str, **fields: Any) -> str:
            return _sse({"type": kind, **fields, "sequence_number": next(counter)}, kind)

        yield event("response.created", response=_Responses.response(reply, "in_progress", [], usage=False))
        yield event("response.in_progress", response=_Responses.response(reply, "in_progress", [], usage=False))
        items = _Responses.items(reply)
        for index, item in enumerate(items):
            yield from _Responses.item_events(event, index, item)
        yield event("response.completed", response=_Responses.response(reply, "completed", items, usage=True))

    @staticmethod
    def item_events(event: Any, index: int, item: dict[str, Any]) -> Iterator[str]:
        """One item's events, from ``output_item.added`` to ``output_item.done``, deltas in word-sized pieces."""
        where = {"item_id": item["id"], "output_index": index}
        kind = item["type"]
        empty = {**item, "status": "in_progress"} if kind != "reasoning" else {**item, "summary": []}
        if kind == "message":
            empty["content"] = []
        if kind == "function_call":
            empty["arguments"] = ""
        yield event("response.output_item.added", item=empty, output_index=index)
        if kind == "reasoning":
            for number, part in enumerate(item["summary"]):
                yield event("response.reasoning_summary_part.added", **where, summary_index=number,
                            part={"type": "summary_text", "text": ""})
                for piece in re.findall(r"\S+\s*|\s+", part["text"]):
                    yield event("response.reasoning_summary_text.delta", **where, summary_index=number, delta=piece,
                                obfuscation="fk")
                yield event("response.reasoning_summary_text.done", **where, summary_index=number, text=part["text"])
                yield event("response.reasoning_summary_part.done", **where, summary_index=number, part=part)
        elif kind == "message":
            for number, part in enumerate(item["content"]):
                at = {**where, "content_index": number}
                blank = {**part, "text": ""} if part["type"] == "output_text" else {**part, "refusal": ""}
                yield event("response.content_part.added", **at, part=blank)
                body = part.get("text") if part["type"] == "output_text" else part.get("refusal")
                name = "output_text" if part["type"] == "output_text" else "refusal"
                extra: dict[str, Any] = {"logprobs": []} if name == "output_text" else {}
                for piece in re.findall(r"\S+\s*|\s+", body or ""):
                    yield event(f"response.{name}.delta", **at, delta=piece, **extra)
                done_field = "text" if name == "output_text" else "refusal"
                yield event(f"response.{name}.done", **at, **{done_field: body}, **extra)
                yield event("response.content_part.done", **at, part=part)
        else:
            arguments = item["arguments"]
            for start in range(0, len(arguments), 8):
                yield event("response.function_call_arguments.delta", **where, delta=arguments[start:start + 8],
                            obfuscation="")
            yield event("response.function_call_arguments.done", **where, arguments=arguments)
        yield event("response.output_item.done", item=item, output_index=index)


_BUILDERS: dict[str, Any] = {"openai": _OpenAI, "responses": _Responses, "anthropic": _Anthropic, "ollama": _Ollama,
                             "gemini": _Gemini}
