"""One rule for internal addresses, shared by webhooks, http_request and attachment downloads."""

from __future__ import annotations

import pytest

from pytest_agentloom._core.addresses import is_internal_address, is_internal_host, is_ip_literal


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.5.4", "169.254.169.254",
                                     "0.0.0.0", "224.0.0.1", "::1", "fe80::1", "::ffff:10.0.0.1", "[::1]",
                                     "100.64.0.1", "100.100.100.200", "100.127.255.254", "192.0.2.1", "198.18.0.1",
                                     "240.0.0.1", "255.255.255.255", "::ffff:100.64.0.1", "64:ff9b::a9fe:a9fe",
                                     "2002:a9fe:a9fe::1", "2001:db8::1", "fc00::1", "ff02::1", "fe80::1%eth0"])
def test_private_loopback_link_local_and_mapped_addresses_are_internal(address: str) -> None:
    assert is_internal_address(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:1.1.1.1", "100.128.0.1",
                                     "100.63.255.255", "64:ff9b::808:808"])
def test_public_addresses_are_not(address: str) -> None:
    assert not is_internal_address(address)


#: each IPv6 form that carries an IPv4 address, with the internal IPv4 address it carries
IPV6_FORMS_OF_INTERNAL_IPV4 = {
    "::169.254.169.254": "IPv4-compatible", "::127.0.0.1": "IPv4-compatible", "::10.0.0.1": "IPv4-compatible",
    "::ffff:169.254.169.254": "IPv4-mapped", "::ffff:127.0.0.1": "IPv4-mapped",
    "64:ff9b::a9fe:a9fe": "NAT64", "64:ff9b::7f00:1": "NAT64", "64:ff9b:1::a9fe:a9fe": "local-use NAT64",
    "2002:a9fe:a9fe::1": "6to4", "2002:7f00:1::": "6to4",
    "2001:0:4136:e378:8000:63bf:5601:5601": "Teredo",  # client 169.254.169.254, stored inverted
}
#: the same forms carrying a public IPv4 address (8.8.8.8), which stay public where the form can be global
IPV6_FORMS_OF_PUBLIC_IPV4 = ["::8.8.8.8", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize("address", list(IPV6_FORMS_OF_INTERNAL_IPV4))
def test_ipv6_forms_of_internal_ipv4_addresses_are_internal(address: str) -> None:
    assert is_internal_address(address) and is_internal_address(f"[{address}]") and is_internal_host(address)


@pytest.mark.parametrize("address", IPV6_FORMS_OF_PUBLIC_IPV4)
def test_ipv6_forms_of_public_ipv4_addresses_stay_public(address: str) -> None:
    assert not is_internal_address(address)


def test_the_local_use_nat64_prefix_is_internal_whatever_it_carries() -> None:
    assert is_internal_address("64:ff9b:1::808:808") and is_internal_address("64:ff9b:1:ab::8.8.8.8")


def test_teredo_carries_its_client_inverted() -> None:
    import ipaddress

    teredo = ipaddress.IPv6Address("2001:0:4136:e378:8000:63bf:5601:5601").teredo
    assert teredo is not None and str(teredo[1]) == "169.254.169.254"


def test_hosts_are_judged_as_written_without_resolving_names() -> None:
    assert is_internal_host("localhost") and is_internal_host("api.localhost.") and is_internal_host("10.0.0.1")
    assert not is_internal_host("example.org") and not is_internal_host("8.8.8.8")
    assert is_ip_literal("[::1]") and not is_ip_literal("example.org")


# -- the transport that connects only where it checked (_core/public_transport.py) -------------------------------

def test_every_httpcore_error_becomes_the_httpx_error_of_its_name_the_most_specific_first() -> None:
    import httpcore
    import httpx

    from pytest_agentloom._core.public_transport import ERRORS, httpx_error

    raised = {name for name in httpcore.__all__ if isinstance(getattr(httpcore, name), type)
              and issubclass(getattr(httpcore, name), Exception)} - {"ConnectionNotAvailable"}
    assert {kind.__name__ for kind in ERRORS} == raised
    for name in raised:
        mapped = httpx_error(getattr(httpcore, name)("why"))
        assert type(mapped) is getattr(httpx, name) and str(mapped) == "why"


def _serve_once(answer: bytes) -> tuple[int, list[bytes]]:
    """A server on 127.0.0.1 that answers one connection with ``answer`` and closes it; what it read."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            seen.append(connection.recv(65536))
            connection.sendall(answer)
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], seen


def _fetch(port: int, checked_to: list[str]) -> tuple[int, bytes]:
    import asyncio

    import httpx

    from pytest_agentloom._core.public_transport import CheckedTransport

    asked: list[tuple[str, int]] = []

    async def checked(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return checked_to

    async def fetch() -> tuple[int, bytes]:
        transport = CheckedTransport(checked, lambda path: ValueError(path))
        async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
            response = await client.get(f"http://service.example.org:{port}/x")
            return response.status_code, response.content

    answer = asyncio.run(fetch())
    assert asked == [("service.example.org", port)]
    return answer


def test_the_transport_connects_to_a_checked_address_and_keeps_the_host_header() -> None:
    port, seen = _serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
    assert _fetch(port, ["::1", "127.0.0.1"]) == (200, b"ok")  # nothing listens on ::1: the next one is tried
    assert f"Host: service.example.org:{port}".encode() in seen[0]


def test_a_body_cut_short_is_httpxs_remote_protocol_error() -> None:
    import httpx

    port, _ = _serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nshort")
    with pytest.raises(httpx.RemoteProtocolError) as info:
        _fetch(port, ["127.0.0.1"])
    assert type(info.value.__cause__).__module__.startswith("httpcore")


@pytest.mark.parametrize("address", ["127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.5.4", "192.168.0.1", "100.64.0.1",
                                     "::1", "fc00::1", "fd12:3456::1", "::ffff:10.0.0.1", "[::1]"])
def test_the_webhook_opt_in_opens_loopback_and_private_networks(address: str) -> None:
    from pytest_agentloom._core.addresses import is_local_network_address, refused_address

    assert is_local_network_address(address)
    assert refused_address(address) and not refused_address(address, local_ok=True)


@pytest.mark.parametrize("address", ["169.254.169.254", "169.254.170.2", "fe80::1", "100.100.100.200",
                                     "fd00:ec2::254", "fd00:ec2::23", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe",
                                     "64:ff9b:1::7f00:1", "0.0.0.0", "::", "224.0.0.1", "ff02::1", "192.0.2.1",
                                     "240.0.0.1", "255.255.255.255"])
def test_the_webhook_opt_in_never_opens_link_local_metadata_or_special_addresses(address: str) -> None:
    from pytest_agentloom._core.addresses import is_local_network_address, refused_address

    assert not is_local_network_address(address)
    assert refused_address(address, local_ok=True)


def test_public_addresses_are_never_refused() -> None:
    from pytest_agentloom._core.addresses import refused_address

    assert not refused_address("8.8.8.8") and not refused_address("8.8.8.8", local_ok=True)
