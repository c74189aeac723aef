"""The cassette file: readable YAML that gives a reviewable diff when a test is re-recorded.

Layout::

    # pytest-agentloom cassette (format 1): the HTTP calls of one test, secrets scrubbed.
    format_version: 1
    provenance: {recorded_at, test, record_mode, pytest_agentloom, python, sdks, workflows}
    interactions:
    - request:
        method: POST
        url: http://127.0.0.1:8011/v1/chat/completions
        headers: {content-type: [application/json]}
        body:
          json: {model: gpt-4o-mini, messages: [...]}      # JSON as data, not an escaped string
      response:
        status: 200
        reason: OK
        headers: {content-type: [text/event-stream]}
        body:
          text: |                                           # SSE and NDJSON as literal text blocks
            data: {"id": ...}

A body is one of ``json:`` (structured), ``text:`` (UTF-8 text, multi-line as
a literal block) or ``base64:`` (anything else). In memory, requests are
vcrpy ``Request`` objects and responses vcrpy's response dicts with ``bytes``
bodies, so vcrpy's stubs can play them.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .._core.files import write_text_atomic
from .._core.yaml_io import DEFAULT_LIMITS, load_yaml, read_text_capped
from ..errors import CassetteFormatError, DataReadError, render_message
from ._body_limits import body_problem
from ._provenance import Provenance

if TYPE_CHECKING:
    from vcr.request import Request

__all__ = ["FORMAT_VERSION", "decode_body", "dumps", "encode_body", "interaction_document", "loads", "read_cassette",
           "write_atomic"]

FORMAT_VERSION = 1
_HEADER = "# pytest-agentloom cassette (format {v}): the HTTP calls of one test, secrets scrubbed.\n"

try:  # the C implementation when PyYAML has it (reading goes through _core.yaml_io, which uses C too)
    _BaseDumper: type = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _BaseDumper = yaml.SafeDumper


class _Dumper(_BaseDumper):  # type: ignore[misc,valid-type]
    """Safe YAML with multi-line strings as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


# -- bodies ------------------------------------------------------------------------------------------------


def _content_type(headers: Any) -> str:
    if not headers:
        return ""
    for name, value in headers.items():
        if name.lower() == "content-type":
            first = value[0] if isinstance(value, list | tuple) and value else value
            return str(first or "").lower()
    return ""


def _is_json_type(content_type: str) -> bool:
    base = content_type.split(";")[0].strip()
    return base.endswith("json") and "ndjson" not in base and "jsonl" not in base


def encode_body(body: bytes | str | None, content_type: str) -> dict[str, Any] | None:
    """A body as the file stores it: ``{"json": data}``, ``{"text": str}`` or ``{"base64": str}``."""
    if body is None or body == b"" or body == "":
        return None
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode("ascii")}
    if _is_json_type(content_type) or (not content_type and text[:1] in "{["):
        try:
            return {"json": json.loads(text)}
        except ValueError:
            pass
    return {"text": text}


def decode_body(stored: Any) -> bytes | None:
    """The bytes of a stored body (JSON re-serialised compactly; the SDKs only read it as JSON)."""
    if stored is None:
        return None
    if not isinstance(stored, dict) or len(stored) != 1:
        raise ValueError(f"a body must be a mapping with one of json/text/base64, got {stored!r:.80}")
    ((kind, value),) = stored.items()
    if kind == "json":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if kind == "text":
        return str(value).encode("utf-8")
    if kind == "base64":
        return base64.b64decode(value)
    raise ValueError(f"unknown body kind {kind!r} (expected json, text or base64)")


def _headers_out(headers: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in (headers or {}).items():
        values = value if isinstance(value, list | tuple) else [value]
        out.setdefault(str(name).lower(), []).extend(str(item) for item in values)
    return dict(sorted(out.items()))


# -- whole files -------------------------------------------------------------------------------------------


def interaction_document(request: Request, response: dict[str, Any]) -> dict[str, Any]:
    """One interaction as the file stores it: ``{"request": {...}, "response": {...}}`` of plain data."""
    request_headers = _headers_out(request.headers)
    response_headers = _headers_out(response.get("headers"))
    status = response.get("status") or {}
    req: dict[str, Any] = {"method": request.method, "url": request.uri, "headers": request_headers}
    req_body = encode_body(request.body, _content_type(request_headers))
    if req_body is not None:
        req["body"] = req_body
    resp: dict[str, Any] = {"status": int(status.get("code", 200)), "reason": status.get("message") or ""}
    resp["headers"] = response_headers
    resp_body = encode_body((response.get("body") or {}).get("string"), _content_type(response_headers))
    if resp_body is not None:
        resp["body"] = resp_body
    return {"request": req, "response": resp}


def dumps(provenance: Provenance | None, requests: list[Request], responses: list[dict[str, Any]]) -> str:
    """The text of a cassette file."""
    interactions = [interaction_document(request, response)
                    for request, response in zip(requests, responses, strict=True)]
    document: dict[str, Any] = {"format_version": FORMAT_VERSION}
    if provenance is not None:
        document["provenance"] = provenance.to_dict()
    document["interactions"] = interactions
    text = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100_000,
                     default_flow_style=False)
    if text.endswith("\n...\n"):
        # PyYAML closes a document that ends in a kept block scalar (a stream body ending in blank lines)
        # with "..."; without it the scalar still ends at the end of the file, so it reads back the same
        text = text[: -len("...\n")]
    return _HEADER.format(v=FORMAT_VERSION) + text


def loads(text: str, *, path: str = "<cassette>") -> tuple[Provenance | None, list[Request], list[dict[str, Any]]]:
    """Provenance, vcrpy requests and vcrpy response dicts from a cassette's text."""
    from vcr.request import Request

    how = f"delete {path} and re-record it with --agentloom-record"
    try:
        document = load_yaml(text, file=path)
    except DataReadError as exc:
        raise CassetteFormatError(
            render_message(f"Cassette {path} is not valid YAML: {exc.problem.removeprefix('invalid YAML: ')}"
                           f"{f' ({exc.at_line.strip()})' if exc.line else ''}",
                           hint=f"{how}."), path=path
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("interactions", ()), list | None):
        raise CassetteFormatError(
            render_message(f"Cassette {path} is not a pytest-agentloom cassette (no 'interactions' list).",
                           hint=f"{how}."),
            path=path,
        )
    version = document.get("format_version")
    if version != FORMAT_VERSION:
        raise CassetteFormatError(
            render_message(
                f"Cassette {path} has format_version {version!r}; this version of pytest-agentloom reads "
                f"format_version {FORMAT_VERSION}.",
                hint=f"{how}."),
            path=path,
        )
    raw_provenance = document.get("provenance")
    provenance = Provenance.from_dict(raw_provenance) if isinstance(raw_provenance, dict) else None
    requests: list[Request] = []
    responses: list[dict[str, Any]] = []
    for number, item in enumerate(document.get("interactions") or [], start=1):
        try:
            req, resp = item["request"], item["response"]
            request = Request(req["method"], req["url"], decode_body(req.get("body")), _headers_in(req))
            response = {
                "status": {"code": int(resp["status"]), "message": resp.get("reason") or ""},
                "headers": {name: _header_values(values) for name, values in _headers(resp).items()},
                "body": {"string": decode_body(resp.get("body")) or b""},
            }
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CassetteFormatError(
                render_message(f"Cassette {path}: interaction {number} is malformed ({type(exc).__name__}: {exc}).",
                               hint=f"{how}."),
                path=path,
            ) from exc
        _check_body(response, number, path)
        requests.append(request)
        responses.append(response)
    return provenance, requests, responses


def _check_body(response: dict[str, Any], number: int, path: str) -> None:
    """Refuse a response body the client or the SDK could not survive (a gzip bomb, 100,000 nested brackets)."""
    problem = body_problem(response["body"]["string"], response["headers"])
    if problem is not None:
        raise CassetteFormatError(
            render_message(f"Cassette {path}: the response body of interaction {number} {problem}; it is not "
                           "replayed.",
                           hint=f"a provider does not send such a body: look at where the cassette came from, "
                                f"then delete {path} and re-record it with --agentloom-record."),
            path=path,
        )


def _headers(part: dict[str, Any]) -> dict[str, Any]:
    """A request's or response's ``headers``: a mapping of names to a value or a list of values."""
    headers = part.get("headers") or {}
    if not isinstance(headers, dict):
        raise TypeError(f"'headers' must be a mapping of names to values, got a {type(headers).__name__}")
    return headers


def _header_values(values: Any) -> list[str]:
    return [str(value) for value in values] if isinstance(values, list) else [str(values)]


def _headers_in(req: dict[str, Any]) -> dict[str, str]:
    return {name: ", ".join(map(str, values)) if isinstance(values, list) else str(values)
            for name, values in _headers(req).items()}


def read_cassette(path: str | Path) -> tuple[Provenance | None, list[Request], list[dict[str, Any]]] | None:
    """The cassette at ``path``, or ``None`` when there is no such file."""
    file = Path(path)
    try:
        text = read_text_capped(file, max_bytes=DEFAULT_LIMITS.max_bytes, what="cassette")
    except FileNotFoundError:
        return None
    except DataReadError as exc:
        raise CassetteFormatError(render_message(f"Cassette {file} cannot be read: {exc.problem}.",
                                                 hint="delete it and re-record it with --agentloom-record."),
                                  path=str(file)) from None
    return loads(text, path=str(file))


def write_atomic(path: str | Path, text: str) -> None:
    """Write a cassette's ``text`` to ``path`` atomically and durably (see :mod:`pytest_agentloom._core.files`)."""
    write_text_atomic(Path(path), text, durable=True)
