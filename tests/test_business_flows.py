"""Business flows (spec 000 §4.2, §5.2; issue 4, point 5): whole flows
driven through the agent loop (ReAct) by the scripted LLM over real HTTP,
each step a real tool call as the requesting user, each ending in the state
Odoo itself holds."""
import logging
import time
from datetime import date, datetime, timedelta

from odoo import Command, fields
from odoo.tests import new_test_user, tagged

from .common import AgenticCase, allocated_employee, observation_records, tool_call

_logger = logging.getLogger(__name__)


def observed(request):
    """The JSON data of the observation the request ends with."""
    return observation_records(request)[-1]


def data_of(content):
    """The JSON data of an observation's text."""
    return observed({"messages": [{"content": content}]})


@tagged("post_install", "-at_install")
class TestBusinessFlows(AgenticCase):
    """Under the agent's default policy (confirm destructive changes, and
    after read text: issue 23 point 2), each flow's request names what to
    do, so it runs with no confirmation asked."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.agent.write({"require_confirmation": "destructive", "confirm_after_untrusted_content": True})

    def run_flow(self, name, user, message, *turns):
        """Script ``turns``, run one agent turn as ``user``; returns the thread
        after checking every tool call succeeded and no confirmation was
        asked. Logs the time spent outside the scripted LLM server."""
        self.script(*turns)
        thread = self.new_thread(user=user)
        started = time.monotonic()
        result = self.agent.with_user(user).run(thread.id, message)
        elapsed_ms = (time.monotonic() - started) * 1000
        server_ms = sum(r.get("server_ms", 0) for r in self.scenario.requests)
        asked = thread.message_ids.filtered(lambda m: m.role == "confirmation_request")
        _logger.info("[confirmations] flow %s: %d asked under the default policy", name, len(asked))
        self.assertEqual(result.state, "completed", result.error or result.reply)
        logs = self.env["agentic.ai.execution.log"].search([("thread_id", "=", thread.id),
                                                            ("action_type", "=", "tool_execution")])
        _logger.info("[timing] flow %s: %d tool calls, %.0f ms end to end, %.0f ms outside the scripted LLM server",
                     name, len(logs), elapsed_ms, elapsed_ms - server_ms)
        return thread, result, logs

    def add_stock(self, product, quantity):
        self.env["stock.quant"].with_context(inventory_mode=True).create({
            "product_id": product.id, "location_id": self.env.ref("stock.stock_location_stock").id,
            "inventory_quantity": product.qty_available + quantity})._apply_inventory()

    def test_order_to_cash(self):
        user = new_test_user(self.env, "flow_o2c", groups="base.group_user,sales_team.group_sale_salesman_all_leads,"
                                                         "stock.group_stock_user,account.group_account_invoice")
        product = self.env.ref("product.product_product_8")  # invoiced on delivered quantities
        self.add_stock(product, 5)
        seen = {}

        def confirm(request):
            seen["order"] = observed(request)["name"]
            return tool_call("confirm_sale_order", {"order": seen["order"]})

        def deliver(request):
            return tool_call("odoo_method_call", {"model": "stock.picking", "method": "button_validate",
                                                  "record_ids": [d["id"] for d in observed(request)["deliveries"]]})

        self.run_flow(
            "order to cash", user,
            "Sell 3 Large Desks (Wood) to Acme Corporation, deliver, invoice, post the invoice and pay it.",
            tool_call("create_quotation", {"partner": "Acme Corporation",
                                           "lines": [{"product": product.id, "quantity": 3}]}),
            confirm,
            deliver,
            lambda request: tool_call("create_invoice", {"order": seen["order"]}),
            lambda request: tool_call("post_invoice", {"invoice": observed(request)["invoices"][0]["id"]}),
            lambda request: tool_call("register_payment", {"invoice": observed(request)["name"]}),
            lambda request: {"content": f"Done: invoice {observed(request)['invoice']['name']} is "
                                        f"{observed(request)['invoice']['payment_state']}."},
        )
        order = self.env["sale.order"].search([("name", "=", seen["order"])])
        self.assertEqual((order.state, order.create_uid), ("sale", user))
        self.assertEqual(order.picking_ids.state, "done")
        self.assertEqual(order.order_line.qty_delivered, 3.0)
        self.assertEqual(order.invoice_status, "invoiced", "the sale order is fully invoiced")
        self.assertEqual(order.invoice_ids.mapped("payment_state"), ["paid"])
        self.assertEqual(order.invoice_ids.amount_total, order.amount_total)

    def test_procure_to_stock(self):
        user = new_test_user(self.env, "flow_p2s",
                             groups="base.group_user,purchase.group_purchase_manager,stock.group_stock_user")
        product = self.env.ref("product.product_product_8")
        before = product.qty_available
        self.env["product.supplierinfo"].create({"partner_id": self.env.ref("base.res_partner_1").id,
                                                 "product_tmpl_id": product.product_tmpl_id.id, "price": 120.0})
        seen = {}

        def approve(request):
            seen["order"] = observed(request)["name"]
            return tool_call("approve_purchase_order", {"order": seen["order"]})

        thread, _result, _logs = self.run_flow(
            "procure to stock", user, "Buy 7 Large Desks (Wood) from Wood Corner and receive them.",
            tool_call("create_purchase_order", {"vendor": "Wood Corner",
                                                "lines": [{"product": product.id, "quantity": 7}]}),
            approve,
            lambda request: tool_call("odoo_method_call", {
                "model": "stock.picking", "method": "button_validate",
                "record_ids": [r["id"] for r in observed(request)["receipts"]]}),
            tool_call("check_stock_levels", {"product": product.id}),
            lambda request: {"content": f"On hand now: {observed(request)['on_hand']}"},
        )
        purchase = self.env["purchase.order"].search([("name", "=", seen["order"])])
        self.assertEqual((purchase.state, purchase.picking_ids.state, purchase.order_line.qty_received),
                         ("purchase", "done", 7.0))
        levels = data_of(self.observations(thread)[-1])
        quants = self.env["stock.quant"].search([("product_id", "=", product.id),
                                                 ("location_id.usage", "=", "internal")])
        self.assertAlmostEqual(levels["on_hand"], before + 7)
        self.assertAlmostEqual(levels["on_hand"], sum(quants.mapped("quantity")))

    def test_hr_leave_within_and_beyond_allocation_and_attendance(self):
        user = new_test_user(self.env, "flow_hr", groups="base.group_user,hr.group_hr_user,"
                             "hr_holidays.group_hr_holidays_user,hr_attendance.group_hr_attendance_manager")
        employee, _leave_type = allocated_employee(self.env, "Flow Tester", "Flow Leave", days=3)
        monday = date.today() + timedelta(days=14 - date.today().weekday())
        start = datetime.combine(monday - timedelta(days=21), datetime.min.time()) + timedelta(hours=8)
        self.env["hr.attendance"].create([{"employee_id": employee.id, "check_in": start + timedelta(days=d),
                                           "check_out": start + timedelta(days=d, hours=6 + d)} for d in range(4)])
        thread, _result, logs = self.run_flow(
            "HR", user, f"Book Flow Leave time off for Flow Tester from {monday} to {monday + timedelta(days=1)} "
                        f"and from {monday + timedelta(days=7)} to {monday + timedelta(days=11)}, and summarise "
                        f"attendance from {start.date()} to {start.date() + timedelta(days=6)}.",
            tool_call("create_leave_request", {"employee": "Flow Tester", "leave_type": "Flow Leave",
                                               "date_from": str(monday), "date_to": str(monday + timedelta(days=1))}),
            tool_call("create_leave_request", {"employee": "Flow Tester", "leave_type": "Flow Leave",
                                               "date_from": str(monday + timedelta(days=7)),
                                               "date_to": str(monday + timedelta(days=11))}),
            tool_call("get_attendance_summary", {"employee": employee.id, "date_from": str(start.date()),
                                                 "date_to": str(start.date() + timedelta(days=6))}),
            lambda request: {"content": f"Worked {observed(request)['total_worked_hours']} hours."},
        )
        leaves = self.env["hr.leave"].search([("employee_id", "=", employee.id)])
        self.assertEqual(leaves.mapped("number_of_days"), [2.0],
                         "the request within the allocation exists, the other not")
        self.assertEqual(logs.sorted("id").mapped("success"), [True, False, True])
        self.assertIn("ValidationError", self.observations(thread)[1], "Odoo's own refusal reaches the model")
        attendances = self.env["hr.attendance"].search([("employee_id", "=", employee.id)])
        self.assertIn(f"Worked {round(sum(attendances.mapped('worked_hours')), 2)} hours",
                      thread.message_ids.filtered(lambda m: m.role == "assistant").content)

    def test_manufacturing_order_and_component_availability(self):
        user = new_test_user(self.env, "flow_mrp", groups="base.group_user,mrp.group_mrp_user,stock.group_stock_user")
        bom = self.env.ref("mrp.mrp_bom_manufacture")
        product = bom.product_tmpl_id.product_variant_id
        thread, _result, _logs = self.run_flow(
            "manufacturing", user, f"Make 3 {product.name} and tell me if the components are there.",
            tool_call("create_manufacturing_order", {"product": product.id, "quantity": 3}),
            lambda request: tool_call("check_bom_availability", {"production": observed(request)["name"]}),
            lambda request: {"content": f"Components: {observed(request)['components_availability_state']}"},
        )
        production = self.env["mrp.production"].search([("create_uid", "=", user.id)])
        self.assertEqual((production.state, production.product_qty, production.bom_id), ("confirmed", 3.0, bom))
        checked = data_of(self.observations(thread)[-1])
        self.assertEqual(checked["components_availability_state"], production.components_availability_state)
        self.assertEqual([c["forecast_available"] for c in checked["components"]],
                         production.move_raw_ids.mapped("forecast_availability"))

    def test_accounting_figures_equal_journal_items(self):
        user = new_test_user(self.env, "flow_acc", groups="base.group_user,account.group_account_manager")
        company = self.env.company
        receivable = company.partner_id.property_account_receivable_id
        today = fields.Date.context_today(user)
        start = company.compute_fiscalyear_dates(today)["date_from"]
        seen = {}

        def balance(request):
            seen["net"] = observed(request)["net_profit"]
            return tool_call("get_account_balance", {"account": receivable.code})

        thread, _result, _logs = self.run_flow(
            "accounting", user, "How much profit this year, and what do customers owe us?",
            tool_call("get_profit_loss", {}),
            balance,
            lambda request: {"content": f"Net profit {seen['net']['amount']} {seen['net']['currency']}; receivables "
                                        f"{observed(request)['accounts'][0]['ending_balance']['amount']}."},
        )
        lines = self.env["account.move.line"].search([("parent_state", "=", "posted"), ("company_id", "=", company.id),
                                                      ("date", ">=", start), ("date", "<=", today)])
        pnl = lines.filtered(lambda line: line.account_id.account_type in (
            "income", "income_other", "expense", "expense_other", "expense_depreciation", "expense_direct_cost"))
        self.assertAlmostEqual(seen["net"]["amount"], -sum(pnl.mapped("balance")), places=2)
        self.assertEqual(seen["net"]["currency"], company.currency_id.name)
        owed = self.env["account.move.line"].search([("parent_state", "=", "posted"), ("company_id", "=", company.id),
                                                     ("account_id", "=", receivable.id), ("date", "<=", today)])
        self.assertIn(f"receivables {company.currency_id.round(sum(owed.mapped('balance')))}.",
                      thread.message_ids.filtered(lambda m: m.role == "assistant").content)

    def test_discount_on_some_lines_then_sales_report(self):
        user = new_test_user(self.env, "flow_disc", groups="base.group_user,sales_team.group_sale_salesman_all_leads")
        desk, chair = self.env.ref("product.product_product_8"), self.env.ref("product.product_product_12")
        order = self.env["sale.order"].with_user(user).create({
            "partner_id": self.env.ref("base.res_partner_2").id, "order_line": [
                Command.create({"product_id": desk.id, "product_uom_qty": 1}),
                Command.create({"product_id": chair.id, "product_uom_qty": 4})]})
        chair_subtotal = order.order_line.filtered(lambda line: line.product_id == chair).price_subtotal
        self.run_flow(
            "discount and report", user, f"Give 10% off the desk on {order.name}, then show sales by customer.",
            tool_call("apply_discount", {"order": order.name, "discount": 10, "products": [desk.id]}),
            tool_call("generate_summary_report", {"report_type": "sales", "group_by": "customer"}),
            {"content": "Done."},
        )
        desk_line = order.order_line.filtered(lambda line: line.product_id == desk)
        self.assertEqual(order.order_line.mapped("discount"), [10.0, 0.0])
        self.assertAlmostEqual(desk_line.price_subtotal, desk_line.price_unit * 0.9, places=2)
        self.assertEqual(order.order_line.filtered(lambda line: line.product_id == chair).price_subtotal,
                         chair_subtotal)
        self.assertAlmostEqual(order.amount_untaxed, sum(order.order_line.mapped("price_subtotal")), places=2)
        report = observed(self.scenario.chat_requests()[-1])
        groups = self.env["sale.report"].with_user(user)._read_group([("state", "=", "sale")], ["partner_id"],
                                                                      ["price_subtotal:sum"])
        expected = {partner.display_name: amount for partner, amount in groups}
        self.assertEqual(report["groups"], len(expected))
        self.assertEqual(len(report["rows"]), min(len(expected), report["rows_shown"]))
        self.assertTrue(report["rows"], "the demo data has confirmed sales")
        for row in report["rows"]:
            self.assertAlmostEqual(row["untaxed_amount"]["amount"], expected[row["group"]], places=2)
