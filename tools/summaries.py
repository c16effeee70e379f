"""What tools answer about the records they touch: amounts with their
currency, sales and purchase order summaries, and Odoo's dialogs. JSON-safe
data only; the observer turns it into text for the model."""
from __future__ import annotations

from .values.json_values import to_json_value


def money(amount: float, currency) -> dict:
    """``{"amount": 12.5, "currency": "EUR"}`` rounded by the currency."""
    return {"amount": currency.round(amount) if currency else round(amount, 2),
            "currency": currency.name if currency else ""}


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


def sale_order_summary(order) -> dict:
    """``order_summary`` of a ``sale.order`` with its ``customer`` and
    ``date_order`` (ISO-8601 in UTC with its offset)."""
    return {**order_summary(order, "customer"), "date_order": to_json_value(order.date_order)}


def purchase_order_summary(order) -> dict:
    """``order_summary`` of a ``purchase.order`` with its ``vendor`` and its
    lines ``[{product, quantity, uom, price_unit, subtotal}]``."""
    currency = order.currency_id
    return {**order_summary(order, "vendor"), "lines": [
        {"product": line.product_id.display_name, "quantity": line.product_qty, "uom": line.product_uom_id.name,
         "price_unit": line.price_unit, "subtotal": money(line.price_subtotal, currency)}
        for line in order.order_line if not line.display_type]}


def invoice_summary(move) -> dict:
    """``{id, name, move_type, state, payment_state, partner, invoice_date,
    invoice_date_due, amount_untaxed, amount_tax, amount_total,
    amount_residual}`` of an ``account.move``, amounts in its currency."""
    currency = move.currency_id
    return {
        "id": move.id,
        "name": move.name if move.name != "/" else None,
        "move_type": move.move_type,
        "state": move.state,
        "payment_state": move.payment_state,
        "partner": {"id": move.partner_id.id, "name": move.partner_id.display_name},
        "invoice_date": to_json_value(move.invoice_date or None),
        "invoice_date_due": to_json_value(move.invoice_date_due or None),
        "amount_untaxed": money(move.amount_untaxed, currency),
        "amount_tax": money(move.amount_tax, currency),
        "amount_total": money(move.amount_total, currency),
        "amount_residual": money(move.amount_residual, currency),
    }


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
