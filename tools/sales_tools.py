"""Sales tools (spec 000 §5.2, Sales). Odoo app: ``sale`` (``sale_management``)."""
from __future__ import annotations

from odoo import Command, fields

from .base_tool import (ToolError, agent_tool, clamp_limit, find_record, finite_number, money, order_summary, parse_date,
                        product_lines, user_action_needed)


def _order_summary(order) -> dict:
    return {**order_summary(order, "customer"), "date_order": fields.Datetime.to_string(order.date_order)}


@agent_tool
def create_quotation(env, partner, lines, note=None, validity_date=None):
    """Create a draft ``sale.order`` for ``partner`` (id or name) with
    ``lines`` = ``[{product, quantity, uom?, price_unit?, discount?}]``; Odoo's
    pricelist sets prices unless ``price_unit`` is given. Returns the order
    summary with its lines."""
    customer = find_record(env, "res.partner", partner, label="customer")
    line_commands = []
    for index, (line, product, quantity, uom) in enumerate(product_lines(env, lines, [("sale_ok", "=", True)])):
        values = {"product_id": product.id, "product_uom_qty": quantity}
        if line.get("uom"):
            values["product_uom_id"] = uom.id
        if line.get("price_unit") is not None:
            values["price_unit"] = finite_number(line["price_unit"], f"line {index + 1}: price_unit")
        if line.get("discount") is not None:
            discount = finite_number(line["discount"], f"line {index + 1}: discount")
            if not 0 <= discount <= 100:
                raise ToolError(f"line {index + 1}: discount is a percentage between 0 and 100")
            values["discount"] = discount
        line_commands.append(Command.create(values))
    order_values = {"partner_id": customer.id, "order_line": line_commands}
    if note:
        order_values["note"] = note
    if validity_date:
        order_values["validity_date"] = parse_date(validity_date, "validity_date")
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


def _find_order(env, order):
    return find_record(env, "sale.order", order, label="sales order")


@agent_tool
def confirm_sale_order(env, order):
    """Confirm a quotation (id or number such as S00012) with Odoo's own
    ``action_confirm``: it becomes a sales order and, with Inventory, its
    delivery is created. Returns the order summary and its deliveries."""
    sale_order = _find_order(env, order)
    if sale_order.state not in ("draft", "sent"):
        raise ToolError(f"{sale_order.name} is not a quotation (state: {sale_order.state}); only quotations can be confirmed")
    result = sale_order.action_confirm()
    out = {**_order_summary(sale_order), **user_action_needed(result)}
    if "picking_ids" in sale_order._fields:
        out["deliveries"] = [{"id": p.id, "name": p.name, "state": p.state} for p in sale_order.picking_ids]
    return out


@agent_tool
def apply_discount(env, order, discount, products=None):
    """Set a discount (percent, 0-100) on the lines of a quotation, all of
    them or only those of ``products`` (ids or names); Odoo recomputes the
    totals. Returns the order summary with the changed lines."""
    sale_order = _find_order(env, order)
    if sale_order.state not in ("draft", "sent"):
        raise ToolError(f"{sale_order.name} is confirmed (state: {sale_order.state}); discounts change on quotations only")
    try:
        discount = float(discount)
    except (TypeError, ValueError):
        raise ToolError(f"discount must be a percentage, got {discount!r}") from None
    if not 0 <= discount <= 100:
        raise ToolError(f"discount is a percentage between 0 and 100, got {discount}")
    lines = sale_order.order_line.filtered(lambda l: not l.display_type)
    if products:
        wanted = env["product.product"]
        for product in products:
            wanted |= find_record(env, "product.product", product, label="product")
        lines = lines.filtered(lambda l: l.product_id in wanted)
        if not lines:
            raise ToolError(f"{sale_order.name} has no line for {', '.join(wanted.mapped('display_name'))}")
    lines.write({"discount": discount})
    out = _order_summary(sale_order)
    out["changed_lines"] = [{"product": l.product_id.display_name, "discount": l.discount,
                             "subtotal": money(l.price_subtotal, sale_order.currency_id)} for l in lines]
    return out


@agent_tool
def create_lead(env, name, partner=None, email=None, phone=None, expected_revenue=None, type="opportunity",
                description=None):
    """Create a CRM lead or opportunity (``type``) with Odoo's defaults for
    team, stage and salesperson. ``expected_revenue`` is in the company
    currency. Returns id, name, type, stage and expected revenue."""
    if type not in ("lead", "opportunity"):
        raise ToolError("type must be 'lead' or 'opportunity'")
    values = {"name": name, "type": type}
    if partner:
        values["partner_id"] = find_record(env, "res.partner", partner, label="customer").id
    if email:
        values["email_from"] = email
    if phone:
        values["phone"] = phone
    if description:
        values["description"] = description
    if expected_revenue is not None:
        try:
            values["expected_revenue"] = float(expected_revenue)
        except (TypeError, ValueError):
            raise ToolError(f"expected_revenue must be a number, got {expected_revenue!r}") from None
        if values["expected_revenue"] < 0:
            raise ToolError("expected_revenue cannot be negative")
    lead = env["crm.lead"].create(values)
    return {"id": lead.id, "name": lead.name, "display_name": lead.display_name, "type": lead.type,
            "stage": lead.stage_id.name, "salesperson": lead.user_id.name,
            "expected_revenue": money(lead.expected_revenue, lead.company_currency), "created": True}


@agent_tool
def get_sales_pipeline_summary(env, team=None):
    """Open opportunities of the current company by stage (optionally of one
    sales team, id or name): count, expected revenue and probability-weighted
    revenue in the company currency, plus totals."""
    domain = [("type", "=", "opportunity"), ("active", "=", True), ("company_id", "in", [env.company.id, False])]
    if team:
        domain.append(("team_id", "=", find_record(env, "crm.team", team, label="sales team").id))
    currency = env.company.currency_id
    groups = env["crm.lead"]._read_group(domain, ["stage_id"], ["__count", "expected_revenue:sum", "prorated_revenue:sum"])
    stages = [{"stage": stage.name or "(none)", "count": count, "expected_revenue": money(expected, currency),
               "weighted_revenue": money(weighted, currency)}
              for stage, count, expected, weighted in sorted(groups, key=lambda g: (g[0].sequence, g[0].id))]
    return {"stages": stages, "total_count": sum(s["count"] for s in stages),
            "total_expected_revenue": money(sum(g[2] for g in groups), currency),
            "total_weighted_revenue": money(sum(g[3] for g in groups), currency)}
