"""One JSON form for every value that leaves the ORM (issue 10, point 6):
tool observations for the model, the thread's ``tool_result_data``, the
execution log's input and output, the chat routes.

``to_json_value(value, field=None)`` returns plain JSON data (dict, list,
str, int, finite float, bool, None) and never raises; ``dumps`` writes it.
The rules:

- dates ``"2026-11-30"``; datetimes in UTC with the offset,
  ``"2026-11-30T10:00:00+00:00"`` (Odoo keeps naive datetimes in UTC);
- a many2one ``[id, name]``; other relations a list of ids; recordsets
  met outside a field ``{"model": "sale.order", "ids": [1, 2]}``;
- empty (None, or False in a field that is not boolean) ``null``; a
  boolean field's False stays ``false``;
- HTML fields as plain text (Odoo's ``html2plaintext``, without the link
  index, which would copy inline images' base64);
- binary fields and bytes ``{"binary": true, "bytes": N}`` (N: size of
  the file), never the content;
- floats and Decimals finite (NaN and infinities ``null``); sets and
  tuples lists; mapping keys text; a value met again inside itself
  ``{"circular": true}``; anything else ``str(value)``.

Pure functions: the field (an Odoo ``Field``) only tells the type."""
from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Mapping
from datetime import date, datetime, time, timezone
from decimal import Decimal

from lxml import etree

from odoo.fields import Domain
from odoo.models import BaseModel
from odoo.tools.mail import html2plaintext, html_to_inner_content

MAX_DEPTH = 100  # levels of nesting written; deeper values become {"too_deep": true}
RELATIONAL_LISTS = ("one2many", "many2many")


def to_json_value(value, field=None):
    """``value`` as plain JSON data by the module's rules. ``field`` (an
    Odoo field, when the caller knows which one holds the value: a
    ``read()`` of records) makes its type decide: a boolean False stays
    false, a char False becomes null, a many2one ``[id, name]``, HTML
    text, a binary a size marker, a date ISO-8601."""
    if field is not None:
        return _field_value(value, field)
    return _value(value, 0, set())


def dumps(value, **kwargs) -> str:
    """``json.dumps`` of ``to_json_value(value)``; ``kwargs`` go to
    ``json.dumps`` (non-ASCII characters are kept unless
    ``ensure_ascii=True``).

    A value that is plain JSON data already (a tool's result, the arguments
    of a call) is written as it is, without the walk that copies it: the
    standard encoder refuses whatever the rules would change (a value of
    another type, a non-finite number, a key that is not text, a number or
    a boolean, a value met inside itself), and a text nested at most
    MAX_DEPTH deep (``_nesting``; at once when it has no more opening
    brackets than that) needs no cut; anything else goes through
    ``to_json_value``. The JSON is the same either way, but for the text's
    order of non-text keys under ``sort_keys`` (numbers in the encoder's
    order) and a mapping with both ``1`` and ``"1"`` as keys (the text keeps
    both, the walk the last one: a parser reads the last one)."""
    kwargs.setdefault("ensure_ascii", False)
    try:
        text = json.dumps(value, allow_nan=False, default=_not_plain, **kwargs)
    except (TypeError, ValueError, RecursionError):
        pass
    else:
        if text.count("[") + text.count("{") <= MAX_DEPTH or _nesting(text) <= MAX_DEPTH:
            return text
    return json.dumps(to_json_value(value), allow_nan=False, **kwargs)


_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET_RE = re.compile(r"[^\[\]{}]+")


def _nesting(text: str) -> int:
    """How deep the JSON ``text`` is nested (counted up to MAX_DEPTH + 1):
    its strings and everything but brackets left out by the regular
    expression engine, then one pass over the brackets. Linear in the
    text: a body of 95 KB nested 950 deep (indented, 45 MB) took 31 s when
    this peeled a level a pass."""
    depth = deepest = 0
    for char in _NOT_BRACKET_RE.sub("", _STRING_RE.sub("", text)):
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    break
        else:
            depth -= 1
    return deepest


def _not_plain(value):
    """``json.dumps``'s ``default``: a value the encoder does not know as
    JSON goes through ``to_json_value`` (``dumps``)."""
    raise TypeError(type(value).__name__)


def json_rows(model, rows) -> list[dict]:
    """``rows`` as ``model.read()`` returns them, each value converted by
    its field's type (``to_json_value``)."""
    fields = model._fields
    return [{name: to_json_value(value, fields.get(name)) for name, value in row.items()} for row in rows]


def _field_value(value, field):
    kind = field.type
    if kind == "boolean":
        return bool(value)
    if value is None or value is False:
        return None
    if kind == "many2one":
        if isinstance(value, BaseModel):
            return [value.id, value.display_name] if value else None
        if isinstance(value, (list, tuple)):
            return [_value(item, 0, set()) for item in value]
        return _value(value, 0, set())  # read(load=None): the id
    if kind in RELATIONAL_LISTS and isinstance(value, BaseModel):
        return list(value.ids)
    if kind == "html":
        return html_text(value)
    if kind == "binary":
        return binary_marker(value)
    if kind == "reference" and isinstance(value, BaseModel):
        return f"{value._name},{value.id}" if value else None
    return _value(value, 0, set())


def html_text(html) -> str:
    """An HTML value as plain text (Odoo's ``html2plaintext``; its simpler
    ``html_to_inner_content`` when the first cannot parse it, e.g. a lone
    comment)."""
    text = str(html)
    try:
        return html2plaintext(text, include_references=False)
    except (ValueError, TypeError, AttributeError, etree.LxmlError):
        try:
            return html_to_inner_content(text)
        except (ValueError, TypeError, AttributeError, etree.LxmlError):
            return ""


def binary_marker(value) -> dict:
    """``{"binary": true, "bytes": N}`` for a binary field's value: N is the
    size of the file its base64 (as Odoo reads it) decodes to, else the
    length of the value as it is."""
    data = value.encode("utf-8", "replace") if isinstance(value, str) else bytes(value)
    try:
        return {"binary": True, "bytes": len(base64.b64decode(data, validate=True))}
    except (binascii.Error, ValueError):
        return {"binary": True, "bytes": len(data)}


def _value(value, depth: int, seen: set):
    if value is None:
        return None
    if isinstance(value, (bool, int, str)):
        return value if type(value) in (bool, int, str) else _scalar(value)
    if isinstance(value, (float, Decimal)):
        number = float.__float__(value) if isinstance(value, float) else float(value)  # as the json encoder reads it
        return number if math.isfinite(number) else None
    if isinstance(value, datetime):
        aware = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
        return aware.isoformat()
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"binary": True, "bytes": len(bytes(value))}
    if isinstance(value, BaseModel):
        return {"model": value._name, "ids": [id_ if isinstance(id_, int) else str(id_) for id_ in value._ids]}
    if isinstance(value, Domain):
        value = list(value)
    if isinstance(value, (Mapping, list, tuple, set, frozenset)):
        return _container(value, depth, seen)
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a value whose str() breaks still gets a form
        return f"<{type(value).__name__}>"


def _scalar(value):
    """An instance of a subclass of bool, int or str (Markup, an IntEnum, a
    str Enum...) as the plain type, with the value the json encoder writes
    for it (not what an overridden ``__str__`` or ``__int__`` returns)."""
    if isinstance(value, bool):
        return bool(value)
    return int.__int__(value) if isinstance(value, int) else str.__str__(value)


def _container(value, depth: int, seen: set):
    if id(value) in seen:
        return {"circular": True}
    if depth >= MAX_DEPTH:
        return {"too_deep": True}
    seen.add(id(value))
    try:
        if isinstance(value, Mapping):
            return {_key(key): _value(item, depth + 1, seen) for key, item in value.items()}
        items = [_value(item, depth + 1, seen) for item in value]
        if isinstance(value, (set, frozenset)):  # in order, so that the same set writes the same JSON
            try:
                items.sort()
            except TypeError:  # mixed kinds
                items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return items
    finally:
        seen.discard(id(value))


def _key(key) -> str:
    """A mapping key as text: its JSON form (``1`` → ``"1"``, ``None`` →
    ``"null"``, ``(1, 2)`` → ``"[1, 2]"``), a text one as it is."""
    value = _value(key, 0, set())
    return value if isinstance(value, str) else json.dumps(value)
