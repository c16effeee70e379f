"""Sales tools (spec 000 §5.2, Sales). Odoo app: ``sale`` (``sale_management``)."""
from __future__ import annotations

from odoo import Command, fields

from .base_tool import ToolError, agent_tool, clamp_limit, find_record, money


def _order_summary(order) -> dict:
    currency = order.currency_id
    return {
        "id": order.id,
        "name": order.name,
        "state": order.state,
        "customer": {"id": order.partner_id.id, "name": order.partner_id.display_name},
        "date_order": fields.Datetime.to_string(order.date_order),
        "amount_untaxed": money(order.amount_untaxed, currency),
        "amount_total": money(order.amount_total, currency),
    }


def _parse_quantity(value, index: int) -> float:
    try:
        quantity = float(value)
    except (TypeError, ValueError):
        raise ToolError(f"line {index + 1}: quantity must be a number, got {value!r}") from None
    if quantity <= 0:
        raise ToolError(f"line {index + 1}: quantity must be greater than 0, got {value!r}")
    return quantity


@agent_tool
def create_quotation(env, partner, lines, note=None, validity_date=None):
    """Create a draft ``sale.order`` for ``partner`` (id or name) with
    ``lines`` = ``[{product, quantity, price_unit?, discount?}]``; Odoo's
    pricelist sets prices unless ``price_unit`` is given. Returns the order
    summary with its lines."""
    if not isinstance(lines, list) or not lines:
        raise ToolError("lines must be a non-empty list of {product, quantity}")
    customer = find_record(env, "res.partner", partner, label="customer")
    line_commands = []
    for index, line in enumerate(lines):
        if not isinstance(line, dict):
            raise ToolError(f"line {index + 1} must be an object with product and quantity")
        product = find_record(env, "product.product", line.get("product"), label="product",
                              domain=[("sale_ok", "=", True)])
        values = {"product_id": product.id, "product_uom_qty": _parse_quantity(line.get("quantity"), index)}
        if line.get("price_unit") is not None:
            values["price_unit"] = float(line["price_unit"])
        if line.get("discount") is not None:
            discount = float(line["discount"])
            if not 0 <= discount <= 100:
                raise ToolError(f"line {index + 1}: discount is a percentage between 0 and 100")
            values["discount"] = discount
        line_commands.append(Command.create(values))
    order_values = {"partner_id": customer.id, "order_line": line_commands}
    if note:
        order_values["note"] = note
    if validity_date:
        try:
            order_values["validity_date"] = fields.Date.to_date(validity_date)
        except ValueError:
            raise ToolError(f"validity_date must be a date as YYYY-MM-DD, got {validity_date!r}") from None
    order = env["sale.order"].create(order_values)
    result = _order_summary(order)
    result["lines"] = [{
        "product": line.product_id.display_name,
        "quantity": line.product_uom_qty,
        "uom": line.product_uom_id.name,
        "price_unit": line.price_unit,
        "discount": line.discount,
        "subtotal": money(line.price_subtotal, order.currency_id),
    } for line in order.order_line]
    result["created"] = True
    return result


@agent_tool
def get_customer_history(env, partner, limit=5):
    """Sales history of a customer (id or name), counting its contacts'
    orders too: number of quotations and confirmed orders, confirmed revenue
    in the company currency, and the ``limit`` most recent orders."""
    customer = find_record(env, "res.partner", partner, label="customer")
    commercial = customer.commercial_partner_id
    domain = [("partner_id", "child_of", commercial.id)]
    orders = env["sale.order"].search(domain, order="date_order desc, id desc")
    confirmed = orders.filtered(lambda o: o.state == "sale")
    company_currency = env.company.currency_id
    revenue = sum(o.currency_id._convert(o.amount_untaxed, company_currency, o.company_id, o.date_order or fields.Date.today())
                  for o in confirmed)
    return {
        "customer": {"id": commercial.id, "name": commercial.display_name},
        "quotation_count": len(orders.filtered(lambda o: o.state in ("draft", "sent"))),
        "order_count": len(confirmed),
        "cancelled_count": len(orders.filtered(lambda o: o.state == "cancel")),
        "revenue_untaxed": money(revenue, company_currency),
        "recent_orders": [_order_summary(o) for o in orders[:clamp_limit(limit, 5)]],
    }
