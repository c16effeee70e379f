"""The actions a user's words name (issue 23, point 2): under the default
policy (``destructive``) a high- or variable-risk call runs without a
question when the user's own words name its action and every target and
value it carries came from the user (engine/guard/provenance.py); any other
destructive call asks, as before.

Only the forward steps of Odoo's business flows are listed: confirming a
sale, approving a purchase, validating a transfer, posting an invoice,
registering a payment, finishing a production. Deleting, archiving,
cancelling, resetting to draft and every other method always ask under
this policy. A word counts only as it stands in the user's latest message
("post the invoice", not "the posted invoices"; engine/guard/provenance.py
``asks_for``), Chinese and Japanese by characters; nouns that name a
document rather than an action ("purchase", "invoice", "payment",
"transfer", "move") are not listed, and an internal transfer always asks.
A verb said in another sense ("can you confirm what the total is?") still
counts: the words are matched, not understood. The words are the user's, never read text, the agent's
configuration or a memory: an instruction planted in a record cannot make a
call ask less."""
from __future__ import annotations

# Tool name -> the words that name its action.
TOOL_ACTIONS = {
    "confirm_sale_order": ("confirm", "sell", "确认订单", "销售"),
    "approve_purchase_order": ("approve", "confirm", "buy", "批准", "确认采购", "购买"),
    "post_invoice": ("post", "过账"),
    "register_payment": ("pay", "settle", "付款", "支付", "收款"),
}

# Method of odoo_method_call -> the words that name it (spec 000 §5.1's allow list, forward steps only).
METHOD_ACTIONS = {
    "action_confirm": ("confirm", "确认订单"),
    "button_confirm": ("confirm", "approve", "buy", "批准", "购买"),
    "button_approve": ("approve", "批准"),
    "button_validate": ("validate", "deliver", "ship", "receive", "发货", "收货"),
    "action_assign": ("reserve", "预留"),
    "action_post": ("post", "过账"),
    "button_mark_done": ("finish", "produce", "manufacture", "完成生产"),
    "action_approve": ("approve", "批准"),
    "action_set_won": ("won", "赢单"),
}


def action_words(tool: str, params) -> tuple[str, ...]:
    """The words that name what a call of ``tool`` with ``params`` does;
    empty when its action is not one a user's words may ask for without a
    question (see the module docstring)."""
    if tool == "odoo_method_call":
        method = params.get("method") if isinstance(params, dict) else None
        return METHOD_ACTIONS.get(method, ()) if isinstance(method, str) else ()
    return TOOL_ACTIONS.get(tool, ())
