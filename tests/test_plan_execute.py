"""Plan-and-Execute and Hybrid through the agent loop (spec 000 §4.3, §4.4,
§4.8; issue 12 points 2, 3 and 6, cases BR-22 and BR-23): the scripted LLM
answers the planner, each step, the replanner and the synthesis over real
HTTP; every step is a real tool call; the tests assert the plan's records
and the state Odoo itself holds."""
import json

from odoo.tests import new_test_user, tagged

from ..engine.runtime import AgentRuntime
from .common import ACCOUNTANT_GROUPS, AgenticCase, observation_records, tool_call

GOAL = "Buy 10 Large Cabinet from Wood Corner, receive them, then sell 4 to Gemini Furniture and invoice them"
FOUR_STEPS = [
    {"description": "Create a purchase order for 10 Large Cabinet from Wood Corner", "tool": "create_purchase_order"},
    {"description": "Confirm the purchase order and receive the 10 Large Cabinet", "tool": "approve_purchase_order"},
    {"description": "Create and confirm a sale of 4 Large Cabinet to Gemini Furniture", "tool": "create_quotation"},
    {"description": "Invoice the sale to Gemini Furniture", "tool": "create_invoice"},
]


def system_of(request):
    messages = request.get("messages") or []
    return messages[0]["content"] if messages and messages[0]["role"] == "system" else ""


def is_planner(request):
    return system_of(request).startswith("You are the planner") and "ran into a problem" not in system_of(request)


def is_replanner(request):
    return "ran into a problem" in system_of(request)


def is_synthesis(request):
    return "The plan for the user's request is finished" in system_of(request)


def step(number):
    """Match the call that does step ``number`` (any plan length)."""
    return lambda request: f"Do step {number} of " in system_of(request)


def observed(request):
    """The JSON data of the tool observation the request ends with."""
    return observation_records(request)[-1]


def plan_reply(steps, before="", after=""):
    return {"content": f"{before}{json.dumps(steps)}{after}"}


class PlanCase(AgenticCase):
    """Set-up and helpers of the plan tests (here and tests/test_planner.py)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.agent.write({"execution_mode": "plan_and_execute", "max_replanning": 2})
        # Many LLM calls in one test transaction, whose clock stands still: no per-minute limit here.
        cls.env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_minute", "1000")
        cls.user = new_test_user(cls.env, "plan_user", groups=ACCOUNTANT_GROUPS)
        cls.cabinet = cls.env.ref("product.product_product_6")  # Large Cabinet
        cls.wood_corner = cls.env.ref("base.res_partner_1")
        cls.gemini = cls.env.ref("base.res_partner_3")
        cls.vendor_price = cls.env["product.supplierinfo"].create({
            "partner_id": cls.wood_corner.id, "product_tmpl_id": cls.cabinet.product_tmpl_id.id, "price": 250.0})

    # ------------------------------------------------------------ helpers
    def turn(self, message=GOAL, thread=None, user=None, **runtime):
        """Run one turn as the plan user; returns ``(thread, result)``."""
        user = user or self.user
        thread = thread or self.new_thread(user=user)
        result = AgentRuntime(self.agent.with_user(user), thread.with_user(user), **runtime).run_turn(message)
        return thread, result

    def plan_of(self, thread):
        return thread.sudo().plan_ids[:1]

    def planner_requests(self):
        return [r for r in self.scenario.chat_requests() if is_planner(r)]

    def count(self, model, domain):
        return self.env[model].sudo().search_count(domain)

    def flow_steps(self, seen, post=True):
        """The scripted calls of the 8 steps of GOAL, in order, each built
        from what the step before returned; ``seen`` collects names."""
        def approve(request):
            seen["purchase"] = observed(request)["name"]
            return tool_call("approve_purchase_order", {"order": seen["purchase"]})

        def receive(request):
            return tool_call("odoo_method_call", {"model": "stock.picking", "method": "button_validate",
                                                  "record_ids": [r["id"] for r in observed(request)["receipts"]]})

        def confirm(request):
            seen["sale"] = observed(request)["name"]
            return tool_call("confirm_sale_order", {"order": seen["sale"]})

        def deliver(request):
            return tool_call("odoo_method_call", {"model": "stock.picking", "method": "button_validate",
                                                  "record_ids": [d["id"] for d in observed(request)["deliveries"]]})

        def post_it(request):
            seen["invoice"] = observed(request)["invoices"][0]["id"]
            return tool_call("post_invoice", {"invoice": seen["invoice"]})

        calls = [
            tool_call("create_purchase_order", {"vendor": "Wood Corner",
                                                "lines": [{"product": self.cabinet.id, "quantity": 10}]}),
            approve, receive,
            tool_call("create_quotation", {"partner": "Gemini Furniture",
                                           "lines": [{"product": "Large Cabinet", "quantity": 4}]}),
            confirm, deliver,
            lambda request: tool_call("create_invoice", {"order": seen["sale"]}),
            post_it,
        ]
        return calls if post else calls[:-1]

    def eight_step_plan(self):
        return [{"description": d, "tool": t} for d, t in (
            ("Create a purchase order for 10 Large Cabinet from Wood Corner", "create_purchase_order"),
            ("Confirm the purchase order", "approve_purchase_order"),
            ("Receive the 10 Large Cabinet", "odoo_method_call"),
            ("Create a quotation for 4 Large Cabinet to Gemini Furniture", "create_quotation"),
            ("Confirm the sale order", "confirm_sale_order"),
            ("Deliver the 4 Large Cabinet", "odoo_method_call"),
            ("Create the invoice of the sale", "create_invoice"),
            ("Post the invoice", "post_invoice"))]

    def script_flow(self, seen, post=True):
        plan = self.eight_step_plan() if post else self.eight_step_plan()[:-1]
        turns = [(plan_reply(plan), is_planner)]
        turns += [(call, step(n)) for n, call in enumerate(self.flow_steps(seen, post), start=1)]
        turns.append(({"content": "Bought, received, sold, delivered and invoiced."}, is_synthesis))
        self.script(*turns)



@tagged("post_install", "-at_install")
class TestPlanExecute(PlanCase):

    # -------------------------------------------------------- acceptance
    def test_purchase_receive_sell_invoice_plan(self):
        """Issue 12 point 6: the plan spans purchase, stock, sale and
        accounting; Odoo's own states say it all happened."""
        before = self.cabinet.with_company(self.env.company).qty_available
        seen, events = {}, []
        self.script_flow(seen)
        thread, result = self.turn(emit=lambda event, data: events.append((event, data)))
        self.assertEqual(result.state, "completed", result.reply)
        plan = self.plan_of(thread)
        self.assertEqual(plan.state, "completed")
        self.assertGreaterEqual(len(plan.step_ids), 4)
        self.assertEqual(set(plan.step_ids.mapped("state")), {"completed"})
        self.assertEqual(plan.progress, 100)
        purchase = self.env["purchase.order"].search([("name", "=", seen["purchase"])])
        self.assertEqual((purchase.state, purchase.picking_ids.state, purchase.order_line.qty_received),
                         ("purchase", "done", 10.0))
        sale = self.env["sale.order"].search([("name", "=", seen["sale"])])
        self.assertEqual((sale.state, sale.picking_ids.state, sale.order_line.qty_delivered), ("sale", "done", 4.0))
        self.assertEqual(sale.invoice_ids.mapped("state"), ["posted"])
        self.assertEqual(sale.invoice_status, "invoiced")
        self.cabinet.invalidate_recordset()
        self.assertAlmostEqual(self.cabinet.with_company(self.env.company).qty_available, before + 6)
        # The user saw the plan before anything ran, then its steps' states live.
        names = [event for event, _data in events if event != "message"]  # the user's message comes first
        self.assertEqual(names[0], "plan_update")
        self.assertLess(names.index("plan_update"), names.index("tool_call"))
        updates = [data["plan"] for event, data in events if event == "plan_update"]
        self.assertEqual([s["state"] for s in updates[0]["steps"]], ["pending"] * 8)
        self.assertEqual([s["state"] for s in updates[1]["steps"]], ["running"] + ["pending"] * 7)
        self.assertEqual(updates[-1]["state"], "completed")
        self.assertEqual(thread.mode_used, "plan_and_execute")
        self.assertEqual(result.reply, "Bought, received, sold, delivered and invoiced.")
        logs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id)])
        self.assertEqual(len(logs.filtered(lambda r: r.action_type == "plan_generated")), 1)
        self.assertEqual(len(logs.filtered(lambda r: r.action_type == "tool_execution" and r.success)), 8)

    def test_turn_bound_ends_the_plan_with_its_progress(self):
        """Issue 12 point 4 in Plan-and-Execute: the per-turn LLM call bound
        stops the plan (planner + 2 steps = 3 calls), which fails with what
        was done and not."""
        self.agent.max_llm_calls = 3
        self.script((plan_reply(FOUR_STEPS), is_planner),
                    *(({"content": f"Step {n} noted."}, step(n)) for n in range(1, 3)))
        thread, result = self.turn()
        plan = self.plan_of(thread)
        self.assertEqual((result.state, plan.state), ("completed", "failed"))
        self.assertIn("limit of 3 calls to the AI model", result.reply)
        self.assertIn("Plan: 2 of 4 steps done (50%)", result.reply)
        self.assertEqual(plan.step_ids.sorted("sequence").mapped("state"),
                         ["completed", "completed", "failed", "pending"])
        self.assertEqual(len(self.scenario.chat_requests()), 3)

    def test_no_plan_left_open_when_the_provider_fails(self):
        self.script(({"status": 500, "error": "down"}, is_planner), ({"status": 500, "error": "down"}, is_planner))
        thread, result = self.turn()
        self.assertEqual(result.state, "error")
        self.assertEqual(self.plan_of(thread).state, "failed")

    # ------------------------------------------------------------ BR-23
    BR23_PLAN = [
        {"description": "Create a purchase order for 10 Large Cabinet from Wood Corner",
         "tool": "create_purchase_order"},
        {"description": "Confirm the purchase order and receive the cabinets", "tool": "odoo_method_call"},
        {"description": "Sell 4 Large Cabinet to Gemini Furniture and confirm the sale", "tool": "confirm_sale_order"},
        {"description": "Deliver and invoice the sale", "tool": "create_invoice"},
    ]

    def br23_turns(self, seen):
        """The scripted planner and steps 1–3 of BR-23's plan: steps 1 and 2
        (purchase, then confirm and receive in two rounds) succeed, step 3
        fails (no customer of that name)."""
        calls = self.flow_steps(seen)
        failing = tool_call("create_quotation", {"partner": "Gemni Furnitur XYZ",
                                                 "lines": [{"product": "Large Cabinet", "quantity": 4}]})
        return [(plan_reply(self.BR23_PLAN), is_planner), (calls[0], step(1)), (calls[1], step(2)),
                (calls[2], step(2)), (failing, step(3))], failing

    def sale_turns(self, seen, number):
        """Sell, confirm, deliver and invoice as steps ``number`` and ``number + 1``."""
        def confirm(request):
            seen["sale"] = observed(request)["name"]
            return tool_call("confirm_sale_order", {"order": seen["sale"]})

        deliver = self.flow_steps(seen)[5]
        return [(tool_call("create_quotation", {"partner": "Gemini Furniture",
                                                "lines": [{"product": "Large Cabinet", "quantity": 4}]}), step(number)),
                (confirm, step(number)), (deliver, step(number + 1)),
                (lambda request: tool_call("create_invoice", {"order": seen["sale"]}), step(number + 1))]

    def assert_purchase_once(self, seen, purchases):
        self.assertEqual(self.count("purchase.order", [("partner_id", "=", self.wood_corner.id)]), purchases + 1,
                         "exactly 1 purchase order")
        purchase = self.env["purchase.order"].search([("name", "=", seen["purchase"])])
        self.assertEqual(purchase.picking_ids.mapped("state"), ["done"], "exactly 1 done receipt")

    def test_BR_23i_replan_does_not_redo_done_steps(self):
        seen = {}
        turns, _failing = self.br23_turns(seen)
        corrected = {"description": "Sell 4 Large Cabinet to Gemini Furniture (exact name) and confirm the sale",
                     "tool": "confirm_sale_order"}
        new_plan = [self.BR23_PLAN[0], self.BR23_PLAN[1], corrected, self.BR23_PLAN[3]]
        self.script(*turns, (plan_reply(new_plan, "New plan:\n```json\n", "\n```"), is_replanner),
                    *self.sale_turns(seen, 4), ({"content": "Done."}, is_synthesis))
        purchases = self.count("purchase.order", [("partner_id", "=", self.wood_corner.id)])
        thread, result = self.turn()
        plan = self.plan_of(thread)
        self.assertEqual((result.state, plan.state, plan.replan_count), ("completed", "completed", 1), result.reply)
        self.assert_purchase_once(seen, purchases)
        self.assertEqual(plan.step_ids.sorted("sequence").mapped("state"),
                         ["completed", "completed", "skipped", "completed", "completed"])
        sale = self.env["sale.order"].search([("name", "=", seen["sale"])])
        self.assertEqual((sale.state, len(sale.invoice_ids)), ("sale", 1))
        self.assertEqual(self.count("sale.order", [("partner_id", "=", self.gemini.id),
                                                   ("create_uid", "=", self.user.id)]), 1)
        self.assertEqual(len([r for r in self.scenario.chat_requests() if is_replanner(r)]), 1)

    def assert_failed_after_two_replans(self, thread, result, purchases, seen):
        plan = self.plan_of(thread)
        self.assertEqual((result.state, plan.state, plan.replan_count), ("completed", "failed", 2))
        self.assert_purchase_once(seen, purchases)
        states = plan.step_ids.sorted("sequence").mapped("state")
        self.assertEqual(states[:2], ["completed", "completed"])
        self.assertEqual(self.count("sale.order", [("create_uid", "=", self.user.id)]), 0, "nothing from step 3")
        revised = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id),
                                                               ("action_type", "=", "plan_revised")])
        self.assertEqual(len(revised), 2, "every replanning attempt is counted")
        summary = plan.get_progress_summary()
        self.assertIn("- [x] 1. Create a purchase order", summary)
        self.assertIn("- [!]", summary)
        self.assertIn(summary, result.reply, "the turn ends with what was done and what was not")
        return states

    def test_BR_23ii_replanner_fails_every_time(self):
        for variant, answer in (("http 500", {"status": 500, "error": "replanner down"}),
                                ("unreadable", {"content": "I am not sure what to do next."})):
            with self.subTest(variant=variant):
                seen = {}
                turns, _failing = self.br23_turns(seen)
                self.script(*turns, *((answer, is_replanner),) * (4 if variant == "http 500" else 2))
                purchases = self.count("purchase.order", [("partner_id", "=", self.wood_corner.id)])
                thread, result = self.turn()
                states = self.assert_failed_after_two_replans(thread, result, purchases, seen)
                self.assertEqual(states, ["completed", "completed", "failed", "pending"], "4 not run")
                replanner_calls = len([r for r in self.scenario.chat_requests() if is_replanner(r)])
                self.assertEqual(replanner_calls, 4 if variant == "http 500" else 2,
                                 "2 attempts (a 500 is retried once inside an attempt)")

    def test_BR_23iii_same_failing_step_every_time(self):
        seen = {}
        turns, failing = self.br23_turns(seen)
        again = [self.BR23_PLAN[2], self.BR23_PLAN[3]]
        self.script(*turns, (plan_reply(again), is_replanner), (failing, step(4)),
                    (plan_reply(again), is_replanner), (failing, step(5)))
        purchases = self.count("purchase.order", [("partner_id", "=", self.wood_corner.id)])
        thread, result = self.turn()
        states = self.assert_failed_after_two_replans(thread, result, purchases, seen)
        self.assertEqual(states, ["completed", "completed", "skipped", "skipped", "failed", "pending"])

    # ------------------------------------------- issue 12 point 6: failures
    def test_failed_step_vendor_without_price_replanned(self):
        """The vendor has no price: the step's tool fails, the replanner
        gives the price the user named, the plan finishes; the failed
        attempt left no order behind."""
        self.cabinet.seller_ids.unlink()  # the demo data's price of Wood Corner too
        self.cabinet.standard_price = 0
        seen = {}
        plan = [{"description": "Create a purchase order for 10 Large Cabinet from Wood Corner",
                 "tool": "create_purchase_order"},
                {"description": "Confirm the purchase order", "tool": "approve_purchase_order"}]
        priced = {"description": "Create the purchase order at 250 per cabinet, the price the user gave",
                  "tool": "create_purchase_order"}
        calls = self.flow_steps(seen)
        self.script((plan_reply(plan), is_planner), (calls[0], step(1)),
                    (plan_reply([priced, plan[1]]), is_replanner),
                    (tool_call("create_purchase_order", {"vendor": "Wood Corner", "lines": [
                        {"product": "Large Cabinet", "quantity": 10, "price_unit": 250}]}), step(2)),
                    (calls[1], step(3)), ({"content": "Ordered."}, is_synthesis))
        purchases = self.count("purchase.order", [("partner_id", "=", self.wood_corner.id)])
        thread, result = self.turn("Buy 10 Large Cabinet from Wood Corner at 250 each, then confirm the order")
        record = self.plan_of(thread)
        self.assertEqual((result.reply, record.state, record.replan_count), ("Ordered.", "completed", 1))
        first = record.step_ids.sorted("sequence")[0]
        self.assertIn("has no price for", first.error)
        self.assertEqual(self.count("purchase.order", [("partner_id", "=", self.wood_corner.id)]), purchases + 1)
        purchase = self.env["purchase.order"].search([("name", "=", seen["purchase"])])
        self.assertEqual((purchase.state, purchase.order_line.price_unit), ("purchase", 250.0))

    # ------------------------------------------ confirmation in a plan
    def run_until_posting(self, seen):
        """The 8-step flow with confirmations for destructive changes:
        every pause before the invoice's posting is approved; returns the
        thread paused on post_invoice."""
        self.agent.require_confirmation = "destructive"
        self.script_flow(seen)
        thread, result = self.turn()
        for _pause in range(8):
            self.assertEqual(result.state, "waiting_confirmation", result.reply)
            if result["confirmation"]["tool"] == "post_invoice":
                break
            self.assertEqual(self.plan_of(thread).state, "executing", "a pause keeps the plan running")
            result = thread.with_user(self.user).handle_confirmation(True)
        self.assertEqual(result["confirmation"]["tool"], "post_invoice")
        running = self.plan_of(thread).get_current_step()
        self.assertEqual((running.sequence, running.state), (8, "running"))
        return thread

    def test_confirmation_mid_plan_approved_resumes_at_that_step(self):
        seen = {}
        thread = self.run_until_posting(seen)
        calls = len(self.scenario.chat_requests())
        result = thread.with_user(self.user).handle_confirmation(True)
        self.assertEqual(result.state, "completed", result.reply)
        plan = self.plan_of(thread)
        self.assertEqual(plan.state, "completed")
        self.assertEqual(len(self.scenario.chat_requests()), calls + 1, "only the synthesis is asked after approval")
        self.assertEqual(self.env["account.move"].browse(seen["invoice"]).state, "posted")

    def test_confirmation_mid_plan_rejected_ends_with_what_was_done(self):
        seen = {}
        thread = self.run_until_posting(seen)
        result = thread.with_user(self.user).handle_confirmation(False, reason="not this month")
        plan = self.plan_of(thread)
        self.assertEqual((result.state, plan.state), ("completed", "cancelled"))
        self.assertIn("you rejected post_invoice", result.reply)
        self.assertIn("- [x] 7. Create the invoice of the sale", result.reply)
        self.assertIn("- [!] 8. Post the invoice", result.reply)
        self.assertEqual(self.env["account.move"].browse(seen["invoice"]).state, "draft")
        self.assertEqual(self.env["sale.order"].search([("name", "=", seen["sale"])]).state, "sale")
