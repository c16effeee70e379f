"""The tool registry (spec 000 §3.3, §5): every tool is defined once, in
Python, beside its function.

``@agent_tool(...)`` on a plain function ``(env, **params) -> dict`` records
a frozen ``ToolDefinition``: the name given to the model, a description
written for a model, the JSON Schema of the parameters (``required`` is read
from the function's signature: the parameters without a default), the risk
level, the read-only / destructive / idempotent hints, the Odoo apps it
needs and its category. ``agentic.ai.tool`` records are created and updated
from these definitions on install and upgrade
(``agentic.ai.tool._sync_tool_definitions``), so administrators can switch
tools on and off, attach them to agents and tune their confirmation.

An ``agentic.ai.tool`` record's ``handler`` (a dotted path such as
``agentic_ai.tools.sales_tools.create_quotation``) is looked up in this
registry only, so editing a record can never point the agent at arbitrary
Python. Other addons define their tools the same way and call
``_sync_tool_definitions(module=...)`` from their own data.
"""
from __future__ import annotations

import importlib
import inspect
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import jsonschema

_logger = logging.getLogger(__name__)

TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # the function-name rule of OpenAI, Gemini and Anthropic
RISK_LEVELS = ("low", "medium", "high", "variable")
READ_ONLY_RISKS = ("low",)
DESTRUCTIVE_RISKS = ("high", "variable")
CATEGORIES = ("generic", "sales", "purchase", "inventory", "accounting", "hr", "manufacturing", "report", "other")
TOOL_TYPES = ("native", "orm_crud")
MIN_DESCRIPTION = 80  # characters: a description a model can choose the tool from


class ToolError(Exception):
    """A problem the model can correct (bad name, ambiguous record, refused
    method...). The executor turns it into an error observation; nothing the
    tool wrote survives (savepoint)."""


@dataclass(frozen=True)
class ToolDefinition:
    """One tool as its code defines it. ``parameters`` is the JSON Schema of
    the arguments (an object); ``apps`` are Odoo modules of which any one
    must be installed (none: always available); ``models`` are the models
    the tool reads or writes, checked against agents' allowed and blocked
    models; ``handler`` is the function's dotted path without
    ``odoo.addons.`` and ``module`` the addon that owns the record."""
    name: str
    label: str
    description: str
    parameters: Mapping
    risk_level: str
    category: str
    apps: tuple[str, ...]
    models: tuple[str, ...]
    read_only: bool
    destructive: bool
    idempotent: bool
    sequence: int
    tool_type: str
    handler: str
    module: str
    function: Callable = field(repr=False, compare=False)

    @property
    def xml_id(self) -> str:
        """``<module>.tool_<name>``: the external id of the tool's record."""
        return f"{self.module}.tool_{self.name}"

    def record_values(self) -> dict:
        """The ``agentic.ai.tool`` fields the code owns, written on every
        install and upgrade."""
        return {
            "name": self.name,
            "description": self.description,
            "tool_type": self.tool_type,
            "handler": self.handler,
            "parameter_schema": json.dumps(self.parameters, indent=2, ensure_ascii=False),
            "risk_level": self.risk_level,
            "is_destructive": self.destructive,
            "is_idempotent": self.idempotent,
            "category": self.category,
            "required_module": ",".join(self.apps) or False,
            "model_names": ",".join(self.models) or False,
        }

    def initial_values(self) -> dict:
        """The fields an administrator may change: set when the record is
        created, then left as the administrator keeps them."""
        return {"label": self.label, "sequence": self.sequence, "active": True, "requires_confirmation": False}

    def problems(self) -> list[str]:
        """What is wrong with this definition, as messages (empty when it is
        sound): the schema is checked against JSON Schema 2020-12 and against
        the function's signature (same parameters, defaults that the schema
        accepts), the name, risk, category and hints against their rules."""
        found = []
        if not TOOL_NAME_RE.match(self.name):
            found.append(f"name {self.name!r} is not 1-64 letters, digits, _ or -")
        if self.risk_level not in RISK_LEVELS:
            found.append(f"risk_level {self.risk_level!r} is not one of {RISK_LEVELS}")
        if self.category not in CATEGORIES:
            found.append(f"category {self.category!r} is not one of {CATEGORIES}")
        if self.tool_type not in TOOL_TYPES:
            found.append(f"tool_type {self.tool_type!r} is not one of {TOOL_TYPES}")
        if self.read_only != (self.risk_level in READ_ONLY_RISKS):
            found.append("read_only must be true exactly for low-risk tools")
        if len(self.description) < MIN_DESCRIPTION:
            found.append(f"the description has fewer than {MIN_DESCRIPTION} characters")
        try:
            jsonschema.Draft202012Validator.check_schema(self.parameters)
        except jsonschema.SchemaError as error:
            return [*found, f"invalid JSON Schema: {error.message}"]
        signature = _parameters(self.function)
        declared = set(self.parameters.get("properties", {}))
        if declared != set(signature):
            found.append(f"schema parameters {sorted(declared)} differ from the function's {sorted(signature)}")
        for name, default in signature.items():
            schema = self.parameters.get("properties", {}).get(name)
            if schema is None or default in (inspect.Parameter.empty, None):
                continue
            if not jsonschema.Draft202012Validator(schema).is_valid(default):
                found.append(f"the default {default!r} of {name} does not satisfy its schema")
        return found


# Definitions by handler path.
TOOL_REGISTRY: dict[str, ToolDefinition] = {}


def record_ref(description: str, model: str | list[str] | None = None) -> dict:
    """Schema of a parameter naming one record by id or by name (the tools
    resolve it with ``lookup.find_record``, names of at most 200 characters).
    ``model`` (a model, or the models a name is looked up among) marks it
    for the confirmation, which shows the record the tool's own lookup found
    by name (engine/guard/record_arguments.py; the mark is left out of what the
    model is sent)."""
    schema = {"type": ["integer", "string"], "maxLength": 200, "description": description}
    if model:
        schema["x-odoo-model"] = list(model) if isinstance(model, (list, tuple)) else model
    return schema


def agent_tool(*, label: str, description: str, parameters: Mapping, risk_level: str, category: str,
               apps: tuple[str, ...] = (), models: tuple[str, ...] = (), sequence: int = 10,
               tool_type: str = "native", name: str | None = None, destructive: bool | None = None,
               idempotent: bool | None = None) -> Callable[[Callable], Callable]:
    """Define the decorated function as a tool (see ``ToolDefinition``).

    ``parameters`` maps each parameter of the function but ``env`` to its
    JSON Schema. The hints default from the risk level: low-risk tools only
    read and are idempotent; high- and variable-risk ones are destructive
    (they are what the ``destructive`` confirmation policy asks about)."""
    def register(func: Callable) -> Callable:
        module_path = func.__module__.removeprefix("odoo.addons.")
        definition = ToolDefinition(
            name=name or func.__name__,
            label=label,
            description=description,
            parameters={"type": "object", "properties": dict(parameters),
                        "required": [p for p, d in _parameters(func).items() if d is inspect.Parameter.empty]},
            risk_level=risk_level,
            category=category,
            apps=tuple(apps),
            models=tuple(models),
            read_only=risk_level in READ_ONLY_RISKS,
            destructive=risk_level in DESTRUCTIVE_RISKS if destructive is None else destructive,
            idempotent=risk_level in READ_ONLY_RISKS if idempotent is None else idempotent,
            sequence=sequence,
            tool_type=tool_type,
            handler=f"{module_path}.{func.__name__}",
            module=module_path.split(".", 1)[0],
            function=func,
        )
        TOOL_REGISTRY[definition.handler] = definition
        return func
    return register


def definitions(module: str | None = None) -> list[ToolDefinition]:
    """The registered definitions, of one addon when ``module`` is given."""
    return [d for d in TOOL_REGISTRY.values() if module is None or d.module == module]


def resolve_handler(path: str) -> Callable:
    """The registered function at ``path``. Nothing is imported here: a
    record's ``handler`` is text an administrator types, and tools register
    when Odoo loads their addon. Raises ToolError naming the path, and why
    its module could not be imported when that is the reason."""
    try:
        return TOOL_REGISTRY[path].function
    except (KeyError, TypeError):
        module = path.rsplit(".", 1)[0] if isinstance(path, str) else ""
        why = f" (its module {module} could not be imported: {IMPORT_FAILURES[module]})" \
            if module in IMPORT_FAILURES else ""
        raise ToolError(f"no registered tool function at {path!r}{why}") from None


# Tool modules that failed to import, by dotted path without ``odoo.addons.``: the reason.
IMPORT_FAILURES: dict[str, str] = {}


def import_tool_modules(package: str, names: list[str]) -> dict[str, str]:
    """Import ``package.<name>`` for each name so that their tools register.
    A module that fails is logged with the reason and skipped: its tools are
    missing, the others work, and the sync archives no tool of that addon
    (``failed_modules``). Returns ``{module: reason}`` of the failures."""
    failures = {}
    for name in names:
        try:
            importlib.import_module(f"{package}.{name}")
        except Exception as error:
            failures[name] = f"{type(error).__name__}: {error}"
            IMPORT_FAILURES[f"{package.removeprefix('odoo.addons.')}.{name}"] = failures[name]
            _logger.exception("Tool module %s.%s could not be imported, its tools are unavailable: %s",
                              package, name, failures[name])
    return failures


def failed_modules(module: str) -> list[str]:
    """The tool modules of addon ``module`` that failed to import."""
    return [path for path in IMPORT_FAILURES if path.split(".", 1)[0] == module]


def _parameters(func: Callable) -> dict[str, object]:
    """``{name: default}`` of ``func``'s parameters but ``env``
    (``inspect.Parameter.empty`` when there is no default)."""
    return {p.name: p.default for p in inspect.signature(func).parameters.values() if p.name != "env"}

