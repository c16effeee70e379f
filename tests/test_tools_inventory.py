"""Inventory tools (spec 000 §5.2): stock levels, internal transfers (with
Odoo's backorder question left to the user) and stock valuation, each
checked against the quantities and values Odoo itself holds, for the
current company only."""
from datetime import timedelta

from odoo import Command, fields
from odoo.tests import new_test_user, tagged

from .common import ToolCase


@tagged("post_install", "-at_install")
class TestInventoryTools(ToolCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.keeper = new_test_user(cls.env, "agent_keeper", groups="base.group_user,stock.group_stock_manager,"
                                   "stock.group_stock_multi_locations")

    # ------------------------------------------------- levels and transfers
    def test_stock_levels_equal_quants_and_internal_transfer_moves_stock(self):
        product = self.env.ref("product.product_product_8")
        shelf = self.shelf()
        self.add_stock(product, 10)
        levels = self.execute("check_stock_levels", {"product": product.id}, user=self.keeper)
        self.assertTrue(levels.success, levels.error)
        quants = self.env["stock.quant"].search([("product_id", "=", product.id),
                                                 ("location_id.usage", "=", "internal")])
        self.assertAlmostEqual(levels.data["on_hand"], sum(quants.mapped("quantity")))
        self.assertAlmostEqual(levels.data["on_hand"], product.qty_available)
        moved = self.execute("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 4}],
                                                          "source_location": self.stock.id,
                                                          "destination_location": shelf.complete_name,
                                                          "validate": True}, user=self.keeper)
        self.assertTrue(moved.success, moved.error)
        picking = self.env["stock.picking"].browse(moved.data["id"])
        self.assertEqual(picking.state, "done")
        self.assertAlmostEqual(product.with_context(location=shelf.id).qty_available, 4)
        same = self.execute("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 1}],
                                                         "source_location": self.stock.id,
                                                         "destination_location": self.stock.id}, user=self.keeper)
        self.assertIn("same", same.error)

    def test_partial_internal_transfer_reports_the_backorder_question(self):
        """Issue 4, point 2: Odoo answers Validate with a backorder question;
        the tool reports it and leaves the choice to the user."""
        product = self.env["product.product"].create({"name": "Dialog Widget", "is_storable": True})
        shelf = self.shelf("Dialog Shelf")
        self.add_stock(product, 3)
        result = self.execute("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 5}],
                                                           "source_location": self.stock.id,
                                                           "destination_location": shelf.id,
                                                           "validate": True}, self.keeper)
        self.assertTrue(result.success, result.error)
        self.assertTrue(result.data["needs_user_action"])
        self.assertEqual(result.data["action"]["res_model"], "stock.backorder.confirmation")
        picking = self.env["stock.picking"].browse(result.data["id"])
        self.assertEqual(picking.state, "assigned", "left open for the user to decide")
        self.assertEqual(result.data["moves"][0]["reserved"], 3.0)
        self.assertEqual(product.with_context(location=shelf.id).qty_available, 0, "nothing moved")
        self.assertIn("the user must finish this step in Odoo", result.data["message"])

    def test_transfer_answer_states_each_moves_unit(self):
        unit = self.env.ref("uom.product_uom_unit")
        box10 = self.env["uom.uom"].create({"name": "Box of 10", "relative_factor": 10, "relative_uom_id": unit.id})
        product = self.env["product.product"].create({"name": "Boxed", "is_storable": True,
                                                      "uom_ids": [Command.set(box10.ids)]})
        self.add_stock(product, 100)
        result = self.execute("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 2,
                                                                      "uom": box10.id}],
                                                           "source_location": self.stock.id,
                                                           "destination_location": self.shelf().id},
                              self.accountant)
        self.assertTrue(result.success, result.error)
        self.assertEqual((result.data["moves"][0]["quantity"], result.data["moves"][0].get("uom")),
                         (2.0, "Box of 10"), "quantity 2.0 with no unit (it is 20 Units)")

    def test_services_are_not_moved_between_locations(self):
        service = self.env["product.product"].create({"name": "Service To Move", "type": "service"})
        before = self.count("stock.picking")
        result = self.execute("create_internal_transfer", {"lines": [{"product": service.id, "quantity": 1}],
                                                           "source_location": self.stock.id,
                                                           "destination_location": self.shelf().id,
                                                           "validate": True}, self.accountant)
        self.assertFalse(result.success, f"a service was transferred ({result.data and result.data['state']})")
        self.assertIn(f"Service To Move (id {service.id}) is not a good (a service or a combo): only goods move "
                      "between locations", result.error)
        self.assertEqual(self.count("stock.picking"), before)

    def test_location_outside_the_warehouse_is_refused(self):
        self.setup_company_b()
        product = self.env["product.product"].create({"name": "Stocked In A", "is_storable": True})
        self.add_stock(product, 4)
        result = self.execute("check_stock_levels", {"product": product.id, "warehouse": self.warehouse_b.id,
                                                     "location": self.stock.id}, self.user_ab)
        self.assertFalse(result.success, "WH/Stock is not in warehouse B: the answer is 'on hand 0' "
                                         f"instead of saying so: {result.data}")
        self.assertIn(f"WH/Stock is not a location of warehouse {self.warehouse_b.name}; give one or the other",
                      result.error)

    # ------------------------------------------------------------ valuation
    def test_stock_valuation_equals_odoos_product_valuation(self):
        product = self.env.ref("product.product_product_8")
        product.standard_price = 40.0
        self.env["stock.quant"].with_context(inventory_mode=True).create({  # an inventory adjustment, as a user does
            "product_id": product.id, "location_id": self.stock.id,
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
        self.assertAlmostEqual(one["total_value"]["amount"], 40.0 * product.qty_available, places=2,
                               msg="standard cost")
        self.assertAlmostEqual(one["products"][0]["quantity"], product.qty_available)
        past = self.run_as_accountant("get_stock_valuation", {"product": product.id, "date": "2000-01-01"})
        self.assertEqual((past["total_value"]["amount"], past["products"]), (0.0, []))
        self.assertIn("YYYY-MM-DD", self.execute("get_stock_valuation", {"date": "yesterday"}, self.accountant).error)

    def test_stock_valuation_counts_the_current_companys_stock_at_its_cost(self):
        self.setup_company_b()
        product = self.env["product.product"].create({"name": "MC Valued", "is_storable": True})
        product.with_company(self.company_a).standard_price = 100.0
        product.with_company(self.company_b).standard_price = 10.0
        self.add_stock(product, 5, self.warehouse_b.lot_stock_id)
        self.add_stock(product, 1)
        whole = self.execute("get_stock_valuation", {"product": product.id}, self.user_ab)
        self.assertTrue(whole.success, whole.error)
        self.assertEqual((whole.data["company"], whole.data["products"][0]["quantity"],
                          whole.data["total_value"]["amount"]),
                         (self.company_a.name, 1.0, 100.0),
                         "company B's 5 units are counted and valued at company A's cost")
        in_b = self.execute("get_stock_valuation", {"product": product.id, "warehouse": self.warehouse_b.id},
                            self.user_ab)
        self.assertTrue(in_b.success, in_b.error)
        self.assertEqual((in_b.data["company"], in_b.data["products"][0]["quantity"], in_b.data["total_value"]),
                         (self.company_b.name, 5.0, {"amount": 50.0, "currency": "EUR"}),
                         f"B's stock valued at A's cost in A's currency: {in_b.data['total_value']}")

    def test_stock_valuation_explains_non_storable_products_and_future_dates(self):
        service = self.env.ref("product.product_product_1")  # a service: not storable
        result = self.execute("get_stock_valuation", {"product": service.id}, self.accountant)
        self.assertFalse(result.success, "a product that is not storable gets 'value 0, 0 products' without a "
                                         f"word why: {result.data}")
        self.assertIn(f"{service.display_name} is not tracked in inventory (not a storable product), so it has no "
                      "stock value", result.error)
        today = fields.Date.context_today(self.env["res.company"].with_user(self.accountant))
        for day in (today + timedelta(days=365), fields.Date.to_date("2199-12-31")):
            future = self.execute("get_stock_valuation", {"date": str(day)}, self.accountant)
            self.assertFalse(future.success, f"a future date answers today's value labelled {day}: {future.data}")
            self.assertIn(f"date {day} is in the future; stock value is known up to today ({today})", future.error)
        beyond = self.execute("get_stock_valuation", {"date": "2999-01-01"}, self.accountant)
        self.assertIn("date 2999-01-01 is outside the dates this tool accepts", beyond.error)
