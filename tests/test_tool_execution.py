"""Tool model, executor pipeline, generic ORM tools and the observer
(spec 000 §3.3, §4.6, §4.7, §5.1, §5.2)."""
import json

from odoo.tests import new_test_user, tagged

from odoo.addons.agentic_ai.engine.observer import MAX_CHARS, Observer
from odoo.addons.agentic_ai.tools.parsing import MAX_LIMIT
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
        from odoo.addons.agentic_ai.tools.registry import resolve_handler
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
        tool.required_module = "not_an_installed_app, base"  # any one of them will do
        self.assertIn("needs_app", self.agent._get_available_tools().mapped("name"))

    def test_sanitize_drops_undeclared_parameters(self):
        from odoo.addons.agentic_ai.engine.tool_spec import ToolSpec
        spec = ToolSpec.from_record(self.tool("odoo_search_read"))
        self.assertEqual(spec.sanitize({"model": " res.partner ", "env": "x", "context": {}}), {"model": "res.partner"})

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
