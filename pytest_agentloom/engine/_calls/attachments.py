"""An ``llm_call``'s images, PDFs and audio, read into neutral :class:`Attachment` parts (docs/running-workflows.md).

How a rendered ``source`` is read:

- ``http(s)://...`` with ``fetch: local``: downloaded here (30-second timeout,
  at most 5 redirects, each hop checked again); with ``fetch: provider``: sent
  as a URL for the provider to fetch (images only).
- ``data:<type>;base64,<payload>``: decoded; its own type wins over ``media_type``.
- a base64 string: decoded to check it, sent as it is; ``media_type`` is required. A long one
  (128 characters or more) is always base64; a shorter one is base64 when ``media_type`` is set,
  it decodes strictly, and no file of that name exists (else it is a path).
- anything else: a file path. **A deviation from AgentLoom 0.5**: a relative path is
  resolved against the workflow file's folder, never the directory the run
  starts from, like every other path in a workflow (_core/state_paths.py).

Every source may be up to 20 MB. URLs at addresses that are not public
(private, loopback, link-local, carrier-grade NAT...: the rule of
``_core/addresses.py``) are refused with either ``fetch`` unless
``config.sandbox.allow_internal_targets`` is true. ``sandbox.allow_network``
and ``sandbox.allowed_domains`` restrict downloads even with the sandbox
disabled; with it enabled, a file must sit under ``readable_paths`` or
``allowed_paths``. The checks are the built-in tools' own (tools/_sandbox.py).

Only summaries (type, media type, size, sha256) reach the trace: never the bytes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
import re
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..._core.types import Attachment
from ...errors import AgentloomError, SandboxRefusal, StepError, render_message
from .._evaluate.templates import render
from .._format.model import AttachmentSpec, LLMCallStep

__all__ = ["MAX_BYTES", "resolve_attachments"]

MAX_BYTES = 20 * 1024 * 1024
DOWNLOAD_TIMEOUT = 30.0
MAX_REDIRECTS = 5

_FALLBACK = {"image": "image/png", "pdf": "application/pdf", "audio": "audio/wav"}
_BY_EXTENSION = {
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
    ".pdf": "application/pdf", ".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg",
    ".flac": "audio/flac", ".aac": "audio/aac", ".aiff": "audio/aiff",
}
_SAME = {"audio/x-wav": "audio/wav", "audio/wave": "audio/wav", "audio/mp3": "audio/mpeg", "image/jpg": "image/jpeg"}
_DATA_URL = re.compile(r"^data:(?P<type>[\w.+-]+/[\w.+-]+)?(?:;[^,;]*)*;base64,(?P<data>.*)$", re.DOTALL)
_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]+={0,2}\s*$")
_LONG_BASE64 = 128  # characters: below this, a source is read as a path


async def resolve_attachments(step: LLMCallStep, ctx: Any) -> tuple[Attachment, ...]:
    """The step's attachments, read and checked; fails the step (never retried) on any broken rule."""
    return tuple([await _resolve(step, ctx, index, spec) for index, spec in enumerate(step.attachments)])


async def _resolve(step: LLMCallStep, ctx: Any, index: int, spec: AttachmentSpec) -> Attachment:
    where = f"llm_call '{step.id}' attachments[{index}]"
    source = render(spec.source, ctx.state, on_missing=ctx.missing_key).strip()
    if not source:
        raise _fail(where, "source is empty after rendering", "give 'source' a URL, a file path or a data: URL")
    lowered = source.lower()
    if lowered.startswith(("http://", "https://")):
        if spec.fetch == "provider":
            return await _by_url(where, spec, source, ctx)
        data, content_type = await _download(where, source, ctx)
        media_type = spec.media_type or _by_name(urlsplit(source).path) or content_type or _FALLBACK[spec.type]
        return _made(where, spec, data, media_type)
    if spec.fetch == "provider":
        raise _fail(where, "fetch: provider needs an http(s) URL", "use fetch: local (the default) for this source")
    if lowered.startswith("data:"):
        match = _DATA_URL.match(source)
        if match is None:
            raise _fail(where, "is a data: URL without ';base64,'", "write it as data:<media type>;base64,<data>")
        data = _decoded(where, match["data"])
        return _made(where, spec, data, match["type"] or spec.media_type or _FALLBACK[spec.type])
    if _BASE64.match(source) and (len(source) >= _LONG_BASE64 or _short_base64(source, spec, ctx)):
        if spec.media_type is None:
            raise _fail(where, "is a base64 string without 'media_type'",
                        f"set media_type (such as {_FALLBACK[spec.type]}) on the attachment")
        return _made(where, spec, _decoded(where, source), spec.media_type)
    return _made(where, spec, _read_file(where, source, ctx), spec.media_type or _by_name(source)
                 or _FALLBACK[spec.type])


def _made(where: str, spec: AttachmentSpec, data: bytes, media_type: str) -> Attachment:
    media_type = _normal(media_type)
    _check_type(where, spec, media_type)
    if len(data) > MAX_BYTES:
        raise _too_big(where, len(data))
    return Attachment(kind=spec.type, media_type=media_type, data=data, size=len(data),
                      sha256=hashlib.sha256(data).hexdigest())


def _check_type(where: str, spec: AttachmentSpec, media_type: str) -> None:
    fits = {"image": media_type.startswith("image/"), "pdf": media_type == "application/pdf",
            "audio": media_type.startswith("audio/")}[spec.type]
    if not fits:
        raise _fail(where, f"media type '{media_type}' contradicts type '{spec.type}'",
                    f"set type to match the file, or give a media_type of the form {_FALLBACK[spec.type]}")


def _normal(media_type: str) -> str:
    media_type = media_type.split(";", 1)[0].strip().lower()
    return _SAME.get(media_type, media_type)


def _by_name(name: str) -> str | None:
    suffix = PurePosixPath(name).suffix.lower()
    if not suffix:
        return None
    return _BY_EXTENSION.get(suffix) or mimetypes.guess_type("x" + suffix)[0]


def _short_base64(source: str, spec: AttachmentSpec, ctx: Any) -> bool:
    """A short source is base64 when ``media_type`` says what it is, it decodes strictly, and no such file exists."""
    if spec.media_type is None:
        return False
    try:
        base64.b64decode("".join(source.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return not ctx.workflow.resolve_path(source).exists()


def _decoded(where: str, text: str) -> bytes:
    compact = "".join(text.split())
    if len(compact) * 3 // 4 > MAX_BYTES + 3:
        raise _too_big(where, len(compact) * 3 // 4)
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise _fail(where, "is not valid base64", "check the data, or give a file path or URL instead") from None


def _read_file(where: str, source: str, ctx: Any) -> bytes:
    from ...tools._sandbox import Sandbox

    config = ctx.workflow.config.sandbox
    sandbox = Sandbox(config, base_dir=ctx.workflow.base_dir)
    path = sandbox.resolve(source)
    if sandbox.enabled:
        roots = sandbox.roots([*config.readable_paths, *config.allowed_paths])
        if not any(path.is_relative_to(root) for root in roots):
            raise StepError(
                render_message(
                    f"{where}: sandbox refused reading '{source}' ({path}): it is outside "
                    "config.sandbox.readable_paths "
                    "and allowed_paths.",
                    hint="add its folder to config.sandbox.readable_paths.", inline=True),
                code="attachment_refused",
            )
    if not path.is_file():
        raise _fail(where, f"file '{source}' not found (looked at {path}; relative paths are read from the "
                           "workflow file's folder)", "fix the path, or give a URL or data: URL")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise _too_big(where, size)
    return path.read_bytes()


def _sandbox_for_urls(ctx: Any, *, download: bool) -> Any:
    """The built-in tools' URL checks, always on for attachments (even with the sandbox disabled)."""
    from ...tools._sandbox import Sandbox

    config = ctx.workflow.config.sandbox
    # fetch: provider downloads nothing here, so only the internal-address rule applies to it
    update: dict[str, Any] = {"enabled": True} if download else {"enabled": True, "allow_network": True,
                                                                   "allowed_domains": []}
    return Sandbox(config.model_copy(update=update), base_dir=ctx.workflow.base_dir)


async def _check_url(where: str, url: str, ctx: Any, *, download: bool) -> None:
    sandbox = _sandbox_for_urls(ctx, download=download)
    try:
        sandbox.check_url(url)
        await sandbox.check_resolved(url)
    except AgentloomError as exc:
        raise StepError(f"{where}: {exc}", code="attachment_refused") from None


async def _by_url(where: str, spec: AttachmentSpec, url: str, ctx: Any) -> Attachment:
    if spec.type != "image":
        raise _fail(where, f"fetch: provider takes images only, not type '{spec.type}'",
                    "use fetch: local, so AgentLoom downloads the file and sends its bytes")
    await _check_url(where, url, ctx, download=False)
    media_type = _normal(spec.media_type or _by_name(urlsplit(url).path) or _FALLBACK["image"])
    _check_type(where, spec, media_type)
    return Attachment(kind="image", media_type=media_type, url=url)


async def _download(where: str, url: str, ctx: Any) -> tuple[bytes, str | None]:
    import httpx

    from ...providers._common import shared_ssl_context

    verify = shared_ssl_context(httpx)
    transport = _sandbox_for_urls(ctx, download=True).http_transport(verify=verify)  # connects where it checked
    async with httpx.AsyncClient(timeout=DOWNLOAD_TIMEOUT, follow_redirects=False, verify=verify,
                                 transport=transport) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            await _check_url(where, url, ctx, download=True)  # every hop: a redirect may point inside
            try:
                async with client.stream("GET", url) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = urljoin(url, response.headers["location"])
                        continue
                    if response.status_code >= 400:
                        raise _fail(where, f"download of {_shown(url)} failed with HTTP {response.status_code}",
                                    "check the URL")
                    declared = response.headers.get("content-length")
                    if declared is not None and declared.isdigit() and int(declared) > MAX_BYTES:
                        raise _too_big(where, int(declared))
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in response.aiter_bytes():
                        size += len(chunk)
                        if size > MAX_BYTES:
                            raise _too_big(where, size)
                        chunks.append(chunk)
                    content_type = response.headers.get("content-type")
                    if content_type and content_type.split(";")[0].strip().lower() in ("application/octet-stream",
                                                                                        "binary/octet-stream"):
                        content_type = None
                    return b"".join(chunks), content_type
            except httpx.HTTPError as exc:
                raise _fail(where, f"download of {_shown(url)} failed ({type(exc).__name__}: {exc})",
                            "check the URL and the network") from None
            except SandboxRefusal as exc:  # the name resolved inside when connecting
                raise StepError(f"{where}: {exc}", code="attachment_refused") from None
    raise _fail(where, f"download of {_shown(url)} was redirected more than {MAX_REDIRECTS} times",
                "give the file's final URL")


def _shown(url: str) -> str:
    """A URL without its query (a signed URL's query is a secret)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _fail(where: str, what: str, fix: str) -> StepError:
    return StepError(render_message(f"{where}: {what}.", hint=f"{fix}.", inline=True), code="attachment_invalid")


def _too_big(where: str, size: int) -> StepError:
    return _fail(where, f"is {size} bytes, over the 20 MB limit ({MAX_BYTES} bytes)", "send a smaller file")
