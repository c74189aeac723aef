"""An httpx transport whose connections go only to addresses that were checked first, built on public classes.

httpcore's :class:`httpcore.AsyncConnectionPool` takes the network backend that opens
every connection as a constructor argument (``network_backend=``).
:class:`CheckedTransport` builds one with a backend that asks a ``checked(host, port)``
function for the addresses it may connect to (see :func:`.addresses.public_only_transport`),
and connects to one of those very addresses: a name is resolved once, at connect time, and
nothing resolves it again after the check. TLS still names the host (SNI and the
certificate check use the URL's host, as the pool passes it to the TLS layer itself).

The transport does what ``httpx.AsyncHTTPTransport`` does around its own pool: turn an
``httpx.Request`` into an ``httpcore.Request`` and the answer back into an
``httpx.Response``, and map httpcore's errors to httpx's of the same name, the most
specific first, the original chained (:func:`httpx_error`).

Imported only when such a transport is made (it imports httpx and httpcore).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any

import httpcore
import httpx

__all__ = ["ERRORS", "CheckedTransport", "httpx_error"]

#: httpcore's errors and httpx's of the same name (every public httpcore error but ConnectionNotAvailable, which
#: the pool handles itself and never raises to its caller).
ERRORS: dict[type[Exception], type[httpx.HTTPError]] = {
    getattr(httpcore, name): getattr(httpx, name) for name in (
        "TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout",
        "NetworkError", "ConnectError", "ReadError", "WriteError",
        "ProtocolError", "LocalProtocolError", "RemoteProtocolError", "ProxyError", "UnsupportedProtocol",
    )
}

Checked = Callable[[str, int], Awaitable[list[str]]]


def httpx_error(exc: Exception) -> httpx.HTTPError:
    """The httpx error standing for httpcore's ``exc``: of the most specific of its classes that has one."""
    kind = next(ERRORS[kind] for kind in type(exc).__mro__ if kind in ERRORS)
    return kind(str(exc))


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except httpcore.ConnectionNotAvailable:  # pragma: no cover - the pool's own signal, handled inside it
        raise
    except tuple(ERRORS) as exc:
        raise httpx_error(exc) from exc


class _CheckedBackend(httpcore.AsyncNetworkBackend):
    """Connects to the addresses ``checked`` gives for a host, in their order, and to nothing else."""

    def __init__(self, checked: Checked, refuse_socket: Callable[[str], BaseException]) -> None:
        self._checked = checked
        self._refuse_socket = refuse_socket
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self._checked(host, port)  # raises the caller's refusal for an internal one
        except OSError as exc:
            raise httpcore.ConnectError(f"{host} could not be resolved: {exc}") from exc
        last: Exception = httpcore.ConnectError(f"{host} resolved to no address")
        for address in addresses:
            try:
                return await self._inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                     socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        raise self._refuse_socket(path)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _ResponseStream(httpx.AsyncByteStream):
    """httpcore's response body as httpx reads it, its errors mapped."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            with _httpx_errors():
                await close()


class CheckedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore pool whose backend connects only where ``checked`` allows (see the
    module docs). ``refuse_socket(path)`` is raised for a unix socket (never allowed). ``verify`` is what
    httpx takes (``True``, a CA bundle path, an ``ssl.SSLContext``); limits are httpx's defaults."""

    def __init__(self, checked: Checked, refuse_socket: Callable[[str], BaseException], *,
                 verify: Any = True) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify),
            max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0,  # httpx's default limits
            network_backend=_CheckedBackend(checked, refuse_socket),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                             target=request.url.raw_path),
            headers=request.headers.raw,
            content=request.stream,  # type: ignore[arg-type]  # an httpx.AsyncByteStream: async iterable bytes
            extensions=request.extensions,
        )
        with _httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        return httpx.Response(status_code=response.status, headers=response.headers,
                              stream=_ResponseStream(response.stream), extensions=response.extensions)

    async def aclose(self) -> None:
        await self._pool.aclose()
