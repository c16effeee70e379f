"""Regression tests for an adversarial round on the domain tools
(accounting, inventory, report, units): each reproduces one finding and
asserts the corrected behaviour."""
from odoo import Command, fields
from odoo.tests import new_test_user, tagged

from .common import AgenticCase

NAN, INF = float("nan"), float("inf")


@tagged("post_install", "-at_install")
class TestToolHardening(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.acc = new_test_user(
            cls.env, "brk_accountant",
            groups="base.group_user,account.group_account_manager,sales_team.group_sale_salesman_all_leads,"
                   "purchase.group_purchase_user,stock.group_stock_manager")
        cls.sales = new_test_user(cls.env, "brk_sales", groups="base.group_user,sales_team.group_sale_salesman")
        cls.customer = cls.env.ref("base.res_partner_2")
        cls.stock = cls.env.ref("stock.stock_location_stock")

    def counts(self, *models):
        return {m: self.env[m].sudo().search_count([]) for m in models}

    def posted_invoice(self, amount=100.0, move_type="out_invoice", ref=None):
        move = self.env["account.move"].create({
            "move_type": move_type, "partner_id": self.customer.id, "invoice_date": fields.Date.today(), "ref": ref,
            "invoice_line_ids": [Command.create({"name": "x", "quantity": 1, "price_unit": amount, "tax_ids": []})]})
        move.action_post()
        return move

    # 1 ------------------------------------------------------------------
    def test_01_digit_reference_is_not_silently_taken_as_an_id(self):
        """A bill whose reference is "<id of another invoice>": paying
        "<that reference>" pays the other invoice."""
        target = self.posted_invoice()
        bill = self.posted_invoice(move_type="in_invoice", ref=str(target.id))
        result = self.execute("register_payment", {"invoice": str(target.id)}, self.acc)
        self.assertFalse(result.success and target.payment_state == "paid" and bill.payment_state == "not_paid",
                         "a digit string that is also a reference must be listed as ambiguous, not paid as an id")

    def test_01b_numeric_internal_reference_picks_that_product(self):
        other = self.env.ref("product.product_product_8")
        coded = self.env["product.product"].create({"name": "Coded", "default_code": str(other.id), "sale_ok": True})
        result = self.execute("create_quotation", {"partner": self.customer.id,
                                                   "lines": [{"product": str(other.id), "quantity": 1}]}, self.acc)
        if result.success:
            order = self.env["sale.order"].browse(result.data["id"])
            self.assertEqual(order.order_line.product_id, coded, "internal reference '%s' names product %s" % (other.id, coded.id))

    # 2 ------------------------------------------------------------------
    def test_02_quantity_rounding_to_zero_is_refused(self):
        product = self.env.ref("product.product_product_8")
        shelf = self.env["stock.location"].create({"name": "Brk Shelf", "location_id": self.stock.id, "usage": "internal"})
        self.env["stock.quant"]._update_available_quantity(product, self.stock, 5)
        before = self.counts("sale.order", "account.move", "stock.picking")
        calls = [
            ("create_quotation", {"partner": self.customer.id, "lines": [{"product": product.id, "quantity": 0.0001}]}),
            ("create_invoice", {"partner": self.customer.id, "lines": [{"description": "x", "quantity": 1e-9, "price_unit": 3}]}),
            ("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 0.0001}],
                                          "source_location": self.stock.id, "destination_location": shelf.id}),
        ]
        for name, params in calls:
            result = self.execute(name, params, self.acc)
            self.assertFalse(result.success, f"{name}: a quantity that rounds to 0 in the unit was saved as 0: {result.data}")
        self.assertEqual(self.counts("sale.order", "account.move", "stock.picking"), before)

    # 3 ------------------------------------------------------------------
    def test_03_overpayment_is_not_forced(self):
        invoice = self.posted_invoice(100.0)
        before = self.counts("account.payment")
        result = self.execute("register_payment", {"invoice": invoice.id, "amount": 1000}, self.acc)
        self.assertFalse(result.success, "paying 1000 on 100 due silently keeps 900 open on the partner "
                                         "(the wizard's payment-difference choice was made for the user)")
        self.assertEqual(self.counts("account.payment"), before)

    # 4 ------------------------------------------------------------------
    def test_04_amount_is_in_the_invoice_currency_whatever_the_journal(self):
        company_currency = self.env.company.currency_id
        other = self.env.ref("base.EUR") if company_currency != self.env.ref("base.EUR") else self.env.ref("base.USD")
        other.active = True
        self.env["res.currency.rate"].create({"currency_id": other.id, "rate": 2.0, "name": fields.Date.today()})
        bank = self.env["account.journal"].search([("type", "=", "bank"), ("company_id", "=", self.env.company.id)], limit=1)
        foreign_bank = bank.copy({"name": "Foreign Bank", "code": "FBK", "currency_id": other.id})
        invoice = self.posted_invoice(100.0)
        result = self.execute("register_payment", {"invoice": invoice.id, "amount": 40, "journal": foreign_bank.id}, self.acc)
        if result.success:
            self.assertAlmostEqual(invoice.amount_residual, 60.0, msg="amount 40 is in the invoice currency (schema), "
                                   f"but {result.data['payments']} settled only {100 - invoice.amount_residual}")

    # 5 ------------------------------------------------------------------
    def test_05_salesperson_gets_no_partial_company_figures(self):
        full = self.execute("get_profit_loss", {}, self.acc).data
        for name, params in [("get_profit_loss", {}), ("get_account_balance", {"account_type": "asset_receivable"})]:
            mine = self.execute(name, params, self.sales)
            if name == "get_profit_loss" and mine.success:
                self.assertEqual(mine.data["revenue"]["total"], full["revenue"]["total"],
                                 "a Sales user's P&L is built from the journal items of their own invoices only, "
                                 "and presented as the company's")
            elif mine.success:
                whole = self.execute(name, params, self.acc).data
                self.assertEqual(mine.data["total"], whole["total"], "a Sales user's receivable balance is partial")

    # 6 ------------------------------------------------------------------
    def test_06_stock_valuation_of_the_current_company_only(self):
        eur = self.env.ref("base.EUR")
        eur.active = True
        company_a = self.env.company
        company_b = self.env["res.company"].create({"name": "Breaker B", "currency_id": eur.id})
        user_ab = new_test_user(self.env, "brk_user_ab", company_id=company_a.id,
                                company_ids=[Command.set((company_a | company_b).ids)],
                                groups="base.group_user,account.group_account_manager,stock.group_stock_manager")
        product = self.env["product.product"].create({"name": "MC Valued", "is_storable": True})
        product.with_company(company_a).standard_price = 100.0
        product.with_company(company_b).standard_price = 10.0
        warehouse_b = self.env["stock.warehouse"].search([("company_id", "=", company_b.id)], limit=1)
        self.env["stock.quant"]._update_available_quantity(product, warehouse_b.lot_stock_id, 5)
        self.env["stock.quant"]._update_available_quantity(product, self.stock, 1)
        whole = self.execute("get_stock_valuation", {"product": product.id}, user_ab)
        self.assertTrue(whole.success, whole.error)
        self.assertEqual((whole.data["company"], whole.data["products"][0]["quantity"], whole.data["total_value"]["amount"]),
                         (company_a.name, 1.0, 100.0), "company B's 5 units are counted and valued at company A's cost")
        in_b = self.execute("get_stock_valuation", {"product": product.id, "warehouse": warehouse_b.id}, user_ab)
        if in_b.success:
            self.assertEqual(in_b.data["total_value"], {"amount": 50.0, "currency": "EUR"},
                             f"B's stock valued at A's cost in A's currency: {in_b.data['total_value']}")

    # 7 ------------------------------------------------------------------
    def test_07_exact_order_number_wins(self):
        product = self.env.ref("product.product_product_8")
        self.env["stock.quant"]._update_available_quantity(product, self.stock, 1)
        order = self.env["sale.order"].create({"partner_id": self.customer.id,
                                               "order_line": [Command.create({"product_id": product.id, "product_uom_qty": 1})]})
        order.action_confirm()
        order.picking_ids.move_ids.quantity = 1
        order.picking_ids.button_validate()
        purchase = self.env["purchase.order"].create({"partner_id": self.customer.id, "partner_ref": order.name,
                                                      "order_line": [Command.create({"product_id": product.id, "product_qty": 1,
                                                                                     "price_unit": 3})]})
        purchase.button_confirm()
        result = self.execute("create_invoice", {"order": order.name}, self.acc)
        self.assertTrue(result.success, f"the exact sales order number {order.name} is refused: {result.error}")

    # 8 ------------------------------------------------------------------
    def test_08_unit_name_resolved_among_the_products_units(self):
        unit = self.env.ref("uom.product_uom_unit")
        box10 = self.env["uom.uom"].create({"name": "Box", "relative_factor": 10, "relative_uom_id": unit.id})
        self.env["uom.uom"].create({"name": "Box", "relative_factor": 12, "relative_uom_id": unit.id})  # another product's
        product = self.env["product.product"].create({"name": "Boxed Thing", "sale_ok": True, "list_price": 5,
                                                      "uom_ids": [Command.set(box10.ids)]})
        result = self.execute("create_quotation", {"partner": self.customer.id,
                                                   "lines": [{"product": product.id, "quantity": 2, "uom": "Box"}]}, self.acc)
        self.assertTrue(result.success, f"only one 'Box' is a unit of the product: {result.error}")
        self.assertEqual(self.env["sale.order"].browse(result.data["id"]).order_line.product_uom_id, box10)

    # 9 ------------------------------------------------------------------
    def test_09_vendor_unit_allowed_on_purchase_lines(self):
        unit = self.env.ref("uom.product_uom_unit")
        crate = self.env["uom.uom"].create({"name": "Crate", "relative_factor": 24, "relative_uom_id": unit.id})
        # Without taxes: a product made here gets the default taxes of every company, unreadable to this user.
        product = self.env["product.product"].create({"name": "Vendor Crated", "purchase_ok": True,
                                                      "supplier_taxes_id": [Command.clear()]})
        self.env["product.supplierinfo"].create({"partner_id": self.customer.id, "product_tmpl_id": product.product_tmpl_id.id,
                                                 "price": 50, "product_uom_id": crate.id})
        result = self.execute("create_purchase_order", {"vendor": self.customer.id,
                                                        "lines": [{"product": product.id, "quantity": 2, "uom": "Crate"}]}, self.acc)
        self.assertTrue(result.success, "Odoo 19 allows the vendor's unit on a purchase line "
                                        f"(purchase.order.line.allowed_uom_ids): {result.error}")

    # 10 -----------------------------------------------------------------
    def test_10_absurd_or_loose_dates_are_refused(self):
        invoice = self.posted_invoice()
        before = self.counts("account.payment")
        for day in ("0001-01-01", "9999-12-31"):
            result = self.execute("register_payment", {"invoice": invoice.id, "amount": 1, "payment_date": day}, self.acc)
            self.assertFalse(result.success, f"a payment dated {day} was registered: {result.data and result.data['payments']}")
        self.assertEqual(self.counts("account.payment"), before)
        loose = self.execute("get_profit_loss", {"date_from": "2026-01-01T99:99 garbage", "date_to": "2026-1-5"}, self.acc)
        self.assertFalse(loose.success, "dates are YYYY-MM-DD; trailing garbage and unpadded months are accepted")

    # 11 -----------------------------------------------------------------
    def test_11_extreme_values_get_a_clear_message(self):
        product = self.env.ref("product.product_product_8")
        calls = [
            ("get_account_balance", {"account_type": "income", "date_to": "0001-01-01"}),
            ("generate_summary_report", {"report_type": "sales", "date_to": "9999-12-31"}),
            ("get_stock_valuation", {"date": "0001-01-01"}),
            ("create_quotation", {"partner": self.customer.id, "lines": [{"product": product.id, "quantity": 1, "price_unit": NAN}]}),
            ("create_invoice", {"partner": self.customer.id, "lines": [{"description": "x", "price_unit": INF}]}),
            ("register_payment", {"invoice": self.posted_invoice().id, "amount": INF}),
        ]
        for name, params in calls:
            result = self.execute(name, params, self.acc)
            if result.success:
                continue  # a sensible answer is fine too
            for raw in ("ValueError", "OverflowError", "convert float", "out of range", "does not match format"):
                self.assertNotIn(raw, result.error, f"{name} {params}: Python's error reaches the model")

    # 12 -----------------------------------------------------------------
    def test_12_report_refuses_reversed_period(self):
        result = self.execute("generate_summary_report", {"report_type": "sales", "date_from": "2030-01-01",
                                                          "date_to": "2020-01-01"}, self.acc)
        self.assertFalse(result.success, "a reversed period answers an empty report instead of saying so")
        self.assertIn("after", result.error)

    # 13 -----------------------------------------------------------------
    def test_13_valuation_says_why_nothing_is_valued(self):
        consumable = self.env.ref("product.product_product_1")  # a service / not storable
        result = self.execute("get_stock_valuation", {"product": consumable.id}, self.acc)
        self.assertFalse(result.success and result.data["products_in_stock"] == 0 and "message" not in result.data,
                         "a product that is not storable gets 'value 0, 0 products' without a word why")
        future = self.execute("get_stock_valuation", {"date": "2999-01-01"}, self.acc)
        self.assertFalse(future.success and future.data["date"] == "2999-01-01",
                         "a future date answers today's value labelled with the future date")

    # 14 -----------------------------------------------------------------
    def test_14_payment_refusals_name_the_real_reason(self):
        invoice = self.posted_invoice()
        sale_journal = self.env["account.journal"].search([("type", "=", "sale"), ("company_id", "=", self.env.company.id)], limit=1)
        result = self.execute("register_payment", {"invoice": invoice.id, "journal": sale_journal.id}, self.acc)
        self.assertNotIn("no journal with id", result.error, "the journal exists; it is a sales journal, not bank/cash")
        cancelled = self.posted_invoice()
        cancelled.button_draft()
        cancelled.button_cancel()
        result = self.execute("register_payment", {"invoice": cancelled.id}, self.acc)
        self.assertNotIn("post it", result.error, "a cancelled invoice cannot just be posted")

    # 15 -----------------------------------------------------------------
    def test_15_transfer_answer_states_the_unit(self):
        unit = self.env.ref("uom.product_uom_unit")
        box10 = self.env["uom.uom"].create({"name": "Box of 10", "relative_factor": 10, "relative_uom_id": unit.id})
        product = self.env["product.product"].create({"name": "Boxed", "is_storable": True, "uom_ids": [Command.set(box10.ids)]})
        self.env["stock.quant"]._update_available_quantity(product, self.stock, 100)
        shelf = self.env["stock.location"].create({"name": "Brk Shelf", "location_id": self.stock.id, "usage": "internal"})
        result = self.execute("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 2, "uom": box10.id}],
                                                           "source_location": self.stock.id, "destination_location": shelf.id},
                              self.acc)
        self.assertTrue(result.success, result.error)
        self.assertEqual(result.data["moves"][0].get("uom"), "Box of 10", "quantity 2.0 with no unit (it is 20 Units)")
