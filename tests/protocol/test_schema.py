"""The published schema (protocol/schema.json, protocol/asyncapi.json): current with the code,
complete, and true to what goes on the wire.

Messages are checked as a client sees them: encoded to MessagePack, decoded with no types
(maps, lists, str, int, float, nil), then validated against the union of their direction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol import schema as published
from protocol.codec import encode
from protocol.events import RoomEvent
from protocol.messages import PROTOCOL_VERSION, ClientMessage, Hello, ServerMessage, Welcome
from tests.protocol.schema_subset import Invalid, Validator
from tests.protocol.test_codec import CLIENT_MESSAGES, EVENTS, SERVER_MESSAGES

SCHEMA: dict[str, Any] = json.loads(published.SCHEMA_FILE.read_text(encoding="utf-8"))
ASYNCAPI: dict[str, Any] = json.loads(published.ASYNCAPI_FILE.read_text(encoding="utf-8"))
DEFS: dict[str, Any] = SCHEMA["$defs"]
UNIONS = {"ClientMessage": ClientMessage, "ServerMessage": ServerMessage, "RoomEvent": RoomEvent}
validator = Validator(SCHEMA)


def members(union: Any) -> list[msgspec.inspect.StructType]:
    infos = [msgspec.inspect.type_info(kind) for kind in union.__args__]
    assert all(isinstance(info, msgspec.inspect.StructType) for info in infos)
    return infos  # type: ignore[return-value]


def on_the_wire(message: msgspec.Struct) -> Any:
    """``message`` as a client without our types reads it: MessagePack decoded untyped."""
    return msgspec.msgpack.decode(encode(message))  # type: ignore[arg-type]


def check(value: Any, union: str) -> None:
    validator.validate(value, {"$ref": f"#/$defs/{union}"})


def test_the_published_files_are_what_the_code_generates() -> None:
    stale = [path.relative_to(Path(published.HERE).parent) for path in published.stale()]
    assert stale == [], f"{', '.join(map(str, stale))} out of date: run {published.REGENERATE} and commit the result"


def test_the_check_command_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    assert published.main(["--check"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("union", list(UNIONS))
def test_every_message_type_of_the_unions_is_in_the_schema(union: str) -> None:
    infos = members(UNIONS[union])
    discriminator = DEFS[union]["discriminator"]
    assert discriminator["propertyName"] == infos[0].tag_field
    assert discriminator["mapping"] == {info.tag: f"#/$defs/{info.cls.__name__}" for info in infos}
    assert DEFS[union]["anyOf"] == [{"$ref": f"#/$defs/{info.cls.__name__}"} for info in infos]
    for info in infos:
        component = DEFS[info.cls.__name__]
        assert component["properties"][info.tag_field] == {"enum": [info.tag]}
        fields = {field.encode_name for field in info.fields}
        assert set(component["properties"]) == fields | {info.tag_field}, info.cls.__name__
        required = {field.encode_name for field in info.fields if field.required}
        assert set(component["required"]) == required | {info.tag_field}, info.cls.__name__


def test_the_schema_describes_frames_as_messagepack_and_names_the_protocol_version() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "MessagePack" in SCHEMA["description"]
    assert SCHEMA["x-protocol-version"] == PROTOCOL_VERSION
    assert SCHEMA["anyOf"] == [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}]
    # Update's events name the RoomEvent union rather than repeat it.
    assert DEFS["Update"]["properties"]["events"]["items"] == {"$ref": "#/$defs/RoomEvent"}


def test_welcome_declares_the_server_version_as_optional() -> None:
    welcome = DEFS["Welcome"]
    assert welcome["properties"]["server_version"] == {"type": "string", "default": ""}
    assert "server_version" not in welcome["required"]
    assert "protocol" in welcome["required"]


def test_the_asyncapi_document_lists_every_message_of_each_direction() -> None:
    assert ASYNCAPI["asyncapi"] == "3.0.0"
    assert ASYNCAPI["info"]["version"] == str(PROTOCOL_VERSION)
    assert "MessagePack" in ASYNCAPI["info"]["description"]
    operations = ASYNCAPI["operations"]
    for operation, union, action in [
        ("receiveRequest", ClientMessage, "receive"),
        ("sendServerMessage", ServerMessage, "send"),
    ]:
        assert operations[operation]["action"] == action
        assert operations[operation]["channel"] == {"$ref": "#/channels/race"}
        names = [info.cls.__name__ for info in members(union)]
        assert operations[operation]["messages"] == [{"$ref": f"#/channels/race/messages/{name}"} for name in names]
    channel_messages = ASYNCAPI["channels"]["race"]["messages"]
    for name, message in ASYNCAPI["components"]["messages"].items():
        assert channel_messages[name] == {"$ref": f"#/components/messages/{name}"}
        reference = message["payload"]["schema"]["$ref"]
        file, pointer = reference.split("#")
        assert file == published.SCHEMA_FILE.name
        assert validator.resolve("#" + pointer)["properties"]["type"] == {"enum": [message["name"]]}


@pytest.mark.parametrize("message", CLIENT_MESSAGES, ids=lambda m: type(m).__name__)
def test_a_client_message_on_the_wire_fits_the_schema(message: ClientMessage) -> None:
    check(on_the_wire(message), "ClientMessage")


@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=lambda m: type(m).__name__)
def test_a_server_message_on_the_wire_fits_the_schema(message: ServerMessage) -> None:
    check(on_the_wire(message), "ServerMessage")


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_a_room_event_on_the_wire_fits_the_schema(event: RoomEvent) -> None:
    check(on_the_wire(event), "RoomEvent")


def test_a_welcome_with_the_server_version_fits_the_schema() -> None:
    welcome = Welcome(id=1, player="p1", name="Ann", resume="t", protocol=PROTOCOL_VERSION, server_version="0.1.0")
    wire = on_the_wire(welcome)
    assert wire["server_version"] == "0.1.0"
    check(wire, "ServerMessage")


@pytest.mark.parametrize(
    ("frame", "union", "why"),
    [
        ({"type": "hello", "id": 1, "protocol": 1, "name": "Ann", "colour": "red"}, "ClientMessage", "'colour'"),
        ({"type": "hello", "id": 1, "protocol": 1}, "ClientMessage", "'name' is missing"),
        ({"type": "hello", "id": -1, "protocol": 1, "name": "Ann"}, "ClientMessage", "below 0"),
        ({"type": "hello", "id": 1, "protocol": "1", "name": "Ann"}, "ClientMessage", "type integer"),
        ({"type": "move", "id": 1, "room": "ABCD", "move": ""}, "ClientMessage", "characters"),
        ({"type": "welcome", "id": 1}, "ClientMessage", "names no member"),
        ({"type": "welcome", "id": 1, "player": "p", "name": "A", "resume": "t"}, "ServerMessage", "'protocol'"),
        (
            {"type": "update", "room": "R", "base": 1, "version": 2, "events": [{"kind": "board", "seat": 0}]},
            "ServerMessage",
            "'patches' is missing",
        ),
        (
            {
                "type": "update",
                "room": "R",
                "base": 1,
                "version": 2,
                "events": [{"kind": "board", "seat": 0, "patches": [[0, 1]], "progress": {}}],
            },
            "ServerMessage",
            "2 items",
        ),
        (
            {
                "type": "update",
                "room": "R",
                "base": 1,
                "version": 2,
                "events": [
                    {
                        "kind": "board",
                        "seat": 0,
                        "patches": [[0, 1, [52]]],
                        "progress": {"home": 0, "ordered": 0, "moves": 0},
                    }
                ],
            },
            "ServerMessage",
            "above 51",
        ),
    ],
)
def test_what_the_schema_refuses(frame: dict[str, Any], union: str, why: str) -> None:
    """The checks above are not vacuous: frames the codec refuses, the schema refuses too."""
    with pytest.raises(Invalid, match=why):
        check(frame, union)


def test_a_server_message_may_carry_fields_a_client_does_not_know_but_a_request_may_not() -> None:
    welcome = on_the_wire(Welcome(id=1, player="p1", name="Ann", resume="t", protocol=PROTOCOL_VERSION))
    check({**welcome, "from_the_future": True}, "ServerMessage")
    hello = on_the_wire(Hello(id=1, protocol=PROTOCOL_VERSION, name="Ann"))
    with pytest.raises(Invalid, match="from_the_future"):
        check({**hello, "from_the_future": True}, "ClientMessage")
