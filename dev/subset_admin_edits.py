"""Fed to `odoo shell` by dev/app_subsets.sh between the install and the
upgrade of agentic_ai: what an administrator does to the tools, and a tool
that an older version defined (issue 8, point 1). dev/subset_tools_check.py
checks after the upgrade that the administrator's values are kept, the
definitions' own fields restored, the old tool archived (not deleted) and
the administrator's own tool still working.

- odoo_get_model_info: label, sequence and confirmation changed;
- odoo_get_available_models: archived;
- odoo_search_read: description and risk level changed behind the
  definition's back (as an older version of the module would have left them);
- removed_tool: a tool record of this module whose definition no longer
  exists (written with SQL: its handler cannot be registered any more);
- admin_python_tool: a Python Code tool made in the UI.
"""
Tool = env["agentic.ai.tool"]
admin = env.ref("base.user_admin")
env.ref("agentic_ai.tool_odoo_get_model_info").with_user(admin).write(
    {"label": "Admin label", "sequence": 77, "requires_confirmation": True})
env.ref("agentic_ai.tool_odoo_get_available_models").with_user(admin).write({"active": False})
env.cr.execute("UPDATE agentic_ai_tool SET description = 'an older description', risk_level = 'high' "
               "WHERE name = 'odoo_search_read'")
env.cr.execute("""
    INSERT INTO agentic_ai_tool (name, label, description, sequence, active, tool_type, handler, parameter_schema,
                                 risk_level, category, requires_confirmation, is_destructive, is_idempotent)
    VALUES ('removed_tool', '{"en_US": "Removed"}', 'A tool an older version defined.', 50, true, 'native',
            'agentic_ai.tools.removed_module.removed_tool', '{"type": "object", "properties": {}}', 'low', 'other',
            false, false, true)
    RETURNING id""")
removed_id = env.cr.fetchone()[0]
env["ir.model.data"].create({"module": "agentic_ai", "name": "tool_removed_tool", "model": "agentic.ai.tool",
                             "res_id": removed_id})
env.ref("agentic_ai.agent_general_assistant").write({"tool_ids": [(4, removed_id)]})
Tool.with_user(admin).create({"name": "admin_python_tool", "description": "Made by the administrator in the UI.",
                              "tool_type": "python_code", "risk_level": "low",
                              "python_code": "result = {'made_by': 'admin', 'uid': env.uid}"})
env.cr.commit()
print("admin edits done")
