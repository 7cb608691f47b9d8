"""A small JSON Schema (2020-12) checker for the subset pydantic writes: enough to check procure's
outputs against `procure schema NAME` independently of the pydantic models that wrote both."""

from __future__ import annotations

from typing import Any

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def problems(value: Any, schema: dict, root: dict | None = None, where: str = "$") -> list[str]:
    """Every place where `value` breaks `schema` (empty: it conforms)."""
    root = root or schema
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{where}: not allowed"]
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return problems(value, root["$defs"][name], root, where)
    found: list[str] = []
    for key in ("anyOf", "oneOf"):
        if key in schema:
            matches = [s for s in schema[key] if not problems(value, s, root, where)]
            if not matches:
                found.append(f"{where}: matches none of {key}")
    for sub in schema.get("allOf", []):
        found += problems(value, sub, root, where)
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[k](value) for k in kinds):
            return found + [f"{where}: expected {schema['type']}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: {value!r} not in {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        found.append(f"{where}: {value!r} is not {schema['const']!r}")
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                found.append(f"{where}: missing {name}")
        properties = schema.get("properties", {})
        for name, item in value.items():
            if name in properties:
                found += problems(item, properties[name], root, f"{where}.{name}")
            elif "additionalProperties" in schema:
                found += problems(item, schema["additionalProperties"], root, f"{where}.{name}")
    if isinstance(value, list):
        prefix = schema.get("prefixItems", [])
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else schema.get("items", True)
            found += problems(item, sub, root, f"{where}[{i}]")
        if "minItems" in schema and len(value) < schema["minItems"]:
            found.append(f"{where}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            found.append(f"{where}: more than {schema['maxItems']} items")
    return found
