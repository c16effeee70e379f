"""Backend views (spec 000 §10.3, issue 11 point 4): every window action of
the addon loads its views for the users whose menus reach it, every model
users work with has its own list, form and search views, the menus each AI
group sees, the "Open in Chat" action of the Conversations list and the
Settings of the AI Agents block.

Odoo validates each view's architecture when the module installs; these
tests check the combinations an installation does not: an action with its
view modes, its search view and its filters, loaded by the user who opens
it."""
from lxml import etree

from odoo.exceptions import AccessError, UserError, ValidationError
from odoo.tests import TransactionCase, new_test_user, tagged

AI_USER = "agentic_ai.group_agentic_ai_user"
AI_OPERATOR = "agentic_ai.group_agentic_ai_operator"
AI_ADMIN = "agentic_ai.group_agentic_ai_admin"

# Models with no list, form and search views of their own, and why.
WITHOUT_FULL_VIEWS = {
    "agentic.ai.thread.stop": "technical: stop requests, written and read by the engine in SQL, no ACL at all",
    "agentic.ai.run.holder": "technical: processes running conversations, the engine's, in SQL, no ACL at all",
    "agentic.ai.confirm.wizard": "a dialog (form only), opened from a waiting conversation",
    "agentic.ai.webhook.secret.show": "a dialog (form only) that shows a new webhook secret once",
}

# The addon's window actions each group reaches from its menus (xml ids without the module).
USER_ACTIONS = {"agentic_ai_thread_action", "agentic_ai_memory_action"}
OPERATOR_ACTIONS = USER_ACTIONS | {
    "agentic_ai_agent_action", "agentic_ai_tool_action", "agentic_ai_webhook_action",
    "agentic_ai_execution_log_action", "agentic_ai_cost_report_action", "agentic_ai_thread_message_action",
    "agentic_ai_plan_action", "agentic_ai_knowledge_source_action",
}
ADMIN_ACTIONS = OPERATOR_ACTIONS | {
    "agentic_ai_llm_provider_action", "agentic_ai_safety_rule_action", "agentic_ai_webhook_delivery_action",
    "agentic_ai_execution_log_checkpoint_action",
}
SYSTEM_ACTIONS = ADMIN_ACTIONS | {"res_config_settings_action"}


@tagged("post_install", "-at_install")
class TestBackendViews(TransactionCase):
    """Actions, views and menus of the addon, loaded as each AI group."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ai_user = new_test_user(cls.env, "bv_user", groups="base.group_user," + AI_USER)
        cls.operator = new_test_user(cls.env, "bv_operator", groups="base.group_user," + AI_OPERATOR)
        cls.ai_admin = new_test_user(cls.env, "bv_admin", groups="base.group_user," + AI_ADMIN)
        cls.settings_admin = new_test_user(cls.env, "bv_system", groups="base.group_system," + AI_ADMIN)
        data = cls.env["ir.model.data"].search([("module", "=", "agentic_ai"), ("model", "=", "ir.actions.act_window")])
        cls.actions = {row.name: cls.env["ir.actions.act_window"].browse(row.res_id) for row in data}

    def load_views(self, action, user):
        """``get_views`` as the web client calls it when ``user`` opens
        ``action``: its views, its search view, its filters and toolbar.
        Returns {view type: view id}."""
        views = [list(view) for view in action.views] + [[action.search_view_id.id, "search"]]
        result = self.env[action.res_model].with_user(user).get_views(
            views, {"action_id": action.id, "load_filters": True, "toolbar": True})
        self.assertEqual(set(result["views"]), {mode for _view, mode in views}, action.name)
        for mode, view in result["views"].items():
            self.assertTrue(view["arch"], f"{action.name}: empty {mode} view")
        return {mode: view["id"] for mode, view in result["views"].items()}

    def menu_actions(self, user):
        """xml ids (without the module) of the addon's window actions in
        the menus ``user`` sees."""
        menus = self.env["ir.ui.menu"].with_user(user).load_menus(False)
        ids = {menu["action_id"] for menu in menus.values() if menu.get("action_model") == "ir.actions.act_window"}
        return {name for name, action in self.actions.items() if action.id in ids}

    def test_every_action_is_known(self):
        self.assertEqual(set(self.actions), SYSTEM_ACTIONS,
                         "a window action of the addon is not in this test's menus: add it where its group sees it")

    def test_every_action_loads_its_views_as_an_ai_admin(self):
        for name, action in self.actions.items():
            user = self.settings_admin if action.res_model == "res.config.settings" else self.ai_admin
            with self.subTest(action=name):
                view_ids = self.load_views(action, user)
                # Our models have their own views; the Settings action's views are Odoo's (res.config.settings).
                if action.res_model.startswith("agentic.ai."):
                    for mode, view_id in view_ids.items():
                        self.assertTrue(view_id, f"{name}: Odoo generated a default {mode} view")
                        view = self.env["ir.ui.view"].browse(view_id)
                        self.assertTrue(view.xml_id.startswith("agentic_ai."), f"{name}: {mode} view {view.xml_id}")

    def test_each_group_loads_the_views_of_its_menus(self):
        for user, expected in ((self.ai_user, USER_ACTIONS), (self.operator, OPERATOR_ACTIONS),
                               (self.ai_admin, ADMIN_ACTIONS), (self.settings_admin, SYSTEM_ACTIONS)):
            with self.subTest(user=user.login):
                names = self.menu_actions(user)
                self.assertEqual(names, expected, f"the menus of {user.login}")
                for name in names:
                    self.load_views(self.actions[name], user)

    def test_ai_user_menu_is_conversations_then_nothing_technical(self):
        root = self.env.ref("agentic_ai.menu_agentic_ai_root")
        menus = self.env["ir.ui.menu"].with_user(self.ai_user).load_menus(False)
        self.assertIn(root.id, menus)
        visible = {menu["xmlid"] for menu in menus.values() if menu.get("app_id") == root.id}
        self.assertIn("agentic_ai.menu_agentic_ai_threads", visible)
        self.assertFalse(visible & {"agentic_ai.menu_agentic_ai_monitoring", "agentic_ai.menu_agentic_ai_config"})
        self.assertEqual(root.group_ids, self.env.ref(AI_USER), "the app is for AI users only")

    def test_menu_order_conversations_configuration_monitoring(self):
        children = self.env.ref("agentic_ai.menu_agentic_ai_root").child_id.sorted("sequence")
        order = [menu.get_external_id()[menu.id] for menu in children]
        ours = [xmlid for xmlid in order if xmlid in ("agentic_ai.menu_agentic_ai_threads",
                                                      "agentic_ai.menu_agentic_ai_config",
                                                      "agentic_ai.menu_agentic_ai_monitoring")]
        self.assertEqual(ours, ["agentic_ai.menu_agentic_ai_threads", "agentic_ai.menu_agentic_ai_config",
                                "agentic_ai.menu_agentic_ai_monitoring"])
        self.assertGreater(children.filtered(lambda m: m.name == "Conversations").sequence, 1,
                           "sequence 1 is the Chat's, first in the menu")
        operator = self.env.ref(AI_OPERATOR)
        self.assertEqual(self.env.ref("agentic_ai.menu_agentic_ai_monitoring").group_ids, operator)
        self.assertEqual(self.env.ref("agentic_ai.menu_agentic_ai_config").group_ids, operator)

    def test_every_model_has_list_form_and_search_views(self):
        models = [name for name in self.env.registry  # an abstract model (a mixin) has no records to show
                  if name.startswith("agentic.ai.") and not self.env[name]._abstract]
        Views = self.env["ir.ui.view"]
        for name in models:
            if name in WITHOUT_FULL_VIEWS:
                continue
            for view_type in ("list", "form", "search"):
                with self.subTest(model=name, view_type=view_type):
                    self.assertTrue(Views.search_count([("model", "=", name), ("type", "=", view_type),
                                                        ("inherit_id", "=", False)]),
                                    f"{name} has no {view_type} view")

    def test_execution_log_reports_cost_tokens_and_latency(self):
        """The Cost Report opens on a pivot of cost and tokens per agent and
        day, with a graph; latency (duration_ms) averages when grouped."""
        action = self.actions["agentic_ai_cost_report_action"]
        self.assertEqual([mode for _view, mode in action.views][:2], ["pivot", "graph"])
        pivot = self.env["agentic.ai.execution.log"].with_user(self.operator).get_view(action.views[0][0], "pivot")
        for fragment in ('name="agent_id" type="row"', 'name="create_date" interval="day" type="col"',
                         'name="cost" type="measure"', 'name="input_tokens" type="measure"',
                         'name="output_tokens" type="measure"', 'name="cache_read_tokens" type="measure"',
                         'name="reasoning_tokens" type="measure"'):
            self.assertIn(fragment, pivot["arch"])
        search = self.env["agentic.ai.execution.log"].with_user(self.operator).get_view(False, "search")["arch"]
        self.assertIn("usage_estimated", search)
        self.assertEqual(self.env["agentic.ai.execution.log"]._fields["duration_ms"].aggregator, "avg")
        self.assertIn("llm_calls", action.context)
        self.assertEqual(self.env.ref("agentic_ai.menu_agentic_ai_cost_report").parent_id,
                         self.env.ref("agentic_ai.menu_agentic_ai_monitoring"))

    def test_providers_form_has_test_connection(self):
        arch = self.env["agentic.ai.llm.provider"].with_user(self.ai_admin).get_view(
            self.env.ref("agentic_ai.agentic_ai_llm_provider_view_form").id, "form")["arch"]
        self.assertIn('name="action_test_connection"', arch)
        for price in ("input_price_per_million", "cache_read_price_per_million", "cache_write_price_per_million",
                      "output_price_per_million"):
            self.assertIn(f'name="{price}"', arch)


    def test_agent_form_has_six_tabs_the_sixth_what_governs_its_runs(self):
        """Spec 000 §10.3 (issue 27 point 6): the agent's form has six tabs;
        the Safety tab holds its confirmation policy and budgets, the rate
        limits of Settings and the active safety rules, read-only; the rules
        only for those who may read them."""
        view_id = self.env.ref("agentic_ai.agentic_ai_agent_view_form").id
        Agent = self.env["agentic.ai.agent"]
        arch = etree.fromstring(Agent.with_user(self.operator).get_view(view_id, "form")["arch"])
        self.assertEqual([page.get("name") for page in arch.iter("page")],
                         ["prompts", "tools", "models", "knowledge", "access", "safety"])
        safety = arch.find(".//page[@name='safety']")
        for name in ("require_confirmation", "max_cost_per_run", "rate_requests_per_minute", "safety_rule_ids"):
            self.assertIsNotNone(safety.find(f".//field[@name='{name}']"), name)
        self.assertNotIn("safety_rule_ids", Agent.with_user(self.ai_user).get_view(view_id, "form")["arch"])
        for key, value in (("max_requests_per_minute", "7"), ("max_requests_per_hour", "70"),
                           ("max_cost_per_day_agent", "0"), ("max_cost_per_day_company", "12.5")):
            self.env["ir.config_parameter"].sudo().set_param(f"agentic_ai.{key}", value)
        Rule = self.env["agentic.ai.safety.rule"]
        kept = Rule.create({"name": "No payroll", "scope": "model", "model_name": "hr.payslip"})
        archived = Rule.create({"name": "Old rule", "scope": "model", "model_name": "res.partner", "active": False})
        agent = self.env.ref("agentic_ai.agent_general_assistant").with_user(self.operator)
        self.assertEqual((agent.rate_requests_per_minute, agent.rate_requests_per_hour, agent.rate_cost_per_day_agent,
                          agent.rate_cost_per_day_company), (7, 70, 0.0, 12.5), "Settings' values, 0 for none")
        self.assertIn(kept, agent.safety_rule_ids)
        self.assertNotIn(archived, agent.safety_rule_ids)
        # The confirmation policy is changed by AI administrators only: read-only in an operator's form.
        for name in ("require_confirmation", "confirm_after_untrusted_content"):
            fields_ = safety.findall(f".//field[@name='{name}']")
            self.assertEqual([field.get("readonly") for field in fields_], ["1"], name)
        admin_arch = etree.fromstring(Agent.with_user(self.ai_admin).get_view(view_id, "form")["arch"])
        self.assertEqual([field.get("readonly") for field in admin_arch.iter("field")
                          if field.get("name") == "require_confirmation"], [None], "an administrator changes it")
        with self.assertRaises(AccessError):
            agent.with_user(self.ai_user).safety_rule_ids  # noqa: B018 - the read is the test


@tagged("post_install", "-at_install")
class TestOpenInChat(TransactionCase):
    """The Conversations list and form open a thread in the chat client action."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.ai_user = new_test_user(cls.env, "oc_user", groups="base.group_user," + AI_USER)
        cls.other = new_test_user(cls.env, "oc_other", groups="base.group_user," + AI_USER)
        agent = cls.env.ref("agentic_ai.agent_general_assistant")
        cls.thread = cls.env["agentic.ai.thread"].with_user(cls.ai_user).create(
            {"agent_id": agent.id, "name": "Quotation for Azure"})
        cls.other_thread = cls.env["agentic.ai.thread"].with_user(cls.other).create({"agent_id": agent.id})

    def test_open_chat_returns_the_client_action_on_the_thread(self):
        action = self.thread.action_open_chat()
        self.assertEqual(action["type"], "ir.actions.client")
        self.assertEqual(action["tag"], "agentic_ai.chat_action")
        self.assertEqual(action["params"], {"thread_id": self.thread.id})

    def test_open_chat_needs_one_readable_thread(self):
        with self.assertRaises(UserError):
            (self.thread | self.other_thread).sudo().action_open_chat()
        with self.assertRaises(AccessError):
            self.other_thread.with_user(self.ai_user).action_open_chat()

    def test_button_is_in_the_list_and_the_form(self):
        Thread = self.env["agentic.ai.thread"].with_user(self.ai_user)
        for view_type in ("list", "form"):
            with self.subTest(view_type=view_type):
                self.assertIn('name="action_open_chat"', Thread.get_view(view_type=view_type)["arch"])


@tagged("post_install", "-at_install")
class TestAiAgentsSettings(TransactionCase):
    """Settings > AI Agents: every internal user an AI user, the queue retry delay."""

    def settings(self, **values):
        self.env["res.config.settings"].create(values).execute()

    def test_enabling_makes_a_plain_internal_user_an_ai_user(self):
        self.settings(group_agentic_ai_all_users=False)
        internal, ai_user = self.env.ref("base.group_user"), self.env.ref(AI_USER)
        self.assertNotIn(ai_user, internal.implied_ids)
        plain = new_test_user(self.env, "st_plain", groups="base.group_user")
        self.assertFalse(plain.has_group(AI_USER))
        menu = self.env.ref("agentic_ai.menu_agentic_ai_root")
        self.assertNotIn(menu.id, self.env["ir.ui.menu"].with_user(plain).load_menus(False))

        self.settings(group_agentic_ai_all_users=True)
        self.assertIn(ai_user, internal.implied_ids)
        self.assertTrue(self.env["res.config.settings"].create({}).group_agentic_ai_all_users)
        self.env.invalidate_all()
        self.assertTrue(plain.has_group(AI_USER), "an internal user is an AI user once the setting is on")
        self.assertIn(menu.id, self.env["ir.ui.menu"].with_user(plain).load_menus(False))
        agent = self.env.ref("agentic_ai.agent_general_assistant")
        thread = self.env["agentic.ai.thread"].with_user(plain).create({"agent_id": agent.id})
        self.assertEqual(thread.user_id, plain)
        portal = new_test_user(self.env, "st_portal", groups="base.group_portal")
        self.assertFalse(portal.has_group(AI_USER), "portal users are not internal users")

    def test_queue_retry_delay_is_stored_zero_included(self):
        params = self.env["ir.config_parameter"].sudo()
        self.assertEqual(self.env["res.config.settings"].create({}).agentic_ai_queue_retry_delay, 60)
        self.settings(agentic_ai_queue_retry_delay=15)
        self.assertEqual(params.get_param("agentic_ai.queue_retry_delay"), "15")
        self.assertEqual(self.env["agentic.ai.thread"]._queue_settings().retry_delay, 15.0)
        self.settings(agentic_ai_queue_retry_delay=0)
        self.assertEqual(params.get_param("agentic_ai.queue_retry_delay"), "0", "0 (retry at once) is kept")
        self.assertEqual(self.env["res.config.settings"].create({}).agentic_ai_queue_retry_delay, 0)
        with self.assertRaises(ValidationError):
            self.settings(agentic_ai_queue_retry_delay=-5)
