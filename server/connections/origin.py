"""Where a connection comes from: the client's address, and whether it reached us over TLS.

A connection from a trusted balancer (``Config.trusted_proxies``) takes both from the PROXY
header the balancer sent first (:mod:`server.net.proxy_header`, read by
:class:`~server.net.listener.OpeningLine`). Any other connection is its own client: its peer
address, over TLS when it came to a TLS listener. Where no balancer is configured (one
machine, as in development), a client on this machine (a loopback peer) counts as TLS:
nothing it sends crosses a network. Behind balancers it does not, so that a balancer on the
same host left out of the trusted list cannot pass remote passwords in the clear.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from server.config import Network


@dataclass(frozen=True, slots=True)
class Origin:
    """``address``: the client's, as text; ``secure``: its bytes travel no network in the
    clear (TLS to us or to the trusted balancer, or a direct loopback client)."""

    address: str
    secure: bool


#: A connection whose transport does not say (a unix socket, a relayed request).
UNKNOWN = Origin("unknown", False)


def _ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def trusted(peer: str, proxies: Iterable[Network]) -> bool:
    """Whether ``peer`` is one of the trusted balancers."""
    ip = _ip(peer)
    return ip is not None and any(ip.version == network.version and ip in network for network in proxies)


def direct(peer: object, tls: bool, balanced: bool) -> Origin:
    """The origin of a connection straight from its client: ``peer`` is the transport's
    ``peername`` (a tuple for TCP); ``balanced``: the service has trusted balancers."""
    if not isinstance(peer, tuple) or not peer:
        return UNKNOWN
    address = str(peer[0])[:64]
    ip = _ip(address)
    if ip is not None:
        address = str(ip)
    return Origin(address, tls or (not balanced and ip is not None and ip.is_loopback))
