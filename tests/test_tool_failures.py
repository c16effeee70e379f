"""What a failing tool leaves in the server log (issue 10, point 7): Odoo's
own refusals (UserError, ValidationError, AccessError), PostgreSQL refusing
a value and the ORM refusing an argument are observations for the model and
one WARNING line without a traceback; a bug in a tool's code is an ERROR
with its traceback. Either way the run goes on and the audit row says which
(engine/guard/tool_failures.py)."""
import json
import logging

import psycopg2

from odoo import fields
from odoo.exceptions import AccessDenied, MissingError
from odoo.tests import new_test_user, tagged
from odoo.tools import mute_logger
from odoo.tools.safe_eval import safe_eval

from ..engine.guard.tool_failures import is_refusal
from .common import SALESMAN_GROUPS, ToolCase

OUR_LOGGER = "odoo.addons.agentic_ai"


@tagged("post_install", "-at_install")
class TestToolFailureLogging(ToolCase):

    def audit_level(self, tool_name, user):
        row = self.env["agentic.ai.execution.log"].search([("tool_name", "=", tool_name), ("user_id", "=", user.id)],
                                                          limit=1)
        return row.level, row.success

    def assert_refusals(self, calls):
        """Run each ``(what, tool, params, user, exception name)``: each fails
        with Odoo's exception named to the model and leaves exactly one
        WARNING, without a traceback, and no ERROR, in the addon's logs."""
        for what, name, params, user, exception in calls:
            with self.subTest(what), self.assertLogs(OUR_LOGGER, logging.WARNING) as logs:
                result = self.execute(name, params, user)
            self.assertFalse(result.success, f"{what}: the call should fail")
            self.assertIn(exception, result.error, what)
            self.assertEqual([(r.levelname, r.exc_info) for r in logs.records], [("WARNING", None)],
                             f"{what}: one warning, no traceback, no error: {logs.output}")
            self.assertIn(f"Tool {name} refused: {exception}", logs.records[0].getMessage())
            self.assertEqual(self.audit_level(name, user), ("warning", False), what)

    def test_odoo_refusals_are_one_warning_without_traceback(self):
        locked = self.env["sale.order"].create({"partner_id": self.customer.id, "locked": True})
        partner = self.env["res.partner"].create({"name": "Own Parent Ltd"})
        other_salesman = new_test_user(self.env, "failures_other", groups=SALESMAN_GROUPS)
        theirs = self.env["sale.order"].create({"partner_id": self.customer.id, "user_id": other_salesman.id})
        self.assert_refusals([
            ("UserError: a locked order cannot be cancelled", "odoo_method_call",
             {"model": "sale.order", "record_ids": [locked.id], "method": "action_cancel"}, self.accountant,
             "UserError"),
            ("ValidationError: a partner cannot be its own parent", "odoo_write",
             {"model": "res.partner", "record_ids": [partner.id], "values": {"parent_id": partner.id}},
             self.accountant, "ValidationError"),
            # Unreadable and missing records get one answer (issue 23: no existence oracle).
            ("another salesman's order, under Odoo's record rules", "odoo_method_call",
             {"model": "sale.order", "record_ids": [theirs.id], "method": "action_confirm"}, self.salesman,
             f"sale.order records [{theirs.id}] do not exist or you may not read them"),
            ("the ORM refusing an argument: a value its selection does not have", "odoo_write",
             {"model": "res.partner", "record_ids": [partner.id], "values": {"type": "nonsense"}}, self.accountant,
             "ValueError"),
        ])
        self.assertEqual((locked.state, theirs.state, partner.parent_id.id, partner.type), ("draft", "draft", False,
                                                                                           "contact"), "nothing ran")

    def test_postgresql_refusing_a_value_is_a_warning_of_ours(self):
        """PostgreSQL refuses text compared with an id. Odoo's own odoo.sql_db
        logger reports the query it built as an ERROR ("bad query"), which is
        Odoo's line, not the addon's; the addon's is a warning."""
        with mute_logger("odoo.sql_db"):
            self.assert_refusals([("text compared with an id", "odoo_search_read",
                                   {"model": "res.partner", "domain": [["id", "=", "abc"]]}, self.accountant,
                                   "InvalidTextRepresentation")])

    def test_a_bug_in_tool_code_is_an_error_with_its_traceback(self):
        """Two real faults of tool code, each logged once as an ERROR with its
        traceback while the model is told and the run goes on: an
        administrator's record of a registered function whose schema offers
        a parameter the function does not take (nothing checks the two
        agree, so the executor's call raises TypeError), and a Python-code
        tool naming something that does not exist."""
        Tool = self.env["agentic.ai.tool"]
        mismatched = Tool.create({
            "name": "model_fields_detailed", "description": "Describe a model, with a detail flag.",
            "tool_type": "orm_crud", "handler": "agentic_ai.tools.orm_tool.odoo_get_model_info",
            "risk_level": "low", "parameter_schema": json.dumps({"type": "object", "properties": {
                "model": {"type": "string"}, "detail": {"type": "boolean"}}, "required": ["model"]})})
        misspelt = Tool.create({"name": "misspelt_code", "description": "x", "tool_type": "python_code",
                                "risk_level": "low", "python_code": "result = {'total': totl}"})
        self.agent.tool_ids = [(4, mismatched.id), (4, misspelt.id)]
        calls = [(mismatched, {"model": "res.partner", "detail": True}, "TypeError"),
                 (misspelt, {}, "NameError")]
        for tool, params, exception in calls:
            with self.subTest(tool.name), self.assertLogs(OUR_LOGGER, logging.WARNING) as logs:
                result = self.execute(tool.name, params, self.accountant)
            self.assertFalse(result.success)
            self.assertIn(exception, result.error, "the model is told what broke")
            [record] = logs.records
            self.assertEqual(record.levelname, "ERROR", logs.output)
            self.assertEqual(record.getMessage(), f"Tool {tool.name} failed unexpectedly")
            self.assertIsNotNone(record.exc_info, "a bug keeps its traceback")
            self.assertEqual(self.audit_level(tool.name, self.accountant), ("error", False))

    def test_rule_on_each_kind_of_exception(self):
        def caught(function):
            try:
                function()
            except Exception as error:  # noqa: BLE001 - the exception is what is judged
                return error
            raise AssertionError("nothing was raised")

        def own_bug():
            return {}["missing"]

        refusals = {
            "MissingError": MissingError("gone"), "AccessDenied": AccessDenied(),
            "IntegrityError": psycopg2.IntegrityError("duplicate key"),
            "ValueError raised by Odoo": caught(lambda: fields.Date.to_date("30/11/2026")),
            "KeyError raised by Odoo": caught(lambda: self.env["no.such.model"]),
            "ValueError of Odoo inside a Python-code tool": caught(lambda: safe_eval(
                "env['res.partner'].browse(1).write({'type': 'nonsense'})", {"env": self.env}, mode="exec")),
        }
        bugs = {
            "AttributeError": caught(lambda: None.name),
            "KeyError raised in the addon's code": caught(own_bug),
            "NameError inside a Python-code tool": caught(lambda: safe_eval("totl", {})),
        }
        for what, error in refusals.items():
            self.assertTrue(is_refusal(error), f"{what} is a refusal: {error!r}")
        for what, error in bugs.items():
            self.assertFalse(is_refusal(error), f"{what} is a bug: {error!r}")
