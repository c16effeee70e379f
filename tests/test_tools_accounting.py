"""Accounting tools, stock valuation and the summary report (spec 000 §5.2),
each checked against the figures Odoo itself holds on demo data."""
from datetime import timedelta

from odoo import Command, fields
from odoo.tests import new_test_user, tagged

from .common import AgenticCase


@tagged("post_install", "-at_install")
class TestAccountingTools(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.accountant = new_test_user(
            cls.env, "agent_accountant",
            groups="base.group_user,account.group_account_manager,sales_team.group_sale_salesman_all_leads,"
                   "purchase.group_purchase_user,stock.group_stock_manager")
        cls.customer = cls.env.ref("base.res_partner_2")
        cls.company = cls.env.company

    def run_as_accountant(self, name, params):
        result = self.execute(name, params, self.accountant)
        self.assertTrue(result.success, f"{name}: {result.error}")
        return result.data

    def delivered_sale_order(self, quantity=2):
        product = self.env.ref("product.product_product_8")  # invoiced on delivered quantities
        self.env["stock.quant"]._update_available_quantity(product, self.env.ref("stock.stock_location_stock"), quantity)
        order = self.env["sale.order"].create({"partner_id": self.customer.id,
                                               "order_line": [Command.create({"product_id": product.id, "product_uom_qty": quantity})]})
        order.action_confirm()
        order.picking_ids.move_ids.quantity = quantity
        order.picking_ids.button_validate()
        return order

    # ------------------------------------------------------------ invoicing
    def test_invoice_a_delivered_order_post_and_pay_in_two_parts(self):
        order = self.delivered_sale_order()
        created = self.run_as_accountant("create_invoice", {"order": order.name})
        invoice = self.env["account.move"].browse(created["invoices"][0]["id"])
        self.assertEqual((invoice.state, invoice.move_type, invoice.invoice_line_ids.sale_line_ids), ("draft", "out_invoice", order.order_line))
        self.assertEqual(created["order"]["invoice_status"], "invoiced")
        self.assertEqual(created["invoices"][0]["amount_total"], {"amount": invoice.amount_total, "currency": invoice.currency_id.name})
        posted = self.run_as_accountant("post_invoice", {"invoice": invoice.id})
        self.assertEqual((invoice.state, posted["name"]), ("posted", invoice.name))
        self.assertFalse(self.execute("post_invoice", {"invoice": invoice.name}, self.accountant).success, "posting twice is refused")
        half = invoice.currency_id.round(invoice.amount_total / 2)
        partial = self.run_as_accountant("register_payment", {"invoice": invoice.name, "amount": half})
        self.assertEqual(invoice.payment_state, "partial")
        self.assertAlmostEqual(invoice.amount_residual, invoice.amount_total - half)
        self.assertEqual(partial["payments"][0]["amount"]["amount"], half)
        self.run_as_accountant("register_payment", {"invoice": invoice.name})
        self.assertEqual((invoice.payment_state, invoice.amount_residual), ("paid", 0.0))
        self.assertEqual(len(invoice.matched_payment_ids), 2)
        paid_again = self.execute("register_payment", {"invoice": invoice.name}, self.accountant)
        self.assertIn("nothing left to pay", paid_again.error)

    def test_order_with_nothing_delivered_is_refused_with_odoos_message(self):
        order = self.env["sale.order"].create({"partner_id": self.customer.id, "order_line": [
            Command.create({"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": 1})]})
        self.assertIn("confirm it", self.execute("create_invoice", {"order": order.name}, self.accountant).error)
        order.action_confirm()
        result = self.execute("create_invoice", {"order": order.name}, self.accountant)
        self.assertFalse(result.success)
        self.assertIn("No items are available to invoice", result.error)
        self.assertFalse(order.invoice_ids, "nothing was left behind")

    def test_vendor_bill_from_purchase_order(self):
        product = self.env.ref("product.product_product_8")
        purchase = self.env["purchase.order"].create({"partner_id": self.env.ref("base.res_partner_1").id, "order_line": [
            Command.create({"product_id": product.id, "product_qty": 3, "price_unit": 100})]})
        purchase.button_confirm()
        purchase.picking_ids.move_ids.quantity = 3
        purchase.picking_ids.button_validate()
        created = self.run_as_accountant("create_invoice", {"order": purchase.name})
        bill = self.env["account.move"].browse(created["invoices"][0]["id"])
        self.assertEqual((bill.move_type, bill.state, bill.amount_untaxed), ("in_invoice", "draft", 300.0))
        self.assertEqual(bill.invoice_line_ids.purchase_line_id, purchase.order_line)

    def test_free_invoice_lines_and_bad_input(self):
        service = self.env.ref("product.product_product_1")
        created = self.run_as_accountant("create_invoice", {"partner": self.customer.name, "invoice_date": "2026-11-02", "lines": [
            {"product": service.id, "quantity": 2, "price_unit": 50},
            {"description": "Travel expenses", "price_unit": 120.5}]})
        move = self.env["account.move"].browse(created["invoices"][0]["id"])
        self.assertEqual(move.invoice_line_ids.mapped("price_subtotal"), [100.0, 120.5])
        self.assertEqual((move.state, str(move.invoice_date)), ("draft", "2026-11-02"))
        bill = self.run_as_accountant("create_invoice", {"partner": self.customer.id, "move_type": "in_invoice",
                                                          "lines": [{"description": "Rent", "price_unit": 900}]})
        self.assertEqual(self.env["account.move"].browse(bill["invoices"][0]["id"]).move_type, "in_invoice")
        count = self.env["account.move"].search_count([])
        for params, message in [
            ({"partner": self.customer.id, "lines": [{"description": "x"}]}, "needs a product, or a description with a price_unit"),
            ({"partner": self.customer.id, "lines": [{"product": service.id, "quantity": -1}]}, "less than or equal to the minimum"),
            ({"partner": self.customer.id, "lines": [{"product": service.id}], "invoice_date": "31/02/2026"}, "YYYY-MM-DD"),
            ({"partner": self.customer.id, "lines": [{"product": "No Such Product Anywhere"}]}, "no product matches"),
            ({"order": "S00001", "partner": self.customer.id}, "not both"),
            ({}, "give an order"),
        ]:
            result = self.execute("create_invoice", params, self.accountant)
            self.assertFalse(result.success, params)
            self.assertIn(message, result.error)
        self.assertEqual(self.env["account.move"].search_count([]), count, "failed calls leave nothing behind")

    def test_payment_refused_on_draft_and_salesperson_cannot_post(self):
        draft = self.run_as_accountant("create_invoice", {"partner": self.customer.id, "lines": [{"description": "x", "price_unit": 10}]})
        self.assertIn("post it before", self.execute("register_payment", {"invoice": draft["invoices"][0]["id"]}, self.accountant).error)
        salesperson = self.env.ref("base.user_demo")  # no Invoicing rights in the demo data
        refused = self.execute("post_invoice", {"invoice": draft["invoices"][0]["id"]}, salesperson)
        self.assertFalse(refused.success)
        self.assertEqual(self.env["account.move"].browse(draft["invoices"][0]["id"]).state, "draft")

    # ------------------------------------------------------------ figures
    def posted_lines(self, domain):
        return self.env["account.move.line"].search(
            [("parent_state", "=", "posted"), ("company_id", "=", self.company.id)] + domain)

    def test_account_balance_equals_posted_journal_items(self):
        receivable = self.company.partner_id.property_account_receivable_id
        today = fields.Date.context_today(self.accountant)
        start = today - timedelta(days=30)
        draft = self.run_as_accountant("create_invoice", {"partner": self.customer.id, "lines": [{"description": "x", "price_unit": 999}]})
        data = self.run_as_accountant("get_account_balance", {"account": receivable.code, "date_from": str(start), "date_to": str(today)})
        row = data["accounts"][0]
        period = self.posted_lines([("account_id", "=", receivable.id), ("date", ">=", start), ("date", "<=", today)])
        before = self.posted_lines([("account_id", "=", receivable.id), ("date", "<", start)])
        self.assertEqual(row["code"], receivable.code)
        self.assertAlmostEqual(row["debit"]["amount"], sum(period.mapped("debit")), places=2)
        self.assertAlmostEqual(row["credit"]["amount"], sum(period.mapped("credit")), places=2)
        self.assertAlmostEqual(row["opening_balance"]["amount"], sum(before.mapped("balance")), places=2)
        self.assertAlmostEqual(row["ending_balance"]["amount"], sum((period | before).mapped("balance")), places=2)
        self.assertEqual(data["currency"], self.company.currency_id.name)
        self.assertNotIn(draft["invoices"][0]["id"], period.move_id.ids, "drafts never count")
        by_name = self.run_as_accountant("get_account_balance", {"account": receivable.name, "date_from": str(start), "date_to": str(today)})
        self.assertEqual(by_name["accounts"][0]["id"], receivable.id)
        by_type = self.run_as_accountant("get_account_balance", {"account_type": "income", "date_from": str(start), "date_to": str(today)})
        income = self.posted_lines([("account_id.account_type", "=", "income"), ("date", ">=", start), ("date", "<=", today)])
        self.assertAlmostEqual(by_type["total"]["balance"]["amount"], sum(income.mapped("balance")), places=2)
        self.assertEqual(by_type["total"]["opening_balance"]["amount"], 0.0, "income accounts carry no opening balance")
        for params, message in [({}, "either an account"), ({"account": "1", "account_type": "income"}, "either an account"),
                                ({"account_type": "nope"}, "is not one of"),
                                ({"account": receivable.code, "date_from": "2026-12-01", "date_to": "2026-01-01"}, "after date_to")]:
            self.assertIn(message, self.execute("get_account_balance", params, self.accountant).error)

    def test_profit_and_loss_equals_posted_journal_items(self):
        today = fields.Date.context_today(self.accountant)
        start = self.company.compute_fiscalyear_dates(today)["date_from"]
        data = self.run_as_accountant("get_profit_loss", {})
        self.assertEqual((data["date_from"], data["date_to"]), (str(start), str(today)))

        def total(types):
            return sum(self.posted_lines([("account_id.account_type", "in", types), ("date", ">=", start),
                                          ("date", "<=", today)]).mapped("balance"))
        revenue, cost = -total(["income"]), total(["expense_direct_cost"])
        expenses = total(["expense", "expense_depreciation"])
        net = revenue + -total(["income_other"]) - cost - expenses - total(["expense_other"])
        self.assertNotEqual(revenue, 0, "the demo company has posted sales")
        self.assertAlmostEqual(data["revenue"]["total"]["amount"], revenue, places=2)
        self.assertAlmostEqual(data["operating_expenses"]["total"]["amount"], expenses, places=2)
        self.assertAlmostEqual(data["gross_profit"]["amount"], revenue - cost, places=2)
        self.assertAlmostEqual(data["net_profit"]["amount"], net, places=2)
        self.assertEqual(data["net_profit"]["currency"], self.company.currency_id.name)
        self.assertAlmostEqual(sum(a["amount"]["amount"] for a in data["revenue"]["accounts"]), revenue, places=2)

    def test_stock_valuation_equals_odoos_product_valuation(self):
        product = self.env.ref("product.product_product_8")
        product.standard_price = 40.0
        self.env["stock.quant"].with_context(inventory_mode=True).create({  # an inventory adjustment, as a user does
            "product_id": product.id, "location_id": self.env.ref("stock.stock_location_stock").id,
            "inventory_quantity": product.qty_available + 5})._apply_inventory()
        data = self.run_as_accountant("get_stock_valuation", {"limit": 5})
        storable = self.env["product.product"].search([("is_storable", "=", True)]).filtered("qty_available")
        self.assertAlmostEqual(data["total_value"]["amount"], sum(storable.mapped("total_value")), places=2)
        self.assertEqual(data["products_in_stock"], len(storable))
        self.assertEqual(len(data["products"]), 5)
        self.assertEqual([p["value"]["amount"] for p in data["products"]],
                         sorted(storable.mapped("total_value"), reverse=True)[:5])
        one = self.run_as_accountant("get_stock_valuation", {"product": product.id})
        self.assertAlmostEqual(one["total_value"]["amount"], product.total_value, places=2)
        self.assertAlmostEqual(one["total_value"]["amount"], 40.0 * product.qty_available, places=2, msg="standard cost")
        self.assertAlmostEqual(one["products"][0]["quantity"], product.qty_available)
        past = self.run_as_accountant("get_stock_valuation", {"product": product.id, "date": "2000-01-01"})
        self.assertEqual((past["total_value"]["amount"], past["products"]), (0.0, []))
        self.assertIn("YYYY-MM-DD", self.execute("get_stock_valuation", {"date": "yesterday"}, self.accountant).error)

    def test_summary_report_is_offered_with_any_app_it_reports_on(self):
        from odoo.addons.agentic_ai.tools.report_tool import REPORTS
        tool = self.env.ref("agentic_ai.tool_generate_summary_report")
        self.assertEqual(set(tool._get_required_modules()), {spec.module for spec in REPORTS.values()})

    def test_summary_report_equals_read_group(self):
        checks = {
            "sales": ("sale.report", [("state", "=", "sale")], "price_subtotal"),
            "purchases": ("purchase.report", [("state", "in", ("purchase", "done"))], "untaxed_total"),
            "invoicing": ("account.invoice.report", [("state", "=", "posted"), ("move_type", "in", ("out_invoice", "out_refund"))], "price_subtotal"),
            "crm": ("crm.lead", [("type", "=", "opportunity")], "expected_revenue"),
        }
        for report_type, (model, domain, measure) in checks.items():
            data = self.run_as_accountant("generate_summary_report", {"report_type": report_type, "limit": 200})
            [(total,)] = self.env[model].with_user(self.accountant)._read_group(domain, [], [f"{measure}:sum"])
            first_measure = data["measures"][0] if report_type != "crm" else "expected_revenue"
            self.assertAlmostEqual(data["total"][first_measure]["amount"], total, places=2, msg=report_type)
            self.assertAlmostEqual(sum(row[first_measure]["amount"] for row in data["rows"]), total, places=2, msg=report_type)
        monthly = self.run_as_accountant("generate_summary_report", {"report_type": "sales", "group_by": "month",
                                                                      "date_from": "2000-01-01", "date_to": "2099-12-31"})
        groups = self.env["sale.report"].with_user(self.accountant)._read_group([("state", "=", "sale")], ["date:month"], ["price_subtotal:sum"])
        self.assertEqual([row["untaxed_amount"]["amount"] for row in monthly["rows"]],
                         [self.company.currency_id.round(amount) for _month, amount in groups])
        stock = self.run_as_accountant("generate_summary_report", {"report_type": "inventory", "group_by": "warehouse"})
        [(on_hand,)] = self.env["stock.quant"].with_user(self.accountant)._read_group([("location_id.usage", "=", "internal")], [], ["quantity:sum"])
        self.assertAlmostEqual(stock["total"]["on_hand"], on_hand)
        for params, message in [({"report_type": "weather"}, "is not one of"),
                                ({"report_type": "sales", "group_by": "colour"}, "cannot be grouped by 'colour'"),
                                ({"report_type": "inventory", "date_from": "2026-01-01"}, "takes no dates"),
                                ({"report_type": "sales", "date_from": "soon"}, "YYYY-MM-DD")]:
            self.assertIn(message, self.execute("generate_summary_report", params, self.accountant).error)
