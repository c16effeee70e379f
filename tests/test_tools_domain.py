"""Sales, purchase, inventory, HR and manufacturing tools (spec 000 §5.2)
on Odoo demo data, each asserting the state Odoo itself ends in."""
from odoo.tests import new_test_user, tagged

from .common import AgenticCase


@tagged("post_install", "-at_install")
class TestDomainTools(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.salesperson = cls.env.ref("base.user_demo")

    def execute(self, name, params, user=None):
        return super().execute(name, params, user or self.salesperson)

    def _quotation(self, qty=2):
        return self.env["sale.order"].with_user(self.salesperson).create({
            "partner_id": self.env.ref("base.res_partner_12").id,
            "order_line": [(0, 0, {"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": qty}),
                           (0, 0, {"product_id": self.env.ref("product.product_product_12").id, "product_uom_qty": 1})]})

    def test_create_quotation_by_ids_and_names(self):
        result = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [
            {"product": self.env.ref("product.product_product_8").id, "quantity": 2, "discount": 10}]})
        self.assertTrue(result.success, result.error)
        order = self.env["sale.order"].browse(result.data["id"])
        self.assertEqual(order.partner_id, self.env.ref("base.res_partner_12"))
        self.assertEqual(order.order_line.discount, 10)
        self.assertEqual(result.data["amount_total"]["amount"], order.amount_total)
        self.assertEqual(result.data["amount_total"]["currency"], order.currency_id.name)

    def test_create_quotation_refuses_bad_input(self):
        ambiguous = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [{"product": "Large Desk", "quantity": 1}]})
        self.assertIn("Large Desk (Glass)", ambiguous.error)
        zero = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [{"product": "Office Chair Black", "quantity": 0}]})
        self.assertFalse(zero.success)
        unknown = self.execute("create_quotation", {"partner": "Azure Interiorz Ltd", "lines": [{"product": "Office Chair Black", "quantity": 1}]})
        self.assertIn("no customer matches", unknown.error)
        self.assertIn("Azure Interior", unknown.error, "closest names are listed")

    def test_records_of_a_company_the_user_cannot_access_are_refused(self):
        other = self.env["res.company"].create({"name": "Agent Other Company"})
        secret = self.env["product.product"].create({"name": "Other Company Widget", "company_id": other.id, "sale_ok": True})
        partner = self.env["res.partner"].create({"name": "Other Company Client", "company_id": other.id})
        for params, message in [
            ({"partner": "Azure Interior", "lines": [{"product": secret.id, "quantity": 1}]}, f"no product with id {secret.id} (or you cannot access it)"),
            ({"partner": "Azure Interior", "lines": [{"product": secret.name, "quantity": 1}]}, "no product matches 'Other Company Widget'"),
            ({"partner": partner.id, "lines": [{"product": "Office Chair Black", "quantity": 1}]}, "or you cannot access it"),
        ]:
            self.assertIn(message, self.execute("create_quotation", params).error)

    def test_units_of_measure_on_lines(self):
        chair = self.env.ref("product.product_product_12")
        pack = self.env["uom.uom"].search([("name", "=", "Pack of 6")])
        chair.product_tmpl_id.uom_ids = [(4, pack.id)]  # a packaging, as Odoo 19 allows on order lines
        created = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [{"product": chair.id, "quantity": 2, "uom": "pack of 6"}]})
        self.assertTrue(created.success, created.error)
        line = self.env["sale.order"].browse(created.data["id"]).order_line
        self.assertEqual((line.product_uom_qty, line.product_uom_id), (2.0, pack))
        self.assertAlmostEqual(line.price_unit, chair.lst_price * 6, msg="Odoo prices the pack")
        wrong = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [{"product": chair.id, "quantity": 1, "uom": "kg"}]})
        self.assertIn(f"'kg' is not a unit of {chair.display_name}; its units are: Units (id", wrong.error)
        self.assertIn(f"Pack of 6 (id {pack.id})", wrong.error)
        unknown = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [{"product": chair.id, "quantity": 1, "uom": "Parsecs"}]})
        self.assertIn("'Parsecs' is not a unit of", unknown.error)

    def test_get_customer_history(self):
        result = self.execute("get_customer_history", {"partner": "Azure Interior"})
        self.assertTrue(result.success, result.error)
        azure = self.env.ref("base.res_partner_12")
        orders = self.env["sale.order"].search([("partner_id", "child_of", azure.id), ("state", "=", "sale")])
        self.assertEqual(result.data["order_count"], len(orders))
        self.assertLessEqual(len(result.data["recent_orders"]), 5)

    def test_confirm_sale_order_by_number(self):
        order = self._quotation()
        result = self.execute("confirm_sale_order", {"order": order.name})
        self.assertTrue(result.success, result.error)
        self.assertEqual(order.state, "sale")
        self.assertEqual(result.data["state"], "sale")
        if "picking_ids" in order._fields:
            self.assertEqual([d["name"] for d in result.data["deliveries"]], order.picking_ids.mapped("name"))
        again = self.execute("confirm_sale_order", {"order": order.id})
        self.assertIn("not a quotation", again.error)

    def test_apply_discount_changes_only_the_lines_asked_for(self):
        order = self._quotation()
        desk, other = order.order_line
        total_before = order.amount_untaxed
        result = self.execute("apply_discount", {"order": order.id, "discount": 10,
                                                 "products": [self.env.ref("product.product_product_8").id]})
        self.assertTrue(result.success, result.error)
        self.assertEqual((desk.discount, other.discount), (10.0, 0.0))
        self.assertAlmostEqual(order.amount_untaxed, total_before - desk.price_unit * desk.product_uom_qty * 0.10, places=2)
        self.assertEqual(result.data["amount_untaxed"]["amount"], order.currency_id.round(order.amount_untaxed))
        self.assertFalse(self.execute("apply_discount", {"order": order.id, "discount": 120}).success)

    def test_create_lead_and_pipeline_summary(self):
        if "crm.lead" not in self.env:
            self.skipTest("crm not installed")
        result = self.execute("create_lead", {"name": "40 desks for Azure", "partner": "Azure Interior",
                                              "expected_revenue": 12000})
        self.assertTrue(result.success, result.error)
        lead = self.env["crm.lead"].browse(result.data["id"])
        self.assertEqual((lead.type, lead.partner_id, lead.expected_revenue), ("opportunity", self.env.ref("base.res_partner_12"), 12000))
        summary = self.execute("get_sales_pipeline_summary", {})
        self.assertTrue(summary.success, summary.error)
        # The user's own view of the pipeline: record rules apply (a salesperson sees their own leads).
        leads = self.env["crm.lead"].with_user(self.salesperson).search([("type", "=", "opportunity")])
        self.assertEqual(summary.data["total_count"], len(leads))
        self.assertAlmostEqual(summary.data["total_expected_revenue"]["amount"], sum(leads.mapped("expected_revenue")), places=2)
        stage = next(s for s in summary.data["stages"] if s["stage"] == lead.stage_id.name)
        self.assertEqual(stage["count"], len(leads.filtered(lambda l: l.stage_id == lead.stage_id)))

    def test_purchase_order_created_approved_and_priced(self):
        buyer = new_test_user(self.env, "agent_buyer", groups="base.group_user,purchase.group_purchase_manager")
        vendor = self.env.ref("base.res_partner_1")
        product = self.env.ref("product.product_product_12")
        self.env["product.supplierinfo"].create({"partner_id": vendor.id, "product_tmpl_id": product.product_tmpl_id.id,
                                                 "price": 77.0, "min_qty": 1})
        created = self.execute("create_purchase_order", {"vendor": vendor.id, "lines": [{"product": product.id, "quantity": 5}]},
                               user=buyer)
        self.assertTrue(created.success, created.error)
        order = self.env["purchase.order"].browse(created.data["id"])
        self.assertEqual((order.state, order.order_line.product_qty, order.order_line.price_unit), ("draft", 5.0, 77.0))
        approved = self.execute("approve_purchase_order", {"order": order.name}, user=buyer)
        self.assertTrue(approved.success, approved.error)
        self.assertEqual(order.state, "purchase")
        if "picking_ids" in order._fields:
            self.assertEqual([r["name"] for r in approved.data["receipts"]], order.picking_ids.mapped("name"))
        pricing = self.execute("get_supplier_pricing", {"product": product.id, "vendor": vendor.id}, user=buyer)
        self.assertTrue(pricing.success, pricing.error)
        self.assertEqual([v["price"] for v in pricing.data["vendors"]],
                         self.env["product.supplierinfo"].search([("partner_id", "=", vendor.id), ("product_tmpl_id", "=", product.product_tmpl_id.id)]).sorted("price").mapped("price"))
        self.assertFalse(self.execute("create_purchase_order", {"vendor": vendor.id, "lines": [{"product": product.id, "quantity": -1}]},
                                      user=buyer).success)

    def test_stock_levels_equal_quants_and_internal_transfer_moves_stock(self):
        keeper = new_test_user(self.env, "agent_keeper", groups="base.group_user,stock.group_stock_manager,stock.group_stock_multi_locations")
        product = self.env.ref("product.product_product_8")
        stock = self.env.ref("stock.stock_location_stock")
        shelf = self.env["stock.location"].create({"name": "Agent Shelf", "location_id": stock.id, "usage": "internal"})
        self.env["stock.quant"]._update_available_quantity(product, stock, 10)
        levels = self.execute("check_stock_levels", {"product": product.id}, user=keeper)
        self.assertTrue(levels.success, levels.error)
        quants = self.env["stock.quant"].search([("product_id", "=", product.id), ("location_id.usage", "=", "internal")])
        self.assertAlmostEqual(levels.data["on_hand"], sum(quants.mapped("quantity")))
        self.assertAlmostEqual(levels.data["on_hand"], product.qty_available)
        moved = self.execute("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 4}],
                                                          "source_location": stock.id, "destination_location": shelf.complete_name,
                                                          "validate": True}, user=keeper)
        self.assertTrue(moved.success, moved.error)
        picking = self.env["stock.picking"].browse(moved.data["id"])
        self.assertEqual(picking.state, "done")
        self.assertAlmostEqual(product.with_context(location=shelf.id).qty_available, 4)
        same = self.execute("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 1}],
                                                         "source_location": stock.id, "destination_location": stock.id}, user=keeper)
        self.assertIn("same", same.error)

    def test_hr_tools_search_leave_within_and_beyond_allocation_attendance(self):
        from datetime import date, datetime, timedelta
        officer = new_test_user(self.env, "agent_hr", groups="base.group_user,hr.group_hr_user,hr_holidays.group_hr_holidays_user,hr_attendance.group_hr_attendance_manager")
        found = self.execute("search_employees", {"query": "Abigail"}, user=officer)
        self.assertTrue(found.success, found.error)
        self.assertEqual([e["name"] for e in found.data["employees"]],
                         self.env["hr.employee"].search(["|", "|", ("name", "ilike", "Abigail"), ("work_email", "ilike", "Abigail"),
                                                         ("job_title", "ilike", "Abigail")], limit=20).mapped("name"))
        employee = self.env["hr.employee"].create({"name": "Agent Tester", "company_id": self.env.company.id})
        leave_type = self.env["hr.leave.type"].create({"name": "Agent Leave", "requires_allocation": True,
                                                       "employee_requests": True, "leave_validation_type": "hr"})
        allocation = self.env["hr.leave.allocation"].create({"employee_id": employee.id, "holiday_status_id": leave_type.id,
                                                             "number_of_days": 3, "date_from": date.today().replace(month=1, day=1)})
        allocation.action_approve()
        monday = date.today() + timedelta(days=7 - date.today().weekday() + 7)
        within = self.execute("create_leave_request", {"employee": employee.id, "leave_type": "Agent Leave",
                                                       "date_from": str(monday), "date_to": str(monday + timedelta(days=1))}, user=officer)
        self.assertTrue(within.success, within.error)
        self.assertEqual(self.env["hr.leave"].browse(within.data["id"]).number_of_days, 2)
        beyond = self.execute("create_leave_request", {"employee": employee.id, "leave_type": "Agent Leave",
                                                       "date_from": str(monday + timedelta(days=7)), "date_to": str(monday + timedelta(days=11))},
                              user=officer)
        self.assertFalse(beyond.success)
        self.assertIn("ValidationError", beyond.error, "Odoo's own message")
        start = datetime.combine(monday - timedelta(days=14), datetime.min.time()) + timedelta(hours=8)
        self.env["hr.attendance"].create([{"employee_id": employee.id, "check_in": start + timedelta(days=d),
                                           "check_out": start + timedelta(days=d, hours=7.5)} for d in range(3)])
        summary = self.execute("get_attendance_summary", {"employee": employee.id, "date_from": str(start.date()),
                                                          "date_to": str(start.date() + timedelta(days=6))}, user=officer)
        self.assertTrue(summary.success, summary.error)
        attendances = self.env["hr.attendance"].search([("employee_id", "=", employee.id)])
        self.assertAlmostEqual(summary.data["total_worked_hours"], round(sum(attendances.mapped("worked_hours")), 2))
        self.assertFalse(self.execute("get_attendance_summary", {"date_from": "2026-13-01", "date_to": "2026-01-02"}, user=officer).success)

    def test_manufacturing_order_availability_and_schedule(self):
        planner = new_test_user(self.env, "agent_mrp", groups="base.group_user,mrp.group_mrp_manager,stock.group_stock_user")
        bom = self.env.ref("mrp.mrp_bom_manufacture")
        product = bom.product_tmpl_id.product_variant_id
        created = self.execute("create_manufacturing_order", {"product": product.id, "quantity": 2}, user=planner)
        self.assertTrue(created.success, created.error)
        production = self.env["mrp.production"].browse(created.data["id"])
        self.assertEqual((production.state, production.product_qty, production.bom_id), ("confirmed", 2.0, bom))
        checked = self.execute("check_bom_availability", {"production": production.name}, user=planner)
        self.assertTrue(checked.success, checked.error)
        self.assertEqual(checked.data["components_availability_state"], production.components_availability_state)
        self.assertEqual([c["forecast_available"] for c in checked.data["components"]],
                         production.move_raw_ids.mapped("forecast_availability"))
        by_product = self.execute("check_bom_availability", {"product": product.id, "quantity": 2}, user=planner)
        self.assertTrue(by_product.success, by_product.error)
        self.assertEqual(len(by_product.data["components"]), len(bom.bom_line_ids))
        schedule = self.execute("get_production_schedule", {"state": "confirmed"}, user=planner)
        self.assertIn(production.name, [o["name"] for o in schedule.data["orders"]])
        self.assertEqual(schedule.data["total"], self.env["mrp.production"].search_count([("state", "=", "confirmed")]))
        self.assertFalse(self.execute("create_manufacturing_order", {"product": "Azure Interior", "quantity": 1}, user=planner).success)
