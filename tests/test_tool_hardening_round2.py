"""Regression tests for the second adversarial round on the tool
catalogue (generic ORM tools, manufacturing, HR, inventory, reports,
multi-company): each reproduces one finding and asserts the corrected
behaviour. Counts are taken before and after to show a failed call left
nothing."""
from odoo import Command, fields
from odoo.tests import new_test_user, tagged

from .common import AgenticCase

RAW_ERRORS = ("ValueError", "invalid literal", "Exceeds the limit", "NumericValueOutOfRange", "out of range",
              "NUL (0x00)", "Traceback")


@tagged("post_install", "-at_install")
class TestToolHardeningRound2(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.acc = new_test_user(
            cls.env, "b2_accountant",
            groups="base.group_user,account.group_account_manager,sales_team.group_sale_salesman_all_leads,"
                   "purchase.group_purchase_user,stock.group_stock_manager,mrp.group_mrp_user,"
                   "hr_holidays.group_hr_holidays_user,hr.group_hr_user")
        cls.sales = new_test_user(cls.env, "b2_salesman", groups="base.group_user,sales_team.group_sale_salesman")
        cls.customer = cls.env.ref("base.res_partner_2")
        cls.stock = cls.env.ref("stock.stock_location_stock")
        cls.company_a = cls.env.company
        cls.eur = cls.env.ref("base.EUR")
        cls.eur.active = True
        cls.company_b = cls.env["res.company"].create({"name": "B2 Company B", "currency_id": cls.eur.id})
        cls.user_ab = new_test_user(
            cls.env, "b2_user_ab", company_id=cls.company_a.id,
            company_ids=[Command.set((cls.company_a | cls.company_b).ids)],
            groups="base.group_user,account.group_account_manager,stock.group_stock_manager,"
                   "sales_team.group_sale_salesman_all_leads,mrp.group_mrp_user,"
                   "hr_holidays.group_hr_holidays_user,hr.group_hr_user")
        cls.unit = cls.env.ref("uom.product_uom_unit")
        cls.dozen = cls.env.ref("uom.product_uom_dozen")

    def count(self, model, domain=()):
        return self.env[model].sudo().with_context(active_test=False).search_count(list(domain))

    # 1 ------------------------------------------------------------------
    def test_01_generic_write_cannot_move_a_record_into_a_foreign_company(self):
        """A salesman of company A only moves his quotation into company B
        (and a contact too): the record leaves his reach, with B's
        warehouse and pricelist put on it."""
        order = self.env["sale.order"].create({"partner_id": self.customer.id, "user_id": self.sales.id})
        result = self.execute("odoo_write", {"model": "sale.order", "record_ids": [order.id],
                                             "values": {"company_id": self.company_b.id}}, self.sales)
        self.assertFalse(result.success, "a user of company A only wrote company B on a sales order")
        self.assertEqual(order.company_id, self.company_a)
        partner = self.env["res.partner"].create({"name": "B2 Movable"})
        result = self.execute("odoo_write", {"model": "res.partner", "record_ids": [partner.id],
                                             "values": {"company_id": self.company_b.id}}, self.acc)
        self.assertFalse(result.success, "a user of company A only moved a contact into company B "
                                         "(odoo_create into B is refused, odoo_write is not)")
        self.assertFalse(partner.company_id)

    # 2 ------------------------------------------------------------------
    def test_02_stock_cannot_be_created_from_nothing(self):
        """odoo_create/odoo_write on stock.quant set on-hand quantities
        directly: 1000 units appear without an inventory adjustment or move."""
        product = self.env["product.product"].create({"name": "B2 Quant", "is_storable": True})
        moves = self.count("stock.move")
        created = self.execute("odoo_create", {"model": "stock.quant", "values": {
            "product_id": product.id, "location_id": self.stock.id, "quantity": 1000}}, self.acc)
        product.invalidate_recordset()
        self.assertFalse(created.success, "stock.quant.quantity (a readonly field) was set by odoo_create")
        self.assertEqual(product.qty_available, 0.0, f"on hand became {product.qty_available} with no stock move "
                                                     f"({self.count('stock.move') - moves} moves created)")
        self.env["stock.quant"]._update_available_quantity(product, self.stock, 3)
        quant = self.env["stock.quant"].search([("product_id", "=", product.id), ("location_id", "=", self.stock.id)])
        written = self.execute("odoo_write", {"model": "stock.quant", "record_ids": quant.ids, "values": {"quantity": 50}}, self.acc)
        self.assertFalse(written.success, "stock.quant.quantity was overwritten by odoo_write")
        self.assertEqual(quant.quantity, 3.0)

    # 3 ------------------------------------------------------------------
    def test_03_posted_invoice_cannot_be_changed_through_its_journal_items(self):
        """Writing `state` is refused, but odoo_create on account.move.line
        adds a line to a POSTED invoice: Odoo rebalances it and the posted
        invoice's total and amount due change without a reset to draft."""
        move = self.env["account.move"].create({
            "move_type": "out_invoice", "partner_id": self.customer.id, "invoice_date": fields.Date.today(),
            "invoice_line_ids": [Command.create({"name": "x", "quantity": 1, "price_unit": 750, "tax_ids": []})]})
        move.action_post()
        lines = len(move.line_ids)
        income = move.invoice_line_ids.account_id
        result = self.execute("odoo_create", {"model": "account.move.line", "values": {
            "move_id": move.id, "account_id": income.id, "debit": 5, "name": "x"}}, self.acc)
        move.invalidate_recordset()
        self.assertFalse(result.success, "a journal item was added to a posted invoice")
        self.assertEqual((move.state, move.amount_total, len(move.line_ids)), ("posted", 750.0, lines),
                         f"posted invoice {move.name} now totals {move.amount_total}")

    # 4 ------------------------------------------------------------------
    def test_04_domain_on_a_field_the_user_may_not_read(self):
        """res.partner.credit is for Invoicing/Accounting users only; a
        salesman filters partners by it and learns who owes more than 1000
        (credit_limit, a stored field, is refused; credit, a searchable
        computed field, is not)."""
        move = self.env["account.move"].create({
            "move_type": "out_invoice", "partner_id": self.customer.id, "invoice_date": fields.Date.today(),
            "invoice_line_ids": [Command.create({"name": "x", "quantity": 1, "price_unit": 5000, "tax_ids": []})]})
        move.action_post()
        result = self.execute("odoo_search_read", {"model": "res.partner", "domain": [["credit", ">", 1000]],
                                                   "fields": ["name"]}, self.sales)
        self.assertFalse(result.success, f"a salesman searched on the restricted field credit: {result.data}")

    # 5 ------------------------------------------------------------------
    def test_05_manufacturing_order_with_another_products_bom(self):
        """create_manufacturing_order(product=X, bom=<BoM of Y>) confirms an
        MO that makes X out of Y's components."""
        desk_bom = self.env.ref("mrp.mrp_bom_desk")
        other = self.env.ref("product.product_product_8")
        self.assertNotEqual(desk_bom.product_tmpl_id, other.product_tmpl_id)
        before = self.count("mrp.production")
        result = self.execute("create_manufacturing_order", {"product": other.id, "quantity": 1, "bom": desk_bom.id}, self.acc)
        self.assertFalse(result.success, f"MO for {other.display_name} made with the BoM of {desk_bom.display_name}")
        self.assertEqual(self.count("mrp.production"), before)

    # 6 ------------------------------------------------------------------
    def test_06_kit_bom_is_not_manufactured(self):
        """A kit (phantom BoM) is not manufactured in Odoo, but given as
        `bom` it yields a confirmed MO; without `bom` the refusal says the
        product has no BoM at all."""
        kit = self.env.ref("mrp.mrp_bom_kit")
        self.assertEqual(kit.type, "phantom")
        product = kit.product_tmpl_id.product_variant_id
        before = self.count("mrp.production")
        result = self.execute("create_manufacturing_order", {"product": product.id, "quantity": 1, "bom": kit.id}, self.acc)
        self.assertFalse(result.success, "a confirmed manufacturing order was made from a kit BoM")
        self.assertEqual(self.count("mrp.production"), before)
        plain = self.execute("create_manufacturing_order", {"product": product.id, "quantity": 1}, self.acc)
        self.assertFalse(plain.success)
        self.assertIn("kit", plain.error.lower(), f"the refusal hides that the product is a kit: {plain.error}")

    # 7 ------------------------------------------------------------------
    def test_07_quantity_is_in_the_products_unit_not_the_boms(self):
        """The schema says quantity is in the product's unit. With a BoM per
        dozen, 12 units become an MO of 12 dozens (144 units) and the
        availability check asks for 144 components."""
        component = self.env["product.product"].create({"name": "B2 Comp", "is_storable": True})
        finished = self.env["product.product"].create({"name": "B2 Dozen Made", "is_storable": True})
        self.env["mrp.bom"].create({"product_tmpl_id": finished.product_tmpl_id.id, "product_qty": 1,
                                    "product_uom_id": self.dozen.id,
                                    "bom_line_ids": [Command.create({"product_id": component.id, "product_qty": 12})]})
        check = self.execute("check_bom_availability", {"product": finished.id, "quantity": 12}, self.acc)
        self.assertTrue(check.success, check.error)
        self.assertEqual(check.data["components"][0]["required"], 12.0, "12 units need 12 components (one dozen)")
        result = self.execute("create_manufacturing_order", {"product": finished.id, "quantity": 12}, self.acc)
        self.assertTrue(result.success, result.error)
        production = self.env["mrp.production"].browse(result.data["id"])
        self.assertEqual(production.product_uom_qty, 12.0, f"asked 12 Units, ordered {production.product_qty} "
                                                           f"{production.product_uom_id.name}")

    # 8 ------------------------------------------------------------------
    def test_08_availability_adds_up_a_component_used_twice(self):
        component = self.env["product.product"].create({"name": "B2 Twice", "is_storable": True})
        finished = self.env["product.product"].create({"name": "B2 Uses Twice", "is_storable": True})
        self.env["mrp.bom"].create({"product_tmpl_id": finished.product_tmpl_id.id, "product_qty": 1,
                                    "bom_line_ids": [Command.create({"product_id": component.id, "product_qty": 3}),
                                                     Command.create({"product_id": component.id, "product_qty": 3})]})
        self.env["stock.quant"]._update_available_quantity(component, self.stock, 5)
        result = self.execute("check_bom_availability", {"product": finished.id}, self.acc)
        self.assertTrue(result.success, result.error)
        self.assertFalse(result.data["all_available"], "6 units needed, 5 free: each line is compared with the whole stock")

    # 9 ------------------------------------------------------------------
    def test_09_crm_figures_do_not_add_up_currencies(self):
        """A user with companies A (USD) and B (EUR): B's 1,000,000 EUR
        opportunity is added as 1,000,000 USD to the CRM report and the
        pipeline summary."""
        self.env["res.currency.rate"].create({"currency_id": self.eur.id, "rate": 2.0, "name": fields.Date.today(),
                                              "company_id": self.company_a.id})
        opportunities = self.env["crm.lead"].search([("type", "=", "opportunity")])
        base = sum(opportunities.mapped("expected_revenue"))
        lead_b = self.env["crm.lead"].create({"name": "B2 EUR deal", "type": "opportunity", "expected_revenue": 1000000,
                                              "company_id": self.company_b.id})
        self.assertEqual(lead_b.company_currency, self.eur)
        converted = self.eur._convert(1000000, self.company_a.currency_id, self.company_a, fields.Date.today())
        right = {round(base, 2), round(base + converted, 2)}  # current company only, or converted
        report = self.execute("generate_summary_report", {"report_type": "crm"}, self.user_ab)
        self.assertTrue(report.success, report.error)
        self.assertIn(report.data["total"]["expected_revenue"]["amount"], right,
                      f"{report.data['total']['expected_revenue']} adds 1,000,000 EUR as USD")
        pipeline = self.execute("get_sales_pipeline_summary", {}, self.user_ab)
        self.assertTrue(pipeline.success, pipeline.error)
        self.assertIn(pipeline.data["total_expected_revenue"]["amount"], right,
                      f"{pipeline.data['total_expected_revenue']} adds 1,000,000 EUR as USD")

    # 10 -----------------------------------------------------------------
    def test_10_time_off_of_zero_days_is_refused(self):
        employee = self.env["hr.employee"].create({"name": "B2 Weekend", "company_id": self.company_a.id})
        before = self.count("hr.leave")
        result = self.execute("create_leave_request", {"employee": employee.id, "leave_type": self.env.ref("hr_holidays.leave_type_unpaid").id,
                                                       "date_from": "2026-03-14", "date_to": "2026-03-15"}, self.acc)  # Sat-Sun
        self.assertFalse(result.success, f"a time off request of {result.data and result.data['days']} days was created")
        self.assertEqual(self.count("hr.leave"), before)

    # 11 -----------------------------------------------------------------
    def test_11_time_off_type_of_another_company(self):
        employee_b = self.env["hr.employee"].create({"name": "B2 Employee B", "company_id": self.company_b.id})
        type_a = self.env["hr.leave.type"].create({"name": "B2 A only", "company_id": self.company_a.id,
                                                   "requires_allocation": False})
        before = self.count("hr.leave")
        result = self.execute("create_leave_request", {"employee": employee_b.id, "leave_type": type_a.id,
                                                       "date_from": "2026-03-10", "date_to": "2026-03-10"}, self.user_ab)
        self.assertFalse(result.success, "company A's time off type was used for company B's employee")
        self.assertEqual(self.count("hr.leave"), before)

    # 12 -----------------------------------------------------------------
    def test_12_odd_inputs_get_a_clear_message(self):
        calls = [
            ("get_customer_history", {"partner": "²"}),           # str.isdigit() but not int()
            ("get_customer_history", {"partner": "①"}),
            ("get_customer_history", {"partner": "9" * 5000}),    # Python's int digit limit
            ("get_customer_history", {"partner": "Azure\x00Interior"}),
            ("odoo_search_read", {"model": "res.partner", "offset": 10 ** 20}),
        ]
        for name, params in calls:
            result = self.execute(name, params, self.acc)
            if result.success:
                continue
            for raw in RAW_ERRORS:
                self.assertNotIn(raw, result.error, f"{name} {str(params)[:60]}: raw error reaches the model: {result.error}")

    # 13 -----------------------------------------------------------------
    def test_13_services_are_not_moved_between_locations(self):
        service = self.env["product.product"].create({"name": "B2 Service", "type": "service"})
        shelf = self.env["stock.location"].create({"name": "B2 Shelf", "location_id": self.stock.id, "usage": "internal"})
        before = self.count("stock.picking")
        result = self.execute("create_internal_transfer", {"lines": [{"product": service.id, "quantity": 1}],
                                                           "source_location": self.stock.id, "destination_location": shelf.id,
                                                           "validate": True}, self.acc)
        self.assertFalse(result.success, f"a service was transferred ({result.data and result.data['state']})")
        self.assertEqual(self.count("stock.picking"), before)

    # 14 -----------------------------------------------------------------
    def test_14_employee_query_is_text_not_a_pattern(self):
        for query in ("%", "_"):
            result = self.execute("search_employees", {"query": query}, self.acc)
            self.assertTrue(result.success, result.error)
            self.assertEqual(result.data["total"], 0, f"query {query!r} matched every employee ({result.data['total']})")

    # 15 -----------------------------------------------------------------
    def test_15_account_code_prefix_is_not_taken_for_an_account(self):
        """There is no account 1210; the balance of 121000 is answered as if
        it were asked (Odoo's account name search matches code prefixes)."""
        self.assertFalse(self.env["account.account"].search([("code", "=", "1210")]))
        self.assertTrue(self.env["account.account"].search([("code", "=", "121000")]))
        result = self.execute("get_account_balance", {"account": "1210"}, self.acc)
        self.assertFalse(result.success and [a["code"] for a in result.data["accounts"]] == ["121000"],
                         "account '1210' answered with the balance of 121000 alone")

    # 16 -----------------------------------------------------------------
    def test_16_stock_of_a_location_outside_the_warehouse(self):
        product = self.env["product.product"].create({"name": "B2 Stocked", "is_storable": True})
        self.env["stock.quant"]._update_available_quantity(product, self.stock, 4)
        warehouse_b = self.env["stock.warehouse"].search([("company_id", "=", self.company_b.id)], limit=1)
        result = self.execute("check_stock_levels", {"product": product.id, "warehouse": warehouse_b.id,
                                                     "location": self.stock.id}, self.user_ab)
        self.assertFalse(result.success and result.data["on_hand"] == 0.0,
                         "WH/Stock is not in warehouse B: the answer is 'on hand 0' instead of saying so")

    # 17 -----------------------------------------------------------------
    def test_17_salesman_report_is_not_presented_as_company_totals(self):
        """Like get_profit_loss in round 1: a salesman's record rules show
        only his own orders, and the sales report answers 0 as the total."""
        full = self.execute("generate_summary_report", {"report_type": "sales"}, self.acc)
        mine = self.execute("generate_summary_report", {"report_type": "sales"}, self.sales)
        self.assertTrue(full.success and full.data["total"]["orders"] > 0, full.error)
        if mine.success:
            self.assertTrue(mine.data["total"] == full.data["total"] or "message" in mine.data,
                            f"salesman's total {mine.data['total']} vs company {full.data['total']}, unflagged")
