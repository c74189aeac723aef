"""Which network addresses are internal: one rule for webhooks, ``http_request`` and attachment downloads.

A workflow file must not be able to make the engine reach a private network, the
machine itself or a cloud metadata service unless the file says so
(``config.sandbox.allow_internal_targets``). An address is internal when it is
private, loopback, link-local, reserved, multicast or unspecified; an IPv4
address mapped into IPv6 is judged as the IPv4 address it carries. The names
``localhost`` and ``*.localhost`` are internal without being resolved.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

__all__ = ["is_internal_address", "is_internal_host", "is_ip_literal", "resolve_host"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def is_internal_address(address: IPAddress | str) -> bool:
    """Whether ``address`` (an IP address or its text) is one a workflow may not reach by default."""
    if isinstance(address, str):
        address = ipaddress.ip_address(address.strip("[]"))
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any((address.is_private, address.is_loopback, address.is_link_local, address.is_reserved,
                address.is_multicast, address.is_unspecified))


def is_ip_literal(host: str) -> bool:
    """Whether ``host`` is written as an IP address rather than a name."""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def is_internal_host(host: str) -> bool:
    """Whether ``host`` is internal as written: a ``localhost`` name or an internal IP literal (names unresolved)."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    return is_ip_literal(name) and is_internal_address(name)


async def resolve_host(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (the system resolver, off the event loop)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]
