"""One rule for internal addresses, shared by webhooks, http_request and attachment downloads."""

from __future__ import annotations

import pytest

from pytest_agentloom.core.addresses import is_internal_address, is_internal_host, is_ip_literal


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


def test_hosts_are_judged_as_written_without_resolving_names() -> None:
    assert is_internal_host("localhost") and is_internal_host("api.localhost.") and is_internal_host("10.0.0.1")
    assert not is_internal_host("example.org") and not is_internal_host("8.8.8.8")
    assert is_ip_literal("[::1]") and not is_ip_literal("example.org")
