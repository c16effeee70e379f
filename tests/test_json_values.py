"""One JSON form for what leaves the ORM (issue 10, point 6): the serializer
on each kind of value, and case BR-20 "values that are not JSON": dates,
amounts, a many2one, HTML, an empty many2one, a picture, a recordset, True
and an Odoo dialog reach the model, the thread, the execution log and the
routes without an exception and in that form."""
import base64
import enum
import io
import json
import math
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

from PIL import Image

from odoo import Command, fields
from odoo.tests import HttpCase, TransactionCase, new_test_user, tagged

from ..tools.values.json_values import dumps, json_rows, to_json_value
from .common import AgenticSetupMixin, tool_call


def strict_json(text):
    """``json.loads`` that refuses NaN and Infinity (not JSON, though Python writes them)."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def png(size=200):
    """A real PNG picture, base64 as Odoo stores it in a binary field."""
    buffer = io.BytesIO()
    Image.new("RGB", (size, size), (200, 30, 30)).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue())


class Kind(str, enum.Enum):
    SALE = "sale"


class Text(str):
    def __str__(self):
        return "not the value"


class Whole(int):
    def __int__(self):
        return 99


class Real(float):
    def __float__(self):
        return 2.0


@tagged("post_install", "-at_install")
class TestJsonValues(TransactionCase):
    """``to_json_value`` and ``dumps`` on each kind of value."""

    def test_dates_and_datetimes_are_iso_8601_datetimes_in_utc_with_offset(self):
        self.assertEqual(to_json_value(date(2026, 11, 30)), "2026-11-30")
        self.assertEqual(to_json_value(datetime(2026, 11, 30, 10, 0)), "2026-11-30T10:00:00+00:00",
                         "Odoo's naive datetimes are UTC")
        paris = timezone(timedelta(hours=1))
        self.assertEqual(to_json_value(datetime(2026, 11, 30, 11, 0, tzinfo=paris)), "2026-11-30T10:00:00+00:00")

    def test_numbers_stay_finite(self):
        self.assertEqual(to_json_value(Decimal("12.50")), 12.5)
        for not_finite in (float("nan"), float("inf"), -float("inf"), Decimal("NaN"), Decimal("Infinity")):
            self.assertIsNone(to_json_value(not_finite), not_finite)
        self.assertEqual(dumps({"x": float("nan")}), '{"x": null}')
        self.assertEqual((to_json_value(3), to_json_value(True), to_json_value(None)), (3, True, None))

    def test_bytes_recordsets_sets_and_unknown_values(self):
        self.assertEqual(to_json_value(b"\x00\x01\xff"), {"binary": True, "bytes": 3})
        self.assertEqual(to_json_value(bytearray(5)), {"binary": True, "bytes": 5})
        partners = self.env["res.partner"].search([], limit=2)
        self.assertEqual(to_json_value(partners), {"model": "res.partner", "ids": partners.ids})
        self.assertEqual(to_json_value(self.env["sale.order"]), {"model": "sale.order", "ids": []})
        self.assertEqual(to_json_value({3, 10, 2}), [2, 3, 10])
        self.assertEqual(to_json_value(frozenset({"b", 1})), ["b", 1], "mixed kinds in the order of their JSON text")
        self.assertEqual(to_json_value((1, (2, 3))), [1, [2, 3]])
        self.assertEqual(to_json_value(timedelta(hours=1)), "1:00:00", "anything else: its text")
        self.assertEqual(to_json_value({1: "a", (1, 2): "b", None: "c"}), {"1": "a", "[1, 2]": "b", "null": "c"})

    def test_cycles_and_depth_never_raise(self):
        loop = []
        loop.append(loop)
        self.assertEqual(to_json_value({"a": loop}), {"a": [{"circular": True}]})
        shared = [1]
        self.assertEqual(to_json_value([shared, shared]), [[1], [1]], "a value met twice is not a cycle")
        deep = current = []
        for _ in range(500):
            current.append([])
            current = current[0]
        self.assertIn("too_deep", dumps(deep))

    def test_values_of_read_follow_their_fields(self):
        partner = self.env["res.partner"].create({"name": "Json Person", "image_1920": png(), "comment":
                                                  "<p>Call <b>after</b> 5pm</p><p>Door B</p>",
                                                  "parent_id": self.env.ref("base.res_partner_12").id})
        fields = ["is_company", "email", "parent_id", "user_id", "comment", "image_128", "category_id",
                  "create_date", "color"]
        [row] = json_rows(partner, partner.read(fields))
        self.assertIs(row["is_company"], False, "a boolean's False stays false")
        self.assertIsNone(row["email"], "an empty char is null")
        self.assertEqual(row["parent_id"], [partner.parent_id.id, partner.parent_id.display_name])
        self.assertIsNone(row["user_id"], "an empty many2one is null")
        self.assertNotIn("<", row["comment"])
        self.assertIn("after", row["comment"])
        self.assertIn("Door B", row["comment"])
        self.assertEqual(row["image_128"], {"binary": True, "bytes": len(base64.b64decode(partner.image_128))})
        self.assertEqual(row["category_id"], [])
        self.assertTrue(row["create_date"].endswith("+00:00"), row["create_date"])
        self.assertEqual(row["color"], 0, "zero is a value, not an empty one")
        fields_of = partner._fields
        self.assertEqual(to_json_value(partner.parent_id, fields_of["parent_id"]), row["parent_id"])
        self.assertIsNone(to_json_value(partner.user_id, fields_of["user_id"]))
        self.assertEqual(to_json_value("<!-- only a comment -->", fields_of["comment"]), "")
        self.assertEqual(to_json_value(b"not base64!", fields_of["image_128"]), {"binary": True, "bytes": 11})
        self.assertIs(to_json_value(None, fields_of["is_company"]), False)

    def test_dumps_writes_strict_json_of_anything(self):
        text = dumps({"when": datetime(2026, 11, 30, 10, 0), "records": self.env.user, "nan": math.nan,
                      "file": b"abc", "ids": {2, 1}, "amount": Decimal("1.10"), "name": "Zoë"})
        self.assertEqual(strict_json(text), {"when": "2026-11-30T10:00:00+00:00",
                                             "records": {"model": "res.users", "ids": [self.env.uid]},
                                             "nan": None, "file": {"binary": True, "bytes": 3}, "ids": [1, 2],
                                             "amount": 1.1, "name": "Zoë"})

    def test_plain_json_is_written_as_it_is_and_reads_as_the_walk_writes_it(self):
        """``dumps``' fast path (a value that is plain JSON already) gives the
        JSON the walk (``to_json_value``) gives, on values on both sides of
        each rule: every such value is written, read back, and compared with
        the walk's text read back."""
        loop = {"name": "x"}
        loop["self"] = loop
        nested = lambda depth: [nested(depth - 1)] if depth else []  # noqa: E731
        wide = {"records": [{"id": i, "name": f"Partner {i}", "tags": [i, i + 1]} for i in range(60)]}
        values = [
            {"model": "res.partner", "records": [{"id": 1, "name": "Azure", "amount": 1.5, "ok": True}]},
            [1, "two", 3.0, None, False, {"a": []}], "Zoë", 7, -0.0, (1, (2, 3)),
            {1: "a", False: "b", None: "c", 2.5: "d"}, {(1, 2): "tuple key"}, {"nan": float("nan")},
            {"inf": float("inf")}, {"when": date(2026, 12, 4)}, {"set": {3, 1}}, {"bytes": b"ab"},
            {"decimal": Decimal("2.50")}, loop, nested(99), nested(100), nested(400), wide,
            {"markup": fields.Html().convert_to_cache("<p>x</p>", self.env["res.partner"])},
            {"records": self.env.user}, {"kind": Kind.SALE, Kind.SALE: 1}, Text("x"), Whole(5), Real(1.0),
            {"kind": Kind.SALE, "on": date(2026, 12, 4)},  # the same value beside one the walk must convert
        ]
        for value in values:
            with self.subTest(value=repr(value)[:60]):
                self.assertEqual(strict_json(dumps(value)), strict_json(json.dumps(to_json_value(value))))
        self.assertIn("too_deep", dumps(nested(100)), "a value nested deeper than MAX_DEPTH is cut, as before")
        self.assertEqual(strict_json(dumps({"kind": Kind.SALE, "on": date(2026, 12, 4)})),
                         {"kind": "sale", "on": "2026-12-04"}, "a str Enum is its value, whichever way it is written")
        self.assertEqual(dumps([Text("x"), Whole(5), Real(1.0)]), '["x", 5, 1.0]')
        self.assertEqual(dumps(nested(99)).count("["), 100)
        self.assertEqual(dumps({"b": 1, "a": [1]}, sort_keys=True, separators=(",", ":")), '{"a":[1],"b":1}')
        self.assertEqual(dumps({1: "x", "a": "y"}, sort_keys=True), '{"1": "x", "a": "y"}',
                         "keys of mixed kinds are sorted as text, as the walk sorts them")


@tagged("post_install", "-at_install")
class TestValuesThatAreNotJson(AgenticSetupMixin, HttpCase):
    """Case BR-20, through the chat routes, the scripted model and Odoo."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.user = new_test_user(cls.env, "br20_user", groups="base.group_user,sales_team.group_sale_manager,"
                                 "stock.group_stock_manager,base.group_partner_manager")
        cls.partner = cls.env["res.partner"].create({"name": "BR20 Person", "image_1920": png()})
        product = cls.env["product.product"].create({"name": "BR20 Widget", "is_storable": True, "list_price": 50})
        cls.order = cls.env["sale.order"].create({
            "partner_id": cls.partner.id, "validity_date": date(2026, 12, 15),
            "note": "<p>Deliver <b>before</b> noon</p><p>Gate 2</p>",
            "order_line": [Command.create({"product_id": product.id, "product_uom_qty": 2})]})
        cls.order.write({"user_id": False, "date_order": datetime(2026, 11, 30, 10, 0)})
        stock = cls.env.ref("stock.stock_location_stock")
        customers = cls.env.ref("stock.stock_location_customers")
        cls.env["stock.quant"]._update_available_quantity(product, stock, 3)
        cls.picking = cls.env["stock.picking"].create({
            "picking_type_id": cls.env.ref("stock.picking_type_out").id, "location_id": stock.id,
            "location_dest_id": customers.id, "move_ids": [Command.create({
                "product_id": product.id, "product_uom_qty": 5, "location_id": stock.id,
                "location_dest_id": customers.id})]})
        cls.picking.action_confirm()
        cls.picking.action_assign()
        values = cls.env["agentic.ai.tool"].create({
            "name": "br20_values", "description": "Odd values of an order.", "tool_type": "python_code",
            "risk_level": "low",
            "parameter_schema": json.dumps({"type": "object", "properties": {"order_id": {"type": "integer"}}}),
            "python_code": ("order = env['sale.order'].browse(params['order_id'])\n"
                            "result = {'orders': order, 'date_order': order.date_order, 'image': "
                            "order.partner_id.image_128, 'nan': float('nan'), 'ids': {3, 1, 2}, 'pair': (1, 2)}")})
        cls.agent.tool_ids = [Command.link(values.id)]
        # The values of these calls, not where they came from, are under test (issue 23: tests/test_provenance.py).
        cls.agent.confirm_after_untrusted_content = False

    def rpc_text(self, route, params):
        """The raw JSON text a route answers, checked to be strict JSON without an error."""
        response = self.url_open(route, json={"jsonrpc": "2.0", "method": "call", "id": 1, "params": params},
                                 timeout=60)
        self.assertEqual(response.status_code, 200, response.text[:500])
        answer = strict_json(response.text)
        self.assertNotIn("error", answer, response.text[:2000])
        return answer["result"]

    def test_br20_values_that_are_not_json_reach_model_thread_log_and_routes(self):
        order, picking, partner = self.order, self.picking, self.partner
        self.script(
            tool_call("odoo_method_call", {"model": "sale.order", "record_ids": [order.id],
                                           "method": "action_confirm"}, "call_confirm"),
            tool_call("odoo_method_call", {"model": "stock.picking", "record_ids": [picking.id],
                                           "method": "button_validate"}, "call_validate"),
            tool_call("br20_values", {"order_id": order.id}, "call_values"),
            tool_call("odoo_search_read", {"model": "sale.order", "domain": [["id", "=", order.id]], "fields": [
                "date_order", "validity_date", "amount_total", "partner_id", "note", "state", "user_id"]},
                "call_order"),
            tool_call("odoo_search_read", {"model": "res.partner", "domain": [["id", "=", partner.id]],
                                           "fields": ["name", "image_128", "is_company", "email"]}, "call_partner"),
            {"content": "Done."},
        )
        self.authenticate("br20_user", "br20_user")
        thread = self.rpc_text("/agentic_ai/thread/create", {"agent_id": self.agent.id})
        self.assertTrue(thread["create_date"].endswith("+00:00"), thread["create_date"])
        sent = self.rpc_text("/agentic_ai/chat/send", {"thread_id": thread["id"], "message": "Show me order data"})
        self.assertEqual((sent["result"]["state"], sent["result"]["error"]), ("completed", None), sent["result"])
        self.assertEqual(order.state, "sale")
        self.assertFalse(order.user_id, "the order has no salesperson")

        # What the model read, over HTTP, for each call.
        seen = {m["tool_call_id"]: m["content"] for m in self.scenario.chat_requests()[-1]["messages"]
                if m["role"] == "tool"}
        confirmed = json.loads(seen["call_confirm"])
        self.assertIs(confirmed["result"], True)
        validated = json.loads(seen["call_validate"])
        self.assertTrue(validated["needs_user_action"], validated)
        self.assertEqual(validated["action"]["res_model"], "stock.backorder.confirmation")
        values = json.loads(seen["call_values"].split("\n", 1)[1])  # after the label of code the addon does not own
        confirmed_on = f"{fields.Datetime.to_string(order.date_order).replace(' ', 'T')}+00:00"  # set by confirming
        expected_values = {"orders": {"model": "sale.order", "ids": [order.id]}, "date_order": confirmed_on,
                           "image": {"binary": True, "bytes": len(partner.image_128)},  # bytes without a field
                           "nan": None, "ids": [1, 2, 3], "pair": [1, 2]}
        self.assertEqual(values, expected_values)
        [order_row] = [json.loads(line) for line in seen["call_order"].splitlines() if line.startswith("{")]
        self.assertEqual(order_row, {
            "id": order.id, "date_order": confirmed_on, "validity_date": "2026-12-15",
            "amount_total": order.amount_total, "partner_id": [partner.id, partner.display_name],
            "note": "Deliver *before* noon\nGate 2", "state": "sale", "user_id": None})
        [partner_row] = [json.loads(line) for line in seen["call_partner"].splitlines() if line.startswith("{")]
        image = {"binary": True, "bytes": len(base64.b64decode(partner.image_128))}  # the picture's size
        self.assertEqual(partner_row, {"id": partner.id, "name": "BR20 Person", "image_128": image,
                                       "is_company": False, "email": None})
        self.assertNotIn(partner.image_128.decode()[:40], json.dumps(seen), "never the picture's base64")

        # The thread's rows and the execution log hold the same JSON.
        rows = self.env["agentic.ai.thread.message"].search([("thread_id", "=", thread["id"]),
                                                             ("role", "=", "tool_result")])
        stored = {row.tool_call_id: strict_json(row.tool_result_data) for row in rows}
        self.assertEqual(stored["call_values"], expected_values)
        self.assertEqual(stored["call_order"]["records"], [order_row])
        self.assertEqual(stored["call_partner"]["records"], [partner_row])
        self.assertIs(stored["call_confirm"]["result"], True)
        logs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread["id"]),
                                                             ("action_type", "=", "tool_execution")])
        logged = {log.tool_call_id: strict_json(log.output_data) for log in logs}
        self.assertEqual(set(logged), set(stored))
        self.assertTrue(all(log.success for log in logs), logs.mapped("error_message"))
        self.assertEqual(logged["call_values"], expected_values)
        self.assertEqual(logged["call_order"]["records"], [order_row])

        # The routes: the messages a client reads back.
        listed = self.rpc_text("/agentic_ai/thread/messages", {"thread_id": thread["id"]})
        self.assertTrue(all(m["create_date"].endswith("+00:00") for m in listed["messages"]))
        self.assertIsNone(listed["messages"][0]["tool_name"], "a user message has no tool: null, not false")
