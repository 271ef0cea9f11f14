"""The published schema (protocol/schema.json, protocol/asyncapi.json): current with the code,
complete, and true to what goes on the wire.

Messages are checked as a client sees them: encoded to MessagePack, decoded with no types
(maps, lists, str, int, float, nil), then validated against the union of their direction by
jsonschema's Draft 2020-12 validator, as any client's JSON Schema library would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from protocol import schema as published
from protocol.codec import encode
from protocol.events import RoomEvent
from protocol.messages import PROTOCOL_VERSION, ClientMessage, Hello, ServerMessage, Welcome
from tests.protocol.test_codec import CLIENT_MESSAGES, EVENTS, SERVER_MESSAGES

SCHEMA: dict[str, Any] = json.loads(published.SCHEMA_FILE.read_text(encoding="utf-8"))
ASYNCAPI: dict[str, Any] = json.loads(published.ASYNCAPI_FILE.read_text(encoding="utf-8"))
DEFS: dict[str, Any] = SCHEMA["$defs"]
UNIONS = {"ClientMessage": ClientMessage, "ServerMessage": ServerMessage, "RoomEvent": RoomEvent}
#: The two files where they are published, side by side: asyncapi.json's payloads name
#: ``schema.json#/$defs/...``, resolved against its own address as a reader's tools do.
SCHEMA_URI = published.SCHEMA_FILE.as_uri()
ASYNCAPI_URI = published.ASYNCAPI_FILE.as_uri()
REGISTRY: Registry[Any] = Registry().with_resources(
    [(SCHEMA_URI, Resource.from_contents(SCHEMA)), (ASYNCAPI_URI, DRAFT202012.create_resource(ASYNCAPI))]
)
VALIDATORS = {
    union: Draft202012Validator({"$ref": f"{SCHEMA_URI}#/$defs/{union}"}, registry=REGISTRY) for union in UNIONS
}


def members(union: Any) -> list[msgspec.inspect.StructType]:
    infos = [msgspec.inspect.type_info(kind) for kind in union.__args__]
    assert all(isinstance(info, msgspec.inspect.StructType) for info in infos)
    return infos  # type: ignore[return-value]


def on_the_wire(message: msgspec.Struct) -> Any:
    """``message`` as a client without our types reads it: MessagePack decoded untyped."""
    return msgspec.msgpack.decode(encode(message))  # type: ignore[arg-type]


def check(value: Any, union: str) -> None:
    VALIDATORS[union].validate(value)


def reasons(errors: Iterable[ValidationError]) -> Iterator[tuple[str, str, str]]:
    """Why the schema refuses a value: each failed check as (JSON path, keyword, message).

    A union fails when all its members do; of their failures, only those of the member the
    ``discriminator`` names are the reasons (all of them where the tag names no member).
    """
    for error in errors:
        if not error.context:
            yield error.json_path, str(error.validator), error.message
            continue
        branches = list(error.context)
        union = error.schema if isinstance(error.schema, dict) and error.schema_path[-1] == "anyOf" else {}
        if "discriminator" in union and isinstance(error.instance, dict):
            tag = error.instance.get(union["discriminator"]["propertyName"])
            target = union["discriminator"]["mapping"].get(tag) if isinstance(tag, str) else None
            if target is not None:
                member = union["anyOf"].index({"$ref": target})
                branches = [branch for branch in branches if branch.relative_schema_path[0] == member]
        yield from reasons(branches)


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
        payload = REGISTRY.resolver(base_uri=ASYNCAPI_URI).lookup(reference).contents
        assert payload is DEFS[pointer.removeprefix("/$defs/")]
        assert payload["properties"]["type"] == {"enum": [message["name"]]}


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)


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
    ("frame", "union", "where", "keyword", "what"),
    [
        (
            {"type": "hello", "id": 1, "protocol": 1, "name": "Ann", "colour": "red"},
            "ClientMessage",
            "$",
            "additionalProperties",
            "'colour'",
        ),
        ({"type": "hello", "id": 1, "protocol": 1}, "ClientMessage", "$", "required", "'name'"),
        ({"type": "hello", "id": -1, "protocol": 1, "name": "Ann"}, "ClientMessage", "$.id", "minimum", "-1"),
        (
            {"type": "hello", "id": 1, "protocol": "1", "name": "Ann"},
            "ClientMessage",
            "$.protocol",
            "type",
            "'integer'",
        ),
        ({"type": "move", "id": 1, "room": "ABCD", "move": ""}, "ClientMessage", "$.move", "minLength", "''"),
        # A tag no member of the union has: every member refuses it.
        ({"type": "welcome", "id": 1}, "ClientMessage", "$.type", "enum", "'welcome'"),
        (
            {"type": "welcome", "id": 1, "player": "p", "name": "A", "resume": "t"},
            "ServerMessage",
            "$",
            "required",
            "'protocol'",
        ),
        (
            {"type": "update", "room": "R", "base": 1, "version": 2, "events": [{"kind": "board", "seat": 0}]},
            "ServerMessage",
            "$.events[0]",
            "required",
            "'patches'",
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
            "$.events[0].patches[0]",
            "minItems",
            r"\[0, 1\]",
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
            "$.events[0].patches[0][2][0]",
            "maximum",
            "52",
        ),
    ],
)
def test_what_the_schema_refuses(frame: dict[str, Any], union: str, where: str, keyword: str, what: str) -> None:
    """The checks above are not vacuous: frames the codec refuses, the schema refuses too, and
    for the reason meant (the failed ``keyword`` at ``where``, its message naming ``what``)."""
    why = list(reasons(VALIDATORS[union].iter_errors(frame)))
    assert why, "the schema accepts the frame"
    assert any(path == where and kind == keyword and re.search(what, message) for path, kind, message in why), why
    with pytest.raises(ValidationError):
        check(frame, union)


def test_a_server_message_may_carry_fields_a_client_does_not_know_but_a_request_may_not() -> None:
    welcome = on_the_wire(Welcome(id=1, player="p1", name="Ann", resume="t", protocol=PROTOCOL_VERSION))
    check({**welcome, "from_the_future": True}, "ServerMessage")
    hello = on_the_wire(Hello(id=1, protocol=PROTOCOL_VERSION, name="Ann"))
    why = list(reasons(VALIDATORS["ClientMessage"].iter_errors({**hello, "from_the_future": True})))
    assert [(path, keyword) for path, keyword, message in why if "from_the_future" in message] == [
        ("$", "additionalProperties")
    ], why
