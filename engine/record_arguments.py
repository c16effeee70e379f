"""The records a call's arguments name by id or by name (issue 23 point 5).

A tool's JSON Schema marks each parameter that names a record with
``"x-odoo-model"`` (``tools.registry.record_ref``): a model, or a list of
models the name is looked up among (a sales or a purchase order), and
optionally ``"x-odoo-domain"``, the domain the tool looks it up within. The
marks are for the addon only; ``ToolSpec.llm_schema`` leaves them out.

Before a call is put to the user, every such value is resolved with the
tools' own lookup (``tools.lookup.find_record``): a name that matches no
record, or several, is told to the model (which asks the user which one)
instead of being asked to approve; the question then shows each record by
name and id, and an approval is refused when a name has come to name
another record since (``changed``).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..tools.lookup import find_record, find_record_among
from ..tools.registry import ToolError

MODEL_KEY = "x-odoo-model"
DOMAIN_KEY = "x-odoo-domain"
MAX_NAMED = 200  # record values resolved in one call; the others are shown as given


def marked_values(schema: Mapping, params) -> Iterator[tuple[str, Mapping, object]]:
    """``(argument, property schema, value)`` for each value of ``params``
    at a place ``schema`` marks with ``x-odoo-model``; ``argument`` is its
    path as the user reads it (``partner``, ``lines[2].product``, lines
    counted from 1). Values left empty (None, "") are skipped."""
    yield from _walk(schema, params, "")


def _walk(schema, value, path: str):
    if not isinstance(schema, Mapping):
        return
    if MODEL_KEY in schema:
        if value not in (None, "") and not isinstance(value, (dict, list, bool)):
            yield path, schema, value
        return
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for key, item in value.items():
                if key in properties:
                    yield from _walk(properties[key], item, f"{path}.{key}" if path else key)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value, start=1):
            yield from _walk(schema["items"], item, f"{path}[{index}]")


def lookup(env, mark: Mapping, value):
    """The one record ``value`` names under ``mark`` (a marked property
    schema), found as the run's user. Raises ToolError (the lookup's own
    message: the candidates when several match, the closest names when none
    does)."""
    models = mark[MODEL_KEY]
    if isinstance(models, list):
        return find_record_among(env, [m for m in models if isinstance(m, str)], value, "record")
    domain = mark.get(DOMAIN_KEY) if isinstance(mark.get(DOMAIN_KEY), list) else None
    return find_record(env, models, value, domain=[tuple(term) if isinstance(term, list) else term
                                                  for term in domain or ()])


def resolve(env, schema: Mapping, params) -> tuple[tuple[dict, ...], str]:
    """``(named, problem)``: ``named`` as ``({"argument", "model", "id",
    "name", "given"}, …)`` for each marked value of ``params`` (at most
    ``MAX_NAMED``), the record it names now, by its name as the user reads
    it; ``problem`` the first lookup failure, prefixed with the argument
    (``"lines[2].product: 2 product records match 'Large Desk': …"``), or
    ``""``. A model this database does not have is skipped."""
    named = []
    for argument, mark, value in marked_values(schema, params):
        if len(named) >= MAX_NAMED:
            break
        models = mark[MODEL_KEY] if isinstance(mark[MODEL_KEY], list) else [mark[MODEL_KEY]]
        if not any(isinstance(m, str) and m in env for m in models):
            continue
        try:
            record = lookup(env, mark, value)
        except ToolError as error:
            return tuple(named), f"{argument}: {error}"
        named.append({"argument": argument, "model": record._name, "id": record.id,
                      "name": record.display_name, "given": value})
    return tuple(named), ""


def changed(env, schema: Mapping, params, named) -> str:
    """What the marked values of ``params`` name now that they did not
    when ``named`` (``resolve``'s) was shown: ``"lines[1].product 'Large
    Desk' now names Large Desk (Steel) (#24), not Large Desk (Wood)
    (#23)"``, joined with "; "; ``""`` when each names the same record."""
    now, problem = resolve(env, schema, params)
    then = {entry.get("argument"): entry for entry in named}
    changes = []
    for entry in now:
        before = then.get(entry["argument"])
        if before and (before.get("model"), before.get("id")) != (entry["model"], entry["id"]):
            changes.append(f"{entry['argument']} {entry['given']!r} now names {entry['name']} (#{entry['id']}), "
                           f"not {before.get('name')} (#{before.get('id')})")
    if problem:
        changes.append(f"{problem.split(':', 1)[0]} no longer names one record")
    return "; ".join(changes)
