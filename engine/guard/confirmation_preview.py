"""What a call waiting for confirmation would do, in the words of the Odoo
user who must approve it (spec 000 §7.3; issue 9 point 5): the model, the
records by name, each value as ``before → after``.

Built from the call's sanitized arguments (the generic tools name their
model, records and values; other tools their ``*_id`` arguments) or, when
the confirmation was asked by an ORM operation inside a tool
(engine/guard/operation_guard.py), from that operation. Everything shown is read
as the run's user, from the database: a record the user may not read (or
that does not exist: the two are not told apart) is shown by its id, a
field or model they may not read as hidden. Every written value is listed,
whole, the ones that change first; a domain tool's records (a customer, the
product of each line) by name and id, as the tool's own lookup finds them
(engine/guard/record_arguments.py), its lines one by one; the exact arguments are
in the request too."""
from __future__ import annotations

from ...tools.tool_spec import TOOL_OPERATIONS, ToolSpec
from ...tools.values.json_values import dumps

MAX_RECORDS = 50        # records named in one request (the total is given as record_count)
ID_NAMES = ("record_ids", "record_id", "ids", "id")
UNREADABLE = "(not readable for you)"
HIDDEN = "(hidden: you may not read this field)"


def describe_call(env, spec: ToolSpec, params: dict, touched: tuple[str, ...], named: tuple = ()) -> dict:
    """Keyword arguments of ``ConfirmationRequest`` (model, model_label,
    operation, records, record_count, changes) for ``spec`` called with
    ``params`` in ``env`` (the run's environment); ``named`` the records
    its marked arguments name (``record_arguments.resolve``)."""
    model_name = params.get("model") if isinstance(params.get("model"), str) else (touched[0] if touched else "")
    model = env.get(model_name)
    operation = TOOL_OPERATIONS.get(spec.name, "call")
    if spec.name == "odoo_method_call":
        operation = f"method:{params.get('method')}"
    if operation != "call":
        values = params.get("values") if operation in ("create", "write") and isinstance(params.get("values"), dict) \
            else {}
        if model is None:
            return describe_operation(None, operation, values, model_name=model_name)
        return describe_operation(model.browse(_ids(params.get("record_ids"))), operation, values)
    ids, changes = [], []
    named = {entry["argument"]: entry for entry in named}
    properties = spec.schema.get("properties") if isinstance(spec.schema.get("properties"), dict) else {}
    for name, value in params.items():
        entry = named.get(name)
        if entry is not None and entry["model"] == model_name and spec.model_names[:1] == (model_name,):
            ids.append(entry["id"])  # the order a sale.order tool acts on, found by its number
            continue
        if entry is not None or (isinstance(value, (dict, list)) and isinstance(properties.get(name), dict)
                                 and _described(properties[name])):
            field = (model._fields.get(name) or model._fields.get(f"{name}_id")) if model is not None else None
            changes.append({"field": name, "label": field.string if field else _title(name, properties.get(name)),
                            "before": None, "after": _argument(properties.get(name) or {}, value, name, named)})
            continue
        field = model._fields.get(name) if model is not None else None
        if field is None and model is not None and _is_id(value):
            field = model._fields.get(f"{name}_id")  # a domain tool's "partner": the record partner_id names
            field = field if field is not None and field.type == "many2one" else None
        if model is not None and name in ID_NAMES and field is None:
            ids += _ids(value if isinstance(value, list) else [value])
        elif model is not None and field is None and name.endswith("_id") and _is_id(value) \
                and spec.model_names[:1] == (model_name,):
            ids.append(value)  # order_id of a sale.order tool: the record it acts on
        elif name != "model":
            shown = _shown(model, field, value) if model is not None else _short(value)
            changes.append({"field": name, "label": field.string if field else name, "before": None, "after": shown})
    records = model.browse(ids) if model is not None else None
    return {"model": model_name, "model_label": _label(env, model_name), "operation": "call",
            "records": tuple(record_names(records[:MAX_RECORDS])) if records is not None else (),
            "record_count": len(set(ids)), "changes": tuple(changes)}


def _described(schema: dict) -> bool:
    """Whether ``schema`` says what the parts of its value are (the
    properties of an object, or of each item of a list)."""
    items = schema.get("items") if isinstance(schema.get("items"), dict) else schema
    return isinstance(items.get("properties"), dict)


def _title(key: str, schema) -> str:
    title = schema.get("title") if isinstance(schema, dict) else None
    return title if isinstance(title, str) and title else key.replace("_", " ").capitalize()


def _argument(schema: dict, value, path: str, named: dict) -> str:
    """A domain tool's argument as the user reads it: a record by name and
    id (``Large Desk (Wood) (#23)``), each line of a list numbered, an
    object's parts by their titles; everything whole."""
    entry = named.get(path)
    if entry is not None:
        return f"{entry['name']} (#{entry['id']})"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return "; ".join(f"{index}) {_argument(schema['items'], item, f'{path}[{index}]', named)}"
                         for index, item in enumerate(value, start=1)) or "(empty)"
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        properties = schema["properties"]
        return ", ".join(f"{_title(key, properties.get(key))}: "
                         f"{_argument(properties.get(key) or {}, item, f'{path}.{key}', named)}"
                         for key, item in value.items()) or "(empty)"
    if value is None or value is False:
        return "(empty)"
    if value is True:
        return "yes"
    return _short(value)


def describe_operation(records, operation: str, values: dict, model_name: str = "") -> dict:
    """The same for one ORM ``operation`` (create, write, unlink or
    ``method:NAME``) on ``records`` (the model, for a create) with
    ``values`` (``records`` None: a model this database does not have).
    For a write, a field's ``before`` is its current value on the records
    the user may read (``a / b`` when they differ)."""
    if records is None:
        return {"model": model_name, "model_label": model_name, "operation": operation, "records": (),
                "record_count": 0, "changes": tuple({"field": k, "label": k, "before": None, "after": _short(v)}
                                                    for k, v in values.items())}
    readable = records.exists()._filtered_access("read")
    model_readable = records.browse().has_access("read")
    changes = []
    for name, value in values.items():
        field = records._fields.get(name)
        visible = field is not None and model_readable and records._has_field_access(field, "read")
        before = None
        if operation == "write":
            befores = {_current(record, field) if visible else HIDDEN for record in readable[:MAX_RECORDS]}
            befores = befores or {UNREADABLE}
            before = befores.pop() if len(befores) == 1 else " / ".join(sorted(befores))
        after = _shown(records, field, value) if visible or field is None else HIDDEN
        changes.append({"field": name, "label": field.string if field else name, "before": before, "after": after})
    changes.sort(key=lambda change: change["before"] == change["after"])  # the values that change first
    return {"model": records._name, "model_label": _label(records.env, records._name), "operation": operation,
            "records": tuple(record_names(records[:MAX_RECORDS], readable)), "record_count": len(records),
            "changes": tuple(changes)}


def _is_id(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**31


def _ids(value) -> list[int]:
    return list(dict.fromkeys(v for v in value if _is_id(v))) if isinstance(value, list) else []


def _label(env, model_name: str) -> str:
    model = env.get(model_name)
    return (model._description or model_name) if model is not None else model_name


def record_names(records, readable=None) -> list[dict]:
    """``[{"id", "name"}]``, the name read as the records' user from the
    database (a name already in the cache, read by other code in this
    transaction, must not reach a user who may not read it)."""
    if readable is None:
        readable = records.exists()._filtered_access("read")
    return [{"id": record.id, "name": record.display_name if record in readable else UNREADABLE}
            for record in records]


def _current(record, field) -> str:
    """``field``'s value on ``record`` now, as shown to the user."""
    value = record[field.name]
    if field.type in ("many2one", "one2many", "many2many"):
        names = record_names(value[:10])
        return ", ".join(n["name"] for n in names) + (" …" if len(value) > 10 else "") if value else "(empty)"
    if field.type == "selection":
        return str(dict(field._description_selection(record.env)).get(value, value)) if value else "(empty)"
    if field.type == "binary":
        return "(file)" if value else "(empty)"
    if field.type == "boolean":
        return "yes" if value else "no"
    return "(empty)" if value is False else _short(value)


def _commands(model, field, value, depth: int = 0) -> str:
    """A one2many/many2many value, every command of it as the user reads it
    (issue 23 point 5: nested lines are shown, by name, never cut): "new
    line: Product: Large Desk (#23), Quantity: 2; update Azure Interior
    (#14): Email: …; link Deco Addict (#12)"."""
    comodel = model.env[field.comodel_name]
    shown = []
    for command in value:
        if _is_id(command):
            command = [4, command]
        if not isinstance(command, (list, tuple)) or not command or command[0] not in (0, 1, 2, 3, 4, 5, 6):
            shown.append(dumps(command))
            continue
        verb = command[0]
        target = record_names(comodel.browse(command[1]))[0] if verb in (1, 2, 3, 4) and len(command) > 1 and _is_id(
            command[1]) else None
        name = f"{target['name']} (#{target['id']})" if target else ""
        values = command[2] if verb in (0, 1) and len(command) > 2 and isinstance(command[2], dict) else {}
        fields = ", ".join(f"{(comodel._fields[k].string if k in comodel._fields else k)}: "
                           f"{_shown(comodel, comodel._fields.get(k), v, depth + 1)}" for k, v in values.items())
        if verb == 0:
            shown.append(f"new line: {fields}")
        elif verb == 1:
            shown.append(f"update {name or command[1:2]}: {fields}")
        elif verb in (2, 3):
            shown.append(f"{'delete' if verb == 2 else 'unlink'} {name or command[1:2]}")
        elif verb == 4:
            shown.append(f"link {name or command[1:2]}")
        elif verb == 5:
            shown.append("unlink every line")
        else:
            ids = command[2] if len(command) > 2 and isinstance(command[2], list) else []
            names = record_names(comodel.browse([i for i in ids if _is_id(i)]))
            shown.append("replace every line with " + (", ".join(f"{n['name']} (#{n['id']})" for n in names)
                                                        or "nothing"))
    return "; ".join(shown) or "(empty)"


def _shown(model, field, value, depth: int = 0) -> str:
    """A value the call sends, as shown to the user: records by name, a
    relational field's commands each by name (``_commands``)."""
    if field is not None and field.type in ("one2many", "many2many") and isinstance(value, list) and depth < 5 \
            and field.comodel_name in model.env:
        return _commands(model, field, value, depth)
    if field is not None and field.type == "many2one" and _is_id(value):
        names = record_names(model.env[field.comodel_name].browse(value))
        return f"{names[0]['name']} (#{value})"
    if field is not None and field.type == "selection" and isinstance(value, str):
        return str(dict(field._description_selection(model.env)).get(value, value))
    if field is not None and field.type == "binary" and value:
        return f"(a file of {len(str(value))} characters)"
    if field is not None and field.type == "boolean":
        return "yes" if value else "no"
    if value is False or value is None:
        return "(empty)"
    return _short(value)


def _short(value) -> str:
    """``value`` on one line, whole (issue 23 point 5: what is shown is what
    runs; the confirmation bar folds a long value and shows it whole on
    demand)."""
    text = dumps(value) if isinstance(value, (dict, list, tuple)) else str(value)
    return " ".join(text.split())
