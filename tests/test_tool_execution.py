"""Tool records and their schemas, the executor pipeline (validation,
refusal by the safety rules, savepoint rollback, audit log row), the generic
ORM tools ``odoo_*`` and what they refuse to touch, and the observer (spec
000 §3.3, §4.6, §4.7, §5.1). Issue 2 acceptance test (c)."""
import json
import re
import threading
import time

from odoo.exceptions import ValidationError
from odoo.tests import new_test_user, tagged
from odoo.tools import mute_logger

from ..engine.durable import step_commit
from ..engine.durable.held_savepoint import HELD
from ..engine.executor import ExecutionResult, _orm_built
from ..engine.observer import MAX_CHARS, Observer
from ..tools import base_tool as registry
from ..tools.base_tool import agent_tool
from ..tools.orm_tool import ALLOWED_METHODS, METHOD_SUBSTITUTES, odoo_method_call, odoo_search_read, read_rows
from ..tools.parsing import MAX_LIMIT
from ..tools.tool_spec import ToolSpec
from .common import ToolCase, tool_call


def _unparsable_read(env):
    """A tool function of this test module (registered by the test that uses it)."""
    env.cr.execute("SELEC 1")
    return {}


@tagged("post_install", "-at_install")
class TestToolExecution(ToolCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.Tool = cls.env["agentic.ai.tool"]

    def tool(self, name):
        return self.Tool.search([("name", "=", name)])

    # ------------------------------------------------------------ tool model
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
            "create_manufacturing_order": "medium", "check_bom_availability": "low",
            "get_production_schedule": "low",
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
        valid = {"kind": "a", "count": 2, "flag": True, "items": [], "opts": {}, "ratio": 1.5}
        self.assertEqual(tool._validate_params(valid), [])
        self.assertIn("'kind' is a required parameter", tool._validate_params({})[0])
        self.assertIn("is not one of ['a', 'b']", tool._validate_params({"kind": "c"})[0])
        errors = tool._validate_params({"kind": "a", "count": "2", "flag": "yes", "items": {}, "opts": [],
                                        "ratio": "x"})
        self.assertEqual(len(errors), 5)
        self.assertEqual(tool._validate_params([1]), ["arguments must be a JSON object"])

    def test_invalid_schema_or_handler_is_refused(self):
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
        self.assertIn("needs_app is not available here: it needs the not_an_installed_app app installed",
                      called.error)
        tool.required_module = "not_an_installed_app, base"  # any one of them will do
        self.assertIn("needs_app", self.agent._get_available_tools().mapped("name"))

    def test_sanitize_drops_undeclared_parameters(self):
        spec = ToolSpec.from_record(self.tool("odoo_search_read"))
        self.assertEqual(spec.sanitize({"model": " res.partner ", "env": "x", "context": {}}),
                         {"model": "res.partner"})

    # -------------------------------------------------------------- executor
    def test_tool_runs_as_requesting_user_not_superuser(self):
        tool = self.Tool.create({"name": "whoami", "description": "x", "tool_type": "python_code",
                                 "risk_level": "low", "python_code": "result = {'uid': env.uid, 'su': env.su}"})
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

    def test_a_page_comes_with_its_search(self):
        """odoo_search_read reads its page in its search's query, as Odoo's
        search_read does (issue 26 point 6): fewer statements than a search
        and a read, the same rows, under the user's record rules."""
        env = self.env(user=self.salesperson)
        domain, fields = [["is_company", "=", True]], ["name", "email", "company_id", "display_name"]
        odoo_search_read(env, "res.partner", domain, fields, limit=200)  # the user's rules and caches warm
        env.invalidate_all()
        before = env.cr.sql_log_count
        result = odoo_search_read(env, "res.partner", domain, fields, limit=200)
        by_tool = env.cr.sql_log_count - before
        env.invalidate_all()
        before = env.cr.sql_log_count
        records = env["res.partner"].search(domain, limit=200)
        rows = read_rows(records, fields)
        by_search_and_read = env.cr.sql_log_count - before
        self.assertTrue(records, "demo companies to read")
        self.assertLess(result["count"], 200, "a page that is not full: no count query")
        self.assertLess(by_tool, by_search_and_read)
        self.assertEqual(result["records"], rows)

    def test_blocked_model_is_refused_by_safety(self):
        self.agent.blocked_model_ids = [(6, 0, self.env["ir.model"]._get("res.partner").ids)]
        result = self.execute("odoo_search_read", {"model": "res.partner"})
        self.assertFalse(result.success)
        self.assertIn("blocked model", result.error)

    def test_allowed_models_restrict_the_agent(self):
        self.agent.allowed_model_ids = [(6, 0, self.env["ir.model"]._get("sale.order").ids)]
        refused = self.execute("odoo_search_read", {"model": "res.partner"})
        self.assertFalse(refused.success)
        self.assertIn("refused by the safety rules: the agent may only access: sale.order", refused.error)
        self.assertTrue(self.execute("odoo_search_read", {"model": "sale.order"}).success)

    def test_tool_that_raises_after_writing_leaves_nothing(self):
        """(c) savepoint rollback seen from the agent loop, and the log says so."""
        tool = self.Tool.create({
            "name": "partial_writer",
            "description": "Creates a partner, then fails.",
            "tool_type": "python_code",
            "risk_level": "medium",
            "python_code": "env['res.partner'].create({'name': 'Half Done Partner'})\n"
                           "raise UserError('supplier system refused the order')",
        })
        self.agent.tool_ids = [(4, tool.id)]
        self.script(tool_call("partial_writer", {}), {"content": "It failed."})
        thread, _result = self.run_agent("do it")
        self.assertFalse(self.env["res.partner"].search([("name", "=", "Half Done Partner")]))
        log = self.env["agentic.ai.execution.log"].search(
            [("thread_id", "=", thread.id), ("tool_name", "=", "partial_writer")])
        self.assertEqual(len(log), 1)
        self.assertFalse(log.success)
        self.assertIn("supplier system refused the order", log.error_message)
        self.assertIn("rolled back", log.error_message)
        self.assertIn("rolled back", self.observations(thread)[0])

    def test_low_risk_python_code_that_writes_or_fails_in_sql_is_rolled_back(self):
        """A Python-code tool marked low risk may still write, or send a query
        the server refuses: what it wrote is rolled back and the error says
        so, and the transaction stays usable."""
        writer = self.Tool.create({"name": "low_but_writes", "description": "x", "tool_type": "python_code",
                                   "risk_level": "low",
                                   "python_code": "env['res.partner'].create({'name': 'Low Risk Leftover'})\n"
                                                  "raise UserError('changed its mind')"})
        failing_query = self.Tool.create({"name": "low_bad_query", "description": "x", "tool_type": "python_code",
                                          "risk_level": "low", "python_code": "env.cr.execute('SELECT 1/0')"})
        self.agent.tool_ids = [(4, writer.id), (4, failing_query.id)]
        wrote = self.execute("low_but_writes", {})
        self.assertIn("changed its mind", wrote.error)
        self.assertIn("rolled back", wrote.error)
        self.assertFalse(self.env["res.partner"].search([("name", "=", "Low Risk Leftover")]))
        with mute_logger("odoo.sql_db"):
            divided = self.execute("low_bad_query", {})
        self.assertIn("division by zero", divided.error)
        self.assertTrue(self.execute("odoo_search_read", {"model": "res.partner", "limit": 1}).success,
                        "the transaction is still usable")

    def test_a_read_of_another_addon_that_sends_unparsable_sql_loses_nothing(self):
        """A low-risk tool that another addon registers may send SQL that
        PostgreSQL cannot parse: its savepoint is a statement of its own
        (engine/durable/held_savepoint.py: one sent with such a statement
        would be refused with it), so the call is an error the model reads
        and the transaction goes on. This addon's own reads send theirs
        with their first statement."""
        agent_tool(label="Unparsable read", category="other", risk_level="low",
                   description="A read defined by a test that sends SQL PostgreSQL cannot parse, as a careless "
                               "addon's tool might.",
                   parameters={})(_unparsable_read)
        handler = f"{_unparsable_read.__module__.removeprefix('odoo.addons.')}._unparsable_read"
        self.addCleanup(registry.TOOL_REGISTRY.pop, handler, None)
        tool = self.Tool.create({"name": "unparsable_read", "description": "x", "tool_type": "native",
                                 "risk_level": "low", "handler": handler})
        self.agent.tool_ids = [(4, tool.id)]
        created = self.execute("odoo_create", {"model": "res.partner", "values": {"name": "Kept Before"}})
        with mute_logger("odoo.sql_db", "odoo.addons.agentic_ai.engine.executor"):
            refused = self.execute("unparsable_read", {})
        self.assertFalse(refused.success)
        self.assertIn("syntax error", refused.error)
        self.assertTrue(self.execute("odoo_search_read", {"model": "res.partner", "limit": 1}).success,
                        "the transaction is still usable")
        self.assertTrue(self.env["res.partner"].browse(created.data["id"]).exists(), "the earlier write is kept")
        specs = {spec.name: spec for spec in (ToolSpec.from_record(tool), ToolSpec.from_record(
            self.env.ref("agentic_ai.tool_odoo_search_read")))}
        self.assertFalse(_orm_built(specs["unparsable_read"]))
        self.assertTrue(_orm_built(specs["odoo_search_read"]))

    def test_reads_the_server_refuses_become_observations_and_lose_nothing(self):
        """The ORM passes parts of a domain to SQL as they are; each of these
        makes PostgreSQL refuse the query, which aborts the transaction
        unless the call runs in a savepoint. Each must come back as an error
        the model can act on, with the earlier write of the same run kept."""
        created = self.execute("odoo_create", {"model": "res.partner", "values": {"name": "Written Before"}})
        self.assertTrue(created.success, created.error)
        refused = [  # (model, domain, words of PostgreSQL's message)
            ("res.partner", [["name", "=like", "%\\"]], "escape character"),
            ("res.partner", [["id", "=", "abc"]], "invalid input syntax"),
            ("res.partner", [["id", ">", "99999999999"]], "out of range"),
            ("res.partner", [["parent_id", ">", True]], "operator does not exist"),
            ("sale.order", [["date_order.year_number", "=", "abc"]], "invalid input syntax"),
            ("sale.order", [["amount_total", "=", "abc"]], "invalid input syntax"),
        ]
        for model, domain, words in refused:
            with self.subTest(domain=domain), mute_logger("odoo.sql_db"):
                result = self.execute("odoo_search_read", {"model": model, "domain": domain}, self.accountant)
                self.assertFalse(result.success)
                self.assertIn(words, result.error)
        self.assertTrue(self.env["res.partner"].browse(created.data["id"]).exists(), "the earlier write is kept")
        self.assertTrue(self.execute("odoo_search_read", {"model": "res.partner", "limit": 1}).success)

    def test_a_calls_savepoint_is_one_statement_within_a_bound_per_transaction(self):
        """Issue 26 point 6: a call's savepoint is not released (the
        transaction's end does it, engine/durable/held_savepoint.py): one
        statement instead of Odoo's two (for the addon's own reads, sent with
        the call's first: no round trip of its own), up to HELD per transaction; past
        them, savepoints are released again, so a long transaction never
        nests without bound. A failure past the bound still rolls back only
        its own call."""
        statements = []
        current = threading.current_thread()
        hooks = getattr(current, "query_hooks", ())
        # Each round trip's query string as psycopg2 sent it: a held savepoint goes with the call's first.
        current.query_hooks = (*hooks, lambda _cr, *_args: statements.append(_cr._obj.query.decode()))
        try:
            created = self.execute("odoo_create", {"model": "res.partner", "values": {"name": "Held Before"}})
            for index in range(HELD + 3):
                domain = [["id", "=", "abc"]] if index % 2 else [["name", "=", "Held Before"]]
                with mute_logger("odoo.sql_db", "odoo.addons.agentic_ai.engine.executor"):
                    self.execute("odoo_search_read", {"model": "res.partner", "domain": domain})
        finally:
            current.query_hooks = hooks
        self.assertTrue(created.success, created.error)
        # A refused read's savepoint went with the statement refused (not seen by the hook): its ROLLBACK TO names it.
        ours = {re.search(r'"(agentic_ai_call_\d+)"', s)[1] for s in statements
                if s.startswith(('SAVEPOINT "agentic_ai_call_', 'ROLLBACK TO SAVEPOINT "agentic_ai_call_'))}
        self.assertEqual(ours, {f"agentic_ai_call_{n}" for n in range(HELD)},
                         "the first HELD calls' savepoints are held")
        alone = [s for s in statements if s.startswith('SAVEPOINT "agentic_ai_call_') and ";" not in s]
        self.assertEqual(alone, ['SAVEPOINT "agentic_ai_call_0"'], "the write's savepoint is a statement of its own; "
                         "the reads' go with their first statement")
        self.assertFalse([s for s in statements if s.startswith('RELEASE SAVEPOINT "agentic_ai_call_')])
        self.assertEqual(len([s for s in statements if s.startswith("ROLLBACK TO SAVEPOINT")]), (HELD + 3) // 2,
                         "each refused read rolled back to its own savepoint, held or not")
        self.assertTrue(self.env["res.partner"].browse(created.data["id"]).exists(), "the earlier write is kept")

    def test_execution_is_logged(self):
        result = self.execute("odoo_search_read", {"model": "res.partner", "limit": 2})
        self.assertTrue(result.success)
        log = self.env["agentic.ai.execution.log"].search([("tool_name", "=", "odoo_search_read")], limit=1)
        self.assertEqual(log.model_name, "res.partner")
        self.assertEqual(log.user_id, self.salesperson)
        self.assertEqual(json.loads(log.input_data), {"model": "res.partner", "limit": 2})
        self.assertEqual(log.duration_ms, result.duration_ms, "the row holds the executor's own measure")
        # The duration is the tool's wall time: a tool that waits 50 ms takes at least that long.
        slow = self.Tool.create({"name": "slow_tool", "description": "x", "tool_type": "python_code",
                                 "risk_level": "low",
                                 "python_code": "env.cr.execute('SELECT pg_sleep(0.05)')\nresult = 'done'"})
        self.agent.tool_ids = [(4, slow.id)]
        started = time.monotonic()
        waited = self.execute("slow_tool", {})
        elapsed_ms = (time.monotonic() - started) * 1000
        self.assertTrue(waited.success, waited.error)
        slow_log = self.env["agentic.ai.execution.log"].search([("tool_name", "=", "slow_tool")])
        self.assertEqual(slow_log.duration_ms, waited.duration_ms)
        self.assertGreaterEqual(slow_log.duration_ms, 50, "the 50 ms the tool waited are in its duration")
        self.assertLessEqual(slow_log.duration_ms, elapsed_ms)

    # ------------------------------------------------------------- ORM tools
    def test_search_read_default_limit_and_fields(self):
        result = self.execute("odoo_search_read", {"model": "res.partner"})
        self.assertTrue(result.success)
        self.assertLessEqual(result.data["count"], 20)
        self.assertGreater(result.data["total"], result.data["count"])
        self.assertIn("display_name", result.data["records"][0])
        self.assertLess(len(result.data["records"][0]), 12)
        # At most MAX_LIMIT records, on a model that has more (demo data has about 250 countries).
        capped = self.execute("odoo_search_read", {"model": "res.country", "limit": MAX_LIMIT})
        self.assertTrue(capped.success, capped.error)
        self.assertGreater(capped.data["total"], MAX_LIMIT)
        self.assertEqual(capped.data["count"], MAX_LIMIT)
        over = self.execute("odoo_search_read", {"model": "res.country", "limit": MAX_LIMIT + 1})
        self.assertFalse(over.success)
        self.assertIn(f"limit: {MAX_LIMIT + 1} is greater than the maximum of {MAX_LIMIT}", over.error)
        self.assertEqual(odoo_search_read(self.env, "res.country", limit=10 * MAX_LIMIT)["count"], MAX_LIMIT,
                         "behind the schema, the tool itself caps the limit")

    def test_search_read_total_on_every_page(self):
        """``total`` counts every match on a full page, a last page (told by
        the page, as Odoo's web_search_read does, without a count) and an
        empty page past the end."""
        domain = [["is_company", "=", True]]
        matches = self.env["res.partner"].with_user(self.salesperson).search_count(
            [("is_company", "=", True)])
        self.assertGreater(matches, 3)
        for offset, limit in ((0, 2), (matches - 2, 5), (matches - 1, 1), (matches + 4, 3), (0, 200)):
            with self.subTest(offset=offset, limit=limit):
                page = self.execute("odoo_search_read", {"model": "res.partner", "domain": domain, "limit": limit,
                                                         "offset": offset}).data
                self.assertEqual(page["total"], matches)
                self.assertEqual(page["count"], max(0, min(limit, matches - offset)))

    def test_search_read_bad_domain_and_field(self):
        bad = self.execute("odoo_search_read", {"model": "res.partner", "domain": [["no_such_field", "=", 1]]})
        self.assertFalse(bad.success)
        self.assertIn("Invalid field res.partner.no_such_field", bad.error)
        unknown = self.execute("odoo_search_read", {"model": "res.partner", "fields": ["nope"]})
        self.assertIn("unknown fields", unknown.error)
        # The transaction is still usable after a failed query.
        self.assertTrue(self.execute("odoo_search_read", {"model": "res.partner", "limit": 1}).success)

    def test_create_write_unlink(self):
        created = self.execute("odoo_create", {"model": "res.partner", "values": {"name": "Agent Made"}})
        self.assertTrue(created.success, created.error)
        partner = self.env["res.partner"].browse(created.data["id"])
        self.assertEqual(partner.name, "Agent Made")
        written = self.execute("odoo_write", {"model": "res.partner", "record_ids": [partner.id],
                                              "values": {"name": "Agent Changed"}})
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
            self.assertIn(model, self.env, "every app of the whitelist is installed in the test database")
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
            "order_line": [(0, 0, {"product_id": self.env.ref("product.product_product_8").id,
                                   "product_uom_qty": 1})]})
        result = self.execute("odoo_method_call", {"model": "sale.order", "record_ids": [order.id],
                                                   "method": "action_confirm"})
        self.assertTrue(result.success, result.error)
        self.assertEqual(order.state, "sale")
        self.assertEqual(result.data["states"], {order.id: "sale"})

    def test_hr_leave_action_draft_uses_odoo_19_substitute(self):
        leave = self.env["hr.leave"].search([("state", "=", "validate")], limit=1)
        self.assertTrue(leave, "demo data has validated time off")
        out = odoo_method_call(self.env, "hr.leave", leave.ids, "action_draft")
        self.assertEqual(out["method"], "action_back_to_approval")
        self.assertIn("no draft state", out["note"])

    def test_model_info_gives_types_and_selection(self):
        result = self.execute("odoo_get_model_info", {"model": "sale.order"})
        fields_info = result.data["fields"]
        self.assertEqual(fields_info["partner_id"]["type"], "many2one")
        self.assertEqual(fields_info["partner_id"]["relation"], "res.partner")
        self.assertTrue(fields_info["partner_id"]["required"])
        self.assertIn(["draft", "Quotation"], [list(s) for s in fields_info["state"]["selection"]])

    def test_available_models_filtered_by_access(self):
        result = self.execute("odoo_get_available_models", {"search": "sale"})
        models = [m["model"] for m in result.data["models"]]
        self.assertIn("sale.order", models)
        basic = new_test_user(self.env, "agent_basic2", groups="base.group_user")
        basic_models = [m["model"] for m in self.execute(
            "odoo_get_available_models", {"search": "sale.order"}, user=basic).data["models"]]
        self.assertNotIn("sale.order", basic_models)

    # ------------------------------------ what the generic tools refuse to touch
    def test_generic_write_cannot_move_a_record_into_a_foreign_company(self):
        """A salesman of company A only moves his quotation into company B
        (and a contact too): the record leaves his reach, with B's
        warehouse and pricelist put on it."""
        self.setup_company_b()
        refusal = f"company_id: companies [{self.company_b.id}] are not among your companies"
        order = self.env["sale.order"].create({"partner_id": self.customer.id, "user_id": self.salesman.id})
        result = self.execute("odoo_write", {"model": "sale.order", "record_ids": [order.id],
                                             "values": {"company_id": self.company_b.id}}, self.salesman)
        self.assertFalse(result.success, "a user of company A only wrote company B on a sales order")
        self.assertIn(refusal, result.error)
        self.assertEqual(order.company_id, self.company_a)
        partner = self.env["res.partner"].create({"name": "Movable Contact"})
        result = self.execute("odoo_write", {"model": "res.partner", "record_ids": [partner.id],
                                             "values": {"company_id": self.company_b.id}}, self.accountant)
        self.assertFalse(result.success, "a user of company A only moved a contact into company B "
                                         "(odoo_create into B is refused, odoo_write is not)")
        self.assertIn(refusal, result.error)
        self.assertFalse(partner.company_id)

    def test_generic_tools_cannot_create_or_overwrite_stock_quantities(self):
        """odoo_create/odoo_write on stock.quant set on-hand quantities
        directly: 1000 units appear without an inventory adjustment or move."""
        refusal = "stock.quant records change only through an inventory adjustment or a transfer"
        product = self.env["product.product"].create({"name": "Quant Product", "is_storable": True})
        moves = self.count("stock.move")
        created = self.execute("odoo_create", {"model": "stock.quant", "values": {
            "product_id": product.id, "location_id": self.stock.id, "quantity": 1000}}, self.accountant)
        product.invalidate_recordset()
        self.assertFalse(created.success, "stock.quant.quantity (a readonly field) was set by odoo_create")
        self.assertIn(refusal, created.error)
        self.assertEqual(product.qty_available, 0.0, f"on hand became {product.qty_available} with no stock move "
                                                     f"({self.count('stock.move') - moves} moves created)")
        self.add_stock(product, 3)
        quant = self.env["stock.quant"].search([("product_id", "=", product.id), ("location_id", "=", self.stock.id)])
        written = self.execute("odoo_write", {"model": "stock.quant", "record_ids": quant.ids,
                                              "values": {"quantity": 50}}, self.accountant)
        self.assertFalse(written.success, "stock.quant.quantity was overwritten by odoo_write")
        self.assertIn(refusal, written.error)
        self.assertEqual(quant.quantity, 3.0)

    def test_generic_create_cannot_add_journal_items_to_a_posted_invoice(self):
        """Writing `state` is refused, but odoo_create on account.move.line
        adds a line to a POSTED invoice: Odoo rebalances it and the posted
        invoice's total and amount due change without a reset to draft."""
        move = self.posted_invoice(750.0)
        lines = len(move.line_ids)
        income = move.invoice_line_ids.account_id
        result = self.execute("odoo_create", {"model": "account.move.line", "values": {
            "move_id": move.id, "account_id": income.id, "debit": 5, "name": "x"}}, self.accountant)
        move.invalidate_recordset()
        self.assertFalse(result.success, "a journal item was added to a posted invoice")
        self.assertIn("account.move.line records change only through its journal entry", result.error)
        self.assertEqual((move.state, move.amount_total, len(move.line_ids)), ("posted", 750.0, lines),
                         f"posted invoice {move.name} now totals {move.amount_total}")

    def test_search_cannot_filter_on_a_field_the_user_may_not_read(self):
        """res.partner.credit is for Invoicing/Accounting users only; a
        salesman filters partners by it and learns who owes more than 1000
        (credit_limit, a stored field, is refused; credit, a searchable
        computed field, is not)."""
        self.posted_invoice(5000.0)
        result = self.execute("odoo_search_read", {"model": "res.partner", "domain": [["credit", ">", 1000]],
                                                   "fields": ["name"]}, self.salesman)
        self.assertFalse(result.success, f"a salesman searched on the restricted field credit: {result.data}")
        self.assertIn("you may not read res.partner.credit, so you cannot filter on it", result.error)

    # -------------------------------------------------------------- observer
    def test_observer_formats_search_create_error_and_truncates(self):
        observer = Observer()
        records = [{"id": i, "name": f"P{i}"} for i in range(15)]
        text = observer.observe("odoo_search_read",
                                ExecutionResult(True, {"model": "res.partner", "total": 40, "records": records}))
        self.assertIn("40 record(s) found in res.partner, showing 10", text)
        self.assertEqual(text.count('"id"'), 10)
        created = observer.observe("odoo_create",
                                   ExecutionResult(True, {"created": True, "id": 7, "display_name": "X"}))
        self.assertTrue(created.startswith("Created record: X (ID: 7)"))
        error = observer.observe("odoo_write",
                                 ExecutionResult(False, error="Record does not exist or has been deleted."))
        self.assertIn("Hint:", error)
        conflict = observer.observe("odoo_write", ExecutionResult(False, error=(
            "SerializationFailure: could not serialize access due to concurrent update")))
        self.assertIn("at the same time", conflict)
        self.assertNotIn("access rights", conflict, "a serialization failure is no missing access right")
        long = observer.observe("t", ExecutionResult(True, "x" * 10000))
        self.assertLessEqual(len(long), MAX_CHARS + 120)
        self.assertIn(f"[truncated: showed {MAX_CHARS} of 10000 characters;", long)

    def test_results_json_cannot_write_are_still_audited(self):
        """A Python tool returns a cycle and tuple keys: the call succeeds and
        its audit row holds them in the addon's JSON form (tools/values/json_values.py)."""
        tool = self.Tool.create({"name": "odd_result", "description": "x", "tool_type": "python_code",
                                 "risk_level": "low", "python_code": "a = []\na.append(a)\nresult = {(1, 2): a}"})
        self.agent.tool_ids = [(4, tool.id)]
        result = self.execute("odd_result", {})
        self.assertTrue(result.success, result.error)
        log = self.env["agentic.ai.execution.log"].search([("tool_name", "=", "odd_result")])
        self.assertEqual(len(log), 1)
        self.assertEqual(json.loads(log.output_data), {"[1, 2]": [{"circular": True}]})
        zero = self.Tool.create({"name": "zero_result", "description": "x", "tool_type": "python_code",
                                 "risk_level": "low", "python_code": "result = 0"})
        self.agent.tool_ids = [(4, zero.id)]
        self.execute("zero_result", {})
        self.assertEqual(self.env["agentic.ai.execution.log"].search([("tool_name", "=", "zero_result")]).output_data,
                         "0", "a result of 0 is a result")

    def test_only_a_call_that_keeps_changes_makes_its_step_wait_for_the_disk(self):
        """Issue 26 point 6: a durable run's steps commit asynchronously
        (step_commit.ASYNC_COMMIT), and a call that keeps a change in Odoo's
        records, or runs code the addon does not own, makes its step's commit
        wait for the disk as the server is configured to; a read, a refused
        write and a failed write leave the step asynchronous."""
        def synchronous_commit():
            self.env.cr.execute("SHOW synchronous_commit")
            return self.env.cr.fetchone()[0]
        configured = synchronous_commit()
        self.assertNotEqual(configured, "off", "the suite's server waits for the disk")
        self.env.cr.execute(f"SELECT {step_commit.ASYNC_COMMIT}")  # as the step's row lock selects it
        self.assertTrue(self.execute("odoo_search_read", {"model": "res.partner", "limit": 1}).success)
        self.assertEqual(synchronous_commit(), "off", "a read keeps its step asynchronous")
        partner = self.env["res.partner"].create({"name": "Durable Probe"})
        undone = self.Tool.create({"name": "writes_then_fails", "description": "x", "tool_type": "python_code",
                                   "risk_level": "medium",
                                   "python_code": f"env['res.partner'].browse({partner.id}).write("
                                                  "{'name': 'Undone'})\nraise UserError('changed its mind')"})
        self.agent.tool_ids = [(4, undone.id)]
        failed = self.execute("writes_then_fails", {})
        self.assertTrue(failed.error.startswith("UserError: changed its mind"), failed.error)
        self.assertEqual(partner.name, "Durable Probe")
        self.assertEqual(synchronous_commit(), "off", "a write rolled back to its savepoint kept nothing")
        written = self.execute("odoo_write", {"model": "res.partner", "record_ids": [partner.id],
                                              "values": {"name": "Durable Probe Renamed"}})
        self.assertTrue(written.success, written.error)
        self.assertEqual(synchronous_commit(), configured, "a kept write commits as the server is configured")
        self.env.cr.execute(f"SELECT {step_commit.ASYNC_COMMIT}")
        reader = self.Tool.create({"name": "custom_reader", "description": "x", "tool_type": "python_code",
                                   "risk_level": "low", "python_code": "result = len(env['res.partner'].search([]))"})
        self.agent.tool_ids = [(4, reader.id)]
        self.assertTrue(self.execute("custom_reader", {}).success)
        self.assertEqual(synchronous_commit(), configured, "code the addon does not own may write past the ORM")
