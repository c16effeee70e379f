"""Business method calls (odoo_method_call) against Odoo 19's own rule for
methods called from outside (``odoo/service/model.py``
``get_public_method``): the tool is never more permissive, refuses before
anything runs, logs each refusal, and the allowed methods still pass the
allow list and the confirmation gate. Case BR-29 of issue 9."""
from odoo import Command
from odoo.exceptions import AccessError
from odoo.service.model import get_public_method
from odoo.tests import tagged

from ..tools.orm_tool import ALLOWED_METHODS, METHOD_SUBSTITUTES, method_refusal
from .common import ToolCase, tool_call

# Names a model could send: Odoo's private and public ORM methods, Python
# internals, and every allowed business method of every model.
PROBES = sorted({"_write", "_create", "_read", "sudo", "browse", "search_fetch", "__class__", "__init__",
                 "__getattribute__", "with_user", "with_context", "with_env", "env", "write", "create", "unlink",
                 "read", "search", "copy", "export_data", "load", "check_access", "_compute_display_name",
                 "_auto_init", "init", "action_archive", "message_post", "name_create", "fields_get", "pool",
                 *[m for methods in ALLOWED_METHODS.values() for m in methods]})


@tagged("post_install", "-at_install")
class TestMethodCalls(ToolCase):

    def log_rows(self, method):
        return self.env["agentic.ai.execution.log"].search([
            ("tool_name", "=", "odoo_method_call"), ("input_data", "like", f'"method": "{method}"')])

    def test_BR_29_methods_json_rpc_would_refuse(self):
        """As an AI user without accounting rights (the demo salesperson)."""
        user = self.salesperson
        self.assertFalse(user.has_group("account.group_account_invoice"))
        partner = self.env["res.partner"].create({"name": "BR-29"})
        order = self.env["sale.order"].with_user(user).create({"partner_id": partner.id, "order_line": [
            Command.create({"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": 1})]})
        move = self.env["account.move"].search([], limit=1)
        refused = [("res.partner", partner.id, "_write"), ("account.move", move.id, "sudo"),
                   ("res.users", user.id, "browse"), ("sale.order", order.id, "search_fetch"),
                   ("sale.order", order.id, "__class__")]
        for model, record_id, method in refused:
            with self.subTest(model=model, method=method):
                result = self.execute("odoo_method_call", {"model": model, "record_ids": [record_id],
                                                           "method": method}, user)
                self.assertFalse(result.success)
                self.assertIn(f"{model}.{method} cannot be called by the agent", result.error)
                row = self.log_rows(method)
                self.assertEqual((len(row), row.success), (1, False), "each refusal is in the log")
                self.assertIn("cannot be called by the agent", row.error_message)
        self.assertEqual(partner.name, "BR-29")
        # action_confirm passes the allow list, then the confirmation gate.
        self.agent.require_confirmation = "destructive"
        self.script(tool_call("odoo_method_call", {"model": "sale.order", "record_ids": [order.id],
                                                   "method": "action_confirm"}), {"content": "Confirmed."})
        thread = self.agent.with_user(user).start_thread(name="BR-29")
        result = self.agent.with_user(user).run(thread.id, "confirm my quotation")
        self.assertEqual(result.state, "waiting_confirmation")
        self.assertEqual(order.state, "draft")
        thread.with_user(user).handle_confirmation(True)
        self.assertEqual(order.state, "sale")

    def test_the_tool_is_never_more_permissive_than_odoo(self):
        """Every model of this database × PROBES: wherever the tool would
        call a method, Odoo 19 would let it be called over RPC."""
        env = self.env(user=self.salesperson)
        compared = allowed = 0
        for model_name in sorted(env.registry):
            model = env[model_name]
            for method in PROBES:
                compared += 1
                if method_refusal(env, model_name, method):
                    continue
                allowed += 1
                called = METHOD_SUBSTITUTES.get((model_name, method), (method, ""))[0]
                with self.subTest(model=model_name, method=method):
                    self.assertTrue(callable(get_public_method(model, called)))
        # The allow list of every installed app is reachable, nothing else.
        expected = sum(len(methods) for model, methods in ALLOWED_METHODS.items() if model in env)
        self.assertEqual(allowed, expected)
        self.assertGreater(compared, 10000)

    def test_private_and_orm_methods_are_refused_on_every_model(self):
        env = self.env(user=self.salesperson)
        for model_name in ("res.partner", "sale.order", "account.move", "res.users", "hr.employee"):
            for method in ("_write", "sudo", "browse", "search_fetch", "__class__", "write", "unlink"):
                with self.subTest(model=model_name, method=method):
                    self.assertIn("cannot be called by the agent", method_refusal(env, model_name, method))
        with self.assertRaises(AccessError):  # Odoo's own rule agrees on the private ones
            get_public_method(env["res.partner"], "_write")
