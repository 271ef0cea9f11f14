"""A JSON Schema validator of just the keywords protocol/schema.json uses (no jsonschema
package in the environment, and none added for this).

It refuses a keyword it does not know rather than skip it, so a schema that starts using a
new one fails here instead of passing unchecked. A union with a ``discriminator`` is checked
against the member its tag names, so an error says which field of which message is wrong.
"""

from __future__ import annotations

import re
from typing import Any

#: Keywords that say nothing about validity.
ANNOTATIONS = frozenset({"title", "description", "default", "$schema", "x-protocol-version"})
ASSERTIONS = frozenset(
    {
        "$ref",
        "anyOf",
        "discriminator",
        "enum",
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
    }
)


class Invalid(ValueError):
    """``value`` does not fit the schema; the message gives the path to the part that does not."""


def _is_type(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    raise Invalid(f"unknown type {kind!r} in the schema")


class Validator:
    """Checks values against the schemas of one document (``root``, with its ``$defs``)."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def resolve(self, ref: str) -> dict[str, Any]:
        if not ref.startswith("#/"):
            raise Invalid(f"only local references are supported, not {ref!r}")
        node: Any = self.root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        assert isinstance(node, dict), ref
        return node

    def validate(self, value: Any, schema: dict[str, Any], path: str = "$") -> None:
        unknown = set(schema) - ANNOTATIONS - ASSERTIONS
        if unknown:
            raise Invalid(f"{path}: schema keywords {sorted(unknown)} are not supported here")
        if "$ref" in schema:
            self.validate(value, self.resolve(schema["$ref"]), path)
        if "anyOf" in schema:
            self._any_of(value, schema, path)
        if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
            raise Invalid(f"{path}: {value!r} is none of {schema['enum']}")
        if "type" in schema and not _is_type(value, schema["type"]):
            raise Invalid(f"{path}: {value!r} is not of type {schema['type']}")
        if isinstance(value, dict):
            self._object(value, schema, path)
        if isinstance(value, list):
            self._array(value, schema, path)
        if isinstance(value, str):
            length = len(value)
            if length < schema.get("minLength", 0) or length > schema.get("maxLength", length):
                raise Invalid(f"{path}: {length} characters is out of bounds")
            if "pattern" in schema and re.search(schema["pattern"], value) is None:
                raise Invalid(f"{path}: {value!r} does not match {schema['pattern']}")
        if _is_type(value, "number"):
            if "minimum" in schema and value < schema["minimum"]:
                raise Invalid(f"{path}: {value} is below {schema['minimum']}")
            if "maximum" in schema and value > schema["maximum"]:
                raise Invalid(f"{path}: {value} is above {schema['maximum']}")

    def _any_of(self, value: Any, schema: dict[str, Any], path: str) -> None:
        discriminator = schema.get("discriminator")
        if discriminator is not None and isinstance(value, dict):
            tag = value.get(discriminator["propertyName"])
            target = discriminator["mapping"].get(tag) if isinstance(tag, str) else None
            if target is None:
                raise Invalid(f"{path}: {discriminator['propertyName']} {tag!r} names no member")
            self.validate(value, self.resolve(target), f"{path}<{tag}>")
            return
        errors = []
        for option in schema["anyOf"]:
            try:
                self.validate(value, option, path)
            except Invalid as error:
                errors.append(str(error))
            else:
                return
        raise Invalid(f"{path}: fits no option: {'; '.join(errors)}")

    def _object(self, value: dict[str, Any], schema: dict[str, Any], path: str) -> None:
        properties: dict[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise Invalid(f"{path}: {key!r} is missing")
        for key, item in value.items():
            if key in properties:
                self.validate(item, properties[key], f"{path}.{key}")
            elif schema.get("additionalProperties", True) is False:
                raise Invalid(f"{path}: {key!r} is not a field")

    def _array(self, value: list[Any], schema: dict[str, Any], path: str) -> None:
        if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
            raise Invalid(f"{path}: {len(value)} items is out of bounds")
        prefix: list[dict[str, Any]] = schema.get("prefixItems", [])
        for index, item in enumerate(value):
            if index < len(prefix):
                self.validate(item, prefix[index], f"{path}[{index}]")
            elif "items" in schema:
                self.validate(item, schema["items"], f"{path}[{index}]")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``True`` is not ``1``."""
    return type(a) is type(b) and a == b
