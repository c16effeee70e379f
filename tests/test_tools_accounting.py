"""Accounting tools (spec 000 §5.2): invoices from orders or from lines,
posting, payments (partial, refused with the real reason, never forcing an
overpayment), account balances and the profit and loss, each checked
against the journal items Odoo itself holds, for users who see the whole
journal only."""
from datetime import timedelta

from odoo import Command, fields
from odoo.tests import tagged

from .common import ToolCase


@tagged("post_install", "-at_install")
class TestAccountingTools(ToolCase):

    def delivered_sale_order(self, quantity=2):
        product = self.env.ref("product.product_product_8")  # invoiced on delivered quantities
        self.add_stock(product, quantity)
        order = self.env["sale.order"].create({"partner_id": self.customer.id, "order_line": [
            Command.create({"product_id": product.id, "product_uom_qty": quantity})]})
        order.action_confirm()
        order.picking_ids.move_ids.quantity = quantity
        order.picking_ids.button_validate()
        return order

    def posted_lines(self, domain):
        return self.env["account.move.line"].search(
            [("parent_state", "=", "posted"), ("company_id", "=", self.company.id)] + domain)

    # ------------------------------------------------------------ invoicing
    def test_invoice_a_delivered_order_post_and_pay_in_two_parts(self):
        order = self.delivered_sale_order()
        created = self.run_as_accountant("create_invoice", {"order": order.name})
        invoice = self.env["account.move"].browse(created["invoices"][0]["id"])
        self.assertEqual((invoice.state, invoice.move_type, invoice.invoice_line_ids.sale_line_ids),
                         ("draft", "out_invoice", order.order_line))
        self.assertEqual(created["order"]["invoice_status"], "invoiced")
        self.assertEqual(created["invoices"][0]["amount_total"],
                         {"amount": invoice.amount_total, "currency": invoice.currency_id.name})
        posted = self.run_as_accountant("post_invoice", {"invoice": invoice.id})
        self.assertEqual((invoice.state, posted["name"]), ("posted", invoice.name))
        twice = self.execute("post_invoice", {"invoice": invoice.name}, self.accountant)
        self.assertFalse(twice.success, "posting twice is refused")
        self.assertIn(f"{invoice.name} is posted, only a draft can be posted", twice.error)
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
        purchase = self.env["purchase.order"].create({"partner_id": self.env.ref("base.res_partner_1").id,
                                                      "order_line": [Command.create({
                                                          "product_id": product.id, "product_qty": 3,
                                                          "price_unit": 100})]})
        purchase.button_confirm()
        purchase.picking_ids.move_ids.quantity = 3
        purchase.picking_ids.button_validate()
        created = self.run_as_accountant("create_invoice", {"order": purchase.name})
        bill = self.env["account.move"].browse(created["invoices"][0]["id"])
        self.assertEqual((bill.move_type, bill.state, bill.amount_untaxed), ("in_invoice", "draft", 300.0))
        self.assertEqual(bill.invoice_line_ids.purchase_line_id, purchase.order_line)

    def test_free_invoice_lines_and_bad_input(self):
        service = self.env.ref("product.product_product_1")
        created = self.run_as_accountant("create_invoice", {
            "partner": self.customer.name, "invoice_date": "2026-11-02", "lines": [
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
            ({"partner": self.customer.id, "lines": [{"description": "x"}]},
             "needs a product, or a description with a price_unit"),
            ({"partner": self.customer.id, "lines": [{"product": service.id, "quantity": -1}]},
             "less than or equal to the minimum"),
            ({"partner": self.customer.id, "lines": [{"product": service.id}], "invoice_date": "31/02/2026"},
             "YYYY-MM-DD"),
            ({"partner": self.customer.id, "lines": [{"product": "No Such Product Anywhere"}]}, "no product matches"),
            ({"order": "S00001", "partner": self.customer.id}, "not both"),
            ({}, "give an order"),
        ]:
            result = self.execute("create_invoice", params, self.accountant)
            self.assertFalse(result.success, params)
            self.assertIn(message, result.error)
        self.assertEqual(self.env["account.move"].search_count([]), count, "failed calls leave nothing behind")

    # ------------------------------------------------------------- payments
    def test_payment_refused_on_draft_and_salesperson_cannot_post(self):
        draft = self.run_as_accountant("create_invoice", {"partner": self.customer.id,
                                                           "lines": [{"description": "x", "price_unit": 10}]})
        draft_id = draft["invoices"][0]["id"]
        self.assertIn("post it before", self.execute("register_payment", {"invoice": draft_id}, self.accountant).error)
        refused = self.execute("post_invoice", {"invoice": draft_id}, self.salesperson)  # no Invoicing rights
        self.assertFalse(refused.success)
        self.assertIn(f"no invoice with id {draft_id} (or you cannot access it)", refused.error)
        self.assertEqual(self.env["account.move"].browse(draft_id).state, "draft")

    def test_overpayment_is_refused_not_forced(self):
        invoice = self.posted_invoice(100.0)
        before = self.count("account.payment")
        result = self.execute("register_payment", {"invoice": invoice.id, "amount": 1000}, self.accountant)
        self.assertFalse(result.success, "paying 1000 on 100 due silently keeps 900 open on the partner "
                                         "(the wizard's payment-difference choice was made for the user)")
        currency = invoice.currency_id.name
        self.assertIn(f"amount 1000.0 {currency} is more than the 100.0 {currency} due on {invoice.name}; the user "
                      "must decide in Odoo what to do with an overpayment", result.error)
        self.assertEqual(self.count("account.payment"), before)
        self.assertEqual(invoice.payment_state, "not_paid")

    def test_payment_amount_is_in_the_invoice_currency_whatever_the_journal(self):
        company_currency = self.env.company.currency_id
        eur, usd = self.env.ref("base.EUR"), self.env.ref("base.USD")
        other = eur if company_currency != eur else usd
        other.active = True
        self.env["res.currency.rate"].create({"currency_id": other.id, "rate": 2.0, "name": fields.Date.today()})
        bank = self.env["account.journal"].search([("type", "=", "bank"), ("company_id", "=", self.env.company.id)],
                                                  limit=1)
        foreign_bank = bank.copy({"name": "Foreign Bank", "code": "FBK", "currency_id": other.id})
        invoice = self.posted_invoice(100.0)
        result = self.execute("register_payment", {"invoice": invoice.id, "amount": 40, "journal": foreign_bank.id},
                              self.accountant)
        self.assertTrue(result.success, result.error)
        self.assertAlmostEqual(invoice.amount_residual, 60.0, msg="amount 40 is in the invoice currency (schema), "
                               f"but {result.data['payments']} settled only {100 - invoice.amount_residual}")
        self.assertEqual(invoice.payment_state, "partial")
        self.assertEqual(result.data["payments"][0]["amount"], {"amount": 40.0, "currency": invoice.currency_id.name})

    def test_payment_refusal_names_a_sales_journal_or_a_cancelled_invoice(self):
        invoice = self.posted_invoice()
        sale_journal = self.env["account.journal"].search([("type", "=", "sale"),
                                                           ("company_id", "=", self.env.company.id)], limit=1)
        result = self.execute("register_payment", {"invoice": invoice.id, "journal": sale_journal.id},
                              self.accountant)
        self.assertFalse(result.success)
        self.assertIn(f"{sale_journal.name} is a sale journal; payments go to a bank, cash or credit card journal",
                      result.error, "the journal exists; it is a sales journal, not bank/cash")
        cancelled = self.posted_invoice()
        cancelled.button_draft()
        cancelled.button_cancel()
        result = self.execute("register_payment", {"invoice": cancelled.id}, self.accountant)
        self.assertFalse(result.success)
        self.assertIn(f"{cancelled.name} is cancelled; there is nothing to pay", result.error)
        self.assertNotIn("post it", result.error, "a cancelled invoice cannot just be posted")

    # ------------------------------------------------------------ figures
    def test_account_balance_equals_posted_journal_items(self):
        receivable = self.company.partner_id.property_account_receivable_id
        today = fields.Date.context_today(self.env["res.company"].with_user(self.accountant))
        start = today - timedelta(days=30)
        period_params = {"date_from": str(start), "date_to": str(today)}
        draft = self.run_as_accountant("create_invoice", {"partner": self.customer.id,
                                                           "lines": [{"description": "x", "price_unit": 999}]})
        data = self.run_as_accountant("get_account_balance", {"account": receivable.code, **period_params})
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
        by_name = self.run_as_accountant("get_account_balance", {"account": receivable.name, **period_params})
        self.assertEqual(by_name["accounts"][0]["id"], receivable.id)
        by_type = self.run_as_accountant("get_account_balance", {"account_type": "income", **period_params})
        income = self.posted_lines([("account_id.account_type", "=", "income"), ("date", ">=", start),
                                    ("date", "<=", today)])
        self.assertAlmostEqual(by_type["total"]["balance"]["amount"], sum(income.mapped("balance")), places=2)
        self.assertEqual(by_type["total"]["opening_balance"]["amount"], 0.0, "income accounts carry no opening balance")
        for params, message in [({}, "either an account"),
                                ({"account": "1", "account_type": "income"}, "either an account"),
                                ({"account_type": "nope"}, "is not one of"),
                                ({"account": receivable.code, "date_from": "2026-12-01", "date_to": "2026-01-01"},
                                 "after date_to")]:
            self.assertIn(message, self.execute("get_account_balance", params, self.accountant).error)

    def test_account_code_prefix_is_not_taken_for_an_account(self):
        """There is no account 1210; the balance of 121000 is answered as if
        it were asked (Odoo's account name search matches code prefixes)."""
        self.assertFalse(self.env["account.account"].search([("code", "=", "1210")]))
        self.assertTrue(self.env["account.account"].search([("code", "=", "121000")]))
        result = self.execute("get_account_balance", {"account": "1210"}, self.accountant)
        self.assertFalse(result.success, f"account '1210' answered with the balance of another account: {result.data}")
        self.assertIn("no account has the code 1210. Codes starting with it: 121000", result.error)

    def test_profit_and_loss_equals_posted_journal_items(self):
        today = fields.Date.context_today(self.env["res.company"].with_user(self.accountant))
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

    def test_company_figures_are_refused_to_users_who_see_part_of_the_journal(self):
        """A Sales user's record rules show the journal items of their own
        invoices only: figures built from them are not the company's."""
        self.run_as_accountant("get_profit_loss", {})
        for name, params in [("get_profit_loss", {}), ("get_account_balance", {"account_type": "asset_receivable"})]:
            mine = self.execute(name, params, self.salesman)
            self.assertFalse(mine.success, f"{name}: a Sales user's partial figures are presented as the company's: "
                                           f"{mine.data}")
            self.assertIn("company accounting figures need Invoicing or Accounting access", mine.error)
