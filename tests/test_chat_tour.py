"""The chat in a real browser (issue 11 points 1, 2 and 5): Odoo's tours
in headless Chromium drive static/src/js/chat_widget.js against the real
routes and the scripted LLM server (static/tests/tours/chat_tour.js)."""
import re

from odoo.tests import HttpCase, new_test_user, tagged

from .common import AgenticSetupMixin, tool_call

QUOTE = "Create a quotation for Azure Interior: 3 Office Chair Black and 1 Large Cabinet"


@tagged("post_install", "-at_install")
class TestChatTour(AgenticSetupMixin, HttpCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_agentic()
        cls.salesperson = new_test_user(
            cls.env, "chat_sales", groups="base.group_user,agentic_ai.group_agentic_ai_user,"
                                          "sales_team.group_sale_salesman,base.group_partner_manager")

    def thread(self):
        return self.env["agentic.ai.thread"].search([("user_id", "=", self.salesperson.id)], limit=1)

    def test_salesperson_streams_a_quotation_with_its_tool_steps(self):
        words = " ".join(f"w{i}" for i in range(25))

        def answer(request):
            result = request["messages"][-1]["content"]
            name = re.search(r"S\d{5}", result)
            return {"content": f"Your quotation is ready: {name and name.group(0)}. {words}", "chunk_delay": 0.12}

        self.script(tool_call("create_quotation", {"partner": "Azure Interior", "lines": [
            {"product": "Office Chair Black", "quantity": 3}, {"product": "Large Cabinet", "quantity": 1}]},
            "call_quote"), answer)
        before = self.env["sale.order"].search([]).ids
        self.start_tour("/odoo", "agentic_ai_chat_quotation", login="chat_sales", timeout=120)
        order = self.env["sale.order"].search([("id", "not in", before)])
        self.assertEqual(len(order), 1, "the agent created one quotation")
        self.assertEqual(order.partner_id.name, "Azure Interior")
        self.assertEqual(sorted(order.order_line.mapped("product_uom_qty")), [1.0, 3.0])
        thread = self.thread()
        self.assertEqual(thread.state, "completed")
        self.assertEqual(thread.name, QUOTE[:60].strip(), "a new conversation is named after its first message")
        self.assertEqual(thread.message_ids.filtered(lambda m: m.role == "user").mapped("content"), [QUOTE],
                         "the message was sent once, without the line Shift+Enter broke")
        stream = self.scenario.requests[-1]["stream"]
        self.assertEqual(stream["sent"], stream["total"], "the answer streamed to its end")

    def test_approval_and_rejection_through_the_confirmation_bar(self):
        self.agent.require_confirmation = "destructive"
        first = self.env["res.partner"].create({"name": "Tour Partner A"})
        second = self.env["res.partner"].create({"name": "Tour Partner B"})
        self.script(tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [first.id]}, "call_a"),
                    {"content": "Deleted Tour Partner A."},
                    tool_call("odoo_unlink", {"model": "res.partner", "record_ids": [second.id]}, "call_b"),
                    {"content": "Understood, I kept Tour Partner B."})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_confirmation", login="chat_sales",
                        timeout=120)
        self.assertFalse(first.exists(), "the approved deletion ran")
        self.assertTrue(second.exists(), "the rejected deletion did not run")
        self.assertIn("still a customer", self.scenario.chat_requests()[-1]["messages"][-1]["content"],
                      "the model was told the reason of the rejection")
        responses = self.thread().message_ids.filtered(lambda m: m.role == "confirmation_response")
        self.assertEqual(len(responses), 2)

    def test_stop_button_interrupts_the_run(self):
        words = " ".join(f"w{i}" for i in range(200))
        self.script({"content": words, "chunk_delay": 0.1})
        self.start_tour("/odoo/action-agentic_ai.chat_action", "agentic_ai_chat_stop", login="chat_sales",
                        timeout=120)
        thread = self.thread()
        self.assertEqual(thread.state, "interrupted", "the run stopped when the user pressed Stop")
        stream = self.scenario.requests[-1]["stream"]
        self.assertLess(stream["sent"], stream["total"], "the provider's answer was cut short")
        self.assertEqual(len(self.scenario.chat_requests()), 1, "the stopped turn was not run again")

    def test_owner_renames_and_archives_a_thread_and_the_list_hides_it(self):
        thread = self.agent.with_user(self.salesperson).start_thread(name="old name")
        kept = self.agent.with_user(self.salesperson).start_thread(name="kept")
        thread.with_user(self.salesperson).write({"name": "new name"})
        thread.with_user(self.salesperson).write({"active": False})
        self.authenticate("chat_sales", "chat_sales")
        listed = self.make_jsonrpc_request("/agentic_ai/thread/list", {})
        self.assertEqual([t["id"] for t in listed], [kept.id], "an archived conversation is not listed")
        self.assertEqual((thread.name, thread.active), ("new name", False))
        answer = self.make_jsonrpc_request("/agentic_ai/thread/messages", {"thread_id": thread.id})
        self.assertEqual(answer["thread"]["name"], "new name", "an archived conversation can still be opened")
