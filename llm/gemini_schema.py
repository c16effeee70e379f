"""JSON Schema → the OpenAPI subset Gemini accepts, and back.

Gemini's ``functionDeclarations[].parameters`` take an OpenAPI 3 Schema
subset (https://ai.google.dev/api/caching#Schema): one ``type`` per schema
(``nullable`` for null), ``enum`` of strings only, ``items`` required on
arrays, no ``$schema``/``additionalProperties``/``propertyNames``. Our tools
keep full JSON Schema; this module converts on the way out and converts the
arguments Gemini returns back (string enums to integers, JSON text to
free-form values) so that our own validation judges them against the
original schema.
"""
from __future__ import annotations

import json

DROPPED_KEYS = {"$schema", "$id", "additionalProperties", "propertyNames", "patternProperties", "unevaluatedProperties",
                "exclusiveMinimum", "exclusiveMaximum", "const", "examples", "default", "$comment", "title"}
KEPT_KEYS = {"type", "description", "enum", "format", "nullable", "properties", "required", "items", "minItems",
             "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "anyOf"}
JSON_TEXT_NOTE = " (send it as JSON text)"


def _real_types(schema: dict) -> list:
    types = schema.get("type")
    types = types if isinstance(types, list) else [types] if types else []
    if not types and isinstance(schema.get("properties"), dict):
        types = ["object"]
    return [t for t in types if t != "null"]


def _is_free_form(schema: dict) -> bool:
    """A value Gemini cannot describe: no type at all, or an object without properties."""
    types = _real_types(schema)
    return (not types and not schema.get("enum") and not schema.get("anyOf")) or (
        types == ["object"] and not schema.get("properties"))


def _enum_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# Formats Gemini accepts, by type (https://ai.google.dev/api/caching#Schema).
ALLOWED_FORMATS = {"string": {"enum", "date-time"}, "integer": {"int32", "int64"}, "number": {"float", "double"}}


def to_gemini_schema(schema: dict) -> dict:
    """The Gemini form of one JSON Schema (recursively)."""
    schema = schema if isinstance(schema, dict) else {}
    if _is_free_form(schema):
        return {"type": "string", "description": (schema.get("description") or "Any JSON value") + JSON_TEXT_NOTE}
    out = {}
    real = _real_types(schema)
    if isinstance(schema.get("type"), list) and "null" in schema["type"]:
        out["nullable"] = True
    # Several real types (e.g. an id or a name): text carries all of them.
    if real:
        out["type"] = real[0] if len(real) == 1 else "string"
    for key, value in schema.items():
        if key in DROPPED_KEYS or key not in KEPT_KEYS or key in ("type", "nullable"):
            continue
        if key == "properties":
            out["properties"] = {name: to_gemini_schema(sub) for name, sub in value.items()}
        elif key == "items":
            out["items"] = to_gemini_schema(value)
        elif key == "anyOf":
            out["anyOf"] = [to_gemini_schema(sub) for sub in value]
        elif key == "enum":
            if None in value:
                out["nullable"] = True
            out["enum"] = [_enum_text(v) for v in value if v is not None]
            out["type"] = "string"
        elif key == "format":
            continue
        else:
            out[key] = value
    if schema.get("format") in ALLOWED_FORMATS.get(out.get("type"), ()):
        out["format"] = schema["format"]
    if out.get("type") == "array" and "items" not in out:
        out["items"] = {"type": "string", "description": "Any JSON value" + JSON_TEXT_NOTE}
    if "required" in out and "properties" in out:
        out["required"] = [name for name in out["required"] if name in out["properties"]]
    return out


def to_gemini_parameters(schema: dict) -> dict | None:
    """``parameters`` of a function declaration, or None for a tool without
    parameters (Gemini rejects an object with empty ``properties``)."""
    if not (schema or {}).get("properties"):
        return None
    return to_gemini_schema(schema)


def coerce_arguments(value, schema: dict):
    """Turn Gemini's arguments back toward the original ``schema``: string
    enum values to the original numbers, numeric text to integers/numbers
    where only those are allowed, JSON text to free-form values. Anything
    that does not convert is left as it is for validation to judge."""
    schema = schema if isinstance(schema, dict) else {}
    if _is_free_form(schema) and isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    types = set(_real_types(schema))
    if isinstance(value, str) and schema.get("enum") and value not in schema["enum"]:
        for option in schema["enum"]:
            if option is not None and _enum_text(option) == value:
                return option
    if isinstance(value, str) and "string" not in types:
        for number_type, cast in (("integer", int), ("number", float)):
            numbers = any(isinstance(e, (int, float)) and not isinstance(e, bool) for e in schema.get("enum", []))
            if number_type in types or numbers:
                if not value.strip().lstrip("-").replace(".", "", 1).isdigit():
                    continue  # only plain decimal text: not "NaN", "1_000" or "inf"
                try:
                    number = cast(value)
                except ValueError:
                    continue
                if not schema.get("enum") or number in schema["enum"]:
                    return number
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        return {key: coerce_arguments(item, schema["properties"].get(key, {})) if key in schema["properties"] else item
                for key, item in value.items()}
    if isinstance(value, list) and ("array" in types or "items" in schema):
        item_schema = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [coerce_arguments(item, item_schema) for item in value]
    return value
