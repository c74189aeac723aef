"""Replay's promise that no request leaves the machine, kept at the transport of the providers' HTTP clients.

vcrpy answers a replayed request by patching the HTTP libraries' transports. A vcrpy that does not
patch the library an SDK sends through (vcrpy 8.0 and 8.1 patch httpx, not httpx2, which openai 3.x
and anthropic 2.x use) would let the request go to the real provider. So while a provider call must
be answered from a cassette, the replay layer sets :data:`seal` (a :class:`Seal`), and the providers
build their clients on :func:`offline_transport` instead of a network transport: the library's own
``MockTransport``, whose handler raises the seal's error. vcrpy patches ``MockTransport`` as it
patches the network transports, so a request it intercepts is played as usual; a request that reaches
the handler was not intercepted, and nothing was sent: this transport cannot open a connection.

A provider may also bring a client of its own: raw sockets, asyncio streams, an HTTP library vcrpy
does not patch (or vcrpy with its patching turned off). So a seal also guards the sockets: the first
:class:`Seal` made adds a Python audit hook (:func:`sys.addaudithook`, CPython's public hook on
``socket.connect``, ``socket.getaddrinfo`` and the other calls that reach the network), which refuses
those calls, before they happen, in a task (or a thread started with its context, as
``asyncio.to_thread`` does) whose provider call is sealed. The refusal is the seal's error, given a
:class:`Connection` that says where the socket was going. Outside a sealed call the hook does nothing
but compare the event's name. A thread started without the caller's context does not see the seal.

Providers must not import the replay layer; this module is what both see.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SOCKET_TRANSPORT", "Connection", "Seal", "offline_transport", "seal", "sealed"]

#: the transport name a refusal at the socket level is given (``refuse(connection, SOCKET_TRANSPORT)``)
SOCKET_TRANSPORT = "socket"
#: the audit events that reach the network: each is refused in a sealed call
_NETWORK_EVENTS = frozenset({"socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
                             "socket.getnameinfo", "socket.sendto", "socket.sendmsg"})
_HOOKED = threading.Lock()
_hook_added = False


@dataclass(frozen=True)
class Seal:
    """Why the network is closed, as what to raise: ``refuse(request, transport)`` gets the httpx (or httpx2)
    request that reached the offline transport and that transport's public class name, or a
    :class:`Connection` and :data:`SOCKET_TRANSPORT` for a socket the audit hook stopped."""

    refuse: Callable[[Any, str], BaseException]

    def __post_init__(self) -> None:
        _add_socket_guard()


@dataclass(frozen=True)
class Connection:
    """Where a socket refused during a sealed call was going, shaped as a request (``method``, ``url``)."""

    event: str
    host: str
    port: int | None
    method: str = "CONNECT"
    url: Any = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", _Where(self.host, self.port))


@dataclass(frozen=True)
class _Where:
    host: str
    port: int | None
    scheme: str = "socket"
    path: str = ""


def _add_socket_guard() -> None:
    """Add the audit hook once per process (an audit hook cannot be removed: it checks :data:`seal`)."""
    global _hook_added
    with _HOOKED:
        if not _hook_added:
            sys.addaudithook(_refuse_in_sealed_calls)
            _hook_added = True


def _refuse_in_sealed_calls(event: str, args: tuple[Any, ...]) -> None:
    if event not in _NETWORK_EVENTS:
        return
    current = seal.get()
    if current is None:
        return
    host, port = _destination(event, args)
    raise current.refuse(Connection(event, host, port), SOCKET_TRANSPORT)


def _destination(event: str, args: tuple[Any, ...]) -> tuple[str, int | None]:
    """The host and port an audited socket call names (its arguments differ per event)."""
    where = args[1] if event in ("socket.connect", "socket.sendto") and len(args) > 1 else args[0] if args else ""
    if event == "socket.sendmsg":
        where = args[1] if len(args) > 1 else ""
    if event == "socket.getaddrinfo" and len(args) > 1:
        return str(args[0]), args[1] if isinstance(args[1], int) else None
    if isinstance(where, tuple) and where:
        return str(where[0]), where[1] if len(where) > 1 and isinstance(where[1], int) else None
    return str(where), None


#: The seal of the provider call in progress in this task, if its requests must be answered from a cassette.
seal: ContextVar[Seal | None] = ContextVar("agentloom_seal", default=None)


def sealed() -> bool:
    """Whether a request made now must not reach the network."""
    return seal.get() is not None


def offline_transport(library: Any) -> Any | None:
    """``library.MockTransport`` (``library`` is ``httpx`` or ``httpx2``) that raises the current seal's error
    for every request it gets, when a seal is set; ``None`` (the library's network transport) otherwise.

    The error is the seal's at the time of the request (a client made under one seal may be used under
    another), else the one the transport was made under.
    """
    made_under = seal.get()
    if made_under is None:
        return None
    name = f"{library.__name__}.MockTransport"

    def unsent(request: Any) -> Any:
        raise (seal.get() or made_under).refuse(request, name)

    return library.MockTransport(unsent)
