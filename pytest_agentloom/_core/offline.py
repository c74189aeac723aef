"""Replay's promise that no request leaves the machine, kept at the transport of the providers' HTTP clients.

vcrpy answers a replayed request by patching the HTTP libraries' transports. A vcrpy that does not
patch the library an SDK sends through (vcrpy 8.0 and 8.1 patch httpx, not httpx2, which openai 3.x
and anthropic 2.x use) would let the request go to the real provider. So while a provider call must
be answered from a cassette, the replay layer sets :data:`seal` (a :class:`Seal`), and the providers
build their clients on :func:`offline_transport` instead of a network transport: the library's own
``MockTransport``, whose handler raises the seal's error. vcrpy patches ``MockTransport`` as it
patches the network transports, so a request it intercepts is played as usual; a request that reaches
the handler was not intercepted, and nothing was sent: this transport cannot open a connection.

Providers must not import the replay layer; this module is what both see.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = ["Seal", "offline_transport", "seal", "sealed"]


@dataclass(frozen=True)
class Seal:
    """Why the network is closed, as what to raise: ``refuse(request, transport)`` gets the httpx (or httpx2)
    request that reached the offline transport and that transport's public class name."""

    refuse: Callable[[Any, str], BaseException]


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
