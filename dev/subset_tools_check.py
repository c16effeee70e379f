"""Fed to `odoo shell` by dev/app_subsets.sh, on a database where agentic_ai
has just been installed next to some subset of Odoo's apps.

Checks that a tool whose app is not installed is neither offered nor
callable (issue 4, point 4): every tool that names a ``required_module`` is
available exactly when that module is installed; the default agent offers
none of a missing app; the executor refuses each of them; and the offered
tools of the installed apps run. Prints what it finds, then
``offered=N hidden=M``; exits non-zero on any problem. The calls' rows
(thread, execution logs, a quotation) are committed, so that the uninstall
step that follows meets a module that has been used.
"""
from odoo.addons.agentic_ai.engine.executor import Executor
from odoo.addons.agentic_ai.engine.turn.run_context import build_run_context, unavailable_reason
from odoo.addons.agentic_ai.tools.base_tool import definitions
from odoo.addons.agentic_ai.tools.tool_spec import ToolSpec

problems = []
installed = set(env["ir.module.module"].search([("state", "=", "installed")]).mapped("name"))
# The agent's tools run as the requesting user: here the administrator.
admin = env.ref("base.user_admin")
agent = env.ref("agentic_ai.agent_general_assistant").with_user(admin)
user_env = agent._get_execution_env()
thread = env["agentic.ai.thread"].with_user(admin).create({"agent_id": agent.id, "name": "App subsets check"})
executor = Executor(build_run_context(agent, thread), thread)


def sample(schema):
    """A value that satisfies ``schema`` (the first of its types or enum; a
    date for strings), so that a call is refused for its app, not for its
    arguments."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "string")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        return {key: sample(schema["properties"][key]) for key in schema.get("required", [])}
    if kind == "array":
        return [sample(schema.get("items", {}))] * schema.get("minItems", 0)
    return {"string": "2026-01-05", "integer": 1, "number": 1, "boolean": False}[kind]


# 1. availability follows the installed modules
app_tools = env["agentic.ai.tool"].search([("required_module", "!=", False)])
def app_installed(tool):
    return any(module in installed for module in tool._get_required_modules())


for tool in app_tools:
    expected = app_installed(tool)
    if (not unavailable_reason(ToolSpec.from_record(tool), user_env)) != expected:
        problems.append(f"{tool.name}: available={not expected} while {tool.required_module} is "
                        f"{'installed' if expected else 'not installed'}")

# 2. the agent offers exactly the tools of installed apps
offered = agent._get_available_tools()
hidden = agent.tool_ids - offered
for tool in offered:
    if tool.required_module and not app_installed(tool):
        problems.append(f"{tool.name} is offered but {tool.required_module} is not installed")
for tool in hidden:
    if not tool.required_module or app_installed(tool):
        problems.append(f"{tool.name} is hidden although its app ({tool.required_module or 'none'}) is installed")

# 3. a tool of a missing app cannot be called: the executor refuses it, with
# an error that names the app and says it is missing
for tool in app_tools.filtered(lambda t: not app_installed(t)):
    params = sample(tool._get_schema())
    if tool._validate_params(params):
        problems.append(f"{tool.name}: the check built invalid arguments {params}: {tool._validate_params(params)}")
        continue
    result = executor.execute(tool.name, params, confirmed=True)
    print(f"missing app {tool.required_module}: {tool.name}{params} -> success={result.success}, "
          f"error={result.error!r}")
    if result.success:
        problems.append(f"{tool.name} ran although {tool.required_module} is not installed: {result.data!r}")
    elif not all(module in (result.error or "") for module in tool._get_required_modules()) or not any(
            words in result.error.lower() for words in ("not installed", "not available")):
        problems.append(f"{tool.name}: the error does not say that {tool.required_module} is not installed: "
                        f"{result.error!r}")

# 4. the tools of installed apps run
# (the calls of the tools of missing apps are listed too, never made)
customer = env.ref("base.res_partner_2").id
product = env["product.product"].search([("sale_ok", "=", True)], limit=1).id if "product.product" in env else None
smoke_calls = {
    "odoo_search_read": {"model": "res.partner", "fields": ["name"], "limit": 3},
    "get_customer_history": {"partner": customer},
    "create_quotation": {"partner": customer, "lines": [{"product": product, "quantity": 2}]},
    "get_sales_pipeline_summary": {},
    "get_supplier_pricing": {"product": product},
    "check_stock_levels": {"product": product},
    "search_employees": {"limit": 3},
    "get_attendance_summary": {"date_from": "2020-01-01", "date_to": "2030-12-31"},
    "get_production_schedule": {},
}
ran = []
for tool in offered.filtered(lambda t: t.name in smoke_calls):
    result = executor.execute(tool.name, smoke_calls[tool.name])
    print(f"installed: {tool.name} -> success={result.success}, error={result.error!r}")
    if result.success:
        ran.append(tool.name)
    else:
        problems.append(f"{tool.name} failed although its app is installed: {result.error}")
if "odoo_search_read" not in ran:
    problems.append("odoo_search_read on res.partner did not run")
if "sale" in installed and "create_quotation" not in ran:
    problems.append("create_quotation did not run although sale is installed")

# 5. the upgrade kept what the administrator set and restored what the code
# defines (dev/subset_admin_edits.py made the changes before the upgrade)
Tool = env["agentic.ai.tool"].with_context(active_test=False)
info = env.ref("agentic_ai.tool_odoo_get_model_info")
if (info.label, info.sequence, info.requires_confirmation) != ("Admin label", 77, True):
    problems.append(f"the administrator's label/sequence/confirmation of odoo_get_model_info were not kept: "
                    f"{(info.label, info.sequence, info.requires_confirmation)}")
if env.ref("agentic_ai.tool_odoo_get_available_models").active:
    problems.append("odoo_get_available_models, archived by the administrator, is active again")
search = env.ref("agentic_ai.tool_odoo_search_read")
definition = next(d for d in definitions("agentic_ai") if d.name == "odoo_search_read")
if (search.description, search.risk_level) != (definition.description, definition.risk_level):
    problems.append(f"odoo_search_read's description and risk were not restored from its definition: "
                    f"{search.risk_level!r}, {search.description[:40]!r}")
removed = env.ref("agentic_ai.tool_removed_tool", raise_if_not_found=False)
if not removed or removed.active:
    problems.append(f"the tool whose definition disappeared should be archived, not deleted: {removed!r}")
made, ran_admin = Tool.search([("name", "=", "admin_python_tool")]), None
if made:
    agent.sudo().write({"tool_ids": [(4, made.id)]})
    ran_admin = Executor(build_run_context(agent, thread), thread).execute("admin_python_tool", {})
if not ran_admin or not ran_admin.success or ran_admin.data != {"made_by": "admin", "uid": admin.id}:
    problems.append(f"the administrator's Python Code tool does not work after the upgrade: {ran_admin}")
expected_tools = {d.name for d in definitions("agentic_ai")}
synced = set(Tool.search([("tool_type", "in", ("native", "orm_crud"))]).mapped("name")) - {"removed_tool"}
if synced != expected_tools:
    problems.append(f"tool records {sorted(synced ^ expected_tools)} differ from the definitions")

for problem in problems:
    print("PROBLEM:", problem)
print(f"offered={len(offered)} hidden={len(hidden)} ran={','.join(ran)}")
if problems:
    raise SystemExit(1)
env.cr.commit()
