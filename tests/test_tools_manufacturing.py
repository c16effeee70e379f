"""Manufacturing tools (spec 000 §5.2): manufacturing orders from the
product's own bill of materials (never another product's, never a kit), in
the product's unit, component availability, the production schedule, and
Odoo's questions on Mark as Done left to the user, on Odoo demo data."""
from odoo import Command
from odoo.tests import new_test_user, tagged

from .common import ToolCase


@tagged("post_install", "-at_install")
class TestManufacturingTools(ToolCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.planner = new_test_user(cls.env, "agent_mrp",
                                    groups="base.group_user,mrp.group_mrp_manager,stock.group_stock_user")

    def test_manufacturing_order_availability_and_schedule(self):
        bom = self.env.ref("mrp.mrp_bom_manufacture")
        product = bom.product_tmpl_id.product_variant_id
        created = self.execute("create_manufacturing_order", {"product": product.id, "quantity": 2}, user=self.planner)
        self.assertTrue(created.success, created.error)
        production = self.env["mrp.production"].browse(created.data["id"])
        self.assertEqual((production.state, production.product_qty, production.bom_id), ("confirmed", 2.0, bom))
        checked = self.execute("check_bom_availability", {"production": production.name}, user=self.planner)
        self.assertTrue(checked.success, checked.error)
        self.assertEqual(checked.data["components_availability_state"], production.components_availability_state)
        self.assertEqual([c["forecast_available"] for c in checked.data["components"]],
                         production.move_raw_ids.mapped("forecast_availability"))
        by_product = self.execute("check_bom_availability", {"product": product.id, "quantity": 2}, user=self.planner)
        self.assertTrue(by_product.success, by_product.error)
        self.assertEqual(len(by_product.data["components"]), len(bom.bom_line_ids))
        schedule = self.execute("get_production_schedule", {"state": "confirmed"}, user=self.planner)
        self.assertIn(production.name, [o["name"] for o in schedule.data["orders"]])
        self.assertEqual(schedule.data["total"], self.env["mrp.production"].search_count([("state", "=", "confirmed")]))
        not_a_product = self.execute("create_manufacturing_order", {"product": "Azure Interior", "quantity": 1},
                                     user=self.planner)
        self.assertFalse(not_a_product.success)
        self.assertIn("no product matches 'Azure Interior'", not_a_product.error)

    def test_mark_done_with_less_produced_reports_the_backorder_question(self):
        """Issue 4, point 2: Odoo answers Mark as Done with a backorder or
        consumption question; the tool reports it and leaves the choice to
        the user."""
        bom = self.env.ref("mrp.mrp_bom_manufacture")
        created = self.execute("create_manufacturing_order", {"product": bom.product_tmpl_id.product_variant_id.id,
                                                              "quantity": 2}, self.planner)
        self.assertTrue(created.success, created.error)
        production = self.env["mrp.production"].browse(created.data["id"])
        production.qty_producing = 1  # the user records one unit produced of two
        result = self.execute("odoo_method_call", {"model": "mrp.production", "record_ids": production.ids,
                                                   "method": "button_mark_done"}, self.planner)
        self.assertTrue(result.success, result.error)
        self.assertTrue(result.data["needs_user_action"])
        self.assertIn(result.data["action"]["res_model"], ("mrp.production.backorder", "mrp.consumption.warning"))
        self.assertNotEqual(production.state, "done", "left open for the user to decide")

    def test_bom_of_another_product_is_refused(self):
        """create_manufacturing_order(product=X, bom=<BoM of Y>) confirms an
        MO that makes X out of Y's components."""
        desk_bom = self.env.ref("mrp.mrp_bom_desk")
        other = self.env.ref("product.product_product_8")
        self.assertNotEqual(desk_bom.product_tmpl_id, other.product_tmpl_id)
        before = self.count("mrp.production")
        result = self.execute("create_manufacturing_order", {"product": other.id, "quantity": 1, "bom": desk_bom.id},
                              self.accountant)
        self.assertFalse(result.success, f"MO for {other.display_name} made with the BoM of {desk_bom.display_name}")
        self.assertIn(f"{desk_bom.display_name} is the bill of materials of {desk_bom.product_tmpl_id.display_name}, "
                      f"not of {other.display_name}", result.error)
        self.assertEqual(self.count("mrp.production"), before)

    def test_kit_bom_is_not_manufactured(self):
        """A kit (phantom BoM) is not manufactured in Odoo, but given as
        `bom` it yields a confirmed MO; without `bom` the refusal says the
        product has no BoM at all."""
        kit = self.env.ref("mrp.mrp_bom_kit")
        self.assertEqual(kit.type, "phantom")
        product = kit.product_tmpl_id.product_variant_id
        before = self.count("mrp.production")
        result = self.execute("create_manufacturing_order", {"product": product.id, "quantity": 1, "bom": kit.id},
                              self.accountant)
        self.assertFalse(result.success, "a confirmed manufacturing order was made from a kit BoM")
        self.assertIn("is a kit: kits are not manufactured, their components are delivered instead", result.error)
        self.assertEqual(self.count("mrp.production"), before)
        plain = self.execute("create_manufacturing_order", {"product": product.id, "quantity": 1}, self.accountant)
        self.assertFalse(plain.success)
        self.assertIn("kit", plain.error.lower(), f"the refusal hides that the product is a kit: {plain.error}")

    def test_quantity_is_in_the_products_unit_not_the_boms(self):
        """The schema says quantity is in the product's unit. With a BoM per
        dozen, 12 units become an MO of 12 dozens (144 units) and the
        availability check asks for 144 components."""
        component = self.env["product.product"].create({"name": "Dozen Component", "is_storable": True})
        finished = self.env["product.product"].create({"name": "Made By The Dozen", "is_storable": True})
        self.env["mrp.bom"].create({"product_tmpl_id": finished.product_tmpl_id.id, "product_qty": 1,
                                    "product_uom_id": self.env.ref("uom.product_uom_dozen").id,
                                    "bom_line_ids": [Command.create({"product_id": component.id, "product_qty": 12})]})
        check = self.execute("check_bom_availability", {"product": finished.id, "quantity": 12}, self.accountant)
        self.assertTrue(check.success, check.error)
        self.assertEqual(check.data["components"][0]["required"], 12.0, "12 units need 12 components (one dozen)")
        result = self.execute("create_manufacturing_order", {"product": finished.id, "quantity": 12}, self.accountant)
        self.assertTrue(result.success, result.error)
        production = self.env["mrp.production"].browse(result.data["id"])
        self.assertEqual(production.product_uom_qty, 12.0, f"asked 12 Units, ordered {production.product_qty} "
                                                           f"{production.product_uom_id.name}")

    def test_availability_adds_up_a_component_used_on_two_lines(self):
        component = self.env["product.product"].create({"name": "Component Used Twice", "is_storable": True})
        finished = self.env["product.product"].create({"name": "Uses It Twice", "is_storable": True})
        self.env["mrp.bom"].create({"product_tmpl_id": finished.product_tmpl_id.id, "product_qty": 1,
                                    "bom_line_ids": [Command.create({"product_id": component.id, "product_qty": 3}),
                                                     Command.create({"product_id": component.id, "product_qty": 3})]})
        self.add_stock(component, 5)
        result = self.execute("check_bom_availability", {"product": finished.id}, self.accountant)
        self.assertTrue(result.success, result.error)
        self.assertFalse(result.data["all_available"], "6 units needed, 5 free: each line is compared with the "
                                                       "whole stock")
