"""A run's settings kept between runs (issue 26 point 5):
``agentic.ai.agent._run_settings`` keeps what a run reads of its agent,
tools, providers and safety rules, and the next run reads again whatever
changed since: a rule, a tool, the agent, a provider, the user's groups, a
knowledge source's agents."""
from odoo import Command
from odoo.tests import tagged

from ..engine.turn.run_context import build_run_context
from .common import AgenticCase


@tagged("post_install", "-at_install")
class TestRunSettings(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.setup_users()
        cls.plain.group_ids = [Command.link(cls.env.ref("agentic_ai.group_agentic_ai_user").id)]

    def settings(self):
        """The RunContext a new run of the plain user would get now."""
        return build_run_context(self.agent.with_user(self.plain), self.new_thread(user=self.plain))

    def test_settings_are_kept_between_runs_and_read_again_after_a_change(self):
        first = self.settings()
        self.assertIs(self.settings().tools, first.tools, "kept between runs: not read from the records again")
        self.assertIsNot(self.settings().rules, first.rules, "each run judges with verdicts of its own")

        rule = self.env["agentic.ai.safety.rule"].create({
            "name": "No partner deletion", "model_name": "res.partner", "operation": "unlink"})
        self.assertIn(rule.id, [spec.id for spec in self.settings().rules.rules], "a new safety rule counts")
        rule.active = False
        self.assertNotIn(rule.id, [spec.id for spec in self.settings().rules.rules], "a rule switched off too")

        tool = self.agent.tool_ids.filtered(lambda t: t.name == "odoo_search_read")
        tool.active = False
        self.assertNotIn("odoo_search_read", self.settings().tools, "a tool switched off")
        tool.active = True
        self.assertIn("odoo_search_read", self.settings().tools)

        self.agent.max_iterations = 3
        self.assertEqual(self.settings().max_iterations, 3, "the agent's own settings")
        self.agent.system_prompt = "You serve {user_name} of {company_name}; answer in haiku."
        self.assertTrue(self.settings().system_prompt.startswith(
            f"You serve {self.plain.name} of {self.env.company.name}; answer in haiku."), "its prompt, filled in")
        self.provider.max_tokens = 1234
        self.assertEqual(self.settings().providers[0].max_tokens, 1234, "its provider's")

        self.assertIn("create_invoice", self.settings().unavailable, "no access to invoices yet")
        self.plain.group_ids = [Command.link(self.env.ref("account.group_account_invoice").id)]
        self.assertIn("create_invoice", self.settings().tools, "the user's new group gives the tool")

        source = self.env["agentic.ai.knowledge.source"].create({
            "name": "Handbook", "source_type": "text", "raw_text": "Holidays: 25 days."})
        self.assertNotIn(source.id, self.settings().knowledge_source_ids)
        source.agent_ids = [Command.link(self.agent.id)]
        self.assertIn(source.id, self.settings().knowledge_source_ids, "a source given to the agent from its side")

    def test_a_group_created_or_deleted_counts_at_the_next_run(self):
        """Odoo empties only its groups cache when a group is created or
        deleted: a rule for group X applies once the user is put in X by a
        new group, and a rule limited to a deleted group applies to everyone
        (no group left), as the records say (a review's probes)."""
        def rule_ids():
            return [spec.id for spec in self.settings().rules.rules]

        x = self.env["res.groups"].create({"name": "Settings X"})
        rule = self.env["agentic.ai.safety.rule"].create({
            "name": "X may not delete partners", "model_name": "res.partner", "operation": "unlink",
            "group_ids": [Command.set(x.ids)]})
        self.assertNotIn(rule.id, rule_ids())
        self.env["res.groups"].create({"name": "Settings G", "implied_ids": [Command.set(x.ids)],
                                       "user_ids": [Command.set(self.plain.ids)]})
        self.assertIn(rule.id, rule_ids(), "the user is in X through the new group")

        gone = self.env["res.groups"].create({"name": "Settings Gone"})
        limited = self.env["agentic.ai.safety.rule"].create({
            "name": "Gone may not delete partners", "model_name": "res.partner", "operation": "unlink",
            "group_ids": [Command.set(gone.ids)]})
        self.assertNotIn(limited.id, rule_ids())
        gone.unlink()
        self.assertIn(limited.id, rule_ids(), "a rule whose only group is deleted applies to everyone")
