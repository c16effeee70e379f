"""What every tool shares in reading its arguments (spec 000 §5): names and
ids resolved to records (never guessed, never outside the user's reach),
units, quantities, numbers and dates, NUL and NaN, and LIKE characters in
names. Each refusal is checked for its message and for leaving nothing
behind."""
from odoo import Command
from odoo.tests import tagged

from ..tools.base_tool import ToolError
from ..tools.lookup import find_record
from .common import ToolCase, tool_call

NAN, INF = float("nan"), float("inf")
# Python's or PostgreSQL's own errors, which must never reach the model.
RAW_ERRORS = ("ValueError", "OverflowError", "convert float", "out of range", "does not match format",
              "invalid literal", "Exceeds the limit", "NumericValueOutOfRange", "NUL (0x00)", "Traceback")


@tagged("post_install", "-at_install")
class TestToolArguments(ToolCase):

    def assertClearRefusal(self, result, message, call=""):
        """``result`` failed with ``message`` and no raw Python or SQL error."""
        self.assertFalse(result.success, f"{call} succeeded: {str(result.data)[:300]}")
        self.assertIn(message, result.error, call)
        for raw in RAW_ERRORS:
            self.assertNotIn(raw, result.error, f"{call}: raw error reaches the model: {result.error[:300]}")

    # ----------------------------------------------------- names and ids
    def test_digit_reference_that_is_also_an_id_is_listed_as_ambiguous(self):
        """A bill whose reference is "<id of another invoice>": paying
        "<that reference>" must not pay the other invoice."""
        target = self.posted_invoice()
        bill = self.posted_invoice(move_type="in_invoice", ref=str(target.id))
        payments = self.count("account.payment")
        result = self.execute("register_payment", {"invoice": str(target.id)}, self.accountant)
        self.assertClearRefusal(result, f"'{target.id}' matches several invoice records by id, name or reference")
        self.assertIn(f"{target.display_name} (id {target.id})", result.error)
        self.assertIn(f"{bill.display_name} (id {bill.id})", result.error)
        self.assertEqual((target.payment_state, bill.payment_state), ("not_paid", "not_paid"))
        self.assertEqual(self.count("account.payment"), payments)

    def test_numeric_internal_reference_picks_its_product_unless_it_is_also_an_id(self):
        orders = self.count("sale.order")
        only_coded = self.env["product.product"].create({"name": "Only Coded", "default_code": "987654321",
                                                         "sale_ok": True})
        by_code = self.execute("create_quotation", {"partner": self.customer.id,
                                                    "lines": [{"product": "987654321", "quantity": 1}]},
                               self.accountant)
        self.assertTrue(by_code.success, by_code.error)
        self.assertEqual(self.env["sale.order"].browse(by_code.data["id"]).order_line.product_id, only_coded,
                         "the internal reference 987654321 names that product")
        # A product whose internal reference is the id of another product: both are candidates.
        other = self.env.ref("product.product_product_8")
        coded = self.env["product.product"].create({"name": "Coded", "default_code": str(other.id),
                                                    "sale_ok": True})
        ambiguous = self.execute("create_quotation", {"partner": self.customer.id,
                                                      "lines": [{"product": str(other.id), "quantity": 1}]},
                                 self.accountant)
        self.assertClearRefusal(ambiguous, f"'{other.id}' matches several product records by id, name or reference")
        self.assertIn(f"{other.display_name} (id {other.id})", ambiguous.error)
        self.assertIn(f"{coded.display_name} (id {coded.id})", ambiguous.error)
        self.assertEqual(self.count("sale.order"), orders + 1, "the ambiguous call created no quotation")
        # The id as a number, as the refusal suggests, is that product.
        by_id = self.execute("create_quotation", {"partner": self.customer.id,
                                                  "lines": [{"product": other.id, "quantity": 1}]}, self.accountant)
        self.assertTrue(by_id.success, by_id.error)
        self.assertEqual(self.env["sale.order"].browse(by_id.data["id"]).order_line.product_id, other)

    def test_exact_order_number_wins_over_another_orders_reference(self):
        product = self.env.ref("product.product_product_8")
        self.add_stock(product, 1)
        order = self.env["sale.order"].create({"partner_id": self.customer.id, "order_line": [
            Command.create({"product_id": product.id, "product_uom_qty": 1})]})
        order.action_confirm()
        order.picking_ids.move_ids.quantity = 1
        order.picking_ids.button_validate()
        purchase = self.env["purchase.order"].create({
            "partner_id": self.customer.id, "partner_ref": order.name,
            "order_line": [Command.create({"product_id": product.id, "product_qty": 1, "price_unit": 3})]})
        purchase.button_confirm()
        result = self.execute("create_invoice", {"order": order.name}, self.accountant)
        self.assertTrue(result.success, f"the exact sales order number {order.name} is refused: {result.error}")
        invoice = self.env["account.move"].browse(result.data["invoices"][0]["id"])
        self.assertEqual((invoice.move_type, invoice.invoice_line_ids.sale_line_ids.order_id),
                         ("out_invoice", order))
        self.assertFalse(purchase.invoice_ids)

    def test_records_of_a_company_the_user_cannot_access_are_refused(self):
        other = self.env["res.company"].create({"name": "Agent Other Company"})
        secret = self.env["product.product"].create({"name": "Other Company Widget", "company_id": other.id,
                                                     "sale_ok": True})
        partner = self.env["res.partner"].create({"name": "Other Company Client", "company_id": other.id})
        for params, message in [
            ({"partner": "Azure Interior", "lines": [{"product": secret.id, "quantity": 1}]},
             f"no product with id {secret.id} (or you cannot access it)"),
            ({"partner": "Azure Interior", "lines": [{"product": secret.name, "quantity": 1}]},
             "no product matches 'Other Company Widget'"),
            ({"partner": partner.id, "lines": [{"product": "Office Chair Black", "quantity": 1}]},
             "or you cannot access it"),
        ]:
            self.assertIn(message, self.execute("create_quotation", params).error)

    def test_customer_name_is_text_not_a_like_pattern(self):
        self.script(tool_call("get_customer_history", {"partner": "Azure Interi%"}), {"content": "ok"})
        thread, _result = self.run_agent("history")
        self.assertIn("no customer matches 'Azure Interi%'", self.observations(thread)[0])

    def test_employee_search_text_is_not_a_like_pattern(self):
        for query in ("%", "_"):
            result = self.execute("search_employees", {"query": query}, self.accountant)
            self.assertTrue(result.success, result.error)
            self.assertEqual(result.data["total"], 0,
                             f"query {query!r} matched every employee ({result.data['total']})")

    # ---------------------------------------------------- units and quantities
    def test_packaging_units_on_lines_and_units_that_are_not_the_products(self):
        chair = self.env.ref("product.product_product_12")
        pack = self.env["uom.uom"].search([("name", "=", "Pack of 6")])
        chair.product_tmpl_id.uom_ids = [(4, pack.id)]  # a packaging, as Odoo 19 allows on order lines
        created = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [
            {"product": chair.id, "quantity": 2, "uom": "pack of 6"}]})
        self.assertTrue(created.success, created.error)
        line = self.env["sale.order"].browse(created.data["id"]).order_line
        self.assertEqual((line.product_uom_qty, line.product_uom_id), (2.0, pack))
        self.assertAlmostEqual(line.price_unit, chair.lst_price * 6, msg="Odoo prices the pack")
        wrong = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [
            {"product": chair.id, "quantity": 1, "uom": "kg"}]})
        self.assertIn(f"'kg' is not a unit of {chair.display_name}; its units are: Units (id", wrong.error)
        self.assertIn(f"Pack of 6 (id {pack.id})", wrong.error)
        unknown = self.execute("create_quotation", {"partner": "Azure Interior", "lines": [
            {"product": chair.id, "quantity": 1, "uom": "Parsecs"}]})
        self.assertIn("'Parsecs' is not a unit of", unknown.error)

    def test_unit_name_is_looked_up_among_the_products_units(self):
        unit = self.env.ref("uom.product_uom_unit")
        box10 = self.env["uom.uom"].create({"name": "Box", "relative_factor": 10, "relative_uom_id": unit.id})
        self.env["uom.uom"].create({"name": "Box", "relative_factor": 12, "relative_uom_id": unit.id})  # another's
        product = self.env["product.product"].create({"name": "Boxed Thing", "sale_ok": True, "list_price": 5,
                                                      "uom_ids": [Command.set(box10.ids)]})
        result = self.execute("create_quotation", {"partner": self.customer.id, "lines": [
            {"product": product.id, "quantity": 2, "uom": "Box"}]}, self.accountant)
        self.assertTrue(result.success, f"only one 'Box' is a unit of the product: {result.error}")
        self.assertEqual(self.env["sale.order"].browse(result.data["id"]).order_line.product_uom_id, box10)

    def test_quantity_that_rounds_to_zero_in_its_unit_is_refused(self):
        product = self.env.ref("product.product_product_8")
        shelf = self.shelf()
        self.add_stock(product, 5)
        before = self.counts("sale.order", "account.move", "stock.picking")
        calls = [
            ("create_quotation", {"partner": self.customer.id,
                                  "lines": [{"product": product.id, "quantity": 0.0001}]},
             "line 1: quantity 0.0001 is 0 in Units (rounding 0.01)"),
            ("create_invoice", {"partner": self.customer.id,
                                "lines": [{"description": "x", "quantity": 1e-9, "price_unit": 3}]},
             "line 1: quantity 1e-09 rounds to 0"),
            ("create_internal_transfer", {"lines": [{"product": product.id, "quantity": 0.0001}],
                                          "source_location": self.stock.id, "destination_location": shelf.id},
             "line 1: quantity 0.0001 is 0 in Units (rounding 0.01)"),
        ]
        for name, params, message in calls:
            result = self.execute(name, params, self.accountant)
            self.assertClearRefusal(result, message, f"{name}: a quantity that rounds to 0 in the unit")
        self.assertEqual(self.counts("sale.order", "account.move", "stock.picking"), before)

    # --------------------------------------------------- numbers and dates
    def test_dates_out_of_range_or_not_written_yyyy_mm_dd_are_refused(self):
        invoice = self.posted_invoice()
        before = self.count("account.payment")
        for day in ("0001-01-01", "9999-12-31"):
            result = self.execute("register_payment", {"invoice": invoice.id, "amount": 1, "payment_date": day},
                                  self.accountant)
            self.assertClearRefusal(
                result, f"payment_date {day} is outside the dates this tool accepts (1900-01-01 to 2199-12-31)",
                f"a payment dated {day}")
        self.assertEqual(self.count("account.payment"), before)
        self.assertEqual(invoice.payment_state, "not_paid")
        loose = self.execute("get_profit_loss", {"date_from": "2026-01-01T99:99 garbage", "date_to": "2026-1-5"},
                             self.accountant)
        self.assertClearRefusal(loose, "date_from must be a date written YYYY-MM-DD, got '2026-01-01T99:99 garbage'",
                                "trailing garbage")
        unpadded = self.execute("get_profit_loss", {"date_from": "2026-01-01", "date_to": "2026-1-5"},
                                self.accountant)
        self.assertClearRefusal(unpadded, "date_to must be a date written YYYY-MM-DD, got '2026-1-5'",
                                "an unpadded month")

    def test_extreme_dates_and_non_finite_numbers_get_a_clear_message(self):
        product = self.env.ref("product.product_product_8")
        outside = "is outside the dates this tool accepts (1900-01-01 to 2199-12-31)"
        calls = [
            ("get_account_balance", {"account_type": "income", "date_to": "0001-01-01"},
             f"date_to 0001-01-01 {outside}"),
            ("generate_summary_report", {"report_type": "sales", "date_to": "9999-12-31"},
             f"date_to 9999-12-31 {outside}"),
            ("get_stock_valuation", {"date": "0001-01-01"}, f"date 0001-01-01 {outside}"),
            ("create_quotation", {"partner": self.customer.id,
                                  "lines": [{"product": product.id, "quantity": 1, "price_unit": NAN}]},
             "lines.0.price_unit: numbers must be finite, got nan"),
            ("create_invoice", {"partner": self.customer.id, "lines": [{"description": "x", "price_unit": INF}]},
             "lines.0.price_unit: numbers must be finite, got inf"),
            ("register_payment", {"invoice": self.posted_invoice().id, "amount": INF},
             "amount: numbers must be finite, got inf"),
        ]
        for name, params, message in calls:
            self.assertClearRefusal(self.execute(name, params, self.accountant), message, f"{name} {params}")

    def test_odd_digits_huge_ids_nul_and_offsets_get_a_clear_message(self):
        calls = [
            ("get_customer_history", {"partner": "²"}, "no customer matches '²'"),  # str.isdigit() but not int()
            ("get_customer_history", {"partner": "①"}, "no customer matches '①'"),
            ("get_customer_history", {"partner": "9" * 5000},  # Python's int digit limit; not read back whole
             "partner: '" + "9" * 79 + "… is too long"),
            ("get_customer_history", {"partner": "Azure\x00Interior"}, "partner: text cannot contain NUL characters"),
            ("odoo_search_read", {"model": "res.partner", "offset": 10 ** 20},
             "offset: 100000000000000000000 is greater than the maximum of 2147483647"),
        ]
        for name, params, message in calls:
            self.assertClearRefusal(self.execute(name, params, self.accountant), message, f"{name} {str(params)[:60]}")

    # ------------------------------------------------------ N-1: variant names
    def test_n1_variant_named_in_any_order_and_punctuation(self):
        """Odoo 19's demo Large Desk has the variants Wood, Glass and Metal,
        shown "Large Desk (Wood)" but searched by template name only."""
        wood = self.env.ref("product.product_product_8")
        self.assertEqual(wood.display_name, "Large Desk (Wood)")
        for name in ("Large Desk Wood", "large desk (wood)", "Wood Large Desk", "Large Desk - Wood",
                     "LARGE  desk,wood"):
            result = self.execute("create_quotation", {"partner": "Azure Interior",
                                                       "lines": [{"product": name, "quantity": 1}]})
            self.assertTrue(result.success, f"{name!r}: {result.error}")
            self.assertEqual(self.env["sale.order"].browse(result.data["id"]).order_line.product_id, wood, name)

    def test_n1_template_name_alone_lists_the_variants(self):
        result = self.execute("create_quotation", {"partner": "Azure Interior",
                                                   "lines": [{"product": "Large Desk", "quantity": 1}]})
        self.assertFalse(result.success)
        self.assertIn("3 product records match 'Large Desk': Large Desk (Wood)", result.error)
        for variant in ("Large Desk (Glass)", "Large Desk (Metal)"):
            self.assertIn(variant, result.error)

    def test_n1_no_match_lists_the_nearest_first(self):
        result = self.execute("create_quotation", {"partner": "Azure Interior",
                                                   "lines": [{"product": "Large Desk Oak", "quantity": 1}]})
        self.assertFalse(result.success)
        closest = result.error.split("Closest: ", 1)[1].split("; ")
        self.assertEqual([entry.split(" (id")[0] for entry in closest[:3]],
                         ["Large Desk (Wood)", "Large Desk (Glass)", "Large Desk (Metal)"],
                         "the variants sharing two of the three words come first")

    def test_words_match_whole_words_only(self):
        """"Azure Interi%" is not a pattern, and "interi" is not a word of
        "Azure Interior": nothing is taken, the close names are listed."""
        result = self.execute("get_customer_history", {"partner": "Azure Interi"}, user=self.salesperson)
        self.assertIn("customer records match 'Azure Interi': Azure Interior (id", result.error,
                      "a name's beginning still matches as a part of the name (ilike), here the company and contacts")
        result = self.execute("get_customer_history", {"partner": "Interi Azure"}, user=self.salesperson)
        self.assertFalse(result.success)
        self.assertIn("no customer matches 'Interi Azure'. Closest: Azure Interior", result.error)

    # ------------------------------------------------------------- periods
    def test_every_period_is_read_by_the_same_rule(self):
        """One reader for the periods of HR, manufacturing, accounting and
        report tools: YYYY-MM-DD days, inclusive, never reversed."""
        calls = [("get_attendance_summary", {}), ("get_production_schedule", {}), ("get_profit_loss", {}),
                 ("get_account_balance", {"account_type": "income"}),
                 ("generate_summary_report", {"report_type": "sales"})]
        for name, params in calls:
            reversed_period = self.execute(name, {**params, "date_from": "2026-03-02", "date_to": "2026-03-01"},
                                           user=self.env.ref("base.user_admin"))
            self.assertFalse(reversed_period.success, name)
            self.assertIn("date_from 2026-03-02 is after date_to 2026-03-01", reversed_period.error, name)
            loose = self.execute(name, {**params, "date_from": "2026-3-1", "date_to": "2026-03-01"},
                                 user=self.env.ref("base.user_admin"))
            self.assertIn("date_from must be a date written YYYY-MM-DD, got '2026-3-1'", loose.error, name)
            if name in ("get_profit_loss", "get_account_balance"):  # date_to defaults to today
                future = self.execute(name, {**params, "date_from": "2199-01-01"}, user=self.env.ref("base.user_admin"))
                self.assertIn("is after date_to", future.error)
                self.assertIn("(not given: the default)", future.error)
            one_day = self.execute(name, {**params, "date_from": "2026-03-01", "date_to": "2026-03-01"},
                                   user=self.env.ref("base.user_admin"))
            self.assertTrue(one_day.success, f"{name}: {one_day.error}")

    def test_a_record_left_out_by_the_tool_is_named_with_the_reason(self):
        """A product that exists but cannot be sold, bought or moved is named
        and the reason given, instead of "no product matches"."""
        kit = self.env["product.product"].create({"name": "Not For Sale Kit", "sale_ok": False, "purchase_ok": False})
        sold = self.execute("create_quotation", {"partner": "Azure Interior",
                                                 "lines": [{"product": "Not For Sale Kit", "quantity": 1}]})
        self.assertIn(f"Not For Sale Kit (id {kit.id}) cannot be sold (its Sales option is off)", sold.error)
        bought = self.execute("create_purchase_order", {"vendor": self.customer.id,
                                                        "lines": [{"product": kit.id, "quantity": 1}]}, self.accountant)
        self.assertIn(f"Not For Sale Kit (id {kit.id}) cannot be purchased", bought.error)
        customers = self.env.ref("stock.stock_location_customers")
        moved = self.execute("create_internal_transfer", {"lines": [{"product": kit.id, "quantity": 1}],
                                                          "source_location": customers.id,
                                                          "destination_location": self.stock.id}, self.accountant)
        self.assertIn(f"{customers.display_name} (id {customers.id}) is not an internal location", moved.error)

    # ------------------------------------ names the adversarial round tried
    def test_names_are_never_taken_from_inside_a_word_or_past_a_limit(self):
        admin = self.env.ref("base.user_admin")
        colleen = self.env["res.partner"].search([("name", "=", "Colleen Diaz")], limit=1)
        self.assertTrue(colleen, "a contact of the demo data")
        inside = self.execute("get_customer_history", {"partner": "lee"}, user=admin)
        self.assertIn(f"'lee' is only a part of a word of {colleen.display_name} (id {colleen.id})", inside.error)
        self.assertTrue(self.execute("get_customer_history", {"partner": "Colleen"}, user=admin).success)
        padded = self.execute("get_customer_history", {"partner": f"000{colleen.id}"}, user=admin)
        self.assertIn(f"no customer with id or reference 000{colleen.id}", padded.error, "leading zeros: not an id")
        blank = self.execute("get_customer_history", {"partner": "  \t"}, user=admin)
        self.assertIn("a customer is required", blank.error)
        self.assertIn("is too long", self.execute("get_customer_history", {"partner": "Azure " * 40}, user=admin).error)
        self.assertIn("a customer name has at most 200 characters", self._find_error("res.partner", "Azure " * 40))
        as_float = self.execute("get_customer_history", {"partner": float(colleen.id)}, user=admin)
        self.assertTrue(as_float.success, as_float.error)
        surrogate = self.execute("get_customer_history", {"partner": "Azure \ud800"}, user=admin)
        self.assertIn("partner: text cannot contain lone UTF-16 surrogates", surrogate.error)

    def _find_error(self, model, value, label="customer"):
        """The message ``find_record`` refuses ``value`` with."""
        with self.assertRaises(ToolError) as error:
            find_record(self.env, model, value, label=label)
        return str(error.exception)

    def test_every_word_counts_and_candidates_are_not_cut_at_a_hundred(self):
        Product = self.env["product.product"]
        grade5 = Product.create({"name": "Steel Hex Bolt Zinc Plated Coarse Thread Grade 5 M10", "sale_ok": True})
        Product.create({"name": "Steel Hex Bolt Zinc Plated Coarse Thread Grade 8 M10", "sale_ok": True})
        found = self.execute("create_quotation", {"partner": self.customer.id, "lines": [
            {"product": "M10 Grade 5 Coarse Thread Zinc Plated Steel Hex Bolt", "quantity": 1}]})
        self.assertTrue(found.success, found.error)
        self.assertEqual(self.env["sale.order"].browse(found.data["id"]).order_line.product_id, grade5)
        blue = Product.create({"name": "Pro Set Blue", "default_code": "A000"})
        Product.create([{"name": f"Prox Setx {n:03d}", "default_code": f"A{n:03d}"} for n in range(1, 151)])
        red = Product.create({"name": "Pro Set Red"})
        listed = self._find_error("product.product", "Set Pro", label="product")
        self.assertIn(f"Pro Set Blue (id {blue.id})", listed)
        self.assertIn(f"Pro Set Red (id {red.id})", listed)
