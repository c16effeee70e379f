"""Generic ORM tools (spec 000 §5.1): search, create, write, delete, a
whitelist of business methods, and model introspection. Every call runs in
the environment the executor hands in (the requesting user's), so Odoo's
access rights and record rules apply as they would in the web client.
"""
from __future__ import annotations

from odoo.exceptions import AccessError
from odoo.fields import Domain
from odoo.service.model import get_public_method

from .base_tool import ToolError, agent_tool
from .lookup import get_model
from .parsing import DEFAULT_LIMIT, clamp_limit
from .summaries import user_action_needed
from .untrusted import note_free_text_fields
from .values.json_values import json_rows, to_json_value
from .values.sensitive_fields import is_secret, is_sensitive, mask_rows, masks, sensitive_names

# Spec 000 §5.1, verbatim.
ALLOWED_METHODS = {
    "sale.order": ["action_confirm", "action_cancel", "action_draft", "action_unlock"],
    "purchase.order": ["button_confirm", "button_approve", "button_cancel", "button_draft"],
    "account.move": ["action_post", "button_draft", "button_cancel"],
    "stock.picking": ["action_confirm", "action_assign", "button_validate"],
    "mrp.production": ["action_confirm", "button_mark_done", "action_cancel"],
    "hr.leave": ["action_approve", "action_refuse", "action_draft"],
    "crm.lead": ["action_set_won", "action_set_lost"],
}

# Where Odoo 19 has no method of the spec's name: what is called instead, and why.
METHOD_SUBSTITUTES = {
    ("hr.leave", "action_draft"): (
        "action_back_to_approval",
        "Odoo 19 time off has no draft state; the request was moved back to 'To Approve' instead",
    ),
}

# Fields shown when the model asks for none: enough to identify and triage a record.
SUMMARY_FIELDS = ("display_name", "name", "state", "partner_id", "date_order", "date", "amount_total",
                  "email", "phone", "company_id")
MAX_FIELDS = 25
_NEVER_WRITE = {"id", "create_uid", "create_date", "write_uid", "write_date", "__last_update"}

# Odoo's technical set-up: code (server actions, automation), views, assets
# loaded in every browser, scheduled jobs and their triggers, settings. The
# generic tools may read these models (where no safety rule forbids it) but
# never create, write or delete them; attachments are business documents.
TECHNICAL_PREFIXES = ("ir.", "base.")
TECHNICAL_WRITABLE = frozenset({"ir.attachment"})

# Records that only change through Odoo's business flows: the generic tools
# may read them but not create, write or delete them (e.g. stock quantities
# without a stock move, journal items of a posted entry).
PROTECTED_MODELS = {
    "stock.quant": "an inventory adjustment or a transfer (create_internal_transfer)",
    "stock.move": "its transfer or order",
    "stock.move.line": "its transfer",
    "account.move.line": "its journal entry (account.move) while it is a draft, or the accounting tools",
    "account.partial.reconcile": "register_payment",
    "account.full.reconcile": "register_payment",
}


def model_param(example: str = "") -> dict:
    """Schema of the generic tools' ``model`` parameter."""
    return {"type": "string", "description": f"Technical model name{example}."}


def record_ids_param(description: str) -> dict:
    """Schema of the generic tools' ``record_ids`` parameter (read by ``_records``)."""
    return {"type": "array", "items": {"type": "integer"}, "minItems": 1, "description": description}


def _check_writable(model_name: str) -> None:
    if model_name.startswith(TECHNICAL_PREFIXES) and model_name not in TECHNICAL_WRITABLE:
        raise ToolError(f"{model_name} is part of Odoo's technical set-up (code, views, assets, scheduled jobs, "
                        "settings): the generic create/write/delete tools do not change it")
    if model_name in PROTECTED_MODELS:
        raise ToolError(f"{model_name} records change only through {PROTECTED_MODELS[model_name]}, "
                        "not through the generic create/write/delete tools")


def _domain(model, domain) -> Domain:
    if domain in (None, "", []):
        return Domain.TRUE
    if not isinstance(domain, list):
        raise ToolError("domain must be a list such as [[\"name\", \"ilike\", \"Azure\"]]")
    try:
        parsed = Domain([tuple(term) if isinstance(term, list) else term for term in domain]).optimize(model)
    except (ValueError, TypeError, KeyError) as exc:
        raise ToolError(f"invalid domain {domain!r}: {exc}") from None
    for term in domain:
        if isinstance(term, (list, tuple)) and term and isinstance(term[0], str):
            _check_readable_path(model, term[0])
    return parsed


def _check_readable_path(model, path: str) -> None:
    """Every field of a domain path (``partner_id.credit``) must be readable
    by the user: Odoo does not check a field's groups when it is searched
    through its search method, so a filter could reveal restricted data."""
    for name in path.split("."):
        field = model._fields.get(name)
        if field is None:
            return  # Odoo reports unknown fields itself
        if not model._has_field_access(field, "read"):
            raise ToolError(f"you may not read {model._name}.{name}, so you cannot filter on it")
        if is_secret(field):
            raise ToolError(f"{model._name}.{name} holds a credential, withheld from agents: it cannot be filtered on")
        if masks(model.env) and is_sensitive(model._name, name, sensitive_names(model.env)):
            raise ToolError(f"{model._name}.{name} is sensitive (masked for this agent): it cannot be filtered or "
                            "sorted on, which would tell its value")
        if not field.relational:
            return
        model = model.env[field.comodel_name]


def _fields(model, fields) -> list[str]:
    if not fields:
        return [name for name in SUMMARY_FIELDS if name in model._fields]
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise ToolError("fields must be a list of field names")
    unknown = [f for f in fields if f not in model._fields]
    if unknown:
        raise ToolError(f"unknown fields on {model._name}: {', '.join(unknown)}; use odoo_get_model_info")
    secrets = [f for f in fields if is_secret(model._fields[f])]
    if secrets:  # issue 23 point 4: credentials never reach the model, whoever asks
        raise ToolError(f"{', '.join(secrets)} of {model._name} hold credentials, withheld from agents for "
                        "everyone; ask without them")
    return fields[:MAX_FIELDS]


def _records(model, record_ids):
    if isinstance(record_ids, int) and not isinstance(record_ids, bool):
        record_ids = [record_ids]
    if not isinstance(record_ids, list) or not record_ids or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in record_ids):
        raise ToolError("record_ids must be a non-empty list of integer ids")
    # Missing and unreadable records get one answer: telling them apart would say which ids exist.
    readable = model.with_context(active_test=False).search([("id", "in", record_ids)])
    missing = sorted(set(record_ids) - set(readable.ids))
    if missing:
        raise ToolError(f"{model._name} records {missing} do not exist or you may not read them")
    return model.browse(list(dict.fromkeys(record_ids)))


def _values(model, values, path: str = "", records=None) -> dict:
    """Check ``values`` for ``model`` the way the generic tools allow them,
    at every depth of one2many/many2many commands: known, settable fields;
    no ``state`` (workflows go through odoo_method_call); relational commands
    that create, update or link only (deletions go through odoo_unlink), and
    that reach only records of that relation on ``records`` (the records
    written; None for a record being created): ``[1, id, …]`` updates a
    line already there, ``[4, id]`` on a one2many links one already there
    (issue 23 point 5: an "add a contact" write may not rename another
    customer). Raises ToolError naming the offending field."""
    if not isinstance(values, dict) or not values:
        raise ToolError(f"{path or 'values'} must be a non-empty object of field: value")
    unknown = [f for f in values if f not in model._fields]
    if unknown:
        raise ToolError(f"unknown fields on {model._name}: {', '.join(unknown)}; use odoo_get_model_info")
    forbidden = [f for f in values if f in _NEVER_WRITE or _is_computed_readonly(model._fields[f])]
    if forbidden:
        raise ToolError(f"these fields of {model._name} cannot be set: {', '.join(forbidden)}")
    if "state" in values and model._fields["state"].type == "selection":
        methods = ", ".join(ALLOWED_METHODS.get(model._name, [])) or "no method allowed"
        raise ToolError(f"the state of {model._name} changes through its workflow buttons, not by writing it; "
                        f"use odoo_method_call ({methods})")
    for name, value in values.items():
        field = model._fields[name]
        if field.comodel_name == "res.company":
            _check_companies(model.env, value, f"{path}{name}")
        if field.type in ("one2many", "many2many"):
            linked = frozenset(records[name].ids) if records else frozenset()
            _check_commands(model.env[field.comodel_name], field, value, f"{path}{name}", linked)
    return values


def _check_companies(env, value, path: str) -> None:
    """A company field may only name companies of the user: Odoo checks
    record rules after a create but not after a write, so a write could
    move a record out of the user's companies."""
    ids = set()
    if isinstance(value, int) and not isinstance(value, bool):
        ids = {value}
    for command in value if isinstance(value, list) else ():
        if isinstance(command, (list, tuple)) and command and command[0] == 4 and len(command) > 1:
            ids.add(command[1])
        elif isinstance(command, (list, tuple)) and command and command[0] == 6 and len(command) > 2:
            ids.update(command[2] if isinstance(command[2], list) else [])
    foreign = ids - set(env.user.company_ids.ids)
    if foreign:
        raise ToolError(f"{path}: companies {sorted(foreign)} are not among your companies "
                        f"({', '.join(f'{c.name} (id {c.id})' for c in env.user.company_ids)})")


def _check_commands(comodel, field, value, path: str, linked: frozenset = frozenset()) -> None:
    """One2many: only CREATE/UPDATE/LINK commands (anything else, a list of
    ids or False, deletes the lines left out). Many2many: no DELETE.
    ``linked``: the ids the field holds now on the records written; an
    UPDATE, or a one2many LINK, of any other record is refused."""
    allowed = (0, 1, 4) if field.type == "one2many" else (0, 1, 3, 4, 6)
    if not isinstance(value, list) or not all(isinstance(c, (list, tuple)) and c for c in value):
        raise ToolError(f"{path}: give a list of commands such as [[0, 0, {{...}}]] (create) or [[4, id]] (link); "
                        "replacing or clearing lines is not allowed here, delete records with odoo_unlink")
    for command in value:
        if command[0] not in allowed:
            raise ToolError(f"{path}: command {command[0]} is not allowed here (allowed: "
                            f"{', '.join(map(str, allowed))}); removing or deleting lines goes through odoo_unlink, "
                            "which asks the user")
        if command[0] in (1, 4) and (command[0] == 1 or field.type == "one2many"):
            target = command[1] if len(command) > 1 else None
            if not isinstance(target, int) or isinstance(target, bool) or target not in linked:
                what = "update" if command[0] == 1 else "link"
                raise ToolError(f"{path}: [{command[0]}, {target!r}] would {what} {comodel._name} {target!r}, which is "
                                f"not one of this record's {field.name} ({sorted(linked) or 'none'}); a command may "
                                "only reach the records of its own relation")
        if command[0] in (0, 1):
            if len(command) < 3:
                raise ToolError(f"{path}: command {command[0]} needs three items, e.g. [0, 0, {{...}}]")
            _values(comodel, command[2], f"{path}.", comodel.browse(command[1]) if command[0] == 1 else None)


def _is_computed_readonly(field) -> bool:
    return bool(field.compute and field.readonly and not field.inverse)


def read_rows(records, field_names) -> list[dict]:
    """``records.read(field_names)`` with each value in the addon's JSON
    form by its field's type (tools/values/json_values.py): dates ISO-8601,
    datetimes UTC with their offset, many2one ``[id, name]``, empty values
    null (a boolean's False stays false), HTML as text, files as
    ``{"binary": true, "bytes": N}``; sensitive fields masked."""
    return data_rows(records, records.read(field_names))


def data_rows(model, values: list[dict]) -> list[dict]:
    """``values`` read from records of ``model`` (by ``read`` or
    ``search_read``: one dict per record) in the JSON form ``read_rows``
    describes, sensitive fields masked. The one place the generic tools
    turn records into data."""
    return mask_rows(model, json_rows(model, values))


def _snapshot(records, fields=None) -> list[dict]:
    return read_rows(records, fields or [f for f in SUMMARY_FIELDS if f in records._fields])


@agent_tool(
    label="Search records",
    category="generic",
    risk_level="low",
    tool_type="orm_crud",
    sequence=1,
    description=("Search records of any Odoo model the user can read. Use it to find ids before acting on records. "
                 "Returns total (all matches), count (returned) and records with the requested fields. Without "
                 "fields, returns a short summary (display_name, name, state, partner, dates, amount_total...). "
                 "Results are capped by limit (default 20, max 200); page with offset."),
    parameters={
        "model": model_param(", e.g. res.partner, sale.order, product.product"),
        "domain": {"type": "array",
                   "description": ("Odoo domain: a list of [field, operator, value] triples and '|', '&', '!' "
                                   "operators, e.g. [[\"name\", \"ilike\", \"azure\"]]. Empty for all records."),
                   "items": {}},
        "fields": {"type": "array", "items": {"type": "string"},
                   "description": "Field names to return; use odoo_get_model_info to discover them."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 200,
                  "description": "Maximum records to return (default 20)."},
        "offset": {"type": "integer", "minimum": 0, "maximum": 2147483647,
                   "description": "Records to skip, for paging."},
        "order": {"type": "string", "description": "Sort order, e.g. \"date_order desc\"."},
    },
)
def odoo_search_read(env, model, domain=None, fields=None, limit=DEFAULT_LIMIT, offset=0, order=None):
    """Search ``model`` with ``domain``; returns ``{model, total, count,
    records}`` where ``total`` counts every match and ``records`` holds at
    most ``limit`` (≤ 200) of them."""
    records_model = get_model(env, model)
    dom = _domain(records_model, domain)
    field_names = _fields(records_model, fields)
    for part in (order or "").split(",") if isinstance(order, str) else ():
        if part.strip():  # sorting on a field tells as much of it as filtering does
            _check_readable_path(records_model, part.split()[0].strip('"'))
    limit, offset = clamp_limit(limit), int(offset or 0)
    try:
        # Odoo's search_read: the page's fields come with the search, in its one query (field_names is never empty:
        # _fields gives a summary when none is asked).
        values = records_model.search_read(dom, field_names, offset=offset, limit=limit, order=order or None)
        # Counted only when the page is full, or empty past the first: else the page tells the total, as
        # Odoo's own web_search_read does (addons/web/models/models.py), one query less for most lookups.
        if len(values) == limit or (offset and not values):
            total = records_model.search_count(dom)
        else:
            total = offset + len(values)
        rows = data_rows(records_model, values)
    except ValueError as exc:  # bad order clause, bad operator...
        raise ToolError(f"invalid search on {model}: {exc}") from None
    note_free_text_fields(records_model, rows)
    return {"model": model, "total": total, "count": len(rows), "offset": offset, "records": rows}


@agent_tool(
    label="Create a record",
    category="generic",
    risk_level="medium",
    tool_type="orm_crud",
    sequence=2,
    description=("Create one record of an Odoo model with the given field values. Prefer a domain tool (e.g. "
                 "create_quotation) when one fits. Many2one values are ids; one2many/many2many values use Odoo "
                 "commands, e.g. [[0, 0, {...}]]. Returns the new record's id and display_name."),
    parameters={
        "model": model_param(),
        "values": {"type": "object", "description": "Field values of the new record, by field name."},
    },
)
def odoo_create(env, model, values):
    """Create one ``model`` record; returns ``{model, id, display_name}``."""
    _check_writable(model)
    records_model = get_model(env, model)
    record = records_model.create(_values(records_model, values))
    return {"model": model, "id": record.id, "display_name": record.display_name, "created": True}


@agent_tool(
    label="Update records",
    category="generic",
    risk_level="medium",
    idempotent=True,
    tool_type="orm_crud",
    sequence=3,
    description=("Update fields of existing records. Returns the ids updated and the previous values of the written "
                 "fields."),
    parameters={
        "model": model_param(),
        "record_ids": record_ids_param("Ids of the records to update."),
        "values": {"type": "object", "description": "Field values to write, by field name."},
    },
)
def odoo_write(env, model, record_ids, values):
    """Update records; returns ``{model, ids, updated, before}`` where
    ``before`` holds the written fields' previous values."""
    _check_writable(model)
    records_model = get_model(env, model)
    records = _records(records_model, record_ids)
    values = _values(records_model, values, records=records)
    before = read_rows(records, list(values))
    records.write(values)
    return {"model": model, "ids": records.ids, "updated": len(records), "before": before}


@agent_tool(
    label="Delete records",
    category="generic",
    risk_level="high",
    tool_type="orm_crud",
    sequence=4,
    description=("Delete records permanently. Only when the user explicitly asks to delete; prefer cancelling or "
                 "archiving documents. Returns the ids deleted and a snapshot of what they held."),
    parameters={
        "model": model_param(),
        "record_ids": record_ids_param("Ids of the records to delete."),
    },
)
def odoo_unlink(env, model, record_ids):
    """Delete records; returns ``{model, ids, deleted, before}``."""
    _check_writable(model)
    records_model = get_model(env, model)
    records = _records(records_model, record_ids)
    before = _snapshot(records)
    records.unlink()
    return {"model": model, "ids": list(record_ids), "deleted": len(before), "before": before}


@agent_tool(
    label="Run a business action",
    category="generic",
    risk_level="variable",
    tool_type="orm_crud",
    sequence=5,
    description=("Run a workflow button on records, exactly as a user clicking it in Odoo. Allowed: sale.order "
                 "action_confirm/action_cancel/action_draft/action_unlock; purchase.order "
                 "button_confirm/button_approve/button_cancel/button_draft; account.move "
                 "action_post/button_draft/button_cancel; stock.picking "
                 "action_confirm/action_assign/button_validate; mrp.production "
                 "action_confirm/button_mark_done/action_cancel; hr.leave "
                 "action_approve/action_refuse/action_draft; crm.lead action_set_won/action_set_lost. Returns the "
                 "new states; when Odoo opens a dialog instead of finishing (e.g. a backorder), says so."),
    parameters={
        "model": model_param(", e.g. sale.order"),
        "record_ids": record_ids_param("Ids of the records."),
        "method": {"type": "string", "description": "Method name from the allowed list for that model."},
    },
)
def odoo_method_call(env, model, record_ids, method):
    """Call a whitelisted business method (``ALLOWED_METHODS``) on records;
    returns ``{model, ids, method, result, states}`` (``result``: what the
    method returned, in the addon's JSON form: a recordset as ``{model,
    ids}``). A method that answers with a wizard (e.g. a backorder on
    ``button_validate``) is reported as ``needs_user_action``, with the
    dialog's name and model, instead of being forced."""
    refusal = method_refusal(env, model, method)
    if refusal:
        raise ToolError(refusal)
    records = _records(get_model(env, model), record_ids)
    called, note = METHOD_SUBSTITUTES.get((model, method), (method, ""))
    result = getattr(records, called)()
    out = {"model": model, "ids": records.ids, "method": called}
    if note:
        out["note"] = note
    dialog = user_action_needed(result)
    out.update(dialog or {"result": to_json_value(result)})
    if "state" in records._fields:
        out["states"] = {r.id: r.state for r in records}
    return out


def method_refusal(env, model: str, method: str) -> str:
    """Why the agent may not call ``method`` on ``model``, or ``""``.

    Never more permissive than Odoo 19's rule for methods called over RPC
    (``odoo.service.model.get_public_method``: no ``_`` prefix, no
    ``@api.private``, a method that exists), checked first; then only the
    business methods of ``ALLOWED_METHODS`` (spec 000 §5.1) pass. Judged
    before any record is read (case BR-29)."""
    allowed = ALLOWED_METHODS.get(model, ())
    called = METHOD_SUBSTITUTES.get((model, method), (method, ""))[0]
    if model in env:
        try:
            get_public_method(env[model], called)
        except (AccessError, AttributeError) as error:
            return (f"{model}.{method} cannot be called by the agent: Odoo does not let it be called from outside "
                    f"({error}). Allowed on {model}: {', '.join(allowed) or 'no method'}.")
    if not allowed:
        return (f"{model}.{method} cannot be called by the agent: no business method may be called on {model}. "
                "Models with methods: " + "; ".join(f"{m}: {', '.join(ms)}" for m, ms in ALLOWED_METHODS.items()) + ".")
    if method not in allowed:
        return (f"{model}.{method} cannot be called by the agent: it is not a business method the agent may run; "
                f"allowed: {', '.join(allowed)}.")
    return ""


@agent_tool(
    label="Describe a model",
    category="generic",
    risk_level="low",
    tool_type="orm_crud",
    sequence=6,
    description=("List the fields of an Odoo model with their type, label, required/readonly flags, selection "
                 "values and related model, so you can build a correct search or write."),
    parameters={"model": model_param()},
)
def odoo_get_model_info(env, model):
    """Fields of ``model``: ``{model, name, fields: {name: {type, string,
    required, readonly, selection?, relation?, help?}}}``."""
    records_model = get_model(env, model)
    info = records_model.fields_get(
        attributes=["type", "string", "required", "readonly", "selection", "relation", "help"])
    for name, spec in info.items():
        if spec.get("help"):
            spec["help"] = spec["help"][:160]
        for key in [k for k, v in spec.items() if v in (None, False, "") and k not in ("required", "readonly")]:
            del spec[key]
        if name in _NEVER_WRITE:
            spec["readonly"] = True
    return {"model": model, "name": records_model._description, "fields": info}


@agent_tool(
    label="List models",
    category="generic",
    risk_level="low",
    tool_type="orm_crud",
    sequence=7,
    description=("List the Odoo models the user can read (technical and display name), optionally filtered by a "
                 "word, to find where data lives."),
    parameters={
        "search": {"type": "string",
                   "description": "Word to look for in the technical or display name, e.g. invoice."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 200,
                  "description": "Maximum models to return (default 50)."},
    },
)
def odoo_get_available_models(env, search=None, limit=50):
    """Models the user can read: ``{total, models: [{model, name}]}``,
    filtered by ``search`` on the technical or display name."""
    domain = [("transient", "=", False)]
    if "abstract" in env["ir.model"]._fields:
        domain.append(("abstract", "=", False))
    if search:
        domain += ["|", ("model", "ilike", search), ("name", "ilike", search)]
    ir_models = env["ir.model"].sudo().search(domain, order="model")
    readable = []
    for ir_model in ir_models:
        if ir_model.model.startswith("agentic.ai."):
            continue  # never reachable by agents (engine.safety)
        if ir_model.model in env and not env[ir_model.model]._abstract:
            try:
                if env[ir_model.model].has_access("read"):
                    readable.append({"model": ir_model.model, "name": ir_model.name})
            except AccessError:
                continue
    limit = clamp_limit(limit, 50)
    return {"total": len(readable), "count": min(limit, len(readable)), "models": readable[:limit]}
