"""Tools defined once, in Python (spec 000 §3.3, §5): every definition
against its function, the agentic.ai.tool records synchronised from them on
install and upgrade, the administrator's values kept, tools made in the UI
working beside them, and tool modules that fail to import."""
import inspect
import json

from odoo.exceptions import AccessError, UserError, ValidationError
from odoo.tests import new_test_user, tagged

from ..tools import base_tool as registry
from ..tools.base_tool import agent_tool, definitions, import_tool_modules, resolve_handler
from .common import AgenticCase


def _scratch_tool(env, kind="x"):
    """A function of this test module (not registered until decorated)."""
    return {"kind": kind, "uid": env.uid}


@tagged("post_install", "-at_install")
class TestToolDefinitions(AgenticCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.Tool = cls.env["agentic.ai.tool"]
        cls.admin = new_test_user(cls.env, "defs_ai_admin",
                                  groups="base.group_user,agentic_ai.group_agentic_ai_admin,base.group_system")

    def register_scratch(self, **overrides):
        """Define ``_scratch_tool`` as a tool of this module for the test only."""
        options = {"label": "Scratch", "category": "other", "risk_level": "low",
                   "description": "A tool defined by a test to check how definitions reach the tool records. "
                                  "It returns the kind it was given.",
                   "parameters": {"kind": {"type": "string", "description": "Any text."}}, **overrides}
        agent_tool(**options)(_scratch_tool)
        handler = f"{_scratch_tool.__module__.removeprefix('odoo.addons.')}._scratch_tool"
        self.addCleanup(registry.TOOL_REGISTRY.pop, handler, None)
        return registry.TOOL_REGISTRY[handler]

    def test_every_definition_is_sound_and_matches_its_function(self):
        found = definitions("agentic_ai")
        self.assertEqual(len(found), 31, "the 7 generic tools of spec §5.1 and the 24 app tools of §5.2")
        for definition in found:
            self.assertEqual(definition.problems(), [], definition.name)
            signature = inspect.signature(definition.function).parameters
            self.assertEqual(list(definition.parameters["properties"]), [p for p in signature if p != "env"],
                             f"{definition.name}: schema parameters in the function's order")
            self.assertEqual(definition.parameters["required"],
                             [p.name for p in signature.values() if p.default is p.empty and p.name != "env"])

    def test_definition_problems_name_what_is_wrong(self):
        definition = self.register_scratch(parameters={"other": {"type": "string"}}, risk_level="extreme",
                                           description="short")
        problems = " | ".join(definition.problems())
        self.assertIn("risk_level 'extreme'", problems)
        self.assertIn("fewer than 80 characters", problems)
        self.assertIn("schema parameters ['other'] differ from the function's ['kind']", problems)
        bad_default = self.register_scratch(parameters={"kind": {"type": "integer"}})
        self.assertEqual(bad_default.problems(), ["the default 'x' of kind does not satisfy its schema"])

    def test_records_are_the_definitions(self):
        for definition in definitions("agentic_ai"):
            tool = self.env.ref(definition.xml_id)
            values = definition.record_values()
            self.assertEqual({name: tool[name] for name in values}, values, definition.name)
            self.assertTrue(tool.is_code_defined)
        self.assertEqual(self.env.ref("agentic_ai.tool_odoo_unlink").is_destructive, True)
        self.assertEqual(self.env.ref("agentic_ai.tool_odoo_write").is_idempotent, True)

    def test_upgrade_keeps_the_administrators_values_and_restores_the_definitions(self):
        tool = self.env.ref("agentic_ai.tool_create_quotation")
        definition = next(d for d in definitions() if d.name == "create_quotation")
        tool.with_user(self.admin).write({"label": "Quote it", "sequence": 99, "requires_confirmation": True})
        tool.sudo().write({"description": "stale text", "risk_level": "high"})  # as an older version left it
        self.Tool._sync_tool_definitions()
        self.assertEqual((tool.label, tool.sequence, tool.requires_confirmation), ("Quote it", 99, True))
        self.assertEqual((tool.description, tool.risk_level), (definition.description, "medium"))
        tool.with_user(self.admin).action_archive()
        self.Tool._sync_tool_definitions()
        self.assertFalse(tool.active, "an administrator's archive survives the upgrade")

    def test_new_definition_is_created_and_a_vanished_one_archived_not_deleted(self):
        definition = self.register_scratch()
        self.Tool._sync_tool_definitions()
        tool = self.env.ref(definition.xml_id)
        self.assertEqual((tool.name, tool.label, tool.risk_level, tool.active),
                         ("_scratch_tool", "Scratch", "low", True))
        self.agent.tool_ids = [(4, tool.id)]
        self.assertEqual(self.execute("_scratch_tool", {"kind": "y"}, self.env.ref("base.user_demo")).data,
                         {"kind": "y", "uid": self.env.ref("base.user_demo").id})
        registry.TOOL_REGISTRY.pop(definition.handler)
        self.Tool._sync_tool_definitions()
        self.assertTrue(tool.exists(), "a tool whose definition is gone is kept")
        self.assertFalse(tool.active)
        self.assertEqual(self.env.ref(definition.xml_id), tool, "its external id is kept, so Odoo does not delete it")

    def test_a_hand_made_tool_of_the_same_name_is_renamed_not_taken_over(self):
        """The model must get the defined tool under its name: the tool made
        by hand under that name is kept, renamed."""
        hand_made = self.Tool.create({"name": "_scratch_tool", "description": "made by hand",
                                      "tool_type": "python_code", "python_code": "result = 1"})
        definition = self.register_scratch()
        with self.assertLogs("odoo.addons.agentic_ai.models.agent_tool", "WARNING") as logs:
            self.Tool._sync_tool_definitions()
        self.assertIn("made by hand, is renamed _scratch_tool_custom", logs.output[0])
        self.assertEqual((hand_made.name, hand_made.description, hand_made.tool_type),
                         ("_scratch_tool_custom", "made by hand", "python_code"))
        self.assertEqual(self.env.ref(definition.xml_id).name, "_scratch_tool")

    def test_a_defined_tool_cannot_be_deleted_or_undercut(self):
        """Deleting a defined tool is refused (archive it); another record of
        a registered function cannot be less risky than the function's tool."""
        unlink = self.env.ref("agentic_ai.tool_odoo_unlink").with_user(self.admin)
        with self.assertRaises(UserError):
            unlink.unlink()
        for values in ({"risk_level": "low"}, {"risk_level": "high", "is_destructive": False}):
            with self.assertRaises(ValidationError, msg=str(values)):
                self.Tool.with_user(self.admin).create({
                    "name": "quiet_delete", "description": "x", "tool_type": "orm_crud",
                    "handler": "agentic_ai.tools.orm_tool.odoo_unlink", **values})
        loud = self.Tool.with_user(self.admin).create({
            "name": "loud_delete", "description": "x", "tool_type": "orm_crud", "risk_level": "high",
            "handler": "agentic_ai.tools.orm_tool.odoo_unlink"})
        self.assertTrue(loud.is_destructive)
        with self.assertRaises(UserError):  # the upgrade's mark cannot be borrowed to skip the checks
            self.Tool.with_user(self.admin).create({
                "name": "marked_delete", "description": "x", "tool_type": "orm_crud", "risk_level": "low",
                "handler": "agentic_ai.tools.orm_tool.odoo_unlink", "definition_missing": True})
        with self.assertRaises(UserError):
            loud.write({"definition_missing": True})

    def test_handlers_are_looked_up_never_imported(self):
        """A handler is text an administrator types: saving one imports nothing."""
        import sys
        self.assertNotIn("odoo.addons.agentic_ai.dev.scripted_llm.__main__", sys.modules)
        with self.assertRaises(ValidationError):
            self.Tool.create({"name": "importer", "description": "x", "tool_type": "native",
                              "handler": "agentic_ai.dev.scripted_llm.__main__.main"})
        self.assertNotIn("odoo.addons.agentic_ai.dev.scripted_llm.__main__", sys.modules)

    def test_tools_of_an_addon_with_a_broken_module_are_not_archived(self):
        """An upgrade during which a tool module fails to import keeps that
        addon's tools as they are; once it imports again, a tool the upgrade
        had archived comes back, one the administrator archived does not."""
        definition = self.register_scratch()
        self.Tool._sync_tool_definitions()
        tool = self.env.ref(definition.xml_id)
        registry.TOOL_REGISTRY.pop(definition.handler)
        registry.IMPORT_FAILURES["agentic_ai.tools.broken"] = "SyntaxError: invalid syntax"
        self.addCleanup(registry.IMPORT_FAILURES.pop, "agentic_ai.tools.broken", None)
        with self.assertLogs("odoo.addons.agentic_ai.models.agent_tool", "WARNING"):
            self.Tool._sync_tool_definitions()
        self.assertTrue(tool.active, "kept while a module of the addon does not import")
        registry.IMPORT_FAILURES.pop("agentic_ai.tools.broken")
        self.Tool._sync_tool_definitions()
        self.assertEqual((tool.active, tool.definition_missing), (False, True))
        self.register_scratch()
        self.Tool._sync_tool_definitions()
        self.assertEqual((tool.active, tool.definition_missing), (True, False), "back with its definition")
        tool.action_archive()
        self.Tool._sync_tool_definitions()
        self.assertFalse(tool.active, "an administrator's archive stays")

    def test_fields_of_a_definition_are_read_only_in_odoo(self):
        tool = self.env.ref("agentic_ai.tool_odoo_search_read").with_user(self.admin)
        for values in ({"description": "do anything"}, {"risk_level": "low"}, {"parameter_schema": "{}"},
                       {"handler": "agentic_ai.tools.orm_tool.odoo_unlink"}):
            with self.assertRaises(UserError, msg=str(values)):
                tool.write(values)
        tool.write({"label": "Find", "sequence": 3, "requires_confirmation": True, "active": False})
        self.assertEqual((tool.label, tool.sequence, tool.requires_confirmation, tool.active), ("Find", 3, True, False))

    def test_tools_made_in_the_ui_keep_working(self):
        """Python code, a server action, and another record of a registered
        function with its own description, made by an administrator."""
        Tool = self.Tool.with_user(self.admin)
        code = Tool.create({"name": "ui_code", "description": "x", "tool_type": "python_code", "risk_level": "low",
                            "python_code": "result = {'partners': env['res.partner'].search_count([('id', '=', 1)])}"})
        action = self.env["ir.actions.server"].create({
            "name": "ui action", "model_id": self.env["ir.model"]._get("res.partner").id, "state": "code",
            "code": "action = {'count': len(records)}"})
        server = Tool.create({"name": "ui_action", "description": "x", "tool_type": "server_action",
                              "server_action_id": action.id, "risk_level": "low", "model_names": "res.partner",
                              "parameter_schema": json.dumps({"type": "object", "properties": {
                                  "record_ids": {"type": "array", "items": {"type": "integer"}}}})})
        confirm = Tool.create({"name": "confirm_orders", "description": "Confirm quotations by id.",
                               "tool_type": "orm_crud", "handler": "agentic_ai.tools.orm_tool.odoo_method_call",
                               "risk_level": "high", "parameter_schema": self.env.ref(
                                   "agentic_ai.tool_odoo_method_call").parameter_schema})
        self.assertFalse((code | server | confirm).filtered("is_code_defined"))
        confirm.write({"description": "Confirm sales quotations by id, nothing else."})  # all fields are the admin's
        self.agent.tool_ids = [(4, t.id) for t in code | server | confirm]
        user = self.env.ref("base.user_demo")
        self.assertEqual(self.execute("ui_code", {}, user).data, {"partners": 1})
        self.assertEqual(self.execute("ui_action", {"record_ids": [1, 2]}, user).data,
                         {"server_action": "ui action", "result": {"count": 2}})
        order = self.env["sale.order"].with_user(user).create({
            "partner_id": self.env.ref("base.res_partner_12").id,
            "order_line": [(0, 0, {"product_id": self.env.ref("product.product_product_8").id, "product_uom_qty": 1})]})
        done = self.execute("confirm_orders", {"model": "sale.order", "record_ids": order.ids,
                                               "method": "action_confirm"}, user)
        self.assertTrue(done.success, done.error)
        self.assertEqual(order.state, "sale")

    def test_a_tool_module_that_fails_to_import_says_why(self):
        self.addCleanup(registry.IMPORT_FAILURES.pop, "agentic_ai.tools.no_such_tools", None)
        with self.assertLogs("odoo.addons.agentic_ai.tools.base_tool", "ERROR") as logs:
            failures = import_tool_modules("odoo.addons.agentic_ai.tools", ["no_such_tools"])
        self.assertEqual(list(failures), ["no_such_tools"])
        self.assertIn("ModuleNotFoundError", failures["no_such_tools"])
        self.assertIn("no_such_tools could not be imported, its tools are unavailable", logs.output[0])
        with self.assertRaises(registry.ToolError) as error:
            resolve_handler("agentic_ai.tools.no_such_tools.some_tool")
        self.assertIn("its module agentic_ai.tools.no_such_tools could not be imported: ModuleNotFoundError",
                      str(error.exception))

    def test_copies_get_a_free_name_and_plain_users_no_write_access(self):
        settings_admin = self.env.ref("base.user_admin")
        tool = self.Tool.with_user(settings_admin).create({
            "name": "my_code", "description": "x", "tool_type": "python_code", "python_code": "result = 1"})
        first, second = tool.copy(), tool.copy()
        self.assertEqual((first.name, second.name), ("my_code_copy", "my_code_copy_2"))
        self.assertEqual(first.sudo().python_code, "result = 1")
        plain = new_test_user(self.env, "defs_plain", groups="base.group_user")
        with self.assertRaises(AccessError):
            self.env.ref("agentic_ai.tool_odoo_search_read").with_user(plain).write(
                {"handler": "agentic_ai.tools.orm_tool.odoo_unlink"})
