"""Manufacturing tools (spec 000 §5.2, Manufacturing). Odoo app: ``mrp``."""
from __future__ import annotations

from .base_tool import ToolError, agent_tool, record_ref
from .lookup import find_record
from .parsing import clamp_limit, parse_period, period_domain, period_schema, positive_number
from .values.json_values import to_json_value


def _components(production) -> list[dict]:
    """Each component move of an order with Odoo's own availability figures."""
    return [{"product": move.product_id.display_name, "required": move.product_uom_qty, "uom": move.product_uom.name,
             "reserved": move.quantity, "forecast_available": move.forecast_availability,
             "available_now": move.product_id.with_context(location=move.location_id.id).free_qty}
            for move in production.move_raw_ids]


def _production_summary(production) -> dict:
    return {"id": production.id, "name": production.name, "state": production.state,
            "product": production.product_id.display_name, "quantity": production.product_qty,
            "uom": production.product_uom_id.name, "bom": production.bom_id.display_name,
            "date_start": to_json_value(production.date_start or None),
            "components_availability": production.components_availability or "",
            "components_availability_state": production.components_availability_state or ""}


def _bill_of_materials(env, product, bom=None):
    """The manufacturing bill of materials of ``product``: ``bom`` (id or
    reference) when given, else Odoo's ``_bom_find``. Raises ToolError for a
    bill of another product or a kit (kits are not manufactured)."""
    Bom = env["mrp.bom"]
    if bom:
        bill = find_record(env, "mrp.bom", bom, label="bill of materials")
        if bill.product_tmpl_id != product.product_tmpl_id or (bill.product_id and bill.product_id != product):
            owner = bill.product_id or bill.product_tmpl_id
            raise ToolError(f"{bill.display_name} is the bill of materials of {owner.display_name}, "
                            f"not of {product.display_name}")
    else:
        bill = Bom._bom_find(product, company_id=env.company.id, bom_type="normal").get(product) \
            or Bom._bom_find(product, company_id=env.company.id, bom_type="phantom").get(product)
    if not bill:
        raise ToolError(f"{product.display_name} has no bill of materials to manufacture it with")
    if bill.type != "normal":
        raise ToolError(f"{product.display_name}'s bill of materials {bill.display_name} is a kit: kits are not "
                        "manufactured, their components are delivered instead")
    return bill


@agent_tool(
    label="Create a manufacturing order",
    category="manufacturing",
    risk_level="medium",
    apps=("mrp",),
    models=("mrp.production", "mrp.bom", "product.product"),
    sequence=50,
    description=("Create a manufacturing order for a product (id or name) and quantity with its bill of materials "
                 "(found by Odoo, or given), confirmed like the Confirm button unless confirm=false. Returns the "
                 "order reference, state and each component with required, reserved and available quantities."),
    parameters={
        "product": record_ref("Product to manufacture, id or name.", "product.product"),
        "quantity": {"type": "number", "exclusiveMinimum": 0,
                     "description": "Quantity to produce in the product's unit."},
        "bom": record_ref("Bill of materials id or reference; Odoo's default when omitted.", "mrp.bom"),
        "confirm": {"type": "boolean", "description": "Confirm the order (default true)."},
    },
)
def create_manufacturing_order(env, product, quantity, bom=None, confirm=True):
    """Create a manufacturing order for a product (id or name) with its bill
    of materials (Odoo's ``_bom_find``, or ``bom`` by id/reference), and
    confirm it with ``action_confirm`` unless ``confirm`` is false. Returns
    the order, its state and each component's availability."""
    record = find_record(env, "product.product", product, label="product")
    quantity = positive_number(quantity)
    bill = _bill_of_materials(env, record, bom)
    if record.uom_id.is_zero(quantity):
        raise ToolError(f"quantity {quantity:g} is 0 in {record.uom_id.name}")
    # In the product's unit, as the schema says; Odoo converts to the bill's unit.
    production = env["mrp.production"].create({"product_id": record.id, "product_qty": quantity, "bom_id": bill.id,
                                               "product_uom_id": record.uom_id.id})
    if confirm:
        production.action_confirm()
    return {**_production_summary(production), "components": _components(production), "created": True}


@agent_tool(
    label="Component availability",
    category="manufacturing",
    risk_level="low",
    apps=("mrp",),
    models=("mrp.production", "mrp.bom", "product.product"),
    sequence=51,
    description=("Whether the components are available: for a manufacturing order (id or reference) Odoo's own "
                 "component status and each component's reserved and forecast quantities; for a product (id or "
                 "name) and quantity, what its bill of materials needs against free stock, with what is missing."),
    parameters={
        "production": record_ref("Manufacturing order id or reference, e.g. WH/MO/00012.", "mrp.production"),
        "product": record_ref("Product id or name (when no order is given).", "product.product"),
        "quantity": {"type": "number", "exclusiveMinimum": 0,
                     "description": "Units of the product to check for (default 1)."},
    },
)
def check_bom_availability(env, production=None, product=None, quantity=1):
    """Component availability, as Odoo computes it: for a manufacturing
    order (id or reference such as WH/MO/00012) its own component status
    and moves; for a product (id or name) the components its bill of
    materials needs for ``quantity`` units against what is free in stock."""
    if production:
        order = find_record(env, "mrp.production", production, label="manufacturing order")
        return {**_production_summary(order), "components": _components(order)}
    if not product:
        raise ToolError("give a manufacturing order or a product")
    record = find_record(env, "product.product", product, label="product")
    bill = _bill_of_materials(env, record)
    quantity = positive_number(quantity)
    # quantity is in the product's unit; the bill's lines are per bill.product_qty of its unit.
    factor = record.uom_id._compute_quantity(quantity, bill.product_uom_id, round=False) / (bill.product_qty or 1.0)
    needed = {}
    for line in bill.bom_line_ids:  # a component on several lines needs the sum of them
        component = line.product_id
        needed[component] = needed.get(component, 0.0) + line.product_uom_id._compute_quantity(
            line.product_qty * factor, component.uom_id)
    rows = [{"product": component.display_name, "required": qty, "uom": component.uom_id.name,
             "available_now": component.free_qty, "missing": max(0.0, qty - component.free_qty)}
            for component, qty in needed.items()]
    return {"product": record.display_name, "quantity": quantity, "bom": bill.display_name,
            "all_available": all(r["missing"] == 0 for r in rows), "components": rows}


@agent_tool(
    label="Production schedule",
    category="manufacturing",
    risk_level="low",
    apps=("mrp",),
    models=("mrp.production",),
    sequence=52,
    description=("Manufacturing orders planned to start between two dates (YYYY-MM-DD, inclusive; all open orders "
                 "when no date), optionally in one state, earliest first: reference, product, quantity, state, "
                 "start date and component status."),
    parameters={
        **period_schema(),
        "state": {
            "type": "string",
            "enum": ["draft", "confirmed", "progress", "to_close", "done", "cancel"],
            "description": "Only orders in this state.",
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "Maximum orders (default 50)."},
    },
)
def get_production_schedule(env, date_from=None, date_to=None, state=None, limit=50):
    """Manufacturing orders planned to start between two dates (YYYY-MM-DD,
    inclusive; open ones when no date is given), optionally in one state
    (draft, confirmed, progress, to_close, done, cancel), earliest first."""
    domain = [("state", "=", state)] if state else [("state", "not in", ("done", "cancel"))]
    Production = env["mrp.production"]
    domain += period_domain(Production, "date_start", *parse_period(date_from, date_to))
    orders = Production.search(domain, order="date_start, id", limit=clamp_limit(limit, 50))
    return {"total": Production.search_count(domain), "orders": [_production_summary(o) for o in orders]}
