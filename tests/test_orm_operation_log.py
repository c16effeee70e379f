"""ORM operations in the audit log (spec 000 §3.7 ``orm_operation``, issue 27
point 4): each create, write and unlink a kept tool call made, its business
code's side effects included, is an ``orm_operation`` row after the call's
row (model, operation, fields, record ids), written with the step's other
rows in one INSERT, hash-chained with them, readable as the call's row is,
and shown under the call in the log's form. Runs through the real loop,
the scripted LLM over HTTP and Odoo's sales and stock code."""
import json
import threading

from odoo.tests import new_test_user, tagged

from ..engine.guard.operation_guard import MAX_LOGGED_IDS, MAX_LOGGED_OPERATIONS, OperationGuard
from ..engine.guard.safety_rules import RuleSet
from .common import ACCOUNTANT_GROUPS, AgenticCase, tool_call
from .test_audit_chain import ChainMixin


@tagged("post_install", "-at_install")
class TestOrmOperationLog(ChainMixin, AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_minute", "1000")
        cls.seller = new_test_user(cls.env, "orm_log_seller",
                                   groups=f"{ACCOUNTANT_GROUPS},agentic_ai.group_agentic_ai_user")
        cls.other = new_test_user(cls.env, "orm_log_other", groups="base.group_user,agentic_ai.group_agentic_ai_user")
        cls.cabinet = cls.env.ref("product.product_product_6")
        cls.Log = cls.env["agentic.ai.execution.log"]

    def sell_and_confirm(self):
        """One turn: create a quotation, confirm it (two steps), answer."""
        self.script(tool_call("create_quotation", {"partner": "Gemini Furniture",
                                                   "lines": [{"product": self.cabinet.id, "quantity": 2}]}, "q1"),
                    lambda request: tool_call("confirm_sale_order", {
                        "order": request["messages"][-1]["content"].split('"name": "')[1].split('"')[0]}, "c1"),
                    {"content": "Sold."})
        statements = []
        current = threading.current_thread()
        hooks = getattr(current, "query_hooks", ())
        current.query_hooks = (*hooks, lambda cr, *_args: statements.append(cr._obj.query.decode()))
        try:
            thread, result = self.run_agent("Sell 2 Large Cabinet to Gemini Furniture and confirm", user=self.seller)
        finally:
            current.query_hooks = hooks
        self.assertEqual(result.state, "completed", result.reply)
        return thread, statements

    def test_a_calls_writes_and_its_side_effects_are_logged_under_it(self):
        thread, statements = self.sell_and_confirm()
        order = self.env["sale.order"].search([("partner_id", "=", self.env.ref("base.res_partner_3").id),
                                               ("create_uid", "=", self.seller.id)])
        self.assertEqual(order.state, "sale")
        rows = thread.execution_log_ids.sorted("id")
        confirm = rows.filtered(lambda row: row.action_type == "tool_execution"
                                and row.tool_name == "confirm_sale_order")
        operations = confirm.orm_operation_ids
        self.assertTrue(operations)
        self.assertEqual(set(operations.mapped("action_type")), {"orm_operation"})
        self.assertEqual(set(operations.mapped("tool_call_id")), {"c1"})
        self.assertEqual(set(operations.mapped("tool_name")), {"confirm_sale_order"})
        after = rows.filtered(lambda row: row.id > confirm.id)
        self.assertEqual(operations, after[:len(operations)], "right after the call's row, in the order done")
        kinds = {(row.model_name, json.loads(row.input_data)["operation"]) for row in operations}
        self.assertIn(("sale.order", "write"), kinds)
        self.assertIn(("stock.picking", "create"), kinds, "the business code's side effect")
        state_write = operations.filtered(lambda row: row.model_name == "sale.order"
                                          and "state" in json.loads(row.input_data)["fields"])
        self.assertEqual(json.loads(state_write.record_ids), [order.id])
        self.assertEqual(json.loads(state_write.input_data)["count"], 1)
        quotation = rows.filtered(lambda row: row.tool_name == "create_quotation"
                                  and row.action_type == "tool_execution")
        self.assertIn("sale.order", quotation.orm_operation_ids.mapped("model_name"))
        self.assertFalse(quotation.orm_operation_ids & operations)

        inserts = [s for s in statements if s.startswith('INSERT INTO "agentic_ai_execution_log"')]
        steps = len(rows.filtered(lambda row: row.action_type == "llm_call"))
        self.assertEqual(len(inserts), steps, "one INSERT a step, the ORM operations' rows with it")

        self.seal()
        self.assertTrue(all(operations.mapped("chain_seq")), "in the hash chain")
        self.assertTrue(self.verify()["ok"])

    def test_readable_as_the_calls_row_is(self):
        thread, _statements = self.sell_and_confirm()
        call = thread.execution_log_ids.filtered(lambda row: row.tool_call_id == "c1"
                                                 and row.action_type == "tool_execution")
        mine = self.Log.with_user(self.seller).browse(call.id)
        self.assertEqual(mine.orm_operation_ids, call.orm_operation_ids)
        self.assertEqual(self.Log.with_user(self.seller).search_count([("id", "in", call.orm_operation_ids.ids)]),
                         len(call.orm_operation_ids))
        self.assertEqual(self.Log.with_user(self.other).search_count([("id", "in", call.orm_operation_ids.ids)]), 0,
                         "another user reads neither the call nor its operations")
        operator = new_test_user(self.env, "orm_log_operator",
                                 groups="base.group_user,agentic_ai.group_agentic_ai_operator")
        self.assertTrue(thread.with_user(operator).has_access("read"), "operators read every conversation")
        self.assertEqual(self.Log.with_user(operator).get_thread_timeline(thread.id), [],
                         "but not another user's log rows, its ORM operations included, through the timeline either")
        self.assertTrue(self.Log.with_user(self.seller).get_thread_timeline(thread.id))
        arch = self.Log.get_views([(False, "form")])["views"]["form"]["arch"]
        self.assertIn('name="orm_operation_ids"', arch)

    def test_a_call_rolled_back_logs_no_operation(self):
        self.script(tool_call("confirm_sale_order", {"order": "S99999999"}, "bad"), {"content": "No such order."})
        thread, result = self.run_agent("Confirm order S99999999", user=self.seller)
        self.assertEqual(result.state, "completed")
        self.assertFalse(thread.execution_log_ids.filtered(lambda row: row.action_type == "orm_operation"))

    def test_rows_are_bounded(self):
        """Past MAX_LOGGED_OPERATIONS kinds, one row counts the rest; past
        MAX_LOGGED_IDS ids a row keeps their count."""
        guard = OperationGuard("t", RuleSet(()), frozenset())
        partners = self.env["res.partner"].browse(range(1, MAX_LOGGED_IDS + 501))
        guard.note_done(partners, "write", ["name"])
        guard.note_done(partners[:3], "write", ["name"])  # the same records again: counted once
        for index in range(MAX_LOGGED_OPERATIONS + 49):
            guard.note_done(partners[:1], "write", [f"x_{index}"])
        rows = guard.operations_done()
        self.assertEqual(len(rows), MAX_LOGGED_OPERATIONS + 1)
        self.assertEqual(rows[0]["input_data"], {"operation": "write", "fields": ["name"],
                                                 "count": MAX_LOGGED_IDS + 500, "more_ids": 500})
        self.assertEqual(len(rows[0]["record_ids"]), MAX_LOGGED_IDS)
        self.assertEqual(rows[-1]["input_data"], {"more_operations": 50})
