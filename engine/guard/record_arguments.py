"""The records a call's arguments name by id or by name (issue 23 point 5).

A tool's JSON Schema marks each parameter that names a record with
``"x-odoo-model"`` (``tools.base_tool.record_ref``): a model, or a list of
models the name is looked up among (a sales or a purchase order). The marks
are for the addon only; ``ToolSpec.llm_schema`` leaves them out.

Which record a marked value names is never looked up a second time, with
other rules than the tool's: it is read from the trace of the tool's own
lookups (``tools.lookup.tracing``) made in the run before the question
(engine/executor.py ``_dry_run``), so the question shows exactly the
records the approved call will use. The trace also says which candidates a
failed lookup listed (``candidates``), the only ids of such a failure the
provenance guard trusts.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping

MODEL_KEY = "x-odoo-model"


def marked_values(schema: Mapping, params) -> Iterator[tuple[str, tuple[str, ...], object]]:
    """``(argument, models, value)`` for each value of ``params`` at a
    place ``schema`` marks with ``x-odoo-model``; ``argument`` is its path
    as the user reads it (``partner``, ``lines[2].product``, lines counted
    from 1). Empty values (None, "") and values that cannot name a record
    (objects, lists, booleans) are skipped."""
    yield from _walk(schema, params, "")


def _walk(schema, value, path: str):
    if not isinstance(schema, Mapping):
        return
    if MODEL_KEY in schema:
        models = schema[MODEL_KEY] if isinstance(schema[MODEL_KEY], list) else [schema[MODEL_KEY]]
        models = tuple(m for m in models if isinstance(m, str))
        if models and value not in (None, "") and isinstance(value, (int, float, str)) \
                and not isinstance(value, bool):
            yield path, models, value
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


def _key(value):
    """A value as a lookup compares it: names stripped, 12.0 as 12."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def named(schema: Mapping, params, trace: list[dict]) -> tuple[dict, ...]:
    """``({"argument", "model", "id", "given"}, …)``: for each marked value
    of ``params``, the record the tool's own lookup found for it (``trace``
    of ``tools.lookup.tracing``); a value the tool did not look up is left
    out (it is shown as given)."""
    found: dict[tuple, int] = {}
    for entry in trace:
        if entry.get("kind") == "found" and entry.get("ids"):
            found.setdefault((entry["model"], _key(entry["value"])), entry["ids"][0])
    out = []
    for argument, models, value in marked_values(schema, params):
        for model in models:
            record_id = found.get((model, _key(value)))
            if record_id:
                out.append({"argument": argument, "model": model, "id": record_id, "given": value})
                break
    return tuple(out)


def candidates(trace: list[dict]) -> list[dict]:
    """``[{"model", "ids"}]``: the records failed lookups listed for the
    user to choose from (several matched one name), by model."""
    by_model: dict[str, list[int]] = {}
    for entry in trace:
        if entry.get("kind") == "several":
            ids = by_model.setdefault(entry["model"], [])
            ids.extend(i for i in entry.get("ids") or () if i not in ids)
    return [{"model": model, "ids": ids} for model, ids in by_model.items()]


def changes(before: tuple, now: tuple) -> str:
    """What the marked arguments name ``now`` that they did not ``before``
    (both ``named``, ``before`` with the names shown): "lines[1].product
    'Large Desk' now names another record (#24), not Large Desk (Wood)
    (#23)", joined with "; "; ``""`` when each names the same record (or
    can no longer be looked up: then the approved call fails on its own)."""
    now_by_argument = {entry["argument"]: entry for entry in now}
    out = []
    for entry in before:
        current = now_by_argument.get(entry.get("argument"))
        if current and (current["model"], current["id"]) != (entry.get("model"), entry.get("id")):
            out.append(f"{entry['argument']} {entry.get('given')!r} now names {current.get('name') or 'another record'}"
                       f" (#{current['id']}), not {entry.get('name')} (#{entry.get('id')})")
    return "; ".join(out)
