"""Which network addresses are internal: one rule for webhooks, ``http_request`` and attachment downloads.

A workflow file must not be able to make the engine reach a private network, the
machine itself or a cloud metadata service unless the file says so
(``config.sandbox.allow_internal_targets``). An address is internal unless it is
*global* in the sense of :attr:`ipaddress.IPv4Address.is_global` (the IANA
special-purpose registries): private, loopback, link-local, carrier-grade NAT
(``100.64.0.0/10``, where one large cloud serves instance metadata), shared,
documentation, benchmarking, reserved and unspecified ranges are all internal,
and so is every multicast address. An IPv6 address that carries an IPv4 one is
internal when either is: IPv4-mapped (``::ffff:a.b.c.d``), IPv4-compatible
(``::a.b.c.d``, deprecated but still routed by some stacks to the IPv4 address),
6to4 (``2002::/16``), Teredo (``2001::/32``, its server and its client) and the
well-known NAT64 prefix (``64:ff9b::/96``). The local-use NAT64 prefix
``64:ff9b:1::/48`` is internal as a whole: it is not globally reachable, and
where its operator puts the IPv4 address inside it is a local choice. The
names ``localhost`` and ``*.localhost`` are internal without being resolved.

Approval-gate webhooks alone may be opened a little (``config.sandbox.allow_internal_webhook_targets``,
upstream's key): :func:`is_local_network_address` names what that opens, loopback and the private
networks, never link-local (where the cloud metadata services live) nor a metadata address elsewhere.

The three callers check a URL before they send anything (for a clear
refusal), and then connect through :func:`public_only_transport`, which
resolves the name once more, checks every address it got and connects to one
of those very addresses: a DNS server that answers a public address for the
check and an internal one next (DNS rebinding) is refused at connect time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable
from typing import Any

__all__ = [
    "checked_addresses", "is_internal_address", "is_internal_host", "is_ip_literal", "is_local_network_address",
    "public_only_transport", "refused_address", "resolve_host",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: local use, never globally reachable
_COMPATIBLE = ipaddress.IPv6Network("::/96")  # ::a.b.c.d (:: and ::1 carry 0.0.0.0/8: internal)
#: what ``allow_internal_webhook_targets`` opens: loopback, RFC 1918, carrier-grade NAT, IPv6 unique local
LOCAL_NETWORKS = tuple(ipaddress.ip_network(net) for net in (
    "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "::1/128", "fc00::/7"))
#: cloud instance-metadata addresses inside those networks (Alibaba's, AWS's IPv6 ones): never opened
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(address) for address in (
    "100.100.100.200", "fd00:ec2::254", "fd00:ec2::23"))


def is_internal_address(address: IPAddress | str) -> bool:
    """Whether ``address`` (an IP address or its text) is one a workflow may not reach by default."""
    if isinstance(address, str):
        address = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address in _LOCAL_NAT64:
        return True
    return any(not one.is_global or one.is_multicast for one in _judged(address))


def _judged(address: IPAddress) -> list[IPAddress]:
    """The addresses ``address`` must pass as: the IPv4 addresses it carries, if any, else itself.

    A form that carries an IPv4 address (mapped, IPv4-compatible, NAT64, 6to4, Teredo) is judged by what
    it carries alone: whether the prefix itself counts as global differs between Python versions
    (3.13 calls 6to4 non-global, 3.11 global), and the host it reaches is the carried one.
    """
    if not isinstance(address, ipaddress.IPv6Address):
        return [address]
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    carried = [address.sixtofour, *(address.teredo or ())]
    if address in _NAT64 or address in _COMPATIBLE:
        carried.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [one for one in carried if one is not None] or [address]


def is_local_network_address(address: IPAddress | str) -> bool:
    """Whether ``address`` is on loopback or a private network, and no cloud metadata address.

    What ``allow_internal_webhook_targets`` lets a webhook reach: link-local (``169.254.0.0/16``, where
    AWS, Google Cloud, Azure and others serve instance metadata, and ``fe80::/10``), the metadata
    addresses of :data:`METADATA_ADDRESSES`, multicast, unspecified and reserved addresses stay refused.
    An IPv6 form that carries an IPv4 address is judged by the address it carries.
    """
    if isinstance(address, str):
        address = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address in _LOCAL_NAT64:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.is_loopback:  # ::1, which _judged reads as 0.0.0.1
        return True
    return all(one not in METADATA_ADDRESSES and any(one in net for net in LOCAL_NETWORKS)
               for one in _judged(address))


def refused_address(address: IPAddress | str, *, local_ok: bool = False) -> bool:
    """Whether a connection to ``address`` is refused: an internal one, unless ``local_ok`` opens it."""
    return is_internal_address(address) and not (local_ok and is_local_network_address(address))


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


Refuse = Callable[[str, str], BaseException]


async def checked_addresses(host: str, port: int, refuse: Refuse, *, local_ok: bool = False) -> list[str]:
    """The addresses a connection to ``host`` may go to: ``host`` resolved once, every address checked.

    ``refuse(host, address)`` makes the exception raised for an internal one (a ``localhost`` name, an
    internal IP literal, or a name that resolves to any internal address). ``local_ok`` lets loopback and
    private addresses through (:func:`is_local_network_address`; a ``localhost`` name is then resolved). A
    name that cannot be resolved raises the resolver's ``OSError``.
    """
    if not local_ok and is_internal_host(host):
        raise refuse(host, host)
    addresses = [host.strip("[]")] if is_ip_literal(host) else await resolve_host(host, port)
    for address in addresses:
        if refused_address(address, local_ok=local_ok):
            raise refuse(host, address)
    return list(dict.fromkeys(addresses))


def public_only_transport(refuse: Refuse, *, verify: Any = True, local_ok: bool = False) -> Any:
    """An httpx transport that connects only to public addresses, and to the address it checked.

    Each host name is resolved once, at connect time, by :func:`checked_addresses`; the connection goes to
    one of the addresses it checked, so a DNS answer that changes between a check and the connection (DNS
    rebinding) cannot send the request inside. ``refuse(host, address)`` makes the exception raised for an
    internal address (and for a unix socket). ``verify`` is httpx's (``True``, a CA bundle, an
    ``ssl.SSLContext``). TLS still names the host (SNI, certificate checks). A proxy from the environment
    resolves names itself: the check then applies to the proxy's address only. ``local_ok`` is
    :func:`checked_addresses`'s (approval-gate webhooks with ``allow_internal_webhook_targets``).
    """
    from .public_transport import CheckedTransport

    return CheckedTransport(lambda host, port: checked_addresses(host, port, refuse, local_ok=local_ok),
                            lambda path: refuse(path, "a unix socket"), verify=verify)
