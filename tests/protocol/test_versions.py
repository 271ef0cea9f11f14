"""Versions on the wire: ``welcome`` carries the protocol version and the server's software
version (its package's); a client of either age reads a welcome of the other; a ``hello``
of another protocol version is refused, naming the server's, on a connection that stays open."""

from __future__ import annotations

from importlib import metadata

import msgspec
import pytest

from protocol.codec import decode_server, encode
from protocol.messages import PROTOCOL_VERSION, Hello, Welcome
from protocol.version import DISTRIBUTION, server_version
from tests.end_to_end.conftest import RunningServer


class WelcomeBeforeServerVersion(msgspec.Struct, tag_field="type", tag="welcome", omit_defaults=True):
    """``welcome`` as clients before ``server_version`` decode it."""

    id: int
    player: str
    name: str
    resume: str
    protocol: int
    account: bool = False


def test_the_server_version_is_the_installed_distributions() -> None:
    assert server_version() == metadata.version(DISTRIBUTION)
    assert server_version() != ""


def test_a_client_before_the_field_reads_the_new_welcome() -> None:
    frame = encode(Welcome(id=1, player="p1", name="Ann", resume="t", protocol=PROTOCOL_VERSION, server_version="9.9"))
    old = msgspec.msgpack.decode(frame, type=WelcomeBeforeServerVersion)
    assert (old.player, old.protocol) == ("p1", PROTOCOL_VERSION)


def test_a_welcome_without_the_field_reads_as_no_known_version() -> None:
    frame = msgspec.msgpack.encode(WelcomeBeforeServerVersion(id=1, player="p1", name="Ann", resume="t", protocol=1))
    welcome = decode_server(frame)
    assert isinstance(welcome, Welcome)
    assert welcome.server_version == ""
    # ... and a server that does not know its version leaves the field out.
    assert b"server_version" not in encode(msgspec.structs.replace(welcome, server_version=""))


@pytest.mark.asyncio
async def test_the_welcome_names_the_protocol_and_the_server_version(server: RunningServer) -> None:
    client = await server.raw()
    welcome = await client.hello("Ann")
    assert welcome.protocol == PROTOCOL_VERSION
    assert welcome.server_version == metadata.version(DISTRIBUTION)
    frame = client.frames[-1]  # a new guest's welcome is the last frame: no seat to restore
    assert isinstance(frame, bytes)
    raw = msgspec.msgpack.decode(frame)
    assert raw["server_version"] == welcome.server_version


@pytest.mark.asyncio
async def test_another_protocol_version_is_refused_naming_the_servers(server: RunningServer) -> None:
    client = await server.raw()
    request_id = await client.send(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION + 1, name="Ann"))
    error = await client.error(request_id)
    assert error.code == "unsupported-protocol"
    assert f"speaks protocol {PROTOCOL_VERSION}" in error.message
    assert (await client.hello("Ann")).protocol == PROTOCOL_VERSION  # the connection stays open
