"""Issue 4, point 2: where Odoo answers a button with a dialog (a backorder
on a partial transfer, a backorder or consumption question on a
manufacturing order) the tool reports it and leaves the choice to the user."""
from odoo.tests import new_test_user, tagged

from .common import AgenticCase


@tagged("post_install", "-at_install")
class TestToolDialogs(AgenticCase):

    def test_partial_internal_transfer_reports_the_backorder_question(self):
        keeper = new_test_user(self.env, "dialog_keeper",
                               groups="base.group_user,stock.group_stock_manager,stock.group_stock_multi_locations")
        product = self.env["product.product"].create({"name": "Dialog Widget", "is_storable": True})
        stock = self.env.ref("stock.stock_location_stock")
        shelf = self.env["stock.location"].create({"name": "Dialog Shelf", "location_id": stock.id, "usage": "internal"})
        self.env["stock.quant"]._update_available_quantity(product, stock, 3)
        result = self.execute("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 5}],
                                                           "source_location": stock.id, "destination_location": shelf.id,
                                                           "validate": True}, keeper)
        self.assertTrue(result.success, result.error)
        self.assertTrue(result.data["needs_user_action"])
        self.assertEqual(result.data["action"]["res_model"], "stock.backorder.confirmation")
        picking = self.env["stock.picking"].browse(result.data["id"])
        self.assertEqual(picking.state, "assigned", "left open for the user to decide")
        self.assertEqual(result.data["moves"][0]["reserved"], 3.0)
        self.assertEqual(product.with_context(location=shelf.id).qty_available, 0, "nothing moved")
        self.assertIn("the user must finish this step in Odoo", result.data["message"])

    def test_mark_done_with_less_produced_reports_the_backorder_question(self):
        planner = new_test_user(self.env, "dialog_mrp", groups="base.group_user,mrp.group_mrp_manager,stock.group_stock_user")
        bom = self.env.ref("mrp.mrp_bom_manufacture")
        created = self.execute("create_manufacturing_order", {"product": bom.product_tmpl_id.product_variant_id.id,
                                                              "quantity": 2}, planner)
        production = self.env["mrp.production"].browse(created.data["id"])
        production.qty_producing = 1  # the user records one unit produced of two
        result = self.execute("odoo_method_call", {"model": "mrp.production", "record_ids": production.ids,
                                                   "method": "button_mark_done"}, planner)
        self.assertTrue(result.success, result.error)
        self.assertTrue(result.data["needs_user_action"])
        self.assertIn(result.data["action"]["res_model"], ("mrp.production.backorder", "mrp.consumption.warning"))
        self.assertNotEqual(production.state, "done", "left open for the user to decide")
