"""Groups and access (spec 000 §7.1, issue 9 point 8): the ACL matrix of
every model for the three AI groups, and whether every internal user is an
AI user (the Settings choice)."""
from odoo.exceptions import AccessError
from odoo.tests import new_test_user, tagged

from .common import AgenticCase

GROUPS = {
    "user": "agentic_ai.group_agentic_ai_user",
    "operator": "agentic_ai.group_agentic_ai_operator",
    "admin": "agentic_ai.group_agentic_ai_admin",
}
OPERATIONS = {"r": "read", "w": "write", "c": "create", "u": "unlink"}
# model: rights of a member of each group (the groups imply each other, so
# an operator has at least a user's rights). Record rules narrow these to
# the user's own threads, messages and logs (tests/test_isolation_matrix.py).
EXPECTED = {
    "agentic.ai.llm.provider": {"user": "r", "operator": "r", "admin": "rwcu"},
    "agentic.ai.agent": {"user": "r", "operator": "rwcu", "admin": "rwcu"},
    "agentic.ai.tool": {"user": "r", "operator": "rwcu", "admin": "rwcu"},
    "agentic.ai.thread": {"user": "rwcu", "operator": "rwcu", "admin": "rwcu"},
    "agentic.ai.thread.message": {"user": "r", "operator": "r", "admin": "r"},
    "agentic.ai.execution.log": {"user": "r", "operator": "r", "admin": "r"},
    # Written by the engine only (as superuser), spec 000 §3.5.
    "agentic.ai.plan": {"user": "r", "operator": "r", "admin": "r"},
    "agentic.ai.plan.step": {"user": "r", "operator": "r", "admin": "r"},
    "agentic.ai.safety.rule": {"user": "", "operator": "r", "admin": "rwcu"},
    "agentic.ai.confirm.wizard": {"user": "rwcu", "operator": "rwcu", "admin": "rwcu"},
    "agentic.ai.execution.log.checkpoint": {"user": "", "operator": "", "admin": "r"},
    "agentic.ai.thread.stop": {"user": "", "operator": "", "admin": ""},  # the engine's, in SQL
    "agentic.ai.run.holder": {"user": "", "operator": "", "admin": ""},  # the engine's, in SQL
    "agentic.ai.webhook": {"user": "", "operator": "r", "admin": "rwcu"},
    "agentic.ai.webhook.delivery": {"user": "", "operator": "", "admin": "r"},
    # Record rules: own memories, shared ones read by all and written by operators (tests/test_memory.py).
    "agentic.ai.memory": {"user": "rwcu", "operator": "rwcu", "admin": "rwcu"},
    # Knowledge: read by AI users (their companies' sources), managed by operators; chunks are written by the
    # indexing only (as superuser), never by hand (tests/test_knowledge_sources.py).
    "agentic.ai.knowledge.source": {"user": "r", "operator": "rwcu", "admin": "rwcu"},
    "agentic.ai.knowledge.chunk": {"user": "r", "operator": "r", "admin": "r"},
    # Abstract (the dialog that shows a new secret once), opened by administrators.
    "agentic.ai.webhook.secret.show": {"user": "", "operator": "", "admin": "rc"},
}


@tagged("post_install", "-at_install")
class TestAccessMatrix(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.members = {
            "user": new_test_user(cls.env, "acl_user", groups="base.group_user"),
            "operator": new_test_user(cls.env, "acl_operator", groups="base.group_user," + GROUPS["operator"]),
            "admin": new_test_user(cls.env, "acl_admin", groups="base.group_user," + GROUPS["admin"]),
        }

    def test_every_model_is_in_the_matrix(self):
        with_acl = set(self.env["ir.model.access"].search([]).mapped("model_id.model"))
        models = {name for name, model in self.env.registry.items()
                  if name.startswith("agentic.ai.") and (not model._abstract or name in with_acl)}
        self.assertEqual(models, set(EXPECTED), "a model of the addon has no expected rights here")

    def test_acl_matrix(self):
        """Every model × group × operation against EXPECTED (12 checks a model)."""
        checked = 0
        for model, rights in EXPECTED.items():
            for group, user in self.members.items():
                for letter, operation in OPERATIONS.items():
                    with self.subTest(model=model, group=group, operation=operation):
                        self.assertEqual(self.env[model].with_user(user).has_access(operation), letter in rights[group],
                                         f"{group} {operation} {model}")
                        checked += 1
        self.assertEqual(checked, len(EXPECTED) * len(GROUPS) * len(OPERATIONS))

    def test_a_row_per_model_and_group(self):
        """The addon's ACL gives every model a row for each AI group, each
        granting exactly what EXPECTED says (the groups' rights add up)."""
        rows = self.env["ir.model.access"].search([("id", "in", self.env["ir.model.data"].search(
            [("module", "=", "agentic_ai"), ("model", "=", "ir.model.access")]).mapped("res_id"))])
        by_group = {self.env.ref(xmlid): name for name, xmlid in GROUPS.items()}
        ours = rows.filtered(lambda row: row.model_id.model.startswith("agentic.ai."))
        self.assertEqual(len({(row.model_id.model, row.group_id) for row in ours}), len(ours), "one row per pair")
        self.assertEqual(len(ours), len(EXPECTED) * len(GROUPS))
        for row in ours:
            granted = "".join(letter for letter, operation in OPERATIONS.items() if row[f"perm_{operation}"])
            self.assertEqual(granted, EXPECTED[row.model_id.model][by_group[row.group_id]], row.name)
        self.assertEqual(len(rows), 59, "57 model rows and the operators' read access to ir.model and its fields "
                                        "(knowledge sources of records pick their fields)")

    def test_logs_and_messages_are_never_writable(self):
        log = self.env["agentic.ai.execution.log"].log("error", user_id=self.members["admin"].id)
        for group, user in self.members.items():
            with self.subTest(group=group), self.assertRaises(AccessError):
                log.with_user(user).unlink()


@tagged("post_install", "-at_install")
class TestAiUserSetting(AgenticCase):
    """Settings > AI Agents > "Every internal user can use AI agents"."""

    def set_all_users(self, value):
        self.env["res.config.settings"].create({"group_agentic_ai_all_users": value}).execute()

    def test_on_by_default(self):
        self.assertTrue(self.env["res.config.settings"].create({}).group_agentic_ai_all_users)
        self.assertIn(self.env.ref(GROUPS["user"]), self.env.ref("base.group_user").implied_ids)

    def test_off_leaves_only_explicit_ai_users(self):
        plain = new_test_user(self.env, "set_plain", groups="base.group_user")
        chosen = new_test_user(self.env, "set_chosen", groups="base.group_user," + GROUPS["user"])
        operator = new_test_user(self.env, "set_operator", groups="base.group_user," + GROUPS["operator"])
        self.assertTrue(plain.has_group(GROUPS["user"]))
        self.set_all_users(False)
        self.assertNotIn(self.env.ref(GROUPS["user"]), self.env.ref("base.group_user").all_implied_ids)
        self.assertFalse(self.env["res.config.settings"].create({}).group_agentic_ai_all_users)
        self.env.invalidate_all()
        self.assertFalse(plain.has_group(GROUPS["user"]), "an internal user no longer implied loses the group")
        self.assertTrue(chosen.has_group(GROUPS["user"]))
        self.assertTrue(operator.has_group(GROUPS["user"]))
        with self.assertRaises(AccessError):
            self.agent.with_user(plain).start_thread(name="not allowed")
        with self.assertRaises(AccessError):
            self.env["agentic.ai.thread"].with_user(plain).search([])
        self.script({"content": "hello chosen one"})
        _thread, result = self.run_agent("hi", user=chosen)
        self.assertEqual(result.reply, "hello chosen one")
        newcomer = new_test_user(self.env, "set_newcomer", groups="base.group_user")
        self.assertFalse(newcomer.has_group(GROUPS["user"]), "new internal users are not AI users either")
        self.set_all_users(True)
        self.env.invalidate_all()
        self.assertTrue(plain.has_group(GROUPS["user"]))
        self.assertTrue(newcomer.has_group(GROUPS["user"]))
