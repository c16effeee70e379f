"""The summary report tool (spec 000 §5.2, Report): totals of one business
area grouped one way, read with ``_read_group`` from the reporting models
Odoo's own Reporting menus use (``sale.report``, ``purchase.report``,
``account.invoice.report``...), so the numbers are the ones a user sees in
Odoo's pivot views, amounts in the company currency.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from odoo import fields

from .base_tool import ToolError, agent_tool
from .parsing import clamp_limit, parse_period, period_domain, period_schema
from .summaries import money

TIME_GROUPS = ("day", "week", "month", "quarter", "year")


@dataclass(frozen=True)
class ReportSpec:
    """One report type: the Odoo app it needs, the reporting model and its
    base domain, the date field the period applies to (None: a snapshot),
    ``measures`` = ``{name: "field:aggregate"}`` (``__count`` counts rows),
    which of them are amounts, and ``groups`` = ``{name: field}``."""
    module: str
    model: str
    domain: tuple
    date_field: str | None
    measures: dict
    groups: dict
    default_group: str
    amounts: tuple = field(default=())


REPORTS = {
    "sales": ReportSpec(
        "sale", "sale.report", (("state", "=", "sale"),), "date",
        {"untaxed_amount": "price_subtotal:sum", "total_amount": "price_total:sum",
         "quantity": "product_uom_qty:sum", "orders": "order_reference:count_distinct"},
        {"customer": "partner_id", "salesperson": "user_id", "team": "team_id", "product": "product_id",
         "category": "categ_id"}, "customer", ("untaxed_amount", "total_amount")),
    "purchases": ReportSpec(
        "purchase", "purchase.report", (("state", "in", ("purchase", "done")),), "date_order",
        {"untaxed_amount": "untaxed_total:sum", "total_amount": "price_total:sum",
         "quantity": "qty_ordered:sum", "orders": "order_id:count_distinct"},
        {"vendor": "partner_id", "buyer": "user_id", "product": "product_id", "category": "category_id"},
        "vendor", ("untaxed_amount", "total_amount")),
    "invoicing": ReportSpec(
        "account", "account.invoice.report",
        (("state", "=", "posted"), ("move_type", "in", ("out_invoice", "out_refund"))), "invoice_date",
        {"untaxed_amount": "price_subtotal:sum", "total_amount": "price_total:sum",
         "invoices": "move_id:count_distinct"},
        {"customer": "partner_id", "salesperson": "invoice_user_id", "product": "product_id",
         "category": "product_categ_id", "payment_state": "payment_state"},
        "customer", ("untaxed_amount", "total_amount")),
    "bills": ReportSpec(
        "account", "account.invoice.report",
        (("state", "=", "posted"), ("move_type", "in", ("in_invoice", "in_refund"))), "invoice_date",
        {"untaxed_amount": "price_subtotal:sum", "total_amount": "price_total:sum", "bills": "move_id:count_distinct"},
        {"vendor": "partner_id", "product": "product_id", "category": "product_categ_id",
         "payment_state": "payment_state"},
        "vendor", ("untaxed_amount", "total_amount")),
    "inventory": ReportSpec(
        "stock", "stock.quant", (("location_id.usage", "=", "internal"),), None,
        {"on_hand": "quantity:sum", "reserved": "reserved_quantity:sum"},
        {"product": "product_id", "location": "location_id", "warehouse": "warehouse_id",
         "category": "product_categ_id"},
        "product"),
    "crm": ReportSpec(
        "crm", "crm.lead", (("type", "=", "opportunity"),), "create_date",
        {"opportunities": "__count", "expected_revenue": "expected_revenue:sum",
         "prorated_revenue": "prorated_revenue:sum"},
        {"stage": "stage_id", "salesperson": "user_id", "team": "team_id", "customer": "partner_id"},
        "stage", ("expected_revenue", "prorated_revenue")),
    "manufacturing": ReportSpec(
        "mrp", "mrp.production", (("state", "!=", "cancel"),), "date_start",
        {"orders": "__count", "quantity": "product_qty:sum"},
        {"state": "state", "product": "product_id", "responsible": "user_id"}, "state"),
    "employees": ReportSpec(
        "hr", "hr.employee", (), None, {"employees": "__count"},
        {"department": "department_id", "job": "job_id", "manager": "parent_id"}, "department"),
    "time_off": ReportSpec(
        "hr_holidays", "hr.leave", (("state", "=", "validate"),), "date_from",
        {"requests": "__count", "days": "number_of_days:sum"},
        {"employee": "employee_id", "type": "holiday_status_id", "department": "department_id"}, "type"),
}


def _label(value):
    if hasattr(value, "_name"):  # a record
        return value.display_name if value else "None"
    if isinstance(value, datetime):
        return fields.Datetime.to_string(value)[:10]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value if value not in (False, None) else "None"


@agent_tool(
    label="Summary report",
    category="report",
    risk_level="low",
    apps=("sale", "purchase", "account", "stock", "crm", "mrp", "hr", "hr_holidays"),
    sequence=70,
    description=("Totals of one business area, grouped one way, from the reporting data Odoo's own Reporting menus "
                 "show. report_type and its groupings: sales (customer, salesperson, team, product, category) "
                 "untaxed/total amount, quantity, orders; purchases (vendor, buyer, product, category); invoicing "
                 "and bills (customer or vendor, salesperson, product, category, payment_state), posted only; "
                 "inventory (product, location, warehouse, category) on hand and reserved, today; crm opportunities "
                 "(stage, salesperson, team, customer) expected and prorated revenue; manufacturing (state, "
                 "product, responsible) orders and quantity; employees (department, job, manager); time_off "
                 "approved (employee, type, department) days. Reports with dates also group by day, week, month, "
                 "quarter or year. Amounts are in the company currency. Only the reports of installed apps are "
                 "available."),
    parameters={
        "report_type": {
            "type": "string",
            "enum": [
                "sales",
                "purchases",
                "invoicing",
                "bills",
                "inventory",
                "crm",
                "manufacturing",
                "employees",
                "time_off",
            ],
            "description": "The business area.",
        },
        "group_by": {"type": "string",
                     "description": ("One grouping of that report (see description), or "
                                     "day/week/month/quarter/year. Default: the report's main one.")},
        **period_schema(" (reports with dates only)"),
        "limit": {"type": "integer", "minimum": 1, "maximum": 200,
                  "description": "Rows returned (default 20), largest first; the total covers all."},
    },
)
def generate_summary_report(env, report_type, group_by=None, date_from=None, date_to=None, limit=20):
    """Totals of ``report_type`` (sales, purchases, invoicing, bills,
    inventory, crm, manufacturing, employees, time_off) grouped by
    ``group_by`` (a key of that report, or day/week/month/quarter/year) for
    the days ``[date_from, date_to]``, for the current company. Returns
    ``{report_type, company, group_by, measures, currency, total: {measure:
    value}, rows: [{group, measure...}], groups, rows_shown, message?}``;
    amounts as ``{amount, currency}``; ``message`` says when the user's
    record rules hide part of the records. Raises
    ToolError for an unknown type or grouping, or an app not installed."""
    spec = REPORTS.get(report_type)
    available = [name for name, s in REPORTS.items() if s.module in env.registry._init_modules]
    if spec is None or report_type not in available:
        raise ToolError(f"report_type {report_type!r} is not available; available here: {', '.join(available)}"
                        if available else "no report is available: none of the apps it reports on is installed")
    model = env[spec.model]
    if not model.has_access("read"):
        raise ToolError(f"you have no read access to {spec.model}, the data of the {report_type} report")
    group_by = group_by or spec.default_group
    if group_by in TIME_GROUPS and spec.date_field:
        groupby_spec = f"{spec.date_field}:{group_by}"
    elif group_by in spec.groups:
        groupby_spec = spec.groups[group_by]
    else:
        keys = list(spec.groups) + (list(TIME_GROUPS) if spec.date_field else [])
        raise ToolError(f"the {report_type} report cannot be grouped by {group_by!r}; use one of: {', '.join(keys)}")
    if (date_from or date_to) and not spec.date_field:
        raise ToolError(f"the {report_type} report is a snapshot of today; it takes no dates")
    domain = list(spec.domain)
    if spec.date_field:
        domain += period_domain(model, spec.date_field, *parse_period(date_from, date_to))
    if "company_id" in model._fields:  # the current company's figures, in its currency
        domain.append(("company_id", "in", [env.company.id, False]))
    names, aggregates = list(spec.measures), list(spec.measures.values())
    currency = env.company.currency_id

    def values(row):
        return {name: money(value or 0.0, currency) if name in spec.amounts else value or 0
                for name, value in zip(names, row, strict=True)}

    groups = model._read_group(domain, [groupby_spec], aggregates)
    if group_by not in TIME_GROUPS:  # largest first; time groups stay in time order
        groups.sort(key=lambda group: group[1] or 0, reverse=True)
    shown = groups[:clamp_limit(limit)]
    partial = model.search_count(domain) != model.sudo().search_count(domain)
    return {
        "report_type": report_type,
        "company": env.company.name,
        "group_by": group_by,
        "date_from": date_from or None,
        "date_to": date_to or None,
        "measures": names,
        "currency": currency.name if spec.amounts else None,
        "total": values(model._read_group(domain, [], aggregates)[0]),
        "groups": len(groups),
        "rows_shown": len(shown),
        "rows": [{"group": _label(group[0]), **values(group[1:])} for group in shown],
        **({"message": "Your access rights show only part of these records (for example only your own documents): "
                       "these figures are not the company's totals."} if partial else {}),
    }
