"""Purchase tools (spec 000 §5.2): requests for quotation at the vendor's
prices and in the vendor's units, approval with its receipts, and vendor
pricing, on Odoo demo data."""
from odoo import Command
from odoo.tests import new_test_user, tagged

from .common import ToolCase


@tagged("post_install", "-at_install")
class TestPurchaseTools(ToolCase):

    def test_purchase_order_created_approved_and_priced(self):
        buyer = new_test_user(self.env, "agent_buyer", groups="base.group_user,purchase.group_purchase_manager")
        vendor = self.env.ref("base.res_partner_1")
        product = self.env.ref("product.product_product_12")
        self.env["product.supplierinfo"].create({"partner_id": vendor.id, "product_tmpl_id": product.product_tmpl_id.id,
                                                 "price": 77.0, "min_qty": 1})
        created = self.execute("create_purchase_order", {"vendor": vendor.id, "lines": [
            {"product": product.id, "quantity": 5}]}, user=buyer)
        self.assertTrue(created.success, created.error)
        order = self.env["purchase.order"].browse(created.data["id"])
        self.assertEqual((order.state, order.order_line.product_qty, order.order_line.price_unit),
                         ("draft", 5.0, 77.0))
        approved = self.execute("approve_purchase_order", {"order": order.name}, user=buyer)
        self.assertTrue(approved.success, approved.error)
        self.assertEqual(order.state, "purchase")
        self.assertTrue(order.picking_ids, "Inventory is installed: approving makes a receipt")
        self.assertEqual([r["name"] for r in approved.data["receipts"]], order.picking_ids.mapped("name"))
        pricing = self.execute("get_supplier_pricing", {"product": product.id, "vendor": vendor.id}, user=buyer)
        self.assertTrue(pricing.success, pricing.error)
        prices = self.env["product.supplierinfo"].search([("partner_id", "=", vendor.id),
                                                          ("product_tmpl_id", "=", product.product_tmpl_id.id)])
        self.assertEqual([v["price"] for v in pricing.data["vendors"]], prices.sorted("price").mapped("price"))
        negative = self.execute("create_purchase_order", {"vendor": vendor.id, "lines": [
            {"product": product.id, "quantity": -1}]}, user=buyer)
        self.assertFalse(negative.success)
        self.assertIn("lines.0.quantity: -1 is less than or equal to the minimum of 0", negative.error)

    def test_vendor_unit_is_allowed_on_purchase_lines(self):
        unit = self.env.ref("uom.product_uom_unit")
        crate = self.env["uom.uom"].create({"name": "Crate", "relative_factor": 24, "relative_uom_id": unit.id})
        # Without taxes: a product made here gets the default taxes of every company, unreadable to this user.
        product = self.env["product.product"].create({"name": "Vendor Crated", "purchase_ok": True,
                                                      "supplier_taxes_id": [Command.clear()]})
        self.env["product.supplierinfo"].create({"partner_id": self.customer.id,
                                                 "product_tmpl_id": product.product_tmpl_id.id,
                                                 "price": 50, "product_uom_id": crate.id})
        result = self.execute("create_purchase_order", {"vendor": self.customer.id, "lines": [
            {"product": product.id, "quantity": 2, "uom": "Crate"}]}, self.accountant)
        self.assertTrue(result.success, "Odoo 19 allows the vendor's unit on a purchase line "
                                        f"(purchase.order.line.allowed_uom_ids): {result.error}")
        line = self.env["purchase.order"].browse(result.data["id"]).order_line
        self.assertEqual((line.product_qty, line.product_uom_id, line.price_unit), (2.0, crate, 50.0))
