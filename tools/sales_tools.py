"""Sales tools (spec 000 §5.2, Sales). Odoo app: ``sale`` (``sale_management``)."""
from __future__ import annotations

from odoo import Command, fields

from .base_tool import ToolError, agent_tool, record_ref
from .lookup import find_record
from .parsing import (
    clamp_limit,
    finite_number,
    non_negative_number,
    parse_date,
    percentage,
    product_lines,
    product_lines_schema,
)
from .summaries import money, sale_order_summary, user_action_needed


@agent_tool(
    label="Create a quotation",
    category="sales",
    risk_level="medium",
    apps=("sale",),
    models=("sale.order", "sale.order.line", "res.partner", "product.product"),
    sequence=10,
    description=("Create a draft sales quotation (sale.order) for a customer with product lines. Customer and "
                 "products may be given by id or by name; an ambiguous name returns the candidates instead of "
                 "guessing. Prices come from the customer's pricelist unless price_unit is given. Returns the "
                 "quotation number (name), id, state, untaxed and total amounts with currency, and the lines."),
    parameters={
        "partner": record_ref("Customer id or name.", "res.partner"),
        "lines": product_lines_schema(
            "Order lines.",
            price_unit={"type": "number", "minimum": 0,
                        "description": "Unit price in the order currency; omit to use the pricelist."},
            discount={"type": "number", "minimum": 0, "maximum": 100, "description": "Discount in percent."}),
        "note": {"type": "string", "description": "Terms and conditions / note printed on the quotation."},
        "validity_date": {"type": "string", "description": "Expiration date, YYYY-MM-DD."},
    },
)
def create_quotation(env, partner, lines, note=None, validity_date=None):
    """Create a draft ``sale.order`` for ``partner`` (id or name) with
    ``lines`` = ``[{product, quantity, uom?, price_unit?, discount?}]``; Odoo's
    pricelist sets prices unless ``price_unit`` is given. Returns the order
    summary with its lines."""
    customer = find_record(env, "res.partner", partner, label="customer")
    line_commands = []
    sellable = product_lines(env, lines, [("sale_ok", "=", True)], outside="cannot be sold (its Sales option is off)")
    for index, line, product, quantity, uom in sellable:
        values = {"product_id": product.id, "product_uom_qty": quantity}
        if line.get("uom"):
            values["product_uom_id"] = uom.id
        if line.get("price_unit") is not None:
            values["price_unit"] = finite_number(line["price_unit"], f"line {index}: price_unit")
        if line.get("discount") is not None:
            values["discount"] = percentage(line["discount"], f"line {index}: discount")
        line_commands.append(Command.create(values))
    order_values = {"partner_id": customer.id, "order_line": line_commands}
    if note:
        order_values["note"] = note
    if validity_date:
        order_values["validity_date"] = parse_date(validity_date, "validity_date")
    order = env["sale.order"].create(order_values)
    result = sale_order_summary(order)
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


@agent_tool(
    label="Customer history",
    category="sales",
    risk_level="low",
    apps=("sale",),
    models=("sale.order", "res.partner"),
    sequence=11,
    description=("Sales history of a customer (id or name), including its contacts: number of open quotations, "
                 "confirmed and cancelled orders, confirmed untaxed revenue in the company currency, and the most "
                 "recent orders with number, date, state and amounts."),
    parameters={
        "partner": record_ref("Customer id or name.", "res.partner"),
        "limit": {"type": "integer", "minimum": 1, "maximum": 50,
                  "description": "How many recent orders to list (default 5)."},
    },
)
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
    revenue = sum(o.currency_id._convert(o.amount_untaxed, company_currency, o.company_id,
                                         o.date_order or fields.Date.today()) for o in confirmed)
    return {
        "customer": {"id": commercial.id, "name": commercial.display_name},
        "quotation_count": len(orders.filtered(lambda o: o.state in ("draft", "sent"))),
        "order_count": len(confirmed),
        "cancelled_count": len(orders.filtered(lambda o: o.state == "cancel")),
        "revenue_untaxed": money(revenue, company_currency),
        "recent_orders": [sale_order_summary(o) for o in orders[:clamp_limit(limit, 5)]],
    }


@agent_tool(
    label="Confirm a quotation",
    category="sales",
    risk_level="high",
    apps=("sale",),
    models=("sale.order",),
    sequence=12,
    description=("Confirm a quotation so it becomes a sales order, exactly like the Confirm button in Odoo (with "
                 "Inventory installed this creates the delivery). Give the quotation by id or number (e.g. S00012). "
                 "Only quotations (draft or sent) can be confirmed. Returns the order number, state, amounts with "
                 "currency and the deliveries created."),
    parameters={"order": record_ref("Quotation id or number, e.g. S00012.", "sale.order")},
)
def confirm_sale_order(env, order):
    """Confirm a quotation (id or number such as S00012) with Odoo's own
    ``action_confirm``: it becomes a sales order and, with Inventory, its
    delivery is created. Returns the order summary and its deliveries."""
    sale_order = find_record(env, "sale.order", order, label="sales order")
    if sale_order.state not in ("draft", "sent"):
        raise ToolError(f"{sale_order.name} is not a quotation (state: {sale_order.state}); only quotations can be "
                        "confirmed")
    result = sale_order.action_confirm()
    out = {**sale_order_summary(sale_order), **user_action_needed(result)}
    if "picking_ids" in sale_order._fields:
        out["deliveries"] = [{"id": p.id, "name": p.name, "state": p.state} for p in sale_order.picking_ids]
    return out


@agent_tool(
    label="Apply a discount",
    idempotent=True,
    category="sales",
    risk_level="medium",
    apps=("sale",),
    models=("sale.order", "sale.order.line", "product.product"),
    sequence=13,
    description=("Set a discount percentage on the lines of a quotation: all lines, or only the lines of the given "
                 "products. Odoo recomputes the totals. Only quotations (draft or sent) can be changed. Returns the "
                 "order totals with currency and the changed lines."),
    parameters={
        "order": record_ref("Quotation id or number, e.g. S00012.", "sale.order"),
        "discount": {"type": "number", "minimum": 0, "maximum": 100,
                     "description": "Discount in percent, e.g. 10 for 10 %."},
        "products": {"type": "array", "items": {"type": ["integer", "string"]},
                     "description": "Only these products (ids or names); all lines when omitted."},
    },
)
def apply_discount(env, order, discount, products=None):
    """Set a discount (percent, 0-100) on the lines of a quotation, all of
    them or only those of ``products`` (ids or names); Odoo recomputes the
    totals. Returns the order summary with the changed lines."""
    sale_order = find_record(env, "sale.order", order, label="sales order")
    if sale_order.state not in ("draft", "sent"):
        raise ToolError(f"{sale_order.name} is confirmed (state: {sale_order.state}); discounts change on "
                        "quotations only")
    discount = percentage(discount)
    lines = sale_order.order_line.filtered(lambda line: not line.display_type)
    if products:
        wanted = env["product.product"]
        for product in products:
            wanted |= find_record(env, "product.product", product, label="product")
        lines = lines.filtered(lambda line: line.product_id in wanted)
        if not lines:
            raise ToolError(f"{sale_order.name} has no line for {', '.join(wanted.mapped('display_name'))}")
    lines.write({"discount": discount})
    out = sale_order_summary(sale_order)
    out["changed_lines"] = [{"product": line.product_id.display_name, "discount": line.discount,
                             "subtotal": money(line.price_subtotal, sale_order.currency_id)} for line in lines]
    return out


@agent_tool(
    label="Create a lead",
    category="sales",
    risk_level="medium",
    apps=("crm",),
    models=("crm.lead", "res.partner"),
    sequence=14,
    description=("Create a CRM lead or opportunity. Odoo sets the sales team, stage and salesperson by its own "
                 "rules. Give the customer by id or name when known, or just an email/phone for a new prospect. "
                 "Expected revenue is in the company currency. Returns the id, name, type, stage and salesperson."),
    parameters={
        "name": {"type": "string", "description": "Title of the lead, e.g. \"Office furniture for 40 seats\"."},
        "partner": record_ref("Existing customer id or name.", "res.partner"),
        "email": {"type": "string", "description": "Contact email of a new prospect."},
        "phone": {"type": "string", "description": "Contact phone."},
        "expected_revenue": {"type": "number", "minimum": 0,
                             "description": "Expected revenue in the company currency."},
        "type": {"type": "string", "enum": ["lead", "opportunity"],
                 "description": "lead (to qualify) or opportunity (default)."},
        "description": {"type": "string", "description": "Notes."},
    },
)
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
        values["expected_revenue"] = non_negative_number(expected_revenue, "expected_revenue")
    lead = env["crm.lead"].create(values)
    return {"id": lead.id, "name": lead.name, "display_name": lead.display_name, "type": lead.type,
            "stage": lead.stage_id.name, "salesperson": lead.user_id.name,
            "expected_revenue": money(lead.expected_revenue, lead.company_currency), "created": True}


@agent_tool(
    label="Sales pipeline summary",
    category="sales",
    risk_level="low",
    apps=("crm",),
    models=("crm.lead", "crm.team"),
    sequence=15,
    description=("Summarise the open CRM pipeline by stage: number of opportunities, expected revenue and "
                 "probability-weighted revenue in the company currency, with totals. Optionally for one sales team "
                 "(id or name)."),
    parameters={"team": record_ref("Sales team id or name; all teams when omitted.", "crm.team")},
)
def get_sales_pipeline_summary(env, team=None):
    """Open opportunities of the current company by stage (optionally of one
    sales team, id or name): count, expected revenue and probability-weighted
    revenue in the company currency, plus totals."""
    domain = [("type", "=", "opportunity"), ("active", "=", True), ("company_id", "in", [env.company.id, False])]
    if team:
        domain.append(("team_id", "=", find_record(env, "crm.team", team, label="sales team").id))
    currency = env.company.currency_id
    groups = env["crm.lead"]._read_group(domain, ["stage_id"],
                                         ["__count", "expected_revenue:sum", "prorated_revenue:sum"])
    stages = [{"stage": stage.name or "(none)", "count": count, "expected_revenue": money(expected, currency),
               "weighted_revenue": money(weighted, currency)}
              for stage, count, expected, weighted in sorted(groups, key=lambda g: (g[0].sequence, g[0].id))]
    return {"stages": stages, "total_count": sum(s["count"] for s in stages),
            "total_expected_revenue": money(sum(g[2] for g in groups), currency),
            "total_weighted_revenue": money(sum(g[3] for g in groups), currency)}
