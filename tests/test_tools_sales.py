"""Sales and CRM tools (spec 000 §5.2): quotations, customer history,
confirmation, discounts, leads and the pipeline summary, on Odoo demo data,
each asserting the state Odoo itself ends in."""
from odoo.tests import tagged

from .common import ToolCase


@tagged("post_install", "-at_install")
class TestSalesTools(ToolCase):

    def _quotation(self, qty=2):
        return self.env["sale.order"].with_user(self.salesperson).create({
            "partner_id": self.env.ref("base.res_partner_12").id,
            "order_line": [
                (0, 0, {"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": qty}),
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
        orders = self.count("sale.order")
        ambiguous = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [
            {"product": "Large Desk", "quantity": 1}]})
        self.assertIn("Large Desk (Glass)", ambiguous.error)
        zero = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [
            {"product": "Office Chair Black", "quantity": 0}]})
        self.assertFalse(zero.success)
        self.assertIn("lines.0.quantity: 0 is less than or equal to the minimum of 0", zero.error)
        unknown = self.execute("create_quotation", {"partner": "Azure Interiorz Ltd", "lines": [
            {"product": "Office Chair Black", "quantity": 1}]})
        self.assertIn("no customer matches", unknown.error)
        self.assertIn("Azure Interior", unknown.error, "closest names are listed")
        self.assertEqual(self.count("sale.order"), orders)

    def test_get_customer_history(self):
        result = self.execute("get_customer_history", {"partner": "Azure Interior"})
        self.assertTrue(result.success, result.error)
        azure = self.env.ref("base.res_partner_12")
        orders = self.env["sale.order"].search([("partner_id", "child_of", azure.id), ("state", "=", "sale")])
        self.assertEqual(result.data["order_count"], len(orders))
        self.assertLessEqual(len(result.data["recent_orders"]), 5)
        recent = self.env["sale.order"].with_user(self.salesperson).search(
            [("partner_id", "child_of", azure.id)], order="date_order desc, id desc", limit=5)
        self.assertEqual([o["name"] for o in result.data["recent_orders"]], recent.mapped("name"))

    def test_confirm_sale_order_by_number(self):
        order = self._quotation()
        result = self.execute("confirm_sale_order", {"order": order.name})
        self.assertTrue(result.success, result.error)
        self.assertEqual(order.state, "sale")
        self.assertEqual(result.data["state"], "sale")
        self.assertTrue(order.picking_ids, "Inventory is installed: confirming makes a delivery")
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
        self.assertAlmostEqual(order.amount_untaxed, total_before - desk.price_unit * desk.product_uom_qty * 0.10,
                               places=2)
        self.assertEqual(result.data["amount_untaxed"]["amount"], order.currency_id.round(order.amount_untaxed))
        too_much = self.execute("apply_discount", {"order": order.id, "discount": 120})
        self.assertFalse(too_much.success)
        self.assertIn("discount: 120 is greater than the maximum of 100", too_much.error)
        self.assertEqual((desk.discount, other.discount), (10.0, 0.0))

    def test_create_lead_and_pipeline_summary(self):
        result = self.execute("create_lead", {"name": "40 desks for Azure", "partner": "Azure Interior",
                                              "expected_revenue": 12000})
        self.assertTrue(result.success, result.error)
        lead = self.env["crm.lead"].browse(result.data["id"])
        self.assertEqual((lead.type, lead.partner_id, lead.expected_revenue),
                         ("opportunity", self.env.ref("base.res_partner_12"), 12000))
        summary = self.execute("get_sales_pipeline_summary", {})
        self.assertTrue(summary.success, summary.error)
        # The user's own view of the pipeline: record rules apply (a salesperson sees their own leads).
        leads = self.env["crm.lead"].with_user(self.salesperson).search([("type", "=", "opportunity")])
        self.assertEqual(summary.data["total_count"], len(leads))
        self.assertAlmostEqual(summary.data["total_expected_revenue"]["amount"],
                               sum(leads.mapped("expected_revenue")), places=2)
        stage = next(s for s in summary.data["stages"] if s["stage"] == lead.stage_id.name)
        self.assertEqual(stage["count"], len(leads.filtered(lambda x: x.stage_id == lead.stage_id)))
