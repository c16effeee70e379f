"""Configure the demo database; run through ``odoo-bin shell`` by dev/demo.sh.

Reads the environment: ``OPENAI_API_KEY`` (OpenAI, model
``AGENTIC_AI_LLM_MODEL`` or gpt-4o-mini), else ``AGENTIC_AI_LLM_BASE_URL`` +
``AGENTIC_AI_LLM_MODEL`` [+ ``AGENTIC_AI_LLM_API_KEY``] (any OpenAI-compatible
server), else ``AGENTIC_AI_SCRIPTED_URL`` (the scripted demo model). Points
the "General ERP Assistant" at that provider and activates it, and makes sure
admin logs in with admin/admin. With the scripted model, the per-user rate
limit is raised to 120 LLM calls a minute.
"""
import os

env = env  # provided by odoo-bin shell
Provider = env["agentic.ai.llm.provider"].with_context(active_test=False)

if os.environ.get("OPENAI_API_KEY"):
    values = {"name": "OpenAI", "provider_type": "openai", "api_base_url": False,
              "api_key": os.environ["OPENAI_API_KEY"],
              "default_model": os.environ.get("AGENTIC_AI_LLM_MODEL") or "gpt-4o-mini"}
elif os.environ.get("AGENTIC_AI_LLM_BASE_URL"):
    values = {"name": "OpenAI-compatible server", "provider_type": "custom",
              "api_base_url": os.environ["AGENTIC_AI_LLM_BASE_URL"],
              "api_key": os.environ.get("AGENTIC_AI_LLM_API_KEY") or False,
              "default_model": os.environ.get("AGENTIC_AI_LLM_MODEL") or "llama3.1"}
else:
    values = {"name": "Scripted demo model", "provider_type": "custom",
              "api_base_url": os.environ["AGENTIC_AI_SCRIPTED_URL"], "api_key": False,
              "default_model": "scripted-demo"}

provider = Provider.search([("name", "=", values["name"])], limit=1)
if provider:
    provider.write({**values, "active": True})
else:
    provider = Provider.create(values)
if values["default_model"] == "scripted-demo":
    # The scripted model costs nothing and answers at once: trying the routes by hand should not meet the
    # production default of 20 LLM calls a minute (a turn with tools makes several).
    env["ir.config_parameter"].sudo().set_param("agentic_ai.max_requests_per_minute", 120)
agent = env.ref("agentic_ai.agent_general_assistant")
agent.write({"llm_provider_id": provider.id})
if agent.state != "active":
    agent.action_activate()
env.ref("base.user_admin").password = "admin"
env.cr.commit()
print(f"[demo] agent {agent.name!r} uses {provider.name} ({provider.default_model})")
