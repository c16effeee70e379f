"""What a call waiting for confirmation would do, in the words of the Odoo
user who must approve it (spec 000 §7.3; issue 9 point 5): the model, the
records by name, each value as ``before → after``.

Built from the call's sanitized arguments (the generic tools name their
model, records and values; other tools their ``*_id`` arguments) or, when
the confirmation was asked by an ORM operation inside a tool
(engine/operation_guard.py), from that operation. Names and current values
are read as the run's user: what the user may not read is shown by id."""
from __future__ import annotations

from odoo.exceptions import AccessError, MissingError

from .tool_spec import ToolSpec

MAX_RECORDS = 50        # records named in one request
MAX_CHANGES = 60        # values listed in one request
MAX_VALUE_CHARS = 200   # one shown value
ID_NAMES = ("record_ids", "record_id", "ids", "id")
GENERIC_OPERATIONS = {"odoo_create": "create", "odoo_write": "write", "odoo_unlink": "unlink"}


def describe_call(env, spec: ToolSpec, params: dict, touched: tuple[str, ...]) -> dict:
    """Keyword arguments of ``ConfirmationRequest`` (model, model_label,
    operation, records, changes) for ``spec`` called with ``params`` in
    ``env`` (the run's environment)."""
    model_name = params.get("model") if isinstance(params.get("model"), str) else (touched[0] if touched else "")
    model = env.get(model_name)
    operation = GENERIC_OPERATIONS.get(spec.name, "call")
    if spec.name == "odoo_method_call":
        operation = f"method:{params.get('method')}"
    if operation != "call":
        ids = _ids(params.get("record_ids"))
        values = params.get("values") if operation in ("create", "write") and isinstance(params.get("values"), dict) \
            else {}
        return describe_operation(model.browse(ids) if model is not None else None, operation, values,
                                  model_name=model_name)
    ids, changes = [], []
    for name, value in params.items():
        field = model._fields.get(name) if model is not None else None
        if model is not None and name in ID_NAMES and field is None:
            ids += _ids(value if isinstance(value, list) else [value])
        elif model is not None and field is None and name.endswith("_id") and isinstance(value, int) \
                and spec.model_names[:1] == (model_name,):
            ids += _ids([value])  # order_id of a sale.order tool: the record it acts on
        elif name != "model":
            changes.append({"field": name, "label": field.string if field else name, "before": None,
                            "after": _shown(env, field, value)})
    records = _names(model.browse(ids[:MAX_RECORDS])) if model is not None else []
    return {"model": model_name, "model_label": _label(env, model_name), "operation": "call",
            "records": tuple(records), "changes": tuple(changes[:MAX_CHANGES])}


def describe_operation(records, operation: str, values: dict, model_name: str = "") -> dict:
    """The same for one ORM ``operation`` (create, write, unlink or
    ``method:NAME``) on ``records`` (the model, for a create) with
    ``values``: for a write, each field's current value of the first
    records is its ``before``."""
    if records is None:
        return {"model": model_name, "model_label": model_name, "operation": operation, "records": (),
                "changes": tuple({"field": k, "label": k, "before": None, "after": _short(v)}
                                 for k, v in list(values.items())[:MAX_CHANGES])}
    env = records.env
    readable = records[:MAX_RECORDS].exists()._filtered_access("read") if operation == "write" else records
    changes = []
    for name, value in list(values.items())[:MAX_CHANGES]:
        field = records._fields.get(name)
        before = None
        if operation == "write":
            befores = {_current(record, field) for record in readable} if field else {"?"}
            befores = befores or {"(not readable for you)"}
            before = befores.pop() if len(befores) == 1 else " / ".join(sorted(map(str, befores)))
        changes.append({"field": name, "label": field.string if field else name, "before": before,
                        "after": _shown(env, field, value)})
    return {"model": records._name, "model_label": _label(env, records._name), "operation": operation,
            "records": tuple(_names(records[:MAX_RECORDS])), "changes": tuple(changes)}


def _ids(value) -> list[int]:
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)] if isinstance(value, list) else []


def _label(env, model_name: str) -> str:
    if model_name not in env:
        return model_name
    return env[model_name]._description or model_name


def _names(records) -> list[dict]:
    """``[{"id", "name"}]``: a record the user may not read, or that does
    not exist, is named by its id."""
    existing = records.exists()
    try:
        # Asked of the database: a name already in the cache (read by other
        # code in this transaction) must not be shown to a user who may not read it.
        readable = existing._filtered_access("read")
    except AccessError:  # no read access to the model at all
        readable = records.browse()
    names = []
    for record in records:
        name = ("(no such record)" if record not in existing else
                record.display_name if record in readable else "(not readable for you)")
        names.append({"id": record.id, "name": name})
    return names


def _current(record, field) -> str:
    """``field``'s value on ``record`` now, as shown to the user."""
    try:
        value = record[field.name]
    except (AccessError, MissingError):
        return "(not readable for you)"
    if field.type in ("many2one", "one2many", "many2many"):
        return ", ".join(value.mapped("display_name")[:10]) if value else "(empty)"
    if field.type == "selection":
        return str(dict(field._description_selection(record.env)).get(value, value)) if value else "(empty)"
    if field.type == "binary":
        return "(file)" if value else "(empty)"
    return "(empty)" if value is False and field.type != "boolean" else _short(value)


def _shown(env, field, value) -> str:
    """A value the call sends, as shown to the user: records by name."""
    if field is not None and field.type == "many2one" and isinstance(value, int) and value:
        names = _names(env[field.comodel_name].browse(value))
        return f"{names[0]['name']} (#{value})"
    if field is not None and field.type == "selection" and isinstance(value, str):
        return str(dict(field._description_selection(env)).get(value, value))
    if value is False or value is None:
        return "(empty)"
    return _short(value)


def _short(value) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS] + "…"
