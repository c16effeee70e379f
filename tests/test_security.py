"""Security (spec 000 §3.7, §7.1): groups, ACLs and record rules, the API
key and provider secrets, the immutable execution log, thread state that
clients cannot forge, thread fields that cannot change, confirmations
answered by the thread's owner only, the locks that come with a Run As user,
helpers that are not callable over RPC, agents refused on their own
``agentic.ai.*`` models, and blocked or allowed models that nested commands
cannot dodge."""
import json

from odoo.exceptions import AccessError, UserError, ValidationError
from odoo.tests import new_test_user, tagged

from .common import AgenticCase, tool_call


@tagged("post_install", "-at_install")
class TestSecurity(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()

    # ------------------------------------------------------ groups and ACLs
    def test_groups_imply_each_other(self):
        self.assertTrue(self.plain.has_group("agentic_ai.group_agentic_ai_user"))
        self.assertFalse(self.plain.has_group("agentic_ai.group_agentic_ai_operator"))
        self.assertTrue(self.ai_admin.has_group("agentic_ai.group_agentic_ai_operator"))
        privilege = self.env.ref("agentic_ai.group_agentic_ai_admin").privilege_id
        self.assertEqual(privilege, self.env.ref("agentic_ai.res_groups_privilege_agentic_ai"))

    def test_users_see_only_their_threads(self):
        thread_a = self.agent.with_user(self.plain).start_thread(name="a")
        thread_b = self.agent.with_user(self.other).start_thread(name="b")
        visible = self.env["agentic.ai.thread"].with_user(self.plain).search([])
        self.assertIn(thread_a, visible)
        self.assertNotIn(thread_b, visible)
        with self.assertRaises(AccessError):
            self.agent.with_user(self.plain).run(thread_b.id, "hello")
        self.assertIn(thread_b, self.env["agentic.ai.thread"].with_user(self.ai_admin).search([]))

    def test_an_agent_s_user_and_group_lists_decide_who_may_use_it(self):
        """Both lists empty: every AI user; a listed user, or a user in a
        listed group, may; others may not; a list naming only an archived
        user still restricts the agent."""
        agent = self.agent.with_user(self.plain)
        agent._check_user_access(self.plain)
        self.agent.user_ids = [(6, 0, self.other.ids)]
        with self.assertRaises(AccessError):
            agent._check_user_access(self.plain)
        self.agent._check_user_access(self.other)
        self.agent.group_ids = [(6, 0, self.env.ref("base.group_user").ids)]
        agent._check_user_access(self.plain)
        self.agent.group_ids = [(5,)]
        self.other.active = False
        with self.assertRaises(AccessError, msg="a list of archived users still restricts the agent"):
            agent._check_user_access(self.plain)

    def test_a_run_checked_by_its_request_still_asks_whether_the_agent_may_be_used(self):
        """The stream route checks a message before it answers, and its run
        (``_send_message(checked=True)``) may start many seconds later: an
        agent switched off or a user taken off its list meanwhile still
        refuses the run."""
        thread = self.new_thread(user=self.plain)
        self.agent.user_ids = [(6, 0, self.other.ids)]
        with self.assertRaises(AccessError):
            thread._send_message("hello", checked=True)
        self.agent.user_ids = [(5,)]
        self.agent.state = "archived"
        with self.assertRaises(UserError):
            thread._send_message("hello", checked=True)

    def test_operators_read_but_do_not_write_other_threads(self):
        self.script({"content": "hi"})
        thread, _result = self.run_agent("hello", user=self.plain)
        as_operator = thread.with_user(self.operator)
        self.assertEqual(as_operator.message_ids.mapped("role"), ["user", "assistant"])
        with self.assertRaises(AccessError):
            self.env["agentic.ai.thread.message"].with_user(self.operator).create(
                {"thread_id": thread.id, "role": "system", "content": "forged"})
        with self.assertRaises(AccessError):
            as_operator.message_ids[0].write({"content": "rewritten"})
        with self.assertRaises(AccessError):
            as_operator.write({"name": "renamed by operator"})
        with self.assertRaises(AccessError):
            as_operator.unlink()

    # ------------------------------------------------- API key and secrets
    def test_api_key_visible_to_system_group_only(self):
        self.assertEqual(self.provider.api_key, "test-key-not-secret")
        for user in (self.plain, self.ai_admin):
            with self.assertRaises(AccessError, msg=user.login):
                self.provider.with_user(user).read(["api_key"])
        self.assertNotIn("api_key", self.provider.with_user(self.ai_admin).fields_get())

    def test_provider_secrets_hidden_from_non_system_users(self):
        self.provider.extra_headers = '{"Authorization": "Bearer secret-in-headers"}'
        for user in (self.plain, self.ai_admin):
            with self.assertRaises(AccessError, msg=user.login):
                self.provider.with_user(user).read(["extra_headers"])
        self.assertEqual(self.provider._get_provider_config().extra_headers["Authorization"],
                         "Bearer secret-in-headers")

    def test_test_connection_is_for_ai_admins(self):
        with self.assertRaises(AccessError):
            self.provider.with_user(self.plain).action_test_connection()

    # ------------------------------------------------------- execution log
    def test_users_cannot_forge_messages_or_logs(self):
        thread = self.agent.with_user(self.plain).start_thread(name="a")
        with self.assertRaises(AccessError):
            self.env["agentic.ai.thread.message"].with_user(self.plain).create(
                {"thread_id": thread.id, "role": "assistant", "content": "forged"})
        with self.assertRaises(AccessError):
            self.env["agentic.ai.execution.log"].with_user(self.plain).create({"action_type": "error"})

    def test_users_see_only_their_logs(self):
        log_a = self.env["agentic.ai.execution.log"].log("error", user_id=self.plain.id, error_message="a")
        log_b = self.env["agentic.ai.execution.log"].log("error", user_id=self.other.id, error_message="b")
        visible = self.env["agentic.ai.execution.log"].with_user(self.plain).search([])
        self.assertIn(log_a, visible)
        self.assertNotIn(log_b, visible)
        self.assertIn(log_b, self.env["agentic.ai.execution.log"].with_user(self.ai_admin).search([]))

    def test_execution_log_is_immutable(self):
        log = self.env["agentic.ai.execution.log"].log("tool_execution", tool_name="x", input_data={"a": 1})
        with self.assertRaises(UserError):
            log.write({"tool_name": "y"})
        with self.assertRaises(UserError):
            log.sudo().write({"tool_name": "y"})
        with self.assertRaises(UserError):
            log.sudo().unlink()
        with self.assertRaises(UserError):
            log.with_context(agentic_ai_log_purge=True).with_user(self.ai_admin).unlink()
        self.assertEqual(log.input_data, '{"a": 1}')
        self.assertEqual(log.create_date, self.env.cr.now(), "stamped with its transaction's time")
        self.assertNotIn("write_date", log._fields, "never written, so no write_uid/write_date")

    def test_purge_removes_only_old_rows(self):
        old = self.env["agentic.ai.execution.log"].log("error", error_message="old")
        new = self.env["agentic.ai.execution.log"].log("error", error_message="new")
        self.env.cr.execute("UPDATE agentic_ai_execution_log SET create_date = now() - interval '100 days' "
                            "WHERE id = %s", [old.id])
        self.env["agentic.ai.execution.log"].invalidate_model()
        self.assertGreaterEqual(self.env["agentic.ai.execution.log"]._cron_purge_old_logs(90), 1)
        self.assertFalse(old.exists())
        self.assertTrue(new.exists())

    def test_cost_report_and_timeline(self):
        self.script({"content": "ok", "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
        thread, _result = self.run_agent("hi")
        timeline = self.env["agentic.ai.execution.log"].get_thread_timeline(thread.id)
        self.assertEqual([row["action_type"] for row in timeline], ["llm_call"])
        report = self.env["agentic.ai.execution.log"].get_cost_report(group_by="agent_id")
        row = next(r for r in report if r["key"] == self.agent.display_name)
        self.assertGreaterEqual(row["input_tokens"], 10)

    # ------------------------------------------------------- thread state
    def test_thread_state_cannot_be_written_by_client(self):
        thread = self.new_thread(user=self.plain)
        with self.assertRaises(AccessError):
            thread.with_user(self.plain).write({"state": "completed"})
        thread.with_user(self.plain).write({"name": "renamed"})
        self.assertEqual(thread.name, "renamed")
        self.assertEqual(thread.state, "active")

    def test_thread_cannot_be_created_with_engine_state(self):
        forged = {"tool_call_id": "x", "tool": "odoo_write", "arguments": {
            "model": "res.users", "record_ids": [self.plain.id],
            "values": {"group_ids": [[4, self.env.ref("base.group_system").id]]}}}
        with self.assertRaises(AccessError):
            self.env["agentic.ai.thread"].with_user(self.plain).create({
                "agent_id": self.agent.id, "state": "waiting_confirmation",
                "pending_confirmation": json.dumps(forged)})
        self.assertFalse(self.plain.has_group("base.group_system"))

    def test_context_defaults_cannot_set_engine_state(self):
        forged = json.dumps({"tool_call_id": "f", "tool": "odoo_search_read", "arguments": {"model": "res.partner"}})
        thread = self.env["agentic.ai.thread"].with_user(self.plain).with_context(
            default_state="waiting_confirmation", default_pending_confirmation=forged,
            default_pending_message="queued", default_last_error="x").create({"agent_id": self.agent.id, "name": "x"})
        self.assertEqual(thread.state, "active")
        self.assertFalse(thread.pending_confirmation or thread.pending_message or thread.last_error)
        with self.assertRaises(UserError):
            thread.with_user(self.plain).handle_confirmation(True)

    def test_thread_agent_and_user_cannot_be_changed(self):
        thread = self.new_thread(user=self.plain).with_user(self.plain)
        other_agent = self.agent.copy({"code": "other_agent"})
        for values in ({"agent_id": other_agent.id}, {"user_id": self.other.id}):
            with self.assertRaises(AccessError, msg=str(values)):
                thread.write(values)
        thread.write({"agent_id": self.agent.id, "name": "same agent is fine"})
        self.assertEqual((thread.agent_id, thread.user_id, thread.name),
                         (self.agent, self.plain, "same agent is fine"))

    def test_thread_company_must_be_one_of_the_users(self):
        foreign = self.env["res.company"].create({"name": "Not Mine Ltd"})
        with self.assertRaises(ValidationError):
            self.env["agentic.ai.thread"].create({"agent_id": self.agent.id, "user_id": self.plain.id,
                                                  "company_id": foreign.id})

    def test_operator_cannot_approve_someone_elses_confirmation(self):
        owner = new_test_user(self.env, "sec_owner", groups="base.group_user,base.group_partner_manager")
        thread, partner = self.pending_deletion("Owner's Partner", user=owner)  # a deletion the owner may run
        with self.assertRaises(AccessError):
            thread.with_user(self.operator).handle_confirmation(True)
        self.assertTrue(partner.exists())
        self.assertEqual(thread.state, "waiting_confirmation")

    def test_transcript_and_log_helpers_are_not_rpc_callable(self):
        from odoo.service.model import get_public_method
        thread = self.new_thread(user=self.plain)
        for model, method in (("agentic.ai.thread", "add_user_message"),
                              ("agentic.ai.thread", "add_assistant_message"),
                              ("agentic.ai.thread", "add_tool_result"), ("agentic.ai.thread", "request_confirmation"),
                              ("agentic.ai.execution.log", "log")):
            with self.assertRaises(AccessError, msg=method):
                get_public_method(self.env[model].with_user(self.plain), method)
        self.assertTrue(get_public_method(thread.with_user(self.plain), "handle_confirmation"))

    # ------------------------------------------------------ Run As user
    def test_sudo_user_is_admin_only(self):
        self.assertNotIn("sudo_user_id", self.agent.with_user(self.plain).fields_get())

    def test_run_as_user_is_set_by_settings_admins_only_and_locks_the_agent(self):
        with self.assertRaises(AccessError):
            self.agent.with_user(self.ai_admin).write({"sudo_user_id": self.env.ref("base.user_admin").id})
        self.agent.sudo_user_id = self.env.ref("base.user_admin")
        with self.assertRaises(AccessError):
            self.agent.with_user(self.operator).write({"user_ids": [(4, self.operator.id)]})
        with self.assertRaises(AccessError):
            self.agent.with_user(self.operator).write({"require_confirmation": "never"})
        self.assertEqual((self.agent.user_ids, self.agent.require_confirmation), (self.env["res.users"], "never"))

    def test_provider_and_tools_of_a_sudo_agent_are_locked(self):
        self.agent.sudo_user_id = self.env.ref("base.user_admin")
        with self.assertRaises(AccessError):
            self.provider.with_user(self.ai_admin).write({"api_base_url": "http://127.0.0.1:1/v1"})
        with self.assertRaises(AccessError):
            self.env.ref("agentic_ai.tool_odoo_unlink").with_user(self.operator).write({"risk_level": "low"})
        self.agent.sudo_user_id = False
        self.env.ref("agentic_ai.tool_odoo_unlink").with_user(self.operator).write({"requires_confirmation": True})
        self.assertTrue(self.env.ref("agentic_ai.tool_odoo_unlink").requires_confirmation)

    def test_operator_can_duplicate_an_agent_without_its_run_as_user(self):
        self.agent.sudo_user_id = self.env.ref("base.user_admin")
        copy = self.agent.with_user(self.operator).copy({"code": "copied_agent"})
        self.assertFalse(copy.sudo().sudo_user_id)

    # ---------------------------------------------------- the agent's own data
    def test_agent_cannot_touch_its_own_models(self):
        thread = self.new_thread(user=self.plain)
        self.script(
            tool_call("odoo_create", {"model": "agentic.ai.thread", "values": {"agent_id": self.agent.id}}),
            tool_call("odoo_unlink", {"model": "agentic.ai.thread", "record_ids": [thread.id]}),
            tool_call("odoo_search_read", {"model": "agentic.ai.llm.provider"}),
            {"content": "done"})
        result = self.agent.with_user(self.plain).run(thread.id, "mess with yourself")
        self.assertEqual(result.state, "completed")
        observations = self.observations(thread)
        self.assertEqual(len(observations), 3)
        self.assertTrue(all("the agent's own data" in o for o in observations), observations)
        self.assertTrue(thread.exists())

    def test_server_action_tool_on_own_models_is_refused(self):
        action = self.env["ir.actions.server"].create({
            "name": "rename thread", "model_id": self.env["ir.model"]._get("agentic.ai.thread").id,
            "state": "code", "code": "records.write({'name': 'renamed'})"})
        tool = self.env["agentic.ai.tool"].create({"name": "sa_tool", "description": "x",
                                                   "tool_type": "server_action", "server_action_id": action.id,
                                                   "risk_level": "low"})
        self.agent.tool_ids = [(4, tool.id)]
        self.script(tool_call("sa_tool", {}), {"content": "ok"})
        thread, _result = self.run_agent("go")
        self.assertIn("the agent's own data", self.observations(thread)[0])
        self.assertEqual(thread.name, "test", "the server action did not run")

    def test_a_model_argument_does_not_hide_the_server_actions_own_model(self):
        """A server action tool whose schema takes a ``model`` runs on its own
        model whatever the argument says: the guard checks both."""
        action = self.env["ir.actions.server"].create({
            "name": "rename thread", "model_id": self.env["ir.model"]._get("agentic.ai.thread").id,
            "state": "code", "code": "records.write({'name': 'renamed'})"})
        tool = self.env["agentic.ai.tool"].create({
            "name": "sa_model_tool", "description": "x", "tool_type": "server_action", "server_action_id": action.id,
            "risk_level": "low", "parameter_schema": json.dumps({"type": "object", "properties": {
                "model": {"type": "string"}, "record_ids": {"type": "array", "items": {"type": "integer"}}}})})
        self.agent.tool_ids = [(4, tool.id)]
        thread = self.new_thread()
        self.script(tool_call("sa_model_tool", {"model": "res.partner", "record_ids": [thread.id]}), {"content": "ok"})
        self.agent.run(thread.id, "go")
        self.assertIn("the agent's own data", self.observations(thread)[0])
        self.assertEqual(thread.name, "test", "the server action did not run")

    # ------------------------------------------ blocked and allowed models
    def test_extra_parameter_cannot_dodge_blocked_models(self):
        self.agent.blocked_model_ids = [(6, 0, self.env["ir.model"]._get("sale.order").ids)]
        self.script(tool_call("create_quotation", {"partner": "Azure Interior", "model": "res.country",
                                                   "lines": [{"product": "Office Chair Black", "quantity": 1}]}),
                    {"content": "ok"})
        before = self.env["sale.order"].search_count([])
        thread, _result = self.run_agent("quote")
        self.assertEqual(self.env["sale.order"].search_count([]), before)
        self.assertIn("blocked model", self.observations(thread)[0])

    def test_lines_cannot_be_changed_or_deleted_through_a_parent_write(self):
        order = self.env["sale.order"].create({"partner_id": self.env.ref("base.res_partner_12").id, "order_line": [
            (0, 0, {"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": 1})]})
        self.agent.blocked_model_ids = [(6, 0, self.env["ir.model"]._get("sale.order.line").ids)]
        self.script(
            tool_call("odoo_write", {"model": "sale.order", "record_ids": [order.id],
                                     "values": {"order_line": [[1, order.order_line.id, {"price_unit": 0.01}]]}}),
            {"content": "ok"})
        thread, _result = self.run_agent("cheaper")
        self.assertNotEqual(order.order_line.price_unit, 0.01)
        self.assertIn("blocked model", self.observations(thread)[0])
        self.agent.blocked_model_ids = False
        self.script(
            tool_call("odoo_write", {"model": "sale.order", "record_ids": [order.id],
                                     "values": {"order_line": [[5, 0, 0]]}}),
            tool_call("odoo_write", {"model": "sale.order", "record_ids": [order.id], "values": {"state": "sale"}}),
            {"content": "ok"})
        thread, _result = self.run_agent("clear and confirm")
        self.assertEqual(len(order.order_line), 1)
        self.assertEqual(order.state, "draft")
        observations = self.observations(thread)
        self.assertIn("odoo_unlink", observations[0])
        self.assertIn("odoo_method_call", observations[1])

    def test_nested_commands_are_checked_at_every_depth(self):
        azure = self.env.ref("base.res_partner_12")
        order = self.env["sale.order"].create({"partner_id": azure.id, "order_line": [
            (0, 0, {"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": 1}),
            (0, 0, {"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": 2})]})
        line = order.order_line[0]
        attempts = [
            {"model": "sale.order", "record_ids": [order.id], "values": {"order_line": [[6, 0, []]]}},
            {"model": "sale.order", "record_ids": [order.id], "values": {"order_line": False}},
            {"model": "sale.order", "record_ids": [order.id], "values": {"order_line": [line.id]}},
            {"model": "res.partner", "record_ids": [azure.id],
             "values": {"sale_order_ids": [[1, order.id, {"order_line": [[5, 0, 0]]}]]}},
            {"model": "res.partner", "record_ids": [azure.id],
             "values": {"sale_order_ids": [[1, order.id, {"order_line": [[2, line.id, 0]]}]]}},
            {"model": "res.partner", "record_ids": [azure.id],
             "values": {"sale_order_ids": [[1, order.id, {"state": "sale"}]]}},
        ]
        self.script(*[tool_call("odoo_write", a) for a in attempts], {"content": "done"})
        thread, _result = self.run_agent("try everything")
        observations = self.observations(thread)
        self.assertEqual(len(observations), len(attempts))
        self.assertTrue(all(o.startswith("Error") for o in observations), observations)
        self.assertEqual(len(order.order_line), 2)
        self.assertEqual(order.state, "draft")
        # Models reached through nested commands are checked against blocked models.
        self.agent.blocked_model_ids = [(6, 0, self.env["ir.model"]._get("sale.order.line").ids)]
        self.script(tool_call("odoo_write", {"model": "res.partner", "record_ids": [azure.id], "values": {
            "sale_order_ids": [[1, order.id, {"order_line": [[1, line.id, {"price_unit": 0.01}]]}]]}}),
            {"content": "done"})
        thread, _result = self.run_agent("cheaper")
        self.assertNotEqual(line.price_unit, 0.01)
        self.assertIn("blocked model", self.observations(thread)[0])
