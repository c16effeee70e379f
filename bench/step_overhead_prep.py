"""Fed to ``odoo shell`` by bench/step_overhead.py: points the default agent
at the scripted LLM (``BENCH_LLM_URL``) and creates, for each history size
M and step count K (0 and ``BENCH_STEPS``), ``BENCH_REPEATS`` threads of the
administrator that already hold M messages (a user question, a tool call,
its result and an answer, repeated). The request rate limits are raised so
far that the benchmark never meets them (their check still runs before each
LLM call, as in production). Prints ``THREADS {"M,K": [ids]}`` and commits."""
import json
import os

env = env  # provided by odoo-bin shell
sizes = [int(n) for n in os.environ["BENCH_HISTORY"].split(",")]
steps = int(os.environ["BENCH_STEPS"])
repeats = int(os.environ["BENCH_REPEATS"])
admin = env.ref("base.user_admin")

provider = env["agentic.ai.llm.provider"].create({
    "name": "Bench scripted", "provider_type": "custom", "api_base_url": os.environ["BENCH_LLM_URL"],
    "default_model": "bench-model", "cost_per_input_token": 0.000001, "cost_per_output_token": 0.000002})
agent = env.ref("agentic_ai.agent_general_assistant")
agent.write({"llm_provider_id": provider.id, "fallback_provider_id": False, "require_confirmation": "never",
             "max_iterations": steps + 5, "max_tokens_per_run": 0, "max_cost_per_run": 0})
if agent.state != "active":
    agent.action_activate()
for key in ("agentic_ai.max_requests_per_minute", "agentic_ai.max_requests_per_hour"):
    env["ir.config_parameter"].sudo().set_param(key, "1000000")

observation = "odoo_search_read: 10 record(s) found in res.partner\n" + "\n".join(
    json.dumps({"id": i, "display_name": f"Partner {i}", "email": f"p{i}@example.com"}) for i in range(10))


def history(thread, size):
    rows = []
    for index in range(size):
        kind, turn = index % 4, index // 4
        call_id = f"hist_{thread.id}_{turn}"
        if kind == 0:
            rows.append({"role": "user", "content": f"Question {turn}: which companies do we work with?"})
        elif kind == 1:
            rows.append({"role": "tool_call", "tool_call_id": call_id, "tool_name": "odoo_search_read",
                         "tool_arguments": json.dumps({"model": "res.partner", "limit": 10}), "tool_status": "done"})
        elif kind == 2:
            rows.append({"role": "tool_result", "tool_call_id": call_id, "tool_name": "odoo_search_read",
                         "content": observation, "tool_status": "done"})
        else:
            rows.append({"role": "assistant", "content": f"Answer {turn}: these are the ten companies."})
    env["agentic.ai.thread.message"].sudo().create([{"thread_id": thread.id, **row} for row in rows])


threads = {}
for size in sizes:
    for count in (0, steps):
        key = f"{size},{count}"
        threads[key] = []
        for repeat in range(repeats + (1 if size == sizes[0] and count == steps else 0)):
            thread = agent.with_user(admin).start_thread(name=f"bench M={size} K={count} #{repeat}")
            history(thread, size)
            threads[key].append(thread.id)
env.cr.commit()
print("THREADS " + json.dumps(threads))
