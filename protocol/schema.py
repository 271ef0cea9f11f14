"""The published schema, generated from the msgspec types of :mod:`protocol.messages`.

``schema.json`` (beside this file) is a JSON Schema (2020-12) of every message: ``$defs``
holds ``ClientMessage`` and ``ServerMessage`` (the two unions, ``type`` naming each member),
``RoomEvent`` (the events of an ``update``, ``kind`` naming each) and every struct they use,
under its class name. ``asyncapi.json`` is an AsyncAPI 3.0 document of the one websocket
channel, its messages pointing into ``schema.json``. Frames are MessagePack, not JSON: the
schema describes the same structure (see :data:`MSGPACK_NOTE`).

Both files are written by ``python -m protocol.schema`` and checked by the tests, which fail
when they differ from what the code generates; ``--check`` only says whether they do.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from protocol.events import RoomEvent
from protocol.messages import ClientMessage, ServerMessage
from protocol.values import PROTOCOL_VERSION

HERE = Path(__file__).resolve().parent
SCHEMA_FILE = HERE / "schema.json"
ASYNCAPI_FILE = HERE / "asyncapi.json"
#: The command that writes both files again (from the repository's root).
REGENERATE = ".venv/bin/python -m protocol.schema"
#: How AsyncAPI's messages name the schema format of their payloads: ``schema.json`` is
#: JSON Schema 2020-12 (AsyncAPI 3.0 requires tools to know draft-07 only: see PROTOCOL.md).
SCHEMA_FORMAT = "application/schema+json;version=2020-12"
#: The content type of every frame.
CONTENT_TYPE = "application/msgpack"

MSGPACK_NOTE = (
    "Frames are MessagePack, not JSON: one MessagePack map per binary websocket frame. The schema "
    "describes the same structure: an object is a MessagePack map keyed by field name, an array "
    "an array, a string a MessagePack str (never bin), an integer a MessagePack int, a number an "
    "int or a float, null nil. The one structure sent as an array is Patch ([pile, keep, add]). "
    "A server message leaves out each optional field whose value is its default (the 'default' "
    "given here): a missing field means that default. 'discriminator' is OpenAPI's keyword, "
    "an annotation here: it says which field (type, or kind for room events) names the member "
    "of a union."
)

_UNIONS: dict[str, tuple[Any, str]] = {
    "ClientMessage": (
        ClientMessage,
        "A frame a client sends: a request, named by its 'type', always with an 'id' of the "
        "client's choosing. Requests are strict: an unknown field is refused (invalid-message).",
    ),
    "ServerMessage": (
        ServerMessage,
        "A frame the server sends, named by its 'type'. Clients should ignore fields, and "
        "messages, they do not know. Some types are also the name of a request (snapshot, "
        "legal_moves, race_log, replay, daily, leaderboard, stats): validate a frame against "
        "the union of its direction.",
    ),
    "RoomEvent": (
        RoomEvent,
        "A change to a room, inside an update's 'events', named by its 'kind'.",
    ),
}


def _replace(node: Any, inline: Any, ref: dict[str, str]) -> Any:
    """``node`` with every part equal to ``inline`` replaced by ``ref``."""
    if node == inline:
        return dict(ref)
    if isinstance(node, dict):
        return {key: _replace(value, inline, ref) for key, value in node.items()}
    if isinstance(node, list):
        return [_replace(value, inline, ref) for value in node]
    return node


def json_schema() -> dict[str, Any]:
    """The JSON Schema of every message (``schema.json``)."""
    kinds = [kind for kind, _ in _UNIONS.values()]
    unions, components = msgspec.json.schema_components(kinds, ref_template="#/$defs/{name}")
    clashes = sorted(set(_UNIONS) & set(components))
    if clashes:
        raise ValueError(f"a struct is named like a union: {clashes}")
    defs: dict[str, Any] = dict(components)
    for (name, (_, description)), union in zip(_UNIONS.items(), unions, strict=True):
        # msgspec writes the room events out in full inside Update: name them once instead.
        defs = _replace(defs, union, {"$ref": f"#/$defs/{name}"})
        defs[name] = {"title": name, "description": description, **union}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Solitaire Race protocol, version {PROTOCOL_VERSION}: every message",
        "description": (
            "Every message of the Solitaire Race protocol, generated from its msgspec types "
            f"(protocol/messages.py) by `{REGENERATE}`; protocol/PROTOCOL.md documents each one. "
            "A frame is a ClientMessage (client to server) or a ServerMessage (server to "
            f"client). {MSGPACK_NOTE}"
        ),
        "x-protocol-version": PROTOCOL_VERSION,
        "anyOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
        "$defs": dict(sorted(defs.items())),
    }


def _members(schema: dict[str, Any], union: str) -> list[tuple[str, str]]:
    """(wire tag, component name) of each member of ``union``, in the union's order."""
    mapping: dict[str, str] = schema["$defs"][union]["discriminator"]["mapping"]
    return [(tag, ref.rsplit("/", 1)[1]) for tag, ref in mapping.items()]


def _message(schema: dict[str, Any], name: str, tag: str, direction: str) -> dict[str, Any]:
    component = schema["$defs"][name]
    message: dict[str, Any] = {
        "name": tag,
        "title": f"{tag} ({direction})",
        "payload": {"schemaFormat": SCHEMA_FORMAT, "schema": {"$ref": f"schema.json#/$defs/{name}"}},
    }
    description = component.get("description")
    if description:
        message["summary"] = description.split("\n\n", 1)[0].replace("\n", " ")
    if "id" in component["properties"]:
        message["correlationId"] = {"$ref": "#/components/correlationIds/requestId"}
    return message


def asyncapi(schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The AsyncAPI 3.0 document of the channel (``asyncapi.json``), from ``schema``."""
    schema = json_schema() if schema is None else schema
    client = _members(schema, "ClientMessage")
    server = _members(schema, "ServerMessage")
    messages = {name: _message(schema, name, tag, "client to server") for tag, name in client}
    messages |= {name: _message(schema, name, tag, "server to client") for tag, name in server}
    race = {"$ref": "#/channels/race"}
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Solitaire Race",
            # The protocol's version: the server software's own is welcome.server_version.
            "version": str(PROTOCOL_VERSION),
            "description": (
                f"The Solitaire Race protocol, version {PROTOCOL_VERSION}, described from the "
                "server's side: it receives the client's requests and sends its replies, room "
                "updates and errors on one websocket. protocol/PROTOCOL.md is the full document; "
                f"schema.json holds the messages, generated by `{REGENERATE}`. {MSGPACK_NOTE}"
            ),
            "license": {"name": "MIT"},
        },
        "defaultContentType": CONTENT_TYPE,
        "servers": {
            "local": {
                "host": "127.0.0.1:8765",
                "protocol": "ws",
                "description": (
                    "The server's default address (--host, --port). wss:// where the server has a "
                    "certificate (--tls-cert) or a TLS proxy stands in front of it."
                ),
            }
        },
        "channels": {
            "race": {
                "address": "/",
                "title": "The race connection",
                "description": (
                    "One websocket per client. Any path is accepted; use /. Binary frames only, "
                    "each one message. The first request must be hello."
                ),
                "messages": {name: {"$ref": f"#/components/messages/{name}"} for name in messages},
                "bindings": {"ws": {"bindingVersion": "0.1.0"}},
            }
        },
        "operations": {
            "receiveRequest": {
                "action": "receive",
                "channel": race,
                "title": "A client's request",
                "summary": "Each request gets one direct answer (carrying its id), or an error.",
                "messages": [{"$ref": f"#/channels/race/messages/{name}"} for _, name in client],
            },
            "sendServerMessage": {
                "action": "send",
                "channel": race,
                "title": "A server message",
                "summary": "Answers to requests, and what the rooms a connection follows send.",
                "messages": [{"$ref": f"#/channels/race/messages/{name}"} for _, name in server],
            },
        },
        "components": {
            "messages": messages,
            "correlationIds": {
                "requestId": {
                    "description": "The request's id; the answer to a request carries the same id.",
                    "location": "$message.payload#/id",
                }
            },
        },
    }


def render(document: dict[str, Any]) -> str:
    """``document`` as the file holds it."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def generated() -> dict[Path, str]:
    """What each file should hold."""
    schema = json_schema()
    return {SCHEMA_FILE: render(schema), ASYNCAPI_FILE: render(asyncapi(schema))}


def _differs(path: Path, text: str) -> bool:
    return not path.is_file() or path.read_text(encoding="utf-8") != text


def stale() -> list[Path]:
    """The files that differ from what the code generates (or are missing)."""
    return [path for path, text in generated().items() if _differs(path, text)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m protocol.schema", description="Write protocol/schema.json and protocol/asyncapi.json."
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        out_of_date = stale()
        for path in out_of_date:
            print(f"{path.name} is out of date: run {REGENERATE}", file=sys.stderr)
        return 1 if out_of_date else 0
    for path, text in generated().items():
        if _differs(path, text):
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
