"""Inventory tools (spec 000 §5.2, Inventory). Odoo app: ``stock``."""
from __future__ import annotations

from datetime import datetime, time

from odoo import Command, fields

from .base_tool import ToolError, agent_tool, record_ref
from .lookup import find_record
from .parsing import clamp_limit, parse_date, product_lines, product_lines_schema
from .summaries import money, user_action_needed


def _location(env, value, label):
    return find_record(env, "stock.location", value, label=label, domain=[("usage", "=", "internal")],
                       outside="is not an internal location of a warehouse")


@agent_tool(
    label="Check stock levels",
    category="inventory",
    risk_level="low",
    apps=("stock",),
    models=("product.product", "stock.quant", "stock.location", "stock.warehouse"),
    sequence=30,
    description=("Stock of a product (id or name) in its unit of measure: on hand, available (not reserved), "
                 "incoming, outgoing and forecast, for the company or one warehouse or location, with the on-hand "
                 "quantity per internal location."),
    parameters={
        "product": record_ref("Product id or name.", "product.product"),
        "warehouse": record_ref("Only this warehouse (id or name).", "stock.warehouse"),
        "location": record_ref("Only this internal location and its children (id or full name, e.g. WH/Stock).",
                               "stock.location"),
    },
)
def check_stock_levels(env, product, warehouse=None, location=None):
    """Quantities of a product (id or name) in its unit of measure: on hand,
    available (on hand not reserved), incoming, outgoing and forecast, for
    the whole company or one warehouse or location (ids or names), plus the
    on-hand quantity per internal location from ``stock.quant``."""
    record = find_record(env, "product.product", product, label="product")
    context = {}
    quant_domain = [("product_id", "=", record.id), ("location_id.usage", "=", "internal")]
    if warehouse:
        wh = find_record(env, "stock.warehouse", warehouse, label="warehouse")
        context["warehouse_id"] = wh.id
        quant_domain.append(("warehouse_id", "=", wh.id))
    if location:
        loc = _location(env, location, "location")
        if warehouse and loc.warehouse_id != wh:
            raise ToolError(f"{loc.complete_name} is not a location of warehouse {wh.name}; give one or the other")
        context["location"] = loc.id
        quant_domain.append(("location_id", "child_of", loc.id))
    levels = record.with_context(**context)
    quants = env["stock.quant"].search(quant_domain)
    per_location = {}
    for quant in quants:
        name = quant.location_id.complete_name
        per_location[name] = per_location.get(name, 0.0) + quant.quantity
    return {
        "product": {"id": record.id, "name": record.display_name, "uom": record.uom_id.name},
        "on_hand": levels.qty_available,
        "available": levels.free_qty,
        "incoming": levels.incoming_qty,
        "outgoing": levels.outgoing_qty,
        "forecast": levels.virtual_available,
        "by_location": [{"location": name, "quantity": qty} for name, qty in sorted(per_location.items())],
    }


@agent_tool(
    label="Create an internal transfer",
    category="inventory",
    risk_level="high",
    apps=("stock",),
    models=("stock.picking", "stock.move", "stock.location", "product.product"),
    sequence=31,
    description=("Move products between two internal locations (ids or full names such as WH/Stock/Shelf 1): "
                 "creates, confirms and reserves an internal transfer; with validate=true also validates it like "
                 "the Validate button. When Odoo asks a question instead (a backorder for missing stock), the "
                 "transfer stays open and the answer says what the user must do. Returns the transfer number, state "
                 "and moves with reserved quantities."),
    parameters={
        "lines": product_lines_schema("Products to move."),
        "source_location": record_ref("Internal location to take from.", "stock.location"),
        "destination_location": record_ref("Internal location to move to.", "stock.location"),
        "validate": {"type": "boolean", "description": "Also validate the transfer (default false)."},
    },
)
def create_internal_transfer(env, lines, source_location, destination_location, validate=False):
    """Move products between internal locations: a confirmed internal
    transfer (``stock.picking``) from ``source_location`` to
    ``destination_location`` (ids or full names such as WH/Stock/Shelf 1)
    with ``lines`` = ``[{product, quantity}]``, reserved with Odoo's
    ``action_assign``. With ``validate`` it is also validated by
    ``button_validate``; when Odoo asks a question instead (e.g. a backorder
    for missing stock) the transfer stays open and the answer says so."""
    source = _location(env, source_location, "source location")
    destination = _location(env, destination_location, "destination location")
    if source == destination:
        raise ToolError("the source and destination locations are the same")
    warehouse = source.warehouse_id or env["stock.warehouse"].search([("company_id", "=", env.company.id)], limit=1)
    picking_type = warehouse.with_context(active_test=False).int_type_id
    if not picking_type:
        raise ToolError(f"warehouse {warehouse.name} has no internal transfer type (enable Storage Locations in "
                        "Inventory settings)")
    moves = [Command.create({"product_id": product.id, "product_uom_qty": quantity, "product_uom": uom.id,
                             "location_id": source.id, "location_dest_id": destination.id})
             for _index, _line, product, quantity, uom
             in product_lines(env, lines, [("type", "=", "consu")], vendor_units=True,
                              outside="is not a good (a service or a combo): only goods move between locations")]
    picking = env["stock.picking"].create({"picking_type_id": picking_type.id, "location_id": source.id,
                                           "location_dest_id": destination.id, "move_ids": moves})
    picking.action_confirm()
    picking.action_assign()
    out = {"id": picking.id, "name": picking.name, "created": True, "source": source.complete_name,
           "destination": destination.complete_name}
    if validate:
        out.update(user_action_needed(picking.button_validate()))
    out["state"] = picking.state
    out["moves"] = [{"product": m.product_id.display_name, "quantity": m.product_uom_qty, "uom": m.product_uom.name,
                     "reserved": m.quantity,
                     "state": m.state} for m in picking.move_ids]
    return out


@agent_tool(
    label="Stock valuation",
    category="inventory",
    risk_level="low",
    apps=("stock_account",),
    models=("product.product", "product.category", "stock.warehouse"),
    sequence=32,
    description=("Inventory value of storable products in stock as Odoo's valuation computes it (each product's "
                 "cost method: standard, average or FIFO), in the company currency, today or at the end of a past "
                 "date, for the company or one warehouse; optionally for one product or product category. Returns "
                 "the total value, the most valuable products with quantity, unit, average cost and value, and the "
                 "value per category."),
    parameters={
        "product": record_ref("Only this product (id or name).", "product.product"),
        "category": record_ref("Only this product category and its subcategories (id or name, e.g. All/Saleable).",
                               "product.category"),
        "warehouse": record_ref("Only the stock of this warehouse (id or name).", "stock.warehouse"),
        "date": {"type": "string", "description": "Value at the end of this day, YYYY-MM-DD (default: now)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 200,
                  "description": "Products listed, most valuable first (default 20); the total always covers all."},
    },
)
def get_stock_valuation(env, product=None, category=None, warehouse=None, date=None, limit=20):
    """Inventory value of storable products in stock, as Odoo's valuation
    computes it (``product.product.total_value`` and ``avg_cost`` per the
    product's cost method, standard, AVCO or FIFO), for the current company
    in its currency, or for one ``warehouse`` in its company's; today or at
    the end of a past ``date`` (YYYY-MM-DD). Filter by ``product`` or
    ``category`` (ids or names). Returns the total value and quantity of all
    matching products, the ``limit`` most valuable ones, and the value per
    product category."""
    company = env.company
    context = {}
    if warehouse not in (None, ""):
        wh = find_record(env, "stock.warehouse", warehouse, label="warehouse")
        company = wh.company_id
        context["warehouse_id"] = wh.id
    # Only this company's stock, valued at its costs (the user may have several companies active).
    env = env(context={**env.context, "allowed_company_ids": [company.id], **context})
    domain = [("is_storable", "=", True)]
    if product not in (None, ""):
        record = find_record(env, "product.product", product, label="product")
        if not record.is_storable:
            raise ToolError(f"{record.display_name} is not tracked in inventory (not a storable product), so it has no "
                            "stock value")
        domain.append(("id", "=", record.id))
    if category not in (None, ""):
        categ = find_record(env, "product.category", category, label="product category")
        domain.append(("categ_id", "child_of", categ.id))
    today = fields.Date.context_today(env["res.company"])
    day = parse_date(date, "date") if date else today
    if day > today:
        raise ToolError(f"date {day} is in the future; stock value is known up to today ({today})")
    if day < today:
        env = env(context={**env.context, "to_date": fields.Datetime.to_string(datetime.combine(day, time.max))})
    in_stock = env["product.product"].search(domain).filtered(lambda p: not p.uom_id.is_zero(p.qty_available))
    currency = company.currency_id
    by_category = {}
    for record in in_stock:
        name = record.categ_id.complete_name
        by_category[name] = by_category.get(name, 0.0) + record.total_value
    ranked = in_stock.sorted(lambda p: p.total_value, reverse=True)[:clamp_limit(limit)]
    return {
        "company": company.name,
        "currency": currency.name,
        "date": str(day),
        "total_value": money(sum(in_stock.mapped("total_value")), currency),
        "products_in_stock": len(in_stock),
        "products": [{"id": p.id, "name": p.display_name, "quantity": p.qty_available, "uom": p.uom_id.name,
                      "cost_method": p.cost_method, "average_cost": money(p.avg_cost, currency),
                      "value": money(p.total_value, currency)} for p in ranked],
        "by_category": [{"category": name, "value": money(value, currency)}
                        for name, value in sorted(by_category.items(), key=lambda item: -item[1])],
    }
