"""Fed to ``odoo shell`` by dev/durability_check.py: points the default
agent at the scripted LLM (``CHECK_LLM_URL``) without confirmations,
creates the partner the scripted model will rename, two threads of the
administrator and a third on a copy of the agent that asks before every
write, commits, and prints ``PREP {"thread_id", "partner_id",
"partner_name", "conflict_thread_id", "approval_thread_id"}``."""
import json
import os

env = env  # provided by odoo-bin shell
admin = env.ref("base.user_admin")
provider = env["agentic.ai.llm.provider"].create({
    "name": "Durability check scripted", "provider_type": "custom", "api_base_url": os.environ["CHECK_LLM_URL"],
    "default_model": "durability-model", "timeout_seconds": 30})
agent = env.ref("agentic_ai.agent_general_assistant")
agent.write({"llm_provider_id": provider.id, "fallback_provider_id": False, "require_confirmation": "never"})
if agent.state != "active":
    agent.action_activate()
# A dead server's runs are repaired once its lease ran out (engine/durable/run_lease.py): seconds, not 30.
env["ir.config_parameter"].set_param("agentic_ai.run_lease_seconds", str(os.environ.get("CHECK_LEASE_SECONDS", "3")))
partner = env["res.partner"].create({"name": "Durability Check Partner"})
thread = agent.with_user(admin).start_thread(name="durability check")
conflict = agent.with_user(admin).start_thread(name="durability check: a conflict inside a tool call")
asking = agent.copy({"name": "Durability check: asks before every write", "code": "durability_check_asking",
                     "require_confirmation": "always"})
if asking.state != "active":
    asking.action_activate()
approval = asking.with_user(admin).start_thread(name="durability check: a conflict inside an approved call")
env.cr.commit()
print("PREP " + json.dumps({"thread_id": thread.id, "partner_id": partner.id, "partner_name": partner.name,
                            "conflict_thread_id": conflict.id, "approval_thread_id": approval.id}))
