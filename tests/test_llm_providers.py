from odoo.tests import TransactionCase, tagged


@tagged("post_install", "-at_install")
class TestSmoke(TransactionCase):
    def test_install(self):
        self.assertTrue(self.env.ref("agentic_ai.agent_general_assistant"))
