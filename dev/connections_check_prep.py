"""Fed to ``odoo shell`` by dev/connections_check.py: points the default
agent at the scripted LLM (``CHECK_LLM_URL``, streaming, no confirmations,
no rate limit in the way), makes ``CHECK_USERS`` AI users with
``CHECK_CHATS`` new conversations between them, plus one to warm
the server up, commits, and prints ``PREP {"users": [{"login", "password",
"threads": [ids]}], "warmup": id}``."""
import json
import os

env = env  # provided by odoo-bin shell
users, chats = int(os.environ["CHECK_USERS"]), int(os.environ["CHECK_CHATS"])
provider = env["agentic.ai.llm.provider"].create({
    "name": "Connections check scripted", "provider_type": "custom", "api_base_url": os.environ["CHECK_LLM_URL"],
    "default_model": "connections-model", "timeout_seconds": 120})
agent = env.ref("agentic_ai.agent_general_assistant")
agent.write({"llm_provider_id": provider.id, "fallback_provider_id": False, "require_confirmation": "never",
             "execution_mode": "react", "max_tokens_per_run": 0, "max_cost_per_run": 0})
if agent.state != "active":
    agent.action_activate()
for key in ("agentic_ai.max_requests_per_minute", "agentic_ai.max_requests_per_hour"):
    env["ir.config_parameter"].sudo().set_param(key, "1000000")
# A run cut by a restart of the gevent server is repaired once its lease ran out: seconds here, not 30.
env["ir.config_parameter"].sudo().set_param("agentic_ai.run_lease_seconds", os.environ.get("CHECK_LEASE_SECONDS", "3"))
params = env["ir.config_parameter"].sudo()
params.set_param("agentic_ai.queue_concurrency", os.environ.get("CHECK_QUEUE_CONCURRENCY", "4"))
params.set_param("agentic_ai.queue_retry_delay", "1")
group = env.ref("agentic_ai.group_agentic_ai_user")
out = []
for index in range(users):
    login = f"connections_check_{index}"
    user = env["res.users"].search([("login", "=", login)]) or env["res.users"].create({
        "name": f"Connections Check {index}", "login": login, "password": login,
        "group_ids": [(6, 0, [env.ref("base.group_user").id, group.id])]})
    threads = [agent.with_user(user).start_thread(name=f"load {index}.{n}").id
               for n in range(index, chats, users)]
    out.append({"login": login, "password": login, "threads": threads})
warmup = agent.with_user(user).start_thread(name="warm-up").id  # loads the gevent server's registry first
env.cr.commit()
print("PREP " + json.dumps({"users": out, "warmup": warmup}))
