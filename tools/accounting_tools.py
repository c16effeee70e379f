"""Accounting tools (spec 000 §5.2, Accounting). Odoo app: ``account``.

Invoices are made the way a user makes them: from a sales order through
Odoo's "Create Invoice" wizard (``sale.advance.payment.inv``), from a
purchase order through ``action_create_invoice``, or as a draft
``account.move`` with lines. Posting is ``action_post``; payments go through
the "Register Payment" wizard (``account.payment.register``). Figures are
read from posted journal items (``account.move.line``) of the current
company, in the company currency.
"""
from __future__ import annotations

from odoo import Command, fields
from odoo.tools import float_is_zero

from .base_tool import ToolError, agent_tool, record_ref
from .lookup import escape_like, find_record, find_record_among
from .parsing import finite_number, line_objects, parse_date, parse_period, period_schema, positive_number
from .summaries import invoice_summary, money
from .untrusted import note_free_text_fields

MOVE_TYPES = ("out_invoice", "out_refund", "in_invoice", "in_refund")

# The sections of a profit and loss statement, by Odoo account type
# (``account.account.account_type``); income is credit, so its sign flips.
PNL_SECTIONS = (
    ("revenue", ("income",), -1),
    ("cost_of_revenue", ("expense_direct_cost",), 1),
    ("operating_expenses", ("expense", "expense_depreciation"), 1),
    ("other_income", ("income_other",), -1),
    ("other_expenses", ("expense_other",), 1),
)


def _invoice(env, value):
    return find_record(env, "account.move", value, label="invoice", domain=[("move_type", "in", MOVE_TYPES)],
                       outside="is not an invoice, a bill or a credit note")


def _invoice_lines(env, lines):
    """Odoo commands for ``[{product?, description?, quantity, price_unit?}]``:
    a line needs a product (Odoo sets its price, taxes and account) or a
    description with a price_unit."""
    commands = []
    for index, line in line_objects(lines, "{product or description, quantity, price_unit?}"):
        quantity = positive_number(line.get("quantity", 1), f"line {index}: quantity")
        values = {"quantity": quantity}
        if line.get("product") not in (None, ""):
            values["product_id"] = find_record(env, "product.product", line["product"], label="product").id
        elif not line.get("description") or line.get("price_unit") is None:
            raise ToolError(f"line {index} needs a product, or a description with a price_unit")
        if float_is_zero(quantity, precision_digits=env["decimal.precision"].precision_get("Product Unit")):
            raise ToolError(f"line {index}: quantity {quantity:g} rounds to 0")
        if line.get("description"):
            values["name"] = str(line["description"])
        if line.get("price_unit") is not None:
            values["price_unit"] = finite_number(line["price_unit"], f"line {index}: price_unit")
        commands.append(Command.create(values))
    return commands


def _invoiceable_order(env, value):
    """The confirmed sales or purchase order named by ``value`` (id or
    number) among the order models installed and readable by the user."""
    order = find_record_among(env, ["sale.order", "purchase.order"], value, "order")
    if order.state not in ("sale", "purchase", "done"):
        raise ToolError(f"{order.name} is not confirmed (state {order.state}); confirm it before invoicing")
    return order


def _invoices_from_order(env, order):
    """New invoices of ``order``: a sales order through its Create Invoice
    wizard (invoicing what Odoo's invoicing policy allows: delivered or
    ordered quantities), a purchase order through its Create Bill button."""
    before = order.invoice_ids
    if order._name == "sale.order":
        wizard = env["sale.advance.payment.inv"].with_context(active_model="sale.order", active_ids=order.ids).create(
            {"advance_payment_method": "delivered", "sale_order_ids": [Command.set(order.ids)]})
        wizard.create_invoices()
    else:
        order.action_create_invoice()
    return order.invoice_ids - before


@agent_tool(
    label="Create an invoice",
    category="accounting",
    risk_level="medium",
    apps=("account",),
    models=("account.move",),
    sequence=60,
    description=("Create draft invoices. Give order (a confirmed sales order number such as S00042, or a purchase "
                 "order such as P00012) to invoice it the way Odoo's Create Invoice / Create Bill button does: "
                 "Odoo's invoicing policy decides what is invoiced (delivered or ordered quantities) and refuses "
                 "when nothing is invoiceable. Or give partner and lines (product, or description with price_unit) "
                 "for a free customer invoice, vendor bill or credit note (move_type). The invoice stays a draft: "
                 "post it with post_invoice. Returns invoice ids, state, payment state and amounts with currency."),
    parameters={
        "order": record_ref("Sales or purchase order to invoice (id or number). Leave out partner and lines when "
                            "given.", ["sale.order", "purchase.order"]),
        "partner": record_ref("Customer or vendor (id or name), for an invoice with lines.", "res.partner"),
        "lines": {
            "type": "array",
            "description": "Invoice lines, when no order is given.",
            "items": {
                "type": "object",
                "properties": {
                    "product": record_ref("Product id or name; Odoo sets price, taxes and account.", "product.product"),
                    "description": {"type": "string",
                                    "description": "Line label; required with price_unit when there is no product."},
                    "quantity": {"type": "number", "exclusiveMinimum": 0, "description": "Quantity (default 1)."},
                    "price_unit": {"type": "number",
                                   "description": "Unit price in the invoice currency, without tax."},
                },
            },
        },
        "move_type": {
            "type": "string",
            "enum": ["out_invoice", "out_refund", "in_invoice", "in_refund"],
            "description": "Customer invoice (default), customer credit note, vendor bill, vendor refund.",
        },
        "invoice_date": {"type": "string", "description": "Invoice date, YYYY-MM-DD (default: set when posted)."},
        "ref": {"type": "string", "description": "Reference, e.g. the vendor's bill number."},
    },
)
def create_invoice(env, order=None, partner=None, lines=None, move_type="out_invoice", invoice_date=None, ref=None):
    """Create draft invoices. With ``order`` (a sales or purchase order, id or
    number) Odoo's own invoicing of that order is used; else a draft
    ``account.move`` of ``move_type`` for ``partner`` with ``lines``.
    Returns ``{invoices: [invoice_summary], order?}``."""
    if move_type not in MOVE_TYPES:
        raise ToolError(f"move_type must be one of {', '.join(MOVE_TYPES)}")
    date = parse_date(invoice_date, "invoice_date") if invoice_date else None
    if order not in (None, ""):
        if partner or lines:
            raise ToolError("give either an order, or a partner with lines, not both")
        source = _invoiceable_order(env, order)
        moves = _invoices_from_order(env, source)
        if not moves:
            raise ToolError(f"Odoo created no invoice for {source.name}")
        if date or ref:
            moves.write({**({"invoice_date": date} if date else {}), **({"ref": ref} if ref else {})})
        return {"order": {"id": source.id, "name": source.name, "invoice_status": source.invoice_status},
                "invoices": [invoice_summary(m) for m in moves], "created": True}
    if partner in (None, ""):
        raise ToolError("give an order to invoice, or a partner and lines")
    customer = find_record(env, "res.partner", partner, label="partner")
    values = {"move_type": move_type, "partner_id": customer.id, "invoice_line_ids": _invoice_lines(env, lines)}
    if date:
        values["invoice_date"] = date
    if ref:
        values["ref"] = ref
    move = env["account.move"].with_context(default_move_type=move_type).create(values)
    summary = invoice_summary(move)
    summary["lines"] = [{"product": line.product_id.display_name or False, "description": line.name,
                         "quantity": line.quantity, "price_unit": line.price_unit,
                         "subtotal": money(line.price_subtotal, move.currency_id)} for line in move.invoice_line_ids]
    note_free_text_fields(env["account.move.line"], [{"name": line["description"]} for line in summary["lines"]])
    return {"invoices": [summary], "created": True}


@agent_tool(
    label="Post an invoice",
    category="accounting",
    risk_level="high",
    apps=("account",),
    models=("account.move",),
    sequence=61,
    description=("Post (validate) a draft invoice, bill or credit note, like its Confirm button: Odoo checks it, "
                 "numbers it (e.g. INV/2026/00012) and writes its journal entry. Only drafts can be posted. Returns "
                 "the invoice with its number, state, payment state and amounts with currency."),
    parameters={"invoice": record_ref("Invoice id, number, or reference.", "account.move")},
)
def post_invoice(env, invoice):
    """Post (validate) a draft invoice or bill (id, number or reference) with
    ``action_post``; Odoo gives it its number and checks it. Returns the
    invoice summary."""
    move = _invoice(env, invoice)
    if move.state != "draft":
        raise ToolError(f"{move.name} is {move.state}, only a draft can be posted")
    move.action_post()
    return invoice_summary(move)


@agent_tool(
    label="Register a payment",
    category="accounting",
    risk_level="high",
    apps=("account",),
    models=("account.move", "account.payment"),
    sequence=62,
    description=("Register a payment of a posted invoice or bill through Odoo's Register Payment wizard, reconciled "
                 "with it. By default the whole amount due, today, in the default bank journal; a smaller amount "
                 "leaves the rest due (partial payment). Returns the payment (number, state, journal, date, amount "
                 "with currency) and the invoice's new payment state and amount due."),
    parameters={
        "invoice": record_ref("Invoice or bill id, number, or reference.", "account.move"),
        "amount": {"type": "number", "exclusiveMinimum": 0,
                   "description": "Amount paid in the invoice currency (default: the amount due)."},
        "journal": record_ref("Bank or cash journal (id or name, default: the first bank journal).", "account.journal"),
        "payment_date": {"type": "string", "description": "Payment date, YYYY-MM-DD (default today)."},
        "memo": {"type": "string", "description": "Payment memo (default: the invoice number)."},
    },
)
def register_payment(env, invoice, amount=None, journal=None, payment_date=None, memo=None):
    """Register a payment of a posted invoice or bill through Odoo's Register
    Payment wizard: the amount due unless ``amount`` (invoice currency) is
    given (a smaller amount leaves the rest open), in the default bank
    journal unless ``journal`` (id or name). Returns the payments and the
    invoice's new payment state."""
    move = _invoice(env, invoice)
    if move.state == "cancel":
        raise ToolError(f"{move.name or 'the invoice'} is cancelled; there is nothing to pay")
    if move.state != "posted":
        raise ToolError(f"{move.name or 'the invoice'} is a draft; post it before registering a payment")
    due = move.amount_residual
    if move.payment_state in ("paid", "in_payment", "reversed") or move.currency_id.is_zero(due):
        raise ToolError(f"{move.name} has nothing left to pay (payment state {move.payment_state})")
    values = {}
    if amount not in (None, ""):
        paid = move.currency_id.round(positive_number(amount, "amount"))
        if move.currency_id.compare_amounts(paid, due) > 0:
            raise ToolError(f"amount {paid} {move.currency_id.name} is more than the {due} {move.currency_id.name} "
                            f"due on {move.name}; the user must decide in Odoo what to do with an overpayment")
        # In the invoice's currency whatever the journal's (the wizard would take the journal's).
        values.update(amount=paid, currency_id=move.currency_id.id)
    if journal not in (None, ""):
        chosen = find_record(env, "account.journal", journal, label="journal")
        if chosen.type not in ("bank", "cash", "credit"):
            usable = env["account.journal"].search([("type", "in", ("bank", "cash", "credit")),
                                                    ("company_id", "=", move.company_id.id)])
            raise ToolError(f"{chosen.name} is a {chosen.type} journal; payments go to a bank, cash or credit card "
                            "journal: " + ", ".join(f"{j.name} (id {j.id})" for j in usable))
        values["journal_id"] = chosen.id
    if payment_date:
        values["payment_date"] = parse_date(payment_date, "payment_date")
    if memo:
        values["communication"] = str(memo)
    before = move.matched_payment_ids
    wizard = env["account.payment.register"].with_context(active_model="account.move", active_ids=move.ids)
    wizard = wizard.create(values)
    wizard.action_create_payments()
    payments = move.matched_payment_ids - before
    return {
        "invoice": invoice_summary(move),
        "payments": [{"id": p.id, "name": p.name, "state": p.state, "journal": p.journal_id.name,
                      "date": fields.Date.to_string(p.date), "amount": money(p.amount, p.currency_id)}
                     for p in payments],
    }


def _account(env, value):
    """The account of the current company with code, id or name ``value``.
    A code is matched exactly: Odoo's own account search would take "1210"
    as the prefix of 121000."""
    Account = env["account.account"].with_context(active_test=False)
    company = [("company_ids", "in", env.company.id)]
    text = value.strip() if isinstance(value, str) else ""
    if text.isascii() and text.isalnum() and any(c.isdigit() for c in text):
        code = value.strip()
        found = Account.search(company + [("code", "=", code)], limit=1)
        if found:
            return found
        if code.isdigit() and len(code) < 10 and Account.search(company + [("id", "=", int(code))]):
            return find_record(env, "account.account", int(code), label="account", domain=company)
        starting = Account.search(company + [("code", "=like", escape_like(code) + "%")], limit=5)
        listed = "; ".join(f"{a.code} {a.name}" for a in starting)
        raise ToolError(f"no account has the code {code}." + (f" Codes starting with it: {listed}." if starting else "")
                        + " Give an exact code, or an account_type for a group of accounts.")
    return find_record(env, "account.account", value, label="account", domain=company,
                       outside=f"is not an account of {env.company.name}")


def _check_figures_access(env):
    """Company figures need Odoo's Invoicing/Accounting read rights: other
    users' record rules show only part of the journal (e.g. a salesperson's
    own invoices), which would read as wrong company totals."""
    if not (env.user.has_group("account.group_account_readonly")
            or env.user.has_group("account.group_account_invoice")):
        raise ToolError("company accounting figures need Invoicing or Accounting access (Billing, Auditor or "
                        "Accountant); your access shows only part of the journal")


def _period(env, date_from, date_to):
    """``(date_from, date_to)``: the given dates, by default the company's
    fiscal year up to today. Raises ToolError when they do not parse or are
    reversed."""
    start, end = parse_period(date_from, date_to, default_to=fields.Date.context_today(env["res.company"]))
    return start or env.company.compute_fiscalyear_dates(end)["date_from"], end


def _posted_lines_domain(env, date_from=None, date_to=None, before=None):
    """Posted journal items of the current company, dated within
    ``[date_from, date_to]`` or before ``before``."""
    domain = [("parent_state", "=", "posted"), ("company_id", "=", env.company.id)]
    if date_from:
        domain.append(("date", ">=", date_from))
    if date_to:
        domain.append(("date", "<=", date_to))
    if before:
        domain.append(("date", "<", before))
    return domain


@agent_tool(
    label="Account balance",
    category="accounting",
    risk_level="low",
    apps=("account",),
    models=("account.account", "account.move.line"),
    sequence=63,
    description=("Balance of one account (id, code such as 121000, or name) or of all accounts of one type (e.g. "
                 "asset_receivable, asset_cash, liability_payable, income, expense) from posted journal items of "
                 "the current company, in its currency: opening balance (balance-sheet accounts only), debit, "
                 "credit and net movement (debit minus credit) in the period, and ending balance. Default period: "
                 "the current fiscal year up to today. Give either account or account_type."),
    parameters={
        "account": record_ref("Account id, code or name."),
        "account_type": {
            "type": "string",
            "enum": [
                "asset_receivable",
                "asset_cash",
                "asset_current",
                "asset_non_current",
                "asset_prepayments",
                "asset_fixed",
                "liability_payable",
                "liability_credit_card",
                "liability_current",
                "liability_non_current",
                "equity",
                "equity_unaffected",
                "income",
                "income_other",
                "expense",
                "expense_other",
                "expense_depreciation",
                "expense_direct_cost",
                "off_balance",
            ],
            "description": "All accounts of this type instead of one account.",
        },
        **period_schema(" (default: start of the fiscal year)", " (default: today)"),
    },
)
def get_account_balance(env, account=None, account_type=None, date_from=None, date_to=None):
    """Balances of one account (id, code or name) or of all accounts of an
    ``account_type`` from posted journal items of the current company, in
    its currency: opening balance (before ``date_from``, for balance-sheet
    accounts), debit, credit and net movement in the period, and ending
    balance. Default period: the fiscal year to today."""
    if bool(account not in (None, "")) == bool(account_type):
        raise ToolError("give either an account (id, code or name) or an account_type")
    _check_figures_access(env)
    Account = env["account.account"]
    if account_type:
        types = dict(Account._fields["account_type"].selection)
        if account_type not in types:
            raise ToolError(f"unknown account_type {account_type!r}; one of: {', '.join(types)}")
        accounts = Account.search([("account_type", "=", account_type), ("company_ids", "in", env.company.id)])
    else:
        accounts = _account(env, account)
    start, end = _period(env, date_from, date_to)
    currency = env.company.currency_id
    Line = env["account.move.line"]
    period = {acc: (debit, credit, balance) for acc, debit, credit, balance in Line._read_group(
        _posted_lines_domain(env, start, end) + [("account_id", "in", accounts.ids)],
        ["account_id"], ["debit:sum", "credit:sum", "balance:sum"])}
    opening = dict(Line._read_group(
        _posted_lines_domain(env, before=start)
        + [("account_id", "in", accounts.filtered("include_initial_balance").ids)],
        ["account_id"], ["balance:sum"]))
    rows = []
    for acc in accounts.sorted("code"):
        debit, credit, balance = period.get(acc, (0.0, 0.0, 0.0))
        start_balance = opening.get(acc, 0.0)
        rows.append({"id": acc.id, "code": acc.code, "name": acc.name, "account_type": acc.account_type,
                     "opening_balance": money(start_balance, currency), "debit": money(debit, currency),
                     "credit": money(credit, currency), "balance": money(balance, currency),
                     "ending_balance": money(start_balance + balance, currency)})
    total = {key: money(sum(row[key]["amount"] for row in rows), currency)
             for key in ("opening_balance", "debit", "credit", "balance", "ending_balance")}
    return {"company": env.company.name, "currency": currency.name, "date_from": str(start), "date_to": str(end),
            "accounts": rows, "total": total}


@agent_tool(
    label="Profit and loss",
    category="accounting",
    risk_level="low",
    apps=("account",),
    models=("account.account", "account.move.line"),
    sequence=64,
    description=("Profit and loss statement of the current company from posted journal items, in its currency: "
                 "revenue, cost of revenue, gross profit, operating expenses (with depreciation), operating income, "
                 "other income, other expenses and net profit, each section with its accounts. Income is shown "
                 "positive. Default period: the current fiscal year up to today."),
    parameters={
        **period_schema(" (default: start of the fiscal year)", " (default: today)"),
    },
)
def get_profit_loss(env, date_from=None, date_to=None):
    """Profit and loss of the current company from posted journal items, in
    its currency: revenue, cost of revenue, gross profit, operating expenses
    (incl. depreciation), operating income, other income and expenses, net
    profit, each section with its accounts. Default period: the fiscal year
    to today."""
    _check_figures_access(env)
    start, end = _period(env, date_from, date_to)
    currency = env.company.currency_id
    by_account = env["account.move.line"]._read_group(
        _posted_lines_domain(env, start, end)
        + [("account_id.account_type", "in", [t for _s, ts, _n in PNL_SECTIONS for t in ts])],
        ["account_id"], ["balance:sum"])
    sections, totals = {}, {}
    for key, types, sign in PNL_SECTIONS:
        accounts = sorted(((acc, sign * balance) for acc, balance in by_account if acc.account_type in types),
                          key=lambda item: item[0].code or "")
        totals[key] = sum(amount for _acc, amount in accounts)
        sections[key] = {"total": money(totals[key], currency),
                         "accounts": [{"code": acc.code, "name": acc.name, "amount": money(amount, currency)}
                                      for acc, amount in accounts]}
    gross = totals["revenue"] - totals["cost_of_revenue"]
    operating = gross - totals["operating_expenses"]
    net = operating + totals["other_income"] - totals["other_expenses"]
    return {"company": env.company.name, "currency": currency.name, "date_from": str(start), "date_to": str(end),
            **sections, "gross_profit": money(gross, currency), "operating_income": money(operating, currency),
            "net_profit": money(net, currency)}
