"""The tool framework (spec 000 §5): a registry of plain functions
``(env, **params) -> dict`` and the helpers every tool shares.

A function becomes callable by the agent only through ``@agent_tool``: an
``agentic.ai.tool`` record's ``handler`` (a dotted path such as
``agentic_ai.tools.sales_tools.create_quotation``) is looked up in this
registry, so editing a record can never point the agent at arbitrary Python.
Other addons register their own tools the same way.
"""
from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable
from datetime import date
from typing import NamedTuple


TOOL_REGISTRY: dict[str, Callable] = {}
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # the function-name rule of OpenAI, Gemini and Anthropic

DEFAULT_LIMIT = 20   # records returned by a search when the model gives no limit
MAX_LIMIT = 200      # records one call may ever return


class ToolError(Exception):
    """A problem the model can correct (bad name, ambiguous record, refused
    method...). The executor turns it into an error observation; nothing the
    tool wrote survives (savepoint)."""


def agent_tool(func: Callable) -> Callable:
    """Register ``func`` under its dotted path without the ``odoo.addons.`` prefix."""
    module = func.__module__.removeprefix("odoo.addons.")
    TOOL_REGISTRY[f"{module}.{func.__name__}"] = func
    return func


def resolve_handler(path: str) -> Callable:
    """The registered function for ``path``. Raises ToolError when the path is
    not a registered tool (importing its module first, so other addons'
    tools register themselves)."""
    if path not in TOOL_REGISTRY and "." in path:
        module = path.rsplit(".", 1)[0]
        try:
            importlib.import_module(f"odoo.addons.{module}")
        except ImportError:
            pass
    try:
        return TOOL_REGISTRY[path]
    except KeyError:
        raise ToolError(f"no registered tool function at {path!r}") from None


def clamp_limit(limit, default: int = DEFAULT_LIMIT) -> int:
    """A search limit between 1 and MAX_LIMIT; ``default`` when not given."""
    try:
        limit = int(limit) if limit not in (None, "", 0) else default
    except (TypeError, ValueError):
        raise ToolError(f"limit must be a whole number, got {limit!r}") from None
    return max(1, min(limit, MAX_LIMIT))


def get_model(env, model_name: str):
    """``env[model_name]`` after checking that it exists and the user may read it.
    Raises ToolError."""
    if not isinstance(model_name, str) or model_name not in env:
        raise ToolError(f"unknown model {model_name!r}; use odoo_get_available_models to list models")
    model = env[model_name]
    if model._abstract or model._transient:
        raise ToolError(f"{model_name} is not a stored business model")
    if not model.has_access("read"):
        raise ToolError(f"you have no read access to {model_name}")
    return model


def find_record(env, model_name: str, value, *, label: str | None = None, domain=None):
    """One record of ``model_name`` named by an id or a name.

    An id must exist and be readable; a name is matched exactly first, then by
    ``ilike``. Several matches raise ToolError listing the candidates (never a
    guess); none raises ToolError listing the closest names."""
    model = env[model_name]
    label = label or model._description
    domain = list(domain or [])
    if isinstance(value, bool) or value in (None, ""):
        raise ToolError(f"a {label} is required (an id or a name)")
    if isinstance(value, int):
        record = model.search(domain + [("id", "=", value)], limit=1)
        if not record:
            raise ToolError(f"no {label} with id {value} (or you cannot access it)")
        return record
    if not isinstance(value, str):
        raise ToolError(f"a {label} must be given as an id or a name, got {value!r}")
    name = value.strip()
    pattern = escape_like(name)  # a name is text, never a LIKE pattern: % and _ match themselves

    def any_field(operator, value):
        # Odoo's own name search for the model (``_search_display_name``):
        # e.g. a product's internal reference and barcode, an account's
        # code, a location's full name, an invoice's number or reference.
        return [("display_name", operator, value)]

    if name.isascii() and name.isdigit():  # an id written as text, or a name/reference made of digits
        by_id = model.search(domain + [("id", "=", int(name))], limit=1) if len(name) < 10 else model
        by_name = model.search(domain + any_field("=ilike", pattern), limit=5)
        candidates = by_id | by_name
        if len(candidates) == 1:
            return candidates
        if not candidates:
            raise ToolError(f"no {label} with id or reference {name} (or you cannot access it)")
        listed = "; ".join(f"{r.display_name} (id {r.id})" for r in candidates)
        raise ToolError(f"{name!r} matches several {label} records by id, name or reference: {listed}. "
                        f"Ask the user which one, or call again with the id as a number.")
    exact = model.search(domain + any_field("=ilike", pattern), limit=6)
    if len(exact) == 1:
        return exact
    matches = exact or model.search(domain + any_field("ilike", pattern), limit=6)
    if len(matches) == 1:
        return matches
    if matches:
        listed = "; ".join(f"{r.display_name} (id {r.id})" for r in matches[:5])
        raise ToolError(f"{len(matches)}{'+' if len(matches) > 5 else ''} {label} records match {name!r}: {listed}. "
                        f"Ask the user which one, or call again with the id.")
    words = [w for w in name.split() if len(w) > 2]
    terms = [("display_name", "ilike", escape_like(w)) for w in words]
    close = model.search(domain + ["|"] * (len(terms) - 1) + terms, limit=5) if terms else model
    hint = f" Closest: {'; '.join(f'{r.display_name} (id {r.id})' for r in close)}." if close else ""
    raise ToolError(f"no {label} matches {name!r}.{hint}")


def escape_like(text: str) -> str:
    """``text`` for an ``ilike`` domain value matching it literally: Odoo
    wraps the value in % and reads % _ \\ as patterns."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def positive_number(value, what: str = "quantity") -> float:
    """``value`` as a finite number greater than 0. Raises ToolError naming ``what``."""
    number = finite_number(value, what)
    if not number > 0:
        raise ToolError(f"{what} must be greater than 0, got {value!r}")
    return number


class ProductLine(NamedTuple):
    """One parsed line of a tool's ``lines`` argument."""
    line: dict       # the line as the model sent it
    product: object  # product.product
    quantity: float  # > 0, in ``uom``
    uom: object      # uom.uom: the line's unit, by default the product's


def line_objects(lines, shape: str):
    """``(index, line)`` for each line of a tool's ``lines`` argument, index
    from 1. Raises ToolError unless ``lines`` is a non-empty list of objects
    (``shape`` names their keys in the message)."""
    if not isinstance(lines, list) or not lines:
        raise ToolError(f"lines must be a non-empty list of {shape}")
    for index, line in enumerate(lines, start=1):
        if not isinstance(line, dict):
            raise ToolError(f"line {index} must be an object {shape}")
        yield index, line


def product_lines(env, lines, domain=None, vendor_units=False) -> list[ProductLine]:
    """Parsed ``lines`` of a tool (``[{product, quantity, uom?, ...}]``,
    products by id or name within ``domain``). A line's unit (id or name) is
    one Odoo 19 allows on the line: the product's unit or packagings, plus
    its vendors' units when ``vendor_units`` (purchase lines, stock moves).
    A quantity must be above 0 at the unit's rounding. Raises ToolError
    naming the faulty line."""
    parsed = []
    for index, line in line_objects(lines, "{product, quantity}"):
        product = find_record(env, "product.product", line.get("product"), label="product", domain=domain)
        quantity = positive_number(line.get("quantity"), f"line {index}: quantity")
        uom = product.uom_id
        if line.get("uom") not in (None, ""):
            allowed = product.uom_id | product.uom_ids
            if vendor_units:
                allowed |= product.sudo().seller_ids.product_uom_id
            try:
                uom = find_record(env, "uom.uom", line["uom"], label="unit of measure", domain=[("id", "in", allowed.ids)])
            except ToolError:
                units = ", ".join(f"{u.name} (id {u.id})" for u in allowed)
                raise ToolError(f"line {index}: {line['uom']!r} is not a unit of {product.display_name}; "
                                f"its units are: {units}") from None
        if uom.is_zero(quantity):
            raise ToolError(f"line {index}: quantity {quantity:g} is 0 in {uom.name} (rounding {uom.rounding:g})")
        parsed.append(ProductLine(line, product, quantity, uom))
    return parsed


DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MIN_DATE, MAX_DATE = date(1900, 1, 1), date(2199, 12, 31)


def parse_date(value, what: str) -> date:
    """``value`` written YYYY-MM-DD as a date between MIN_DATE and MAX_DATE.
    Raises ToolError naming ``what``."""
    try:
        day = date.fromisoformat(value) if isinstance(value, str) and DATE_RE.match(value.strip()) else None
    except ValueError:
        day = None
    if not day:
        raise ToolError(f"{what} must be a date written YYYY-MM-DD, got {value!r}")
    if not MIN_DATE <= day <= MAX_DATE:
        raise ToolError(f"{what} {value} is outside the dates this tool accepts ({MIN_DATE} to {MAX_DATE})")
    return day


def finite_number(value, what: str) -> float:
    """``value`` as a finite number. Raises ToolError naming ``what``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ToolError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ToolError(f"{what} must be a finite number, got {value!r}")
    return number


def user_action_needed(result) -> dict:
    """When an Odoo button answered with a dialog (a wizard action) instead
    of finishing, ``{"needs_user_action": True, "action": ..., "message": ...}``
    for the observation; else ``{}``. The agent never forces the choice."""
    if not (isinstance(result, dict) and str(result.get("type", "")).startswith("ir.actions")):
        return {}
    name = result.get("name") or result.get("res_model")
    return {"needs_user_action": True, "action": {"name": result.get("name"), "res_model": result.get("res_model")},
            "message": f"Odoo answered with the dialog {name!r} (for instance a backorder or a missing-stock "
                       "warning): the user must finish this step in Odoo."}


def order_summary(order, partner_label: str) -> dict:
    """``{id, name, state, <partner_label>: {id, name}, amount_untaxed,
    amount_total}`` of a sales or purchase order, amounts with currency."""
    return {
        "id": order.id,
        "name": order.name,
        "state": order.state,
        partner_label: {"id": order.partner_id.id, "name": order.partner_id.display_name},
        "amount_untaxed": money(order.amount_untaxed, order.currency_id),
        "amount_total": money(order.amount_total, order.currency_id),
    }


def money(amount: float, currency) -> dict:
    """``{"amount": 12.5, "currency": "EUR"}`` rounded by the currency."""
    return {"amount": currency.round(amount) if currency else round(amount, 2), "currency": currency.name if currency else ""}
