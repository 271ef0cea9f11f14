"""The owner's stand-ins for other nodes' connections, and the ones it dropped.

A *proxy* is a :class:`~server.connections.link.ClientLink` with no socket that stands on a
room's owner for connection ``link`` of node ``origin``: the router makes one for a
forwarded request, the quick-match former for a player waiting on another node. What is
sent to it goes back to that node in the post (:class:`Proxies` is its relay). A proxy is
dropped when its connection closes, or when its node goes silent past its TTL; the latter
are remembered for a while (:data:`DROPPED_KEEP`), so that a request arriving on one later
is answered with a reroute instead of a new proxy that would follow none of its rooms.
"""

from __future__ import annotations

from typing import Final

from server.cluster.inbox import Frames, Request, Resume
from server.cluster.node_mail import NodeMail
from server.connections.limits import Offences, TokenBucket
from server.connections.link import ClientLink

#: Seconds a proxy dropped for its node's silence is remembered. Far past any pause a node
#: wakes from without knowing it lapsed (its own heartbeat tells it within a TTL, and it then
#: sends its clients to reconnect).
DROPPED_KEEP: Final = 300.0


class Proxies:
    """The proxies one owner holds, by (node, link id), with the ones dropped for silence;
    the relay that sends their frames to their nodes through ``mail``."""

    def __init__(self, mail: NodeMail) -> None:
        self._mail = mail
        self._by_key: dict[tuple[str, int], ClientLink] = {}
        self._origin: dict[ClientLink, str] = {}  # proxy -> its client's node
        self._dropped: dict[tuple[str, int], float] = {}  # (node, link) -> when (monotonic)

    def get(self, origin: str, link_id: int, player: str, name: str, bot: bool) -> ClientLink:
        """The proxy of connection ``link_id`` of node ``origin``, made if there is none."""
        proxy = self._by_key.get((origin, link_id))
        if proxy is None:
            # Rate limits and frame checks happened on the client's node.
            proxy = ClientLink(None, TokenBucket(1e9, 1e9), Offences(1 << 30, 1.0), relay=self, id=link_id)
            self._by_key[(origin, link_id)] = proxy
            self._origin[proxy] = origin
        proxy.player, proxy.name, proxy.bot = player, name, bot
        return proxy

    def of_sender(self, asking: Request | Resume) -> ClientLink:
        """The proxy of the connection that sent ``asking``, with its client's address."""
        proxy = self.get(asking.origin, asking.link, asking.player, asking.name, asking.bot)
        proxy.address = asking.address or "unknown"
        return proxy

    def relay(self, links: list[ClientLink], frame: bytes) -> None:
        """:class:`~server.connections.link.Relay`: one message per client node, naming its links."""
        by_node: dict[str, list[int]] = {}
        for link in links:
            origin = self._origin.get(link)
            if origin is not None:
                by_node.setdefault(origin, []).append(link.id)
        for origin, ids in by_node.items():
            self._mail.post(origin, Frames(self._mail.node_id, ids, frame))

    def origin_of(self, link: ClientLink) -> str | None:
        """The node whose connection ``link`` stands for; None for a link of this node's own
        (or a proxy dropped since)."""
        return self._origin.get(link)

    def origins(self) -> set[str]:
        """The nodes whose connections have proxies here."""
        return set(self._origin.values())

    def tidy(self, proxy: ClientLink) -> None:
        """Forget ``proxy`` if it follows no room (the request it was made for is served)."""
        if not proxy.rooms:
            self._forget(proxy)

    def closed(self, origin: str, link_id: int) -> ClientLink | None:
        """Connection ``link_id`` of ``origin`` closed: its proxy, forgotten (None if none)."""
        self._dropped.pop((origin, link_id), None)
        proxy = self._by_key.get((origin, link_id))
        if proxy is not None:
            self._forget(proxy)
        return proxy

    def forget(self, proxy: ClientLink) -> None:
        """Forget ``proxy`` (it was let go)."""
        self._forget(proxy)

    def silenced(self, origins: set[str] | None, now: float) -> list[ClientLink]:
        """Drop the proxies of ``origins`` (None: of every node), whose nodes went silent,
        remembering them as of ``now``; the proxies dropped."""
        dropped = [proxy for proxy, origin in self._origin.items() if origins is None or origin in origins]
        for proxy in dropped:
            self._dropped[(self._origin[proxy], proxy.id)] = now
            self._forget(proxy)
        return dropped

    def was_silenced(self, origin: str, link_id: int) -> bool:
        """Whether connection ``link_id`` of ``origin`` had a proxy dropped for silence (then
        forgotten: it is answered once)."""
        return self._dropped.pop((origin, link_id), None) is not None

    def prune(self, now: float) -> None:
        """Forget proxies dropped for silence more than :data:`DROPPED_KEEP` s before ``now``."""
        self._dropped = {key: at for key, at in self._dropped.items() if now - at < DROPPED_KEEP}

    def _forget(self, proxy: ClientLink) -> None:
        origin = self._origin.pop(proxy, None)
        if origin is not None and self._by_key.get((origin, proxy.id)) is proxy:
            del self._by_key[(origin, proxy.id)]
