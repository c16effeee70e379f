"""Secrets and personal identifiers in what tools read (issue 23, point 4).

- **Secrets never reach the model**, for anyone: a field restricted to
  system administrators (``groups`` holding ``base.group_system``: SMTP and
  API credentials, OAuth secrets) or one Odoo keeps as a credential (a
  password, a token, a key: ``SECRET_NAME_RE`` on its name) is withheld from
  the generic read tool's results and cannot be filtered on (a filter is an
  oracle: ``smtp_pass =like 'a%'``).
- **Personal identifiers a company marks as sensitive** reach the provider
  masked (``MASK``), unless the agent is explicitly allowed them (its
  *Sensitive Data* option, passed to tools as the context key
  ``CONTEXT_KEY``). The list is the system parameter ``PARAM``: comma- or
  line-separated ``model.field`` entries (``*.field`` for every model), by
  default ``DEFAULT_SENSITIVE``: SSN and other national identifiers, private
  e-mail, phone and address, bank account numbers. A many2one to a record
  whose name is such a field (a bank account) is masked too.
- **A write can never carry a masked value**: a call with ``MASK`` in any
  value is refused before it runs (engine/executor.py), so the model cannot
  copy what it only saw masked.
"""
from __future__ import annotations

import re

MASK = "[masked: sensitive]"
WITHHELD = "[withheld: credential]"
PARAM = "agentic_ai.sensitive_fields"
CONTEXT_KEY = "agentic_ai_sensitive_allowed"
DEFAULT_SENSITIVE = (
    "hr.employee.ssnid", "hr.employee.identification_id", "hr.employee.passport_id", "hr.employee.permit_no",
    "hr.employee.visa_no", "hr.employee.private_email", "hr.employee.private_phone", "hr.employee.private_street",
    "hr.employee.private_street2", "hr.employee.private_zip", "hr.employee.private_city",
    "hr.employee.birthday", "hr.employee.place_of_birth",
    "hr.version.ssnid", "hr.version.identification_id", "hr.version.passport_id", "hr.version.permit_no",
    "hr.version.visa_no", "hr.version.private_email", "hr.version.private_phone", "hr.version.private_street",
    "res.partner.bank.acc_number", "res.partner.bank.sanitized_acc_number", "res.partner.bank.iban",
    "*.vat_private", "*.ssnid",
)
SECRET_NAME_RE = re.compile(r"(^|_)(password|passwd|secret|token|api_?key|apikey|private_key|access_key|"
                            r"smtp_pass|totp|otp_secret|signing_key|client_secret)(_|$)", re.IGNORECASE)
SECRET_TYPES = frozenset({"char", "text", "binary", "json"})


def is_secret(field) -> bool:
    """Whether an Odoo ``field`` holds a credential (see the module docstring)."""
    groups = field.groups or ""
    if "base.group_system" in groups.split(","):
        return True
    return field.type in SECRET_TYPES and bool(SECRET_NAME_RE.search(field.name))


def sensitive_names(env) -> frozenset[str]:
    """The ``model.field`` entries marked sensitive in ``env``'s database
    (``PARAM``, else ``DEFAULT_SENSITIVE``)."""
    raw = env["ir.config_parameter"].sudo().get_param(PARAM, None)
    entries = DEFAULT_SENSITIVE if raw is None else re.split(r"[\s,]+", raw)
    return frozenset(entry.strip() for entry in entries if entry and entry.strip())


def is_sensitive(model_name: str, field_name: str, names: frozenset[str]) -> bool:
    return f"{model_name}.{field_name}" in names or f"*.{field_name}" in names


def masks(env) -> bool:
    """Whether sensitive values are masked for the tools run in ``env``."""
    return not env.context.get(CONTEXT_KEY)


def mask_rows(model, rows: list[dict]) -> list[dict]:
    """``rows`` (JSON rows of ``model``, tools/values/json_values.py) with every
    credential replaced by ``WITHHELD`` whoever reads, and every sensitive
    value by ``MASK`` (the value's presence stays visible: ``None`` stays
    ``None``), with many2one names of records whose name is sensitive,
    unless the environment may see them."""
    if not rows:
        return rows
    fields = model._fields
    for name in [name for name in rows[0] if name in fields and is_secret(fields[name])]:
        for row in rows:
            if row.get(name) not in (None, False, ""):
                row[name] = WITHHELD
    if not masks(model.env):
        return rows
    names = sensitive_names(model.env)
    hidden = set()
    for name in rows[0]:
        field = fields.get(name)
        if field is None:
            continue
        if is_sensitive(model._name, name, names):
            hidden.add(name)
        elif field.type == "many2one" and field.comodel_name in model.env:
            comodel = model.env[field.comodel_name]
            if is_sensitive(comodel._name, comodel._rec_name or "name", names):
                hidden.add(name)
    if not hidden:
        return rows
    for row in rows:
        for name in hidden:
            value = row.get(name)
            if value in (None, False, ""):
                continue
            if isinstance(value, list) and len(value) == 2:  # a many2one [id, name]: the id stays
                row[name] = [value[0], MASK]
            else:
                row[name] = MASK
    return rows


def carries_mask(value, depth: int = 0) -> bool:
    """Whether ``value`` (a tool call's JSON arguments) holds ``MASK``."""
    if depth > 60:
        return False
    if isinstance(value, str):
        return MASK in value
    if isinstance(value, dict):
        return any(carries_mask(item, depth + 1) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(carries_mask(item, depth + 1) for item in value)
    return False
