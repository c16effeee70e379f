"""Purchase tools (spec 000 §5.2, Purchase). Odoo app: ``purchase``."""
from __future__ import annotations

from odoo import Command, fields

from .base_tool import ToolError, agent_tool, record_ref
from .lookup import find_record
from .parsing import finite_number, parse_date, product_lines, product_lines_schema
from .summaries import money, purchase_order_summary


@agent_tool(
    label="Create a purchase order",
    category="purchase",
    risk_level="medium",
    apps=("purchase",),
    models=("purchase.order", "purchase.order.line", "res.partner", "product.product"),
    sequence=20,
    description=("Create a draft request for quotation to a vendor with product lines. Vendor and products by id or "
                 "name (an ambiguous name returns the candidates). Prices come from the vendor's price list unless "
                 "price_unit is given (in the order currency). Returns the RFQ number, state, amounts with currency "
                 "and lines."),
    parameters={
        "vendor": record_ref("Vendor id or name.", "res.partner"),
        "lines": product_lines_schema(
            "Order lines.", "Quantity, in uom when given, else in the product's unit (or the vendor's).",
            price_unit={"type": "number", "minimum": 0, "description": "Unit price; omit for the vendor's price."}),
        "date_planned": {"type": "string", "description": "Expected arrival, YYYY-MM-DD."},
    },
)
def create_purchase_order(env, vendor, lines, date_planned=None):
    """Create a draft request for quotation (``purchase.order``) for a
    vendor (id or name) with ``lines`` = ``[{product, quantity, uom?,
    price_unit?}]``; prices come from the vendor's pricelist
    (``product.supplierinfo``) unless given. Returns the order summary.
    Raises ToolError for a line left without a price (no vendor price, no
    cost, none given): an order at 0 is never created silently."""
    partner = find_record(env, "res.partner", vendor, label="vendor")
    commands = []
    parsed = product_lines(env, lines, [("purchase_ok", "=", True)], vendor_units=True,
                           outside="cannot be purchased (its Purchase option is off)")
    for index, line, product, quantity, uom in parsed:
        values = {"product_id": product.id, "product_qty": quantity}
        if line.get("uom"):  # else Odoo takes the vendor's unit
            values["product_uom_id"] = uom.id
        if line.get("price_unit") is not None:
            values["price_unit"] = finite_number(line["price_unit"], f"line {index}: price_unit")
        commands.append(Command.create(values))
    order_values = {"partner_id": partner.id, "order_line": commands}
    if date_planned:
        order_values["date_planned"] = fields.Datetime.to_datetime(parse_date(date_planned, "date_planned"))
    order = env["purchase.order"].create(order_values)
    unpriced = [line for line, (_index, given, *_rest) in zip(order.order_line, parsed, strict=True)
                if given.get("price_unit") is None and not line.price_unit]
    if unpriced:  # raised inside the call's savepoint: the order is not kept
        names = ", ".join(line.product_id.display_name for line in unpriced)
        raise ToolError(f"{partner.display_name} has no price for {names} (no vendor price list entry and no "
                        "cost): give price_unit, or add the vendor's price (product.supplierinfo) first")
    return {**purchase_order_summary(order), "created": True}


@agent_tool(
    label="Approve a purchase order",
    category="purchase",
    risk_level="high",
    apps=("purchase",),
    models=("purchase.order",),
    sequence=21,
    description=("Confirm a request for quotation (id or number such as P00012) into a purchase order, exactly like "
                 "Odoo's Confirm Order button; when the company requires a manager's second approval, the order "
                 "waits for it, and an order already waiting is approved if the user may. Returns the state and the "
                 "receipts created."),
    parameters={"order": record_ref("Purchase order id or number, e.g. P00012.", "purchase.order")},
)
def approve_purchase_order(env, order):
    """Confirm a request for quotation with Odoo's ``button_confirm``: it
    becomes a purchase order, or waits for a manager's approval when the
    company requires a second approval above an amount; an order already
    waiting is approved with ``button_approve`` (Odoo checks the user may).
    Returns the order summary, the state and the receipts created."""
    purchase = find_record(env, "purchase.order", order, label="purchase order")
    if purchase.state in ("draft", "sent"):
        purchase.button_confirm()
    elif purchase.state == "to approve":
        purchase.button_approve()
    else:
        raise ToolError(f"{purchase.name} cannot be approved in state {purchase.state}")
    out = purchase_order_summary(purchase)
    if purchase.state == "to approve":
        out["message"] = "The order waits for a purchase manager's approval (company's double validation)."
    if "picking_ids" in purchase._fields:
        out["receipts"] = [{"id": p.id, "name": p.name, "state": p.state} for p in purchase.picking_ids]
    return out


@agent_tool(
    label="Supplier pricing",
    category="purchase",
    risk_level="low",
    apps=("purchase",),
    models=("product.supplierinfo", "product.product", "res.partner"),
    sequence=22,
    description=("Vendor prices of a product (id or name), optionally for one vendor: price with currency, minimum "
                 "quantity, lead time in days and validity dates, cheapest first, plus the product's cost in the "
                 "company currency."),
    parameters={"product": record_ref("Product id or name.", "product.product"),
                "vendor": record_ref("Only this vendor (id or name).", "res.partner")},
)
def get_supplier_pricing(env, product, vendor=None):
    """Vendor prices of a product (id or name), optionally of one vendor:
    ``[{vendor, price, currency, min_qty, delay_days, valid_from, valid_to}]``
    from ``product.supplierinfo``, cheapest first, plus the product's cost."""
    record = find_record(env, "product.product", product, label="product")
    domain = ["|", ("product_id", "=", record.id), "&", ("product_id", "=", False),
              ("product_tmpl_id", "=", record.product_tmpl_id.id)]
    if vendor:
        domain.append(("partner_id", "=", find_record(env, "res.partner", vendor, label="vendor").id))
    infos = env["product.supplierinfo"].search(domain).sorted(lambda i: (i.price, i.min_qty))
    return {
        "product": {"id": record.id, "name": record.display_name},
        "cost": money(record.standard_price, env.company.currency_id),
        "vendors": [{"vendor": i.partner_id.display_name, "vendor_id": i.partner_id.id, "price": i.price,
                     "currency": i.currency_id.name, "min_qty": i.min_qty, "delay_days": i.delay,
                     "valid_from": fields.Date.to_string(i.date_start) if i.date_start else None,
                     "valid_to": fields.Date.to_string(i.date_end) if i.date_end else None} for i in infos],
    }
