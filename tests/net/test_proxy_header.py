"""The PROXY v2 header: what a balancer writes is read back, cut short asks for more, and
anything else is refused with a reason."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.net.proxy_header import BadProxyHeader, ProxyHeader, header, might_be_header, parse

addresses = st.one_of(
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(str).filter(lambda text: ipaddress.IPv6Address(text).ipv4_mapped is None),
)
ports = st.integers(0, 65535)


@given(addresses, ports, st.ip_addresses(v=4).map(str), ports, st.booleans(), st.binary(max_size=40))
def test_a_balancers_header_is_read_back_whole_with_what_follows_untouched(
    client: str, client_port: int, server: str, server_port: int, tls: bool, request: bytes
) -> None:
    data = header((client, client_port), (server, server_port), tls)
    read = parse(data + request)
    assert read == ProxyHeader(client, tls, len(data))
    assert (data + request)[read.length :] == request


@given(addresses, st.booleans())
def test_a_header_cut_anywhere_asks_for_more(client: str, tls: bool) -> None:
    data = header((client, 1234), ("10.0.0.1", 8765), tls)
    for end in range(len(data)):
        assert parse(data[:end]) is None


def test_a_health_check_of_the_balancers_own_names_no_client() -> None:
    data = header(None, ("10.0.0.1", 8765))
    assert parse(data) == ProxyHeader(None, False, len(data))


def test_an_ipv4_client_through_an_ipv6_balancer_reads_as_ipv4() -> None:
    mapped = str(ipaddress.IPv6Address("::ffff:198.51.100.4"))
    read = parse(header((mapped, 1), ("::1", 2)))
    assert read is not None
    assert read.client == "198.51.100.4"


@pytest.mark.parametrize(
    "data",
    [
        b"GET / HTTP/1.1\r\n\r\n",  # a plain request
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n",  # version 1, not accepted
        header(("1.2.3.4", 1), ("5.6.7.8", 2))[:12] + b"\x31" + header(("1.2.3.4", 1), ("5.6.7.8", 2))[13:],
        header(("1.2.3.4", 1), ("5.6.7.8", 2))[:14] + b"\xff\xff",  # far too long
        header(("1.2.3.4", 1), ("5.6.7.8", 2))[:13] + b"\x31" + header(("1.2.3.4", 1), ("5.6.7.8", 2))[14:],
    ],
    ids=["http", "version-1", "version-3", "too-long", "udp"],
)
def test_anything_else_is_refused(data: bytes) -> None:
    with pytest.raises(BadProxyHeader):
        parse(data)


def test_a_plain_request_is_told_from_a_header_by_its_first_byte() -> None:
    assert might_be_header(b"")
    assert might_be_header(b"\r\n\r\n")
    assert not might_be_header(b"GET ")
