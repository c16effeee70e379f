"""A tool compiled for a run (spec 000 §3.3, §4.6): its ``agentic.ai.tool``
record read once, its JSON Schema parsed once into a validator, its
function resolved once. The executor and the safety guard work on this
frozen value, never on the record."""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import jsonschema

from .base_tool import READ_ONLY_RISKS, TOOL_TYPES, ToolError, resolve_handler

EMPTY_SCHEMA = {"type": "object", "properties": {}}
MAX_DEPTH = 50  # levels of nested arrays and objects in arguments; deeper ones are refused before validation
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


# The generic tools whose ORM operation is known before they run (tools/orm_tool.py).
TOOL_OPERATIONS = {"odoo_create": "create", "odoo_write": "write", "odoo_unlink": "unlink"}

@dataclass(frozen=True)
class ToolSpec:
    """One tool as a run sees it. ``schema`` is the JSON Schema of the
    arguments (an object); ``model_names`` the models it declares (a server
    action's model included); ``function`` the registered Python function
    of native and generic ORM tools (None for the others, or when it could
    not be found: ``problem`` then says why)."""
    name: str
    label: str
    description: str
    tool_type: str
    risk_level: str
    is_destructive: bool
    requires_confirmation: bool
    schema: Mapping
    model_names: tuple[str, ...]
    required_modules: tuple[str, ...]
    server_action_id: int = 0
    python_code: str = field(default="", repr=False)
    function: Callable | None = field(default=None, repr=False, compare=False)
    problem: str = ""
    validator: jsonschema.protocols.Validator = field(default=None, repr=False, compare=False)

    @classmethod
    def from_record(cls, tool) -> ToolSpec:
        """Compile an ``agentic.ai.tool`` record (code and server action read as superuser)."""
        try:
            schema = json.loads(tool.parameter_schema or "{}")
        except (ValueError, RecursionError):
            schema = None
        if not isinstance(schema, dict):
            schema = EMPTY_SCHEMA
        function, problem = None, ""
        if tool.tool_type in TOOL_TYPES:
            try:
                function = resolve_handler(tool.handler or "")
            except ToolError as error:
                problem = str(error)
        privileged = tool.sudo()
        model_names = split_names(tool.model_names)
        if tool.tool_type == "server_action" and privileged.server_action_id:
            model_names += (privileged.server_action_id.model_id.model,)
        return cls(
            name=tool.name, label=tool.label or tool.name, description=tool.description or "",
            tool_type=tool.tool_type, risk_level=tool.risk_level, is_destructive=tool.is_destructive,
            requires_confirmation=tool.requires_confirmation, schema=schema, model_names=model_names,
            required_modules=split_names(tool.required_module),
            server_action_id=privileged.server_action_id.id or 0,
            python_code=(privileged.python_code or "") if tool.tool_type == "python_code" else "",
            function=function, problem=problem, validator=jsonschema.Draft202012Validator(schema),
        )

    @property
    def read_only(self) -> bool:
        """Low-risk tools only read (spec §3.3)."""
        return self.risk_level in READ_ONLY_RISKS

    @property
    def llm_schema(self) -> dict:
        """``{"name", "description", "parameters"}``: the neutral function
        declaration every adapter converts to its provider's format."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": {"type": "object", "properties": _unmarked(self.schema.get("properties", {})),
                           "required": self.schema.get("required", [])},
        }

    def validate(self, params) -> list[str]:
        """Messages for what in ``params`` breaks the schema (required
        parameters, types, enums, bounds...) or cannot be stored (NaN,
        infinite numbers, NUL characters); empty when valid."""
        if not isinstance(params, dict):
            return ["arguments must be a JSON object"]
        plain = _plainly_storable(params)
        if not plain and _depth(params) > MAX_DEPTH:
            return [f"arguments are nested deeper than {MAX_DEPTH} levels"]
        errors = []
        for error in sorted(self.validator.iter_errors(params), key=lambda e: list(e.absolute_path)):
            where = ".".join(str(p) for p in error.absolute_path)
            message = error.message
            if len(repr(error.instance)) > 80:  # the model's own long value, not read back whole
                message = message.replace(repr(error.instance), f"{repr(error.instance)[:80]}…")
            if error.validator == "required":
                errors.append(message.replace("is a required property", "is a required parameter")
                              + (f" (in {where})" if where else ""))
            else:
                errors.append(f"{where or 'arguments'}: {message}")
        if not plain:
            errors += [f"{where}: {problem}" for where, problem in _unstorable(params)]
        return errors

    def sanitize(self, params: dict) -> dict:
        """Only the parameters the schema declares (so a model cannot pass
        extra keyword arguments such as ``env``), surrounding blanks stripped."""
        properties = self.schema.get("properties", {})
        return {key: value.strip() if isinstance(value, str) else value
                for key, value in params.items() if key in properties}


def _unmarked(schema):
    """``schema`` without the addon's own ``x-odoo-*`` marks
    (engine/guard/record_arguments.py): the model is sent plain JSON Schema."""
    if isinstance(schema, Mapping):
        return {key: _unmarked(value) for key, value in schema.items()
                if not (isinstance(key, str) and key.startswith("x-odoo-"))}
    if isinstance(schema, list):
        return [_unmarked(item) for item in schema]
    return schema


def split_names(text) -> tuple[str, ...]:
    """The names of a comma-separated field (``required_module``,
    ``model_names``), blanks dropped."""
    return tuple(name.strip() for name in (text or "").split(",") if name.strip())


def _plainly_storable(params: dict) -> bool:
    """Whether ``params`` needs neither walk (``_depth``, ``_unstorable``),
    told in one pass of the C JSON encoder: it takes the value (finite
    numbers only), the text has at most MAX_DEPTH opening brackets (so
    nothing nests deeper), no NUL (the encoder writes it ``\\u0000``)
    and no lone surrogate (the text does not encode as UTF-8). False says
    only that the walks must look; most calls are short and plain."""
    try:
        text = json.dumps(params, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    if text.count("[") + text.count("{") > MAX_DEPTH or "\\u0000" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unstorable(value, where="arguments"):
    """``[(path, problem)]`` for the values no tool can take: NaN and
    infinite numbers (Python's JSON reader accepts ``NaN`` and ``Infinity``
    and JSON Schema's bounds do not refuse NaN) and text with NUL characters
    (PostgreSQL cannot store them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return [(where, f"numbers must be finite, got {value}")]
    if isinstance(value, str) and "\x00" in value:
        return [(where, "text cannot contain NUL characters")]
    if isinstance(value, str) and _SURROGATE_RE.search(value):
        return [(where, "text cannot contain lone UTF-16 surrogates (invalid characters)")]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [found for key, item in items
            for found in _unstorable(item, f"{key}" if where == "arguments" else f"{where}.{key}")]


def _depth(value) -> int:
    """How deeply ``value``'s lists and dicts nest (walked without recursion:
    a model can send thousands of levels)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in item)
    return deepest
