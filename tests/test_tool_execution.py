"""Tool model, executor pipeline, generic ORM tools and sales tools
(spec 000 §3.3, §4.6, §4.7, §5.1, §5.2)."""
import json

from odoo.tests import new_test_user, tagged

from odoo.addons.agentic_ai.engine.observer import MAX_CHARS, Observer
from odoo.addons.agentic_ai.tools.base_tool import MAX_LIMIT
from odoo.addons.agentic_ai.tools.orm_tool import ALLOWED_METHODS, METHOD_SUBSTITUTES, odoo_method_call

from .common import AgenticCase


@tagged("post_install", "-at_install")
class TestToolExecution(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.salesperson = cls.env.ref("base.user_demo")
        cls.Tool = cls.env["agentic.ai.tool"]

    def tool(self, name):
        return self.Tool.search([("name", "=", name)])

    def execute(self, name, params, user=None):
        return super().execute(name, params, user or self.salesperson)

    # ------------------------------------------------------------ tool model
    def test_every_default_tool_has_a_valid_schema_matching_its_function(self):
        import inspect
        from odoo.addons.agentic_ai.tools.base_tool import resolve_handler
        tools = self.Tool.search([("tool_type", "in", ("native", "orm_crud"))])
        self.assertGreaterEqual(len(tools), 9)
        for tool in tools:
            signature = inspect.signature(resolve_handler(tool.handler))
            params = [p for p in signature.parameters if p != "env"]
            schema = json.loads(tool.parameter_schema)
            self.assertEqual(set(schema["properties"]), set(params), tool.name)
            required = {p.name for p in signature.parameters.values() if p.default is inspect.Parameter.empty} - {"env"}
            self.assertEqual(set(schema.get("required", [])), required, tool.name)
            self.assertGreater(len(tool.description), 80, f"{tool.name} needs a description written for a model")

    def test_spec_catalogue_names_and_risk_levels(self):
        """Spec 000 §5.1 and §5.2: every tool, with the spec's risk level."""
        spec = {
            "odoo_search_read": "low", "odoo_create": "medium", "odoo_write": "medium", "odoo_unlink": "high",
            "odoo_method_call": "variable",
            "create_quotation": "medium", "confirm_sale_order": "high", "get_customer_history": "low",
            "get_sales_pipeline_summary": "low", "create_lead": "medium", "apply_discount": "medium",
            "create_purchase_order": "medium", "approve_purchase_order": "high", "get_supplier_pricing": "low",
            "check_stock_levels": "low", "create_internal_transfer": "high", "get_stock_valuation": "low",
            "create_invoice": "medium", "post_invoice": "high", "register_payment": "high",
            "get_account_balance": "low", "get_profit_loss": "low",
            "search_employees": "low", "create_leave_request": "medium", "get_attendance_summary": "low",
            "create_manufacturing_order": "medium", "check_bom_availability": "low", "get_production_schedule": "low",
            "generate_summary_report": "low",
        }
        tools = self.Tool.search([("name", "in", list(spec))])
        self.assertEqual({t.name: t.risk_level for t in tools}, spec)
        self.assertLessEqual(tools, self.agent.tool_ids, "the default agent has every tool")

    def test_to_llm_schema_shape(self):
        schema = self.tool("odoo_search_read").to_llm_schema()
        self.assertEqual(set(schema), {"name", "description", "parameters"})
        self.assertEqual(schema["parameters"]["type"], "object")
        self.assertEqual(schema["parameters"]["required"], ["model"])

    def test_validate_params_required_type_enum(self):
        tool = self.Tool.create({
            "name": "enum_tool", "description": "x", "tool_type": "python_code", "python_code": "result = params",
            "parameter_schema": json.dumps({"type": "object", "properties": {
                "kind": {"type": "string", "enum": ["a", "b"]}, "count": {"type": "integer"},
                "flag": {"type": "boolean"}, "items": {"type": "array"}, "opts": {"type": "object"},
                "ratio": {"type": "number"}}, "required": ["kind"]}),
        })
        self.assertEqual(tool._validate_params({"kind": "a", "count": 2, "flag": True, "items": [], "opts": {}, "ratio": 1.5}), [])
        self.assertIn("'kind' is a required parameter", tool._validate_params({})[0])
        self.assertIn("is not one of ['a', 'b']", tool._validate_params({"kind": "c"})[0])
        errors = tool._validate_params({"kind": "a", "count": "2", "flag": "yes", "items": {}, "opts": [], "ratio": "x"})
        self.assertEqual(len(errors), 5)
        self.assertEqual(tool._validate_params([1]), ["arguments must be a JSON object"])

    def test_invalid_schema_or_handler_is_refused(self):
        from odoo.exceptions import ValidationError
        with self.assertRaises(ValidationError):
            self.Tool.create({"name": "bad schema", "description": "x", "tool_type": "python_code",
                              "python_code": "result = 1", "parameter_schema": "{not json"})
        with self.assertRaises(ValidationError):
            self.Tool.create({"name": "os_system", "description": "x", "tool_type": "native", "handler": "os.system"})

    def test_tool_of_missing_app_is_not_offered(self):
        tool = self.Tool.create({"name": "needs_app", "description": "x", "tool_type": "python_code",
                                 "python_code": "result = 1", "required_module": "not_an_installed_app"})
        self.agent.tool_ids = [(4, tool.id)]
        names = self.agent._get_available_tools().mapped("name")
        self.assertNotIn("needs_app", names)
        self.assertIn("create_quotation", names)
        called = self.execute("needs_app", {})
        self.assertFalse(called.success)
        self.assertIn("needs_app is not available here: it needs the not_an_installed_app app installed", called.error)

    def test_sanitize_drops_undeclared_parameters(self):
        tool = self.tool("odoo_search_read")
        self.assertEqual(tool._sanitize_params({"model": " res.partner ", "env": "x", "context": {}}), {"model": "res.partner"})

    # -------------------------------------------------------------- executor
    def test_tool_runs_as_requesting_user_not_superuser(self):
        tool = self.Tool.create({"name": "whoami", "description": "x", "tool_type": "python_code", "risk_level": "low",
                                 "python_code": "result = {'uid': env.uid, 'su': env.su}"})
        self.agent.tool_ids = [(4, tool.id)]
        result = self.execute("whoami", {})
        self.assertEqual(result.data, {"uid": self.salesperson.id, "su": False})

    def test_sudo_user_id_runs_as_that_user(self):
        runner = new_test_user(self.env, "agent_runner", groups="base.group_user")
        self.agent.sudo_user_id = runner
        env = self.agent._get_execution_env(self.salesperson)
        self.assertEqual(env.uid, runner.id)
        self.assertFalse(env.su)

    def test_access_rights_of_user_apply(self):
        portal_like = new_test_user(self.env, "agent_basic", groups="base.group_user")
        result = self.execute("odoo_search_read", {"model": "sale.order"}, user=portal_like)
        self.assertFalse(result.success)
        self.assertIn("no read access to sale.order", result.error)

    def test_blocked_model_is_refused_by_safety(self):
        self.agent.blocked_model_ids = [(6, 0, self.env["ir.model"]._get("res.partner").ids)]
        result = self.execute("odoo_search_read", {"model": "res.partner"})
        self.assertFalse(result.success)
        self.assertIn("blocked model", result.error)

    def test_allowed_models_restrict_the_agent(self):
        self.agent.allowed_model_ids = [(6, 0, self.env["ir.model"]._get("sale.order").ids)]
        self.assertFalse(self.execute("odoo_search_read", {"model": "res.partner"}).success)
        self.assertTrue(self.execute("odoo_search_read", {"model": "sale.order"}).success)

    def test_execution_is_logged(self):
        result = self.execute("odoo_search_read", {"model": "res.partner", "limit": 2})
        self.assertTrue(result.success)
        log = self.env["agentic.ai.execution.log"].search([("tool_name", "=", "odoo_search_read")], limit=1)
        self.assertEqual(log.model_name, "res.partner")
        self.assertEqual(log.user_id, self.salesperson)
        self.assertEqual(json.loads(log.input_data), {"model": "res.partner", "limit": 2})
        self.assertGreaterEqual(log.duration_ms, 0)

    # ------------------------------------------------------------- ORM tools
    def test_search_read_default_limit_and_fields(self):
        result = self.execute("odoo_search_read", {"model": "res.partner"})
        self.assertTrue(result.success)
        self.assertLessEqual(result.data["count"], 20)
        self.assertGreater(result.data["total"], result.data["count"])
        self.assertIn("display_name", result.data["records"][0])
        self.assertLess(len(result.data["records"][0]), 12)
        capped = self.execute("odoo_search_read", {"model": "res.partner", "limit": 200})
        self.assertLessEqual(capped.data["count"], MAX_LIMIT)

    def test_search_read_bad_domain_and_field(self):
        bad = self.execute("odoo_search_read", {"model": "res.partner", "domain": [["no_such_field", "=", 1]]})
        self.assertFalse(bad.success)
        unknown = self.execute("odoo_search_read", {"model": "res.partner", "fields": ["nope"]})
        self.assertIn("unknown fields", unknown.error)
        # The transaction is still usable after a failed query.
        self.assertTrue(self.execute("odoo_search_read", {"model": "res.partner", "limit": 1}).success)

    def test_create_write_unlink(self):
        created = self.execute("odoo_create", {"model": "res.partner", "values": {"name": "Agent Made"}})
        self.assertTrue(created.success, created.error)
        partner = self.env["res.partner"].browse(created.data["id"])
        self.assertEqual(partner.name, "Agent Made")
        written = self.execute("odoo_write", {"model": "res.partner", "record_ids": [partner.id], "values": {"name": "Agent Changed"}})
        self.assertTrue(written.success, written.error)
        self.assertEqual(written.data["before"][0]["name"], "Agent Made")
        self.assertEqual(partner.name, "Agent Changed")
        manager = new_test_user(self.env, "agent_partner_mgr", groups="base.group_user,base.group_partner_manager")
        deleted = self.execute("odoo_unlink", {"model": "res.partner", "record_ids": [partner.id]}, user=manager)
        self.assertTrue(deleted.success, deleted.error)
        self.assertFalse(partner.exists())

    def test_write_refuses_readonly_computed_fields_and_missing_records(self):
        self.assertIn("cannot be set", self.execute(
            "odoo_write", {"model": "res.partner", "record_ids": [1], "values": {"display_name": "x"}}).error)
        self.assertIn("do not exist", self.execute(
            "odoo_write", {"model": "res.partner", "record_ids": [999999999], "values": {"name": "x"}}).error)

    def test_method_whitelist_is_the_spec_and_methods_exist_in_odoo_19(self):
        self.assertEqual(ALLOWED_METHODS["hr.leave"], ["action_approve", "action_refuse", "action_draft"])
        for model, methods in ALLOWED_METHODS.items():
            if model not in self.env:
                continue
            for method in methods:
                called = METHOD_SUBSTITUTES.get((model, method), (method, ""))[0]
                self.assertTrue(callable(getattr(self.env[model], called, None)), f"{model}.{called}")

    def test_method_call_refuses_others_listing_allowed(self):
        result = self.execute("odoo_method_call", {"model": "sale.order", "record_ids": [1], "method": "unlink"})
        self.assertFalse(result.success)
        self.assertIn("allowed: action_confirm, action_cancel, action_draft, action_unlock", result.error)
        other = self.execute("odoo_method_call", {"model": "res.users", "record_ids": [1], "method": "write"})
        self.assertIn("no business method may be called on res.users", other.error)

    def test_method_call_confirms_sale_order(self):
        order = self.env["sale.order"].with_user(self.salesperson).create({
            "partner_id": self.env.ref("base.res_partner_12").id,
            "order_line": [(0, 0, {"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": 1})]})
        result = self.execute("odoo_method_call", {"model": "sale.order", "record_ids": [order.id], "method": "action_confirm"})
        self.assertTrue(result.success, result.error)
        self.assertEqual(order.state, "sale")
        self.assertEqual(result.data["states"], {order.id: "sale"})

    def test_hr_leave_action_draft_uses_odoo_19_substitute(self):
        if "hr.leave" not in self.env:
            self.skipTest("hr_holidays not installed")
        leave = self.env["hr.leave"].search([("state", "=", "validate")], limit=1)
        self.assertTrue(leave, "demo data has validated time off")
        out = odoo_method_call(self.env, "hr.leave", leave.ids, "action_draft")
        self.assertEqual(out["method"], "action_back_to_approval")
        self.assertIn("no draft state", out["note"])

    def test_model_info_gives_types_and_selection(self):
        result = self.execute("odoo_get_model_info", {"model": "sale.order"})
        fields = result.data["fields"]
        self.assertEqual(fields["partner_id"]["type"], "many2one")
        self.assertEqual(fields["partner_id"]["relation"], "res.partner")
        self.assertTrue(fields["partner_id"]["required"])
        self.assertIn(["draft", "Quotation"], [list(s) for s in fields["state"]["selection"]])

    def test_available_models_filtered_by_access(self):
        result = self.execute("odoo_get_available_models", {"search": "sale"})
        models = [m["model"] for m in result.data["models"]]
        self.assertIn("sale.order", models)
        basic = new_test_user(self.env, "agent_basic2", groups="base.group_user")
        basic_models = [m["model"] for m in self.execute("odoo_get_available_models", {"search": "sale.order"}, user=basic).data["models"]]
        self.assertNotIn("sale.order", basic_models)

    # ------------------------------------------------------------ sales tools
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

    # -------------------------------------------------------------- observer
    def test_observer_formats_search_create_error_and_truncates(self):
        from odoo.addons.agentic_ai.engine.executor import ExecutionResult
        observer = Observer()
        records = [{"id": i, "name": f"P{i}"} for i in range(15)]
        text = observer.observe("odoo_search_read", ExecutionResult(True, {"model": "res.partner", "total": 40, "records": records}))
        self.assertIn("40 record(s) found in res.partner, showing 10", text)
        self.assertEqual(text.count('"id"'), 10)
        created = observer.observe("odoo_create", ExecutionResult(True, {"created": True, "id": 7, "display_name": "X"}))
        self.assertTrue(created.startswith("Created record: X (ID: 7)"))
        error = observer.observe("odoo_write", ExecutionResult(False, error="Record does not exist or has been deleted."))
        self.assertIn("Hint:", error)
        long = observer.observe("t", ExecutionResult(True, "x" * 10000))
        self.assertLessEqual(len(long), MAX_CHARS + 120)
        self.assertIn("6000 more characters cut", long)

    def _quotation(self, qty=2):
        return self.env["sale.order"].with_user(self.salesperson).create({
            "partner_id": self.env.ref("base.res_partner_12").id,
            "order_line": [(0, 0, {"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": qty}),
                           (0, 0, {"product_id": self.env.ref("product.product_product_12").id, "product_uom_qty": 1})]})

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
