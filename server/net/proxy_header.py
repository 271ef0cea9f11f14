"""The PROXY protocol v2 header a trusted balancer puts before a connection's first byte.

Sans-I/O: :func:`parse` reads the bytes a connection has sent so far and says what the header
holds and how long it is, or that more bytes are needed. HAProxy sends it with
``send-proxy-v2-ssl`` (server/deploy/haproxy.cfg): the client's address, and a TLS entry when
the client reached the balancer over TLS.

Why PROXY v2 and not ``X-Forwarded-For``: the address is known at accept time, before any HTTP
is parsed, so the opening line can queue openings fairly per client address; it covers every
request (health checks, the web page, websockets) alike; and it is one binary header at a
fixed place that a client cannot add to or repeat. Why our own parser: the format is a fixed
16-byte prefix and a few type-length-value entries (the spec is HAProxy's
``doc/proxy-protocol.txt``), and the one PyPI package for it wraps the connection in its own
asyncio server, which the opening line cannot use.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass
from typing import Final

#: Every v2 header starts with these 12 bytes (no HTTP request can).
SIGNATURE: Final = b"\r\n\r\n\x00\r\nQUIT\n"
_PREFIX: Final = 16
#: The longest header accepted: addresses, TLS details and a few more entries.
MAX_LENGTH: Final = 1024
_LOCAL, _PROXY = 0x20, 0x21
_TCP4, _TCP6, _UNSPEC = 0x11, 0x21, 0x00
_TYPE_SSL: Final = 0x20
_CLIENT_SSL: Final = 0x01


class BadProxyHeader(ValueError):
    """The bytes are not a PROXY v2 header this server accepts; the message says why."""


@dataclass(frozen=True, slots=True)
class ProxyHeader:
    """What a header says: ``client`` (the address the balancer accepted, None for a
    connection of the balancer's own, such as a health check), whether that client used
    ``tls``, and the header's ``length`` in bytes (what to consume before the request)."""

    client: str | None
    tls: bool
    length: int


def might_be_header(data: bytes) -> bool:
    """Whether ``data`` (a connection's first bytes) begins as a v2 header does, or is too
    short to tell."""
    return SIGNATURE.startswith(data[: len(SIGNATURE)])


def parse(data: bytes) -> ProxyHeader | None:
    """The header at the start of ``data``, or None when more bytes are needed. Raises
    :class:`BadProxyHeader` when ``data`` cannot start a v2 header."""
    if not might_be_header(data):
        raise BadProxyHeader("the connection does not start with a PROXY v2 header")
    if len(data) < _PREFIX:
        return None
    command, family, rest = struct.unpack_from("!BBH", data, len(SIGNATURE))
    length = _PREFIX + rest
    if length > MAX_LENGTH:
        raise BadProxyHeader(f"a PROXY header of {length} bytes is longer than {MAX_LENGTH}")
    if command not in (_LOCAL, _PROXY):
        raise BadProxyHeader(f"PROXY version and command {command:#04x} unknown")
    if len(data) < length:
        return None
    body = data[_PREFIX:length]
    if command == _LOCAL or family == _UNSPEC:
        return ProxyHeader(None, _tls(body[_address_length(family) :]), length)
    if family == _TCP4 and len(body) >= 12:
        return ProxyHeader(str(ipaddress.IPv4Address(body[:4])), _tls(body[12:]), length)
    if family == _TCP6 and len(body) >= 36:
        address = ipaddress.IPv6Address(body[:16])
        mapped = address.ipv4_mapped
        return ProxyHeader(str(mapped or address), _tls(body[36:]), length)
    raise BadProxyHeader(f"PROXY address family {family:#04x} unsupported or cut short")


def _address_length(family: int) -> int:
    return {_TCP4: 12, _TCP6: 36}.get(family, 0)


def _tls(entries: bytes) -> bool:
    """Whether the type-length-value ``entries`` hold an SSL entry saying the client used TLS."""
    at = 0
    while at + 3 <= len(entries):
        kind, size = struct.unpack_from("!BH", entries, at)
        value = entries[at + 3 : at + 3 + size]
        if len(value) < size:
            raise BadProxyHeader("a PROXY header entry is cut short")
        if kind == _TYPE_SSL:
            return bool(value) and bool(value[0] & _CLIENT_SSL)
        at += 3 + size
    return False


def header(client: tuple[str, int] | None, server: tuple[str, int], tls: bool = False) -> bytes:
    """A v2 header as a balancer writes it: ``client`` connected to ``server`` (None: a
    LOCAL header, the balancer's own connection), with an SSL entry when ``tls``. For tests
    and the load generators."""
    entries = struct.pack("!BHBI", _TYPE_SSL, 5, _CLIENT_SSL, 0) if tls else b""
    if client is None:
        return SIGNATURE + struct.pack("!BBH", _LOCAL, _UNSPEC, len(entries)) + entries
    source, target = ipaddress.ip_address(client[0]), ipaddress.ip_address(server[0])
    if source.version == 4 and target.version == 4:
        family, body = _TCP4, source.packed + target.packed
    else:
        family = _TCP6
        body = _as_v6(source).packed + _as_v6(target).packed
    body += struct.pack("!HH", client[1], server[1]) + entries
    return SIGNATURE + struct.pack("!BBH", _PROXY, family, len(body)) + body


def _as_v6(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv6Address:
    if isinstance(address, ipaddress.IPv6Address):
        return address
    return ipaddress.IPv6Address(b"\x00" * 10 + b"\xff\xff" + address.packed)
