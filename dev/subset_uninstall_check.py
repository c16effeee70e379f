"""Fed to `odoo shell` by dev/app_subsets.sh: uninstalls agentic_ai the way
the Apps menu does, then checks that nothing of it is left: the module is
``uninstalled`` and no model ``agentic.ai.*``, no table ``agentic_ai_*`` and
no record of its data remain. Exits non-zero on any leftover."""
env["ir.module.module"].search([("name", "=", "agentic_ai")]).button_immediate_uninstall()

# The registry of `env` predates the uninstall: read the database directly.
queries = {
    "module state": "SELECT state FROM ir_module_module WHERE name = 'agentic_ai' AND state != 'uninstalled'",
    "models": r"SELECT model FROM ir_model WHERE model LIKE 'agentic.ai.%'",
    "tables": r"SELECT tablename FROM pg_tables WHERE tablename LIKE 'agentic\_ai\_%'",
    "data records": "SELECT model || ' ' || name FROM ir_model_data WHERE module = 'agentic_ai'",
}
leftovers = False
for label, query in queries.items():
    env.cr.execute(query)
    rows = [row[0] for row in env.cr.fetchall()]
    print(f"{label} left after uninstall: {len(rows)}", *rows[:20])
    leftovers = leftovers or bool(rows)
if leftovers:
    raise SystemExit(1)
