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
:class:`Connection` that says where the socket was going.

A thread started without the call's context (a plain ``threading.Thread``, ``loop.run_in_executor``,
the executor ``loop.getaddrinfo`` resolves names in) does not see the seal's context variable, so the
seal also counts, process-wide, the threads that run a sealed call (:func:`sealing`): while any sealed
call runs, the hook refuses the network to every *other* thread too. Tasks of the thread that runs the
sealed call, but outside it, keep the network (the rest of the test's event loop). Outside a sealed
call the hook does nothing but compare the event's name and read one dictionary's size.

Providers must not import the replay layer; this module is what both see.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SOCKET_TRANSPORT", "Connection", "Seal", "enter_seal", "leave_seal", "offline_transport", "seal", "sealed",
           "sealing"]

#: the transport name a refusal at the socket level is given (``refuse(connection, SOCKET_TRANSPORT)``)
SOCKET_TRANSPORT = "socket"
#: the audit events that reach the network: each is refused in a sealed call
_NETWORK_EVENTS = frozenset({"socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
                             "socket.getnameinfo", "socket.sendto", "socket.sendmsg"})
_HOOKED = threading.Lock()
_hook_added = False
#: the threads running a sealed call now (thread id -> how many): every other thread is refused the network
#: while this holds anything, with the seal entered last
_SEALED_THREADS: dict[int, int] = {}
_latest_seal: Seal | None = None


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
        if not _SEALED_THREADS:
            return
        current = _other_threads_seal()
        if current is None:
            return
    host, port = _destination(event, args)
    raise current.refuse(Connection(event, host, port), SOCKET_TRANSPORT)


def _other_threads_seal() -> Seal | None:
    """The seal of the sealed calls running in other threads, when this thread runs none: a thread started
    without the call's context is refused as the call's own are."""
    if threading.get_ident() in _SEALED_THREADS:
        return None  # the thread of a sealed call: its other tasks are outside it
    return _latest_seal if _SEALED_THREADS else None


def enter_seal(value: Seal) -> Token[Seal | None]:
    """Seal the provider call about to run in this task (see :func:`sealing`); give the token to :func:`leave_seal`.

    Each thread changes only its own entry of the count, so no lock is needed (a dict's item assignment is
    atomic): the whole costs about a microsecond per call (``bench/network_guard.py``).
    """
    global _latest_seal
    token = seal.set(value)
    ident = threading.get_ident()
    _SEALED_THREADS[ident] = _SEALED_THREADS.get(ident, 0) + 1
    _latest_seal = value
    return token


def leave_seal(token: Token[Seal | None]) -> None:
    """End the sealed call :func:`enter_seal` began (in the same task)."""
    ident = threading.get_ident()
    left = _SEALED_THREADS.get(ident, 1) - 1
    if left > 0:
        _SEALED_THREADS[ident] = left
    else:
        _SEALED_THREADS.pop(ident, None)
    seal.reset(token)


@contextmanager
def sealing(value: Seal | None) -> Iterator[None]:
    """Seal the provider call run inside (``value`` ``None``: leave it open): set :data:`seal` for it and
    count its thread, so threads started without its context are refused the network while it runs."""
    if value is None:
        yield
        return
    token = enter_seal(value)
    try:
        yield
    finally:
        leave_seal(token)


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
