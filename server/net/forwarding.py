"""Any node serves any client: a request for a room another node runs is forwarded there.

The edge (:mod:`server.net.edge`) asks :meth:`Router.served_here` before the dispatcher
sees a request: a room that runs here costs one dictionary look-up. For any other room
:meth:`Router.serve` finds its owner (the node holding its lease; a room nobody holds is
claimed and loaded here, as a dead owner's rooms are taken over), posts the request to it
(:mod:`server.cluster.node_mail`) and waits until it is done. The owner runs it through the
dispatcher for a *proxy* (:mod:`server.cluster.proxies`), whose frames go back to the
client's node. A player back (a hello, a login) gets their seats on other nodes here too.

Faults: every node watches the nodes it depends on. When a room's owner dies, the clients
on other nodes stay connected: their node follows the room again on its new owner (taken
over within the lease TTL) and sends a snapshot; only if that fails is a client closed with
1001 to resume by itself. Proxies of a dead node's clients are dropped like closed
connections (their grace period starts). A node that finds it lapsed (no heartbeat written
for a TTL) sends its clients of other nodes' rooms to reconnect and drops the proxies it
held, and an owner answers a request on a proxy it dropped with a reroute. A room whose
owner was fenced closes its local clients and tells the other nodes to close theirs.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Coroutine
from typing import Any, Final

from protocol.codec import MalformedFrame, decode_client, encode
from protocol.errors import CloseCode, ErrorCode
from protocol.messages import ClientMessage, Spectate
from server.cluster.cluster import Cluster
from server.cluster.inbox import Done, Frames, Gone, Message, Request, Reroute, Resume
from server.connections.link import ClientLink
from server.features import identity
from server.features.context import Context
from server.live.runner import RoomRunner
from server.net.answers import Answers
from server.net.dispatch import FAILURES, answer_failure, dispatch
from server.net.following import Following, Role
from server.net.locating import Locator
from server.ops.log_limits import LogLimiter
from server.ops.metrics import FORWARDED_RECEIVED
from server.ops.stopping import stop_requested, stop_tasks
from server.rooms.errors import RoomError
from server.storage.connection import StoreUnavailable

logger = logging.getLogger("server.nodes")

#: Times a request follows a room that moves before it gives up.
_MOVES: Final = 3


def room_of(message: ClientMessage) -> str | None:
    """The code of the room ``message`` is for, if it is for one and could name one."""
    room = getattr(message, "room", None)
    if not isinstance(room, str):
        return None
    code = room.strip().upper()
    return code if code.isascii() and code.isalnum() and code else None


class Router:
    """Forwards this node's clients' requests to the rooms' owners, and serves other nodes'."""

    def __init__(self, ctx: Context, cluster: Cluster, timeout: float) -> None:
        """``timeout``: seconds a forwarded request may take before the client is told the
        storage is unavailable (its owner is probably dead; a retry finds the new one)."""
        self.ctx = ctx
        self.node = cluster.node
        self.leases = cluster.leases
        self._local: dict[int, ClientLink] = {}
        self._peers_of: dict[int, set[str]] = {}  # local link id -> nodes holding its proxy
        #: Stand-ins for other nodes' connections to the rooms that run here.
        self.proxies = cluster.proxies
        #: Where rooms run.
        self.locator = Locator(ctx, cluster)
        #: The answers awaited from other nodes.
        self.answers = Answers(cluster, timeout)
        #: The rooms other nodes run that each local link follows, and on which owner.
        self.following = Following()
        self._lapses_seen = cluster.node.lapses
        self._seq = itertools.count(1)
        #: What this node and the others send each other (direct links, Redis inboxes).
        self.mail = cluster.mail
        self._tasks: set[asyncio.Task[None]] = set()
        #: Lines each client can cause (every request during an outage): rate-limited.
        self._log = LogLimiter(logger)
        self._background(self._read_mail())

    def stop_forwarding(self) -> None:
        """The server is stopping: requests waiting on other nodes fail at once, and no new
        one is forwarded (connections must close now, not after the forwarding timeout)."""
        self.locator.stopping = True
        self.mail.stop_listening()
        self.answers.fail_all(StoreUnavailable("storage unavailable: this server is shutting down"))

    # -- the client's side --------------------------------------------------------------

    def served_here(self, link: ClientLink, message: ClientMessage) -> bool:
        """True when ``message`` is surely served on this node: a proxy's request (it runs
        where it was sent), one for no room, or for a room live here. (A plain call: it
        answers most requests without the cost of :meth:`serve`'s coroutine.)"""
        if link.relay is not None:
            return True
        code = room_of(message)
        return code is None or self.ctx.rooms.live(code)

    async def serve(self, link: ClientLink, message: ClientMessage, frame: bytes | None = None) -> None:
        """Run ``message`` from this node's ``link`` where its room runs: on its owner, or here
        (its failures answered). ``frame``: the request as the client sent it, passed on
        unchanged (None: encoded)."""
        try:
            if self.served_here(link, message) or not await self._forwarded(link, message, frame):
                await dispatch(self.ctx, link, message)
        except FAILURES as error:
            answer_failure(link, message.id, error)

    async def _forwarded(self, link: ClientLink, message: ClientMessage, frame: bytes | None) -> bool:
        """Run ``message`` on its room's owner if that is another node; False: serve it here."""
        code = room_of(message)
        if code is None:
            return False
        sent = encode(message) if frame is None else frame
        for _ in range(_MOVES):
            owner = self.locator.known(code) or await self.locator.locate(code)
            # A room followed on an owner that is gone is followed again (here or on the new
            # owner) first, so that the updates of what this request does reach the client.
            role = self.following.moved(link.id, code, owner)
            if role is not None and await self._refollow(link, {code: role}):
                self.following.put_back(link.id, code, role, "")
                raise StoreUnavailable(f"storage unavailable: room {code} is changing server")
            if owner is None:
                return False
            request = Request(
                self.node.id, link.id, next(self._seq), link.player or "", link.name, link.bot, sent, link.address
            )
            done = await self._ask(owner, link, request)
            if not done.moved:
                self.following.served(link.id, code, owner, message)
                return True
            self.locator.forget(code)
        raise StoreUnavailable(f"storage unavailable: room {code} keeps moving between servers")

    async def seats_back(self, link: ClientLink, request_id: int, rooms: list[str] | None = None) -> list[str]:
        """Give ``link``'s player back their seats in ``rooms`` (None: every seat the seat
        index holds, for a player back with a hello or a login) on the nodes that run them;
        rooms nobody runs any more are taken over here. Those that run here are given back
        here unless ``link`` follows them already. The rooms whose seat was not given back:
        after a hello or login (``rooms`` None), tried again in the background."""
        player = link.player
        assert player is not None
        missed: list[str] = []
        back = rooms is None
        rooms = await self.node.store.seats(player) if rooms is None else rooms
        for code in rooms:
            given = False
            # Giving a seat back is safe to repeat: an owner that does not answer (it died
            # and its heartbeat has not expired yet) is asked again, or its room taken over.
            for attempt in range(_MOVES):
                if self.ctx.rooms.live(code):
                    given = True
                    break
                try:
                    owner = await self.locator.locate(code)
                    if owner is None:
                        if not self.ctx.rooms.live(code):  # the room is gone
                            await self.node.store.seat(player, code, False)
                        given = True
                        break
                    resume = Resume(
                        self.node.id,
                        link.id,
                        next(self._seq),
                        player,
                        link.name,
                        link.bot,
                        request_id,
                        code,
                        link.address,
                    )
                    if not (await self._ask(owner, link, resume)).moved:
                        self.following.seated(link.id, code, owner)
                        given = True
                        break
                    self.locator.forget(code)
                except StoreUnavailable as error:
                    line = "room %s: %s's seat not given back yet (try %d): %s"
                    self._log.log(logging.WARNING, "seat-not-given-back-yet", line, code, link.name, attempt + 1, error)
            if not given:
                missed.append(code)
        for code in sorted(rooms):
            if code not in link.rooms and self.ctx.rooms.live(code):
                await identity.resume_seat(self.ctx, link, self.ctx.rooms[code], request_id)
        if missed and back:
            self._background(self._give_back(link, missed))
        return missed

    async def _give_back(self, link: ClientLink, rooms: list[str]) -> None:
        """Give back seats a hello or login missed (their owner died, its lease not run out
        yet) once their rooms have an owner again: every half lease TTL for three TTLs, while
        the connection is open; each brings ``joined`` and a snapshot, as the hello would."""
        deadline = time.monotonic() + 3 * self.leases.ttl
        while rooms and time.monotonic() < deadline:
            await asyncio.sleep(self.leases.ttl / 2)
            if link not in self.ctx.links or link.dropped or link.player is None:
                return
            with contextlib.suppress(*FAILURES):
                rooms = await self.seats_back(link, 0, rooms)
        if rooms:
            line = "%s's seats in %s not given back after its hello"
            self._log.log(logging.WARNING, "seats-not-given-back", line, link.name, ", ".join(rooms))

    async def _ask(self, owner: str, link: ClientLink, message: Request | Resume) -> Done:
        self.locator.check_running()
        self._local[link.id] = link
        future = self.answers.expect(message.seq)
        self.mail.post(owner, message)
        try:
            done = await self.answers.wait(message.seq, future, owner)
        except TimeoutError:
            self.locator.forget_nodes({owner})
            self.node.suspect(owner)
            raise StoreUnavailable(f"storage unavailable: server {owner} did not answer") from None
        if not done.moved:
            # The owner may hold a proxy of the link now: it is told when the link closes,
            # and the link is closed if the owner dies.
            self._peers_of.setdefault(link.id, set()).add(owner)
        return done

    def dropped(self, link: ClientLink) -> None:
        """A local connection closed: the nodes holding its proxies drop them."""
        self._local.pop(link.id, None)
        self.following.closed(link.id)
        for node in self._peers_of.pop(link.id, ()):
            self.mail.post(node, Gone(self.node.id, link.id))

    def remember(self, link: ClientLink) -> None:
        """``link`` may get frames from other nodes (it waits in the quick-match line)."""
        self._local[link.id] = link

    # -- the owner's side -----------------------------------------------------------------

    def _rerouted_dropped(self, origin: str, link: int, seq: int) -> bool:
        """True, and the client sent to reconnect, if its proxy here was dropped when its node
        went silent: a new proxy would follow none of its rooms (no updates would follow its
        acks), so its node is told to close it, and the client resumes everywhere."""
        if not self.proxies.was_silenced(origin, link):
            return False
        line = "a request on a dropped proxy of node %s: its client is sent to reconnect"
        self._log.log(logging.INFO, "dropped-proxy", line, origin)
        self.mail.post(origin, Reroute([link]))
        self.mail.post(origin, Done(seq, False))
        return True

    async def _serve(self, request: Request) -> None:
        if self._rerouted_dropped(request.origin, request.link, request.seq):
            return
        proxy = self.proxies.of_sender(request)
        moved = False
        request_id: int | None = None
        try:
            message = decode_client(request.frame)
            request_id = message.id
            code = room_of(message)
            # A room that runs here (the usual case) is served without asking where it runs.
            # A stopping node's rooms were handed over: the asking node finds the new owner.
            if (
                code is not None
                and not self.ctx.rooms.live(code)
                and (self.locator.stopping or await self.locator.locate(code))
            ):
                moved = True
            else:
                proxy.begin(message.id)
                await dispatch(self.ctx, proxy, message)
        except MalformedFrame:
            self._log.log(logging.WARNING, "unreadable", "node %s forwarded an unreadable request", request.origin)
        except StoreUnavailable as error:
            self._log.log(logging.WARNING, "not-served", "forwarded request not served: %s", error)
            proxy.error(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable; try again shortly", request_id)
        except Exception:
            self._log.exception("failed", "forwarded request from node %s failed", request.origin)
        finally:
            self.mail.post(request.origin, Done(request.seq, moved))
            self.proxies.tidy(proxy)

    async def _resume(self, resume: Resume) -> None:
        if self._rerouted_dropped(resume.origin, resume.link, resume.seq):
            return
        proxy = self.proxies.of_sender(resume)
        moved = False
        try:
            handed_over = self.locator.stopping and not self.ctx.rooms.live(resume.code)
            if handed_over or await self.locator.locate(resume.code) is not None:
                moved = True
            else:
                runner = await self.ctx.rooms.get(resume.code)
                if runner is not None and runner.room.seat_of(resume.player) is not None:
                    await identity.resume_seat(self.ctx, proxy, runner, resume.request)
        except RoomError:  # closed as it left this node (its lease lapsed): ask its new owner
            moved = True
        except StoreUnavailable as error:
            line = "room %s: seat of %s not given back: %s"
            self._log.log(logging.WARNING, "seat-not-given-back", line, resume.code, resume.name, error)
        finally:
            self.mail.post(resume.origin, Done(resume.seq, moved))
            self.proxies.tidy(proxy)

    async def _gone(self, proxy: ClientLink) -> None:
        """``proxy``, forgotten already, is dropped like a closed connection."""
        try:
            await identity.disconnected(self.ctx, proxy)
        except StoreUnavailable as error:
            self._log.log(logging.WARNING, "drop-not-stored", "a proxy's drop was not stored: %s", error)

    def rerouted(self, runner: RoomRunner) -> None:
        """``runner`` left this node (fenced, or handed over by a drain): the other nodes'
        clients following it follow it again on its next owner; this node's reconnect."""
        self.locator.forget(runner.code)
        by_node: dict[str, list[int]] = {}
        followers = [link for links in runner.audience.racers.values() for link in links]
        for link in followers + runner.audience.spectators:
            origin = self.proxies.origin_of(link)
            if origin is not None:
                by_node.setdefault(origin, []).append(link.id)
            else:
                self._close(link, f"room {runner.code} moved to another server")
        for origin, ids in by_node.items():
            self.mail.post(origin, Reroute(ids, self.node.id))

    def _close(self, link: ClientLink, why: str) -> None:
        if link.socket is not None:
            self._background(link.socket.close(CloseCode.GOING_AWAY, f"{why}: reconnect with your resume token"))

    async def _read_mail(self) -> None:
        """Until :meth:`close`, handle what the nodes post here (since before this router was
        built), in order, all that waits at each wake: the post is built before the router, so
        it is read (:meth:`~server.cluster.node_mail.NodeMail.arrived`), not handed a handler.
        A message whose handling fails is logged and the next one handled."""
        while True:
            for message in await self.mail.arrived():
                try:
                    self._on(message)
                except Exception:
                    self._log.exception(f"arrival/{type(message).__name__}", "a message from a node was not handled")

    def _on(self, message: Message) -> None:
        match message:
            case Request():
                FORWARDED_RECEIVED.inc()
                self._background(self._serve(message))
            case Resume():
                FORWARDED_RECEIVED.inc()
                self._background(self._resume(message))
            case Done():
                self.answers.arrived(message)
            case Frames():
                self._deliver(message)
            case Gone():
                proxy = self.proxies.closed(message.origin, message.link)
                if proxy is not None:
                    self._background(self._gone(proxy))
            case Reroute():
                for link_id in message.links:
                    link = self._local.get(link_id)
                    if link is None:
                        continue
                    if message.sender:
                        self._background(self._follow_again(link, {message.sender}))
                    else:
                        self._close(link, "your room moved to another server")

    def _deliver(self, frames: Frames) -> None:
        gone = []
        for link_id in frames.links:
            link = self._local.get(link_id)
            if link is None or link not in self.ctx.links:
                gone.append(link_id)
                continue
            link.send_frame(frames.frame)
            peers = self._peers_of.get(link_id)
            if peers is None:
                self._peers_of[link_id] = {frames.sender}
            else:
                peers.add(frames.sender)
        for link_id in gone:
            self.mail.post(frames.sender, Gone(self.node.id, link_id))

    async def watch(self) -> None:
        """Every quarter TTL: drop what depended on nodes that stopped beating."""
        while True:
            await asyncio.sleep(self.leases.ttl / 4)
            stop_requested()
            if self.node.lapses != self._lapses_seen:
                self._lapses_seen = self.node.lapses
                self._rejoin()
            try:
                await self._check_peers()
            except StoreUnavailable as error:
                logger.warning("could not check the other nodes: %s", error)

    def _rejoin(self) -> None:
        """This node went silent past its TTL, so the others may have taken it for gone: they
        dropped the proxies they held for its clients, and closed their own clients whose
        rooms run here. Start again from nothing both sides could disagree on: this node's
        clients of other nodes' rooms reconnect (and resume everywhere), and the proxies held
        here for other nodes' clients are dropped (their clients were sent to reconnect)."""
        logger.warning("this node lapsed: its clients of other nodes' rooms reconnect, other nodes' proxies dropped")
        self.locator.clear()
        self.following.clear()
        for link_id in list(self._peers_of):
            link = self._local.get(link_id)
            if link is not None:
                self._close(link, "this server lost touch with the others for a moment")
        self._peers_of.clear()
        for proxy in self.proxies.silenced(None, time.monotonic()):
            self._background(self._gone(proxy))

    async def _check_peers(self) -> None:
        self.proxies.prune(time.monotonic())
        owners = {node for nodes in self._peers_of.values() for node in nodes}
        origins = self.proxies.origins()
        watched = owners | origins | self.locator.owners()
        if not watched:
            return
        dead = watched - await self.node.alive(watched, fresh=0.0)
        if not dead:
            return
        logger.warning("nodes %s left or stopped beating", ", ".join(sorted(dead)))
        self.mail.forget(dead)
        self.locator.forget_nodes(dead)
        for link_id, nodes in list(self._peers_of.items()):
            if nodes & dead:
                nodes -= dead
                link = self._local.get(link_id)
                if link is not None:
                    self._background(self._follow_again(link, dead))
        for proxy in self.proxies.silenced(dead, time.monotonic()):
            self._background(self._gone(proxy))

    async def _follow_again(self, link: ClientLink, dead: set[str]) -> None:
        """The owner of rooms ``link`` follows died (or handed them over): follow them on their
        new owner (taken over within the lease's TTL, here or on another node), each with a
        snapshot that says which version it resumes from, and keep the connection. Only when
        that fails is the client closed with 1001 to resume by itself."""
        lost: dict[str, Role] = dict(self.following.lost(link.id, dead))
        for code in lost:
            self.locator.forget(code)
        try:
            if not self.locator.stopping and link.player is not None:
                # Seats known nowhere here (a quick-match race formed on another node) may have
                # been on the dead node too: given back as well (a resync where they were not).
                known = self.following.rooms_of(link.id) | set(link.rooms)
                lost |= {code: "racer" for code in await self.node.store.seats(link.player) if code not in known}
                if not lost:
                    return
                if not await self._refollow(link, lost):
                    line = "%s follows %d rooms again after a server went away"
                    self._log.log(logging.INFO, "followed-again", line, link.name, len(lost))
                    return
        except Exception as error:  # any failure: the client resumes by itself instead
            self._log.log(
                logging.WARNING,
                f"not-followed-again/{type(error).__name__}",  # a bug is no outage
                "%s's rooms not followed again (%s): sent to reconnect",
                link.name,
                error,
            )
        self._close(link, "a server your rooms ran on went away")

    async def _refollow(self, link: ClientLink, rooms: dict[str, Role]) -> list[str]:
        """Follow ``rooms`` again in their roles, on their owners now (here, or another
        node), each with a snapshot; the rooms whose seat could not be given back."""
        racing = {code for code, role in rooms.items() if role == "racer"}
        missed = await self.seats_back(link, 0, sorted(racing)) if racing else []
        for code in sorted(set(rooms) - racing):
            await self.serve(link, Spectate(id=0, room=code))
        return missed

    def _background(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Stop serving and reading other nodes' posts (the cluster sends what waits for them)."""
        await stop_tasks(list(self._tasks) + self.answers.checks())
