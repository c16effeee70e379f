"""Groups, ACLs, record rules, the API key, and the immutable log (spec 000 §3.7, §7.1)."""
from odoo.exceptions import AccessError, UserError
from odoo.tests import new_test_user, tagged

from .common import AgenticCase


@tagged("post_install", "-at_install")
class TestSecurity(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.user_a = new_test_user(cls.env, "ai_user_a", groups="base.group_user")
        cls.user_b = new_test_user(cls.env, "ai_user_b", groups="base.group_user")
        cls.ai_admin = new_test_user(cls.env, "ai_admin", groups="base.group_user,agentic_ai.group_agentic_ai_admin")

    def test_groups_imply_each_other(self):
        self.assertTrue(self.user_a.has_group("agentic_ai.group_agentic_ai_user"))
        self.assertFalse(self.user_a.has_group("agentic_ai.group_agentic_ai_operator"))
        self.assertTrue(self.ai_admin.has_group("agentic_ai.group_agentic_ai_operator"))
        privilege = self.env.ref("agentic_ai.group_agentic_ai_admin").privilege_id
        self.assertEqual(privilege, self.env.ref("agentic_ai.res_groups_privilege_agentic_ai"))

    def test_api_key_visible_to_system_group_only(self):
        self.assertEqual(self.provider.api_key, "test-key-not-secret")
        for user in (self.user_a, self.ai_admin):
            with self.assertRaises(AccessError, msg=user.login):
                self.provider.with_user(user).read(["api_key"])
        self.assertNotIn("api_key", self.provider.with_user(self.ai_admin).fields_get())

    def test_users_see_only_their_threads(self):
        thread_a = self.agent.with_user(self.user_a).start_thread(name="a")
        thread_b = self.agent.with_user(self.user_b).start_thread(name="b")
        visible = self.env["agentic.ai.thread"].with_user(self.user_a).search([])
        self.assertIn(thread_a, visible)
        self.assertNotIn(thread_b, visible)
        with self.assertRaises(AccessError):
            self.agent.with_user(self.user_a).run(thread_b.id, "hello")
        self.assertIn(thread_b, self.env["agentic.ai.thread"].with_user(self.ai_admin).search([]))

    def test_users_cannot_forge_messages_or_logs(self):
        thread = self.agent.with_user(self.user_a).start_thread(name="a")
        with self.assertRaises(AccessError):
            self.env["agentic.ai.thread.message"].with_user(self.user_a).create(
                {"thread_id": thread.id, "role": "assistant", "content": "forged"})
        with self.assertRaises(AccessError):
            self.env["agentic.ai.execution.log"].with_user(self.user_a).create({"action_type": "error"})

    def test_users_see_only_their_logs(self):
        log_a = self.env["agentic.ai.execution.log"].log("error", user_id=self.user_a.id, error_message="a")
        log_b = self.env["agentic.ai.execution.log"].log("error", user_id=self.user_b.id, error_message="b")
        visible = self.env["agentic.ai.execution.log"].with_user(self.user_a).search([])
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

    def test_purge_removes_only_old_rows(self):
        old = self.env["agentic.ai.execution.log"].log("error", error_message="old")
        new = self.env["agentic.ai.execution.log"].log("error", error_message="new")
        self.env.cr.execute("UPDATE agentic_ai_execution_log SET create_date = now() - interval '100 days' WHERE id = %s", [old.id])
        self.env["agentic.ai.execution.log"].invalidate_model()
        self.assertGreaterEqual(self.env["agentic.ai.execution.log"]._cron_purge_old_logs(90), 1)
        self.assertFalse(old.exists())
        self.assertTrue(new.exists())

    def test_cost_report_and_timeline(self):
        self.script({"content": "ok", "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
        thread = self.new_thread()
        self.agent.run(thread.id, "hi")
        timeline = self.env["agentic.ai.execution.log"].get_thread_timeline(thread.id)
        self.assertEqual([row["action_type"] for row in timeline], ["llm_call"])
        report = self.env["agentic.ai.execution.log"].get_cost_report(group_by="agent_id")
        row = next(r for r in report if r["key"] == self.agent.display_name)
        self.assertGreaterEqual(row["input_tokens"], 10)

    def test_sudo_user_is_admin_only(self):
        self.assertNotIn("sudo_user_id", self.agent.with_user(self.user_a).fields_get())
