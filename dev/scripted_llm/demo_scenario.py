"""The demo's scripted model: a few documented requests, answered through
the real tools, every answer marked as coming from the scripted demo model.

Handled (see README, "Demo"):

* "Create a quotation for Azure Interior: 3 Office Chair Black and 1 Large Cabinet"
* "Show the sales history of Gemini Furniture"
* "Find customers named Wood"
* anything else: a short help text.

With several product variants matching a name, the first candidate the tool
lists is used, and the answer says so.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import re

from .scenario import Scenario

BANNER = "[Scripted demo model: set OPENAI_API_KEY or AGENTIC_AI_LLM_BASE_URL to use a real LLM.]"
HELP = (BANNER + "\nI understand these requests:\n"
        "- Create a quotation for Azure Interior: 3 Office Chair Black and 1 Large Cabinet\n"
        "- Show the sales history of Gemini Furniture\n"
        "- Find customers named Wood")

QUOTE_RE = re.compile(r"quotation for (?P<customer>[^:]+):\s*(?P<lines>.+?)(?:[.,]?\s*then.*)?$", re.I | re.S)
LINE_RE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:x\s*)?(.+)")
HISTORY_RE = re.compile(r"(?:sales )?history of (?P<customer>.+?)[?.!]*$", re.I)
FIND_RE = re.compile(r"(?:find|search|list) (?:customers?|partners?|contacts?)(?: named| called| matching)? "
                     r"(?P<name>.+?)[?.!]*$", re.I)


_ids = itertools.count(1)


def _call(name: str, arguments: dict, step: int) -> dict:
    return {"tool_calls": [{"id": f"demo_{name}_{step}_{next(_ids)}", "name": name, "arguments": arguments}]}


def _since_user(messages: list[dict]) -> tuple[str, list[dict]]:
    """The last user message and the tool results that followed it."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "user":
            return messages[index].get("content") or "", [m for m in messages[index + 1:] if m["role"] == "tool"]
    return "", []


def _json_rows(text: str) -> list[dict]:
    rows = []
    for line in text.splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                rows.append(json.loads(line))
    return rows


def _without_label(text: str) -> str:
    """An observation without the label the observer puts before text from records."""
    first, _, rest = text.partition("\n")
    return rest if first.startswith("[Text from records") else text


def _quotation(match, results: list[dict]) -> dict:
    customer = match["customer"].strip()
    lines = []
    for part in re.split(r",|\band\b", match["lines"]):
        found = LINE_RE.match(part.strip())
        if found:
            lines.append({"product": found.group(2).strip(" ."), "quantity": float(found.group(1))})
    if not results:
        return _call("odoo_search_read", {"model": "res.partner",
                                          "domain": [["name", "ilike", customer], ["is_company", "=", True]],
                                          "fields": ["id", "name"], "limit": 5}, 1)
    last = _without_label(results[-1]["content"])
    if len(results) == 1:
        rows = _json_rows(last)
        if not rows:
            return {"content": f"{BANNER}\nI found no company named {customer!r}."}
        return _call("create_quotation", {"partner": rows[0]["id"], "lines": lines}, 2)
    if last.startswith("Error") and "match" in last and len(results) == 2:
        # Several variants: take the first candidate the tool listed for each ambiguous name.
        for line in lines:
            candidate = re.search(r"match '%s': .*?\(id (\d+)\)" % re.escape(str(line["product"])), last)
            if candidate:
                line["product"] = int(candidate.group(1))
        partner = _json_rows(results[0]["content"])[0]["id"]
        return _call("create_quotation", {"partner": partner, "lines": lines}, len(results) + 1)
    if last.startswith("Error"):
        return {"content": f"{BANNER}\nThe quotation could not be created: {last[:400]}"}
    order = json.loads(last.split("\n", 1)[1]) if "\n" in last else {}
    lines = "; ".join(f"{line['quantity']:g} x {line['product']}" for line in order.get("lines", []))
    variants = (" Several products matched a name, so I took the first one listed; change the line on the "
                "quotation if you meant another.") if len(results) > 2 else ""
    total = order.get("amount_total", {})
    name = order.get("name", "?")
    linked = f"[{name}](/odoo/sale.order/{order['id']})" if isinstance(order.get("id"), int) else name
    return {"content": f"{BANNER}\nI created quotation {linked} for "
                       f"{order.get('customer', {}).get('name', customer)}: {lines}; total "
                       f"{total.get('amount')} {total.get('currency')}.{variants}"}


def reply(request: dict) -> dict:
    """Decide the next step from the last user message and the tool results
    after it."""
    user_text, results = _since_user(request.get("messages") or [])
    text = user_text.strip()
    if results and results[-1]["content"].startswith(("[CONFIRMATION_REJECTED]", "[CANCELLED]")):
        return {"content": f"{BANNER}\nUnderstood: you rejected it, so I did not do it. Tell me what to do instead."}
    match = QUOTE_RE.search(text)
    if match:
        return _quotation(match, results)
    match = HISTORY_RE.search(text)
    if match:
        if not results:
            return _call("get_customer_history", {"partner": match["customer"].strip()}, 1)
        return {"content": f"{BANNER}\n{results[-1]['content'][:1500]}"}
    match = FIND_RE.search(text)
    if match:
        if not results:
            return _call("odoo_search_read", {"model": "res.partner",
                                              "domain": [["name", "ilike", match["name"].strip()]],
                                              "fields": ["id", "name", "email", "city"], "limit": 10}, 1)
        return {"content": f"{BANNER}\n{results[-1]['content'][:1500]}"}
    return {"content": HELP}


def build_scenario() -> Scenario:
    return Scenario().add(reply, uses=None)
